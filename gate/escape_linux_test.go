package gate

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/mnemos-dev/mnemos/sandbox"
	"golang.org/x/sys/unix"
)

// escapeAttempt is one line the escape helper (testdata/escape) prints,
// and what must hold once the run has ended.
type escapeAttempt struct {
	name string
	// afterRun: a file that did not exist when the command started, which
	// no mount can keep read-only; the command may create it, but it must
	// not stay where it runs later once the run has ended.
	afterRun bool
	// remains reports what the attempt left behind, "" when nothing.
	remains func() string
	// swap: made alone, in a second run (the helper's swap-git).
	swap bool
}

// TestSecurityEscapeSuite runs, as an allowed command under the real
// sandbox, a program that tries every way out of it the sandbox promises
// to close, with paths it builds while it runs: writing what runs later
// (git hooks, config, info and commondir, .envrc, editor tasks, a PATH
// directory in home, and .git itself moved away for a writable copy),
// changing the metadata, name or links of protected files (a key, mnemos's
// policy, a file granted read-only, a system file), reading a descriptor
// mnemos's caller left open, making a namespace or a mount, connecting to
// unix sockets in home and /tmp, and, as root, reading a TLS private key.
// Each attempt must be refused, and nothing it tried may remain after the
// run. A file that did not exist when the command started cannot be kept
// read-only by a mount: creating it may succeed, but the run must not
// leave it where it runs later.
func TestSecurityEscapeSuite(t *testing.T) {
	requireLandlock(t, 1)
	if st := sandbox.Probe(); !st.View {
		t.Skipf("the sandbox's read-only view cannot be built here: %s", st.ViewErr)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command to build the escape helper")
	}
	f := newSandboxFixture(t, "sandbox: {read: [$OUT/ro]}\nrules:"+sandboxRules+
		"  - {name: escape, action: allow, command: {argv_prefix: [$ROOT/ws/escape]}}\n", "")
	helper := filepath.Join(f.ws, "escape")
	build := exec.Command(goTool, "build", "-buildvcs=false", "-o", helper, "./testdata/escape")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the escape helper: %v\n%s", err, out)
	}

	// The workspace is a git repository with editor tasks; home has a
	// PATH directory and a key; mnemos has its policy; the policy grants
	// $OUT/ro read-only.
	ws, home, git := f.ws, f.home, filepath.Join(f.ws, ".git")
	files := map[string]string{
		filepath.Join(git, "HEAD"):                    "ref: refs/heads/main\n",
		filepath.Join(git, "config"):                  "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
		filepath.Join(git, "hooks", "README"):         "hooks\n",
		filepath.Join(git, "info", "exclude"):         "\n",
		filepath.Join(ws, ".vscode", "tasks.json"):    "{}\n",
		filepath.Join(home, ".local", "bin", "tool"):  "#!/bin/sh\n",
		filepath.Join(home, ".ssh", "id_rsa"):         "-----BEGIN OPENSSH PRIVATE KEY-----\n",
		f.g.cfg.Paths.PolicyFile:                      "level: readonly\n",
		filepath.Join(f.out, "ro", "file"):            "read-only\n",
		filepath.Join(f.out, "inherited", "secret"):   "SECRET-ON-AN-INHERITED-DESCRIPTOR\n",
		filepath.Join(git, "objects", "info", "keep"): "",
	}
	for p, s := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	protected := map[string]string{
		"~/.ssh/id_rsa":    filepath.Join(home, ".ssh", "id_rsa"),
		"policy.yaml":      f.g.cfg.Paths.PolicyFile,
		"a read-only file": filepath.Join(f.out, "ro", "file"),
	}
	before := map[string]unix.Stat_t{}
	for _, p := range protected {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		before[p] = st
	}

	// A descriptor on a secret, left open across exec as a careless
	// caller would leave it.
	secretFD, err := syscall.Open(filepath.Join(f.out, "inherited", "secret"), syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(secretFD) })
	if _, err := unix.FcntlInt(uintptr(secretFD), unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}

	// Services listening on unix sockets in home and at the top of the
	// temp directory; each counts the connections it accepts.
	listen := func(path string) *atomic.Int32 {
		var n atomic.Int32
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close(); os.Remove(path) })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				n.Add(1)
				c.Close()
			}
		}()
		return &n
	}
	homeSock := filepath.Join(home, "agent.sock")
	tmpSock := filepath.Join(os.TempDir(), fmt.Sprintf("mnemos-escape-%d.sock", os.Getpid()))
	homeConns, tmpConns := listen(homeSock), listen(tmpSock)

	// As root, a TLS private key where the system keeps them.
	sslKey := ""
	if os.Geteuid() == 0 {
		dir := "/etc/ssl/private"
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Remove(dir) })
		}
		sslKey = fmt.Sprintf("mnemos-escape-%d.key", os.Getpid())
		if err := os.WriteFile(filepath.Join(dir, sslKey), []byte("-----BEGIN PRIVATE KEY-----\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(filepath.Join(dir, sslKey)) })
	}

	for k, v := range map[string]string{
		"ESCAPE_HOME": home, "ESCAPE_MNEMOS": filepath.Dir(f.g.cfg.Paths.PolicyFile), "ESCAPE_RO": filepath.Join(f.out, "ro"),
		"ESCAPE_FD": strconv.Itoa(secretFD), "ESCAPE_FD_MARK": "SECRET-ON-AN-INHERITED",
		"ESCAPE_HOME_SOCK": homeSock, "ESCAPE_TMP_SOCK": tmpSock, "ESCAPE_SSL": sslKey,
	} {
		t.Setenv(k, v)
	}

	absent := func(rel string) func() string {
		return func() string {
			p := filepath.Join(ws, rel)
			if _, err := os.Lstat(p); err == nil {
				return p + " exists"
			}
			return ""
		}
	}
	unchanged := func(p, want string) func() string {
		return func() string {
			if b, err := os.ReadFile(p); err != nil || string(b) != want {
				return fmt.Sprintf("%s is now %q (%v)", p, b, err)
			}
			return ""
		}
	}
	intact := func(name string) func() string {
		return func() string {
			p := protected[name]
			var st unix.Stat_t
			if err := unix.Lstat(p, &st); err != nil {
				return p + ": " + err.Error()
			}
			b := before[p]
			var diffs []string
			if st.Mode != b.Mode || st.Uid != b.Uid || st.Gid != b.Gid || st.Mtim != b.Mtim || st.Nlink != b.Nlink {
				diffs = append(diffs, fmt.Sprintf("mode %o uid %d gid %d mtime %v links %d, was %o %d %d %v %d",
					st.Mode, st.Uid, st.Gid, st.Mtim, st.Nlink, b.Mode, b.Uid, b.Gid, b.Mtim, b.Nlink))
			}
			for _, q := range []string{p + ".moved", filepath.Join(ws, "linked-"+filepath.Base(p))} {
				if _, err := os.Lstat(q); err == nil {
					diffs = append(diffs, q+" exists")
				}
			}
			return strings.Join(diffs, "; ")
		}
	}
	none := func() string { return "" }
	noConnection := func(n *atomic.Int32) func() string {
		return func() string {
			if k := n.Load(); k > 0 {
				return fmt.Sprintf("%d connection(s) reached the listener", k)
			}
			return ""
		}
	}
	gitConfig := files[filepath.Join(git, "config")]
	attempts := []escapeAttempt{
		{name: "read an inherited descriptor", remains: none},
		{name: "read /proc/self/fd of an inherited descriptor", remains: none},
		{name: "write .git/hooks/pre-commit", remains: absent(".git/hooks/pre-commit")},
		{name: "append to .git/config", remains: unchanged(filepath.Join(git, "config"), gitConfig)},
		{name: "replace .git/config", remains: unchanged(filepath.Join(git, "config"), gitConfig)},
		{name: "create .git/config.worktree", afterRun: true, remains: absent(".git/config.worktree")},
		{name: "write .git/info/attributes", remains: absent(".git/info/attributes")},
		{name: "create .git/commondir", afterRun: true, remains: absent(".git/commondir")},
		{name: "write .envrc", afterRun: true, remains: absent(".envrc")},
		{name: "write .vscode/tasks.json", remains: unchanged(filepath.Join(ws, ".vscode", "tasks.json"), "{}\n")},
		{name: "write ~/.local/bin/x", remains: func() string {
			if _, err := os.Lstat(filepath.Join(home, ".local", "bin", "x")); err == nil {
				return "~/.local/bin/x exists"
			}
			return ""
		}},
	}
	for _, name := range []string{"~/.ssh/id_rsa", "policy.yaml", "a read-only file"} {
		for _, op := range []string{"chmod", "chown", "utime", "rename", "hard-link"} {
			attempts = append(attempts, escapeAttempt{name: op + " " + name, remains: intact(name)})
		}
	}
	attempts = append(attempts,
		escapeAttempt{name: "chmod /etc/passwd (its own mode)", remains: none},
		escapeAttempt{name: "chown /etc/passwd (its own owner)", remains: none},
		escapeAttempt{name: "unshare CLONE_NEWUSER", remains: none},
		escapeAttempt{name: "unshare CLONE_NEWUSER|CLONE_NEWNS", remains: none},
		escapeAttempt{name: "mount a tmpfs", remains: none},
		escapeAttempt{name: "remount .git/hooks read-write", remains: none},
		escapeAttempt{name: "unmount .git/hooks", remains: none},
		escapeAttempt{name: "mount_setattr .git/hooks read-write", remains: none},
		escapeAttempt{name: "connect a unix socket in home", remains: noConnection(homeConns)},
		escapeAttempt{name: "connect a unix socket in /tmp", remains: noConnection(tmpConns)},
		escapeAttempt{name: "read /etc/ssl/private key", remains: none},
		escapeAttempt{name: "replace .git with a writable copy", swap: true, remains: func() string {
			var out []string
			for _, rel := range []string{".git.moved", ".git/hooks/post-checkout"} {
				if s := absent(rel)(); s != "" {
					out = append(out, s)
				}
			}
			return strings.Join(out, "; ")
		}},
	)
	// Two runs: the second only moves .git away, which would hide what
	// the first left in it. What an attempt left behind is looked at
	// after its own run.
	got := map[string][2]string{}
	remained := map[string]string{}
	var order []string
	var printed strings.Builder
	for run, args := range [][]string{nil, {"swap-git"}} {
		var stdout, stderr bytes.Buffer
		res, err := f.g.Run(context.Background(), f.req(append([]string{helper}, args...)...), Stdio{Stdout: &stdout, Stderr: &stderr}, RunOptions{})
		if err != nil || !res.Ran || res.ExitCode != 0 {
			t.Fatalf("the escape helper %q: ran %v, exit %d, %v (%s): %s", args, res.Ran, res.ExitCode, err, res.Decision.Reason, stderr.String())
		}
		if n := viewMissing(f.audit); n != "" {
			t.Skipf("the command ran without the read-only view: %s", n)
		}
		printed.WriteString(stdout.String())
		for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
			parts := strings.SplitN(line, "\t", 3)
			if len(parts) < 2 {
				t.Fatalf("the helper printed %q", line)
			}
			if prev, ok := got[parts[0]]; ok && prev[0] == "ok" {
				continue // made in both runs, it counts where it got through
			}
			if _, ok := got[parts[0]]; !ok {
				order = append(order, parts[0])
			}
			got[parts[0]] = [2]string{parts[1], strings.Join(parts[2:], "")}
		}
		for _, a := range attempts {
			if a.swap == (run == 1) {
				remained[a.name] = a.remains()
			}
		}
	}

	for _, a := range attempts {
		t.Run(a.name, func(t *testing.T) {
			line, ok := got[a.name]
			if !ok {
				t.Fatalf("the helper did not report this attempt; it printed:\n%s", printed.String())
			}
			switch status, detail := line[0], line[1]; {
			case status == "skipped" && a.name == "read /etc/ssl/private key" && sslKey == "":
				t.Skipf("not root: %s", detail)
			case status == "refused":
				t.Logf("refused: %s", detail)
			case status == "ok" && a.afterRun:
				t.Logf("succeeded inside the run (the path did not exist when it started); it must not remain after it")
			default:
				t.Errorf("not refused: %s %s", status, detail)
			}
			if s := remained[a.name]; s != "" {
				t.Errorf("after the run: %s", s)
			}
		})
	}
	for _, name := range order {
		if !slices.ContainsFunc(attempts, func(a escapeAttempt) bool { return a.name == name }) {
			t.Errorf("the helper reported an attempt the test does not know: %q", name)
		}
	}
}

// viewMissing returns the note of the last run.finished that says the
// command ran without the read-only view, "" when it ran with it.
func viewMissing(m *memAudit) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.kinds) - 1; i >= 0; i-- {
		if m.kinds[i] != "run.finished" {
			continue
		}
		group, _ := m.events[i]["sandbox"].([]slog.Attr)
		for _, a := range group {
			if a.Key != "notes" {
				continue
			}
			notes, _ := a.Value.Any().([]string)
			for _, n := range notes {
				if strings.HasPrefix(n, "no read-only view") {
					return n
				}
			}
		}
		return ""
	}
	return "no run.finished was recorded"
}
