package pgstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/classify"
)

// measure skips unless MNEMOS_MEASURE=1: these print numbers for the
// notes, they assert nothing about speed.
func measure(t *testing.T) {
	if os.Getenv("MNEMOS_MEASURE") != "1" {
		t.Skip("SKIP: a measurement; run with MNEMOS_MEASURE=1")
	}
}

func quantiles(ds []time.Duration) (median, p99 time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], ds[min(len(ds)-1, len(ds)*99/100)]
}

// TestMeasurePropagation: from an answer committed on host B to the
// process waiting on host A seeing it, with LISTEN/NOTIFY and with
// polling every 250 ms (what gate's wait does without a Waiter).
func TestMeasurePropagation(t *testing.T) {
	measure(t)
	ctx := context.Background()
	_, dsn := newDB(t)
	a, b := open(t, dsn, "host-a"), open(t, dsn, "host-b")
	const rounds = 60
	const every = 250 * time.Millisecond
	for _, mode := range []string{"listen/notify", "polling 250ms"} {
		var ds []time.Duration
		for i := range rounds {
			p := park(t, a, fmt.Sprintf("%s-%d", mode, i), time.Now(), 0)
			answered := make(chan time.Time, 1)
			go func() {
				time.Sleep(time.Duration(50+rand.IntN(300)) * time.Millisecond)
				if _, err := b.Resolve(ctx, p.Token, approvals.Approve, approvals.Identity{Channel: approvals.ViaTerminal, Sender: alice.Sender}, time.Now(), approvals.ResolveOptions{For: alice}); err != nil {
					t.Error(err)
				}
				answered <- time.Now()
			}()
			for {
				got, err := a.Get(ctx, p.Token)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status == approvals.StatusApproved {
					ds = append(ds, time.Since(<-answered))
					break
				}
				if mode == "listen/notify" {
					if err := a.WaitChange(ctx, p.Token, every); err != nil {
						t.Fatal(err)
					}
				} else {
					time.Sleep(every)
				}
			}
		}
		med, p99 := quantiles(ds)
		t.Logf("approval propagation host B -> waiting host A, %s: median %v, p99 %v (%d rounds)", mode, med.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), rounds)
	}
}

// TestMeasureGrantLookup: CoveringGrant among 1 000 000 grants of 10 000
// identities.
func TestMeasureGrantLookup(t *testing.T) {
	measure(t)
	ctx := context.Background()
	_, dsn := newDB(t)
	s := open(t, dsn, "host-a")
	start := time.Now()
	if err := execSQL(t, dsn, `INSERT INTO grants (host, channel, sender_id, capability, target, granted_at, session)
		SELECT 'seed', 'cli', 'user' || (i % 10000), (ARRAY['fs:write','fs:read','network:http'])[1 + i % 3],
		       '/proj/' || i || '/**', now(), ''
		FROM generate_series(1, 1000000) AS i`, `ANALYZE grants`); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded 1 000 000 grants in %v", time.Since(start).Round(time.Millisecond))
	var ds []time.Duration
	now := time.Now()
	for range 500 {
		u := rand.IntN(10000)
		target := fmt.Sprintf("/proj/%d/src/x.go", u+10000*rand.IntN(100))
		t0 := time.Now()
		_, _, err := s.CoveringGrant(ctx, "cli", fmt.Sprintf("user%d", u), classify.FSWrite, target, "", now)
		ds = append(ds, time.Since(t0))
		if err != nil {
			t.Fatal(err)
		}
	}
	med, p99 := quantiles(ds)
	t.Logf("grant lookup among 1 000 000 grants (unix socket): median %v, p99 %v (500 lookups)", med.Round(time.Microsecond), p99.Round(time.Microsecond))
}

// TestMeasureAuditIngest: 8 hosts ship 5 000 events each at once.
func TestMeasureAuditIngest(t *testing.T) {
	measure(t)
	ctx := context.Background()
	_, dsn := newDB(t)
	const hosts, events = 8, 5000
	logs := make([]*audit.Log, hosts)
	for i := range logs {
		logs[i] = audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"), audit.Options{})
		for j := range events {
			if err := logs[i].Append(ctx, "policy.decision", slog.String("decision", "allow"), slog.Any("argv", []string{"ls", "-la"}), slog.Int("j", j)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	start := time.Now()
	for i, l := range logs {
		s := open(t, dsn, fmt.Sprintf("host-%d", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res, err := s.Ship(ctx, l); err != nil || res.Shipped != events {
				t.Errorf("ship: %+v %v", res, err)
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	t.Logf("audit ingest: %d hosts x %d events shipped at once in %v: %.0f events/s", hosts, events, d.Round(time.Millisecond), float64(hosts*events)/d.Seconds())
}
