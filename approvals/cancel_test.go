package approvals

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Cancel withdraws a pending request with the same four checks as Resolve;
// a withdrawn request issues no ticket and cannot be approved afterwards.
func TestCancel(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	p, err := s.CreatePending(ctx, newReq("k"), t0, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Cancel(ctx, p.Token, alice, "  the plan changed ", t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusCancelled || got.CancelReason != "the plan changed" || got.DecisionBy == nil || *got.DecisionBy != alice {
		t.Fatalf("cancelled request: %+v", got)
	}
	stored, err := s.Get(ctx, p.Token)
	if err != nil || stored.Status != StatusCancelled || stored.CancelReason != "the plan changed" || stored.DecisionAt == nil {
		t.Fatalf("stored: %+v, %v", stored, err)
	}
	if _, err := s.Resolve(ctx, p.Token, Approve, Identity{Channel: ViaTerminal, Sender: alice.Sender}, t0.Add(2*time.Second), ResolveOptions{For: alice}); !errors.Is(err, ErrAlreadyResolved) {
		t.Errorf("approving a cancelled request: err = %v, want ErrAlreadyResolved", err)
	}
	if _, ok, err := s.SpendTicket(ctx, "k", t0.Add(3*time.Second)); ok || err != nil {
		t.Errorf("a cancelled request left a ticket: %v, %v", ok, err)
	}
	if _, err := s.Cancel(ctx, p.Token, alice, "", t0.Add(4*time.Second)); !errors.Is(err, ErrAlreadyResolved) {
		t.Errorf("cancelling twice: err = %v, want ErrAlreadyResolved", err)
	}
	list, err := s.List(ctx, ListOptions{IncludeResolved: true}, t0.Add(5*time.Second))
	if err != nil || len(list) != 1 || list[0].Status != StatusCancelled {
		t.Errorf("list: %+v, %v", list, err)
	}
	open, err := s.List(ctx, ListOptions{}, t0.Add(5*time.Second))
	if err != nil || len(open) != 0 {
		t.Errorf("a cancelled request is still listed as open: %+v, %v", open, err)
	}

	// The checks, in Resolve's order.
	if _, err := s.Cancel(ctx, "nope", alice, "", t0); !errors.Is(err, ErrUnknownToken) {
		t.Errorf("unknown token: err = %v", err)
	}
	q, _ := s.CreatePending(ctx, newReq("k2"), t0, time.Minute)
	if _, err := s.Cancel(ctx, q.Token, Identity{"cli", "mallory"}, "", t0.Add(2*time.Minute)); !errors.Is(err, ErrExpired) {
		t.Errorf("expired: err = %v, want ErrExpired", err)
	}
	if e, err := s.Get(ctx, q.Token); err != nil || e.Status != StatusExpired {
		t.Errorf("the expired status did not persist: %+v, %v", e, err)
	}
	r, _ := s.CreatePending(ctx, newReq("k3"), t0, 0)
	if _, err := s.Cancel(ctx, r.Token, Identity{"cli", "mallory"}, "", t0); !errors.Is(err, ErrNotRequester) {
		t.Errorf("another identity: err = %v, want ErrNotRequester", err)
	}
	if e, _ := s.Get(ctx, r.Token); e.Status != StatusPending {
		t.Errorf("a refused cancel changed the request: %+v", e)
	}
	// With no reason given, one is recorded.
	if c, err := s.Cancel(ctx, r.Token, alice, "", t0); err != nil || c.CancelReason == "" {
		t.Errorf("cancel without a reason: %+v, %v", c, err)
	}
}
