package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
)

// A process waiting on host A hears of an answer given on host B as soon
// as it is committed, not at its next look.
func TestWaitChangeHearsAnotherHost(t *testing.T) {
	ctx := context.Background()
	_, dsn := newDB(t)
	a, b := open(t, dsn, "host-a"), open(t, dsn, "host-b")
	p := park(t, a, "k", time.Now(), 0)
	other := park(t, a, "k2", time.Now(), 0)
	start := time.Now()
	if err := a.WaitChange(ctx, p.Token, 10*time.Second); err != nil || time.Since(start) > 2*time.Second {
		t.Fatalf("first WaitChange (listen) = %v after %v", err, time.Since(start))
	}
	// An answer to another request does not wake it.
	if _, err := b.Resolve(ctx, other.Token, approvals.Reject, alice, time.Now(), approvals.ResolveOptions{}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if err := a.WaitChange(ctx, p.Token, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("woken after %v by another request's answer", d)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		if _, err := b.Resolve(ctx, p.Token, approvals.Approve, approvals.Identity{Channel: approvals.ViaTerminal, Sender: alice.Sender}, time.Now(), approvals.ResolveOptions{For: alice}); err != nil {
			t.Error(err)
		}
	}()
	start = time.Now()
	if err := a.WaitChange(ctx, p.Token, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("woken after %v, want soon after the answer at 200 ms", d)
	}
	if got, _ := a.Get(ctx, p.Token); got.Status != approvals.StatusApproved {
		t.Errorf("after waking: %s", got.Status)
	}
	// A cancelled context ends the wait with its error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := a.WaitChange(cctx, p.Token, time.Second); err == nil {
		t.Error("WaitChange with a cancelled context returned nil")
	}
	// The listening connection survives a wait that timed out.
	q := park(t, a, "k3", time.Now(), time.Hour)
	_ = a.WaitChange(ctx, q.Token, 50*time.Millisecond)
	go func() {
		time.Sleep(100 * time.Millisecond)
		b.Cancel(ctx, q.Token, alice, "", time.Now())
	}()
	start = time.Now()
	if err := a.WaitChange(ctx, q.Token, 10*time.Second); err != nil || time.Since(start) > 3*time.Second {
		t.Errorf("after a timed-out wait: %v after %v", err, time.Since(start))
	}
}

// A page or terminal waiting on host B with no token hears of every
// change on any host: a request parked on host A, and its answer.
func TestWaitChangeAnyRequest(t *testing.T) {
	ctx := context.Background()
	_, dsn := newDB(t)
	a, b := open(t, dsn, "host-a"), open(t, dsn, "host-b")
	if err := b.WaitChange(ctx, "", 10*time.Second); err != nil {
		t.Fatalf("first WaitChange (listen): %v", err)
	}
	start := time.Now()
	if err := b.WaitChange(ctx, "", 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("woken after %v with nothing changed", d)
	}
	parked := make(chan approvals.Pending, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		parked <- park(t, a, "k", time.Now(), 0)
	}()
	start = time.Now()
	if err := b.WaitChange(ctx, "", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("a request parked on another host woke the waiter after %v", d)
	}
	p := <-parked
	go func() {
		time.Sleep(200 * time.Millisecond)
		if _, err := a.Resolve(ctx, p.Token, approvals.Reject, alice, time.Now(), approvals.ResolveOptions{}); err != nil {
			t.Error(err)
		}
	}()
	start = time.Now()
	if err := b.WaitChange(ctx, "", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("an answer woke the waiter after %v", d)
	}
	if got, _ := b.Get(ctx, p.Token); got.Status != approvals.StatusRejected {
		t.Errorf("after waking: %s", got.Status)
	}
}
