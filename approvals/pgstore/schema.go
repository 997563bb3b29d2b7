package pgstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// migrations are the schema's versions: migrations[i] takes a database
// from version i to i+1. They are never edited once released; a change is
// a new entry.
var migrations = []string{
	// 1: the registry, tickets, grants, session rules, rate buckets and
	// the central audit table, each row naming its host.
	`
CREATE TABLE pending (
	token               text PRIMARY KEY,
	host                text NOT NULL,
	channel             text NOT NULL,
	sender_id           text NOT NULL,
	capability_class    text NOT NULL,
	action_verb         text NOT NULL,
	target_summary      text NOT NULL,
	created_at          timestamptz NOT NULL,
	expires_at          timestamptz NOT NULL,
	status              text NOT NULL DEFAULT 'pending'
	                    CHECK (status IN ('pending', 'approved', 'rejected', 'expired')),
	decision_at         timestamptz,
	decision_by_channel text,
	decision_by_sender  text,
	decision_host       text,
	request_key         text NOT NULL,
	request_extra       text,
	territory           text CHECK (territory IN ('none', 'session', 'permanent')),
	recurrence          integer NOT NULL DEFAULT 0,
	cancel_reason       text,
	territory_under     text,
	seq                 bigserial NOT NULL
);
CREATE INDEX pending_open ON pending (host, status, expires_at);
CREATE INDEX pending_status ON pending (status, expires_at);
CREATE INDEX pending_request_key ON pending (request_key, status);
CREATE INDEX pending_class ON pending (channel, sender_id, capability_class);
CREATE INDEX pending_created ON pending (created_at DESC, seq DESC);

CREATE TABLE tickets (
	id             bigserial PRIMARY KEY,
	host           text NOT NULL,
	request_key    text NOT NULL,
	approval_token text NOT NULL REFERENCES pending (token),
	created_at     timestamptz NOT NULL,
	expires_at     timestamptz NOT NULL,
	spent_at       timestamptz,
	spent_host     text
);
CREATE INDEX tickets_unspent ON tickets (request_key, host, id) WHERE spent_at IS NULL;

CREATE TABLE grants (
	id            bigserial PRIMARY KEY,
	host          text NOT NULL,
	channel       text NOT NULL,
	sender_id     text NOT NULL,
	capability    text NOT NULL,
	target        text NOT NULL,
	granted_at    timestamptz NOT NULL,
	expires_at    timestamptz,
	granted_by    text,
	revoked_at    timestamptz,
	revoked_host  text,
	session       text NOT NULL DEFAULT '',
	approval      text,
	last_used     timestamptz,
	last_host     text,
	max_uses      integer NOT NULL DEFAULT 0 CHECK (max_uses >= 0),
	uses          integer NOT NULL DEFAULT 0 CHECK (uses >= 0),
	revoke_reason text
);
CREATE INDEX grants_lookup ON grants (channel, sender_id, capability, id) WHERE revoked_at IS NULL;
CREATE INDEX grants_granted ON grants (granted_at DESC, id DESC);

CREATE TABLE session_rules (
	id          bigserial PRIMARY KEY,
	host        text NOT NULL,
	channel     text NOT NULL,
	sender_id   text NOT NULL,
	argv_prefix text NOT NULL,
	exact       boolean NOT NULL DEFAULT false,
	pin         text NOT NULL,
	session     text NOT NULL DEFAULT '',
	granted_at  timestamptz NOT NULL,
	expires_at  timestamptz NOT NULL,
	granted_by  text,
	approval    text,
	revoked_at  timestamptz
);
CREATE INDEX session_rules_lookup ON session_rules (host, channel, sender_id) WHERE revoked_at IS NULL;

CREATE TABLE rate_buckets (
	key        text PRIMARY KEY,
	tokens     double precision NOT NULL,
	updated_at timestamptz NOT NULL,
	host       text NOT NULL
);

CREATE TABLE audit_events (
	host        text NOT NULL,
	seq         bigint NOT NULL CHECK (seq >= 1),
	time        timestamptz NOT NULL,
	kind        text NOT NULL,
	prev        text NOT NULL,
	hash        text NOT NULL,
	line        text NOT NULL,
	received_at timestamptz NOT NULL DEFAULT statement_timestamp(),
	PRIMARY KEY (host, seq)
);
`,
}

// SchemaVersion is the schema this package reads and writes.
func SchemaVersion() int { return len(migrations) }

// schemaLock is the advisory lock Migrate holds: concurrent migrations
// run one after the other.
const schemaLock = 0x6d6e656d6f73 // "mnemos"

// ErrSchemaNewer: the database's schema is newer than this mnemos knows.
var ErrSchemaNewer = errors.New("the database's schema is newer than this mnemos understands")

// ErrSchemaOlder: the database lacks migrations this mnemos needs.
var ErrSchemaOlder = errors.New("the database's schema is older than this mnemos needs")

// SchemaError is a database whose schema version is not this package's.
type SchemaError struct {
	Have, Want int
	Err        error // ErrSchemaNewer or ErrSchemaOlder
}

func (e *SchemaError) Error() string {
	if e.Have == 0 {
		return fmt.Sprintf("the database has no mnemos schema (this mnemos needs version %d)", e.Want)
	}
	return fmt.Sprintf("%v: version %d, this mnemos knows %d", e.Err, e.Have, e.Want)
}

func (e *SchemaError) Unwrap() error { return e.Err }

// Hint says what a person can do about it.
func (e *SchemaError) Hint() string {
	if errors.Is(e.Err, ErrSchemaNewer) {
		return "another host migrated the database for a newer mnemos; install that version here"
	}
	return "run `mnemos state migrate` (as a role that owns the tables)"
}

// roleName is what GrantStatements accepts: a plain SQL identifier.
var roleName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// GrantStatements returns what lets role use the state as a host: read
// and write the registry's tables, but only INSERT and SELECT the audit
// table, so that no host can change or remove what was shipped.
func GrantStatements(role string) ([]string, error) {
	if !roleName.MatchString(role) {
		return nil, fmt.Errorf("role %q: want a lower-case SQL identifier", role)
	}
	return []string{
		"GRANT SELECT ON mnemos_schema TO " + role,
		"GRANT SELECT, INSERT, UPDATE ON pending, tickets, grants, session_rules, rate_buckets TO " + role,
		"GRANT USAGE ON SEQUENCE pending_seq_seq, tickets_id_seq, grants_id_seq, session_rules_id_seq TO " + role,
		"GRANT SELECT, INSERT ON audit_events TO " + role,
	}, nil
}

// MigrateResult says what Migrate did.
type MigrateResult struct {
	From, To int
	Granted  string
}

// Migrate brings the database at dsn to SchemaVersion, in one transaction
// under an advisory lock, and, when role is set, grants it what a host
// needs (GrantStatements). A database newer than this package is refused
// and left alone.
func Migrate(ctx context.Context, dsn, role string) (MigrateResult, error) {
	var grants []string
	if role != "" {
		var err error
		if grants, err = GrantStatements(role); err != nil {
			return MigrateResult{}, err
		}
	}
	cfg, err := parseDSN(dsn)
	if err != nil {
		return MigrateResult{}, err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return MigrateResult{}, fmt.Errorf("connect to %s: %w", describe(cfg), oneLine(err))
	}
	defer conn.Close(context.Background())
	var res MigrateResult
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS mnemos_schema (
			version     integer NOT NULL,
			migrated_at timestamptz NOT NULL DEFAULT statement_timestamp())`); err != nil {
			return err
		}
		v, err := version(ctx, tx)
		if err != nil {
			return err
		}
		res.From, res.To = v, v
		if v > SchemaVersion() {
			return &SchemaError{Have: v, Want: SchemaVersion(), Err: ErrSchemaNewer}
		}
		for i := v; i < SchemaVersion(); i++ {
			if _, err := tx.Exec(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migrate to version %d: %w", i+1, err)
			}
			res.To = i + 1
		}
		if res.To != res.From {
			if _, err := tx.Exec(ctx, `DELETE FROM mnemos_schema`); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO mnemos_schema (version) VALUES ($1)`, res.To); err != nil {
				return err
			}
		}
		for _, g := range grants {
			if _, err := tx.Exec(ctx, g); err != nil {
				return fmt.Errorf("grant to %s: %w", role, err)
			}
		}
		res.Granted = role
		return nil
	})
	if err != nil {
		return MigrateResult{}, err
	}
	return res, nil
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// version reads the schema version: 0 for a database without mnemos's.
func version(ctx context.Context, q querier) (int, error) {
	var v int
	err := q.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM mnemos_schema`).Scan(&v)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		return 0, nil
	}
	return v, err
}

// checkVersion refuses a database whose schema is not this package's.
func checkVersion(ctx context.Context, q querier) error {
	v, err := version(ctx, q)
	if err != nil {
		return err
	}
	switch {
	case v > SchemaVersion():
		return &SchemaError{Have: v, Want: SchemaVersion(), Err: ErrSchemaNewer}
	case v < SchemaVersion():
		return &SchemaError{Have: v, Want: SchemaVersion(), Err: ErrSchemaOlder}
	}
	return nil
}

// describe names a server and database for a person, without a password.
func describe(cfg *pgx.ConnConfig) string {
	host := cfg.Host
	if strings.HasPrefix(host, "/") {
		host = "unix:" + host
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, host, cfg.Port, cfg.Database)
}
