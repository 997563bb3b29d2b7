package gate

import (
	"context"

	"bytes"
	"errors"
	"github.com/mnemos-dev/mnemos/hook"
	"github.com/mnemos-dev/mnemos/policy"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/sandbox"
	"github.com/mnemos-dev/mnemos/shellparse"
	"github.com/mnemos-dev/mnemos/vaglio"
)

// sandboxLeaves are the guard's forbidden paths the sandbox's secret list
// does not name, each with the reason. Readable ones the sandbox lets
// every command read, because programs need them: keeping commands from
// naming them is the guard's business alone. The others are out of reach
// all the same, by other means than the list.
func sandboxLeaves() map[string]struct {
	readable bool
	why      string
} {
	type leave = struct {
		readable bool
		why      string
	}
	return map[string]leave{
		"/etc/passwd": {true, "the user database: id, ls -l, ssh and most libraries read it; " +
			"it holds no password hashes (/etc/shadow does)"},
		"/etc/passwd-": {true, "the backup of /etc/passwd, no more secret than it; every user may read it, " +
			"so denying it would narrow /etc entry by entry for every run"},
		"/proc": {true, "the process table: ps, top and language runtimes list it"},
		"/proc/self/**": {true, "a process's own entry, which it reads for its limits, mounts and executable; " +
			"it cannot be named before the process exists"},
		"/proc/thread-self/**": {true, "a thread's own entry, as /proc/self"},
		"/sys/**":              {true, "kernel interfaces programs read (CPUs, memory limits, devices); the grant is read-only"},

		"/proc/[0-9]*/**": {false, "other processes' entries: the kernel's ptrace check refuses their memory, " +
			"environment and files to a process in a Landlock domain they are not in"},
		"/proc/kcore":         {false, "opening it takes CAP_SYS_RAWIO, which the sandbox drops"},
		"/proc/sysrq-trigger": {false, "write-only: there is nothing to read, and /proc is granted read-only"},
		"**/.env": {false, "a project's file: inside the workspace, which is granted read-write and out of " +
			"which Landlock cannot carve a file, only the guard keeps it; home is never granted whole"},
		"**/.env~":  {false, "as **/.env"},
		"**/.env.*": {false, "as **/.env"},
	}
}

// TestSecuritySandboxRefusesEveryForbiddenPath: whatever the guard forbids
// a command to name, the sandbox keeps the command from reading when it
// builds the path at run time. For each of the guard's patterns it makes
// a path the pattern matches (checked against the guard), puts a marker
// there (under a fake home; in the system only as root, and only where
// nothing is there yet, removed afterwards), builds the sandbox the gate
// builds for a run, and requires that a confined head cannot read it. The
// spec must also name the path among its denied ones or grant nothing
// that holds it (home paths must be named: caches, tool directories and
// policy paths are granted under home piece by piece). sandboxLeaves
// lists, with a reason each, the patterns left out; a new guard pattern
// is checked like the others, so it is either covered or listed there.
func TestSecuritySandboxRefusesEveryForbiddenPath(t *testing.T) {
	requireLandlock(t, 1)
	head, err := exec.LookPath("head")
	if err != nil {
		t.Skip("needs head")
	}
	f := newSandboxFixture(t, "rules:"+sandboxRules, "")
	root := os.Geteuid() == 0
	leaves := sandboxLeaves()
	guard := vaglio.Guard{Home: f.home}
	seen := map[string]bool{}

	type target struct {
		pattern, path string
		floating      bool   // a pattern at any depth, made under home
		marker        []byte // nil for a file that was there already
	}
	var targets []target
	for _, fp := range vaglio.ForbiddenPatterns() {
		seen[fp.Pattern] = true
		p := f.instance(fp.Pattern)
		if hit, ok := guard.Check(shellparse.Command{Argv: []shellparse.Word{{Value: "cat"}, {Value: p}}}, f.ws); !ok || hit.Pattern != fp.Pattern {
			t.Errorf("%s: the guard does not refuse %s by this pattern (hit %q); fix instance", fp.Pattern, p, hit.Pattern)
			continue
		}
		tg := target{pattern: fp.Pattern, path: p, floating: strings.HasPrefix(fp.Pattern, "**/")}
		switch _, err := os.Lstat(p); {
		case err == nil:
		case tg.floating:
			tg.marker = []byte("mnemos marker for " + fp.Pattern + "\n")
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, tg.marker, 0o600); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/sys/"):
			t.Logf("%s: %s is not there: not checked", fp.Pattern, p)
			continue
		case !root:
			t.Logf("%s: %s is not there, and only root may put it there: not checked", fp.Pattern, p)
			continue
		default:
			tg.marker = []byte("mnemos marker for " + fp.Pattern + "\n")
			if !plant(t, p, tg.marker) {
				continue
			}
		}
		targets = append(targets, tg)
	}
	for pattern := range leaves {
		if !seen[pattern] {
			t.Errorf("sandboxLeaves lists %s, which the guard no longer forbids", pattern)
		}
	}

	// The secret list is built as a run builds it: after the files above
	// were made, so that its wildcards see them.
	sb, err := f.sandbox(t, RunOptions{}, "cat", "x")
	if err != nil {
		t.Fatal(err)
	}
	spec := sb.spec
	read := func(p string) (string, bool) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(head, "-c", "256", p)
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			cmd = exec.Command("ls", p)
		}
		cmd.Stdout, cmd.Stderr, cmd.Dir = &stdout, &stderr, f.ws
		if _, err := sandbox.Start(cmd, spec); err != nil {
			t.Fatalf("start %s: %v", p, err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("wait %s: %v", p, err)
		}
		return stdout.String(), err == nil
	}

	// The confined command does read what it may.
	ok := filepath.Join(f.ws, "readable")
	if err := os.WriteFile(ok, []byte("mnemos readable\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, ran := read(ok); !ran || out != "mnemos readable\n" {
		t.Fatalf("a file in the workspace: ok %v, read %q", ran, out)
	}

	t.Logf("checked %d of the guard's %d patterns", len(targets), len(seen))
	for _, tg := range targets {
		leave, left := leaves[tg.pattern]
		out, ran := read(tg.path)
		if left && leave.readable {
			if !ran {
				t.Errorf("%s: %s is listed as readable (%s) but the sandbox refuses it: update sandboxLeaves", tg.pattern, tg.path, leave.why)
			}
			continue
		}
		if ran || tg.marker != nil && strings.Contains(out, string(tg.marker)) || tg.marker == nil && out != "" {
			t.Errorf("security: %s: a confined command read %s", tg.pattern, tg.path)
		}
		if left {
			continue
		}
		switch {
		case withinAny(tg.path, spec.Deny):
		case tg.floating:
			t.Errorf("%s: %s is not among the sandbox's secrets (sandbox.DefaultSecrets)", tg.pattern, tg.path)
		case withinAny(tg.path, spec.ReadExec, spec.ReadOnly, spec.ReadWrite, spec.Devices, spec.Terminals):
			t.Errorf("%s: the sandbox grants %s and does not deny it", tg.pattern, tg.path)
		}
	}
}

// instance is a path under f's fake home, or in the system, that pattern
// matches: "**/" is home, a final "/**" a file in that directory, and
// wildcards are filled in. Some patterns get a path chosen by hand: the
// one a secret really has (the guard matches any case), or one inside a
// directory the sandbox grants.
func (f *sandboxFixture) instance(pattern string) string {
	switch pattern {
	case "/etc/ssh/**":
		// Host private keys; ssh_config and the public keys stay
		// readable, as ssh needs them.
		for _, k := range []string{"ed25519", "ecdsa", "rsa"} {
			if p := "/etc/ssh/ssh_host_" + k + "_key"; fileExists(p) {
				return p
			}
		}
		return "/etc/ssh/ssh_host_ed25519_key"
	case "/etc/sudoers.d/**":
		return "/etc/sudoers.d/mnemos.marker" // sudo skips names with a dot
	case "/etc/networkmanager/system-connections/**":
		return "/etc/NetworkManager/system-connections/mnemos.nmconnection"
	case "/proc/[0-9]*/**":
		return "/proc/1/environ"
	case "/proc/self/**":
		return "/proc/self/environ"
	case "/proc/thread-self/**":
		return "/proc/thread-self/environ"
	case "/sys/**":
		return "/sys/devices/system/cpu/online"
	case "**/.config/*/credentials*":
		// git's credential store, inside ~/.config/git, which the
		// sandbox lets commands read.
		return filepath.Join(f.home, ".config/git/credentials")
	case "**/.config/bravesoftware/**":
		return filepath.Join(f.home, ".config/BraveSoftware/Brave-Browser/Default/Login Data")
	case "**/.env.*":
		return filepath.Join(f.home, ".env.local")
	}
	if strings.HasPrefix(pattern, "/dev/") {
		// A device there is, if any: none is made.
		g := pattern
		if d, ok := strings.CutSuffix(g, "/**"); ok {
			g = d + "/*"
		}
		if m, _ := filepath.Glob(g); len(m) > 0 {
			return m[0]
		}
	}
	p, sub := strings.CutSuffix(pattern, "/**")
	if rel, ok := strings.CutPrefix(p, "**/"); ok {
		p = filepath.Join(f.home, rel)
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			if p[i-1] == '/' {
				b.WriteString("mnemos")
			}
		case '?':
			b.WriteByte('x')
		case '[':
			// The first character of the class.
			b.WriteByte(p[i+1])
			i += strings.IndexByte(p[i:], ']')
		default:
			b.WriteByte(c)
		}
	}
	if sub {
		b.WriteString("/mnemos-marker")
	}
	return b.String()
}

// plant writes marker to a new file at p, an absolute path in the system,
// making the directories it needs; the file and the directories it made
// are removed when the test ends. It reports whether it wrote the file.
func plant(t *testing.T, p string, marker []byte) bool {
	t.Helper()
	top := ""
	for d := filepath.Dir(p); d != "/"; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Logf("%s: %v: not checked", p, err)
			return false
		}
		top = d
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Logf("%s: %v: not checked", p, err)
		return false
	}
	if top != "" {
		t.Cleanup(func() { os.RemoveAll(top) })
	}
	w, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Logf("%s: %v: not checked", p, err)
		return false
	}
	t.Cleanup(func() { os.Remove(p) })
	_, err = w.Write(marker)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// withinAny reports whether p is one of the paths or lies beneath one.
func withinAny(p string, lists ...[]string) bool {
	for _, l := range lists {
		for _, d := range l {
			if d = filepath.Clean(d); p == d || strings.HasPrefix(p, d+"/") || d == "/" {
				return true
			}
		}
	}
	return false
}

// TestSecurityHomeSecretsDeniedEveryWay: each of the guard's secrets
// under home is denied at level full whichever way a command reaches it:
// an agent's Read tool (cat -- PATH, run outside the sandbox), cat under
// mnemos run, a copy out of it, and a recursive read of the directory
// that holds it, sandboxed or not.
func TestSecurityHomeSecretsDeniedEveryWay(t *testing.T) {
	requireLandlock(t, 1)
	f := newSandboxFixture(t, "level: full\n", "")
	for _, fp := range vaglio.ForbiddenPatterns() {
		if !strings.HasPrefix(fp.Pattern, "**/") || strings.HasPrefix(fp.Pattern, "**/.env") {
			continue
		}
		p := f.instance(fp.Pattern)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, fp := range vaglio.ForbiddenPatterns() {
		if !strings.HasPrefix(fp.Pattern, "**/") || strings.HasPrefix(fp.Pattern, "**/.env") {
			continue
		}
		p := f.instance(fp.Pattern)
		rel, _ := filepath.Rel(f.home, p)
		top := filepath.Join(f.home, strings.Split(rel, string(filepath.Separator))[0])
		for _, c := range []struct {
			how         string
			argv        []string
			unsandboxed bool
		}{
			{"Read", []string{"cat", "--", p}, true},
			{"cat", []string{"bash", "-c", "cat " + hook.Quote(p)}, false},
			{"cat outside", []string{"bash", "-c", "cat " + hook.Quote(p)}, true},
			{"copy", []string{"bash", "-c", "cp " + hook.Quote(p) + " /tmp/x"}, false},
			{"copy outside", []string{"bash", "-c", "cp " + hook.Quote(p) + " /tmp/x"}, true},
			{"recursive read outside", []string{"bash", "-c", "grep -r x " + hook.Quote(top)}, true},
			{"recursive diff outside", []string{"bash", "-c", "diff -r " + hook.Quote(top) + " ."}, true},
			{"Grep tool", []string{"grep", "-r", "-e", "x", "--", filepath.Dir(p)}, true},
		} {
			req := f.req(c.argv...)
			req.Unsandboxed = c.unsandboxed
			d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if d.Outcome != policy.Deny {
				t.Errorf("%s (%s) by %s: %s", fp.Pattern, rel, c.how, describe(d))
			}
		}
	}
}
