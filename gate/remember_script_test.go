package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
)

// TestRememberCompound: a shell script is remembered command by command;
// a command no rule may cover is named and left to ask, and the approval
// still runs the request once.
func TestRememberCompound(t *testing.T) {
	f, _ := bindFixture(t)
	f.write(t, "Makefile", "all:\n\techo ok\n")
	script := []string{"bash", "-c", "go version && go test ./... && make && python3 -c 'print(1)'"}
	d := f.decide(t, Mode{SpendTicket: true}, script...)
	if d.Outcome != policy.Ask {
		t.Fatalf("%s (%s), want ask", d.Outcome, d.Reason)
	}
	var got []string
	for _, it := range d.Approval.Details.Remember {
		s := strings.Join(it.Prefix, " ")
		if it.Exact {
			s += "!"
		}
		if it.Why != "" {
			s = "ask " + it.Argv[0]
		}
		got = append(got, s)
	}
	if strings.Join(got, ", ") != "go version, go test, make!, ask python3" {
		t.Errorf("proposals %q", got)
	}
	if lines := RememberChoices(*d.Approval); len(lines) < 2 || !strings.Contains(lines[0], "go version, go test ..., make (exactly)") ||
		!strings.Contains(lines[1], "left to ask: python3 -c print(1): a rule for python3 would allow running any code") {
		t.Errorf("choices:\n%s", strings.Join(lines, "\n"))
	}
	a, err := f.g.Approve(context.Background(), d.Approval.Token, dev, ApproveOptions{Remember: "permanent"})
	if err != nil {
		t.Fatalf("the whole approval was refused: %v", err)
	}
	if len(a.Rules) != 3 || len(a.NotRemembered) != 1 || a.NotRemembered[0].Argv[0] != "python3" {
		t.Fatalf("rules %+v, not remembered %+v", a.Rules, a.NotRemembered)
	}
	f.reload(t)
	// The request itself runs once on its ticket: python3 still asks.
	if d := f.decide(t, Mode{SpendTicket: true}, script...); d.Outcome != policy.Allow || d.Ticket == "" {
		t.Errorf("the approved request: %s (%s), want its ticket spent", d.Outcome, d.Reason)
	}
	if d := f.decide(t, Mode{SpendTicket: true}, script...); d.Outcome != policy.Ask {
		t.Errorf("the approved request a second time: %s, want ask (python3 is not remembered)", d.Outcome)
	}
	// The remembered commands run in other scripts, and alone.
	for _, argv := range [][]string{{"bash", "-c", "go version && go test -run X ./..."}, {"make"}, {"go", "test", "-count=1", "./..."}} {
		if d := f.decide(t, Mode{DryRun: true}, argv...); d.Outcome != policy.Allow {
			t.Errorf("%v: %s (%s)", argv, d.Outcome, d.Reason)
		}
	}
	// make was remembered exactly: another target asks.
	if d := f.decide(t, Mode{DryRun: true}, "make", "clean"); d.Outcome == policy.Allow {
		t.Error("make clean: allowed by the rule remembered for a bare make")
	}
	// A request with nothing safe to remember is refused and stays pending.
	d = f.decide(t, Mode{SpendTicket: true}, "python3", "-c", "print(2)")
	if _, err := f.g.Approve(context.Background(), d.Approval.Token, dev, ApproveOptions{Remember: "permanent"}); err == nil ||
		!strings.Contains(err.Error(), "nothing to remember") {
		t.Errorf("python3 -c remembered: %v", err)
	}
	if p, _ := f.store(t).Get(context.Background(), d.Approval.Token); p.Status != approvals.StatusPending {
		t.Errorf("after a refused --remember the request is %s", p.Status)
	}
}

// TestRememberSessionRule: --remember session on code:exec records a rule
// in the state database, limited to the request's session and to 12
// hours, which the gate consults as a rule, and which revoking ends.
func TestRememberSessionRule(t *testing.T) {
	f, _ := bindFixture(t)
	ctx := context.Background()
	req := f.req("go", "test", "./...")
	req.Session = "s1"
	d, err := f.g.Decide(ctx, req, Mode{SpendTicket: true})
	if err != nil || d.Outcome != policy.Ask {
		t.Fatalf("%s, %v", d.Outcome, err)
	}
	a, err := f.g.Approve(ctx, d.Approval.Token, dev, ApproveOptions{Remember: "session"})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.SessionRules) != 1 || a.SessionRules[0].Session != "s1" || !a.SessionRules[0].ExpiresAt.Equal(f.now.Add(12*time.Hour)) || len(a.Rules) != 0 {
		t.Fatalf("approved: %+v", a)
	}
	if _, err := os.Stat(f.g.cfg.Paths.PolicyFile); err == nil {
		t.Error("a session rule was written to the policy file")
	}
	in := func(session string, argv ...string) Decision {
		t.Helper()
		r := f.req(argv...)
		r.Session = session
		d, err := f.g.Decide(ctx, r, Mode{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := in("s1", "go", "test", "-run", "X", "./..."); d.Outcome != policy.Allow || !strings.Contains(d.Reason, "r1: allow go test") {
		t.Errorf("in its session: %s (%s)", d.Outcome, d.Reason)
	}
	if d := in("s2", "go", "test", "./..."); d.Outcome != policy.Ask {
		t.Errorf("in another session: %s", d.Outcome)
	}
	if d := in("", "go", "test", "./..."); d.Outcome != policy.Ask {
		t.Errorf("with no session: %s", d.Outcome)
	}
	if d := in("s1", "go", "test", "-toolexec=/tmp/x", "./..."); d.Outcome == policy.Allow {
		t.Error("go test -toolexec: allowed by the session rule")
	}
	f.now = f.now.Add(12 * time.Hour)
	if d := in("s1", "go", "test", "./..."); d.Outcome != policy.Ask {
		t.Errorf("12 hours later: %s", d.Outcome)
	}
	f.now = f.now.Add(-11 * time.Hour)
	if _, ok, err := f.g.RevokeSessionRule(ctx, a.SessionRules[0].ID, dev); !ok || err != nil {
		t.Fatalf("revoke: %v, %v", ok, err)
	}
	if d := in("s1", "go", "test", "./..."); d.Outcome != policy.Ask {
		t.Errorf("after revoking: %s", d.Outcome)
	}
	if f.audit.count("session_rule.recorded") != 1 || f.audit.count("session_rule.revoked") != 1 {
		t.Error("the session rule was not audited")
	}
	// A longer --for is refused; a shorter one shortens the rule.
	d, _ = f.g.Decide(ctx, req, Mode{SpendTicket: true})
	if _, err := f.g.Approve(ctx, d.Approval.Token, dev, ApproveOptions{Remember: "session", For: 13 * time.Hour}); err == nil {
		t.Error("a 13h session rule accepted")
	}
	if a, err := f.g.Approve(ctx, d.Approval.Token, dev, ApproveOptions{Remember: "session", For: time.Hour}); err != nil ||
		!a.SessionRules[0].ExpiresAt.Equal(f.now.Add(time.Hour)) {
		t.Errorf("--for 1h: %+v, %v", a.SessionRules, err)
	}
}

// TestSecurityGrantNeverFollowsASymlinkOut: a symlink inside a granted
// directory does not carry the grant to where it points (a shell startup
// file in home, home itself): those writes ask, even for a command
// checked to run outside the sandbox; a symlink that stays inside is
// covered.
func TestSecurityGrantNeverFollowsASymlinkOut(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	if err := os.MkdirAll(filepath.Join(f.ws, "internal", "util"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"internal/prof": filepath.Join(f.home, ".profile"), "internal/home": f.home,
		"internal/near": filepath.Join(f.ws, "internal", "util")} {
		if err := os.Symlink(to, filepath.Join(f.ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	d := f.decide(t, Mode{SpendTicket: true}, "touch", "internal/util/a.go")
	if _, err := f.g.Approve(ctx, d.Approval.Token, dev, ApproveOptions{Remember: "permanent", Under: "internal"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		script string
		allow  bool
	}{
		{"touch internal/util/b.go", true},
		{"echo x > internal/near/c.go", true},
		{"echo x > internal/prof", false},
		{"touch internal/home/notes.txt", false},
		{"echo x >> internal/home/.bashrc", false},
	} {
		r := f.req("bash", "-c", c.script)
		r.Unsandboxed = true
		got, err := f.g.Decide(ctx, r, Mode{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if (got.Outcome == policy.Allow) != c.allow {
			t.Errorf("%s: %s (%s)", c.script, got.Outcome, got.Reason)
		}
	}
}
