package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/approvals/pgstore"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
)

// maxDSNFile bounds a connection string file.
const maxDSNFile = 64 << 10

// openState opens the state the policy chooses (its state: section, from
// the system or user layer only): the SQLite file in the state directory,
// or a shared PostgreSQL database. It is called only when a decision or a
// command needs the state, so a decision the rules and the table settle
// never connects. Any failure is a *StateError: no allow.
func (g *Gate) openState(ctx context.Context) (approvals.Backend, error) {
	if pg := g.cfg.Policy.State.Postgres; pg != nil {
		where := g.StateWhere()
		dsn, err := ReadDSN(*pg, g.cfg.UserHome, g.getenvOrEmpty)
		if err != nil {
			return nil, &StateError{Path: where, Err: err}
		}
		host, err := pgstore.HostID(g.getenvOrEmpty)
		if err != nil {
			return nil, &StateError{Path: where, Err: err}
		}
		s, err := pgstore.Open(ctx, dsn, pgstore.Options{Host: host, Rand: g.cfg.Rand})
		if err != nil {
			return nil, &StateError{Path: where, Err: err}
		}
		return s, nil
	}
	var opts []approvals.Option
	if g.cfg.Rand != nil {
		opts = append(opts, approvals.WithRandom(g.cfg.Rand))
	}
	s, err := approvals.Open(ctx, g.cfg.Paths.DBFile, opts...)
	if err != nil {
		return nil, &StateError{Path: g.cfg.Paths.DBFile, Err: err}
	}
	return s, nil
}

// StateWhere names where the state is kept, for messages: the database
// file, or the source of the PostgreSQL connection string.
func (g *Gate) StateWhere() string {
	pg := g.cfg.Policy.State.Postgres
	switch {
	case pg == nil:
		return g.cfg.Paths.DBFile
	case pg.DSNFile != "":
		return "postgres (dsn_file " + pg.DSNPath(g.cfg.UserHome) + ")"
	default:
		return "postgres (dsn_env " + pg.DSNEnv + ")"
	}
}

// SharedState reports whether the state is a database several hosts share.
func (g *Gate) SharedState() bool { return g.cfg.Policy.State.Postgres != nil }

func (g *Gate) getenvOrEmpty(k string) string {
	if g.cfg.Getenv == nil {
		return ""
	}
	return g.cfg.Getenv(k)
}

// ReadDSN reads a connection string from where pg says, with ~ as home.
// A file must be a regular file that neither group nor others can write
// and others cannot read: it holds a password, and whoever can change it
// chooses what counts as approved.
func ReadDSN(pg policy.PostgresState, home string, getenv func(string) string) (string, error) {
	if pg.DSNEnv != "" {
		v := strings.TrimSpace(getenv(pg.DSNEnv))
		if v == "" {
			return "", fmt.Errorf("state.postgres.dsn_env: $%s is not set", pg.DSNEnv)
		}
		return v, nil
	}
	path := pg.DSNPath(home)
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("state.postgres.dsn_file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("state.postgres.dsn_file: %w", err)
	}
	switch {
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("state.postgres.dsn_file %s is not a regular file", path)
	case fi.Mode().Perm()&0o026 != 0:
		return "", fmt.Errorf("state.postgres.dsn_file %s has mode %v: it holds a password; run chmod 600 on it", path, fi.Mode().Perm())
	case fi.Size() > maxDSNFile:
		return "", fmt.Errorf("state.postgres.dsn_file %s is larger than %d bytes", path, maxDSNFile)
	}
	b := make([]byte, fi.Size()+1)
	n, err := f.Read(b)
	if err != nil && n == 0 {
		return "", fmt.Errorf("state.postgres.dsn_file: %w", err)
	}
	dsn := strings.TrimSpace(string(b[:n]))
	if dsn == "" {
		return "", errors.New("state.postgres.dsn_file " + path + " is empty")
	}
	return dsn, nil
}

// childEnviron is the environment a gated command runs with: mnemos's
// own, less the variable that holds the state's connection string, with
// the secure modes of the programs that would run what is typed at them
// (classify.TerminalEnv), which the decision counts on
// (Place.TerminalEnv).
func (g *Gate) childEnviron(env []string) []string {
	env = classify.TerminalEnv(env)
	pg := g.cfg.Policy.State.Postgres
	if pg == nil || pg.DSNEnv == "" {
		return env
	}
	return slices.DeleteFunc(env, func(kv string) bool {
		return strings.HasPrefix(kv, pg.DSNEnv+"=")
	})
}

// pause waits before the next look at a parked request: until the state
// says the request changed (a shared database notifies an answer given
// on any host), or tick fires, or ctx ends (false).
func pause(ctx context.Context, st approvals.Backend, token string, tick <-chan time.Time, every time.Duration) bool {
	if w, ok := st.(approvals.Waiter); ok {
		if err := w.WaitChange(ctx, token, every); err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
	}
	select {
	case <-ctx.Done():
		return false
	case <-tick:
		return true
	}
}

// SharedStore opens the state and returns it when it is the shared
// PostgreSQL database (the central audit table lives there); ok is false
// for the SQLite file.
func (g *Gate) SharedStore(ctx context.Context) (*pgstore.Store, bool, error) {
	if !g.SharedState() {
		return nil, false, nil
	}
	st, err := g.Store(ctx)
	if err != nil {
		return nil, false, err
	}
	s, ok := st.(*pgstore.Store)
	return s, ok, nil
}

// ShipAudit sends what the local audit log holds beyond the central
// table's copy of this host's chain (pgstore.Store.Ship). It opens the
// state: call it where connecting is expected (mnemos audit ship, mnemos
// serve), or after the state was opened anyway (ShipIfOpen).
func (g *Gate) ShipAudit(ctx context.Context) (pgstore.ShipResult, error) {
	s, ok, err := g.SharedStore(ctx)
	if err != nil || !ok {
		return pgstore.ShipResult{}, err
	}
	if err := bindLogHost(g.cfg.Paths.AuditFile+".host", s.Host()); err != nil {
		return pgstore.ShipResult{}, &StateError{Path: g.StateWhere(), Err: err}
	}
	res, err := s.Ship(ctx, audit.Open(g.cfg.Paths.AuditFile, audit.Options{Key: g.cfg.Paths.AuditKey}))
	if err != nil {
		return res, &StateError{Path: g.StateWhere(), Err: err}
	}
	return res, nil
}

// ShipIfOpen ships the audit log when this process has the shared state
// open already, so that a command which needed the state also brings
// its events (and those spooled while the database was away) to the
// central table; one the rules and the table settled connects to nothing.
// A failure leaves the events in the local log for the next shipper.
func (g *Gate) ShipIfOpen(ctx context.Context) error {
	if g.store == nil || !g.SharedState() {
		return nil
	}
	_, err := g.ShipAudit(ctx)
	return err
}

// ErrLogHostChanged: the audit log was shipped as another host id.
var ErrLogHostChanged = errors.New("one audit log ships as one host")

// bindLogHost records, in file beside the audit log, the host id the log
// is shipped as, the first time; afterwards it refuses another id, so one
// log is never shipped as two hosts (MNEMOS_HOST_ID changed, or set for
// one command).
func bindLogHost(file, host string) error {
	b, err := os.ReadFile(file)
	switch {
	case errors.Is(err, os.ErrNotExist), err == nil && strings.TrimSpace(string(b)) == "":
		empty := err == nil
		// Absent, or left empty by a process killed before it wrote
		// (older versions created it first): written whole, then put
		// in place in one step, so that no process sees it empty.
		tmp, err := os.CreateTemp(filepath.Dir(file), filepath.Base(file)+".*")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		_, werr := tmp.WriteString(host + "\n")
		if cerr := tmp.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return werr
		}
		if empty {
			if err := os.Rename(tmp.Name(), file); err != nil {
				return err
			}
		} else if err := os.Link(tmp.Name(), file); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		if b, err = os.ReadFile(file); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if bound := strings.TrimSpace(string(b)); bound != host {
		return fmt.Errorf("%w: it is shipped as host %q (%s), and the host id is now %q", ErrLogHostChanged, bound, file, host)
	}
	return nil
}
