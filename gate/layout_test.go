package gate

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
)

// oldLayout writes what an older mnemos kept in the state directory: a
// keyed audit log with its key beside it, a state database with a pending
// request whose last write is still in the WAL, a hook ticket and serve's
// access token. It returns the request's token.
func oldLayout(t *testing.T, state string) string {
	t.Helper()
	ctx := context.Background()
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	log := audit.Open(filepath.Join(state, "audit.jsonl"), audit.Options{})
	for i := 0; i < 3; i++ {
		if err := log.Append(ctx, "policy.decision", slog.Int("i", i)); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()
	// The database is copied while it is open, so that the request is in
	// the WAL only, as a crash of its writer leaves it.
	live := t.TempDir()
	st, err := approvals.Open(ctx, filepath.Join(live, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.CreatePending(ctx, approvals.NewPending{Channel: "cli", Sender: "dev", CapabilityClass: "fs:write:/w/x",
		ActionVerb: "write", TargetSummary: "x", RequestKey: "k"}, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"state.db", "state.db-wal", "state.db-shm"} {
		copyFile(t, filepath.Join(live, n), filepath.Join(state, n))
	}
	if _, err := os.Stat(filepath.Join(state, "state.db-wal")); err != nil {
		t.Fatalf("the fixture has no WAL: %v", err)
	}
	st.Close()
	if err := os.MkdirAll(filepath.Join(state, "hook-tickets"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"hook-tickets/tok1": `{"key":"k"}`, "serve.token": "oldtoken\n"} {
		if err := os.WriteFile(filepath.Join(state, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p.Token
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// usable checks that p works as a layout: the audit log verifies with its
// key, keyed, and takes another line; the database holds the request;
// the hook ticket is there.
func usable(t *testing.T, p Paths, token string) {
	t.Helper()
	ctx := context.Background()
	rep, err := audit.VerifyWith(p.AuditFile, audit.VerifyOptions{Key: p.AuditKey})
	if err != nil || !rep.OK || rep.Keyed != rep.Lines || rep.Lines < 3 {
		t.Fatalf("audit log with key %s: %+v, %v", p.AuditKey, rep, err)
	}
	log := audit.Open(p.AuditFile, audit.Options{Key: p.AuditKey})
	if err := log.Append(ctx, "policy.decision"); err != nil {
		t.Fatalf("append with key %s: %v", p.AuditKey, err)
	}
	log.Close()
	st, err := approvals.Open(ctx, p.DBFile)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got, err := st.Get(ctx, token); err != nil || got.Token != token {
		t.Fatalf("the request in %s: %+v, %v", p.DBFile, got, err)
	}
	if _, err := os.Stat(filepath.Join(p.HookTicketDir(), "tok1")); err != nil {
		t.Fatalf("hook ticket: %v", err)
	}
}

func testPaths(t *testing.T) Paths {
	t.Helper()
	p, err := Locate(filepath.Join(t.TempDir(), "m"), func(string) string { return "" }, "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSecuritySettleMovesSecrets: an older layout's audit key, database
// (with what is still in its WAL) and hook tickets end up in the secrets
// directory (0700, files 0600), nothing is lost, the old names and serve's
// access token are gone, and a second Settle has nothing to do.
func TestSecuritySettleMovesSecrets(t *testing.T) {
	p := testPaths(t)
	token := oldLayout(t, p.StateDir)
	if err := os.Chmod(filepath.Join(p.StateDir, "audit.key"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, s, err := Settle(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.SecretsDir != p.SecretsDir || got.DBFile != p.DBFile || got.AuditKey != p.AuditKey {
		t.Fatalf("paths %+v", got)
	}
	usable(t, p, token)
	fi, err := os.Stat(p.SecretsDir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("secrets directory: %v %v", fi.Mode(), err)
	}
	for _, f := range []string{p.AuditKey, p.DBFile} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: %v %v", f, fi.Mode(), err)
		}
	}
	for _, n := range []string{"audit.key", "state.db", "state.db-wal", "state.db-shm", "hook-tickets", "serve.token"} {
		if _, err := os.Lstat(filepath.Join(p.StateDir, n)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still in the state directory: %v", n, err)
		}
	}
	if len(s.Moved) == 0 || len(s.Removed) == 0 || s.Postponed != "" || len(s.Stale) != 0 {
		t.Errorf("settled: %+v", s)
	}
	if _, s, err := Settle(p); err != nil || len(s.Moved)+len(s.Removed)+len(s.Stale) != 0 {
		t.Errorf("second settle: %+v %v", s, err)
	}
}

// TestSecuritySettleCrashLeavesOneLayout: a move stopped at any step (as a
// crash would stop it) leaves either the older layout complete and in use
// or the secrets directory complete, never a mix; the next Settle
// finishes it and nothing is lost.
func TestSecuritySettleCrashLeavesOneLayout(t *testing.T) {
	steps := []string{"begin", "link audit.key", "link state.db", "link state.db-wal", "link state.db-shm", "link hook-tickets", "commit", "committed"}
	for _, at := range steps {
		t.Run(strings.ReplaceAll(at, " ", "_"), func(t *testing.T) {
			p := testPaths(t)
			token := oldLayout(t, p.StateDir)
			crash := errors.New("crash")
			seen := false
			_, _, err := settle(p, func(step string) error {
				if step == at {
					seen = true
					return crash
				}
				return nil
			})
			if !seen || !errors.Is(err, crash) {
				t.Fatalf("the move never reached %q: %v", at, err)
			}
			if _, err := os.Stat(p.SecretsDir); err == nil {
				usable(t, p, token)
			} else {
				usable(t, p.Legacy(), token)
			}
			if _, _, err := Settle(p); err != nil {
				t.Fatal(err)
			}
			usable(t, p, token)
			if left, _ := filepath.Glob(filepath.Join(p.StateDir, newSecretsPrefix+"*")); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// TestSettleKeepsWhatAnOlderMnemosWroteLater: a file an older mnemos wrote
// under an old name after the move is another file: it is kept and named,
// never removed.
func TestSettleKeepsWhatAnOlderMnemosWroteLater(t *testing.T) {
	p := testPaths(t)
	oldLayout(t, p.StateDir)
	if _, _, err := Settle(p); err != nil {
		t.Fatal(err)
	}
	late := filepath.Join(p.StateDir, "state.db")
	if err := os.WriteFile(late, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, s, err := Settle(p)
	if err != nil || len(s.Stale) != 1 || s.Stale[0] != late {
		t.Fatalf("settled %+v, %v", s, err)
	}
	if _, err := os.Stat(late); err != nil {
		t.Fatal(err)
	}
}

// TestSettleRefusesASecretsPathThatIsNoDirectory: a link or a file where
// the secrets directory belongs is an error, not followed.
func TestSettleRefusesASecretsPathThatIsNoDirectory(t *testing.T) {
	p := testPaths(t)
	oldLayout(t, p.StateDir)
	if err := os.Symlink(t.TempDir(), p.SecretsDir); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Settle(p); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Fatalf("err = %v", err)
	}
}
