package approvals

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"
)

// SchemaVersion is the schema this package writes, kept in PRAGMA
// user_version. A database with a newer version is refused; an older one is
// migrated when opened (see migrate).
//
// Version 2 added grants.max_uses, grants.uses, grants.revoke_reason and
// the rate_buckets table; version 3 pending.cancel_reason; version 4
// pending.territory_under and the session_rules table.
const SchemaVersion = 4

// dsnSettings are applied by the driver to every connection it opens.
// busy_timeout comes first so the others wait for a lock instead of failing.
const dsnSettings = "_pragma=busy_timeout(10000)" +
	"&_pragma=journal_mode(WAL)" +
	"&_pragma=synchronous(NORMAL)" +
	"&_pragma=foreign_keys(1)" +
	"&_txlock=immediate"

// setupBusyWait bounds how long Open retries a database that is busy while
// another process creates it. Switching a new file to WAL takes an exclusive
// lock without consulting the busy timeout, so concurrent first opens can
// see SQLITE_BUSY; once the file is in WAL mode this no longer happens.
const setupBusyWait = 10 * time.Second

// timeLayout is fixed width (nanoseconds always written) so that text order
// is time order and expiries can be compared in SQL.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

const schema = `
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
	recurrence          INTEGER NOT NULL DEFAULT 0,
	cancel_reason       TEXT,
	territory_under     TEXT
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
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	channel       TEXT NOT NULL,
	sender_id     TEXT NOT NULL,
	capability    TEXT NOT NULL,
	target        TEXT NOT NULL,
	granted_at    TEXT NOT NULL,
	expires_at    TEXT,
	granted_by    TEXT,
	revoked_at    TEXT,
	session       TEXT NOT NULL DEFAULT '',
	approval      TEXT,
	last_used     TEXT,
	max_uses      INTEGER NOT NULL DEFAULT 0 CHECK (max_uses >= 0),
	uses          INTEGER NOT NULL DEFAULT 0 CHECK (uses >= 0),
	revoke_reason TEXT
);
CREATE INDEX IF NOT EXISTS idx_grants_lookup ON grants(channel, sender_id, capability);
CREATE INDEX IF NOT EXISTS idx_grants_active ON grants(revoked_at, expires_at);

CREATE TABLE IF NOT EXISTS session_rules (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	channel     TEXT NOT NULL,
	sender_id   TEXT NOT NULL,
	argv_prefix TEXT NOT NULL,
	exact       INTEGER NOT NULL DEFAULT 0,
	pin         TEXT NOT NULL,
	session     TEXT NOT NULL DEFAULT '',
	granted_at  TEXT NOT NULL,
	expires_at  TEXT NOT NULL,
	granted_by  TEXT,
	approval    TEXT,
	revoked_at  TEXT
);
CREATE INDEX IF NOT EXISTS idx_session_rules_lookup ON session_rules(channel, sender_id);

CREATE TABLE IF NOT EXISTS rate_buckets (
	key        TEXT PRIMARY KEY,
	tokens     REAL NOT NULL,
	updated_at TEXT NOT NULL
);
`

// addedColumn is a column a later version added to a table that version 1
// already had, with the definition schema gives it.
type addedColumn struct{ table, name, def string }

// addedColumns lists them in the order they were added. A database created
// at an older version gets them by ALTER TABLE; one created at this
// version already has them.
func addedColumns() []addedColumn {
	return []addedColumn{
		// version 2
		{"grants", "max_uses", "INTEGER NOT NULL DEFAULT 0 CHECK (max_uses >= 0)"},
		{"grants", "uses", "INTEGER NOT NULL DEFAULT 0 CHECK (uses >= 0)"},
		{"grants", "revoke_reason", "TEXT"},
		// version 3
		{"pending", "cancel_reason", "TEXT"},
		// version 4
		{"pending", "territory_under", "TEXT"},
	}
}

// Store is the state database: pending approvals, tickets, grants and rate
// buckets. It holds one connection; it is safe for concurrent use, and
// several Stores (in one process or many) may share a file.
type Store struct {
	db   *sql.DB
	rand io.Reader
	path string
}

// Option configures a Store.
type Option func(*Store)

// WithRandom sets the source of approval tokens (crypto/rand by default).
func WithRandom(r io.Reader) Option {
	return func(s *Store) { s.rand = r }
}

// Open opens (creating if needed) the state database at path. The parent
// directory is created 0700 and the file 0600. Any failure, including a
// file that is not a database or a schema newer than this package, is
// returned wrapped; callers treat it as a configuration error.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	if path == "" {
		return nil, errors.New("open state database: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open state database: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open state database: %w", err)
	}
	// Create the file ourselves so its mode is 0600; SQLite gives the WAL
	// and shared-memory files the same mode as the database file.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open state database: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("open state database: %w", err)
	}

	dsn := (&url.URL{Scheme: "file", Path: abs}).String() + "?" + dsnSettings
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open state database %s: %w", abs, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)

	s := &Store{db: db, rand: rand.Reader, path: abs}
	for _, o := range opts {
		o(s)
	}
	if err := s.setup(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open state database %s: %w", abs, err)
	}
	return s, nil
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// setup connects and migrates, retrying while the file is busy.
func (s *Store) setup(ctx context.Context) error {
	deadline := time.Now().Add(setupBusyWait)
	pause := 2 * time.Millisecond
	for {
		err := s.migrate(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

func isBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_BUSY
}

func (s *Store) migrate(ctx context.Context) error {
	// The usual case, an up-to-date database, needs no write transaction.
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v == SchemaVersion {
		return nil
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var v int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			return err
		}
		if v > SchemaVersion {
			return fmt.Errorf("schema version %d is newer than this mnemos understands (%d)", v, SchemaVersion)
		}
		if _, err := tx.ExecContext(ctx, schema); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
		if err := upgrade(ctx, tx); err != nil {
			return fmt.Errorf("migrate schema from version %d: %w", v, err)
		}
		if v < SchemaVersion {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
				return err
			}
		}
		return nil
	})
}

// upgrade brings tables an older version created up to this schema. Every
// step checks before it changes anything, so it is safe on a database at
// any earlier version (or at none); it runs inside migrate's immediate
// transaction, so concurrent openers migrate once and rows are kept.
func upgrade(ctx context.Context, tx *sql.Tx) error {
	for _, c := range addedColumns() {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`,
			c.table, c.name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, `ALTER TABLE `+c.table+` ADD COLUMN `+c.name+` `+c.def); err != nil {
			return fmt.Errorf("add %s.%s: %w", c.table, c.name, err)
		}
	}
	// Grants revoked before reasons were recorded were revoked by a person.
	_, err := tx.ExecContext(ctx, `UPDATE grants SET revoke_reason = ?
		WHERE revoked_at IS NOT NULL AND revoke_reason IS NULL`, RevokeReasonRevoked)
	return err
}

// inTx runs fn in an immediate transaction (the DSN's _txlock), committing
// when fn returns nil.
func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		// Accept other RFC 3339 forms (e.g. rows written by hand).
		t, err = time.Parse(time.RFC3339Nano, s)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("bad timestamp %q in state database", s)
	}
	return t.UTC(), nil
}

func parseNullTime(ns sql.NullString) (*time.Time, error) {
	if !ns.Valid || ns.String == "" {
		return nil, nil
	}
	t, err := parseTime(ns.String)
	if err != nil {
		return nil, err
	}
	return &t, nil
}
