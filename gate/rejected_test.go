package gate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
)

// A person's rejection stands for the approval TTL: the identical request
// is denied instead of being put to them again; after that it asks again.
// A later approval supersedes it, and a request its requester withdrew is
// no rejection. Another request (other argv, directory, identity) is not
// touched.
func TestRejectionStands(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	dev := approvals.Identity{Channel: "cli", Sender: "dev"}
	ask := func(argv ...string) *approvals.Pending {
		t.Helper()
		d := f.decide(t, Mode{SpendTicket: true}, argv...)
		if d.Outcome != policy.Ask || d.Approval == nil {
			t.Fatalf("%v: %s (%s)", argv, d.Outcome, d.Reason)
		}
		return d.Approval
	}
	p := ask("touch", "notes.txt")
	if _, err := f.g.Deny(ctx, p.Token, dev); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(time.Minute)
	for _, mode := range []Mode{{SpendTicket: true}, {DryRun: true}} {
		d := f.decide(t, mode, "touch", "notes.txt")
		if d.Outcome != policy.Deny || d.BlockedBy != "approval" || !strings.Contains(d.Reason, "rejected by cli:dev") || !strings.Contains(d.Reason, p.Token) {
			t.Fatalf("rerun after a rejection (%+v): %s by %q (%s)", mode, d.Outcome, d.BlockedBy, d.Reason)
		}
	}
	if d := f.decide(t, Mode{DryRun: true}, "touch", "other.txt"); d.Outcome != policy.Ask {
		t.Errorf("another request: %s (%s)", d.Outcome, d.Reason)
	}
	// After the TTL, the person is asked again; approving supersedes.
	f.now = f.now.Add(approvals.DefaultTTL)
	q := ask("touch", "notes.txt")
	if _, err := f.g.Approve(ctx, q.Token, dev, ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := f.decide(t, Mode{SpendTicket: true}, "touch", "notes.txt"); d.Outcome != policy.Allow {
		t.Errorf("after an approval: %s (%s)", d.Outcome, d.Reason)
	}
	if d := f.decide(t, Mode{DryRun: true}, "touch", "notes.txt"); d.Outcome != policy.Ask {
		t.Errorf("the ticket spent, the approval stands over the old rejection: %s (%s)", d.Outcome, d.Reason)
	}
	// A withdrawn request is no answer.
	w := ask("touch", "withdrawn.txt")
	if _, err := f.g.Cancel(ctx, w.Token, dev, ""); err != nil {
		t.Fatal(err)
	}
	if d := f.decide(t, Mode{DryRun: true}, "touch", "withdrawn.txt"); d.Outcome != policy.Ask {
		t.Errorf("after a cancel: %s (%s)", d.Outcome, d.Reason)
	}
}
