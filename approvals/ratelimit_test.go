package approvals

import (
	"context"
	"math"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type take struct {
	after     time.Duration // since t0
	ok        bool
	remaining float64
}

func TestTakeToken(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name           string
		capacity, rate float64
		takes          []take
	}{
		{"capacity 3 then refusal", 3, 1, []take{
			{0, true, 2}, {0, true, 1}, {0, true, 0}, {0, false, 0}, {0, false, 0},
		}},
		{"refills one token a minute", 3, 1, []take{
			{0, true, 2}, {0, true, 1}, {0, true, 0},
			{30 * time.Second, false, 0.5},
			{time.Minute, true, 0},
			{time.Minute, false, 0},
			{3 * time.Minute, true, 1},
		}},
		{"refill stops at capacity", 2, 60, []take{
			{0, true, 1}, {0, true, 0},
			{time.Hour, true, 1}, {time.Hour, true, 0}, {time.Hour, false, 0},
		}},
		{"a whole refill period gives a whole token", 1, 0.3, []take{
			{0, true, 0}, {100 * time.Second, false, 0.5}, {200 * time.Second, true, 0},
			{400*time.Second - time.Second, false, 1 - 0.3/60}, {400 * time.Second, true, 0},
		}},
		{"a refusal does not reset the refill", 1, 1, []take{
			{0, true, 0}, {20 * time.Second, false, 1.0 / 3}, {40 * time.Second, false, 2.0 / 3}, {time.Minute, true, 0},
		}},
		{"rate 0 never refills", 2, 0, []take{
			{0, true, 1}, {0, true, 0}, {24 * time.Hour, false, 0},
		}},
		{"fractional capacity", 1.5, 0, []take{{0, true, 0.5}, {0, false, 0.5}}},
		{"a clock that goes back adds nothing", 2, 1, []take{
			{time.Hour, true, 1}, {0, true, 0}, {time.Hour, false, 0}, {time.Hour + time.Minute, true, 0},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t, "")
			for i, tk := range tc.takes {
				ok, rem, err := s.TakeToken(ctx, "cli:alice:network:http", tc.capacity, tc.rate, t0.Add(tk.after))
				if err != nil || ok != tk.ok || math.Abs(rem-tk.remaining) > 1e-6 {
					t.Fatalf("take %d at +%v: %v, %v, %v; want %v, %v", i, tk.after, ok, rem, err, tk.ok, tk.remaining)
				}
			}
		})
	}
}

func TestTakeTokenBuckets(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	// Keys are independent.
	for _, k := range []string{"cli:alice:network:http", "cli:bob:network:http", "cli:alice:fs:write"} {
		if ok, _, _ := s.TakeToken(ctx, k, 1, 0, t0); !ok {
			t.Errorf("%s: first take refused", k)
		}
	}
	if ok, _, _ := s.TakeToken(ctx, "cli:alice:network:http", 1, 0, t0); ok {
		t.Error("second take of a 1-token bucket succeeded")
	}
	// A lower capacity applies at once: a full 10-token bucket read with
	// capacity 2 holds 2.
	s.TakeToken(ctx, "shrink", 10, 0, t0)
	if ok, rem, _ := s.TakeToken(ctx, "shrink", 2, 0, t0); !ok || rem != 1 {
		t.Errorf("after shrinking: %v, %v; want true, 1", ok, rem)
	}
	// A bucket whose timestamp is damaged refuses, with an error.
	s.db.Exec(`UPDATE rate_buckets SET updated_at = 'yesterday' WHERE key = 'shrink'`)
	if ok, _, err := s.TakeToken(ctx, "shrink", 2, 60, t0); ok || err == nil {
		t.Errorf("damaged bucket: %v, %v", ok, err)
	}
	for _, bad := range []struct {
		key      string
		capacity float64
		rate     float64
	}{
		{"", 1, 1}, {"k", 0, 1}, {"k", 0.5, 1}, {"k", -1, 1}, {"k", math.NaN(), 1}, {"k", math.Inf(1), 1},
		{"k", 1, -1}, {"k", 1, math.NaN()}, {"k", 1, math.Inf(1)},
	} {
		if ok, _, err := s.TakeToken(ctx, bad.key, bad.capacity, bad.rate, t0); ok || err == nil {
			t.Errorf("TakeToken(%q, %v, %v) = %v, %v; want an error", bad.key, bad.capacity, bad.rate, ok, err)
		}
	}
}

// 32 handles (one connection each, as 32 processes would have) take from
// a bucket of 5 at one instant: exactly 5 succeed, for a new bucket and
// for a refilled one.
func TestSecurityTakeTokenUnderContention(t *testing.T) {
	ctx := context.Background()
	const workers, capacity = 32, 5
	path := filepath.Join(t.TempDir(), "mnemos.db")
	handles := make([]*Store, workers)
	for i := range handles {
		handles[i] = openTest(t, path)
	}
	for round, at := range []time.Time{t0, t0.Add(time.Hour)} {
		var wins atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, h := range handles {
			wg.Go(func() {
				<-start
				ok, _, err := h.TakeToken(ctx, "cli:alice:network:http", capacity, 1, at)
				if err != nil {
					t.Error(err)
				} else if ok {
					wins.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		if wins.Load() != capacity {
			t.Errorf("round %d: %d takes succeeded, want %d", round, wins.Load(), capacity)
		}
	}
}
