package policy

import (
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// fakeInfo is an fs.FileInfo with a chosen owner and mode.
type fakeInfo struct {
	mode fs.FileMode
	sys  any
}

func (f fakeInfo) Name() string       { return "policy.yaml" }
func (f fakeInfo) Size() int64        { return 0 }
func (f fakeInfo) Mode() fs.FileMode  { return f.mode }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fakeInfo) Sys() any           { return f.sys }

func TestSecurityTrustSystemPolicy(t *testing.T) {
	owner := func(uid uint32) any { return &syscall.Stat_t{Uid: uid} }
	cases := []struct {
		name string
		fi   fakeInfo
		want string // "" trusted, else part of the error
	}{
		{"root 0644", fakeInfo{0o644, owner(0)}, ""},
		{"root 0600", fakeInfo{0o600, owner(0)}, ""},
		{"root directory 0755", fakeInfo{fs.ModeDir | 0o755, owner(0)}, ""},
		{"user-owned", fakeInfo{0o644, owner(1000)}, "owned by uid 1000, not root"},
		{"group-writable", fakeInfo{0o664, owner(0)}, "writable by group or others (mode -rw-rw-r--)"},
		{"world-writable", fakeInfo{0o646, owner(0)}, "writable by group or others"},
		{"world-writable directory", fakeInfo{fs.ModeDir | 0o777, owner(0)}, "writable by group or others"},
		{"a FIFO", fakeInfo{fs.ModeNamedPipe | 0o644, owner(0)}, "not a regular file"},
		{"owner unknown", fakeInfo{0o644, nil}, "cannot tell who owns"},
	}
	for _, tc := range cases {
		err := TrustSystemPolicy(tc.fi)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want trusted", tc.name, err)
		case tc.want != "" && (!errors.Is(err, ErrUntrustedSystemPolicy) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want ErrUntrustedSystemPolicy with %q", tc.name, err, tc.want)
		}
	}
}

func TestLoadSystemAndProject(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etc")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "policy.yaml")
	if p, err := LoadSystem(file); p != nil || err != nil {
		t.Fatalf("missing system file: %v, %v", p, err)
	}
	if p, err := LoadSystem(filepath.Join(dir, "none", "policy.yaml")); p != nil || err != nil {
		t.Fatalf("missing system directory: %v, %v", p, err)
	}
	if err := os.WriteFile(file, []byte("level: readonly\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadSystem(file)
	if os.Getuid() == 0 {
		if err != nil || p == nil || p.Level != ReadOnly {
			t.Fatalf("root-owned system file: %v, %v", p, err)
		}
		if err := os.Chmod(file, 0o666); err != nil {
			t.Fatal(err)
		}
		if p, err := LoadSystem(file); p != nil || !errors.Is(err, ErrUntrustedSystemPolicy) {
			t.Fatalf("world-writable system file: %v, %v", p, err)
		}
		if err := os.Chmod(file, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		if p, err := LoadSystem(file); p != nil || !errors.Is(err, ErrUntrustedSystemPolicy) || !strings.Contains(err.Error(), "etc is writable") {
			t.Fatalf("world-writable system directory: %v, %v", p, err)
		}
	} else if p != nil || !errors.Is(err, ErrUntrustedSystemPolicy) {
		t.Fatalf("system file owned by uid %d: %v, %v", os.Getuid(), p, err)
	}

	ws := t.TempDir()
	pf := ProjectFile(ws)
	if pf != filepath.Join(ws, ".mnemos", "policy.yaml") {
		t.Fatalf("ProjectFile = %s", pf)
	}
	if p, err := LoadProject(pf); p != nil || err != nil {
		t.Fatalf("missing project file: %v, %v", p, err)
	}
	if err := os.Mkdir(filepath.Dir(pf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(pf, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if p, err := LoadProject(pf); p != nil || err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("FIFO project file: %v, %v", p, err)
	}
	_ = os.Remove(pf)
	if err := os.WriteFile(pf, []byte("level: sometimes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var pe *Error
	if _, err := LoadProject(pf); !errors.As(err, &pe) || pe.Line != 1 {
		t.Fatalf("invalid project file: %v", err)
	}
}

const userSrc = `level: full
defaults: {shell: allow}
rules:
  - {name: git status, action: allow, command: {argv_prefix: [git, status]}}
  - {name: curl ok, action: allow, command: {argv_prefix: [curl]}}
  - {name: make, action: allow, command: {argv_prefix: [make]}}
  - {name: ask rm, action: ask, command: {argv_prefix: [rm]}}
`

func mustParseAs(t *testing.T, name, src string) *Policy {
	t.Helper()
	p, err := Parse(name, []byte(src))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	return p
}

// TestMergeDecisions pins the layered decision: a matching rule of each
// layer counts, the strictest wins, a project allow rule counts for
// nothing across layers, and a layer with no matching rule has no say.
func TestMergeDecisions(t *testing.T) {
	user := mustParseAs(t, "user.yaml", userSrc)
	system := mustParseAs(t, "system.yaml", `rules:
  - {name: no curl to prod, action: deny, conditions: {command: {equals: curl}, args: {matches: ".*prod.*"}}}
  - {name: make ok, action: allow, command: {argv_prefix: [make, lint]}}
`)
	project := mustParseAs(t, "project.yaml", `rules:
  - {name: deploy, action: deny, priority: 150, command: {argv_prefix: [make, deploy]}}
  - {name: make asks, action: ask, command: {argv_prefix: [make]}}
  - {name: make test is fine, action: allow, priority: 120, command: {argv_prefix: [make, test]}}
  - {name: rm allowed, action: allow, command: {argv_prefix: [rm]}}
  - {name: cat allowed, action: allow, command: {argv_prefix: [cat]}}
`)
	m, _ := Merge(system, user, project)
	if m2, d := Merge(nil, user, nil); m2 != user || d != nil {
		t.Fatal("Merge of the user policy alone must return it")
	}
	cases := []struct {
		c     shellparse.Command
		want  Outcome
		rule  string
		layer Layer
	}{
		{cmd("git", "status"), Allow, "git status", LayerUser}, // no project rule: no say
		{cmd("curl", "https://prod.example"), Deny, "no curl to prod", LayerSystem},
		{cmd("curl", "https://example.com"), Allow, "curl ok", LayerUser},
		{cmd("make", "deploy"), Deny, "deploy", LayerProject},  // project tightens
		{cmd("make", "build"), Ask, "make asks", LayerProject}, // project ask over user allow
		{cmd("make", "test"), Allow, "make", LayerUser},        // project allow shields its own ask, loosens nothing
		{cmd("make", "lint"), Ask, "make asks", LayerProject},  // over the system's allow
		{cmd("rm", "/w/a"), Ask, "ask rm", LayerUser},          // project allow cannot loosen the user's ask
		{cmd("cat", "/etc/hosts"), Allow, "", ""},              // the table at full; project allow changes nothing
		{cmd("cat", "/etc/hosts"), Allow, "", ""},
	}
	for _, tc := range cases {
		res, err := m.Evaluate(context.Background(), input(tc.c, m.Level), nil)
		if err != nil {
			t.Fatal(err)
		}
		rule, layer := "", Layer("")
		if res.Rule != nil {
			rule, layer = res.Rule.Name, res.Rule.Layer
		}
		if res.Outcome != tc.want || rule != tc.rule || layer != tc.layer {
			t.Errorf("%v = %s by %s rule %q (%s); want %s rule %q (%s)", tc.c.Strings(), res.Outcome, res.DecidedBy, rule, layer, tc.want, tc.rule, tc.layer)
		}
	}
	res, _ := m.Evaluate(context.Background(), input(cmd("make", "deploy"), Full), nil)
	if res.Reason != `project rule "deploy" denies it` {
		t.Errorf("reason %q", res.Reason)
	}
	if m.Source != "system.yaml + user.yaml + project.yaml" || len(m.Layers()) != 3 || m.Layers()[2].Layer != LayerProject || user.Layer != "" {
		t.Errorf("source %q, layers %d", m.Source, len(m.Layers()))
	}
}

func TestMergeSettings(t *testing.T) {
	user := mustParseAs(t, "user.yaml", "level: full\ndefaults: {shell: allow}\napprovals: {ttl: 1h}\njudge: {threshold: 0.2}\n")
	unset := mustParseAs(t, "unset.yaml", "rules: []\n")
	cases := []struct {
		name            string
		system, project string
		level           Level
		shell           Outcome
		ttl             time.Duration
		threshold       float64
	}{
		{"what a file does not write binds nothing", "rules: []", "rules: []", Full, Allow, time.Hour, 0.2},
		{"system caps", "level: supervised\ndefaults: {shell: ask}\napprovals: {ttl: 10m}\njudge: {threshold: 0.5}", "rules: []", Supervised, Ask, 10 * time.Minute, 0.5},
		{"project tightens", "rules: []", "level: readonly\ndefaults: {shell: deny}\napprovals: {ttl: 30s}\njudge: {threshold: 0.9}", ReadOnly, Deny, 30 * time.Second, 0.9},
		{"project cannot loosen", "level: supervised\napprovals: {ttl: 10m}", "level: full\ndefaults: {shell: allow}\napprovals: {ttl: 2h}\njudge: {threshold: 0}", Supervised, Allow, 10 * time.Minute, 0.2},
	}
	for _, tc := range cases {
		m, _ := Merge(mustParseAs(t, "system.yaml", tc.system), user, mustParseAs(t, "project.yaml", tc.project))
		if m.Level != tc.level || m.LevelFor("cli", "ann") != tc.level || m.Shell != tc.shell || m.ApprovalTTL != tc.ttl || m.JudgeThreshold != tc.threshold {
			t.Errorf("%s: level %s shell %s ttl %s threshold %v", tc.name, m.Level, m.Shell, m.ApprovalTTL, m.JudgeThreshold)
		}
	}
	// With no user policy, the user layer is the defaults.
	m, _ := Merge(nil, nil, unset)
	if m.Level != Supervised || m.Shell != Ask || m.ApprovalTTL != DefaultApprovalTTL {
		t.Errorf("nil user: %s %s %s", m.Level, m.Shell, m.ApprovalTTL)
	}
	// The stack's shell is the stack's: a project deny is applied.
	m, _ = Merge(nil, user, mustParseAs(t, "project.yaml", "defaults: {shell: deny}\n"))
	res, _ := m.Evaluate(context.Background(), input(cmd("python3", "x.py"), Full), nil)
	if res.Outcome != Deny || res.DecidedBy != ByDefaults {
		t.Errorf("project shell deny: %s by %s", res.Outcome, res.DecidedBy)
	}
}

func TestMergeSandbox(t *testing.T) {
	system := mustParseAs(t, "system.yaml", "sandbox: {read: [/srv/shared], ports: [443, 22]}\n")
	user := mustParseAs(t, "user.yaml", `sandbox: {write: [~/.cache/bazel], ports: [443, 22, 8080]}
rules:
  - {name: psql, action: allow, command: {argv_prefix: [psql]}, sandbox: {network: true, write: [/srv/pg]}}
`)
	project := mustParseAs(t, "project.yaml", `sandbox: {write: [/home/u/.ssh], read: [/etc/shadow], ports: [443, 9999], required: true}
rules:
  - {name: curl, action: ask, command: {argv_prefix: [curl]}, sandbox: {network: true, write: [/tmp/x]}}
  - {name: offline, action: ask, command: {argv_prefix: [make]}, sandbox: {network: false}}
`)
	m, _ := Merge(system, user, project)
	sb := func(cmds ...shellparse.Command) SandboxConfig { return m.SandboxFor(results(t, m, Full, cmds...)) }
	got := sb(cmd("ls"))
	if !slices.Equal(got.Read, []string{"/srv/shared"}) || !slices.Equal(got.Write, []string{"~/.cache/bazel"}) ||
		!slices.Equal(got.Ports, []uint16{443}) || !got.Required || got.HasNetwork() {
		t.Errorf("ls: %+v", got)
	}
	if got := sb(cmd("psql")); !got.HasNetwork() || !slices.Contains(got.Write, "/srv/pg") {
		t.Errorf("user rule gives network and a path: %+v", got)
	}
	// A project rule's network: true and paths are ignored; the decision
	// still gives curl its network.
	if got := sb(cmd("curl", "https://x.org")); !got.HasNetwork() || slices.Contains(got.Write, "/tmp/x") {
		t.Errorf("curl: %+v", got)
	}
	if got := sb(cmd("psql"), cmd("make")); got.HasNetwork() {
		t.Errorf("a project rule's network: false must win: %+v", got)
	}
	// Disjoint port lists close the network.
	p2 := mustParseAs(t, "project.yaml", "sandbox: {ports: [9999]}\n")
	m2, _ := Merge(system, user, p2)
	if got := m2.SandboxFor(results(t, m2, Full, cmd("psql"))); got.HasNetwork() || len(got.Ports) != 0 {
		t.Errorf("disjoint ports: %+v", got)
	}
	if s := m.Sandbox; !s.Required || !slices.Equal(s.Ports, []uint16{443}) || slices.Contains(s.Write, "/home/u/.ssh") {
		t.Errorf("stack section %+v", s)
	}
}

// TestLintLayeredLoosening pins every loosening Merge reports, positioned
// in the file that attempts it.
func TestLintLayeredLoosening(t *testing.T) {
	user := mustParseAs(t, "user.yaml", `level: supervised
rules:
  - {name: git status, action: allow, command: {argv_prefix: [git, status]}}
`)
	src := `level: full
defaults: {shell: allow}
approvals: {ttl: 1h}
judge: {threshold: 0.1}
sandbox: {write: [~/.ssh], network: true}
profiles:
  - {channel: telegram, sender: "*", level: full}
rules:
  - {name: curl, action: allow, command: {argv_prefix: [curl]}}
  - {name: status, action: allow, command: {argv_prefix: [git, status]}}
  - {name: reads, action: allow, conditions: {target: {starts_with: /srv}}}
  - {name: touch, action: allow, command: {argv_prefix: [touch]}, match: ["touch /w/x", "touch a"]}
  - {name: deny rm, action: deny, command: {argv_prefix: [rm]}}
`
	var got []string
	for _, d := range LintLayered(LayerProject, nil, user, "project.yaml", []byte(src)) {
		got = append(got, d.String())
	}
	want := []string{
		`project.yaml:1:8: warning: level full is above the level supervised of the layers above (user.yaml); the lower level applies`,
		`project.yaml:2:19: warning: defaults.shell allow is looser than ask in the layers above (user.yaml), which it cannot loosen; ask applies`,
		`project.yaml:3:18: warning: approvals.ttl 3600s is longer than 600s in the layers above (user.yaml); the shorter applies`,
		`project.yaml:4:20: warning: judge.threshold 0.1 is lower than 0.3 in the layers above (user.yaml); the higher applies`,
		`project.yaml:5:10: warning: sandbox read, write and socket paths are ignored: a project policy cannot widen the sandbox`,
		`project.yaml:5:10: warning: sandbox network: true is ignored: a project policy cannot give commands network`,
		`project.yaml:7:5: warning: profile "telegram/*" sets level full, above the level supervised the layers above (user.yaml) gives these requests; the lower level applies`,
		`project.yaml:9:5: warning: project allow rule "curl" would allow "curl", which the layers above ask about (level supervised needs approval for network:http); it is ignored there and only takes precedence over the project's own lower rules`,
		`project.yaml:11:5: warning: project allow rule "reads" cannot allow what the layers above ask about or deny, and cannot be checked against them: give it match: examples`,
		`project.yaml:12:5: warning: project allow rule "touch" would allow "touch /w/x", which the layers above ask about (level supervised needs approval for fs:write); it is ignored there and only takes precedence over the project's own lower rules`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The same file as a user policy under no system policy has nothing
	// to loosen; under a system policy, what the system writes binds.
	if d := LintLayered(LayerUser, nil, nil, "project.yaml", []byte(src)); slices.ContainsFunc(d, func(d Diagnostic) bool { return strings.Contains(d.Msg, "above") || strings.Contains(d.Msg, "loosen") }) {
		t.Errorf("user layer without system: %v", d)
	}
	system := mustParseAs(t, "system.yaml", "level: supervised\nsandbox: {network: false}\n")
	got = nil
	for _, d := range LintLayered(LayerUser, system, nil, "user2.yaml", []byte("level: full\ndefaults: {shell: allow}\nsandbox: {network: true}\n")) {
		got = append(got, d.String())
	}
	want = []string{
		`user2.yaml:1:8: warning: level full is above the level supervised of the system policy system.yaml; the lower level applies`,
		`user2.yaml:3:10: warning: sandbox network: true cannot loosen network: false in the system policy system.yaml; it is ignored`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Errors come first and alone, as from Lint.
	if d := LintLayered(LayerProject, nil, user, "p.yaml", []byte("level: maybe\n")); len(d) != 1 || d[0].Severity != SeverityError {
		t.Errorf("errors: %v", d)
	}
}

// TestSecurityProjectNeverLoosens: on random (system, user, project)
// stacks and requests, adding a project layer never makes a decision less
// restrictive, and a matching system rule is never loosened below.
func TestSecurityProjectNeverLoosens(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 2026))
	ctx := context.Background()
	n := 0
	for range 600 {
		system := mustParseAs(t, "system.yaml", randPolicy(r))
		user := mustParseAs(t, "user.yaml", randPolicy(r))
		project := mustParseAs(t, "project.yaml", randPolicy(r))
		upper, _ := Merge(system, user, nil)
		full, _ := Merge(system, user, project)
		withoutSystem, _ := Merge(nil, user, project)
		if full.Level > upper.Level || withoutSystem.Level > user.Level || full.Shell.Restrictiveness() < upper.Shell.Restrictiveness() {
			t.Fatalf("settings loosened: %s/%s, %s/%s", full.Level, upper.Level, full.Shell, upper.Shell)
		}
		for range 30 {
			in, g := randInput(r)
			in.Level = full.LevelFor(in.Channel, in.Sender)
			a, err := upper.Evaluate(ctx, in, g)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := full.Evaluate(ctx, in, g)
			if b.Outcome.Restrictiveness() < a.Outcome.Restrictiveness() {
				t.Fatalf("project loosened %s: %s → %s (%s)", in.Command.String(), a.Outcome, b.Outcome, b.Reason)
			}
			c, _ := user.Evaluate(ctx, in, g)
			d, _ := withoutSystem.Evaluate(ctx, in, g)
			if d.Outcome.Restrictiveness() < c.Outcome.Restrictiveness() {
				t.Fatalf("project loosened the user's %s: %s → %s", in.Command.String(), c.Outcome, d.Outcome)
			}
			s, _ := system.Evaluate(ctx, in, g)
			if s.Rule != nil && b.Outcome.Restrictiveness() < s.Outcome.Restrictiveness() {
				t.Fatalf("system rule %q loosened on %s: %s → %s", s.Rule.Name, in.Command.String(), s.Outcome, b.Outcome)
			}
			n++
		}
	}
	t.Logf("%d stacked decisions", n)
}

// TestStackOpensNoDatabase: a decision a stack settles with rules and the
// table consults no grant.
func TestStackOpensNoDatabase(t *testing.T) {
	user := mustParseAs(t, "user.yaml", userSrc)
	project := mustParseAs(t, "project.yaml", "deny:\n  - {name: no make deploy, command: {argv_prefix: [make, deploy]}}\n")
	m, _ := Merge(nil, user, project)
	g := &fakeGrants{keys: map[GrantKey]bool{}}
	for _, c := range []shellparse.Command{cmd("git", "status"), cmd("make", "deploy"), cmd("make", "x"), cmd("ls")} {
		if _, err := m.Evaluate(context.Background(), input(c, Full), g); err != nil {
			t.Fatal(err)
		}
	}
	if g.calls != 0 {
		t.Fatalf("grants consulted %d times", g.calls)
	}
	res, _ := m.Evaluate(context.Background(), input(cmd("rm", "/w/a"), Supervised), g)
	if g.calls != 1 || res.Outcome != Ask || len(res.Consulted) != 1 || res.Consulted[0].Found {
		t.Fatalf("ask rule: %d calls, %+v", g.calls, res)
	}
}

// TestMergedSandboxSectionMatchesSandboxFor: the merged section shown for a
// stack combines bind lists as SandboxFor enforces them.
func TestMergedSandboxSectionMatchesSandboxFor(t *testing.T) {
	for _, tc := range []struct {
		user, project string
		bind          []uint16
		network       bool
	}{
		{"sandbox: {network: true, bind: [8080, 9090]}", "sandbox: {bind: [9090]}", []uint16{9090}, true},
		{"sandbox: {network: true, bind: [8080]}", "sandbox: {bind: [9090]}", nil, true},
		{"sandbox: {network: true}", "sandbox: {bind: [9090]}", nil, true},
	} {
		m, _ := Merge(nil, mustParseAs(t, "user.yaml", tc.user), mustParseAs(t, "project.yaml", tc.project))
		got := m.Sandbox
		if !slices.Equal(got.Bind, tc.bind) || got.Network == nil || *got.Network != tc.network {
			t.Errorf("%s + %s: bind %v network %v, want bind %v network %v", tc.user, tc.project, got.Bind, got.Network, tc.bind, tc.network)
		}
		enforced := m.SandboxFor(nil)
		if !slices.Equal(enforced.Bind, tc.bind) || *enforced.Network != tc.network {
			t.Errorf("%s + %s: SandboxFor gives bind %v network %v", tc.user, tc.project, enforced.Bind, *enforced.Network)
		}
	}
}

// A user's allow rule that a system rule denies or asks about is reported
// when the user's file is linted; one the system's table alone would ask
// about is the user's to allow.
func TestLintUserRulesUnderSystem(t *testing.T) {
	system := mustParseAs(t, "system.yaml", "rules:\n  - {name: no history, action: deny, command: {argv_prefix: [git, log]}}\n  - {name: look first, action: ask, command: {argv_prefix: [kubectl]}}\n")
	src := `rules:
  - {name: history, action: allow, priority: 900, command: {argv_prefix: [git, log]}}
  - {name: cluster, action: allow, match: ["kubectl get pods"], conditions: {command: {equals: kubectl}}}
  - {name: tests, action: allow, command: {argv_prefix: [make, test]}}
`
	var got []string
	for _, d := range LintLayered(LayerUser, system, nil, "user.yaml", []byte(src)) {
		got = append(got, d.String())
	}
	want := []string{
		`user.yaml:2:5: warning: allow rule "history" would allow "git log", which the system policy denies (rule "no history" denies it); the system's rule applies`,
		`user.yaml:3:5: warning: allow rule "cluster" would allow "kubectl get pods", which the system policy asks about (rule "look first" asks first); the system's rule applies`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
