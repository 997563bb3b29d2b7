package gate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityNothingAskedThatCannotRun: a request that needs a path no
// policy can grant the sandbox is denied up front with the hint, never
// asked (an approval could not make it run); one that needs a path a
// policy could grant asks, its card names the grant, and approving it
// lets that one run reach exactly that path. A request that runs outside
// the sandbox is left to the rules and the table.
func TestSecurityNothingAskedThatCannotRun(t *testing.T) {
	requireLandlock(t, 1)
	f := newSandboxFixture(t, "level: full\nrules:"+sandboxRules, "")
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
	for _, argv := range [][]string{
		{"cat", "$HOME"},                     // the home directory whole
		{"cat", "$HOME/.mnemos/policy.yaml"}, // mnemos's own files
		{"touch", "$HOME/.bashrc"},           // what runs later
	} {
		d := f.decideDry(t, argv...)
		if d.Outcome != policy.Deny {
			t.Errorf("%v: %s (%s), want deny", argv, d.Outcome, d.Reason)
		}
	}
	// From the home directory nothing can run: the sandbox never grants it.
	req := f.req("cat", "README")
	req.Cwd = f.home
	if d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true}); err != nil || d.Outcome != policy.Deny || !strings.Contains(d.Reason, "project directory") {
		t.Errorf("from home: %s (%s), %v; want deny naming a project directory", d.Outcome, d.Reason, err)
	}

	// A path a policy could grant: ask, the card names it.
	d, err := f.g.Decide(context.Background(), f.req("cat", secret), Mode{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != policy.Ask || d.Approval == nil || len(d.Reach) != 1 || d.Reach[0].Path != secret || d.Reach[0].Write {
		t.Fatalf("cat %s at full: %s (%s), reach %+v; want ask reaching it", secret, d.Outcome, d.Reason, d.Reach)
	}
	if card := strings.Join(d.Card, "\n"); !strings.Contains(card, "sandbox: {read: ["+secret+"]}") {
		t.Errorf("the card does not name the grant:\n%s", card)
	}
	// Outside the sandbox the table decides (fs:read is allowed at full).
	un := f.req("cat", secret)
	un.Unsandboxed = true
	if d, _ := f.g.Decide(context.Background(), un, Mode{DryRun: true}); d.Outcome != policy.Allow {
		t.Errorf("unsandboxed: %s (%s), want allow", d.Outcome, d.Reason)
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
