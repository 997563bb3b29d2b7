package gate

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// TestInstallSecurityNotContainedWork: go install writes GOBIN (~/go/bin),
// a directory of programs that run later: at level full it is not the
// contained work that runs without asking (it used to be, and then failed
// on the sandbox's read-only view). Where the directory is on PATH, which
// the sandbox keeps read-only whatever a policy says, the request is
// denied up front with what to run instead; where it is not, it asks and
// its card names the write the approval lets that run make (or, where
// the sandbox keeps it read-only too, is denied up front). go build
// into the workspace stays contained work.
func TestInstallSecurityNotContainedWork(t *testing.T) {
	requireLandlock(t, 1)
	src := strings.Replace(string(policy.DefaultSource()), "\nlevel: supervised\n", "\nlevel: full\n", 1)
	f := newSandboxFixture(t, src, "")
	gobin := filepath.Join(f.home, "go", "bin")
	setPath := func(path string) {
		cfg := f.g.Config()
		cfg.Environ = func() []string { return []string{"PATH=" + path, "HOME=" + f.home} }
		f.g = New(cfg)
		t.Cleanup(func() { f.g.Close() })
	}

	setPath("/usr/bin:/bin")
	d, err := f.g.Decide(context.Background(), f.req("go", "install", "./cmd/x"), Mode{})
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case d.Outcome == policy.Deny:
		// The sandbox may keep it read-only off PATH too: denied up
		// front, naming it.
		if !strings.Contains(d.Reason, gobin) {
			t.Errorf("go install, GOBIN off PATH: denied (%s) without naming %s", d.Reason, gobin)
		}
	case d.Outcome != policy.Ask || len(d.Reach) != 1 || d.Reach[0].Path != gobin || !d.Reach[0].Write:
		t.Fatalf("go install, GOBIN off PATH: %s (%s), reach %+v; want ask reaching %s, or deny", d.Outcome, d.Reason, d.Reach, gobin)
	default:
		if card := strings.Join(d.Card, "\n"); !strings.Contains(card, "approving lets this run write "+gobin) {
			t.Errorf("the card does not name the write to %s:\n%s", gobin, card)
		}
	}

	setPath(gobin + ":/usr/bin:/bin")
	d = f.decideDry(t, "go", "install", "./cmd/x")
	if d.Outcome != policy.Deny || !strings.Contains(d.Reason, "write "+gobin+", where it installs programs that run later") || !strings.Contains(d.Reason, "go build -o bin/") {
		t.Errorf("go install, GOBIN on PATH: %s (%s); want deny up front saying what to run instead", d.Outcome, d.Reason)
	}

	if d := f.decideDry(t, "go", "build", "-o", "bin/", "./cmd/x"); d.Outcome != policy.Allow {
		t.Errorf("go build -o bin/: %s (%s); want contained work allowed", d.Outcome, d.Reason)
	}
}
