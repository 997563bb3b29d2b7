package gate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
)

// TestSecurityNothingAskedThatCannotRun: a request that needs a path the
// sandbox protects is denied up front; a read no policy can grant (the
// home directory whole) runs in the sandbox, which hides what it does
// not grant; a write no policy can grant (what runs later) asks as an
// escalation that runs outside the sandbox, once: its approval is never
// remembered and lets that one run through unconfined; one that needs a
// path a policy could grant asks, its card names the grant, and
// approving it lets that one run reach exactly that path. A request that
// runs outside the sandbox asks for what the sandbox would not let it
// reach (outside.go).
func TestSecurityNothingAskedThatCannotRun(t *testing.T) {
	requireLandlock(t, 1)
	f := newSandboxFixture(t, "level: full\nrules:"+sandboxRules+"  - {name: ls, action: allow, command: {argv_prefix: [ls]}}\n", "")
	secret := filepath.Join(f.out, "notes.txt")
	if err := os.WriteFile(secret, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.home, ".mnemos"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.home, ".mnemos", "policy.yaml"), []byte("level: full\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// mnemos's own files: denied whatever approves.
	if d := f.decideDry(t, "cat", "$HOME/.mnemos/policy.yaml"); d.Outcome != policy.Deny {
		t.Errorf("cat ~/.mnemos/policy.yaml: %s (%s), want deny", d.Outcome, d.Reason)
	}
	// The home directory whole, read: it runs, and the sandbox hides it.
	if d := f.decideDry(t, "ls", "$HOME"); d.Outcome != policy.Allow {
		t.Errorf("ls ~: %s (%s), want allow (the sandbox hides what it does not grant)", d.Outcome, d.Reason)
	}
	var listed bytes.Buffer
	if res, err := f.g.Run(context.Background(), f.req("ls", f.home), Stdio{Stdout: &listed, Stderr: io.Discard}, RunOptions{}); err != nil || !res.Ran || res.ExitCode == 0 || strings.Contains(listed.String(), "docs") {
		t.Errorf("ls ~ under the sandbox: ran %v exit %d listed %q err %v; want it refused by the kernel", res.Ran, res.ExitCode, listed.String(), err)
	}
	// An escalation runs unconfined once approved: other code in the
	// same request is refused with it.
	if d := f.decideDry(t, "bash", "-c", "touch $HOME/.bashrc; python3 -c 'print(1)'"); d.Outcome != policy.Deny || !strings.Contains(d.Reason, "request of its own") {
		t.Errorf("an escalation carrying other code: %s (%s), want deny", d.Outcome, d.Reason)
	}
	// What runs later: an escalation, asked once, run outside the sandbox.
	rc := filepath.Join(f.home, ".bashrc")
	d, err := f.g.Decide(context.Background(), f.req("touch", rc), Mode{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != policy.Ask || !d.Unconfined() || d.Approval == nil || !strings.Contains(strings.Join(d.Card, "\n"), "runs OUTSIDE the sandbox") {
		t.Fatalf("touch ~/.bashrc: %s (%s), card %q; want an escalation that says it runs outside the sandbox", d.Outcome, d.Reason, d.Card)
	}
	dev := approvals.Identity{Channel: "cli", Sender: "dev"}
	for _, o := range []ApproveOptions{{Remember: "session"}, {Remember: "permanent"}, {Remember: "contained"}, {For: time.Hour}} {
		if _, err := f.g.Approve(context.Background(), d.Approval.Token, dev, o); err == nil || !strings.Contains(err.Error(), "never remembered") {
			t.Errorf("approving the escalation with %+v: %v; want refused, never remembered", o, err)
		}
	}
	if _, err := f.g.Approve(context.Background(), d.Approval.Token, dev, ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
	if res, err := f.g.Run(context.Background(), f.req("touch", rc), Stdio{}, RunOptions{}); err != nil || !res.Ran || res.ExitCode != 0 {
		t.Fatalf("the approved escalation: ran %v exit %d err %v (%s)", res.Ran, res.ExitCode, err, res.Decision.Reason)
	}
	if _, err := os.Stat(rc); err != nil {
		t.Errorf("the approved escalation did not run outside the sandbox: %v", err)
	}
	if ev := lastEvent(f.audit, "run.started"); !strings.Contains(ev, "unconfined=true") {
		t.Errorf("run.started does not say the escalation ran unconfined: %s", ev)
	}
	if d := f.decideDry(t, "touch", rc); d.Outcome != policy.Ask || !d.Unconfined() {
		t.Errorf("touch ~/.bashrc after its one approval: %s (%s), want it to ask again", d.Outcome, d.Reason)
	}
	// From the home directory nothing can run: the sandbox never grants it.
	req := f.req("cat", "README")
	req.Cwd = f.home
	if d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true}); err != nil || d.Outcome != policy.Deny || !strings.Contains(d.Reason, "project directory") {
		t.Errorf("from home: %s (%s), %v; want deny naming a project directory", d.Outcome, d.Reason, err)
	}

	// A path a policy could grant: ask, the card names it.
	d, err = f.g.Decide(context.Background(), f.req("cat", secret), Mode{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != policy.Ask || d.Approval == nil || len(d.Reach) != 1 || d.Reach[0].Path != secret || d.Reach[0].Write {
		t.Fatalf("cat %s at full: %s (%s), reach %+v; want ask reaching it", secret, d.Outcome, d.Reason, d.Reach)
	}
	if card := strings.Join(d.Card, "\n"); !strings.Contains(card, "sandbox: {read: ["+secret+"]}") {
		t.Errorf("the card does not name the grant:\n%s", card)
	}
	// Outside the sandbox it asks too, though the table allows fs:read at
	// full: nothing would keep the command to what it names.
	un := f.req("cat", secret)
	un.Unsandboxed = true
	if d, _ := f.g.Decide(context.Background(), un, Mode{DryRun: true}); d.Outcome != policy.Ask {
		t.Errorf("unsandboxed: %s (%s), want ask", d.Outcome, d.Reason)
	}
	if _, err := f.g.Approve(context.Background(), d.Approval.Token, approvals.Identity{Channel: "cli", Sender: "dev"}, ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := f.g.Run(context.Background(), f.req("cat", secret), Stdio{Stdout: &out}, RunOptions{})
	if err != nil || !res.Ran || res.ExitCode != 0 || out.String() != "outside\n" {
		t.Fatalf("the approved run: ran %v exit %d out %q err %v (%s)", res.Ran, res.ExitCode, out.String(), err, res.Decision.Reason)
	}
	// The approval let that run reach that path, and no other run.
	if d := f.decideDry(t, "cat", secret); d.Outcome != policy.Ask {
		t.Errorf("after the one-shot approval: %s, want ask again", d.Outcome)
	}
}

// TestSecurityEnginesAndSignalsDecidedWithTheSandbox: a container
// engine's socket is hidden from sandboxed commands, so docker asks (at
// full too), its card names the policy line, and its approval lets that
// run reach the socket; pkill, killall and kill of a process id written
// out cannot reach anything outside the sandbox (signal scoping): they
// ask to run outside it, once, while kill of the script's own $! is left
// as decided.
func TestSecurityEnginesAndSignalsDecidedWithTheSandbox(t *testing.T) {
	requireLandlock(t, 6)
	f := newSandboxFixture(t, "level: full\nrules:"+sandboxRules+"  - {name: engines, action: allow, command: {argv_prefix: [docker]}}\n  - {name: signals, action: allow, command: {argv_prefix: [kill]}}\n  - {name: pkill, action: allow, command: {argv_prefix: [pkill]}}\n", "")
	sock := filepath.Join(f.out, "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	env := []string{"PATH=/usr/bin:/bin", "DOCKER_HOST=unix://" + sock}
	f.g.cfg.Environ = func() []string { return env }
	d := f.decideDry(t, "docker", "ps")
	if d.Outcome != policy.Ask || len(d.Reach) != 1 || !d.Reach[0].Socket || d.Reach[0].Path != sock || !strings.Contains(d.Reach[0].Policy, "sandbox: {sockets: ["+sock+"]}") {
		t.Errorf("docker ps: %s (%s), reach %+v; want ask naming the socket", d.Outcome, d.Reason, d.Reach)
	}
	var o sandbox.Options
	d.Outcome = policy.Allow
	reachOptions(&o, d)
	if !slices.Contains(o.Sockets, sock) {
		t.Errorf("an approved docker run does not get its socket: %+v", o.Sockets)
	}
	for _, argv := range [][]string{{"pkill", "-f", "gradle"}, {"kill", "1234"}, {"kill", "-9", "1"}} {
		if d := f.decideDry(t, argv...); d.Outcome != policy.Ask || !d.Unconfined() || !strings.Contains(d.Reason, "OUTSIDE the sandbox") {
			t.Errorf("%v: %s (%s), want an escalation: ask to run it outside the sandbox, once", argv, d.Outcome, d.Reason)
		}
	}
	if d := f.decideDry(t, "bash", "-c", "sleep 9 & kill $!"); d.Outcome == policy.Deny {
		t.Errorf("kill $!: %s (%s), want it left as decided", d.Outcome, d.Reason)
	}
}

// lastEvent renders the last event of kind that m recorded, or "".
func lastEvent(m *memAudit, kind string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.kinds) - 1; i >= 0; i-- {
		if m.kinds[i] == kind {
			return fmt.Sprint(m.events[i])
		}
	}
	return ""
}
