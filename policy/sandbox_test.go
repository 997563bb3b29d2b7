package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/shellparse"
)

func TestSandboxSectionParses(t *testing.T) {
	p := mustParse(t, `sandbox:
  read: [~/.m2/, /srv/data, /srv/data]
  write: ["~/.cache/bazel"]
  ports: [443, 22, 443]
  bind: [8080]
  network: false
  required: true
allow:
  - name: bazel
    command: {argv_prefix: [bazel]}
    sandbox: {write: [/opt/bazel-out], network: true}
`)
	s := p.Sandbox
	if !slices.Equal(s.Read, []string{"~/.m2", "/srv/data"}) || !slices.Equal(s.Write, []string{"~/.cache/bazel"}) ||
		!slices.Equal(s.Ports, []uint16{22, 443}) || !slices.Equal(s.Bind, []uint16{8080}) ||
		s.Network == nil || *s.Network || !s.Required || s.Pos.Line != 2 {
		t.Fatalf("section = %+v", s)
	}
	r := p.Rules[0].Sandbox
	if r == nil || !slices.Equal(r.Write, []string{"/opt/bazel-out"}) || !r.HasNetwork() || r.Required {
		t.Fatalf("rule override = %+v", r)
	}
	if got := s.ExpandHome("/home/ann"); !slices.Equal(got.Read, []string{"/home/ann/.m2", "/srv/data"}) || got.Write[0] != "/home/ann/.cache/bazel" || s.Read[0] != "~/.m2" {
		t.Fatalf("ExpandHome = %+v (original %+v)", got, s)
	}
	if !(SandboxConfig{}).IsZero() || s.IsZero() {
		t.Fatal("IsZero")
	}
}

// results evaluates each command and returns the Results, as the gate
// holds them for one request.
func results(t *testing.T, p *Policy, l Level, cmds ...shellparse.Command) []Result {
	t.Helper()
	var out []Result
	for _, c := range cmds {
		in := input(c, l)
		res, err := p.Evaluate(context.Background(), in, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res)
	}
	return out
}

// TestSandboxForRequest pins how a request's sandbox is combined from the
// section and the overrides of the rules that matched its commands.
func TestSandboxForRequest(t *testing.T) {
	p := mustParse(t, `sandbox:
  read: [~/.m2]
  ports: [443]
rules:
  - {name: psql, action: ask, command: {argv_prefix: [psql]}, sandbox: {network: true, ports: [5432], write: [/srv/pg]}}
  - {name: bazel, action: allow, command: {argv_prefix: [bazel]}, sandbox: {write: [~/.cache/bazel], required: true}}
  - {name: offline, action: allow, command: {argv_prefix: [make, offline]}, sandbox: {network: false}}
  - {name: no curl, action: deny, command: {argv_prefix: [curl, -k]}, sandbox: {write: [/x]}}
`)
	open := p.Sandbox
	open.Ports = nil
	noPorts := &Policy{Sandbox: open, Rules: p.Rules}
	cases := []struct {
		name     string
		p        *Policy
		cmds     []shellparse.Command
		read     []string
		write    []string
		ports    []uint16
		network  bool
		required bool
	}{
		{"section only", p, []shellparse.Command{cmd("ls")}, []string{"~/.m2"}, nil, []uint16{443}, false, false},
		{"decision gives network", p, []shellparse.Command{cmd("curl", "https://example.com")}, []string{"~/.m2"}, nil, []uint16{443}, true, false},
		{"rule adds port, path and network", p, []shellparse.Command{cmd("psql", "-h", "db")}, []string{"~/.m2"}, []string{"/srv/pg"}, []uint16{443, 5432}, true, false},
		{"union over commands", p, []shellparse.Command{cmd("psql"), cmd("bazel", "build")}, []string{"~/.m2"}, []string{"/srv/pg", "~/.cache/bazel"}, []uint16{443, 5432}, true, true},
		{"a rule's false beats another's true", p, []shellparse.Command{cmd("psql"), cmd("make", "offline")}, []string{"~/.m2"}, []string{"/srv/pg"}, []uint16{443, 5432}, false, false},
		{"a rule's false beats the decision", p, []shellparse.Command{cmd("curl", "https://x.org"), cmd("make", "offline")}, []string{"~/.m2"}, nil, []uint16{443}, false, false},
		{"deny rule overrides are recorded but ports need a list", noPorts, []shellparse.Command{cmd("psql")}, []string{"~/.m2"}, []string{"/srv/pg"}, nil, true, false},
	}
	for _, tc := range cases {
		got := tc.p.SandboxFor(results(t, tc.p, Full, tc.cmds...))
		if !slices.Equal(got.Read, tc.read) || !slices.Equal(got.Write, tc.write) || !slices.Equal(got.Ports, tc.ports) ||
			got.Network == nil || *got.Network != tc.network || got.Required != tc.required {
			t.Errorf("%s: got %+v network %v", tc.name, got, got.Network != nil && *got.Network)
		}
	}
	// A denied command's rule override is recorded in its Result; the
	// gate never runs a denied request, so it never reaches a sandbox.
	res := results(t, p, Full, cmd("curl", "-k", "https://x"))[0]
	if res.Outcome != Deny || len(res.Sandbox) != 1 || res.Sandbox[0].Rule != "no curl" {
		t.Fatalf("deny result %+v", res)
	}
}

func TestSecuritySandboxDefaultsToTheDecision(t *testing.T) {
	p := Default()
	for _, tc := range []struct {
		c    shellparse.Command
		want bool
	}{
		{cmd("git", "status"), false},
		{cmd("make", "test"), false},
		{cmd("curl", "https://example.com"), true},
	} {
		got := p.SandboxFor(results(t, p, Full, tc.c))
		if got.Network == nil || *got.Network != tc.want || len(got.Read)+len(got.Write)+len(got.Ports) != 0 || got.Required {
			t.Errorf("%v: %+v", tc.c.Strings(), got)
		}
	}
	if got := p.SandboxFor(nil); got.Network == nil || *got.Network {
		t.Errorf("no command: %+v", got)
	}
}

func TestLintSandboxWarnings(t *testing.T) {
	src := `sandbox: {network: false, bind: [8080]}
rules:
  - {name: a, action: deny, command: {argv_prefix: [a]}, sandbox: {write: [/x]}}
  - {name: b, action: allow, command: {argv_prefix: [b]}, sandbox: {ports: [5432]}}
  - {name: c, action: ask, command: {argv_prefix: [c]}, sandbox: {network: true}}
`
	var got []string
	for _, d := range Lint("p.yaml", []byte(src)) {
		got = append(got, d.String())
	}
	want := []string{
		"p.yaml:1:10: warning: sandbox bind has no effect with network: false",
		`p.yaml:3:67: warning: the sandbox of rule "a" has no effect: a command it denies never runs`,
		`p.yaml:4:68: warning: the ports of rule "b" add to the top-level sandbox ports, which sets none: every port is already open when the command has network`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestFormatKeepsSandbox(t *testing.T) {
	p := mustParse(t, `sandbox: {read: [~/.m2], write: [/srv/w], ports: [443], bind: [8080], network: true, required: true}
rules:
  - {name: x, action: ask, command: {argv_prefix: [x]}, sandbox: {network: false, ports: [1]}}
  - {name: y, action: ask, command: {argv_prefix: [y]}, sandbox: {}}
`)
	roundTrip(t, p)
	out := string(Format(p))
	for _, want := range []string{"sandbox:\n  read: [\"~/.m2\"]\n", "network: true\n  required: true\n", "sandbox: {ports: [1], network: false}", "sandbox: {}"} {
		if !strings.Contains(out, want) {
			t.Errorf("Format lacks %q:\n%s", want, out)
		}
	}
}

// ExamplePolicy_SandboxFor shows the sandbox of a request of two commands.
func ExamplePolicy_SandboxFor() {
	p, _ := Parse("policy.yaml", []byte(`sandbox:
  read: [~/.m2]
  ports: [443]
allow:
  - name: psql
    command: {argv_prefix: [psql]}
    sandbox: {network: true, ports: [5432]}
`))
	var rs []Result
	for _, argv := range [][]string{{"psql", "-c", "select 1"}, {"ls"}} {
		s, _ := shellparse.ParseArgv(argv, shellparse.Env{Home: "/home/me", Cwd: "/home/me/proj"})
		r, _ := p.Evaluate(context.Background(), Input{Command: s.Commands[0], Place: classify.Place{Dirs: []string{"/home/me/proj"}, Home: "/home/me"},
			Workspace: "/home/me/proj", Level: Full}, nil)
		rs = append(rs, r)
	}
	sb := p.SandboxFor(rs).ExpandHome("/home/me")
	fmt.Println(sb.Read, sb.Ports, *sb.Network)
	// Output: [/home/me/.m2] [443 5432] true
}

// TestSecuritySandboxBindIsGranted: bind lists the ports a command may
// bind, none when no list is given; a rule's bind adds to the section's
// (0 is any ephemeral port), and a project layer can narrow the list but
// never bind what the system and user layers do not list.
func TestSecuritySandboxBindIsGranted(t *testing.T) {
	user := mustParse(t, `sandbox: {network: true, bind: [8080]}
rules:
  - {name: dev server, action: allow, command: {argv_prefix: [npm, run, dev]}, sandbox: {bind: [0, 3000]}}
`)
	bare := mustParse(t, "sandbox: {network: true}\nrules:\n  - {name: srv, action: allow, command: {argv_prefix: [srv]}, sandbox: {bind: [9000]}}\n")
	project := func(src string) *Policy {
		p := mustParse(t, src)
		m, _ := Merge(nil, user, p)
		return m
	}
	for _, tc := range []struct {
		name string
		p    *Policy
		c    shellparse.Command
		want []uint16
	}{
		{"the section's list", user, cmd("ls"), []uint16{8080}},
		{"a rule adds to it", user, cmd("npm", "run", "dev"), []uint16{0, 3000, 8080}},
		{"no list, nothing to bind", Default(), cmd("ls"), nil},
		{"a rule's list alone", bare, cmd("srv"), []uint16{9000}},
		{"another command, none", bare, cmd("ls"), nil},
		{"a project narrows", project("sandbox: {bind: [3000]}\n"), cmd("npm", "run", "dev"), []uint16{3000}},
		{"a project's list binds nothing new", project("sandbox: {bind: [9999]}\n"), cmd("ls"), nil},
		{"a project alone binds nothing", func() *Policy { m, _ := Merge(nil, Default(), mustParse(t, "sandbox: {bind: [22]}\n")); return m }(), cmd("ls"), nil},
	} {
		got := tc.p.SandboxFor(results(t, tc.p, Full, tc.c))
		if !slices.Equal(got.Bind, tc.want) {
			t.Errorf("%s: bind %v, want %v", tc.name, got.Bind, tc.want)
		}
		if tc.p == user && (got.Network == nil || !*got.Network) {
			t.Errorf("%s: a bind list closed the network", tc.name)
		}
	}
}

func TestSandboxCachesParse(t *testing.T) {
	p := mustParse(t, `sandbox:
  caches:
    - {path: ~/.cache/, mode: write}
    - {path: /var/cache/ccache, mode: read}
    - {path: ~/.m2/repository}
`)
	want := []SandboxCache{{"~/.cache", true}, {"/var/cache/ccache", false}, {"~/.m2/repository", false}}
	if s := p.Sandbox; !s.CachesSet || !slices.Equal(s.Caches, want) || s.IsZero() {
		t.Fatalf("section = %+v", s)
	}
	if got := p.Sandbox.ExpandHome("/home/ann").Caches; !slices.Equal(got, []SandboxCache{{"/home/ann/.cache", true}, {"/var/cache/ccache", false}, {"/home/ann/.m2/repository", false}}) {
		t.Fatalf("ExpandHome = %v", got)
	}
	none := mustParse(t, "sandbox: {caches: []}\n").Sandbox
	if !none.CachesSet || len(none.Caches) != 0 || none.IsZero() {
		t.Fatalf("caches: [] = %+v, want set and empty", none)
	}
	if unset := mustParse(t, "sandbox: {network: false}\n").Sandbox; unset.CachesSet {
		t.Fatalf("no caches key = %+v, want unset", unset)
	}
	// Format writes every mode, and what it writes parses back the same.
	roundTrip(t, p)
	if out := string(Format(p)); !strings.Contains(out, `caches: [{path: "~/.cache", mode: write}, {path: "/var/cache/ccache", mode: read}, {path: "~/.m2/repository", mode: read}]`) {
		t.Errorf("Format:\n%s", out)
	}
	roundTrip(t, mustParse(t, "sandbox: {caches: []}\n"))
	if out := string(Format(mustParse(t, "sandbox: {caches: []}\n"))); !strings.Contains(out, "caches: []") {
		t.Errorf("Format of caches: [] lost it:\n%s", out)
	}
}

// TestSecuritySandboxCachesLayers: the system and user layers set the
// caches; a project layer can drop one or make it read-only, never add one
// or make a read-only one writable, and lint says so where it tries.
func TestSecuritySandboxCachesLayers(t *testing.T) {
	user := mustParse(t, "sandbox:\n  caches: [{path: ~/.cache, mode: write}, {path: ~/.m2/repository, mode: read}]\n")
	def := DefaultCaches()
	for _, tc := range []struct {
		name         string
		system, user string // "" for none, "-" for the user policy above
		project      string
		want         []SandboxCache // nil: unset (the sandbox's defaults)
		warnings     []string
	}{
		{name: "no layer sets caches", project: "level: full\n"},
		{name: "the user replaces the defaults", user: "-", want: user.Sandbox.Caches},
		{name: "a project narrows", user: "-",
			project: "sandbox:\n  caches: [{path: ~/.cache/go-build, mode: write}, {path: ~/.m2/repository, mode: read}]\n",
			want:    []SandboxCache{{"~/.cache/go-build", true}, {"~/.m2/repository", false}}},
		{name: "a project makes a cache read-only", user: "-",
			project: "sandbox:\n  caches: [{path: ~/.cache, mode: read}]\n",
			want:    []SandboxCache{{"~/.cache", false}}},
		{name: "a project adds a cache and widens one", user: "-",
			project: "sandbox:\n  caches: [{path: ~/.ssh, mode: write}, {path: ~/.m2/repository, mode: write}, {path: ~/.cache, mode: write}]\n",
			want:    []SandboxCache{{"~/.m2/repository", false}, {"~/.cache", true}},
			warnings: []string{
				"project.yaml:2:3: warning: sandbox cache ~/.ssh is not among the caches of the layers above (system.yaml + user.yaml), which it cannot add to; it is ignored",
				"project.yaml:2:3: warning: sandbox cache ~/.m2/repository cannot be made writable, being read-only in the layers above (system.yaml + user.yaml); it stays read-only",
			}},
		{name: "a project narrows the defaults", project: "sandbox: {caches: [{path: ~/go/pkg/mod, mode: write}, {path: ~/go/bin, mode: write}, {path: ~/.rustup, mode: write}]}\n",
			want: []SandboxCache{{"~/go/pkg/mod", true}, {"~/.rustup", false}},
			warnings: []string{
				"project.yaml:1:10: warning: sandbox cache ~/go/bin is not among the caches of the layers above (system.yaml + user.yaml), which it cannot add to; it is ignored",
				"project.yaml:1:10: warning: sandbox cache ~/.rustup cannot be made writable, being read-only in the layers above (system.yaml + user.yaml); it stays read-only",
			}},
		{name: "a project drops every cache", user: "-", project: "sandbox: {caches: []}\n", want: []SandboxCache{}},
		{name: "the system bounds the user", system: "sandbox: {caches: [{path: ~/.cache, mode: read}]}\n", user: "-",
			want: []SandboxCache{{"~/.cache", false}},
			warnings: []string{"user.yaml:2:3: warning: sandbox cache ~/.cache cannot be made writable, being read-only in the system policy system.yaml; it stays read-only",
				"user.yaml:2:3: warning: sandbox cache ~/.m2/repository is not among the caches of the system policy system.yaml, which it cannot add to; it is ignored"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sys, usr, proj *Policy
			if tc.system != "" {
				sys = mustParseAs(t, "system.yaml", tc.system)
			}
			usr = mustParseAs(t, "user.yaml", "level: full\n")
			if tc.user == "-" {
				usr = mustParseAs(t, "user.yaml", "sandbox:\n  caches: [{path: ~/.cache, mode: write}, {path: ~/.m2/repository, mode: read}]\n")
			}
			if tc.project != "" {
				proj = mustParseAs(t, "project.yaml", tc.project)
			}
			if sys == nil {
				sys = mustParseAs(t, "system.yaml", "level: full\n")
			}
			m, diags := Merge(sys, usr, proj)
			got := m.SandboxFor(results(t, m, Full, cmd("ls")))
			if tc.want == nil {
				if got.CachesSet {
					t.Fatalf("caches = %v, want unset (defaults %v)", got.Caches, def)
				}
			} else if !got.CachesSet || !slices.Equal(got.Caches, tc.want) {
				t.Fatalf("caches = %v (set %v), want %v", got.Caches, got.CachesSet, tc.want)
			}
			if m.Sandbox.CachesSet != got.CachesSet || !slices.Equal(m.Sandbox.Caches, got.Caches) {
				t.Errorf("the stack's section shows caches %v, SandboxFor %v", m.Sandbox.Caches, got.Caches)
			}
			var warns []string
			for _, d := range diags {
				if strings.Contains(d.Msg, "cache") {
					warns = append(warns, d.String())
				}
			}
			if strings.Join(warns, "\n") != strings.Join(tc.warnings, "\n") {
				t.Errorf("warnings\n%s\nwant\n%s", strings.Join(warns, "\n"), strings.Join(tc.warnings, "\n"))
			}
		})
	}
}

func TestNarrowCaches(t *testing.T) {
	base := []SandboxCache{{"~/.cache", true}, {"~/.rustup", false}, {"/srv/c", true}}
	got := NarrowCaches(base, []SandboxCache{{"~/.cache/pip", true}, {"~/.cachex", true}, {"~/.rustup/toolchains", true}, {"/srv/c", false}, {"/srv", true}})
	want := []SandboxCache{{"~/.cache/pip", true}, {"~/.rustup/toolchains", false}, {"/srv/c", false}}
	if !slices.Equal(got, want) {
		t.Fatalf("NarrowCaches = %v, want %v", got, want)
	}
}
