package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/approvals/pgstore"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
)

var alice = approvals.Identity{Channel: "cli", Sender: "alice"}

func park(t *testing.T, s approvals.Backend, key string, now time.Time, ttl time.Duration) approvals.Pending {
	t.Helper()
	p, err := s.CreatePending(context.Background(), approvals.NewPending{Channel: "cli", Sender: "alice",
		CapabilityClass: "network:http:example.com", ActionVerb: "fetch", TargetSummary: "example.com", RequestKey: key}, now, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A request parked on host A is answered on host B; its ticket is spent
// on A, once, and by no other host.
func TestSecurityTicketBoundToParkingHost(t *testing.T) {
	ctx := context.Background()
	_, dsn := newDB(t)
	a, b, c := open(t, dsn, "host-a"), open(t, dsn, "host-b"), open(t, dsn, "host-c")
	now := time.Now()
	p := park(t, a, "k", now, 0)
	if p.Host != "host-a" {
		t.Fatalf("parked on %q", p.Host)
	}
	if _, err := b.Resolve(ctx, p.Token, approvals.Approve, approvals.Identity{Channel: approvals.ViaTerminal, Sender: alice.Sender}, now, approvals.ResolveOptions{For: alice}); err != nil {
		t.Fatalf("approve on B: %v", err)
	}
	for _, h := range []*pgstore.Store{b, c} {
		if _, ok, err := h.SpendTicket(ctx, "k", now); ok || err != nil {
			t.Errorf("%s spent a ticket issued for a request parked on host-a (%v)", h.Host(), err)
		}
	}
	// Eight handles of host A race for it: one wins.
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		h := open(t, dsn, "host-a")
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, ok, err := h.SpendTicket(ctx, "k", now); err != nil {
				t.Error(err)
			} else if ok {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d spends of one ticket", wins.Load())
	}
	got, _ := c.Get(ctx, p.Token)
	if got.Status != approvals.StatusApproved || got.Host != "host-a" {
		t.Errorf("as host C sees it: %+v", got)
	}
}

// Expiry is the server's: a host whose clock is behind cannot approve a
// request the server holds expired, and one whose clock is ahead cannot
// expire a request early.
func TestSecurityExpiryOnServerClock(t *testing.T) {
	ctx := context.Background()
	_, dsn := newDB(t)
	slowWall := func() time.Time { return time.Now().Add(-time.Hour) }
	fastWall := func() time.Time { return time.Now().Add(time.Hour) }
	slow, err := pgstore.Open(ctx, dsn, pgstore.Options{Host: "slow", Wall: slowWall})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fast, err := pgstore.Open(ctx, dsn, pgstore.Options{Host: "fast", Wall: fastWall})
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	a := open(t, dsn, "host-a")

	short := park(t, a, "short", time.Now(), time.Second)
	long := park(t, a, "long", time.Now(), 10*time.Minute)
	// Rows carry the server's time, whatever the writer's clock says.
	onSlow := park(t, slow, "slow", slowWall(), time.Minute)
	if d := time.Since(onSlow.CreatedAt); d > time.Minute || d < -time.Minute {
		t.Errorf("a host an hour behind wrote created_at %v (now %v)", onSlow.CreatedAt, time.Now())
	}
	time.Sleep(1500 * time.Millisecond)
	if _, err := slow.Resolve(ctx, short.Token, approvals.Approve, approvals.Identity{Channel: approvals.ViaTerminal, Sender: alice.Sender}, slowWall(), approvals.ResolveOptions{For: alice}); !errors.Is(err, approvals.ErrExpired) {
		t.Errorf("host an hour behind approved an expired request: %v", err)
	}
	if _, err := fast.Resolve(ctx, long.Token, approvals.Approve, approvals.Identity{Channel: approvals.ViaTerminal, Sender: alice.Sender}, fastWall(), approvals.ResolveOptions{For: alice}); err != nil {
		t.Errorf("host an hour ahead could not approve an open request: %v", err)
	}
	// Its ticket, spent on host A, is within its TTL by the server's clock.
	if _, ok, err := a.SpendTicket(ctx, "long", time.Now()); !ok || err != nil {
		t.Errorf("ticket issued by a host an hour ahead: %v %v", ok, err)
	}
	// A grant recorded by a host an hour behind for one minute ends a
	// minute from now, not an hour ago.
	exp := slowWall().Add(time.Minute)
	g, err := slow.RecordGrant(ctx, policy.GrantKey{Channel: "cli", Sender: "alice", Capability: classify.NetworkHTTP, Target: "example.com"},
		approvals.GrantOptions{ExpiresAt: &exp}, slowWall())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.CoveringGrant(ctx, "cli", "alice", classify.NetworkHTTP, "example.com", "", time.Now()); !ok {
		t.Errorf("grant %d recorded by a slow host for a minute does not cover now", g.ID)
	}
	if _, ok, _ := a.CoveringGrant(ctx, "cli", "alice", classify.NetworkHTTP, "example.com", "", time.Now().Add(2*time.Minute)); ok {
		t.Error("grant recorded by a slow host for a minute covers two minutes on")
	}
}

// List shows this host's requests; Fleet shows every host's.
func TestFleetList(t *testing.T) {
	ctx := context.Background()
	_, dsn := newDB(t)
	now := time.Now()
	var hosts []*pgstore.Store
	for i := range 3 {
		h := open(t, dsn, fmt.Sprintf("h%d", i))
		hosts = append(hosts, h)
		park(t, h, fmt.Sprintf("k%d", i), now.Add(time.Duration(i)*time.Second), 0)
	}
	own, err := hosts[1].List(ctx, approvals.ListOptions{}, now.Add(5*time.Second))
	if err != nil || len(own) != 1 || own[0].Host != "h1" {
		t.Fatalf("own list: %+v %v", own, err)
	}
	all, err := hosts[1].List(ctx, approvals.ListOptions{Fleet: true}, now.Add(5*time.Second))
	if err != nil || len(all) != 3 || all[0].Host != "h2" || all[2].Host != "h0" {
		t.Fatalf("fleet list: %+v %v", all, err)
	}
	// FindOpen and CleanupExpired keep to this host.
	if _, found, _ := hosts[1].FindOpen(ctx, "k0", now); found {
		t.Error("FindOpen found another host's request")
	}
	swept, err := hosts[1].CleanupExpired(ctx, now.Add(time.Hour))
	if err != nil || len(swept) != 1 || swept[0].Host != "h1" {
		t.Errorf("sweep of h1: %+v %v", swept, err)
	}
	if p, _ := hosts[0].Get(ctx, all[2].Token); p.Status != approvals.StatusPending {
		t.Errorf("h1's sweep expired h0's request: %s", p.Status)
	}
}

// Every row names the host that wrote it.
func TestHostOnEveryRow(t *testing.T) {
	ctx := context.Background()
	srv, dsn := newDB(t)
	now := time.Now()
	a := open(t, dsn, "writer-a")
	p := park(t, a, "k", now, 0)
	if _, err := a.Resolve(ctx, p.Token, approvals.Approve, approvals.Identity{Channel: approvals.ViaTerminal, Sender: alice.Sender}, now, approvals.ResolveOptions{For: alice}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.RecordGrant(ctx, policy.GrantKey{Channel: "cli", Sender: "alice", Capability: classify.FSWrite, Target: "/p/**"}, approvals.GrantOptions{}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := a.RecordSessionRule(ctx, approvals.SessionRule{Channel: "cli", Sender: "alice", ArgvPrefix: []string{"make"}, Pin: "x", ExpiresAt: now.Add(time.Hour)}, now); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.TakeToken(ctx, "b", 2, 1, now); err != nil {
		t.Fatal(err)
	}
	_ = srv
	for _, table := range []string{"pending", "tickets", "grants", "session_rules", "rate_buckets"} {
		var n, other int
		if err := poolQuery(t, dsn, `SELECT COUNT(*), COUNT(*) FILTER (WHERE host <> 'writer-a') FROM `+table, &n, &other); err != nil {
			t.Fatal(err)
		}
		if n == 0 || other != 0 {
			t.Errorf("%s: %d rows, %d not by writer-a", table, n, other)
		}
	}
}

func TestHostID(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if id, err := pgstore.HostID(env(map[string]string{"MNEMOS_HOST_ID": "ci-7"})); err != nil || id != "ci-7" {
		t.Errorf("HostID = %q, %v", id, err)
	}
	if id, err := pgstore.HostID(env(nil)); err != nil || id == "" {
		t.Errorf("hostname: %q, %v", id, err)
	}
	for _, bad := range []string{"a b", "a\nb", strings.Repeat("x", 129), "tab\there"} {
		if _, err := pgstore.HostID(env(map[string]string{"MNEMOS_HOST_ID": bad})); err == nil {
			t.Errorf("host id %q accepted", bad)
		}
	}
	if _, err := pgstore.Open(context.Background(), "host=/nonexistent", pgstore.Options{}); err == nil {
		t.Error("Open without a host id succeeded")
	}
}

// Open never changes the schema and refuses one it does not know; Migrate
// is idempotent and refuses a newer schema.
func TestSchemaVersions(t *testing.T) {
	ctx := context.Background()
	srv := pgtestServer(t)
	db := srv.NewDatabase(t)
	dsn := srv.DSN(db)
	_, err := pgstore.Open(ctx, dsn, pgstore.Options{Host: "h"})
	var se *pgstore.SchemaError
	if !errors.As(err, &se) || se.Have != 0 || !errors.Is(err, pgstore.ErrSchemaOlder) {
		t.Fatalf("Open of an empty database: %v", err)
	}
	res, err := pgstore.Migrate(ctx, dsn, "")
	if err != nil || res.From != 0 || res.To != pgstore.SchemaVersion() {
		t.Fatalf("Migrate = %+v, %v", res, err)
	}
	res, err = pgstore.Migrate(ctx, dsn, "")
	if err != nil || res.From != res.To {
		t.Fatalf("second Migrate = %+v, %v", res, err)
	}
	if err := srv.Exec(db, fmt.Sprintf("UPDATE mnemos_schema SET version = %d", pgstore.SchemaVersion()+1)); err != nil {
		t.Fatal(err)
	}
	if _, err := pgstore.Open(ctx, dsn, pgstore.Options{Host: "h"}); !errors.Is(err, pgstore.ErrSchemaNewer) {
		t.Errorf("Open of a newer schema: %v", err)
	}
	if _, err := pgstore.Migrate(ctx, dsn, ""); !errors.Is(err, pgstore.ErrSchemaNewer) {
		t.Errorf("Migrate of a newer schema: %v", err)
	}
	// Concurrent migrations of a new database apply each version once.
	db2 := srv.NewDatabase(t)
	var wg sync.WaitGroup
	var applied atomic.Int32
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := pgstore.Migrate(ctx, srv.DSN(db2), "")
			if err != nil {
				t.Error(err)
			}
			if r.To != r.From {
				applied.Add(1)
			}
		}()
	}
	wg.Wait()
	if applied.Load() != 1 {
		t.Errorf("%d concurrent migrations applied the schema", applied.Load())
	}
	if _, err := pgstore.Migrate(ctx, dsn, "Robert'); DROP TABLE pending; --"); err == nil {
		t.Error("a role that is no identifier was accepted")
	}
}

// An unreachable server fails Open quickly, naming it without a password.
func TestOpenUnreachable(t *testing.T) {
	start := time.Now()
	_, err := pgstore.Open(context.Background(), "host=127.0.0.1 port=1 user=u password=hunter2 dbname=d connect_timeout=2", pgstore.Options{Host: "h"})
	if err == nil {
		t.Fatal("Open of an unreachable server succeeded")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error shows the password: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	if _, err := pgstore.Open(context.Background(), "password=hunter2 host='", pgstore.Options{Host: "h"}); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("bad DSN: %v", err)
	}
}
