package approvals

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/classify"
)

func seedGrants(b *testing.B, path string) {
	b.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := range 20 {
		if _, err := s.RecordGrant(context.Background(), key(classify.FSWrite, fmt.Sprintf("/proj%d/**", i)), GrantOptions{}, t0); err != nil {
			b.Fatal(err)
		}
	}
}

// One CLI invocation's worth: open the database, ask for a grant, close.
func BenchmarkOpenCoveringGrant(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "mnemos.db")
	seedGrants(b, path)
	for b.Loop() {
		s, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		if _, ok, err := s.CoveringGrant(ctx, "cli", "alice", classify.FSWrite, "/proj7/src/main.go", "", t0); !ok || err != nil {
			b.Fatal(ok, err)
		}
		s.Close()
	}
}

func BenchmarkCoveringGrant(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "mnemos.db")
	seedGrants(b, path)
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for b.Loop() {
		if _, ok, err := s.CoveringGrant(ctx, "cli", "alice", classify.FSWrite, "/proj7/src/main.go", "", t0); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkSpendTicket(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "mnemos.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// One approval, many tickets on it: each iteration spends one.
	p, err := s.CreatePending(ctx, newReq("k"), t0, 0)
	if err != nil {
		b.Fatal(err)
	}
	refill := func() {
		b.StopTimer()
		defer b.StartTimer()
		if err := s.inTx(ctx, func(tx *sql.Tx) error {
			for range 5000 {
				if _, err := tx.Exec(`INSERT INTO tickets (request_key, approval_token, created_at, expires_at)
					VALUES ('k', ?, ?, ?)`, p.Token, formatTime(t0), formatTime(t0.Add(time.Hour))); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		_, ok, err := s.SpendTicket(ctx, "k", t0.Add(time.Second))
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			refill()
		}
	}
}

// One grant spent over and over: the conditional UPDATE ... RETURNING the
// gate runs after a covering lookup.
func BenchmarkSpendGrant(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "mnemos.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	g, err := s.RecordGrant(ctx, key(classify.FSWrite, "/proj/**"), GrantOptions{MaxUses: 1 << 40}, t0)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, ok, err := s.SpendGrant(ctx, g.ID, t0.Add(time.Second)); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// A bucket that never runs dry (the usual case: under the limit), and one
// that always refuses (the refusal also reads the bucket back).
func BenchmarkTakeToken(b *testing.B) {
	for _, tc := range []struct {
		name     string
		capacity float64
		want     bool
	}{{"granted", 1e15, true}, {"refused", 1, false}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			s, err := Open(ctx, filepath.Join(b.TempDir(), "mnemos.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			s.TakeToken(ctx, "cli:alice:network:http", tc.capacity, 0, t0)
			for b.Loop() {
				if ok, _, err := s.TakeToken(ctx, "cli:alice:network:http", tc.capacity, 0, t0); ok != tc.want || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}
