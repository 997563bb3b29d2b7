package gate

import (
	"context"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
)

// TestSecuritySupersededCardIsClosedNotApproved: a request that asked and
// then runs on another approval's concession (go mod init under the
// --remember contained given for git init) closes its own card: approvals
// list no longer shows it, it reads cancelled with the reason, and
// approval.cancelled records it. Closing never approves: no ticket is
// left, so once the concession ends the same request asks again, and the
// closed card cannot be approved afterwards. A run by a dry check closes
// nothing.
func TestSecuritySupersededCardIsClosedNotApproved(t *testing.T) {
	if !keepsPromises(sandbox.Probe()) {
		t.Skip("the sandbox does not keep all its promises here: nothing counts as contained")
	}
	f := newFixture(t, "")
	ctx := context.Background()
	run := Mode{SpendTicket: true}

	init := f.decide(t, run, "git", "init")
	modInit := f.decide(t, run, "go", "mod", "init", "example.com/m")
	if init.Outcome != policy.Ask || modInit.Outcome != policy.Ask {
		t.Fatalf("git init: %s, go mod init: %s; want both to ask", init.Outcome, modInit.Outcome)
	}
	a, err := f.g.Approve(ctx, init.Approval.Token, dev, ApproveOptions{Remember: "contained"})
	if err != nil {
		t.Fatal(err)
	}

	if d := f.decide(t, Mode{DryRun: true}, "go", "mod", "init", "example.com/m"); d.Outcome != policy.Allow {
		t.Fatalf("go mod init under the concession: %s (%s)", d.Outcome, d.Reason)
	}
	if p, err := f.store(t).Get(ctx, modInit.Approval.Token); err != nil || p.Status != approvals.StatusPending {
		t.Fatalf("a dry check closed the card: %s, %v", p.Status, err)
	}
	if d := f.decide(t, run, "go", "mod", "init", "example.com/m"); d.Outcome != policy.Allow {
		t.Fatalf("go mod init run: %s (%s)", d.Outcome, d.Reason)
	}
	p, err := f.store(t).Get(ctx, modInit.Approval.Token)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != approvals.StatusCancelled || !strings.HasPrefix(p.CancelReason, "superseded: the request ran") {
		t.Errorf("the card after the run: %s (%q), want cancelled as superseded", p.Status, p.CancelReason)
	}
	list, err := f.store(t).List(ctx, approvals.ListOptions{}, f.now)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range list {
		if o.Token == modInit.Approval.Token {
			t.Errorf("approvals list still shows the closed card")
		}
	}
	if f.audit.count("approval.cancelled") != 1 {
		t.Errorf("%d approval.cancelled events, want 1", f.audit.count("approval.cancelled"))
	}
	if _, err := f.g.Approve(ctx, modInit.Approval.Token, dev, ApproveOptions{}); err == nil {
		t.Error("the closed card was approved afterwards")
	}

	// The concession ends: nothing of the closed card lets the request
	// through.
	for _, r := range a.SessionRules {
		if _, _, err := f.g.RevokeSessionRule(ctx, r.ID, dev); err != nil {
			t.Fatal(err)
		}
	}
	if d := f.decide(t, run, "go", "mod", "init", "example.com/m"); d.Outcome != policy.Ask || d.Ticket != "" {
		t.Errorf("after the concession: %s (%s), ticket %q; want it to ask again", d.Outcome, d.Reason, d.Ticket)
	}
}
