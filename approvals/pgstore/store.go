package pgstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mnemos-dev/mnemos/approvals"
)

// DefaultConnectTimeout bounds a connection attempt when the DSN sets
// none: an unreachable server fails the decision that needs it, quickly.
const DefaultConnectTimeout = 5 * time.Second

// maxConns bounds one process's connections: a short-lived command uses
// one; mnemos serve a few.
const maxConns = 4

// Options configure a Store.
type Options struct {
	// Host is this machine's id, recorded on every row it writes.
	// Required: see HostID.
	Host string
	// Rand is the source of approval tokens (crypto/rand when nil).
	Rand io.Reader
	// Wall is this host's clock (time.Now when nil). A caller's time is
	// read as an offset from it and applied to the server's clock.
	Wall func() time.Time
}

// Store is the state kept in a shared PostgreSQL database. It is safe for
// concurrent use; it holds a small pool of connections.
type Store struct {
	pool *pgxpool.Pool
	cfg  *pgx.ConnConfig
	host string
	rand io.Reader
	wall func() time.Time
	// listen is the LISTEN connection of WaitChange, opened on first use.
	listen listener
}

var _ approvals.Backend = (*Store)(nil)

// HostID returns the host id a process uses: MNEMOS_HOST_ID when set,
// else the hostname. An id is printable, has no spaces and is at most
// 128 bytes.
func HostID(getenv func(string) string) (string, error) {
	id := getenv("MNEMOS_HOST_ID")
	if id == "" {
		h, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("host id: %w; set MNEMOS_HOST_ID", err)
		}
		id = h
	}
	if err := checkHost(id); err != nil {
		return "", err
	}
	return id, nil
}

func checkHost(id string) error {
	if id == "" || len(id) > 128 {
		return fmt.Errorf("host id %q: want 1 to 128 printable characters without spaces", id)
	}
	for _, r := range id {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return fmt.Errorf("host id %q: want printable characters without spaces", id)
		}
	}
	return nil
}

func parseDSN(dsn string) (*pgx.ConnConfig, error) {
	dsn = strings.TrimSpace(dsn)
	if dsn == "" {
		return nil, errors.New("empty PostgreSQL connection string")
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx's message may quote the string, password and all.
		return nil, errors.New("the PostgreSQL connection string does not parse (see https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING)")
	}
	// One round trip a statement: a short-lived mnemos runs each query
	// once or twice, so preparing and caching statements costs more than
	// it saves.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "mnemos"
	}
	return cfg, nil
}

// Open connects to the database at dsn and checks that its schema is the
// one this package knows (a *SchemaError otherwise). It never changes
// the schema: see Migrate.
func Open(ctx context.Context, dsn string, o Options) (*Store, error) {
	if err := checkHost(o.Host); err != nil {
		return nil, err
	}
	cfg, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	pcfg, err := pgxpool.ParseConfig("")
	if err != nil {
		return nil, err
	}
	pcfg.ConnConfig = cfg
	pcfg.MaxConns = maxConns
	pcfg.MinConns = 0
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", describe(cfg), oneLine(err))
	}
	s := &Store{pool: pool, cfg: cfg, host: o.Host, rand: o.Rand, wall: o.Wall}
	if s.rand == nil {
		s.rand = rand.Reader
	}
	if s.wall == nil {
		s.wall = time.Now
	}
	if err := checkVersion(ctx, pool); err != nil {
		pool.Close()
		var se *SchemaError
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, fmt.Errorf("connect to %s: %w", describe(cfg), oneLine(err))
	}
	return s, nil
}

// Host is the host id this Store records.
func (s *Store) Host() string { return s.host }

// Path names the server and database, without a password.
func (s *Store) Path() string { return describe(s.cfg) }

// Close closes the connections.
func (s *Store) Close() error {
	s.closeListener()
	s.pool.Close()
	return nil
}

// off is t as an offset from this host's clock, in microseconds: the
// server adds it to its own clock (at).
func (s *Store) off(t time.Time) float64 {
	return float64(t.Sub(s.wall()).Microseconds())
}

// at is the SQL for the server's time shifted by the offset in parameter
// n (see off).
func at(n int) string {
	return fmt.Sprintf("(statement_timestamp() + $%d::float8 * interval '1 microsecond')", n)
}

func utc(t time.Time) time.Time { return t.UTC() }

func utcp(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func nullStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func normToken(t string) string { return strings.ToLower(strings.TrimSpace(t)) }

// lineErr is an error shown on one line: pgx lists each address it tried
// on a line of its own (twice each with sslmode=prefer).
type lineErr struct{ err error }

func (e lineErr) Error() string {
	var parts []string
	for _, l := range strings.Split(e.err.Error(), "\n") {
		l = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l), ":"))
		if l != "" && !slices.Contains(parts, l) {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, ": ")
}

func (e lineErr) Unwrap() error { return e.err }

func oneLine(err error) error {
	if err == nil || !strings.Contains(err.Error(), "\n") {
		return err
	}
	return lineErr{err}
}
