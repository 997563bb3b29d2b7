package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
)

// TestSecuritySessionRuleOnTheSessionsHost: a session rule made by an
// approval given on host B for a request parked on host A applies on A,
// where the session and its waiting run are, and not on B; one made
// without an approval stays on the host that records it.
func TestSecuritySessionRuleOnTheSessionsHost(t *testing.T) {
	ctx := context.Background()
	_, dsn := newDB(t)
	a, b := open(t, dsn, "host-a"), open(t, dsn, "host-b")
	now := time.Now()
	p := park(t, a, "k", now, 0)
	if _, err := b.Resolve(ctx, p.Token, approvals.Approve, approvals.Identity{Channel: approvals.ViaTerminal, Sender: alice.Sender}, now, approvals.ResolveOptions{For: alice, Territory: approvals.TerritorySession, NoTicket: true}); err != nil {
		t.Fatal(err)
	}
	rule := approvals.SessionRule{Channel: "cli", Sender: "alice", ArgvPrefix: []string{"make", "test"}, Pin: "p",
		Session: "s1", ExpiresAt: now.Add(time.Hour), GrantedBy: "cli:alice", Approval: p.Token}
	if _, err := b.RecordSessionRule(ctx, rule, now); err != nil {
		t.Fatal(err)
	}
	if rs, err := a.ActiveSessionRules(ctx, "cli", "alice", "s1", now); err != nil || len(rs) != 1 {
		t.Errorf("host A, where the request was parked: %d rules (%v), want 1", len(rs), err)
	}
	if rs, err := b.ActiveSessionRules(ctx, "cli", "alice", "s1", now); err != nil || len(rs) != 0 {
		t.Errorf("host B, where it was approved: %d rules (%v), want 0", len(rs), err)
	}
	own := rule
	own.Approval, own.ArgvPrefix = "", []string{"make", "lint"}
	if _, err := b.RecordSessionRule(ctx, own, now); err != nil {
		t.Fatal(err)
	}
	if rs, _ := b.ActiveSessionRules(ctx, "cli", "alice", "s1", now); len(rs) != 1 || rs[0].ArgvPrefix[1] != "lint" {
		t.Errorf("a rule without an approval on host B: %v", rs)
	}
}
