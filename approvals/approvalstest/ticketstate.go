package approvalstest

import (
	"context"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
)

// TicketState checks approvals.TicketState on a backend that implements
// it: an approval's ticket reads unspent until it is spent or expires,
// and only under its own request key.
func TicketState(t *testing.T, b approvals.Backend) {
	t.Helper()
	ts, ok := b.(approvals.TicketState)
	if !ok {
		t.Fatalf("%T does not implement approvals.TicketState", b)
	}
	ctx := context.Background()
	now := time.Now()
	id := approvals.Identity{Channel: "cli", Sender: "dev"}
	p, err := b.CreatePending(ctx, approvals.NewPending{Channel: "cli", Sender: "dev", CapabilityClass: "code:exec",
		ActionVerb: "run", TargetSummary: "npm ci", RequestKey: "key-ticket-state"}, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	if unspent, err := ts.UnspentTicket(ctx, p.RequestKey, p.Token, now); err != nil || unspent {
		t.Errorf("before approval: unspent %v, %v", unspent, err)
	}
	if _, err := b.Resolve(ctx, p.Token, approvals.Approve, approvals.Identity{Channel: approvals.ViaTerminal, Sender: id.Sender}, now,
		approvals.ResolveOptions{TicketTTL: time.Minute, For: id}); err != nil {
		t.Fatal(err)
	}
	if unspent, err := ts.UnspentTicket(ctx, p.RequestKey, p.Token, now); err != nil || !unspent {
		t.Errorf("approved: unspent %v, %v; want true", unspent, err)
	}
	if unspent, _ := ts.UnspentTicket(ctx, "another-key", p.Token, now); unspent {
		t.Error("unspent under another request key")
	}
	if unspent, _ := ts.UnspentTicket(ctx, p.RequestKey, p.Token, now.Add(2*time.Minute)); unspent {
		t.Error("unspent after the ticket expired")
	}
	if _, ok, err := b.SpendTicket(ctx, p.RequestKey, now); err != nil || !ok {
		t.Fatalf("spend: %v, %v", ok, err)
	}
	if unspent, err := ts.UnspentTicket(ctx, p.RequestKey, p.Token, now); err != nil || unspent {
		t.Errorf("spent: unspent %v, %v; want false", unspent, err)
	}
}
