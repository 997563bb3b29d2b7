package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// tree makes dirs and files (names ending in "/" are directories) under a
// fresh temp dir and returns its real path.
func tree(t testing.TB, names ...string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		p := filepath.Join(root, n)
		if strings.HasSuffix(n, "/") {
			err = os.MkdirAll(p, 0o755)
		} else if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
			err = os.WriteFile(p, []byte(n), 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestSecurityDefaultSpecRefusesUnsafeGrants(t *testing.T) {
	root := tree(t, "home/.ssh/id_rsa", "home/.config/mnemos/policy.yaml", "home/src/p/", "home/.cache/", "tmp/", "ws-with-state/state/")
	home := filepath.Join(root, "home")
	base := Options{
		Workspace: filepath.Join(home, "src", "p"),
		Home:      home,
		TempDirs:  []string{filepath.Join(root, "tmp")},
		Protected: []string{filepath.Join(home, ".config", "mnemos"), filepath.Join(root, "ws-with-state", "state")},
		Secrets:   DefaultSecrets(home),
	}
	tests := []struct {
		name string
		edit func(*Options)
		want string // "" for success
	}{
		{"a project under home", func(*Options) {}, ""},
		{"workspace is home", func(o *Options) { o.Workspace = home }, "is the home directory"},
		{"workspace is home spelled with a dot-dot", func(o *Options) { o.Workspace = home + "/src/.." }, "is the home directory"},
		{"workspace is the root", func(o *Options) { o.Workspace = "/" }, "holds the home directory"},
		{"workspace holds mnemos's state", func(o *Options) { o.Workspace = filepath.Join(root, "ws-with-state") }, "holds"},
		{"workspace inside ~/.ssh", func(o *Options) { o.Workspace = filepath.Join(home, ".ssh") }, "is inside"},
		{"workspace is mnemos's config", func(o *Options) { o.Workspace = filepath.Join(home, ".config", "mnemos") }, "is inside"},
		{"temp dir holds a protected path", func(o *Options) { o.TempDirs = []string{root} }, "holds the home directory"},
		{"extra read is home", func(o *Options) { o.ExtraRead = []string{home} }, "is the home directory"},
		{"extra read holds ~/.ssh", func(o *Options) { o.ExtraRead = []string{filepath.Join(home, ".config")} }, "holds"},
		{"extra write inside a secret", func(o *Options) { o.ExtraWrite = []string{filepath.Join(home, ".aws", "x")} }, "is inside"},
		{"extra write is home", func(o *Options) { o.ExtraWrite = []string{home} }, "name the directories under it"},
		{"protected path not created yet", func(o *Options) {
			o.Protected = append(o.Protected, filepath.Join(home, "src", "p", ".mnemos"))
		}, "holds"},
		{"a cache is home", func(o *Options) { o.Caches = []Cache{{Path: home + "/", Write: true}} }, "is the home directory"},
		{"a home tool path holds home", func(o *Options) { o.HomeExec = []string{filepath.Dir(home)} }, "holds the home directory"},
		{"a cache holding a secret is left to Start", func(o *Options) { o.Caches = []Cache{{Path: filepath.Join(home, ".config"), Write: true}} }, ""},
		{"relative workspace", func(o *Options) { o.Workspace = "src" }, "not an absolute path"},
		{"relative secret", func(o *Options) { o.Secrets = []string{".ssh"} }, "not absolute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			o.Secrets = slices.Clone(base.Secrets)
			o.Protected = slices.Clone(base.Protected)
			tt.edit(&o)
			s, err := DefaultSpec(o)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				checkNeverGrantsHome(t, s, home)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			if strings.Contains(tt.name, "relative") == errors.Is(err, ErrUnsafeGrant) {
				t.Errorf("errors.Is(err, ErrUnsafeGrant) = %v", errors.Is(err, ErrUnsafeGrant))
			}
			var ge *GrantError
			if errors.As(err, &ge) && ge.Policy != strings.Contains(tt.name, "extra") {
				t.Errorf("GrantError.Policy = %v for %s", ge.Policy, ge.What)
			}
		})
	}
}

func checkNeverGrantsHome(t *testing.T, s Spec, home string) {
	t.Helper()
	for _, g := range slices.Concat(s.ReadExec, s.ReadOnly, s.ReadWrite, s.Devices, s.Terminals) {
		if within(home, filepath.Clean(g)) {
			t.Errorf("spec grants %s, which holds home %s", g, home)
		}
	}
}

func TestDefaultSpec(t *testing.T) {
	root := tree(t, "home/.cache/", "home/go/pkg/", "home/go/bin/", "home/.rustup/", "home/.gitconfig", "home/.local/bin/", "home/p/")
	home := filepath.Join(root, "home")
	ws := filepath.Join(home, "p")
	missing := filepath.Join(root, "nowhere")
	s, err := DefaultSpec(Options{Workspace: ws, Home: home, TempDirs: []string{root + "/tmp"}, ExtraRead: []string{missing},
		Protected: []string{home + "/.config/mnemos"}, Network: true, Ports: []uint16{443}, Bind: []uint16{8080}, RequireTCP: true})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		list  []string
		has   []string
		hasnt []string
	}{
		{"read-write", s.ReadWrite, []string{ws, root + "/tmp", home + "/.cache", home + "/go/pkg"}, []string{home + "/.npm", home, home + "/go", home + "/go/bin", home + "/.rustup"}},
		{"read-exec", s.ReadExec, []string{"/usr", "/etc", home + "/.local/bin", home + "/go/bin", home + "/.rustup", missing}, []string{home + "/.nvm", "/dev"}},
		{"read-only", s.ReadOnly, []string{"/proc", home + "/.gitconfig"}, []string{home + "/.config/git", missing}},
		{"devices", s.Devices, []string{"/dev/null", "/dev/urandom"}, []string{"/dev/sda", "/dev/mem"}},
		{"deny", s.Deny, []string{home + "/.config/mnemos"}, nil},
	}
	for _, tt := range tests {
		for _, p := range tt.has {
			if !slices.Contains(tt.list, p) {
				t.Errorf("%s lacks %s: %q", tt.name, p, tt.list)
			}
		}
		for _, p := range tt.hasnt {
			if slices.Contains(tt.list, p) {
				t.Errorf("%s has %s", tt.name, p)
			}
		}
	}
	if !s.Network || !slices.Equal(s.ConnectPorts, []uint16{443}) || !slices.Equal(s.BindPorts, []uint16{8080}) || !s.Scoped || !s.RequireTCP || s.Required {
		t.Errorf("network %v ports %v bind %v scoped %v require TCP %v required %v", s.Network, s.ConnectPorts, s.BindPorts, s.Scoped, s.RequireTCP, s.Required)
	}
	p, err := buildPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.skipped, missing) || !slices.Contains(p.skipped, root+"/tmp") {
		t.Errorf("skipped %q, want the missing extra read path and temp dir", p.skipped)
	}
}

func TestBuildPlan(t *testing.T) {
	root := tree(t, "a/keep/f", "a/secret/k", "a/mid/deny/x", "a/mid/ok", "a/file", "b/", "c/")
	if err := os.Symlink(filepath.Join(root, "a", "secret"), filepath.Join(root, "a", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "b"), filepath.Join(root, "blink")); err != nil {
		t.Fatal(err)
	}
	j := func(p string) string { return filepath.Join(root, p) }
	rw := accessRead | accessExec | accessWrite
	tests := []struct {
		name    string
		spec    Spec
		rules   []rule
		skipped []string
		note    string
	}{
		{name: "plain grant", spec: Spec{ReadWrite: []string{j("b")}}, rules: []rule{{path: j("b"), access: rw}}},
		{name: "a symlinked grant resolves", spec: Spec{ReadOnly: []string{j("blink")}}, rules: []rule{{path: j("b"), access: accessRead}}},
		{name: "missing is skipped", spec: Spec{ReadOnly: []string{j("nope")}}, skipped: []string{j("nope")}},
		{name: "inside a denied path is dropped", spec: Spec{ReadOnly: []string{j("a/secret")}, Deny: []string{j("a")}}, note: "inside the denied path"},
		{name: "denied through a symlink is dropped", spec: Spec{ReadOnly: []string{j("a/link")}, Deny: []string{j("a/secret")}}, note: "inside the denied path"},
		{name: "holding a denied path is carved", spec: Spec{ReadWrite: []string{j("a")}, Deny: []string{j("a/secret"), j("a/mid/deny")}},
			rules: []rule{{path: j("a"), access: ll.AccessFSReadDir}, {path: j("a/file"), access: rw}, {path: j("a/keep"), access: rw}, {path: j("a/mid"), access: ll.AccessFSReadDir}, {path: j("a/mid/ok"), access: rw}},
			note:  "granted except"},
		{name: "a denied path not created yet still carves", spec: Spec{ReadOnly: []string{j("c")}, Deny: []string{j("c/later")}},
			rules: []rule{{path: j("c"), access: ll.AccessFSReadDir}}, note: "granted except"},
		{name: "devices keep their rights", spec: Spec{Devices: []string{j("a/file")}, Terminals: []string{j("b")}},
			rules: []rule{{path: j("a/file"), access: accessDevice}, {path: j("b"), access: accessTerminal}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := buildPlan(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(withoutKinds(p.rules), tt.rules) {
				t.Errorf("rules\n got %v\nwant %v", p.rules, tt.rules)
			}
			if !slices.Equal(p.skipped, tt.skipped) {
				t.Errorf("skipped %q, want %q", p.skipped, tt.skipped)
			}
			if got := strings.Join(p.notes, "\n"); !strings.Contains(got, tt.note) || (tt.note == "" && got != "") {
				t.Errorf("notes %q, want %q", got, tt.note)
			}
		})
	}
}

// realPath is resolver.real for a single path.
func realPath(p string) (string, bool) { return resolver{}.real(p) }

// checkPlanSafe asserts the plan's central promise: no rule reaches a
// denied path, except the right to list a directory that holds one.
func checkPlanSafe(t testing.TB, p plan, deny []string) {
	t.Helper()
	for _, r := range p.rules {
		for _, d := range deny {
			rd, _ := realPath(d)
			if within(r.path, rd) {
				t.Fatalf("rule %v is inside the denied %s", r, d)
			}
			if within(rd, r.path) && r.access != ll.AccessFSReadDir {
				t.Fatalf("rule %v holds the denied %s with more than listing", r, d)
			}
		}
	}
}

func FuzzSecurityPlanNeverReachesDenied(f *testing.F) {
	root := tree(f, "a/b/c/f", "a/b/g", "a/d/", "e/h", "i")
	for link, target := range map[string]string{"l": "a/b", "a/up": "../e", "a/d/loop": "../d/loop", "e/dangling": "nope/x"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			f.Fatal(err)
		}
	}
	f.Add("a", "a/b/c")
	f.Add("a/b", "a")
	f.Add("", "e/h")
	f.Add("a/../e", "e/../a/d")
	f.Add("a", "a/b/nope/deeper")
	f.Add("a", "l/c")
	f.Add("l", "a/b/g")
	f.Add("e", "a/up/h")
	f.Add("a/d", "a/d/loop/x")
	f.Add("e", "e/dangling")
	f.Fuzz(func(t *testing.T, grant, deny string) {
		g := filepath.Join(root, grant)
		d := filepath.Join(root, deny)
		if !within(g, root) || !within(d, root) {
			return
		}
		s := Spec{ReadWrite: []string{g}, ReadOnly: []string{root}, Deny: []string{d}}
		p, err := buildPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		checkPlanSafe(t, p, s.Deny)
	})
}

func TestSecurityDefaultPlanNeverReachesSecrets(t *testing.T) {
	root := tree(t, "home/.ssh/id_rsa", "home/.cargo/bin/", "home/.cargo/credentials.toml", "home/.cache/x", "home/p/", "home/.m2/settings.xml", "home/.m2/repository/")
	home := filepath.Join(root, "home")
	o := Options{Workspace: home + "/p", Home: home, Protected: []string{home + "/.config/mnemos"}, Secrets: DefaultSecrets(home)}
	s, err := DefaultSpec(o)
	if err != nil {
		t.Fatal(err)
	}
	p, err := buildPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	checkPlanSafe(t, p, s.Deny)
	var paths []string
	for _, r := range p.rules {
		paths = append(paths, r.path)
	}
	for _, want := range []string{home + "/.cargo/bin", home + "/.m2/repository", "/etc/passwd"} {
		if !slices.Contains(paths, want) {
			t.Errorf("plan lacks %s", want)
		}
	}
}

func TestResolver(t *testing.T) {
	root := tree(t, "a/b/f", "c/")
	j := func(p string) string { return filepath.Join(root, p) }
	for link, target := range map[string]string{"l": "a/b", "c/up": "../a", "c/dangling": "../later/x", "c/loop": "loop", "abs": j("a/b/f")} {
		if err := os.Symlink(target, j(link)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		path, real string
		ok         bool
	}{
		{j("a/b/f"), j("a/b/f"), true},
		{j("a/./b//f"), j("a/b/f"), true},
		{j("l/f"), j("a/b/f"), true},
		{j("c/up/b/f"), j("a/b/f"), true},
		{j("abs"), j("a/b/f"), true},
		{j("a/b/new/deeper"), j("a/b/new/deeper"), false},
		{j("l/new"), j("a/b/new"), false},
		{j("c/dangling"), j("later/x"), false},
		{j("c/dangling/y"), j("later/x/y"), false},
		{j("c/loop"), j("c/loop"), false},
		{"/", "/", true},
	}
	for _, tt := range tests {
		real, ok := realPath(tt.path)
		if real != tt.real || ok != tt.ok {
			t.Errorf("real(%s) = %s, %v; want %s, %v", tt.path, real, ok, tt.real, tt.ok)
		}
	}
}

func TestDeniedHint(t *testing.T) {
	root := tree(t, "ws/f", "other/g", "prot/x", "parent/prot/y")
	j := func(p string) string { return filepath.Join(root, p) }
	s := Spec{ReadExec: []string{"/usr"}, ReadWrite: []string{j("ws")}, Deny: []string{j("prot"), j("parent/prot")}}
	tests := []struct{ path, want string }{
		{j("ws/f"), ""},
		{j("ws/new"), ""},
		{"/usr/bin", "/usr/bin is read-only in the sandbox; to let commands change it, add `sandbox: {write: [/usr/bin]}` to the policy"},
		{j("other/g"), "is outside every directory the sandbox grants; add `sandbox: {read: [" + j("other/g") + "]}`"},
		{j("other/new/deeper"), "`sandbox: {write: [" + j("other") + "]}`"},
		{j("prot/x"), "is protected"},
		{j("parent"), "grant a narrower directory"},
		{"relative", ""},
	}
	for _, tt := range tests {
		got := DeniedHint(s, tt.path)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("DeniedHint(%s) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

func TestStatus(t *testing.T) {
	tests := []struct {
		st       Status
		note     string
		gaps     []string
		notGaps  []string
		enforced bool
	}{
		{Status{Err: "function not implemented"}, "no Landlock on this kernel (function not implemented); commands run unconfined",
			[]string{"everything: there is no Landlock ruleset", "TCP bind and connect (needs ABI 4)"}, nil, false},
		{Status{ABI: 3, Enforced: true}, "Landlock ABI 3 enforced: a command may not touch files outside its granted directories",
			[]string{"TCP bind and connect (needs ABI 4)", "UDP, MPTCP and other non-TCP sockets"}, []string{"truncating files by path (needs ABI 3)"}, true},
		{Status{ABI: 5, Enforced: true}, "may not touch files outside its granted directories or bind or connect TCP ports it was not granted",
			[]string{"abstract unix sockets and signals to processes outside the sandbox (needs ABI 6)"}, []string{"TCP bind and connect (needs ABI 4)"}, true},
		{Status{ABI: 6, Enforced: true}, "or reach abstract unix sockets outside its sandbox",
			[]string{"signals to processes outside the sandbox (the kernel lacks the fix for signals between threads)"}, nil, true},
		{Status{ABI: 7, Enforced: true, Errata: 7, TerminalInjection: true}, "Landlock ABI 7 enforced: a command may not touch files outside its granted directories, bind or connect TCP ports it was not granted or reach abstract unix sockets or signal processes outside its sandbox",
			[]string{"connecting to unix socket files (an ssh or gpg agent, a docker socket)", "pushing input into a terminal it holds (TIOCSTI; dev.tty.legacy_tiocsti is on)"},
			[]string{"abstract unix sockets and signals to processes outside the sandbox (needs ABI 6)"}, true},
		{Status{ABI: 3, Enforced: true, Seccomp: true, TerminalInjection: true}, "Landlock ABI 3 and a seccomp filter enforced: a command may not touch files outside its granted directories, open sockets other than unix, netlink and (with network) TCP and UDP ones or use io_uring or push input into a terminal",
			[]string{"TCP ports, when network is granted (needs ABI 4; without network the seccomp filter refuses TCP)", "UDP to any address and port, when network is granted (name resolution needs it)"},
			[]string{"TCP bind and connect (needs ABI 4)", "UDP, MPTCP and other non-TCP sockets", "pushing input into a terminal it holds (TIOCSTI; dev.tty.legacy_tiocsti is on)"}, true},
		{Status{ABI: 7, Enforced: true, Errata: 7, Seccomp: true, TerminalInjection: true}, "reach abstract unix sockets or signal processes outside its sandbox, open sockets other than unix",
			[]string{"UDP to any address and port, when network is granted (name resolution needs it)", "connecting to unix socket files (an ssh or gpg agent, a docker socket)"},
			[]string{"UDP, MPTCP and other non-TCP sockets", "pushing input into a terminal it holds (TIOCSTI; dev.tty.legacy_tiocsti is on)",
				"TCP ports, when network is granted (needs ABI 4; without network the seccomp filter refuses TCP)"}, true},
		{Status{Seccomp: true}, "no Landlock on this kernel; commands run unconfined",
			[]string{"everything: there is no Landlock ruleset", "TCP bind and connect (needs ABI 4)", "UDP, MPTCP and other non-TCP sockets"}, nil, false},
	}
	for _, tt := range tests {
		if got := tt.st.Note(); !strings.Contains(got, tt.note) {
			t.Errorf("ABI %d: Note() = %q, want %q", tt.st.ABI, got, tt.note)
		}
		gaps := tt.st.Gaps()
		for _, g := range tt.gaps {
			if !slices.Contains(gaps, g) {
				t.Errorf("ABI %d: Gaps() lacks %q: %q", tt.st.ABI, g, gaps)
			}
		}
		for _, g := range tt.notGaps {
			if slices.Contains(gaps, g) {
				t.Errorf("ABI %d: Gaps() has %q", tt.st.ABI, g)
			}
		}
		if tt.st.Enforceable() != tt.enforced {
			t.Errorf("ABI %d: Enforceable() = %v", tt.st.ABI, !tt.enforced)
		}
	}
}

func TestProbeMatchesKernel(t *testing.T) {
	st := Probe()
	if st.Enforced != (st.ABI > 0) || (st.ABI == 0) == (st.Err == "") || st.Seccomp == (st.SeccompErr != "") {
		t.Errorf("Probe() = %+v", st)
	}
}

// withoutKinds drops what the plan saw of each rule's file, which the
// tables leave out.
func withoutKinds(rs []rule) []rule {
	out := make([]rule, len(rs))
	for i, r := range rs {
		r.kind = kindUnknown
		out[i] = r
	}
	return out
}

func TestStatusWithABI(t *testing.T) {
	s := Status{ABI: 7, Enforced: true, Seccomp: true}
	if got := s.WithABI(4); got.ABI != 4 || !got.Enforced || !got.Seccomp {
		t.Errorf("WithABI(4) = %+v", got)
	}
	got := s.WithABI(0)
	if got.ABI != 0 || got.Enforced || got.Seccomp || got.SeccompErr == "" || got.filtered() {
		t.Errorf("WithABI(0) = %+v: without Landlock neither the ruleset nor the filter is applied", got)
	}
}

// TestDefaultCachesSecurity: what a confined command may write in the
// default caches is data, never a program on PATH or configuration that a
// tool run later, outside the sandbox, obeys or executes.
func TestDefaultCachesSecurity(t *testing.T) {
	home := "/home/u"
	never := []string{
		"go/bin", "go/bin/gopls", "go/env",
		".cargo/bin", ".cargo/bin/cargo", ".cargo/config.toml", ".cargo/config", ".cargo/env",
		".cargo/credentials.toml",
		".rustup/toolchains/stable/bin/cargo", ".rustup/settings.toml",
		".npm/_npx", ".npmrc",
		".gradle/init.d", ".gradle/init.gradle", ".gradle/gradle.properties", ".gradle/wrapper/dists", ".gradle/native",
		".m2/settings.xml", ".m2/toolchains.xml", ".m2/wrapper",
		".bashrc", ".profile", ".gitconfig", ".local/bin",
	}
	writable := func(p string) string {
		for _, c := range DefaultCaches(home) {
			if c.Write && within(p, c.Path) {
				return c.Path
			}
		}
		return ""
	}
	for _, rel := range never {
		p := filepath.Join(home, rel)
		if c := writable(p); c != "" {
			t.Errorf("the default cache %s lets a command write %s", c, p)
		}
	}
	// The caches the usual builds write stay writable.
	for _, rel := range []string{".cache/go-build", "go/pkg/mod", ".cargo/registry/index", ".cargo/git/db", ".npm/_cacache", ".m2/repository/org"} {
		if p := filepath.Join(home, rel); writable(p) == "" {
			t.Errorf("%s is not writable by default; builds need it", p)
		}
	}
	// And the spec built from the defaults agrees: the programs stay
	// runnable, not writable.
	dir := t.TempDir()
	h := filepath.Join(dir, "home")
	for _, rel := range []string{"go/bin", "go/pkg/mod", ".cargo/bin", ".cargo/registry", ".rustup/toolchains", ".npm/_cacache", ".npm/_npx", "src/p",
		".m2/wrapper/dists/apache-maven-3.9.6-bin", ".gradle/wrapper/dists/gradle-8.5-bin"} {
		if err := os.MkdirAll(filepath.Join(h, rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, err := DefaultSpec(Options{Workspace: filepath.Join(h, "src", "p"), Home: h})
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"go/bin", ".cargo/bin", ".rustup/toolchains", ".npm/_npx", ".m2/wrapper/dists", ".gradle/wrapper/dists"} {
		p := filepath.Join(h, rel)
		for _, w := range s.ReadWrite {
			if within(p, w) {
				t.Errorf("the default spec grants %s write through %s", p, w)
			}
		}
	}
	for _, rel := range []string{"go/bin", ".cargo/bin", ".rustup", ".m2/wrapper/dists", ".gradle/wrapper/dists"} {
		if p := filepath.Join(h, rel); !slices.Contains(s.ReadExec, p) {
			t.Errorf("the default spec does not let commands run programs from %s: %v", p, s.ReadExec)
		}
	}
}

// A default write cache that its tool has not made yet is created when the
// tool's directory exists, so that the first download under the sandbox
// works; nothing is created for a tool that is not there.
func TestDefaultCachesCreatedForPresentTools(t *testing.T) {
	h := filepath.Join(t.TempDir(), "home")
	for _, rel := range []string{".cargo/bin", "src/p"} {
		if err := os.MkdirAll(filepath.Join(h, rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, err := DefaultSpec(Options{Workspace: filepath.Join(h, "src", "p"), Home: h})
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{".cargo/registry", ".cargo/git", ".cache"} {
		p := filepath.Join(h, rel)
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			t.Errorf("%s was not created: %v", p, err)
		}
		if !slices.Contains(s.ReadWrite, p) {
			t.Errorf("%s is not granted write: %v", p, s.ReadWrite)
		}
	}
	for _, rel := range []string{"go", ".npm", ".gradle", ".m2"} {
		if _, err := os.Lstat(filepath.Join(h, rel)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s was created for a tool that is not there (err %v)", rel, err)
		}
	}
	// A user's own cache list is taken as given: nothing is created.
	h2 := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(filepath.Join(h2, ".cargo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := DefaultSpec(Options{Workspace: t.TempDir(), Home: h2, Caches: []Cache{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(h2, ".cargo", "registry")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a cache was created although the policy lists none (err %v)", err)
	}
}

// A first `go build` in the sandbox finds its build cache directory: a
// confined command could not create it at the top of ~/.cache, which is
// granted entry by entry around the secrets in it.
func TestDefaultSpecMakesTheToolCacheDirs(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "src", "p")
	if err := os.MkdirAll(filepath.Join(home, ".cache"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := DefaultSpec(Options{Workspace: ws, Home: home}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"go-build", "pip"} {
		if fi, err := os.Stat(filepath.Join(home, ".cache", d)); err != nil || !fi.IsDir() {
			t.Errorf("~/.cache/%s: %v", d, err)
		}
	}
}

func TestToolchainRootsFollowPath(t *testing.T) {
	home := tree(t, ".pyenv/shims/python", ".pyenv/versions/3.12/bin/python", ".nvm/versions/node/v20/bin/node", ".local/bin/x", ".sdkman/candidates/java/current/bin/java")
	j := func(p string) string { return filepath.Join(home, p) }
	tests := []struct {
		path []string
		want []string
		not  []string
	}{
		{nil, []string{j(".local/bin")}, []string{j(".pyenv"), j(".nvm"), j(".sdkman")}},
		{[]string{j(".pyenv/shims"), "/usr/bin"}, []string{j(".pyenv")}, []string{j(".nvm"), j(".sdkman")}},
		{[]string{j(".nvm/versions/node/v20/bin")}, []string{j(".nvm")}, []string{j(".pyenv")}},
		{[]string{j(".sdkman/candidates/java/current/bin")}, []string{j(".sdkman")}, []string{j(".pyenv")}},
		// A relative entry or a look-alike name reaches no root.
		{[]string{".pyenv/shims", j(".pyenv-old/bin")}, nil, []string{j(".pyenv")}},
	}
	for _, tt := range tests {
		got := DefaultHomeExec(home, tt.path)
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("PATH %v: %s not granted; got %v", tt.path, w, got)
			}
		}
		for _, n := range tt.not {
			if slices.Contains(got, n) {
				t.Errorf("PATH %v: %s granted; got %v", tt.path, n, got)
			}
		}
	}
	s, err := DefaultSpec(Options{Workspace: j(".local"), Home: home, PathDirs: []string{j(".pyenv/shims")}, Caches: []Cache{}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(s.ReadExec, j(".pyenv")) || slices.Contains(s.ReadWrite, j(".pyenv")) {
		t.Errorf("pyenv's root should be read and execute, never write: %+v", s)
	}
}

func TestDeniedHintNamesTheManagersRoot(t *testing.T) {
	home := tree(t, ".pyenv/versions/3.12/bin/python", ".pyenv/libexec/pyenv")
	s := Spec{Home: home, ReadExec: []string{"/usr"}}
	got := DeniedHint(s, filepath.Join(home, ".pyenv/versions/3.12/bin/python"))
	want := "in pyenv's root " + filepath.Join(home, ".pyenv") + ", which the sandbox grants only when PATH reaches into it"
	if !strings.Contains(got, want) || !strings.Contains(got, "{read: ["+filepath.Join(home, ".pyenv")+"]}") {
		t.Errorf("hint = %q, want it to name %q", got, want)
	}
}
