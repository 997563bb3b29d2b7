package policy

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/shellparse"
)

func TestJournalSection(t *testing.T) {
	def := DefaultJournal()
	for _, tc := range []struct {
		name, yaml string
		want       func(*Journal)
		err        string // part of the error, with its position
	}{
		{"none", "level: supervised\n", nil, ""},
		{"off", "journal:\n  enabled: false\n", func(j *Journal) { j.On = false }, ""},
		{"sizes", "journal:\n  quota: 2GiB\n  max_file: 500 MB\n", func(j *Journal) { j.Quota, j.MaxFile = 2<<30, 500e6 }, ""},
		{"plain bytes", "journal:\n  quota: 1048576\n", func(j *Journal) { j.Quota = 1 << 20 }, ""},
		{"keep", "journal:\n  keep: 48h\n", func(j *Journal) { j.Keep = 48 * time.Hour }, ""},
		{"keep days", "journal:\n  keep: 30d\n", func(j *Journal) { j.Keep = 30 * 24 * time.Hour }, ""},
		{"big deletion", "journal:\n  big_deletion: 200\n", func(j *Journal) { j.BigDeletion = 200 }, ""},
		{"own exclude", "journal:\n  exclude: [build, node_modules]\n", func(j *Journal) { j.Exclude = []string{"build", "node_modules"} }, ""},
		{"nothing excluded", "journal:\n  exclude: []\n", func(j *Journal) { j.Exclude = []string{} }, ""},
		{"enabled not a bool", "journal:\n  enabled: yes please\n", nil, "p.yaml:2:12: expected true or false"},
		{"enabled as on", "journal:\n  enabled: on\n", nil, "p.yaml:2:12: expected true or false"},
		{"bad size", "journal:\n  quota: lots\n", nil, "p.yaml:2:10: journal quota \"lots\" must be a size such as 300MiB"},
		{"negative size", "journal:\n  quota: -5MiB\n", nil, "p.yaml:2:10: journal quota \"-5MiB\" must be a size"},
		{"fraction", "journal:\n  max_file: 1.5GiB\n", nil, "p.yaml:2:13: journal max_file \"1.5GiB\" must be a size"},
		{"quota too small", "journal:\n  quota: 10KiB\n", nil, "p.yaml:2:10: journal quota 10KiB is out of range (1MiB to 1024TiB)"},
		{"size overflows", "journal:\n  quota: 99999999999TiB\n", nil, "p.yaml:2:10: journal quota \"99999999999TiB\" must be a size"},
		{"keep too short", "journal:\n  keep: 10m\n", nil, "p.yaml:2:9: journal keep \"10m\" must be a duration between 1h and 365d"},
		{"keep too long", "journal:\n  keep: 400d\n", nil, "p.yaml:2:9: journal keep \"400d\" must be a duration"},
		{"big deletion zero", "journal:\n  big_deletion: 0\n", nil, "p.yaml:2:17: integer 0 out of range"},
		{"exclude a path", "journal:\n  exclude: [build/out]\n", nil, "p.yaml:2:13: journal exclude \"build/out\" must be a directory name, without \"/\""},
		{"exclude a pattern", "journal:\n  exclude: [\"*.o\"]\n", nil, "p.yaml:2:13: journal exclude \"*.o\" must be a directory name, not a pattern"},
		{"exclude .git", "journal:\n  exclude: [.git]\n", nil, "p.yaml:2:13: journal exclude \".git\": the repository is always journaled"},
		{"exclude dot", "journal:\n  exclude: [..]\n", nil, "p.yaml:2:13: journal exclude \"..\" is not a directory name"},
		{"exclude twice", "journal:\n  exclude: [dist, dist]\n", nil, "p.yaml:2:19: journal exclude \"dist\" is listed twice"},
		{"exclude a string", "journal:\n  exclude: dist\n", nil, "p.yaml:2:12: journal exclude must be a list of directory names"},
		{"exclude a number", "journal:\n  exclude: [1]\n", nil, "p.yaml:2:13: expected a string"},
		{"unknown key", "journal:\n  compress: true\n", nil, "p.yaml:2:3: unknown key \"compress\" in journal (want enabled, quota, keep, max_file, exclude, big_deletion)"},
		{"not a mapping", "journal: off\n", nil, "p.yaml:1:10: expected a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("p.yaml", []byte(tc.yaml))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := def
			if tc.want != nil {
				tc.want(&want)
			}
			same := func(got Journal) bool {
				return got.On == want.On && got.Quota == want.Quota && got.Keep == want.Keep && got.MaxFile == want.MaxFile &&
					got.BigDeletion == want.BigDeletion && slices.Equal(got.Exclude, want.Exclude)
			}
			if !same(p.Journal) {
				t.Fatalf("journal %+v, want %+v", p.Journal, want)
			}
			// Format writes back what the file wrote, and only that.
			out := Format(p)
			again, err := Parse("p.yaml", out)
			if err != nil {
				t.Fatalf("formatted: %v\n%s", err, out)
			}
			if !same(again.Journal) || again.Journal.set != p.Journal.set {
				t.Errorf("formatted journal %+v\n%s", again.Journal, out)
			}
			if tc.want == nil && strings.Contains(string(out), "journal") {
				t.Errorf("a policy without a journal section formats one:\n%s", out)
			}
		})
	}
}

// TestDefaultJournalListed: the default policy lists every default
// setting of the journal, so that a person sees and can remove them.
func TestDefaultJournalListed(t *testing.T) {
	j := Default().Journal
	for _, k := range journalKeyNames {
		if !j.Wrote(k) {
			t.Errorf("default.yaml does not write journal %s", k)
		}
	}
	def := DefaultJournal()
	if !j.On || j.Quota != def.Quota || j.Keep != def.Keep || j.MaxFile != def.MaxFile || j.BigDeletion != def.BigDeletion || !slices.Equal(j.Exclude, def.Exclude) {
		t.Errorf("default.yaml's journal %+v differs from DefaultJournal %+v", j, def)
	}
}

func TestJournalExcluded(t *testing.T) {
	j := DefaultJournal()
	for _, tc := range []struct {
		rel  string
		dir  bool
		want bool
	}{
		{"node_modules", true, true},
		{"node_modules", false, false}, // a file of that name
		{"web/node_modules/x/y.js", false, true},
		{"src/main.go", false, false},
		{"target", true, true},
		{".git/index", false, false},
		{"srcnode_modules/x", false, false},
	} {
		if got := j.Excluded(tc.rel, tc.dir); got != tc.want {
			t.Errorf("Excluded(%q, %v) = %v, want %v", tc.rel, tc.dir, got, tc.want)
		}
	}
}

// TestMergeJournal: the layers combine as Journal says; what a lower
// layer cannot loosen is ignored and warned about.
func TestMergeJournal(t *testing.T) {
	sys := mustParseAs(t, "system.yaml", "journal:\n  quota: 1GiB\n  exclude: [node_modules, target]\n")
	user := mustParseAs(t, "user.yaml", "journal:\n  quota: 5GiB\n  keep: 3d\n  big_deletion: 100\n  exclude: [node_modules, dist]\n")
	project := mustParseAs(t, "project.yaml", "journal:\n  enabled: true\n  keep: 365d\n  big_deletion: 20\n  exclude: [node_modules, build]\n")
	m, diags := Merge(sys, user, project)
	j := m.Journal
	if !j.On || j.Quota != 1<<30 || j.Keep != 3*24*time.Hour || j.BigDeletion != 20 || !slices.Equal(j.Exclude, []string{"node_modules"}) {
		t.Errorf("merged journal %+v", j)
	}
	for _, want := range []string{
		"user.yaml:2:10: warning: journal quota is set by the system policy system.yaml, whose value applies",
		"user.yaml:5:12: warning: journal exclude \"dist\" is not excluded by the system policy system.yaml",
		"project.yaml:3:9: warning: journal keep is ignored: a project policy cannot choose how much the journal keeps",
		"project.yaml:5:12: warning: journal exclude \"build\" is not excluded by the layers above",
	} {
		if !slices.ContainsFunc(diags, func(d Diagnostic) bool { return strings.HasPrefix(d.String(), want) }) {
			t.Errorf("no diagnostic %q in\n%v", want, diags)
		}
	}
	// Any layer turns it off; none turns it back on.
	off := mustParseAs(t, "user.yaml", "journal:\n  enabled: false\n")
	on := mustParseAs(t, "project.yaml", "journal:\n  enabled: true\n")
	m, diags = Merge(nil, off, on)
	if m.Journal.On {
		t.Error("a project turned on the journal the user turned off")
	}
	if !slices.ContainsFunc(diags, func(d Diagnostic) bool { return strings.Contains(d.Msg, "cannot turn on the journal") }) {
		t.Errorf("no warning about turning it on: %v", diags)
	}
	m, _ = Merge(nil, mustParseAs(t, "user.yaml", "level: full\n"), mustParseAs(t, "project.yaml", "journal:\n  enabled: false\n"))
	if m.Journal.On {
		t.Error("a project could not turn the journal off")
	}
	// Without a journal section anywhere, the defaults.
	m, _ = Merge(nil, mustParseAs(t, "user.yaml", "level: full\n"), mustParseAs(t, "project.yaml", "level: full\n"))
	if def := DefaultJournal(); !m.Journal.On || m.Journal.Quota != def.Quota || !slices.Equal(m.Journal.Exclude, def.Exclude) {
		t.Errorf("merged journal without sections %+v", m.Journal)
	}
	// A project narrows the defaults' list.
	m, _ = Merge(nil, mustParseAs(t, "user.yaml", "level: full\n"), mustParseAs(t, "project.yaml", "journal:\n  exclude: [dist]\n"))
	if !slices.Equal(m.Journal.Exclude, []string{"dist"}) {
		t.Errorf("project-narrowed exclude %v", m.Journal.Exclude)
	}
}

func TestJournalNarrowed(t *testing.T) {
	by := mustParse(t, "journal:\n  enabled: false\n  big_deletion: 10\n  exclude: [dist, build]\n").Journal
	j := DefaultJournal().Narrowed(by)
	if j.On || j.BigDeletion != 10 || !slices.Equal(j.Exclude, []string{"dist"}) || j.Quota != DefaultJournalQuota {
		t.Errorf("narrowed %+v", j)
	}
	// What by does not write changes nothing.
	if j := DefaultJournal().Narrowed(mustParse(t, "level: full\n").Journal); !j.On || len(j.Exclude) != len(DefaultJournalExclude()) {
		t.Errorf("narrowed by nothing %+v", j)
	}
}

func TestUndoableRuleKey(t *testing.T) {
	for _, tc := range []struct{ yaml, err string }{
		{"deny:\n  - {name: x, command: {argv_prefix: [x]}, undoable: true}\n", ""},
		{"ask:\n  - {name: x, command: {argv_prefix: [x]}, undoable: false}\n", ""},
		{"allow:\n  - {name: x, command: {argv_prefix: [x]}, undoable: true}\n", "p.yaml:2:54: undoable is for ask and deny rules"},
		{"deny:\n  - {name: x, command: {argv_prefix: [x]}, undoable: sure}\n", "p.yaml:2:54: expected true or false"},
	} {
		p, err := Parse("p.yaml", []byte(tc.yaml))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse("p.yaml", Format(p))
		if err != nil || again.Rules[0].Undoable != p.Rules[0].Undoable {
			t.Errorf("formatted %q: %v\n%s", tc.yaml, err, Format(p))
		}
	}
}

// evalJournal decides one command of script in ExampleCwd with the
// journal on or off.
func evalJournal(t *testing.T, p *Policy, level Level, journaled bool, script string) Result {
	t.Helper()
	s, err := shellparse.ParseScript(script, shellparse.Env{Home: ExampleHome, Cwd: ExampleCwd})
	if err != nil || len(s.Commands) != 1 {
		t.Fatalf("parse %q: %v", script, err)
	}
	pl := classify.PlaceOf(s, ExampleCwd, ExampleHome)
	pl.Workspace = ExampleCwd
	in := Input{Command: s.Commands[0], Place: pl, Workspace: ExampleCwd, Level: level, Channel: "cli", Sender: "user",
		Cwd: ExampleCwd, Sandbox: SandboxedOffline, Writable: []string{ExampleCwd, "/tmp"}, Journaled: journaled}
	res, err := p.Evaluate(context.Background(), in, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSecurityContainedWorkNeedsTheJournal: without the journal nothing
// is contained work, so the default rule allows nothing and the level's
// table decides (code asks at full); with it, the same command is
// contained and runs.
func TestSecurityContainedWorkNeedsTheJournal(t *testing.T) {
	p := Default()
	for _, cmd := range []string{"go test ./...", "rm -rf src", "make build"} {
		off := evalJournal(t, p, Full, false, cmd)
		if off.Contained || off.Rule != nil && off.Rule.Name == "contained work" {
			t.Errorf("%s without the journal: contained (%s)", cmd, off.Reason)
		}
		on := evalJournal(t, p, Full, true, cmd)
		if !on.Contained || on.Outcome != Allow || on.Rule == nil || on.Rule.Name != "contained work" {
			t.Errorf("%s with the journal: %s by %s (%s), want allowed as contained work", cmd, on.Outcome, on.DecidedBy, on.Reason)
		}
	}
	if off := evalJournal(t, p, Full, false, "go test ./..."); off.Outcome != Ask {
		t.Errorf("go test at full without the journal: %s (%s), want ask", off.Outcome, off.Reason)
	}
	// A user's own rule reading the field sandbox is bound the same way.
	own := mustParse(t, "level: full\nallow:\n  - name: mine\n    conditions: {sandbox: {equals: contained}}\n")
	if r := evalJournal(t, own, Full, false, "go test ./..."); r.Outcome == Allow {
		t.Errorf("a rule on sandbox: contained allowed without the journal: %s", r.Reason)
	}
}

// TestSecurityUndoableRuleNeedsTheJournal: an undoable deny rule stays a
// denial without the journal, or for a write the journal would not keep.
func TestSecurityUndoableRuleNeedsTheJournal(t *testing.T) {
	p := Default()
	for _, tc := range []struct {
		cmd       string
		level     Level
		journaled bool
		want      Outcome
	}{
		{"git reset --hard", Full, false, Deny},
		{"git reset --hard", Supervised, false, Deny},
		{"git reset --hard", Supervised, true, Ask},
		{"git reset --hard", Full, true, Allow},
		{"git reset --hard", ReadOnly, true, Deny},
		{"git -C /srv/elsewhere reset --hard", Full, true, Deny},
		{"git -C sub reset --hard", Full, true, Deny}, // runs code: another repository's configuration
		{"git -C $DIR reset --hard", Full, true, Deny},
		{"git -C target/repo reset --hard", Full, true, Deny},
		{"git clean -fdx", Full, true, Allow},
		{"git clean -fdx", Full, false, Deny},
		{"git checkout -- .", Full, true, Allow},
		{"git branch -D old", Full, true, Deny}, // not marked undoable
		{"git push --force origin main", Full, true, Deny},
	} {
		r := evalJournal(t, p, tc.level, tc.journaled, tc.cmd)
		if r.Outcome != tc.want {
			t.Errorf("%s at %s, journal %v: %s (%s), want %s", tc.cmd, tc.level, tc.journaled, r.Outcome, r.Reason, tc.want)
		}
		if (r.Undoable != "") != (tc.journaled && r.Outcome != Deny) {
			t.Errorf("%s at %s, journal %v: Undoable %q", tc.cmd, tc.level, tc.journaled, r.Undoable)
		}
		if r.Outcome == Allow && !strings.Contains(r.Reason, "mnemos undo --last") {
			t.Errorf("%s: the reason does not say how to undo it: %s", tc.cmd, r.Reason)
		}
	}
}

// TestUndoableProjectRule: a project's undoable ask rule filters the
// layers above as an ask while the journal is off, or below level full;
// at full with the journal it stands aside, like the user's own.
func TestUndoableProjectRule(t *testing.T) {
	user := mustParseAs(t, "user.yaml", "level: full\n")
	project := mustParseAs(t, "project.yaml", "ask:\n  - name: make clean\n    command: {argv_prefix: [rm]}\n    undoable: true\n")
	m, _ := Merge(nil, user, project)
	for _, tc := range []struct {
		level     Level
		journaled bool
		want      Outcome
	}{{Full, false, Ask}, {Full, true, Allow}, {Supervised, true, Ask}} {
		r := evalJournal(t, m, tc.level, tc.journaled, "rm -rf build")
		if r.Outcome != tc.want || (r.Undoable != "") != tc.journaled {
			t.Errorf("at %s, journal %v: %s (%s), undoable %q; want %s", tc.level, tc.journaled, r.Outcome, r.Reason, r.Undoable, tc.want)
		}
	}
}
