package gate

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// The day-of-work corpus (testdata/daywork, described in its README.md)
// holds command lines coding agents really ran, one a line, each judged
// as `mnemos policy check --dry-run -- bash -c LINE` would judge it: in a
// workspace that looks like a real project, with the default policy at
// each level. The measurement says how much ordinary work runs without
// asking; the assertions keep it from getting worse.
//
// Run `go test -run DayWork -v ./gate/` for the tables and the lines that
// ask, or testdata/daywork/measure.sh for the tables in markdown.

// Ratchet floors: the share of ordinary lines (percent) allowed without
// asking, measured when the corpus was built. Raise them as fixes land;
// never lower them to make a change pass.
const (
	dayworkFloorFull       = 98.3
	dayworkFloorSupervised = 32.7
)

// dayworkScriptedDayMax is, for each scripted day
// (testdata/daywork/*.session), the number of approvals it needed at
// supervised when measured. The target is at most 5; lower these as
// fixes land.
var dayworkScriptedDayMax = map[string]int{
	"scripted_day_go.session": 1,
	"scripted_day_ts.session": 1,
}

// dayworkKnownGuardDenials lists ordinary lines the guard denies at full,
// with the reason the denial is wrong. An ordinary line denied by the
// guard and not listed here fails the test.
var dayworkKnownGuardDenials = map[string]string{}

const dayworkOrdinary = "ordinary"

// dayworkClasses are the classes a line can be marked with; unmarked lines
// are ordinary in-workspace work.
var dayworkClasses = []string{dayworkOrdinary, "network", "outside", "destructive", "escape"}

type dayworkLine struct {
	file  string
	line  int
	cmd   string
	class string
}

func (l dayworkLine) String() string { return fmt.Sprintf("%s:%d", l.file, l.line) }

var (
	dayworkMarker     = regexp.MustCompile(`^(.*?)\s{2,}# class: ([a-z]+)\s*$`)
	dayworkSubcommand = regexp.MustCompile(`^[a-z][a-z0-9:_-]*$`)
)

// loadDayworkFile reads one corpus file (*.txt, or the scripted day).
func loadDayworkFile(t *testing.T, file string) []dayworkLine {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []dayworkLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		l := dayworkLine{file: filepath.Base(file), line: n, cmd: text, class: dayworkOrdinary}
		if m := dayworkMarker.FindStringSubmatch(text); m != nil {
			l.cmd, l.class = m[1], m[2]
			if l.class == dayworkOrdinary || !contains(dayworkClasses, l.class) {
				t.Errorf("%s: unknown class %q (want one of %v, or no mark for ordinary work)", l, l.class, dayworkClasses[1:])
			}
		}
		l.cmd = strings.ReplaceAll(l.cmd, "␤", "\n")
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func loadDaywork(t *testing.T) []dayworkLine {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "daywork", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files in testdata/daywork (%v)", err)
	}
	sort.Strings(files)
	var out []dayworkLine
	for _, f := range files {
		if filepath.Base(f) == dayworkHeldOutFile {
			continue // TestDayWorkHeldOut's
		}
		out = append(out, loadDayworkFile(t, f)...)
	}
	return out
}

// dayworkEnv is the environment the agent's commands inherit: an ordinary
// login on a machine with the usual toolchains in system directories.
func dayworkEnv(home string) []string {
	return []string{
		"PATH=/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home,
		"USER=dev",
		"LOGNAME=dev",
		"SHELL=/bin/bash",
		"LANG=C.UTF-8",
		"TERM=xterm-256color",
	}
}

// dayworkFixture is a fresh user: the default policy written by `mnemos
// init` with its level set, no MNEMOS_HOME (so the XDG directories under
// home), and a polyglot project checked out in home/src/project.
type dayworkFixture struct {
	home, ws string
	paths    Paths
	audit    *memAudit
	now      time.Time
}

func newDayworkFixture(t *testing.T, level policy.Level) *dayworkFixture {
	t.Helper()
	// Outside /tmp, which the sandbox grants: it never grants a directory
	// holding the home directory.
	dir, err := os.MkdirTemp("/var/tmp", "mnemos-daywork-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := &dayworkFixture{home: filepath.Join(dir, "home"), audit: &memAudit{},
		now: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)}
	f.ws = filepath.Join(f.home, "src", "project")
	writeDayworkProject(t, f.ws)
	f.paths, err = Locate("", func(string) string { return "" }, f.home)
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(policy.DefaultSource()), "\nlevel: supervised\n", "\nlevel: "+level.String()+"\n", 1)
	if !strings.Contains(src, "\nlevel: "+level.String()+"\n") {
		t.Fatal("the default policy no longer sets `level: supervised` on a line of its own")
	}
	if err := os.MkdirAll(f.paths.ConfigDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(f.paths.PolicyFile, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// gate builds the gate one `mnemos` process would: the policy file read
// afresh (an approval may have added a rule to it), the state shared.
func (f *dayworkFixture) gate(t *testing.T) *Gate {
	t.Helper()
	pol, err := policy.Load(f.paths.PolicyFile)
	if err != nil {
		t.Fatal(err)
	}
	env := dayworkEnv(f.home)
	g := New(Config{Paths: f.paths, Policy: pol, UserHome: f.home, SelfNames: []string{"mnemos"},
		Vars: map[string]string{"USER": "dev", "LOGNAME": "dev"},
		Now:  func() time.Time { return f.now }, Audit: f.audit,
		Environ: func() []string { return env }, Watch: watchOn})
	t.Cleanup(func() { g.Close() })
	return g
}

func (f *dayworkFixture) expand(cmd string) string {
	return strings.NewReplacer("@HOME@", f.home, "@WS@", f.ws).Replace(cmd)
}

func (f *dayworkFixture) request(cmd, session string) Request {
	return Request{Argv: []string{"bash", "-c", f.expand(cmd)}, Cwd: f.ws, Channel: "cli", Sender: "dev", Session: session}
}

// writeDayworkProject lays out the project the corpus works in: one git
// repository holding a Go module, a TypeScript package, a Python package,
// a Rust crate, a Gradle build and C sources, each with a few files the
// corpus names.
func writeDayworkProject(t *testing.T, ws string) {
	t.Helper()
	files := map[string]string{
		".git/HEAD":                            "ref: refs/heads/main\n",
		".git/config":                          "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = https://github.com/example/project.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
		".git/description":                     "project\n",
		".git/refs/heads/.keep":                "",
		".git/objects/info/.keep":              "",
		".gitignore":                           "/specstory\nnode_modules/\ntarget/\nbuild/\n__pycache__/\n",
		"README.md":                            "# project\n",
		"CHANGELOG.md":                         "# Changelog\n",
		"changelog.md":                         "# changelog\n",
		"docs/CLI-RELEASE.md":                  "# Releasing\n",
		"go.mod":                               "module github.com/example/project\n\ngo 1.23\n",
		"main.go":                              "package main\n\nfunc main() {}\n",
		"pkg/cmd/resume.go":                    "package cmd\n",
		"pkg/cmd/resume_test.go":               "package cmd\n",
		"pkg/cmd/watch.go":                     "package cmd\n",
		"pkg/cloud/sync.go":                    "package cloud\n",
		"pkg/session/session.go":               "package session\n",
		"pkg/spi/schema/types.go":              "package schema\n",
		"pkg/utils/path.go":                    "package utils\n",
		"pkg/providers/claudecode/provider.go": "package claudecode\n",
		"package.json":                         "{\n  \"name\": \"project\",\n  \"type\": \"module\",\n  \"scripts\": {\"test\": \"bun test\", \"build\": \"tsc\", \"lint\": \"eslint src\", \"dev\": \"vite\"},\n  \"devDependencies\": {\"typescript\": \"^5.6.0\", \"eslint\": \"^9.0.0\"}\n}\n",
		"tsconfig.json":                        "{\"compilerOptions\": {\"strict\": true}}\n",
		"src/cli.ts":                           "console.log('cli')\n",
		"src/index.ts":                         "export {}\n",
		"src/domain/session.ts":                "export {}\n",
		"src/domain/session.test.ts":           "export {}\n",
		"src/domain/git.pr.test.ts":            "export {}\n",
		"process/tasks.md":                     "# Tasks\n",
		"pyproject.toml":                       "[project]\nname = \"politipo\"\nversion = \"0.1.0\"\n",
		"politipo/__init__.py":                 "",
		"politipo/test_politipo.py":            "def test_ok():\n    assert True\n",
		"politipo/test_type_converter.py":      "def test_ok():\n    assert True\n",
		"tests/test_type_converter.py":         "def test_ok():\n    assert True\n",
		"tests/missing_colon.py":               "print(1)\n",
		"main.py":                              "print('main')\n",
		"reproduce.py":                         "print('reproduce')\n",
		"Cargo.toml":                           "[package]\nname = \"project\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"src/main.rs":                          "fn main() {}\n",
		"build.gradle":                         "plugins { id 'java' }\n",
		"settings.gradle":                      "rootProject.name = 'project'\n",
		"src/main/java/app/App.java":           "package app;\nclass App {}\n",
		"Makefile":                             "all:\n\tcc -o app app.c\ntest: all\n\t./app\nvet:\n\tgo vet ./...\n",
		"CMakeLists.txt":                       "cmake_minimum_required(VERSION 3.20)\nproject(app C)\nadd_executable(app app.c)\n",
		"app.c":                                "int main(void) { return 0; }\n",
		"meson.build":                          "project('app', 'c')\nexecutable('app', 'app.c')\n",
		"docker-compose.yml":                   "services:\n  app:\n    build: .\n",
	}
	scripts := map[string]string{
		"gradlew":                       "#!/bin/sh\nexec java -jar gradle/wrapper/gradle-wrapper.jar \"$@\"\n",
		"configure":                     "#!/bin/sh\necho configured\n",
		"scripts/test_comprehensive.sh": "#!/bin/bash\necho ok\n",
		"test_telegram_bot.sh":          "#!/bin/bash\necho ok\n",
		"setup_production_webhook.sh":   "#!/bin/bash\necho ok\n",
		// package.json's devDependencies, installed: npx runs them
		// without fetching.
		"node_modules/.bin/tsc":    "#!/bin/sh\necho tsc\n",
		"node_modules/.bin/eslint": "#!/bin/sh\necho eslint\n",
	}
	write := func(name, content string, mode os.FileMode) {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range files {
		write(name, content, 0o644)
	}
	for name, content := range scripts {
		write(name, content, 0o755)
	}
}

// dayworkTally counts outcomes of one class at one level.
type dayworkTally struct{ allow, ask, deny int }

func (c dayworkTally) total() int { return c.allow + c.ask + c.deny }

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// dayworkResult is one level's measurement.
type dayworkResult struct {
	level   policy.Level
	byClass map[string]*dayworkTally
	// notAllowed are the ordinary lines that ask or are denied, with the
	// group they count in and the decision.
	notAllowed []dayworkMiss
	// guardDenied are the ordinary lines the guard denies.
	guardDenied []dayworkMiss
	// markedAllowed are the lines marked as needing a person that run
	// without asking.
	markedAllowed []dayworkLine
	// dump has one line per corpus line: where, class, outcome, group.
	dump []string
}

type dayworkMiss struct {
	line  dayworkLine
	group string
	d     Decision
}

func measureDaywork(t *testing.T, lines []dayworkLine, level policy.Level) dayworkResult {
	t.Helper()
	return measureDayworkIn(t, newDayworkFixture(t, level), lines, level)
}

// measureDayworkIn decides every line in the fixture f, whose policy is
// at level.
func measureDayworkIn(t *testing.T, f *dayworkFixture, lines []dayworkLine, level policy.Level) dayworkResult {
	t.Helper()
	g := f.gate(t)
	res := dayworkResult{level: level, byClass: map[string]*dayworkTally{}}
	for _, c := range dayworkClasses {
		res.byClass[c] = &dayworkTally{}
	}
	for _, l := range lines {
		d, err := g.Decide(context.Background(), f.request(l.cmd, ""), Mode{DryRun: true})
		if err != nil {
			t.Fatalf("%s: Decide(%q): %v", l, l.cmd, err)
		}
		tl := res.byClass[l.class]
		group := ""
		if d.Outcome != policy.Allow {
			group = dayworkGroup(d)
		}
		res.dump = append(res.dump, fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", level, l, l.class, d.Outcome, group, strings.ReplaceAll(l.cmd, "\n", "␤")))
		switch d.Outcome {
		case policy.Allow:
			tl.allow++
		case policy.Ask:
			tl.ask++
		default:
			tl.deny++
		}
		if l.class != dayworkOrdinary && d.Outcome == policy.Allow {
			res.markedAllowed = append(res.markedAllowed, l)
		}
		if l.class != dayworkOrdinary || d.Outcome == policy.Allow {
			continue
		}
		m := dayworkMiss{line: l, group: group, d: d}
		res.notAllowed = append(res.notAllowed, m)
		if d.BlockedBy == "guard" {
			res.guardDenied = append(res.guardDenied, m)
		}
	}
	return res
}

// subcommandTools are programs whose first operand names what they do.
var subcommandTools = map[string]bool{
	"go": true, "git": true, "npm": true, "pnpm": true, "yarn": true, "bun": true, "npx": true,
	"cargo": true, "rustup": true, "gh": true, "docker": true, "docker-compose": true, "pip": true,
	"pip3": true, "uv": true, "poetry": true, "gradlew": true, "mvn": true, "make": true,
	"meson": true, "golangci-lint": true, "minsky": true, "swift": true, "task-master": true,
}

// dayworkGroup names why a request was not allowed: the program (and its
// subcommand) of the simple command that decided it, and what decided
// (the guard, the judge, a rule, or the table's cells that ask).
func dayworkGroup(d Decision) string {
	var cd *CommandDecision
	for i := range d.Commands {
		if d.Commands[i].Outcome == d.Outcome {
			cd = &d.Commands[i]
			break
		}
	}
	if cd == nil {
		return "(" + d.BlockedBy + ") " + firstLine(d.Reason)
	}
	name := dayworkProgram(cd.Command)
	switch {
	case cd.BlockedBy == "guard":
		return name + ": guard"
	case cd.BlockedBy == "judge":
		return name + ": judge"
	case cd.BlockedBy != "":
		return name + ": " + cd.BlockedBy
	}
	if cd.Policy == nil {
		return name + ": " + cd.DecidedBy
	}
	if cd.Policy.Rule != nil {
		return name + ": rule " + cd.Policy.Rule.Name
	}
	caps := map[string]bool{}
	for _, a := range cd.Policy.Accesses {
		if a.Cell != policy.Allowed {
			caps[string(a.Capability)] = true
		}
	}
	if len(caps) == 0 {
		return name + ": " + cd.DecidedBy
	}
	var cs []string
	for c := range caps {
		cs = append(cs, c)
	}
	sort.Strings(cs)
	return name + ": " + strings.Join(cs, "+")
}

func dayworkProgram(c shellparse.Command) string {
	if c.Dynamic || len(c.Argv) == 0 {
		return "(dynamic)"
	}
	name := path.Base(c.Argv[0].Value)
	if len(c.Argv) > 1 {
		op := c.Argv[1].Value
		if name == "python" || name == "python3" {
			if op == "-m" && len(c.Argv) > 2 {
				return name + " -m " + c.Argv[2].Value
			}
			if op == "-c" {
				return name + " -c"
			}
		}
		if subcommandTools[name] && dayworkSubcommand.MatchString(op) {
			return name + " " + op
		}
	}
	return name
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// TestDayWork measures the corpus at each level, prints the tables, and
// holds the ratchets: nothing ordinary is denied by the guard at full
// (unless a known issue says why), and the share of ordinary work that
// runs without asking at full and at supervised never drops.
func TestDayWork(t *testing.T) {
	lines := loadDaywork(t)
	if len(lines) < 300 {
		t.Errorf("the day-of-work corpus has %d lines, want at least 300", len(lines))
	}
	var results []dayworkResult
	for _, level := range []policy.Level{policy.Full, policy.Supervised, policy.ReadOnly} {
		results = append(results, measureDaywork(t, lines, level))
	}
	report := dayworkReport(lines, results)
	for _, s := range strings.Split(strings.TrimRight(report, "\n"), "\n") {
		t.Log(s)
	}
	if out := os.Getenv("MNEMOS_DAYWORK_REPORT"); out != "" {
		if err := os.WriteFile(out, []byte(report), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out := os.Getenv("MNEMOS_DAYWORK_DUMP"); out != "" {
		var all []string
		for _, r := range results {
			all = append(all, r.dump...)
		}
		if err := os.WriteFile(out, []byte(strings.Join(all, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if testing.Verbose() {
		for _, r := range results {
			t.Logf("ordinary lines that do not run at %s:", r.level)
			for _, m := range r.notAllowed {
				t.Logf("  %s: %s: %q\n      %s", m.line, m.d.Outcome, m.line.cmd, describe(m.d))
			}
			t.Logf("lines marked as needing a person that run without asking at %s:", r.level)
			for _, l := range r.markedAllowed {
				t.Logf("  %s (%s): %q", l, l.class, l.cmd)
			}
		}
	}

	for _, r := range results {
		if r.level != policy.Full {
			continue
		}
		seen := map[string]bool{}
		for _, m := range r.guardDenied {
			seen[m.line.cmd] = true
			if why, ok := dayworkKnownGuardDenials[m.line.cmd]; ok {
				t.Logf("%s: known issue (%s): the guard denies %q: %s", m.line, why, m.line.cmd, m.d.Reason)
				continue
			}
			t.Errorf("%s: ordinary work denied by the guard at full: %q: %s", m.line, m.line.cmd, describe(m.d))
		}
		for cmd := range dayworkKnownGuardDenials {
			if !seen[cmd] {
				t.Logf("known issue closed, drop it from dayworkKnownGuardDenials: %q", cmd)
			}
		}
	}
	for _, r := range results {
		o := r.byClass[dayworkOrdinary]
		got := pct(o.allow, o.total())
		var floor float64
		switch r.level {
		case policy.Full:
			floor = dayworkFloorFull
		case policy.Supervised:
			floor = dayworkFloorSupervised
		default:
			continue
		}
		if got < floor {
			t.Errorf("at %s, %.1f %% of ordinary work runs without asking (%d/%d); the floor is %.1f %%",
				r.level, got, o.allow, o.total(), floor)
		} else if got >= floor+0.5 {
			t.Logf("at %s, %.1f %% of ordinary work runs without asking: raise its floor (%.1f) to %.1f", r.level, got, floor, float64(int(got*10))/10)
		}
	}
}

// dayworkReport renders the measurement in markdown: a table per level,
// then the groups of ordinary work that ask, most frequent first.
func dayworkReport(lines []dayworkLine, results []dayworkResult) string {
	var b strings.Builder
	counts := map[string]int{}
	for _, l := range lines {
		counts[l.class]++
	}
	fmt.Fprintf(&b, "Day-of-work corpus: %d command lines (%d ordinary", len(lines), counts[dayworkOrdinary])
	for _, c := range dayworkClasses[1:] {
		fmt.Fprintf(&b, ", %d %s", counts[c], c)
	}
	b.WriteString("), each judged as `mnemos policy check --dry-run -- bash -c LINE` with the default policy.\n\n")
	b.WriteString("| level | class | lines | run without asking | ask | denied |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|\n")
	for _, r := range results {
		for _, c := range dayworkClasses {
			tl := r.byClass[c]
			if tl.total() == 0 {
				continue
			}
			n := tl.total()
			fmt.Fprintf(&b, "| %s | %s | %d | %d (%.1f %%) | %d (%.1f %%) | %d (%.1f %%) |\n",
				r.level, c, n, tl.allow, pct(tl.allow, n), tl.ask, pct(tl.ask, n), tl.deny, pct(tl.deny, n))
		}
	}
	for _, r := range results {
		groups := map[string]int{}
		for _, m := range r.notAllowed {
			groups[m.d.Outcome.String()+" — "+m.group]++
		}
		if len(groups) == 0 {
			continue
		}
		var keys []string
		for k := range groups {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if groups[keys[i]] != groups[keys[j]] {
				return groups[keys[i]] > groups[keys[j]]
			}
			return keys[i] < keys[j]
		})
		fmt.Fprintf(&b, "\nWhy ordinary work does not run at %s (lines, outcome — program: what decided):\n\n", r.level)
		for _, k := range keys {
			fmt.Fprintf(&b, "- %d × %s\n", groups[k], k)
		}
	}
	return b.String()
}

// TestDayWorkScriptedDay replays real stretches of coding sessions at
// supervised (testdata/daywork/*.session) the way a person would live
// them: every command is decided as `mnemos run` would; when one asks, the
// person approves it with the broadest concession `mnemos approvals
// approve` accepts for it (--remember session, else --remember permanent,
// else a one-shot approval), through the same Gate.Approve the CLI calls,
// and the agent runs it again. The number of approvals is the day's cost;
// it never grows past what was measured.
//
// When approve learns to remember a narrower prefix (program and
// subcommand) or a bash -c script per simple command, give it that choice
// here and lower dayworkScriptedDayMax to what it then measures.
func TestDayWorkScriptedDay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "daywork", "*.session"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripted days in testdata/daywork (%v)", err)
	}
	sort.Strings(files)
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(strings.TrimSuffix(name, ".session"), func(t *testing.T) {
			max, ok := dayworkScriptedDayMax[name]
			if !ok {
				t.Fatalf("%s has no entry in dayworkScriptedDayMax", name)
			}
			day := loadDayworkFile(t, file)
			if len(day) < 20 {
				t.Fatalf("%s has %d commands, want about 22", name, len(day))
			}
			for _, l := range day {
				if l.class != dayworkOrdinary {
					t.Fatalf("%s: a scripted day holds only ordinary work; %q is marked %s", l, l.cmd, l.class)
				}
			}
			s := replayDay(t, day)
			summary := fmt.Sprintf("%s at supervised: %d commands, %d approvals (contained work for the session %d, remembered for the session %d, permanently %d, approved once %d), %d still not run after approval; target: at most 5",
				name, len(day), s.approvals, s.how["contained"], s.how["session"], s.how["permanent"], s.how["once"], s.blocked)
			t.Log(summary)
			appendDayworkReport(t, "\nScripted day "+summary+".\n")
			if s.approvals > max {
				t.Errorf("%s needs %d approvals; it needed %d when measured", name, s.approvals, max)
			} else if s.approvals < max {
				t.Logf("%s needs fewer approvals than measured: lower dayworkScriptedDayMax[%q] to %d", name, name, s.approvals)
			}
		})
	}
}

type dayStats struct {
	approvals, blocked int
	how                map[string]int
}

func replayDay(t *testing.T, day []dayworkLine) dayStats {
	t.Helper()
	f := newDayworkFixture(t, policy.Supervised)
	ctx := context.Background()
	by := approvals.Identity{Channel: "cli", Sender: "dev"}
	const session = "day-1"
	st := dayStats{how: map[string]int{}}
	for _, l := range day {
		g := f.gate(t)
		req := f.request(l.cmd, session)
		d, err := g.Decide(ctx, req, Mode{SpendTicket: true})
		if err != nil {
			t.Fatalf("%s: Decide: %v", l, err)
		}
		f.now = f.now.Add(2 * time.Minute)
		switch d.Outcome {
		case policy.Allow:
			t.Logf("%s: runs: %q", l, l.cmd)
			continue
		case policy.Deny:
			st.blocked++
			t.Logf("%s: denied, a person must step in: %q: %s", l, l.cmd, describe(d))
			continue
		}
		if d.Approval == nil {
			t.Fatalf("%s: ask without a pending approval: %s", l, describe(d))
		}
		st.approvals++
		how := ""
		for _, remember := range []string{"contained", "session", "permanent", ""} {
			_, err := g.Approve(ctx, d.Approval.Token, by, ApproveOptions{Remember: remember})
			if err == nil {
				how = remember
				break
			}
			if remember == "" {
				t.Fatalf("%s: approving %s: %v", l, d.Approval.Token, err)
			}
			t.Logf("%s: --remember %s refused: %v", l, remember, err)
		}
		if how == "" {
			how = "once"
		}
		st.how[how]++
		rerun, err := f.gate(t).Decide(ctx, req, Mode{SpendTicket: true})
		if err != nil {
			t.Fatalf("%s: rerun: %v", l, err)
		}
		if rerun.Outcome != policy.Allow {
			st.blocked++
			t.Logf("%s: approved (%s) but the rerun is %s: %q: %s", l, how, rerun.Outcome, l.cmd, describe(rerun))
			continue
		}
		t.Logf("%s: asked (%s), approved (%s): %q", l, dayworkGroup(d), how, l.cmd)
	}
	return st
}

// appendDayworkReport adds text to the markdown report
// (MNEMOS_DAYWORK_REPORT) that TestDayWork wrote.
func appendDayworkReport(t *testing.T, text string) {
	t.Helper()
	out := os.Getenv("MNEMOS_DAYWORK_REPORT")
	if out == "" {
		return
	}
	fh, err := os.OpenFile(out, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err == nil {
		_, err = fh.WriteString(text)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}
