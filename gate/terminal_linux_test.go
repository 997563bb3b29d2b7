package gate

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mnemos-dev/mnemos/policy"
)

// openPty returns a new pseudo-terminal's master and slave.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("cannot unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("no pseudo-terminal number: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("cannot open the pseudo-terminal: %v", err)
	}
	return m, s
}

// typeAt types keys at a program on a terminal, a pause after each, and
// drains what it shows until done is closed.
func typeAt(master *os.File, done <-chan struct{}, keys ...string) {
	go func() { _, _ = io.Copy(io.Discard, master) }()
	for _, k := range keys {
		select {
		case <-done:
			return
		case <-time.After(700 * time.Millisecond):
		}
		_, _ = master.WriteString(k)
	}
}

// TestSecurityLessUnderRunRefusesItsShell drives the real less on a
// terminal, as an agent that types into a running program (Codex's
// write_stdin) would: under mnemos run, which the decision lets read the
// file as a read, its ! command runs nothing; the same keys typed at less
// started outside mnemos run the command (the test would catch a secure
// mode that did not hold).
func TestSecurityLessUnderRunRefusesItsShell(t *testing.T) {
	less, err := exec.LookPath("less")
	if err != nil {
		t.Skip("less is not installed")
	}
	src := strings.Replace(string(policy.DefaultSource()), "\nlevel: supervised\n", "\nlevel: full\n", 1)
	f := newFixture(t, src)
	var lines strings.Builder
	for i := range 200 {
		lines.WriteString(strconv.Itoa(i) + "\n")
	}
	if err := os.WriteFile(filepath.Join(f.ws, "calc.txt"), []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LESSSECURE", "")
	t.Setenv("TERM", "xterm")
	marker := filepath.Join(f.ws, "pwned")
	// After a refused !, the rest is read as less's own commands (h shows
	// its help): enough q's end it either way.
	keys := []string{"!touch " + marker + "\n", "\n", "q", "q", "q", "q"}

	// Outside mnemos run: the keys run touch.
	m, s := openPty(t)
	cmd := exec.Command(less, "calc.txt")
	cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = f.ws, s, s, s
	done := make(chan struct{})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go typeAt(m, done, keys...)
	waitOrKill(t, cmd, done)
	s.Close()
	m.Close()
	if _, err := os.Stat(marker); err != nil {
		t.Skipf("less run outside mnemos did not run the typed command here (%v): nothing to compare with", err)
	}
	os.Remove(marker)

	// Under mnemos run.
	d := f.decide(t, Mode{DryRun: true}, "less", "calc.txt")
	if d.Outcome != policy.Allow {
		t.Fatalf("less calc.txt under mnemos run: %s, want allow (a read)", describe(d))
	}
	m, s = openPty(t)
	defer m.Close()
	defer s.Close()
	done = make(chan struct{})
	go typeAt(m, done, keys...)
	type ran struct {
		res RunResult
		err error
	}
	out := make(chan ran, 1)
	go func() {
		res, err := f.g.Run(context.Background(), f.req("less", "calc.txt"), Stdio{Stdin: s, Stdout: s, Stderr: s}, RunOptions{})
		out <- ran{res, err}
	}()
	select {
	case r := <-out:
		if r.err != nil {
			t.Fatalf("Run: %v (exit %d)", r.err, r.res.ExitCode)
		}
	case <-time.After(30 * time.Second):
		t.Error("less under mnemos run did not end after q")
	}
	close(done)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("less under mnemos run ran the command typed after !: its secure mode did not hold")
	}
}

// waitOrKill waits for a command for a while, then kills it.
func waitOrKill(t *testing.T, cmd *exec.Cmd, done chan struct{}) {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
	close(done)
}
