package gate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
)

func TestRateLimitAsksOverTheBucketAndRecordsIt(t *testing.T) {
	f := newFixture(t, `rules:
  - {name: echo, action: allow, command: {argv_prefix: [echo]}}
  - {name: date, action: allow, command: {argv_prefix: [date]}}
rate_limits:
  - {capability: parse:local, capacity: 2, refill_per_minute: 1}
  - {capability: time:read, capacity: 1, refill_per_minute: 0.5, over: deny}
`)
	run := Mode{SpendTicket: true}
	// A check without recording spends no token.
	for range 3 {
		if d := f.decide(t, Mode{DryRun: true}, "echo", "a"); d.Outcome != policy.Allow {
			t.Fatalf("dry run: %s (%s)", d.Outcome, d.Reason)
		}
	}
	for i := range 2 {
		if d := f.decide(t, run, "echo", "a"); d.Outcome != policy.Allow {
			t.Fatalf("run %d within the bucket: %s (%s)", i+1, d.Outcome, d.Reason)
		}
	}
	if n := f.audit.count("rate.limited"); n != 0 {
		t.Fatalf("%d rate.limited events within the bucket", n)
	}
	d := f.decide(t, run, "echo", "a")
	if d.Outcome != policy.Ask || d.DecidedBy != "rate-limit" || !strings.Contains(d.Reason, "rate limit reached for parse:local") {
		t.Fatalf("over the bucket: %s by %s (%s), want ask by rate-limit", d.Outcome, d.DecidedBy, d.Reason)
	}
	if n := f.audit.count("rate.limited"); n != 1 {
		t.Fatalf("%d rate.limited events, want 1", n)
	}
	if d.Approval == nil || d.Approval.CapabilityClass != "parse:local" {
		t.Fatalf("pending approval %+v, want one for parse:local", d.Approval)
	}
	// Approving it lets that request run once, over the limit, without
	// another rate.limited event.
	st, err := f.g.Store(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Resolve(context.Background(), d.Approval.Token, approvals.Approve, approvals.Identity{Channel: approvals.ViaTerminal, Sender: "dev"}, f.now,
		approvals.ResolveOptions{For: approvals.Identity{Channel: "cli", Sender: "dev"}}); err != nil {
		t.Fatal(err)
	}
	if d := f.decide(t, run, "echo", "a"); d.Outcome != policy.Allow || d.Ticket == "" {
		t.Fatalf("approved rerun: %s (%s), want allow on the ticket", d.Outcome, d.Reason)
	}
	if n := f.audit.count("rate.limited"); n != 1 {
		t.Fatalf("%d rate.limited events after the ticket, want 1", n)
	}
	if d := f.decide(t, run, "echo", "a"); d.Outcome != policy.Ask {
		t.Fatalf("after the ticket: %s, want ask again", d.Outcome)
	}
	// A minute refills one token.
	f.now = f.now.Add(time.Minute)
	if d := f.decide(t, run, "echo", "b"); d.Outcome != policy.Allow {
		t.Fatalf("after a refill: %s (%s)", d.Outcome, d.Reason)
	}
	// over: deny refuses.
	if d := f.decide(t, run, "date"); d.Outcome != policy.Allow {
		t.Fatalf("first date: %s (%s)", d.Outcome, d.Reason)
	}
	d = f.decide(t, run, "date")
	if d.Outcome != policy.Deny || d.BlockedBy != "rate-limit" {
		t.Fatalf("second date: %s blocked by %q, want deny by rate-limit", d.Outcome, d.BlockedBy)
	}
	// Each identity has its own bucket.
	req := f.req("date")
	req.Sender = "other"
	if d, err := f.g.Decide(context.Background(), req, run); err != nil || d.Outcome != policy.Allow {
		t.Fatalf("another sender: %s %v", d.Outcome, err)
	}
}
