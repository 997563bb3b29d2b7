package approvals

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/classify"
)

// schemaV1 is the schema as version 1 wrote it, to build old databases.
const schemaV1 = `
CREATE TABLE IF NOT EXISTS pending (
	token               TEXT PRIMARY KEY,
	channel             TEXT NOT NULL,
	sender_id           TEXT NOT NULL,
	capability_class    TEXT NOT NULL,
	action_verb         TEXT NOT NULL,
	target_summary      TEXT NOT NULL,
	created_at          TEXT NOT NULL,
	expires_at          TEXT NOT NULL,
	status              TEXT NOT NULL DEFAULT 'pending'
	                    CHECK (status IN ('pending', 'approved', 'rejected', 'expired')),
	decision_at         TEXT,
	decision_by_channel TEXT,
	decision_by_sender  TEXT,
	request_key         TEXT NOT NULL,
	request_extra       TEXT,
	territory           TEXT CHECK (territory IN ('none', 'session', 'permanent')),
	recurrence          INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS idx_pending_status ON pending(status);
CREATE INDEX IF NOT EXISTS idx_pending_expires ON pending(expires_at);
CREATE INDEX IF NOT EXISTS idx_pending_request_key ON pending(request_key, status);
CREATE INDEX IF NOT EXISTS idx_pending_class ON pending(channel, sender_id, capability_class);

CREATE TABLE IF NOT EXISTS tickets (
	id             INTEGER PRIMARY KEY AUTOINCREMENT,
	request_key    TEXT NOT NULL,
	approval_token TEXT NOT NULL REFERENCES pending(token),
	created_at     TEXT NOT NULL,
	expires_at     TEXT NOT NULL,
	spent_at       TEXT
);
CREATE INDEX IF NOT EXISTS idx_tickets_request_key ON tickets(request_key, spent_at);

CREATE TABLE IF NOT EXISTS grants (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	channel    TEXT NOT NULL,
	sender_id  TEXT NOT NULL,
	capability TEXT NOT NULL,
	target     TEXT NOT NULL,
	granted_at TEXT NOT NULL,
	expires_at TEXT,
	granted_by TEXT,
	revoked_at TEXT,
	session    TEXT NOT NULL DEFAULT '',
	approval   TEXT,
	last_used  TEXT
);
CREATE INDEX IF NOT EXISTS idx_grants_lookup ON grants(channel, sender_id, capability);
CREATE INDEX IF NOT EXISTS idx_grants_active ON grants(revoked_at, expires_at);
`

// writeV1 creates a version-1 database at path holding a pending request,
// its ticket, an active grant (used once) and a revoked one, as an older
// mnemos left it.
func writeV1(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?"+dsnSettings)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := formatTime(t0)
	for _, q := range []string{
		schemaV1,
		`INSERT INTO pending (token, channel, sender_id, capability_class, action_verb, target_summary,
			created_at, expires_at, status, request_key, territory)
			VALUES ('tok', 'cli', 'alice', 'fs:write:/proj/**', 'write', 'x', '` + n + `', '` + formatTime(t0.Add(time.Hour)) + `', 'approved', 'k', 'none')`,
		`INSERT INTO tickets (request_key, approval_token, created_at, expires_at)
			VALUES ('k', 'tok', '` + n + `', '` + formatTime(t0.Add(time.Hour)) + `')`,
		`INSERT INTO grants (channel, sender_id, capability, target, granted_at, last_used)
			VALUES ('cli', 'alice', 'fs:write', '/proj/**', '` + n + `', '` + n + `')`,
		`INSERT INTO grants (channel, sender_id, capability, target, granted_at, revoked_at)
			VALUES ('cli', 'alice', 'fs:read', '/old/**', '` + n + `', '` + n + `')`,
		`PRAGMA user_version = 1`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
}

func TestMigrateFromVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "mnemos.db")
	writeV1(t, path)
	// Opening twice, the second time on the migrated file, is the same.
	for range 2 {
		s := openTest(t, path)
		var v int
		if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
			t.Fatalf("user_version = %d, %v; want %d", v, err, SchemaVersion)
		}
		if p, err := s.Get(ctx, "tok"); err != nil || p.Status != StatusApproved {
			t.Errorf("pending row: %+v, %v", p, err)
		}
		rs := records(t, s)
		if len(rs) != 2 {
			t.Fatalf("%d grants after migration, want 2", len(rs))
		}
		if r := rs[1]; r.MaxUses != 0 || r.Uses != 0 || r.LastUsed == nil || r.RevokeReason != "" || r.RevokedAt != nil {
			t.Errorf("active grant after migration: %+v", r)
		}
		if r := rs[2]; r.RevokedAt == nil || r.RevokeReason != RevokeReasonRevoked {
			t.Errorf("revoked grant after migration: %+v", r)
		}
		s.Close()
	}
	// The migrated database works: the old ticket spends once, the old
	// grant covers and spends without limit, new features have their tables.
	s := openTest(t, path)
	if _, ok, err := s.SpendTicket(ctx, "k", t0.Add(time.Minute)); !ok || err != nil {
		t.Errorf("old ticket: %v, %v", ok, err)
	}
	g, ok, err := s.CoveringGrant(ctx, "cli", "alice", classify.FSWrite, "/proj/a", "", t0)
	if !ok || err != nil {
		t.Fatalf("old grant does not cover: %v", err)
	}
	for i := range 3 {
		if r, ok, err := s.SpendGrant(ctx, g.ID, t0); !ok || err != nil || r.Uses != i+1 {
			t.Errorf("spend %d of the old grant: %+v, %v, %v", i, r, ok, err)
		}
	}
	if ok, _, err := s.TakeToken(ctx, "k", 1, 1, t0); !ok || err != nil {
		t.Errorf("TakeToken on a migrated database: %v, %v", ok, err)
	}
	if _, err := s.RecordGrant(ctx, key(classify.FSWrite, "/new/**"), GrantOptions{MaxUses: 2}, t0); err != nil {
		t.Errorf("RecordGrant on a migrated database: %v", err)
	}
}

// Eight handles open one version-1 database at once: each succeeds, the
// columns are added once, and no row is lost.
func TestMigrateConcurrentOpens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "mnemos.db")
	writeV1(t, path)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			s, err := Open(ctx, path)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			if _, err := s.ListGrantRecords(ctx, GrantFilter{IncludeRevoked: true}, t0); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := openTest(t, path)
	var cols, grants int
	s.db.QueryRow(`SELECT COUNT(*) FROM pragma_table_info('grants')`).Scan(&cols)
	s.db.QueryRow(`SELECT COUNT(*) FROM grants`).Scan(&grants)
	if cols != 15 || grants != 2 {
		t.Errorf("%d grant columns, %d grants; want 15, 2", cols, grants)
	}
	// A fresh database has the same grant columns, in the same order, as a
	// migrated one.
	fresh := openTest(t, "")
	if a, b := columnList(t, s.db, "grants"), columnList(t, fresh.db, "grants"); a != b {
		t.Errorf("migrated grants columns\n%s\ndiffer from fresh\n%s", a, b)
	}
}

func columnList(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	rows, err := db.Query(`SELECT name, type, "notnull", COALESCE(dflt_value, '') FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out string
	for rows.Next() {
		var name, typ, dflt string
		var notnull int
		if err := rows.Scan(&name, &typ, &notnull, &dflt); err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("%s %s %d %s\n", name, typ, notnull, dflt)
	}
	return out
}
