package pgstore_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/approvals/approvalstest"
	"github.com/mnemos-dev/mnemos/approvals/pgstore"
	"github.com/mnemos-dev/mnemos/approvals/pgstore/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// newDB creates a migrated database and returns its DSN.
func newDB(t *testing.T) (*pgtest.Server, string) {
	t.Helper()
	srv := pgtest.Shared(t)
	dsn := srv.DSN(srv.NewDatabase(t))
	if _, err := pgstore.Migrate(context.Background(), dsn, ""); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return srv, dsn
}

func open(t testing.TB, dsn, host string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Host: host})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the backend conformance suite on PostgreSQL, every
// handle as the same host.
func TestConformance(t *testing.T) {
	approvalstest.Run(t, func(t *testing.T) approvalstest.Opener {
		_, dsn := newDB(t)
		return func(t testing.TB) approvals.Backend { return open(t, dsn, "host-a") }
	})
}

func pgtestServer(t *testing.T) *pgtest.Server { return pgtest.Shared(t) }

// poolQuery runs one query returning one row into dest.
func poolQuery(t *testing.T, dsn, q string, dest ...any) error {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	return c.QueryRow(context.Background(), q).Scan(dest...)
}

// execSQL runs statements on the database at dsn.
func execSQL(t *testing.T, dsn string, stmts ...string) error {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	for _, q := range stmts {
		if _, err := c.Exec(context.Background(), q); err != nil {
			return err
		}
	}
	return nil
}

func pgtestRandom() string { return pgtest.RandomName() }
