package sandbox

import (
	"golang.org/x/sys/unix"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// requireView skips unless the view can be built here, by a thread
// (CAP_SYS_ADMIN) or, with helper, by the helper in a user namespace.
func requireView(t *testing.T, helper bool) Status {
	t.Helper()
	st := requireLandlock(t)
	if !st.View {
		t.Skipf("no private mount view here: %s", st.ViewErr)
	}
	if !helper && !hasSysAdmin() {
		t.Skip("building the view on a thread needs CAP_SYS_ADMIN")
	}
	if helper {
		if ok, why, _ := userNamespaces(); !ok {
			t.Skipf("no user namespaces: %s", why)
		}
	}
	return st
}

// bothWays runs f for the view built on a thread and by the helper, each
// where it can be built here.
func bothWays(t *testing.T, f func(t *testing.T, st Status, helper bool)) {
	for _, helper := range []bool{false, true} {
		name := "thread"
		if helper {
			name = "helper"
		}
		t.Run(name, func(t *testing.T) { f(t, requireView(t, helper), helper) })
	}
}

// gitWorkspace makes w's workspace a git repository with hooks and a
// config, and the later-running files that exist before a run.
func gitWorkspace(t *testing.T, w world) {
	t.Helper()
	for _, d := range []string{".git/hooks", ".git/info", ".git/objects", ".git/refs/heads", ".vscode"} {
		if err := os.MkdirAll(filepath.Join(w.ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, s := range map[string]string{
		".git/config":           "[core]\n\trepositoryformatversion = 0\n",
		".git/HEAD":             "ref: refs/heads/main\n",
		".git/info/exclude":     "",
		".vscode/settings.json": "{}\n",
	} {
		if err := os.WriteFile(filepath.Join(w.ws, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSecurityViewKeepsWhatRunsLaterReadOnly(t *testing.T) {
	bothWays(t, func(t *testing.T, st Status, helper bool) {
		w := newWorld(t)
		gitWorkspace(t, w)
		spec := w.spec(t, nil)
		spec.ViewByHelper = helper
		refused := []struct{ name, script string }{
			{"write a git hook", `echo evil > .git/hooks/pre-commit`},
			{"append to .git/config", `echo '[core] fsmonitor = evil' >> .git/config`},
			{"replace .git/config", `echo x > c && mv c .git/config`},
			{"remove .git/config", `rm .git/config`},
			{"write .git/info/attributes", `echo '* filter=evil' > .git/info/attributes`},
			{"write editor tasks", `echo '{}' > .vscode/tasks.json`},
			{"chmod outside the writable trees", `chmod 0666 "$OUT/note"`},
			{"utime outside the writable trees", `touch -d 2000-01-01 "$OUT/note"`},
			{"rename outside the writable trees", `mv "$OUT/note" "$OUT/moved"`},
			{"chmod a key in home", `chmod 0666 "$HOME/.ssh/id_rsa"`},
			{"chmod mnemos's policy", `chmod 0666 "$PROT/policy.yaml"`},
			{"write a startup file in home", `echo evil >> "$HOME/.bashrc"`},
			{"write a PATH directory", `mkdir -p "$HOME/.local/bin" && echo evil > "$HOME/.local/bin/git"`},
			{"unshare a user namespace", `unshare -U true`},
			{"leave a set-user-ID program", `cp /bin/true ./t && chmod 4755 ./t`},
			{"leave a set-group-ID program", `cp /bin/true ./t2 && chmod g+s ./t2`},
			{"create a set-user-ID file", `/usr/bin/python3 -c 'import os; os.close(os.open("t3", os.O_CREAT|os.O_WRONLY, 0o4755))' && test -u t3`},
		}
		for _, r := range refused {
			o := w.run(t, spec, st, nil, "sh", "-c", r.script)
			if o.code == 0 {
				t.Errorf("%s: succeeded, want refused", r.name)
			}
			if !o.applied.View {
				t.Fatalf("%s: ran without the view: %+v", r.name, o.applied)
			}
		}
		// Ordinary work in the workspace, and in .git, goes on.
		o := w.run(t, spec, st, nil, "sh", "-c", `echo x > f && mkdir -p .git/refs/heads && echo y > .git/index.lock && mv .git/index.lock .git/index && echo z > .git/objects/o && cat f`)
		if o.code != 0 || o.stdout != "x\n" {
			t.Errorf("work in the workspace: exit %d, %q, %s", o.code, o.stdout, o.stderr)
		}
		b, _ := os.ReadFile(filepath.Join(w.ws, ".git/config"))
		if strings.Contains(string(b), "evil") || !strings.Contains(string(b), "repositoryformatversion") {
			t.Errorf(".git/config is now %q", b)
		}
		if exists(filepath.Join(w.ws, ".git/hooks/pre-commit")) || exists(filepath.Join(w.ws, ".vscode/tasks.json")) {
			t.Error("a later-running file was written")
		}
		if fi, err := os.Stat(filepath.Join(w.outside, "note")); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("the note outside is now %v, %v", fi.Mode(), err)
		}
		// With GitConfig, the run may write .git/config, and still
		// not the hooks.
		spec = w.spec(t, func(o *Options) { o.GitConfig = true })
		spec.ViewByHelper = helper
		o = w.run(t, spec, st, nil, "sh", "-c", `echo '[user]' >> .git/config && ! echo x > .git/hooks/post-commit`)
		if o.code != 0 {
			t.Errorf("with GitConfig: exit %d: %s", o.code, o.stderr)
		}
		// What did not exist is reported, for the caller to look at
		// when the command ends.
		if !slices.Contains(o.applied.Absent, filepath.Join(w.ws, ".envrc")) {
			t.Errorf("absent %v, want .envrc among them", o.applied.Absent)
		}
	})
}

func TestSecurityViewHidesSocketsOutsideWorkspaceAndTemp(t *testing.T) {
	bothWays(t, func(t *testing.T, st Status, helper bool) {
		w := newWorld(t)
		listen := func(p string) {
			l, err := net.Listen("unix", p)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					c.Close()
				}
			}()
		}
		agent := filepath.Join(w.home, ".agent.sock")
		session := filepath.Join(w.tmp, "tmux-0")
		if err := os.MkdirAll(session, 0o700); err != nil {
			t.Fatal(err)
		}
		tmux := filepath.Join(session, "default")
		deep := filepath.Join(w.tmp, "a", "b", "c", "zellij.sock")
		cached := filepath.Join(w.home, ".cache", "tool", "daemon.sock")
		for _, p := range []string{deep, cached} {
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
		}
		named := filepath.Join(w.tmp, "named.sock")
		granted := filepath.Join(w.home, "granted.sock")
		own := filepath.Join(w.ws, "own.sock")
		for _, p := range []string{agent, tmux, named, granted, own, deep, cached} {
			listen(p)
		}
		if _, err := os.Stat("/usr/bin/python3"); err != nil {
			t.Skip("needs python3 to connect")
		}
		spec := w.spec(t, func(o *Options) {
			o.MaskSockets = []string{named}
			o.Sockets = []string{granted}
		})
		spec.ViewByHelper = helper
		connect := `import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])`
		for _, c := range []struct {
			path string
			ok   bool
		}{{agent, false}, {tmux, false}, {named, false}, {granted, true}, {own, true}, {deep, false}, {cached, false}} {
			o := w.run(t, spec, st, nil, "/usr/bin/python3", "-c", connect, c.path)
			if (o.code == 0) != c.ok {
				t.Errorf("connect %s: exit %d, want success %v: %s", c.path, o.code, c.ok, o.stderr)
			}
		}
		// Outside the sandbox they all still answer.
		for _, p := range []string{agent, tmux, named} {
			c, err := net.Dial("unix", p)
			if err != nil {
				t.Errorf("%s after the runs: %v", p, err)
				continue
			}
			c.Close()
		}
	})
}

// As root the thread that starts a command shares the command's Landlock
// domain until it ends; mnemos must then be a process the command cannot
// trace, read or take descriptors from.
func TestSecurityMnemosIsUndumpableWhileItRunsCommands(t *testing.T) {
	st := requireLandlock(t)
	w := newWorld(t)
	o := w.run(t, w.spec(t, nil), st, nil, "true")
	if o.code != 0 {
		t.Fatalf("true: exit %d", o.code)
	}
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v != 0 {
		t.Errorf("dumpable = %d after starting a confined command, want 0", v)
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		return
	}
	// A command that tries, as fast as it can while it runs, to read the
	// memory of every thread of its parent and take its descriptors.
	probe := `
import os, glob, ctypes, time
libc = ctypes.CDLL(None, use_errno=True)
ppid = os.getppid()
won = []
end = time.time() + 0.3
while time.time() < end and not won:
    for task in glob.glob("/proc/%d/task/*" % ppid):
        tid = int(task.rsplit("/", 1)[1])
        try:
            os.close(os.open(task + "/mem", os.O_RDONLY)); won.append("mem %d" % tid)
        except OSError:
            pass
        pidfd = libc.syscall(434, tid, os.O_EXCL)
        if pidfd >= 0:
            for fd in range(3, 16):
                got = libc.syscall(438, pidfd, fd, 0)
                if got >= 0:
                    won.append("fd %d of %d" % (fd, tid)); os.close(got)
            os.close(pidfd)
print(";".join(won))
`
	for i := 0; i < 5; i++ {
		o := w.run(t, w.spec(t, nil), st, nil, "/usr/bin/python3", "-c", probe)
		if got := strings.TrimSpace(o.stdout); got != "" {
			t.Fatalf("the command reached mnemos: %s", got)
		}
	}
}

// TestSecurityViewHasItsOwnIPC: System V shared memory of processes
// outside the sandbox is out of reach of a confined command.
func TestSecurityViewHasItsOwnIPC(t *testing.T) {
	for _, helper := range []bool{false, true} {
		st := requireView(t, helper)
		w := newWorld(t)
		const key = 0x6d6e6d73
		id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|0o600)
		if err != nil {
			t.Skipf("no System V shared memory here: %v", err)
		}
		t.Cleanup(func() { _, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
		if _, err := os.Stat("/usr/bin/python3"); err != nil {
			t.Skip("needs python3")
		}
		spec := w.spec(t, nil)
		spec.ViewByHelper = helper
		probe := "import ctypes; print(ctypes.CDLL(None).shmget(0x6d6e6d73, 0, 0))"
		o := w.run(t, spec, st, nil, "/usr/bin/python3", "-c", probe)
		if got := strings.TrimSpace(o.stdout); got != "-1" {
			t.Errorf("helper %v: shmget of a segment outside = %q (%s), want -1", helper, got, o.stderr)
		}
	}
}

// TestSecurityOtherTerminalsAreOutOfReach: a terminal the command was not
// given (another session of the user's, where a password is typed) cannot
// be opened; the one it is given can.
func TestSecurityOtherTerminalsAreOutOfReach(t *testing.T) {
	st := requireLandlock(t)
	w := newWorld(t)
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	other := "/dev/pts/" + strconv.Itoa(n)
	probe := `exec 3<>"$1" && echo opened`
	o := w.run(t, w.spec(t, nil), st, nil, "sh", "-c", probe, "sh", other)
	if o.code == 0 || strings.Contains(o.stdout, "opened") {
		t.Errorf("opened %s, a terminal the command was not given", other)
	}
	given := w.spec(t, func(o *Options) { o.Terminals = []string{other} })
	if o := w.run(t, given, st, nil, "sh", "-c", probe, "sh", other); o.code != 0 {
		t.Errorf("the terminal the command is given: exit %d: %s", o.code, o.stderr)
	}
}

// TestSecurityViewForAnUnprivilegedUser: a user without CAP_SYS_ADMIN gets
// the view too, built by the helper in a user namespace. As root, the test
// runs itself again as nobody.
func TestSecurityViewForAnUnprivilegedUser(t *testing.T) {
	if dir := os.Getenv("SANDBOX_TEST_UNPRIV"); dir != "" {
		unprivilegedRun(t, dir)
		return
	}
	st := requireLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("run as root: the test becomes nobody to check the unprivileged way")
	}
	if ok, why, _ := userNamespaces(); !ok || !st.View {
		t.Skipf("no user namespaces here: %s", why)
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv (util-linux)")
	}
	dir, err := os.MkdirTemp("/var/tmp", "mnemos-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	raw, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"ws/.git/hooks", "home/.cache"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"ws", "ws/.git", "ws/.git/hooks", "home", "home/.cache"} {
		if err := os.Chown(filepath.Join(dir, d), 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-test.run=^TestSecurityViewForAnUnprivilegedUser$", "-test.v")
	cmd.Env = []string{"SANDBOX_TEST_UNPRIV=" + dir, "PATH=/usr/bin:/bin", "HOME=" + filepath.Join(dir, "home")}
	cmd.Dir = filepath.Join(dir, "ws")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

// unprivilegedRun is the test's own run as nobody.
func unprivilegedRun(t *testing.T, dir string) {

	if hasSysAdmin() {
		t.Fatal("still privileged")
	}
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	spec, err := DefaultSpec(Options{Workspace: ws, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", `echo ok > f && ! echo x > .git/hooks/pre-commit 2>/dev/null && cat f`)
	cmd.Dir = ws
	var out strings.Builder
	cmd.Stdout = &out
	a, err := Start(cmd, spec)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wait: %v", err)
	}
	if !a.View || out.String() != "ok\n" {
		t.Fatalf("view %v, output %q", a.View, out.String())
	}
}
