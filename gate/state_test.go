package gate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// The variable that holds the shared state's connection string is not
// passed on to the commands mnemos runs: with it, a command could
// approve its own requests in the database.
func TestSecurityStateDSNNotPassedOn(t *testing.T) {
	f := newFixture(t, "state:\n  postgres:\n    dsn_env: TEAM_DSN\n")
	env := []string{"PATH=/bin", "TEAM_DSN=host=db password=x", "TEAM_DSN_OTHER=kept", "HOME=/h"}
	got := f.g.childEnviron(env)
	if slices.ContainsFunc(got, func(kv string) bool { return strings.HasPrefix(kv, "TEAM_DSN=") }) {
		t.Errorf("the connection string is passed on: %v", got)
	}
	for _, kv := range []string{"PATH=/bin", "TEAM_DSN_OTHER=kept", "HOME=/h", "LESSSECURE=1", "PAGER=cat"} {
		if !slices.Contains(got, kv) {
			t.Errorf("%s lost: %v", kv, got)
		}
	}
	if len(env) != 4 {
		t.Error("childEnviron changed its argument")
	}
	plain := newFixture(t, "")
	if got := plain.g.childEnviron(env); !slices.Contains(got, "TEAM_DSN=host=db password=x") || !slices.Contains(got, "LESSSECURE=1") {
		t.Errorf("without a shared state the environment changed: %v", got)
	}
}

// A connection string file others can read or write is refused: it holds
// a password, and whoever can change it chooses what counts as approved.
func TestSecurityDSNFileMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pg.dsn")
	if err := os.WriteFile(path, []byte("host=db\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pg := policy.PostgresState{DSNFile: path}
	if dsn, err := ReadDSN(pg, dir, nil); err != nil || dsn != "host=db" {
		t.Fatalf("0600: %q, %v", dsn, err)
	}
	for _, mode := range []os.FileMode{0o644, 0o604, 0o620, 0o602} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadDSN(pg, dir, nil); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("mode %v: %v", mode, err)
		}
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDSN(pg, dir, nil); err != nil {
		t.Errorf("0640 (a group the administrator chose may read it): %v", err)
	}
	if _, err := ReadDSN(policy.PostgresState{DSNFile: "~/pg.dsn"}, dir, nil); err != nil {
		t.Errorf("~ not expanded: %v", err)
	}
	if _, err := ReadDSN(policy.PostgresState{DSNFile: dir}, dir, nil); err == nil {
		t.Error("a directory was read as a connection string")
	}
	if _, err := ReadDSN(policy.PostgresState{DSNEnv: "X"}, dir, func(string) string { return " " }); err == nil {
		t.Error("an empty variable was accepted")
	}
}

// A decision the rules and the table settle never opens the state, so an
// unreachable shared database changes nothing for it; one that needs the
// state fails closed.
func TestSecuritySharedStateFailsClosed(t *testing.T) {
	f := newFixture(t, "")
	pol := *policy.Default()
	pol.State = policy.State{Postgres: &policy.PostgresState{DSNEnv: "TEAM_DSN"}}
	f.g.cfg.Policy = &pol
	f.g.cfg.Getenv = func(k string) string {
		if k == "TEAM_DSN" {
			return "host=127.0.0.1 port=1 user=u dbname=d connect_timeout=2"
		}
		return ""
	}
	d, err := f.g.Decide(context.Background(), f.req("ls"), Mode{})
	if err != nil || d.Outcome != policy.Allow {
		t.Fatalf("ls: %v %v", d.Outcome, err)
	}
	if f.g.store != nil {
		t.Fatal("a decision settled by rules and the table opened the state")
	}
	d, err = f.g.Decide(context.Background(), f.req("touch", filepath.Join(f.ws, "x")), Mode{SpendTicket: true})
	var se *StateError
	if !errors.As(err, &se) || d.Outcome == policy.Allow {
		t.Fatalf("touch with the state unreachable: %v, %v", d.Outcome, err)
	}
	if !strings.HasPrefix(se.Path, "postgres") && !strings.Contains(err.Error(), "postgres (dsn_env TEAM_DSN)") {
		t.Errorf("error does not name the shared state: %v", err)
	}
}

// One audit log ships as one host, whatever MNEMOS_HOST_ID says later.
func TestBindLogHost(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.jsonl.host")
	if err := bindLogHost(file, "laptop"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", fi, err)
	}
	if err := bindLogHost(file, "laptop"); err != nil {
		t.Errorf("same host: %v", err)
	}
	if err := bindLogHost(file, "ci"); !errors.Is(err, ErrLogHostChanged) {
		t.Errorf("another host: %v", err)
	}
	// A file left empty by a process killed between creating and
	// writing it binds no host: the next one claims it.
	empty := filepath.Join(t.TempDir(), "audit.jsonl.host")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := bindLogHost(empty, "host-0"); err != nil {
		t.Errorf("an empty binding: %v", err)
	}
	if b, _ := os.ReadFile(empty); string(b) != "host-0\n" {
		t.Errorf("the empty binding now reads %q", b)
	}
	if ents, _ := os.ReadDir(filepath.Dir(empty)); len(ents) != 1 {
		t.Errorf("left %d files beside it", len(ents))
	}
}
