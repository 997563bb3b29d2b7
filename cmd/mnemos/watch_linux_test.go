package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the master the test types on and reads
// the screen from, and the terminal a program runs on.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal to test with: %v", err)
	}
	var n int
	rc, _ := m.SyscallConn()
	var ioErr error
	rc.Control(func(fd uintptr) {
		if ioErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioErr == nil {
			n, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	})
	if ioErr != nil {
		m.Close()
		t.Skipf("cannot set up the pseudo-terminal: %v", ioErr)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("cannot open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// screen collects what a pseudo-terminal shows.
type screen struct {
	t    *testing.T
	buf  lockedBuffer
	from int
}

func newScreen(t *testing.T, master *os.File) *screen {
	sc := &screen{t: t}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			sc.buf.Write(b[:n])
			if err != nil {
				return
			}
		}
	}()
	return sc
}

// wait waits until the screen, after the last wait, shows s.
func (sc *screen) wait(s string) {
	sc.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := sc.buf.String()
		if i := strings.Index(out[sc.from:], s); i >= 0 {
			sc.from += i + len(s)
			return
		}
		if time.Now().After(deadline) {
			sc.t.Fatalf("the terminal never showed %q; it shows:\n%s", s, out[sc.from:])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// termFlags reads the terminal's line discipline flags.
func termFlags(t *testing.T, tty *os.File) uint32 {
	t.Helper()
	rc, _ := tty.SyscallConn()
	var (
		tio *unix.Termios
		err error
	)
	rc.Control(func(fd uintptr) { tio, err = unix.IoctlGetTermios(int(fd), unix.TCGETS) })
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag
}

// watchEnv is a user's mnemos, a workspace, and the mnemos binary to run
// as processes of their own.
type watchEnv struct {
	t   *testing.T
	dir string
	ws  string
	bin string
	env map[string]string
}

func newWatchEnv(t *testing.T) *watchEnv {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "mnemos-watch-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home, ws := filepath.Join(dir, "home"), filepath.Join(dir, "ws")
	for _, d := range []string{home, filepath.Join(ws, ".git"), filepath.Join(dir, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	w := &watchEnv{t: t, dir: dir, ws: ws, bin: filepath.Join(dir, "bin", "mnemos"), env: map[string]string{
		"HOME": home, "MNEMOS_HOME": filepath.Join(home, ".mnemos"), "MNEMOS_SENDER": "dev", "PATH": os.Getenv("PATH"),
	}}
	if err := os.Symlink(exe, w.bin); err != nil {
		t.Fatal(err)
	}
	if out, code := w.run(nil, "init"); code != 0 {
		t.Fatalf("init exited %d: %s", code, out)
	}
	return w
}

func (w *watchEnv) command(args ...string) *exec.Cmd {
	cmd := exec.Command(w.bin, args...)
	cmd.Dir = w.ws
	for k, v := range w.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// No controlling terminal: a session of its own.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}

// run runs mnemos to its end and returns its output and exit code.
func (w *watchEnv) run(stdin *os.File, args ...string) (string, int) {
	cmd := w.command(args...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	out, _ := cmd.CombinedOutput()
	return string(out), cmd.ProcessState.ExitCode()
}

// background starts mnemos and returns its exit code, when it ends, and
// its stderr.
func (w *watchEnv) background(args ...string) (<-chan int, *lockedBuffer) {
	w.t.Helper()
	cmd := w.command(args...)
	errw := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = &lockedBuffer{}, errw
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		_ = cmd.Wait()
		done <- cmd.ProcessState.ExitCode()
	}()
	w.t.Cleanup(func() {
		cmd.Process.Kill()
	})
	return done, errw
}

// watch starts mnemos approvals watch on the pseudo-terminal tty, its
// controlling terminal; its stdin is /dev/null and its stdout and stderr
// are collected, so it shows everything on /dev/tty or nowhere.
func (w *watchEnv) watch(tty *os.File, args ...string) (*exec.Cmd, *lockedBuffer, <-chan error) {
	w.t.Helper()
	cmd := w.command(append(args, "approvals", "watch")...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.ExtraFiles = []*os.File{tty} // fd 3
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	w.t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, out, done
}

func within(t *testing.T, ch <-chan int, d time.Duration, what string) int {
	t.Helper()
	select {
	case code := <-ch:
		return code
	case <-time.After(d):
		t.Fatalf("%s did not end", what)
	}
	return -1
}

// TestWatchAnswersWaitingRuns: mnemos approvals watch, on a
// pseudo-terminal that is its controlling terminal, shows the card of a
// waiting `mnemos run --wait` as it arrives; a lets the run proceed, r
// makes it exit 77, n leaves it waiting; q quits; the terminal is raw
// while it watches and restored after, by q and by SIGTERM.
func TestWatchAnswersWaitingRuns(t *testing.T) {
	w := newWatchEnv(t)
	master, tty := openPTY(t)
	sc := newScreen(t, master)
	before := termFlags(t, tty)
	if before&unix.ICANON == 0 || before&unix.ECHO == 0 {
		t.Fatalf("the new terminal is not cooked: %#x", before)
	}
	cmd, out, done := w.watch(tty)
	sc.wait("watching the requests of cli:dev")
	sc.wait("waiting for new requests")
	if fl := termFlags(t, tty); fl&(unix.ICANON|unix.ECHO|unix.ISIG) != 0 {
		t.Errorf("watching, the terminal is not raw: %#x", fl)
	}

	// Approve once.
	ran, errw := w.background("run", "--wait", "--", "touch", "approved.txt")
	sc.wait("command:   touch approved.txt")
	sc.wait("[q] quit? ")
	master.WriteString("a")
	if code := within(t, ran, 30*time.Second, "the approved run"); code != 0 {
		t.Fatalf("the approved run exited %d: %s", code, errw.String())
	}
	sc.wait("approved ")
	if _, err := os.Stat(filepath.Join(w.ws, "approved.txt")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}

	// Reject.
	ran, errw = w.background("run", "--wait", "--", "touch", "rejected.txt")
	sc.wait("command:   touch rejected.txt")
	sc.wait("? ")
	master.WriteString("r")
	if code := within(t, ran, 30*time.Second, "the rejected run"); code != exitDenied {
		t.Fatalf("the rejected run exited %d, want %d: %s", code, exitDenied, errw.String())
	}
	sc.wait("rejected ")
	if !strings.Contains(errw.String(), "was rejected") {
		t.Errorf("the rejected run said: %s", errw.String())
	}
	if _, err := os.Stat(filepath.Join(w.ws, "rejected.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the rejected command ran")
	}

	// Skip: the run keeps waiting, the request stays pending.
	ran, errw = w.background("run", "--wait", "--", "touch", "skipped.txt")
	sc.wait("command:   touch skipped.txt")
	sc.wait("? ")
	master.WriteString("n")
	sc.wait("skipped ")
	sc.wait("1 skipped still waits")
	select {
	case code := <-ran:
		t.Fatalf("the skipped run ended (%d): %s", code, errw.String())
	case <-time.After(500 * time.Millisecond):
	}
	list, _ := w.run(nil, "approvals", "list")
	if !strings.Contains(list, "pending") || !strings.Contains(list, "skipped.txt") {
		t.Fatalf("after a skip, approvals list says:\n%s", list)
	}
	id := strings.Fields(list)[0]
	if o, code := w.run(nil, "approvals", "deny", id); code != 0 {
		t.Fatalf("deny: %d %s", code, o)
	}
	if code := within(t, ran, 30*time.Second, "the skipped run"); code != exitDenied {
		t.Fatalf("the skipped run exited %d after a deny", code)
	}

	// q quits and restores the terminal.
	master.WriteString("q")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("watch: %v (%s)", err, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("q did not quit")
	}
	if fl := termFlags(t, tty); fl != before {
		t.Errorf("after q the terminal is %#x, was %#x", fl, before)
	}
	if out.String() != "" {
		t.Errorf("watch wrote to stdout or stderr: %q", out.String())
	}

	t.Logf("the terminal showed:\n%s", strings.ReplaceAll(sc.buf.String(), "\r\n", "\n"))

	// SIGTERM ends it too, and restores the terminal.
	cmd, _, done = w.watch(tty)
	sc.wait("waiting for new requests")
	if fl := termFlags(t, tty); fl&unix.ICANON != 0 {
		t.Fatalf("the second watch is not raw: %#x", fl)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not stop it")
	}
	if fl := termFlags(t, tty); fl != before {
		t.Errorf("after SIGTERM the terminal is %#x, was %#x", fl, before)
	}
}

// TestWatchNeedsTerminal: without a controlling terminal, watch says so
// and exits 64, whatever its stdin is.
func TestWatchNeedsTerminal(t *testing.T) {
	w := newWatchEnv(t)
	out, code := w.run(nil, "approvals", "watch")
	if code != exitUsage || !strings.Contains(out, "approvals watch needs a terminal") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

// TestWatchAnswersHeldHook: a hook holding for approval is answered from
// the terminal of the hook's identity (mnemos --channel claude-code
// approvals watch): a, and the hook answers allow; r, and it answers deny.
func TestWatchAnswersHeldHook(t *testing.T) {
	w := newWatchEnv(t)
	master, tty := openPTY(t)
	sc := newScreen(t, master)
	w.watch(tty, "--channel", "claude-code")
	sc.wait("watching the requests of claude-code:dev")
	for _, c := range []struct{ key, command, want string }{
		{"a", "touch held.txt", `"permissionDecision":"allow"`},
		{"r", "touch refused.txt", `"permissionDecision":"deny"`},
	} {
		done, out, errw := w.holdingHook(c.command)
		sc.wait("bash -c '" + c.command + "'")
		sc.wait("? ")
		master.WriteString(c.key)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("the hook still holds after %s: %s", c.key, errw.String())
		}
		if !strings.Contains(out.String(), c.want) {
			t.Fatalf("after %s the hook answered: %s", c.key, out.String())
		}
	}
}
