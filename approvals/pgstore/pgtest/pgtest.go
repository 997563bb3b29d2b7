// Package pgtest starts a throwaway PostgreSQL server for tests: a new
// cluster (initdb) in a temporary directory under /var/tmp, listening on
// a unix socket in that directory only, stopped and removed at the end.
// As root it runs the server as nobody, since PostgreSQL refuses to run
// as root.
//
// Tests that need a server call [Shared] (one server per test binary) and
// [Server.NewDatabase] (one database per test). Without PostgreSQL's
// programs they skip and say why, unless MNEMOS_TEST_POSTGRES=require
// (what CI sets), which turns that into a failure.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// RequireEnv, set to "require", makes a missing PostgreSQL a failure.
const RequireEnv = "MNEMOS_TEST_POSTGRES"

// Superuser is the cluster's bootstrap superuser.
const Superuser = "postgres"

// Server is a running throwaway cluster.
type Server struct {
	// Dir holds the cluster (Dir/data) and the socket.
	Dir  string
	bin  string
	cred *syscall.Credential
	port int

	mu  sync.Mutex
	cmd *exec.Cmd
	log *os.File
}

// FindBin returns the directory of PostgreSQL's initdb and postgres: the
// PATH's, else Debian's /usr/lib/postgresql/N/bin (newest first).
func FindBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		dir := filepath.Dir(p)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			dir = filepath.Dir(real)
		}
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no PostgreSQL programs (initdb, postgres) on PATH or under /usr/lib/postgresql/*/bin; install Debian's postgresql package")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start initialises a cluster in a new directory under /var/tmp and
// starts it.
func Start() (*Server, error) {
	bin, err := FindBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("/var/tmp", "mnemos-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, bin: bin, port: 5432}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root, PostgreSQL needs an unprivileged user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: false}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	initdb := s.command(filepath.Join(bin, "initdb"), "-D", s.DataDir(), "-U", Superuser, "--auth=trust",
		"--no-sync", "-E", "UTF8", "--locale=C")
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	if err := s.Restart(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// DataDir is the cluster's directory.
func (s *Server) DataDir() string { return filepath.Join(s.Dir, "data") }

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = s.Dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true, Pdeathsig: syscall.SIGQUIT}
	return cmd
}

// Restart starts the server (again, after Stop or Kill) and waits until
// it accepts connections.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("server already running")
	}
	logf, err := os.OpenFile(filepath.Join(s.Dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := s.command(filepath.Join(s.bin, "postgres"), "-D", s.DataDir(), "-k", s.Dir, "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200", "-c", "unix_socket_permissions=0777")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start postgres: %w", err)
	}
	s.cmd, s.log = cmd, logf
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := pgx.Connect(ctx, s.DSN("postgres"))
		cancel()
		if err == nil {
			c.Close(context.Background())
			go func() { <-exited }()
			return nil
		}
		select {
		case werr := <-exited:
			s.cmd = nil
			logf.Close()
			log, _ := os.ReadFile(filepath.Join(s.Dir, "server.log"))
			return fmt.Errorf("postgres exited: %v: %s", werr, tail(log))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not accept connections: %v", err)
		}
	}
}

func tail(b []byte) []byte {
	if len(b) > 2000 {
		return b[len(b)-2000:]
	}
	return b
}

// Stop shuts the server down (fast shutdown) and waits for it. The
// cluster stays; Restart starts it again.
func (s *Server) Stop() { s.signal(syscall.SIGINT) }

// Kill stops the server as a crash would (immediate shutdown).
func (s *Server) Kill() { s.signal(syscall.SIGQUIT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(sig)
	pidFile := filepath.Join(s.DataDir(), "postmaster.pid")
	for range 600 {
		if _, err := os.Stat(pidFile); errors.Is(err, os.ErrNotExist) {
			break
		}
		if err := s.cmd.Process.Signal(syscall.Signal(0)); err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.cmd = nil
	if s.log != nil {
		s.log.Close()
		s.log = nil
	}
}

// Close stops the server and removes its directory.
func (s *Server) Close() {
	s.Stop()
	os.RemoveAll(s.Dir)
}

// DSN is a connection string for database db as user Superuser.
func (s *Server) DSN(db string) string { return s.DSNAs(Superuser, db) }

// DSNAs is a connection string for database db as role user.
func (s *Server) DSNAs(user, db string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable connect_timeout=5", s.Dir, s.port, user, db)
}

// Exec runs SQL statements as the superuser in database db.
func (s *Server) Exec(db string, stmts ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.DSN(db))
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	for _, q := range stmts {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// NewDatabase creates an empty database, dropped when the test ends, and
// returns its name.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := "t_" + RandomName()
	if err := s.Exec("postgres", "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		_ = s.Exec("postgres", "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return name
}

// RandomName is 12 random lower-case hex digits, for databases and roles.
func RandomName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
)

// Shared returns the test binary's server, starting it on first use. When
// PostgreSQL cannot be found or started the test is skipped, saying why
// (failed under MNEMOS_TEST_POSTGRES=require). Call StopShared after the
// tests (TestMain).
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = Start() })
	if sharedErr != nil {
		Unavailable(t, sharedErr)
	}
	return shared
}

// Unavailable skips t for a PostgreSQL that cannot be used, or fails it
// when MNEMOS_TEST_POSTGRES=require.
func Unavailable(t testing.TB, err error) {
	t.Helper()
	if strings.EqualFold(os.Getenv(RequireEnv), "require") {
		t.Fatalf("PostgreSQL is required (%s=require) but unavailable: %v", RequireEnv, err)
	}
	t.Skipf("SKIP: no PostgreSQL server for this test: %v (set %s=require to make this a failure)", err, RequireEnv)
}

// StopShared stops and removes the shared server, if one was started.
func StopShared() {
	if shared != nil {
		shared.Close()
	}
}
