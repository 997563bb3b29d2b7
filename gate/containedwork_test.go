package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
)

// TestSecurityContainedWorkConcession: at supervised, contained work asks
// with the concession on its card; approving it with --remember contained
// stops asking about contained work in that workspace for that session,
// and about nothing else: not a command that reaches the network, writes
// outside the workspace and temp or what runs later, runs outside the
// sandbox, comes from another workspace or another session.
func TestSecurityContainedWorkConcession(t *testing.T) {
	if !keepsPromises(sandbox.Probe()) {
		t.Skip("the sandbox does not keep all its promises here: nothing counts as contained")
	}
	f := newFixture(t, "")
	dev := approvals.Identity{Channel: "cli", Sender: "dev"}
	req := func(session string, argv ...string) Request {
		r := f.req(argv...)
		r.Session = session
		return r
	}
	decide := func(r Request) Decision {
		t.Helper()
		d, err := f.g.Decide(context.Background(), r, Mode{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// Not contained: the concession is refused.
	net, err := f.g.Decide(context.Background(), req("s1", "bash", "-c", "make test && curl -s https://example.com"), Mode{})
	if err != nil || net.Outcome != policy.Ask {
		t.Fatalf("make test && curl: %s, %v", net.Outcome, err)
	}
	if _, err := f.g.Approve(context.Background(), net.Approval.Token, dev, ApproveOptions{Remember: "contained"}); err == nil {
		t.Error("--remember contained accepted for a request that reaches the network")
	}
	// Nor for a command whose run may write git's configuration.
	cfg, err := f.g.Decide(context.Background(), req("s1", "git", "config", "alias.st", "!id"), Mode{})
	if err != nil || cfg.Outcome != policy.Ask {
		t.Fatalf("git config: %s, %v", cfg.Outcome, err)
	}
	if _, err := f.g.Approve(context.Background(), cfg.Approval.Token, dev, ApproveOptions{Remember: "contained"}); err == nil {
		t.Error("--remember contained accepted for git config")
	}
	d, err := f.g.Decide(context.Background(), req("s1", "make", "test"), Mode{})
	if err != nil || d.Outcome != policy.Ask || d.Approval == nil {
		t.Fatalf("make test at supervised: %s, %v", d.Outcome, err)
	}
	if card := strings.Join(d.Card, "\n"); !strings.Contains(card, "--remember contained") {
		t.Errorf("the card does not offer the concession:\n%s", card)
	}
	if _, err := f.g.Approve(context.Background(), d.Approval.Token, dev, ApproveOptions{Remember: "contained"}); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(filepath.Dir(f.ws), "other")
	if err := os.MkdirAll(filepath.Join(other, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := req("s1", "go", "test", "./...")
	elsewhere.Cwd = other
	unsandboxed := req("s1", "go", "test", "./...")
	unsandboxed.Unsandboxed = true
	for _, tc := range []struct {
		name string
		r    Request
		want policy.Outcome
	}{
		{"contained work", req("s1", "bash", "-c", "go vet ./... && go test ./... > /tmp/out.txt"), policy.Allow},
		{"a write in the workspace", req("s1", "bash", "-c", "make build && ./bin/app --selftest"), policy.Allow},
		{"the network", req("s1", "bash", "-c", "go test ./... && curl -s https://example.com"), policy.Ask},
		{"a write outside", req("s1", "bash", "-c", "make > ../x.log"), policy.Ask},
		{"what runs later", req("s1", "bash", "-c", "cp hook .git/hooks/pre-commit"), policy.Ask},
		// Their runs may write git's configuration, or the workspace's
		// later files as the repository has them.
		{"git config", req("s1", "git", "config", "core.fsmonitor", "touch /x; false"), policy.Ask},
		{"a checkout", req("s1", "git", "switch", "other"), policy.Ask},
		{"another session", req("s2", "go", "test", "./..."), policy.Ask},
		{"another workspace", elsewhere, policy.Ask},
		{"outside the sandbox", unsandboxed, policy.Ask},
	} {
		// Anything not allowed asks or is denied (a write the sandbox can
		// never grant is denied up front).
		got := decide(tc.r)
		if (got.Outcome == policy.Allow) != (tc.want == policy.Allow) {
			t.Errorf("%s: %s (%s), want %s", tc.name, got.Outcome, got.Reason, tc.want)
		}
		// A run the concession lets through is recorded under the
		// approval that granted it, for the approval's page.
		if got.Outcome == policy.Allow && runApproval(got) != d.Approval.Token {
			t.Errorf("%s: the run's approval is %q, want %q", tc.name, runApproval(got), d.Approval.Token)
		}
		// Allowed because it can be undone: it runs watched, or not at all.
		if got.Outcome == policy.Allow && !reliesOnJournal(got) {
			t.Errorf("%s: allowed by the contained-work concession, yet would run without the watch required", tc.name)
		}
	}
}

// TestSecurityContainedOnlyOffline: at full, the default rule lets
// contained work run without asking, but not when the same request
// reaches the network (its sandbox would have the network too), nor when
// it runs outside the sandbox.
func TestSecurityContainedOnlyOffline(t *testing.T) {
	if !keepsPromises(sandbox.Probe()) {
		t.Skip("the sandbox does not keep all its promises here: nothing counts as contained")
	}
	src, err := os.ReadFile("../policy/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, strings.Replace(string(src), "\nlevel: supervised\n", "\nlevel: full\n", 1))
	if d := f.decide(t, Mode{DryRun: true}, "go", "test", "./..."); d.Outcome != policy.Allow || d.Commands[0].Policy.Rule == nil || d.Commands[0].Policy.Rule.Name != "contained work" {
		t.Fatalf("go test at full: %s (%s), want allowed by contained work", d.Outcome, d.Reason)
	} else if !reliesOnJournal(d) {
		t.Error("go test allowed as contained work would run without the watch required")
	}
	if d := f.decide(t, Mode{DryRun: true}, "git", "status"); d.Outcome != policy.Allow || reliesOnJournal(d) {
		t.Errorf("git status: %s, relies on the journal %v: want allowed by its own rule, whatever the journal", d.Outcome, reliesOnJournal(d))
	}
	for _, argv := range [][]string{
		// What the run's sandbox lets write what runs later.
		{"git", "config", "core.fsmonitor", "touch /x; false"},
		{"git", "-C", ".", "config", "--local", "alias.st", "!id"},
		{"bash", "-c", "go test ./... && curl -s https://example.com/"},
		{"bash", "-c", "curl -s https://example.com/ > /dev/null; make"},
	} {
		if d := f.decide(t, Mode{DryRun: true}, argv...); d.Outcome == policy.Allow {
			t.Errorf("%v: %s (%s), want it to ask", argv, d.Outcome, d.Reason)
		}
	}
	r := f.req("go", "test", "./...")
	r.Unsandboxed = true
	if d, _ := f.g.Decide(context.Background(), r, Mode{DryRun: true}); d.Outcome == policy.Allow {
		t.Errorf("unsandboxed go test: %s (%s), want it to ask", d.Outcome, d.Reason)
	}
}
