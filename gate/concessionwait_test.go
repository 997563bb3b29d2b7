package gate

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
)

// TestRunWaitAwaitsConcession: an approval whose concession covers the
// request issues no ticket, and the approver records the concession just
// after resolving. A waiting run that hears of the approval in between
// (at once, with a shared state's notifications, on any host) gives the
// concession a moment instead of asking again.
func TestRunWaitAwaitsConcession(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	type result struct {
		res RunResult
		err error
	}
	done := make(chan result, 1)
	parked := make(chan Decision, 1)
	go func() {
		res, err := f.g.Run(ctx, f.req("touch", "conceded.txt"), Stdio{}, RunOptions{
			Wait: true, PollEvery: 5 * time.Millisecond,
			OnPending: func(d Decision) { parked <- d },
		})
		done <- result{res, err}
	}()
	d := <-parked
	st, err := f.g.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dev := approvals.Identity{Channel: "cli", Sender: "dev"}
	// What Approve does for --remember session, in two steps with time
	// between them for the waiting run to look.
	if _, err := st.Resolve(ctx, d.Approval.Token, approvals.Approve, approvals.Identity{Channel: approvals.ViaTerminal, Sender: dev.Sender}, f.now,
		approvals.ResolveOptions{Territory: approvals.TerritorySession, NoTicket: true, For: dev}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := st.RecordGrant(ctx, policy.GrantKey{Channel: dev.Channel, Sender: dev.Sender, Capability: classify.FSWrite,
		Target: filepath.Join(f.ws, "conceded.txt")}, approvals.GrantOptions{GrantedBy: "cli:dev", Approval: d.Approval.Token}, f.now); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end")
	}
	if r.err != nil || !r.res.Ran || r.res.ExitCode != 0 {
		t.Fatalf("after the approval and its concession: ran=%v %s: %s (%v)", r.res.Ran, r.res.Decision.Outcome, r.res.Decision.Reason, r.err)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "conceded.txt")); err != nil {
		t.Fatal(err)
	}
}
