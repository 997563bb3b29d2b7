package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/approvals/pgstore"
	"github.com/mnemos-dev/mnemos/approvals/pgstore/pgtest"
	"github.com/mnemos-dev/mnemos/audit"
)

// fleetHost is one simulated machine: its own home, workspace, audit log
// and host id, running the mnemos of this test binary as separate
// processes against the shared database.
type fleetHost struct {
	id, home, ws, exe string
	env               []string
}

var approvalID = regexp.MustCompile(`approval required: ([a-z2-7]{26})`)

// newFleet makes n hosts sharing the database at dsn (migrated here).
func newFleet(t *testing.T, srv *pgtest.Server, n int) ([]*fleetHost, string) {
	t.Helper()
	db := srv.NewDatabase(t)
	dsn := srv.DSN(db)
	if _, err := pgstore.Migrate(context.Background(), dsn, ""); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Outside /tmp, which the sandbox grants read-write.
	root, err := os.MkdirTemp("/var/tmp", "mnemos-fleet-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(bin, "mnemos")); err != nil {
		t.Fatal(err)
	}
	var hosts []*fleetHost
	for i := range n {
		h := &fleetHost{id: fmt.Sprintf("host-%d", i), home: filepath.Join(root, fmt.Sprintf("home-%d", i)),
			ws: filepath.Join(root, fmt.Sprintf("ws-%d", i)), exe: filepath.Join(bin, "mnemos")}
		for _, d := range []string{h.home, h.ws} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		mh := filepath.Join(h.home, ".mnemos")
		h.env = []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + h.home, "MNEMOS_HOME=" + mh, "MNEMOS_SENDER=dev",
			"MNEMOS_HOST_ID=" + h.id, "MNEMOS_TEST_SYSTEM_POLICY=" + filepath.Join(root, "no-system-policy.yaml"), "LC_ALL=C"}
		if code, out := h.run(t, "init"); code != 0 {
			t.Fatalf("%s: init exited %d: %s", h.id, code, out)
		}
		if err := os.WriteFile(filepath.Join(mh, "postgres.dsn"), []byte(dsn+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(filepath.Join(mh, "policy.yaml"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "\nstate:\n  postgres:\n    dsn_file: ~/.mnemos/postgres.dsn\n")
		f.Close()
		hosts = append(hosts, h)
	}
	return hosts, dsn
}

// mnemosHome is the host's MNEMOS_HOME.
func (h *fleetHost) mnemosHome() string { return filepath.Join(h.home, ".mnemos") }

func (h *fleetHost) command(args ...string) *exec.Cmd {
	cmd := exec.Command(h.exe, args...)
	cmd.Dir, cmd.Env = h.ws, h.env
	return cmd
}

// run runs mnemos ARGS on the host and returns its exit code and output.
func (h *fleetHost) run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	cmd := h.command(args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("%s: %v", h.id, err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

func (h *fleetHost) log() *audit.Log {
	return audit.Open(filepath.Join(h.mnemosHome(), "audit.jsonl"), audit.Options{Key: filepath.Join(h.mnemosHome(), "secrets", "audit.key")})
}

// localLines is how many lines the host's audit log holds, after
// checking its chain, MACs and anchor.
func (h *fleetHost) localLines(t *testing.T) int {
	t.Helper()
	rep, err := audit.VerifyWith(filepath.Join(h.mnemosHome(), "audit.jsonl"), audit.VerifyOptions{Key: filepath.Join(h.mnemosHome(), "secrets", "audit.key")})
	if err != nil || !rep.OK {
		t.Fatalf("%s: local log: %+v %v", h.id, rep, err)
	}
	return rep.Lines
}

// checkFleet ships every host's log and checks the central table: every
// chain intact, and exactly the local log's lines, none lost, none twice.
func checkFleet(t *testing.T, dsn string, hosts []*fleetHost) {
	t.Helper()
	for _, h := range hosts {
		if code, out := h.run(t, "audit", "ship"); code != 0 {
			t.Fatalf("%s: audit ship exited %d: %s", h.id, code, out)
		}
	}
	s, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Host: "checker"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	chains, err := s.VerifyFleet(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	central := map[string]int{}
	for _, c := range chains {
		if !c.OK {
			t.Errorf("host %s: central chain broken at line %d: %s", c.Host, c.FirstBad, c.Problem)
		}
		central[c.Host] = c.Lines
	}
	for _, h := range hosts {
		if local := h.localLines(t); central[h.id] != local {
			t.Errorf("%s: %d lines in the local log, %d in the central table", h.id, local, central[h.id])
		}
	}
}

func fleetServer(t *testing.T) *pgtest.Server {
	t.Helper()
	srv, err := pgtest.Start()
	if err != nil {
		pgtest.Unavailable(t, err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// TestFleetEightHosts: 8 hosts (separate processes with their own homes)
// run 100 commands each against one database: a request parked and
// approved, two racing runs of the approved command (one spends the
// ticket, the other asks), and a command the rules settle. Zero events
// are lost, every chain verifies, each ticket is spent once.
func TestFleetEightHosts(t *testing.T) {
	srv := fleetServer(t)
	rounds := 25 // 4 runs each: 100 per host
	if testing.Short() {
		rounds = 5
	}
	hosts, dsn := newFleet(t, srv, 8)
	ctx := context.Background()
	approver, err := pgstore.Open(ctx, dsn, pgstore.Options{Host: "approver"})
	if err != nil {
		t.Fatal(err)
	}
	defer approver.Close()
	var ran, asked atomic.Int32
	var wg sync.WaitGroup
	start := time.Now()
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range rounds {
				file := filepath.Join(h.ws, fmt.Sprintf("f%d", j))
				code, out := h.run(t, "run", "--", "touch", file)
				m := approvalID.FindStringSubmatch(out)
				if code != 75 || m == nil {
					t.Errorf("%s: first run exited %d: %s", h.id, code, out)
					return
				}
				if _, err := approver.Resolve(ctx, m[1], approvals.Approve, approvals.Identity{Channel: approvals.ViaTerminal, Sender: "dev"}, time.Now(),
					approvals.ResolveOptions{For: approvals.Identity{Channel: "cli", Sender: "dev"}}); err != nil {
					t.Errorf("%s: approve: %v", h.id, err)
					return
				}
				codes := make(chan int, 2)
				for range 2 {
					go func() { c, _ := h.run(t, "run", "--", "touch", file); codes <- c }()
				}
				a, b := <-codes, <-codes
				if !(a == 0 && b == 75 || a == 75 && b == 0) {
					t.Errorf("%s: two runs of one approved command exited %d and %d, want 0 and 75", h.id, a, b)
				}
				ran.Add(1)
				asked.Add(1)
				if c, out := h.run(t, "run", "--", "ls"); c != 0 {
					t.Errorf("%s: ls exited %d: %s", h.id, c, out)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if t.Failed() {
		return
	}
	t.Logf("%d hosts x %d runs in %v (%d approved runs)", len(hosts), 4*rounds, elapsed.Round(time.Millisecond), ran.Load())
	var spent, unspent int
	c := connect(t, dsn)
	if err := c.QueryRow(ctx, `SELECT COUNT(*) FILTER (WHERE spent_at IS NOT NULL), COUNT(*) FILTER (WHERE spent_at IS NULL) FROM tickets`).Scan(&spent, &unspent); err != nil {
		t.Fatal(err)
	}
	if spent != len(hosts)*rounds || unspent != 0 {
		t.Errorf("%d tickets spent and %d left, want %d and 0", spent, unspent, len(hosts)*rounds)
	}
	var wrongHost int
	if err := c.QueryRow(ctx, `SELECT COUNT(*) FROM tickets WHERE spent_host <> host`).Scan(&wrongHost); err != nil || wrongHost != 0 {
		t.Errorf("%d tickets spent on another host than the one that asked (%v)", wrongHost, err)
	}
	checkFleet(t, dsn, hosts)
}

// TestFleetKilledHost: a host killed with SIGKILL at random moments of
// its runs leaves a local log that verifies and ships whole.
func TestFleetKilledHost(t *testing.T) {
	srv := fleetServer(t)
	hosts, dsn := newFleet(t, srv, 2)
	h := hosts[0]
	killed := 0
	for i := range 20 {
		cmd := h.command("run", "--", "touch", filepath.Join(h.ws, fmt.Sprintf("k%d", i)))
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.IntN(60)) * time.Millisecond)
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err == nil {
			killed++
		}
		_ = cmd.Wait()
		if c, out := hosts[1].run(t, "run", "--", "ls"); c != 0 {
			t.Fatalf("the other host: ls exited %d: %s", c, out)
		}
	}
	// The killed host goes on: its log continues and ships.
	if c, out := h.run(t, "run", "--", "ls"); c != 0 {
		t.Fatalf("after the kills, ls exited %d: %s", c, out)
	}
	t.Logf("killed %d of 20 runs", killed)
	checkFleet(t, dsn, hosts)
}

// TestFleetDatabaseRestart: the database goes away in the middle of a
// host's work. What needs the state fails closed (exit 78, never an
// allow); what the rules settle runs; every event waits in the local log
// and is shipped, once, when the database is back.
func TestFleetDatabaseRestart(t *testing.T) {
	srv := fleetServer(t)
	hosts, dsn := newFleet(t, srv, 2)
	h := hosts[0]
	for i := range 5 {
		if c, _ := h.run(t, "run", "--", "touch", filepath.Join(h.ws, fmt.Sprintf("a%d", i))); c != 75 {
			t.Fatalf("before: exited %d", c)
		}
	}
	srv.Stop()
	for i := range 5 {
		file := filepath.Join(h.ws, fmt.Sprintf("b%d", i))
		if c, out := h.run(t, "run", "--", "touch", file); c != 78 || !strings.Contains(out, "mnemos: error: state postgres") {
			t.Errorf("database down: touch exited %d: %s", c, out)
		}
		if _, err := os.Stat(file); err == nil {
			t.Errorf("database down: %s was created", file)
		}
		if c, out := h.run(t, "run", "--", "ls"); c != 0 {
			t.Errorf("database down: ls exited %d: %s", c, out)
		}
	}
	if c, _ := h.run(t, "audit", "ship"); c != 78 {
		t.Errorf("audit ship with the database down exited %d, want 78", c)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if c, _ := h.run(t, "run", "--", "touch", filepath.Join(h.ws, fmt.Sprintf("c%d", i))); c != 75 {
			t.Errorf("after the restart: exited %d", c)
		}
	}
	checkFleet(t, dsn, hosts)
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// TestMeasureDecisionLatency: the whole process of `mnemos policy check`
// for a command a grant covers (the state is read), with the state in
// SQLite and in PostgreSQL (unix socket), and for one the rules settle.
// It prints medians for the notes; MNEMOS_MEASURE=1 runs it.
func TestMeasureDecisionLatency(t *testing.T) {
	if os.Getenv("MNEMOS_MEASURE") != "1" {
		t.Skip("SKIP: a measurement; run with MNEMOS_MEASURE=1")
	}
	srv := fleetServer(t)
	hosts, _ := newFleet(t, srv, 2)
	pg, lite := hosts[0], hosts[1]
	// The second host keeps the SQLite file: its policy without state:.
	pol := filepath.Join(lite.home, ".mnemos", "policy.yaml")
	b, _ := os.ReadFile(pol)
	if err := os.WriteFile(pol, []byte(strings.Split(string(b), "\nstate:")[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	median := func(h *fleetHost, args ...string) time.Duration {
		var ds []time.Duration
		for range 40 {
			start := time.Now()
			if c, out := h.run(t, args...); c != 0 {
				t.Fatalf("%s %v exited %d: %s", h.id, args, c, out)
			}
			ds = append(ds, time.Since(start))
		}
		slicesSort(ds)
		return ds[len(ds)/2]
	}
	for _, h := range []*fleetHost{pg, lite} {
		file := filepath.Join(h.ws, "granted.txt")
		_, out := h.run(t, "run", "--", "touch", file)
		m := approvalID.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%s: %s", h.id, out)
		}
		if c, out := h.run(t, "approvals", "approve", m[1], "--remember", "permanent"); c != 0 {
			t.Fatalf("%s: approve: %s", h.id, out)
		}
		state := "SQLite"
		if h == pg {
			state = "PostgreSQL"
		}
		t.Logf("policy check, grant lookup, state in %s: median %v", state, median(h, "policy", "check", "--", "touch", file).Round(10*time.Microsecond))
		t.Logf("policy check, rules and table only (%s host): median %v", state, median(h, "policy", "check", "--", "ls").Round(10*time.Microsecond))
	}
}

func slicesSort(ds []time.Duration) {
	for i := 1; i < len(ds); i++ {
		for j := i; j > 0 && ds[j] < ds[j-1]; j-- {
			ds[j], ds[j-1] = ds[j-1], ds[j]
		}
	}
}
