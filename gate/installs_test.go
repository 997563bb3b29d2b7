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
// on the sandbox's read-only view). No sandbox grants it, on PATH or
// not, so the request is an escalation: it asks to run outside the
// sandbox, once, its card naming the write and what to run instead, and
// its approval is never remembered. go build into the workspace stays
// contained work.
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
	for _, path := range []string{"/usr/bin:/bin", gobin + ":/usr/bin:/bin"} {
		setPath(path)
		d, err := f.g.Decide(context.Background(), f.req("go", "install", "./cmd/x"), Mode{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Outcome != policy.Ask || !d.Unconfined() || len(d.Reach) != 1 || d.Reach[0].Path != gobin || !d.Reach[0].Write || !d.Reach[0].Later {
			t.Fatalf("go install, PATH=%s: %s (%s), reach %+v; want an escalation writing %s", path, d.Outcome, d.Reason, d.Reach, gobin)
		}
		card := strings.Join(d.Card, "\n")
		if !strings.Contains(card, "runs OUTSIDE the sandbox: approving lets this one run write "+gobin) || !strings.Contains(card, "go build -o bin/") {
			t.Errorf("go install, PATH=%s: the card does not name the write to %s and what to run instead:\n%s", path, gobin, card)
		}
		if _, ok := ContainedWork(*d.Approval); ok {
			t.Errorf("go install, PATH=%s: offered as contained work", path)
		}
	}

	if d := f.decideDry(t, "go", "build", "-o", "bin/", "./cmd/x"); d.Outcome != policy.Allow {
		t.Errorf("go build -o bin/: %s (%s); want contained work allowed", d.Outcome, d.Reason)
	}
}
