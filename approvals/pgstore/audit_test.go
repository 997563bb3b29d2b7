package pgstore_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mnemos-dev/mnemos/approvals/pgstore"
	"github.com/mnemos-dev/mnemos/audit"
)

func appendN(t *testing.T, l *audit.Log, n int) {
	t.Helper()
	for i := range n {
		if err := l.Append(context.Background(), "policy.decision", slog.Int("i", i)); err != nil {
			t.Fatal(err)
		}
	}
}

func verifyOK(t *testing.T, s *pgstore.Store, want map[string]int) {
	t.Helper()
	chains, err := s.VerifyFleet(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, c := range chains {
		if !c.OK {
			t.Errorf("host %s: %s", c.Host, c.Problem)
		}
		got[c.Host] = c.Lines
	}
	for h, n := range want {
		if got[h] != n {
			t.Errorf("host %s: %d lines in the table, want %d", h, got[h], n)
		}
	}
}

// Shipping sends each line once, in order, whoever ships and however
// often.
func TestShipExactlyOnce(t *testing.T) {
	ctx := context.Background()
	_, dsn := newDB(t)
	s := open(t, dsn, "host-a")
	l := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"), audit.Options{})
	if res, err := s.Ship(ctx, l); err != nil || res.Shipped != 0 {
		t.Fatalf("empty log: %+v %v", res, err)
	}
	appendN(t, l, 25)
	if res, err := s.Ship(ctx, l); err != nil || res.Shipped != 25 || res.From != 1 || res.To != 25 {
		t.Fatalf("first ship: %+v %v", res, err)
	}
	if res, err := s.Ship(ctx, l); err != nil || res.Shipped != 0 || res.Central != 25 {
		t.Fatalf("second ship: %+v %v", res, err)
	}
	appendN(t, l, 2500)
	// Four shippers of the same host at once: each line goes in once.
	var wg sync.WaitGroup
	total := make(chan int, 4)
	for range 4 {
		h := open(t, dsn, "host-a")
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := h.Ship(ctx, l)
			if err != nil {
				t.Error(err)
			}
			total <- res.Shipped
		}()
	}
	wg.Wait()
	close(total)
	sum := 0
	for n := range total {
		sum += n
	}
	if sum != 2500 {
		t.Errorf("concurrent shippers shipped %d lines, want 2500", sum)
	}
	other := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"), audit.Options{})
	appendN(t, other, 3)
	if _, err := open(t, dsn, "host-b").Ship(ctx, other); err != nil {
		t.Fatal(err)
	}
	verifyOK(t, s, map[string]int{"host-a": 2525, "host-b": 3})
	var n int
	if err := poolQuery(t, dsn, `SELECT COUNT(*) FROM audit_events`, &n); err != nil || n != 2528 {
		t.Errorf("%d rows, %v; want 2528", n, err)
	}
}

// Another log shipped under the same host id is refused: the central
// chain is never forked.
func TestSecurityShipRefusesAnotherChain(t *testing.T) {
	ctx := context.Background()
	_, dsn := newDB(t)
	s := open(t, dsn, "host-a")
	mine := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"), audit.Options{})
	appendN(t, mine, 5)
	if _, err := s.Ship(ctx, mine); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{3, 5, 8} {
		imposter := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"), audit.Options{})
		appendN(t, imposter, n)
		if res, err := s.Ship(ctx, imposter); !errors.Is(err, pgstore.ErrChainDiverged) || res.Shipped != 0 {
			t.Errorf("a log of %d other lines shipped as host-a: %+v %v", n, res, err)
		}
	}
	verifyOK(t, s, map[string]int{"host-a": 5})
}

// VerifyFleet names a missing, changed or reordered line of any host.
func TestVerifyFleetFindsTampering(t *testing.T) {
	ctx := context.Background()
	srv, dsn := newDB(t)
	db := dbName(t, dsn)
	s := open(t, dsn, "host-a")
	for _, h := range []string{"host-a", "host-b", "host-c", "host-d"} {
		l := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"), audit.Options{})
		appendN(t, l, 10)
		if _, err := open(t, dsn, h).Ship(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	verifyOK(t, s, map[string]int{"host-a": 10, "host-b": 10})
	if err := srv.Exec(db,
		`DELETE FROM audit_events WHERE host = 'host-b' AND seq = 4`,
		`UPDATE audit_events SET line = replace(line, '"i":6', '"i":7') WHERE host = 'host-c' AND seq = 7`,
		`UPDATE audit_events SET seq = 100 WHERE host = 'host-d' AND seq = 10`,
		`UPDATE audit_events SET seq = 10 WHERE host = 'host-d' AND seq = 9`,
		`UPDATE audit_events SET seq = 9 WHERE host = 'host-d' AND seq = 100`); err != nil {
		t.Fatal(err)
	}
	chains, err := s.VerifyFleet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"host-a": 0, "host-b": 4, "host-c": 7, "host-d": 9}
	for _, c := range chains {
		if c.FirstBad != want[c.Host] || c.OK != (want[c.Host] == 0) {
			t.Errorf("host %s: ok %v, first bad %d (%s); want %d", c.Host, c.OK, c.FirstBad, c.Problem, want[c.Host])
		}
	}
}

// The role hosts connect as may INSERT and SELECT the audit table, never
// UPDATE, DELETE or TRUNCATE it: no host can change what was shipped.
func TestSecurityAuditInsertOnlyRole(t *testing.T) {
	ctx := context.Background()
	srv := pgtestServer(t)
	db := srv.NewDatabase(t)
	role := "mnemos_host_" + pgtestRandom()
	if err := srv.Exec("postgres", "CREATE ROLE "+role+" LOGIN"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Exec("postgres", "DROP OWNED BY "+role, "DROP ROLE IF EXISTS "+role) })
	if _, err := pgstore.Migrate(ctx, srv.DSN(db), role); err != nil {
		t.Fatal(err)
	}
	hostDSN := srv.DSNAs(role, db)
	s := open(t, hostDSN, "host-a")
	l := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"), audit.Options{})
	appendN(t, l, 7)
	if res, err := s.Ship(ctx, l); err != nil || res.Shipped != 7 {
		t.Fatalf("ship as the hosts' role: %+v %v", res, err)
	}
	verifyOK(t, s, map[string]int{"host-a": 7})
	c, err := pgx.Connect(ctx, hostDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, q := range []string{
		`UPDATE audit_events SET line = 'x' WHERE seq = 1`,
		`DELETE FROM audit_events WHERE seq = 7`,
		`TRUNCATE audit_events`,
		`ALTER TABLE audit_events DISABLE TRIGGER ALL`,
		`DROP TABLE audit_events`,
		`UPDATE mnemos_schema SET version = 99`,
		`DELETE FROM pending`,
	} {
		_, err := c.Exec(ctx, q)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || (pe.Code != "42501" && pe.Code != "42P01") {
			t.Errorf("%s as the hosts' role: %v, want permission denied", q, err)
		}
	}
	// The registry's tables it may use.
	if _, err := c.Exec(ctx, `SELECT COUNT(*) FROM pending`); err != nil {
		t.Errorf("select pending: %v", err)
	}
	verifyOK(t, s, map[string]int{"host-a": 7})
}

// dbName is the dbname of a DSN built by pgtest.
func dbName(t *testing.T, dsn string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Database
}

// The README's row-level security keeps a host's role to its own chain.
func TestAuditRowLevelSecurity(t *testing.T) {
	ctx := context.Background()
	srv := pgtestServer(t)
	db := srv.NewDatabase(t)
	a, b := "host_a_"+pgtestRandom(), "host_b_"+pgtestRandom()
	for _, r := range []string{a, b} {
		if err := srv.Exec("postgres", "CREATE ROLE "+r+" LOGIN"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Exec("postgres", "DROP OWNED BY "+r, "DROP ROLE IF EXISTS "+r) })
		if _, err := pgstore.Migrate(ctx, srv.DSN(db), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Exec(db, `ALTER TABLE audit_events ENABLE ROW LEVEL SECURITY`,
		`CREATE POLICY read_all ON audit_events FOR SELECT USING (true)`,
		`CREATE POLICY own_chain ON audit_events FOR INSERT WITH CHECK (host = current_user)`); err != nil {
		t.Fatal(err)
	}
	la := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"), audit.Options{})
	appendN(t, la, 4)
	if res, err := open(t, srv.DSNAs(a, db), a).Ship(ctx, la); err != nil || res.Shipped != 4 {
		t.Fatalf("own chain: %+v %v", res, err)
	}
	lb := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"), audit.Options{})
	appendN(t, lb, 2)
	if res, err := open(t, srv.DSNAs(b, db), a).Ship(ctx, lb); err == nil || res.Shipped != 0 {
		t.Errorf("%s shipped as %s: %+v %v", b, a, res, err)
	}
	if res, err := open(t, srv.DSNAs(b, db), b).Ship(ctx, lb); err != nil || res.Shipped != 2 {
		t.Errorf("%s's own chain: %+v %v", b, res, err)
	}
}
