package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
	"github.com/mnemos-dev/mnemos/shellparse"
	"golang.org/x/sys/unix"
)

// sandboxFixture is a gate over a fake root outside /tmp (which the
// sandbox grants): root/home, root/ws (a git workspace) and root/out, a
// directory outside every default grant. In the policies it is given,
// $OUT, $ROOT and $HOME stand for those directories.
type sandboxFixture struct {
	g                   *Gate
	audit               *memAudit
	root, home, ws, out string
	replacer            *strings.Replacer
}

// rules the sandbox tests' policies start from: the commands they run are
// allowed by rule.
const sandboxRules = `
  - {name: touch, action: allow, command: {argv_prefix: [touch]}}
  - {name: cat, action: allow, command: {argv_prefix: [cat]}}
  - {name: curl, action: allow, command: {argv_prefix: [curl]}}
  - {name: bin true, action: allow, command: {argv_prefix: [/bin/true]}}
  - {name: hidden touch, action: allow, command: {argv_prefix: [./hide]}}
`

// runHidden runs `./hide PATH`, a copy of touch in the workspace: the
// decision does not know what it does with PATH (a program of the
// workspace runs code), so the kernel is what refuses the write.
func (f *sandboxFixture) runHidden(t *testing.T, path string) (RunResult, string) {
	t.Helper()
	bin, err := os.ReadFile("/usr/bin/touch")
	if err != nil {
		t.Skip("needs /usr/bin/touch")
	}
	if err := os.WriteFile(filepath.Join(f.ws, "hide"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	return f.run(t, "./hide", path)
}

func newSandboxFixture(tb testing.TB, mainSrc, extraSrc string) *sandboxFixture {
	tb.Helper()
	root, err := os.MkdirTemp("/var/tmp", "mnemos-sandbox-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(root) })
	f := &sandboxFixture{audit: &memAudit{}, root: root,
		home: filepath.Join(root, "home"), ws: filepath.Join(root, "ws"), out: filepath.Join(root, "out")}
	for _, d := range []string{f.home, filepath.Join(f.ws, ".git"), f.out, filepath.Join(f.home, ".ssh"), filepath.Join(f.home, "docs"),
		filepath.Join(f.home, ".cache"), filepath.Join(f.home, "go", "pkg"), filepath.Join(f.home, "go", "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	f.replacer = strings.NewReplacer("$OUT", f.out, "$ROOT", f.root, "$HOME", f.home)
	paths, err := Locate(filepath.Join(f.home, ".mnemos"), func(string) string { return "" }, f.home)
	if err != nil {
		tb.Fatal(err)
	}
	parse := func(name, src string) *policy.Policy {
		p, err := policy.Parse(name, []byte(f.replacer.Replace(src)))
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		return p
	}
	cfg := Config{Paths: paths, Policy: parse("test.yaml", mainSrc), UserHome: f.home, SelfNames: []string{"mnemos"},
		Now: func() time.Time { return time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) }, Audit: f.audit, Watch: watchOn}
	if extraSrc != "" {
		cfg.Extra = parse("extra.yaml", extraSrc)
	}
	f.g = New(cfg)
	tb.Cleanup(func() { f.g.Close() })
	return f
}

func (f *sandboxFixture) req(argv ...string) Request {
	for i, a := range argv {
		argv[i] = f.replacer.Replace(a)
	}
	return Request{Argv: argv, Cwd: f.ws, Channel: "cli", Sender: "dev"}
}

func (f *sandboxFixture) sandbox(tb testing.TB, opts RunOptions, argv ...string) (runSandbox, error) {
	tb.Helper()
	req := f.req(argv...)
	dec, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
	if err != nil {
		tb.Fatal(err)
	}
	return f.g.sandboxSpec(req, dec, opts)
}

// TestSandboxFromPolicy pins how a run's sandbox follows the policy's
// sandbox section, the matching rules' overrides and the extra policy,
// which may only tighten it.
func TestSandboxFromPolicy(t *testing.T) {
	type want struct {
		write, noWrite, read []string
		network              bool
		ports, bind          []uint16
		required             bool
		requiredBy           string
		limitsTCP            bool
		err, hint            string // for a refusal
	}
	tests := []struct {
		name        string
		main, extra string
		opts        RunOptions
		argv        []string
		want        want
	}{
		{name: "no section", main: "rules:" + sandboxRules, argv: []string{"touch", "x"},
			want: want{write: []string{"$ROOT/ws"}, noWrite: []string{"$OUT"}}},
		{name: "section paths", main: "sandbox: {write: [$OUT], read: [~/docs]}\nrules:" + sandboxRules, argv: []string{"touch", "x"},
			want: want{write: []string{"$OUT"}, read: []string{"$HOME/docs"}}},
		{name: "a rule's override, for its command", argv: []string{"touch", "x"},
			main: "rules:\n  - {name: touch out, action: allow, command: {argv_prefix: [touch]}, sandbox: {write: [$OUT]}}" + sandboxRules,
			want: want{write: []string{"$OUT"}}},
		{name: "a rule's override, not for another command", argv: []string{"cat", "x"},
			main: "rules:\n  - {name: touch out, action: allow, command: {argv_prefix: [touch]}, sandbox: {write: [$OUT]}}" + sandboxRules,
			want: want{noWrite: []string{"$OUT"}}},
		{name: "network with ports and bind", main: "sandbox: {network: true, ports: [443], bind: [8080]}\nrules:" + sandboxRules, argv: []string{"touch", "x"},
			want: want{network: true, ports: []uint16{443}, bind: []uint16{8080}, limitsTCP: true}},
		{name: "ports without network are moot", main: "sandbox: {ports: [443]}\nrules:" + sandboxRules, argv: []string{"touch", "x"},
			want: want{}},
		{name: "network decided, ports from the policy", main: "sandbox: {ports: [443]}\nrules:" + sandboxRules, argv: []string{"curl", "https://example.com"},
			want: want{network: true, ports: []uint16{443}, limitsTCP: true}},
		{name: "network false overrides the decision", main: "sandbox: {network: false}\nrules:" + sandboxRules, argv: []string{"curl", "https://example.com"},
			want: want{limitsTCP: true}},
		{name: "required", main: "sandbox: {required: true}\nrules:" + sandboxRules, argv: []string{"touch", "x"},
			want: want{required: true, requiredBy: "test.yaml"}},
		{name: "--require-sandbox", main: "rules:" + sandboxRules, opts: RunOptions{RequireSandbox: true}, argv: []string{"touch", "x"},
			want: want{required: true, requiredBy: "--require-sandbox"}},

		{name: "default caches", main: "rules:" + sandboxRules, argv: []string{"touch", "x"},
			want: want{write: []string{"$HOME/.cache", "$HOME/go/pkg"}, noWrite: []string{"$HOME/go", "$HOME/go/bin"}, read: []string{"$HOME/go/bin"}}},
		{name: "caches replace the defaults", argv: []string{"touch", "x"},
			main: "sandbox: {caches: [{path: ~/.cache/go-build, mode: write}, {path: ~/.rustup, mode: read}]}\nrules:" + sandboxRules,
			want: want{write: []string{"$HOME/.cache/go-build"}, noWrite: []string{"$HOME/.cache", "$HOME/go/pkg", "$HOME/.rustup"}, read: []string{"$HOME/.rustup"}}},
		{name: "caches: [] grants none", main: "sandbox: {caches: []}\nrules:" + sandboxRules, argv: []string{"touch", "x"},
			want: want{noWrite: []string{"$HOME/.cache", "$HOME/go/pkg"}}},
		{name: "security: extra: caches narrow the configured ones", argv: []string{"touch", "x"},
			main:  "sandbox: {caches: [{path: ~/.cache, mode: write}]}\nrules:" + sandboxRules,
			extra: "sandbox: {caches: [{path: ~/.cache, mode: read}, {path: ~/docs, mode: write}]}",
			want:  want{noWrite: []string{"$HOME/.cache", "$HOME/docs"}, read: []string{"$HOME/.cache"}}},
		{name: "security: extra: caches narrow the defaults", main: "rules:" + sandboxRules, argv: []string{"touch", "x"},
			extra: "sandbox: {caches: [{path: ~/go/pkg/mod, mode: write}, {path: ~/go/bin, mode: write}]}",
			want:  want{write: []string{"$HOME/go/pkg/mod"}, noWrite: []string{"$HOME/.cache", "$HOME/go/pkg", "$HOME/go/bin"}}},
		{name: "security: a cache that is home is refused", main: "sandbox: {caches: [{path: $HOME, mode: write}]}\nrules:" + sandboxRules, argv: []string{"touch", "x"},
			want: want{err: "is the home directory"}},

		{name: "security: a path holding home is refused", main: "sandbox: {write: [$ROOT]}\nrules:" + sandboxRules, argv: []string{"touch", "x"},
			want: want{err: "holds the home directory", hint: "remove $ROOT from the policy's sandbox section"}},
		{name: "security: a path inside mnemos's state is refused", main: "sandbox: {write: [~/.mnemos/x]}\nrules:" + sandboxRules, argv: []string{"touch", "x"},
			want: want{err: "is inside $HOME/.mnemos", hint: "remove $HOME/.mnemos/x"}},
		{name: "security: a secret is refused", main: "sandbox: {read: [~/.ssh]}\nrules:" + sandboxRules, argv: []string{"touch", "x"},
			want: want{err: "is inside $HOME/.ssh"}},
		{name: "security: a rule's path holding a secret is refused", argv: []string{"touch", "x"},
			main: "rules:\n  - {name: touch home, action: allow, command: {argv_prefix: [touch]}, sandbox: {read: [$HOME]}}" + sandboxRules,
			want: want{err: "is the home directory"}},

		{name: "extra: paths and network true are ignored", main: "rules:" + sandboxRules, argv: []string{"touch", "x"},
			extra: "sandbox: {write: [$OUT], read: [$OUT], network: true}",
			want:  want{noWrite: []string{"$OUT"}}},
		{name: "extra: required counts", main: "rules:" + sandboxRules, extra: "sandbox: {required: true}", argv: []string{"touch", "x"},
			want: want{required: true, requiredBy: "extra.yaml"}},
		{name: "extra: network false counts", main: "sandbox: {network: true}\nrules:" + sandboxRules, extra: "sandbox: {network: false}",
			argv: []string{"touch", "x"}, want: want{limitsTCP: true}},
		{name: "security: extra: ports intersect; its bind binds nothing the configured policy does not list", main: "sandbox: {network: true, ports: [22, 443]}\nrules:" + sandboxRules,
			extra: "sandbox: {ports: [443, 8443], bind: [8080]}", argv: []string{"touch", "x"},
			want: want{network: true, ports: []uint16{443}, limitsTCP: true}},
		{name: "extra: bind intersects", main: "sandbox: {network: true, bind: [0, 8080]}\nrules:" + sandboxRules,
			extra: "sandbox: {bind: [8080, 9090]}", argv: []string{"touch", "x"},
			want: want{network: true, bind: []uint16{8080}}},
		{name: "extra: no common port, no network", main: "sandbox: {network: true, ports: [22]}\nrules:" + sandboxRules,
			extra: "sandbox: {ports: [443]}", argv: []string{"touch", "x"}, want: want{limitsTCP: true}},
		{name: "extra: a configured rule does not widen extra's ports", argv: []string{"curl", "https://example.com"},
			main:  "sandbox: {ports: [443]}\nrules:\n  - {name: curl alt, action: allow, command: {argv_prefix: [curl]}, sandbox: {ports: [8443]}}" + sandboxRules,
			extra: "sandbox: {ports: [443]}\nrules:" + sandboxRules,
			want:  want{network: true, ports: []uint16{443}, limitsTCP: true}},
		{name: "security: extra: its rule adds no path to the configured policy", main: "rules:" + sandboxRules, argv: []string{"touch", "x"},
			extra: "rules:\n  - {name: touch, action: ask, command: {argv_prefix: [touch]}, sandbox: {write: [$OUT], required: true}}",
			want:  want{noWrite: []string{"$OUT"}, required: true, requiredBy: "extra.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newSandboxFixture(t, tt.main, tt.extra)
			sb, err := f.sandbox(t, tt.opts, tt.argv...)
			w := tt.want
			if w.err != "" {
				var se *SandboxError
				if !errors.As(err, &se) || !errors.Is(err, sandbox.ErrUnsafeGrant) || !strings.Contains(err.Error(), f.replacer.Replace(w.err)) {
					t.Fatalf("err %v, want a SandboxError containing %q", err, f.replacer.Replace(w.err))
				}
				if !strings.Contains(se.Hint, f.replacer.Replace(w.hint)) {
					t.Errorf("hint %q, want %q", se.Hint, f.replacer.Replace(w.hint))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := sb.spec
			for _, p := range w.write {
				if !slices.Contains(s.ReadWrite, f.replacer.Replace(p)) {
					t.Errorf("write %q lacks %s", s.ReadWrite, f.replacer.Replace(p))
				}
			}
			for _, p := range w.noWrite {
				if slices.Contains(slices.Concat(s.ReadWrite, s.ReadOnly), f.replacer.Replace(p)) {
					t.Errorf("spec grants %s", f.replacer.Replace(p))
				}
			}
			for _, p := range w.read {
				if !slices.Contains(s.ReadExec, f.replacer.Replace(p)) {
					t.Errorf("read %q lacks %s", s.ReadExec, f.replacer.Replace(p))
				}
			}
			if s.Network != w.network || !slices.Equal(s.ConnectPorts, w.ports) || !slices.Equal(s.BindPorts, w.bind) {
				t.Errorf("network %v ports %v bind %v, want %v %v %v", s.Network, s.ConnectPorts, s.BindPorts, w.network, w.ports, w.bind)
			}
			if s.Required != w.required || sb.requiredBy != w.requiredBy {
				t.Errorf("required %v by %q, want %v by %q", s.Required, sb.requiredBy, w.required, w.requiredBy)
			}
			if s.RequireTCP != w.limitsTCP {
				t.Errorf("RequireTCP %v, want %v", s.RequireTCP, w.limitsTCP)
			}
		})
	}
}

func TestSandboxErrorHints(t *testing.T) {
	tests := []struct {
		sb   runSandbox
		abi  int
		want string
	}{
		{runSandbox{requiredBy: "--require-sandbox"}, 0, ""},
		{runSandbox{requiredBy: "p.yaml"}, 0, "the policy p.yaml sets sandbox required: true"},
		{runSandbox{limitsTCP: true}, 3, "needs Landlock ABI 4 and this kernel has 3"},
		{runSandbox{limitsTCP: true, requiredBy: "--require-sandbox"}, 2, "remove those limits"},
	}
	for _, tt := range tests {
		got := tt.sb.unenforceableHint(sandbox.Status{ABI: tt.abi})
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%+v at ABI %d: %q, want %q", tt.sb, tt.abi, got, tt.want)
		}
	}
	e := &SandboxError{Err: fmt.Errorf("%w: TCP rules need Landlock ABI 4, the kernel has 3", sandbox.ErrUnenforceable)}
	if !strings.Contains(e.Error(), "TCP rules need Landlock ABI 4") {
		t.Errorf("SandboxError says %q", e.Error())
	}
}

// TestSandboxGrantHints pins the hint after DefaultSpec refuses a grant:
// it names what to move or change, not only the working directory.
func TestSandboxGrantHints(t *testing.T) {
	const home = "/home/u"
	tests := []struct {
		name string
		edit func(*sandbox.Options)
		want string
	}{
		{"mnemos under /tmp", func(o *sandbox.Options) { o.Protected = []string{"/tmp/mn", "/tmp/mn/policy.yaml"} },
			"keep mnemos's configuration and state out of /tmp (set MNEMOS_HOME or --home"},
		{"home under /tmp", func(o *sandbox.Options) { o.Home = "/tmp/u" },
			"keep your home directory out of /tmp (/tmp/u is under it)"},
		{"TMPDIR inside mnemos's state", func(o *sandbox.Options) {
			o.TempDirs, o.Protected = []string{"/var/lib/mn/tmp", "/tmp"}, []string{"/var/lib/mn"}
		}, "set TMPDIR to a directory that neither holds nor lies inside /var/lib/mn"},
		{"workspace is home", func(o *sandbox.Options) { o.Workspace = home },
			"run mnemos from a project directory: the sandbox never grants your whole home directory"},
		{"workspace holds a secret", func(o *sandbox.Options) { o.Workspace = home + "/.config" },
			"run mnemos from a project directory that neither holds nor lies inside /home/u/.config/gcloud"},
		{"policy path", func(o *sandbox.Options) { o.ExtraWrite = []string{home} },
			"remove /home/u from the policy's sandbox section"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := sandbox.Options{Workspace: "/srv/ws", Home: home, TempDirs: []string{"/tmp"},
				Protected: []string{"/var/lib/mn"}, Caches: []sandbox.Cache{}, HomeRead: []string{}, HomeExec: []string{}}
			tt.edit(&o)
			o.Secrets = sandbox.DefaultSecrets(o.Home)
			_, err := sandbox.DefaultSpec(o)
			var ge *sandbox.GrantError
			if !errors.As(err, &ge) {
				t.Fatalf("DefaultSpec: %v, want a GrantError", err)
			}
			if got := grantHint(ge); !strings.Contains(got, tt.want) {
				t.Errorf("hint %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

// TestRunRefusedIsRecorded: an allowed command refused because the
// sandbox cannot be enforced does not start, and the audit log says why
// after the allow decision.
func TestRunRefusedIsRecorded(t *testing.T) {
	f := newSandboxFixture(t, "rules:"+sandboxRules, "")
	f.g.cfg.Probe = func() sandbox.Status { return sandbox.Status{}.WithABI(0) }
	res, err := f.g.Run(context.Background(), f.req("touch", "$ROOT/ws/made"), Stdio{}, RunOptions{RequireSandbox: true})
	var se *SandboxError
	if !errors.As(err, &se) || !errors.Is(err, sandbox.ErrUnenforceable) || res.Ran {
		t.Fatalf("Run: ran %v, %v; want an unenforceable SandboxError", res.Ran, err)
	}
	if fileExists(filepath.Join(f.ws, "made")) {
		t.Fatal("the command ran")
	}
	if n := len(f.audit.kinds); n == 0 || f.audit.kinds[n-1] != "run.refused" || slices.Contains(f.audit.kinds, "run.started") {
		t.Fatalf("audit kinds %q, want run.refused last and no run.started", f.audit.kinds)
	}
	ev := f.audit.events[len(f.audit.events)-1]
	if got := fmt.Sprint(ev["sandbox"]); !strings.Contains(got, "landlock_abi=0") || !strings.Contains(got, "required_by=--require-sandbox") {
		t.Errorf("run.refused sandbox %s", got)
	}
	if !strings.Contains(fmt.Sprint(ev["error"]), "cannot be enforced") {
		t.Errorf("run.refused error %v", ev["error"])
	}
}

// TestNamedNeeds pins what the hint after a failure looks at.
func TestNamedNeeds(t *testing.T) {
	f := newSandboxFixture(t, "rules:"+sandboxRules, "")
	tests := []struct {
		argv  []string
		want  []sandbox.Need
		never []sandbox.Need
	}{
		{argv: []string{"touch", "$OUT/x"}, want: []sandbox.Need{{Path: "$OUT/x", Write: true}}},
		{argv: []string{"rm", "$OUT/x"}, want: []sandbox.Need{{Path: "$OUT", Write: true}}, never: []sandbox.Need{{Path: "$OUT/x", Write: true}}},
		{argv: []string{"cat", "$OUT/missing", "../out"}, want: []sandbox.Need{{Path: "$OUT/missing"}, {Path: "$OUT"}}},
		{argv: []string{"sh", "-c", "echo hi > $OUT/y; wc -l < ~/docs/z"}, want: []sandbox.Need{{Path: "$OUT/y", Write: true}, {Path: "$HOME/docs/z"}}},
		{argv: []string{"python3", "-c", `open("/etc/passwd").read()`, "--out=$OUT/new.json", "$OUT"},
			want:  []sandbox.Need{{Path: "$OUT/new.json", Write: true}, {Path: "$OUT"}},
			never: []sandbox.Need{{Path: "/etc/passwd"}}},
		{argv: []string{"curl", "https://example.com:8443/x", "http://example.org/"},
			want: []sandbox.Need{{Host: "example.com", Port: 8443}, {Host: "example.org", Port: 80}}},
		{argv: []string{"git", "push", "git@github.com:o/r.git"}, want: []sandbox.Need{{Host: "github.com", Port: 22}}},
		// A revision and a commit message are no remotes.
		{argv: []string{"git", "show", "HEAD:main.go"}, never: []sandbox.Need{{Host: "HEAD", Port: 22}}},
		{argv: []string{"git", "commit", "-m", "fix: typo"}, never: []sandbox.Need{{Host: "fix", Port: 22}}},
		{argv: []string{"ssh", "-p", "2222", "host.example.com", "ls"}, want: []sandbox.Need{{Host: "host.example.com", Port: 2222}}},
		{argv: []string{"nc", "-z", "localhost", "8080"}, want: []sandbox.Need{{Host: "localhost", Port: 8080}}},
		{argv: []string{"redis-cli", "-h", "db.internal:6379", "[::1]:5432"}, want: []sandbox.Need{{Host: "db.internal", Port: 6379}, {Host: "::1", Port: 5432}}},
		{argv: []string{"echo", "12:30", "a:b", "-o/x/y"}, never: []sandbox.Need{{Host: "12", Port: 30}, {Path: "/x/y", Write: true}}},
		{argv: []string{"python3", "-m", "http.server"}, want: []sandbox.Need{{Port: 8000, Bind: true}}},
		{argv: []string{"python3", "-m", "http.server", "9000"}, want: []sandbox.Need{{Port: 9000, Bind: true}}},
		{argv: []string{"php", "-S", "localhost:8080"}, want: []sandbox.Need{{Port: 8080, Bind: true}}},
		{argv: []string{"nc", "-lp", "4444"}, want: []sandbox.Need{{Port: 4444, Bind: true}}},
		{argv: []string{"nc", "-l", "4445"}, want: []sandbox.Need{{Port: 4445, Bind: true}}},
		{argv: []string{"hugo", "server", "--port", "1313"}, want: []sandbox.Need{{Port: 1313, Bind: true}}},
		{argv: []string{"app", "--bind=127.0.0.1:5000"}, want: []sandbox.Need{{Port: 5000, Bind: true}},
			never: []sandbox.Need{{Host: "127.0.0.1", Port: 5000}}},
	}
	for _, tt := range tests {
		req := f.req(tt.argv...)
		dec, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		got := f.g.namedNeeds(req, dec)
		for _, n := range tt.want {
			n.Path = f.replacer.Replace(n.Path)
			if !slices.Contains(got, n) {
				t.Errorf("%q: needs %+v lack %+v", tt.argv, got, n)
			}
		}
		for _, n := range tt.never {
			n.Path = f.replacer.Replace(n.Path)
			if slices.Contains(got, n) {
				t.Errorf("%q: needs %+v hold %+v", tt.argv, got, n)
			}
		}
		if slices.ContainsFunc(got, func(n sandbox.Need) bool { return n.Path == "" && n.Port == 0 }) {
			t.Errorf("%q: empty need in %+v", tt.argv, got)
		}
	}
}

func requireLandlock(tb testing.TB, abi int) {
	tb.Helper()
	if got := sandbox.Probe().ABI; got < abi {
		tb.Skipf("needs Landlock ABI %d, the kernel has %d", abi, got)
	}
}

// run runs argv through the gate and returns the result and the
// command's stderr.
func (f *sandboxFixture) run(t *testing.T, argv ...string) (RunResult, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	res, err := f.g.Run(context.Background(), f.req(argv...), Stdio{Stdout: &stdout, Stderr: &stderr}, RunOptions{})
	if err != nil {
		t.Fatalf("run %q: %v", argv, err)
	}
	if !res.Ran {
		t.Fatalf("run %q: not run: %s", argv, res.Decision.Reason)
	}
	return res, stderr.String()
}

// TestRunPolicyWriteAndHint: the policy's write path lets the command
// write there; without it the kernel refuses, the command says so on its
// own stderr, and the gate's hint names the snippet that grants it.
func TestRunPolicyWriteAndHint(t *testing.T) {
	requireLandlock(t, 1)
	f := newSandboxFixture(t, "rules:"+sandboxRules, "")
	want := "the sandbox does not let commands write " + f.out + "/denied; to allow it, add to the policy: sandbox: {write: [" + f.out + "]}"
	// A write the decision sees is asked before anything runs, naming the
	// grant (decideWithSandbox).
	if d := f.decideDry(t, "touch", "$OUT/denied"); d.Outcome != policy.Ask || len(d.Reach) != 1 || d.Reach[0].Policy != want || !d.Reach[0].Write {
		t.Errorf("touch outside the sandbox: %s (%s), reach %+v; want ask naming %q", d.Outcome, d.Reason, d.Reach, want)
	}
	res, stderr := f.runHidden(t, "$OUT/denied")
	if res.ExitCode == 0 || fileExists(filepath.Join(f.out, "denied")) {
		t.Fatalf("touch outside the sandbox: exit %d", res.ExitCode)
	}
	// Outside what the sandbox grants, /var (like home and /run) shows
	// only what is granted.
	if !strings.Contains(stderr, "Permission denied") && !strings.Contains(stderr, "No such file or directory") {
		t.Errorf("the command's stderr %q", stderr)
	}
	if res.Hint != want {
		t.Errorf("hint %q, want %q", res.Hint, want)
	}
	var refused bool
	for i, k := range f.audit.kinds {
		if k == "run.finished" {
			refused = strings.Contains(fmt.Sprint(f.audit.events[i]["sandbox"]), "refused")
		}
	}
	if !refused {
		t.Error("run.finished does not list the refusal")
	}

	// Nothing named is refused: no hint.
	if res, _ := f.run(t, "cat", "$ROOT/ws/missing"); res.ExitCode == 0 || res.Hint != "" {
		t.Errorf("cat of a missing file: exit %d, hint %q", res.ExitCode, res.Hint)
	}
	if res, _ := f.run(t, "touch", "$ROOT/ws/fine"); res.ExitCode != 0 || res.Hint != "" {
		t.Errorf("touch in the workspace: exit %d, hint %q", res.ExitCode, res.Hint)
	}

	f = newSandboxFixture(t, "sandbox: {write: [$OUT]}\nrules:"+sandboxRules, "")
	if res, stderr := f.run(t, "touch", "$OUT/granted"); res.ExitCode != 0 || !fileExists(filepath.Join(f.out, "granted")) {
		t.Fatalf("touch in the policy's write path: exit %d: %s", res.ExitCode, stderr)
	}
	for i, k := range f.audit.kinds {
		if k == "run.started" && !strings.Contains(fmt.Sprint(f.audit.events[i]["sandbox"]), "policy_write=["+f.out+"]") {
			t.Errorf("run.started sandbox %v lacks the policy's write path", f.audit.events[i]["sandbox"])
		}
	}
}

// TestRunPolicyReadRunsPrograms: a program outside every grant does not
// start, and the hint names the policy line that lets it run; the
// policy's read path then lets commands run programs there.
func TestRunPolicyReadRunsPrograms(t *testing.T) {
	requireLandlock(t, 1)
	prog := "$OUT/bin/prog"
	rules := "rules:" + sandboxRules + "  - {name: prog, action: allow, command: {argv_prefix: [" + prog + "]}}\n"
	f := newSandboxFixture(t, rules, "")
	bin, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.out, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.out, "bin", "prog"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := f.g.Run(context.Background(), f.req(prog), Stdio{}, RunOptions{})
	var se *StartError
	if !errors.As(err, &se) || res.ExitCode != 127 {
		t.Fatalf("a program outside the sandbox: exit %d, %v; want a StartError", res.ExitCode, err)
	}
	if want := "add `sandbox: {read: [" + f.out + "/bin/prog]}` to the policy to let commands read and run it"; !strings.Contains(se.Hint, want) {
		t.Errorf("hint %q, want it to contain %q", se.Hint, want)
	}
	f = newSandboxFixture(t, "sandbox: {read: [$OUT/bin]}\n"+rules, "")
	if err := os.MkdirAll(filepath.Join(f.out, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.out, "bin", "prog"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if res, stderr := f.run(t, prog); res.ExitCode != 0 {
		t.Errorf("a program in the policy's read path: exit %d: %s", res.ExitCode, stderr)
	}
	// Reading does not let it change anything there.
	if res, _ := f.runHidden(t, "$OUT/bin/new"); res.ExitCode == 0 || fileExists(filepath.Join(f.out, "bin", "new")) {
		t.Error("touch in the policy's read path succeeded")
	}
}

// TestRunPolicyPortsLimitConnect: with ports, the command connects to
// those TCP ports only, loopback included.
func TestRunPolicyPortsLimitConnect(t *testing.T) {
	requireLandlock(t, 4)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("needs curl")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	url := srv.URL + "/"
	curl := []string{"curl", "-sS", "--noproxy", "*", "-o", "/dev/null", url}

	f := newSandboxFixture(t, "sandbox: {ports: [1]}\nrules:"+sandboxRules, "")
	res, _ := f.run(t, curl...)
	if res.ExitCode == 0 {
		t.Fatal("connected to a port the policy does not list")
	}
	if !strings.Contains(res.Hint, "sandbox: {ports: [1, "+port+"]}") {
		t.Errorf("hint %q does not grant port %s", res.Hint, port)
	}

	f = newSandboxFixture(t, "sandbox: {ports: ["+port+"]}\nrules:"+sandboxRules, "")
	if res, stderr := f.run(t, curl...); res.ExitCode != 0 || res.Hint != "" {
		t.Errorf("listed port: exit %d, hint %q: %s", res.ExitCode, res.Hint, stderr)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// BenchmarkSandboxStart is what the sandbox adds to a run of /bin/true:
// "exec" starts and waits for it plainly; "sandbox" starts it with
// sandbox.Start under the spec the gate builds for `mnemos run --
// /bin/true` (the default sandbox with mnemos's files and the usual
// secrets denied); "spec" is building that spec from the decision and the
// policy, which every run does too. bench.sh reports them side by side.
func BenchmarkSandboxStart(b *testing.B) {
	requireLandlock(b, 1)
	f := newSandboxFixture(b, "rules:"+sandboxRules, "")
	sb, err := f.sandbox(b, RunOptions{}, "/bin/true")
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, start func(*exec.Cmd) error) {
		for b.Loop() {
			cmd := exec.Command("/bin/true")
			if err := start(cmd); err != nil {
				b.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("exec", func(b *testing.B) { run(b, (*exec.Cmd).Start) })
	b.Run("sandbox", func(b *testing.B) {
		run(b, func(cmd *exec.Cmd) error {
			_, err := sandbox.Start(cmd, sb.spec)
			return err
		})
	})
	// The private mount view's share: the same start without it, and with
	// it built by the helper process, as a user without CAP_SYS_ADMIN
	// starts commands.
	noView, byHelper := sb.spec, sb.spec
	noView.View = false
	byHelper.ViewByHelper = true
	b.Run("noview", func(b *testing.B) {
		run(b, func(cmd *exec.Cmd) error {
			_, err := sandbox.Start(cmd, noView)
			return err
		})
	})
	if st := sandbox.Probe(); st.View {
		b.Run("helper", func(b *testing.B) {
			run(b, func(cmd *exec.Cmd) error {
				_, err := sandbox.Start(cmd, byHelper)
				return err
			})
		})
	}
	// As a run starts it: with the path rules prepared while the decision
	// was made (that work is off the clock here, as it is off the run's
	// critical path).
	st := sandbox.Probe()
	b.Run("prepared", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			pre := sandbox.Prepare(sb.spec, st)
			pre.Wait()
			cmd := exec.Command("/bin/true")
			b.StartTimer()
			if _, err := sandbox.StartPrepared(cmd, sb.spec, st, pre); err != nil {
				b.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
	req := f.req("/bin/true")
	dec, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("spec", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.g.sandboxSpec(req, dec, RunOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzArgNeeds: whatever the arguments, the needs read from them are an
// absolute path or a TCP port, never both and never neither.
func FuzzArgNeeds(f *testing.F) {
	for _, s := range []string{"curl https://example.com:8443/x", "git push git@github.com:o/r.git", "ssh -p 2222 h.example.com",
		"nc -z localhost 8080", "cp ./a ../b ~/c", "x [::1]:5432 12:30 --out=/var/tmp/o", "x http://[::1 :0 a:65536"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var words []shellparse.Word
		for _, w := range strings.Fields(line) {
			words = append(words, shellparse.Word{Value: w})
		}
		abs := func(p string) string { return filepath.Join("/work", p) }
		for _, n := range argNeeds(shellparse.Command{Argv: words}, abs) {
			if (n.Path == "") == (n.Port == 0) || n.Path != "" && !filepath.IsAbs(n.Path) {
				t.Fatalf("%q: need %+v", line, n)
			}
		}
	})
}

// pythonFixture is a sandbox fixture whose policy allows `python3 -c`,
// with a fake key in home/.ssh, mnemos's policy file and state database
// in place, and a real, hash-chained audit log.
func pythonFixture(t *testing.T, policySrc string) *sandboxFixture {
	t.Helper()
	requireLandlock(t, 1)
	if !fileExists("/usr/bin/python3") {
		t.Skip("needs /usr/bin/python3")
	}
	f := newSandboxFixture(t, policySrc+"rules:"+sandboxRules+
		"  - {name: python, action: allow, command: {argv_prefix: [/usr/bin/python3, -c]}}\n", "")
	cfg := f.g.cfg
	cfg.Audit = audit.Open(cfg.Paths.AuditFile, audit.Options{})
	f.g.Close()
	f.g = New(cfg)
	if _, err := f.g.Store(context.Background()); err != nil { // creates state.db
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg.Paths.PolicyFile, []byte("level: readonly\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.home, ".ssh", "id_rsa"), []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// py runs a python3 snippet through the gate with extra arguments.
func (f *sandboxFixture) py(t *testing.T, code string, args ...string) (RunResult, string) {
	t.Helper()
	return f.run(t, append([]string{"/usr/bin/python3", "-c", code}, args...)...)
}

// lastFinished is the exit status run.finished recorded last in the real
// audit log.
func (f *sandboxFixture) lastFinished(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(f.g.cfg.Paths.AuditFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, `"msg":"run.finished"`) {
		t.Fatalf("last audit event is not run.finished: %s", last)
	}
	_, rest, _ := strings.Cut(last, `"exit_status":`)
	status, _, _ := strings.Cut(rest, ",")
	return status
}

// TestSecuritySandboxedInterpreterCannotTouchMnemos: an interpreter the
// policy allows runs confined. It writes in the workspace, and nowhere
// else; it cannot read a key whose path it builds at run time, nor change
// mnemos's policy, state database or audit log (which still verifies),
// nor signal mnemos; its children are confined too; and mnemos records
// run.finished with its exit status.
func TestSecuritySandboxedInterpreterCannotTouchMnemos(t *testing.T) {
	f := pythonFixture(t, "")
	p := f.g.cfg.Paths

	if res, stderr := f.py(t, `open("inside.txt", "w").write("ok")`); res.ExitCode != 0 || !fileExists(filepath.Join(f.ws, "inside.txt")) {
		t.Fatalf("write in the workspace: exit %d: %s", res.ExitCode, stderr)
	}
	if got := f.lastFinished(t); got != "0" {
		t.Errorf("run.finished exit_status %s, want 0", got)
	}

	refused := []struct{ name, code string }{
		{"write outside the workspace", `import sys; open(sys.argv[1] + "/x", "w").write("x")`},
		{"read a key whose path is built at run time", `import sys; print(open(sys.argv[2] + "/.s" + "sh/id_" + "rsa").read())`},
		{"append to the policy", `import sys; open(sys.argv[2] + M + "poli" + "cy.yaml", "a").write("level: full\n")`},
		{"append to the state database", `import sys; open(sys.argv[2] + M + "sta" + "te.db", "ab").write(b"x")`},
		{"append to the audit log", `import sys; open(sys.argv[2] + M + "aud" + "it.jsonl", "a").write("{}\n")`},
		{"replace the policy", `import os, sys; open("p", "w").write("level: full\n"); os.rename("p", sys.argv[2] + M + "poli" + "cy.yaml")`},
		{"a grandchild writes outside", `import subprocess, sys; subprocess.run(["sh", "-c", "echo x > \"$0/grandchild\"", sys.argv[1]], check=True)`},
		{"signal mnemos", `import os, signal; os.kill(os.getppid(), signal.SIGTERM)`},
	}
	for _, r := range refused {
		// The paths are built at run time, where the guard cannot see them.
		res, stderr := f.py(t, `M = "/.mne" + "mos/"; `+r.code, f.out, f.home)
		if res.ExitCode == 0 {
			t.Errorf("%s: succeeded, want refused", r.name)
		}
		if !strings.Contains(stderr, "PermissionError") && !strings.Contains(stderr, "Permission denied") &&
			!strings.Contains(stderr, "FileNotFoundError") && !strings.Contains(stderr, "Directory nonexistent") {
			t.Errorf("%s: exit %d, not a permission error: %s", r.name, res.ExitCode, stderr)
		}
		if got := f.lastFinished(t); got != strconv.Itoa(res.ExitCode) {
			t.Errorf("%s: run.finished exit_status %s, want %d", r.name, got, res.ExitCode)
		}
	}
	if ents, _ := os.ReadDir(f.out); len(ents) != 0 {
		t.Errorf("%s holds %d entries, want none", f.out, len(ents))
	}
	if b, _ := os.ReadFile(p.PolicyFile); string(b) != "level: readonly\n" {
		t.Errorf("policy file is now %q", b)
	}
	rep, err := audit.Verify(p.AuditFile, "")
	if err != nil {
		t.Fatalf("audit verify: %v (%+v)", err, rep)
	}

	// An exit status passes through and is recorded as it is.
	if res, _ := f.py(t, `raise SystemExit(42)`); res.ExitCode != 42 || f.lastFinished(t) != "42" {
		t.Errorf("exit 42: got %d, recorded %s", res.ExitCode, f.lastFinished(t))
	}
}

// TestRunLoopbackNeedsNetwork: without network, a confined command can
// neither connect to a loopback server nor bind a port; with the policy's
// network: true it connects.
func TestRunLoopbackNeedsNetwork(t *testing.T) {
	requireLandlock(t, 4)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello"))
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	connect := `import socket, sys; print(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).recv(5).decode())`
	bind := `import socket; socket.socket().bind(("127.0.0.1", 0))`

	f := pythonFixture(t, "")
	for _, code := range []string{connect, bind} {
		if res, stderr := f.py(t, code, port); res.ExitCode == 0 || !strings.Contains(stderr, "PermissionError") {
			t.Errorf("without network: exit %d: %s", res.ExitCode, stderr)
		}
	}

	f = pythonFixture(t, "sandbox: {network: true}\n")
	var stdout bytes.Buffer
	res, err := f.g.Run(context.Background(), f.req("/usr/bin/python3", "-c", connect, port), Stdio{Stdout: &stdout, Stderr: &stdout}, RunOptions{})
	if err != nil || res.ExitCode != 0 || strings.TrimSpace(stdout.String()) != "hello" {
		t.Errorf("with network: exit %d, %v: %s", res.ExitCode, err, stdout.String())
	}
}

// TestRunRelaysSignals: SIGINT, SIGTERM, SIGHUP and SIGWINCH sent to
// mnemos while it runs a confined command reach the command, and mnemos
// records how it ended.
func TestRunRelaysSignals(t *testing.T) {
	f := pythonFixture(t, "")
	code := `import os, signal, sys, time
n = int(sys.argv[1])
signal.signal(n, lambda *_: os._exit(n))
open("ready", "w").close()
time.sleep(30)
sys.exit(99)`
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGWINCH} {
		ready := filepath.Join(f.ws, "ready")
		os.Remove(ready)
		done := make(chan RunResult, 1)
		go func() {
			res, err := f.g.Run(context.Background(), f.req("/usr/bin/python3", "-c", code, strconv.Itoa(int(sig))), Stdio{}, RunOptions{})
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		for deadline := time.Now().Add(20 * time.Second); !fileExists(ready); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%v: the command never started", sig)
			}
		}
		// mnemos relays what it is sent; here mnemos is this process.
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		res := <-done
		if res.ExitCode != int(sig) {
			t.Errorf("%v: exit %d, want %d (the handler's)", sig, res.ExitCode, int(sig))
		}
		if got := f.lastFinished(t); got != strconv.Itoa(int(sig)) {
			t.Errorf("%v: run.finished exit_status %s", sig, got)
		}
	}
}

// TestSecurityRunSandboxFollowsTheDecision: the sandbox prepared while the
// decision is made assumes no rule changes it; a rule's override that
// does is honoured, and one run's override never reaches another run.
func TestSecurityRunSandboxFollowsTheDecision(t *testing.T) {
	requireLandlock(t, 1)
	f := newSandboxFixture(t, "rules:\n  - {name: touch out, action: allow, priority: 10, command: {argv_prefix: [touch, $OUT/ok]}, sandbox: {write: [$OUT]}}"+sandboxRules, "")
	if res, stderr := f.run(t, "touch", "$OUT/ok"); res.ExitCode != 0 || !fileExists(filepath.Join(f.out, "ok")) {
		t.Fatalf("the rule's write path was not granted: exit %d: %s", res.ExitCode, stderr)
	}
	if res, _ := f.runHidden(t, "$OUT/other"); res.ExitCode == 0 || fileExists(filepath.Join(f.out, "other")) {
		t.Fatal("a run without the override could write the override's path")
	}
	if res, _ := f.run(t, "touch", "$OUT/ok"); res.ExitCode != 0 {
		t.Fatal("the override was lost on a later run")
	}
}

// TestDefaultCachesAgree: the policy's default caches, which a project
// layer narrows, are the sandbox's.
func TestDefaultCachesAgree(t *testing.T) {
	home := "/home/u"
	var got []sandbox.Cache
	for _, c := range (policy.SandboxConfig{Caches: policy.DefaultCaches()}).ExpandHome(home).Caches {
		got = append(got, sandbox.Cache{Path: c.Path, Write: c.Write})
	}
	if want := sandbox.DefaultCaches(home); !slices.Equal(got, want) {
		t.Fatalf("policy.DefaultCaches = %v\nsandbox.DefaultCaches = %v", got, want)
	}
}

// TestRunOnTerminalSignalsOnce: run from a terminal's foreground, the
// command gets a ^C typed on the terminal once, and a SIGINT sent to
// mnemos with kill once too, and mnemos passes its end through (130 when
// the interrupt killed it). mnemos here is a copy of this test binary,
// started as the session leader of a new pseudo-terminal.
func TestRunOnTerminalSignalsOnce(t *testing.T) {
	if mode := os.Getenv("MNEMOS_TTY_TEST"); mode != "" {
		ttySignalHelper(t, mode)
		return
	}
	requireLandlock(t, 1)
	if !fileExists("/usr/bin/python3") {
		t.Skip("needs /usr/bin/python3")
	}
	for _, tc := range []struct {
		mode, via, want string
	}{
		{"count", "kill", "SIGINTS 1\r\nEXIT 0"},
		{"count", "terminal", "SIGINTS 1\r\nEXIT 0"},
		{"die", "kill", "EXIT 130"},
		{"die", "terminal", "EXIT 130"},
	} {
		t.Run(tc.mode+" via "+tc.via, func(t *testing.T) {
			master, slave := openPTY(t)
			dir := t.TempDir()
			helper := exec.Command(os.Args[0], "-test.run=^TestRunOnTerminalSignalsOnce$")
			helper.Env = append(os.Environ(), "MNEMOS_TTY_TEST="+tc.mode, "MNEMOS_TTY_READY="+filepath.Join(dir, "ready"))
			helper.Stdin, helper.Stdout, helper.Stderr = slave, slave, slave
			helper.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			slave.Close()
			out := make(chan string, 1)
			go func() {
				b, _ := io.ReadAll(master) // EIO once the helper is gone
				out <- string(b)
			}()
			for deadline := time.Now().Add(20 * time.Second); !fileExists(filepath.Join(dir, "ready")); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					helper.Process.Kill()
					t.Fatalf("the command never started: %s", <-out)
				}
			}
			if tc.via == "kill" {
				if err := helper.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			} else if _, err := master.Write([]byte{3}); err != nil { // ^C
				t.Fatal(err)
			}
			if err := helper.Wait(); err != nil {
				t.Errorf("helper: %v", err)
			}
			master.Close()
			if got := <-out; !strings.Contains(got, tc.want) {
				t.Errorf("terminal shows %q, want %q", got, tc.want)
			}
		})
	}
}

// ttySignalHelper is the mnemos of TestRunOnTerminalSignalsOnce: it runs a
// python command that counts the SIGINTs it gets for two seconds (count)
// or dies of the first (die), and prints its exit status.
func ttySignalHelper(t *testing.T, mode string) {
	f := pythonFixture(t, "")
	code := `import os, signal, sys, time
n = 0
def h(*_):
    global n
    n += 1
signal.signal(signal.SIGINT, h if sys.argv[1] == "count" else signal.SIG_DFL)
open(sys.argv[2], "w").close()
end = time.time() + 2
while time.time() < end:
    time.sleep(0.02)
print("SIGINTS", n, flush=True)`
	res, err := f.g.Run(context.Background(), f.req("/usr/bin/python3", "-c", code, mode, os.Getenv("MNEMOS_TTY_READY")),
		Stdio{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("EXIT %d\n", res.ExitCode)
}

// openPTY opens a pseudo-terminal pair (Linux: TIOCSPTLCK and TIOCGPTN).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	const tiocsptlck, tiocgptn = 0x40045431, 0x80045430
	if runtime.GOOS != "linux" {
		t.Skip("opens a Linux pseudo-terminal")
	}
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), tiocsptlck, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), tiocgptn)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// TestSecurityNothingOutlivesTheRun: what a command leaves running in the
// background, however deep, is stopped when it ends, so it cannot write
// after the run (and after the check of what runs later) is over.
func TestSecurityNothingOutlivesTheRun(t *testing.T) {
	requireLandlock(t, 1)
	f := newSandboxFixture(t, "rules:"+sandboxRules+"  - {name: sh, action: allow, command: {argv_prefix: [sh, -c]}}\n", "")
	// Their output goes elsewhere: the test's pipes would otherwise make
	// it wait for them.
	script := `(sleep 1; touch late1) >/dev/null 2>&1 & sh -c "(sleep 1; touch late2) >/dev/null 2>&1 &" >/dev/null 2>&1 & sh -c "sh -c \"(sleep 1; touch late3) >/dev/null 2>&1 &\" >/dev/null 2>&1 &" >/dev/null 2>&1 &`
	res, stderr := f.run(t, "sh", "-c", script)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, stderr)
	}
	if len(res.Reaped) < 3 {
		t.Errorf("reaped %q, want the background processes", res.Reaped)
	}
	time.Sleep(1500 * time.Millisecond)
	for _, n := range []string{"late1", "late2", "late3"} {
		if fileExists(filepath.Join(f.ws, n)) {
			t.Errorf("%s was written after the run", n)
		}
	}
}

// TestToolchainRootFollowsTheCommand: a version manager's root under home
// is granted read and execute when the command's PATH reaches into it or
// the command names a program inside it, and never for writing.
func TestToolchainRootFollowsTheCommand(t *testing.T) {
	f := newSandboxFixture(t, "level: full\nrules:"+sandboxRules, "")
	root := filepath.Join(f.home, ".rbenv")
	prog := filepath.Join(root, "versions", "3.3", "bin", "ruby")
	if err := os.MkdirAll(filepath.Dir(prog), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sb, err := f.sandbox(t, RunOptions{}, "/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(sb.spec.ReadExec, root) {
		t.Errorf("rbenv's root granted to a command that does not reach it: %v", sb.spec.ReadExec)
	}
	sb, err = f.sandbox(t, RunOptions{}, prog, "--version")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(sb.spec.ReadExec, root) || slices.Contains(sb.spec.ReadWrite, root) {
		t.Errorf("rbenv's root should be read and execute for %s: read-exec %v, write %v", prog, sb.spec.ReadExec, sb.spec.ReadWrite)
	}
}

func (f *sandboxFixture) decideDry(t *testing.T, argv ...string) Decision {
	t.Helper()
	d, err := f.g.Decide(context.Background(), f.req(argv...), Mode{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	return d
}
