package gate

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// The adversarial corpus lives in testdata/corpus at the repository root,
// one case a line:
//
//	COMMAND[<TAB>EXPECTATION]
//
// COMMAND is what an agent sends as one shell string; it is judged as
// `bash -c COMMAND` in a workspace, with the default policy at its default
// level. "␤" stands for a newline (here-documents, multi-line scripts),
// "@HOME@" for the user's home directory and "@WS@" for the workspace.
// Blank lines and lines starting with "#" are comments.
//
// Expectations in caught.txt:
//
//	notallow   ask or deny (the default)
//	deny       deny, by anything
//	guard      deny by the guard
//	gap:WHY    a known gap: judged and counted, reported, never failed
//
// Expectations in benign.txt (there is never a guard hit):
//
//	any        no guard hit, whatever the outcome (the default)
//	allow      allow
//	ask        ask
//	notdeny    allow or ask
//	gap:WHY    a known false positive: counted, reported, never failed
type corpusCase struct {
	line   int
	cmd    string
	expect string
	gap    string
}

func loadCorpus(t *testing.T, name string, valid ...string) []corpusCase {
	t.Helper()
	file := filepath.Join("..", "testdata", "corpus", name)
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		c := corpusCase{line: n, cmd: text}
		if i := strings.LastIndexByte(text, '\t'); i >= 0 {
			c.cmd, c.expect = text[:i], strings.TrimSpace(text[i+1:])
			if g, ok := strings.CutPrefix(c.expect, "gap:"); ok {
				c.gap = strings.TrimSpace(g)
				if c.gap == "" {
					t.Errorf("%s:%d: a gap needs a reason", name, n)
				}
			} else if !contains(valid, c.expect) {
				t.Errorf("%s:%d: unknown expectation %q (want one of %v or gap:WHY)", name, n, c.expect, valid)
			}
		}
		c.cmd = strings.ReplaceAll(c.cmd, "␤", "\n")
		if strings.TrimSpace(c.cmd) == "" {
			t.Errorf("%s:%d: empty command", name, n)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// corpusDecide judges one case the way `mnemos run -- bash -c CMD` would,
// without recording anything.
func corpusDecide(t *testing.T, f *fixture, cmd string) Decision {
	t.Helper()
	cmd = strings.NewReplacer("@HOME@", f.home, "@WS@", f.ws).Replace(cmd)
	d, err := f.g.Decide(context.Background(), f.req("bash", "-c", cmd), Mode{DryRun: true})
	if err != nil {
		t.Fatalf("Decide(%q): %v", cmd, err)
	}
	return d
}

func describe(d Decision) string {
	s := d.Outcome.String()
	if d.BlockedBy != "" {
		s += " by " + d.BlockedBy
	} else if d.DecidedBy != "" {
		s += " (" + d.DecidedBy + ")"
	}
	return s + ": " + d.Reason
}

// traceCorpus reports whether every decision should be logged
// (MNEMOS_CORPUS_TRACE=1), which helps when extending the corpus.
func traceCorpus() bool { return os.Getenv("MNEMOS_CORPUS_TRACE") == "1" }

// undoneByJournal reports whether a decision owes its outcome to the
// journal: a command of it matched an undoable rule that stood aside
// because the journal keeps what it drops (policy.Rule.Undoable).
func undoneByJournal(d Decision) bool {
	for _, c := range d.Commands {
		if c.Policy != nil && c.Policy.Undoable != "" {
			return true
		}
	}
	return false
}

// TestSecurityCorpusCaught: no destructive or secret-reading command of
// the corpus is allowed, however it is written, with the journal off
// (each expectation as written) or on (where an undoable rule of the
// default policy denies a command the journal keeps, it asks instead).
func TestSecurityCorpusCaught(t *testing.T) {
	for _, journal := range []bool{false, true} {
		t.Run(fmt.Sprintf("journal=%v", journal), func(t *testing.T) { corpusCaught(t, journal) })
	}
}

func corpusCaught(t *testing.T, journal bool) {
	f := newFixture(t, "")
	f.journal(journal)
	cases := loadCorpus(t, "caught.txt", "notallow", "deny", "guard")
	if len(cases) < 500 {
		t.Errorf("caught.txt has %d cases, want at least 500", len(cases))
	}
	caught, gaps, gapsClosed, byGuard := 0, 0, 0, 0
	for _, c := range cases {
		d := corpusDecide(t, f, c.cmd)
		if traceCorpus() {
			t.Logf("caught.txt:%d: %q: %s", c.line, c.cmd, describe(d))
		}
		if d.BlockedBy == "guard" {
			byGuard++
		}
		ok := d.Outcome != policy.Allow
		switch c.expect {
		case "deny":
			ok = d.Outcome == policy.Deny || journal && d.Outcome == policy.Ask && undoneByJournal(d)
		case "guard":
			ok = d.Outcome == policy.Deny && d.BlockedBy == "guard"
		}
		if c.gap != "" {
			gaps++
			if d.Outcome != policy.Allow {
				gapsClosed++
				t.Logf("caught.txt:%d: known gap is closed (%s): %q; drop the gap mark", c.line, describe(d), c.cmd)
			} else {
				t.Logf("caught.txt:%d: known gap (%s): %q is %s", c.line, c.gap, c.cmd, describe(d))
			}
			continue
		}
		if !ok {
			want := c.expect
			if want == "" {
				want = "notallow"
			}
			t.Errorf("caught.txt:%d: %q = %s; want %s", c.line, c.cmd, describe(d), want)
			continue
		}
		caught++
	}
	t.Logf("caught %d/%d (%d denied by the guard); known gaps %d (%d of them now closed)",
		caught, len(cases)-gaps, byGuard, gaps, gapsClosed)
}

// TestCorpusBenign: look-alikes of dangerous commands are never a guard
// hit, and everyday work gets the outcome it should.
func TestCorpusBenign(t *testing.T) {
	f := newFixture(t, "")
	cases := loadCorpus(t, "benign.txt", "any", "allow", "ask", "notdeny")
	if len(cases) < 200 {
		t.Errorf("benign.txt has %d cases, want at least 200", len(cases))
	}
	passed, gaps := 0, 0
	outcomes := map[policy.Outcome]int{}
	for _, c := range cases {
		d := corpusDecide(t, f, c.cmd)
		outcomes[d.Outcome]++
		if traceCorpus() {
			t.Logf("benign.txt:%d: %q: %s", c.line, c.cmd, describe(d))
		}
		var problem string
		switch {
		case d.BlockedBy == "guard":
			problem = "a guard hit"
		case c.expect == "allow" && d.Outcome != policy.Allow,
			c.expect == "ask" && d.Outcome != policy.Ask:
			problem = "want " + c.expect
		case c.expect == "notdeny" && d.Outcome == policy.Deny:
			problem = "want allow or ask"
		}
		if c.gap != "" {
			gaps++
			if problem == "" {
				t.Logf("benign.txt:%d: known gap is closed (%s): %q; drop the gap mark", c.line, describe(d), c.cmd)
			} else {
				t.Logf("benign.txt:%d: known gap (%s): %q is %s", c.line, c.gap, c.cmd, describe(d))
			}
			continue
		}
		if problem != "" {
			t.Errorf("benign.txt:%d: %q = %s; %s", c.line, c.cmd, describe(d), problem)
			continue
		}
		passed++
	}
	t.Logf("benign %d/%d without a guard hit and as expected (allow %d, ask %d, deny %d); known gaps %d",
		passed, len(cases)-gaps, outcomes[policy.Allow], outcomes[policy.Ask], outcomes[policy.Deny], gaps)
}

// TestSecurityInputBeyondLimitsIsRefused: inputs beyond sane bounds are
// denied as a whole with a message naming the limit, never truncated and
// then matched.
func TestSecurityInputBeyondLimitsIsRefused(t *testing.T) {
	f := newFixture(t, "level: full\ndefaults: {shell: allow}\n")
	many := make([]string, 0, 100_001)
	many = append(many, "echo")
	for range 100_000 {
		many = append(many, "a")
	}
	cases := []struct {
		name string
		argv []string
		want string
	}{
		{"1 MiB argument", []string{"echo", strings.Repeat("a", 1<<20)}, "bytes"},
		{"1 MiB script", []string{"bash", "-c", "echo " + strings.Repeat("a", 1<<20)}, "bytes"},
		{"100 000 arguments", many, "words"},
		{"100 000 arguments, no command name", many[1:], "words"},
		{"100 000 words in a script", []string{"bash", "-c", "echo" + strings.Repeat(" a", 100_000)}, "words"},
		{"10 000 nested substitutions", []string{"bash", "-c", strings.Repeat("echo $(", 10_000) + "true" + strings.Repeat(")", 10_000)}, "nests deeper"},
		{"10 000 nested subshells", []string{"bash", "-c", strings.Repeat("( ", 10_000) + "true" + strings.Repeat(" )", 10_000)}, "nests deeper"},
		{"10 000 nested groups", []string{"bash", "-c", strings.Repeat("{ ", 10_000) + "true" + strings.Repeat("; }", 10_000)}, "nests deeper"},
		{"10 000 nested arithmetic", []string{"bash", "-c", "echo $((" + strings.Repeat("(", 10_000) + "1" + strings.Repeat(")", 10_000) + "))"}, "nests deeper"},
		{"10 000 nested shells", nestedShells(10_000), "nests deeper"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := f.decide(t, Mode{DryRun: true}, tc.argv...)
			if d.Outcome != policy.Deny || d.BlockedBy != "parse" || !strings.Contains(d.Reason, tc.want) {
				t.Fatalf("= %s; want deny by parse naming %q", describe(d), tc.want)
			}
		})
	}
	// Just within the bounds, the same shapes are judged normally.
	for _, argv := range [][]string{
		{"echo", strings.Repeat("a", 1<<19)},
		many[:50_000],
		{"bash", "-c", strings.Repeat("echo $(", 20) + "true" + strings.Repeat(")", 20)},
	} {
		if d := f.decide(t, Mode{DryRun: true}, argv...); d.Outcome != policy.Allow {
			t.Errorf("%.60q… = %s; want allow", strings.Join(argv, " "), describe(d))
		}
	}
}

// nestedShells returns `bash -c 'bash -c ...'` nested n levels deep, each
// level a separate argv word of the next (as an exec argv would carry it).
func nestedShells(n int) []string {
	script := "true"
	for i := 0; i < n; i++ {
		script = fmt.Sprintf("bash -c %s", shellQuote(script))
		if len(script) > 1<<19 {
			// Quoting doubles the size; past this the bytes limit would
			// answer first, so nest through eval instead.
			script = strings.Repeat("eval ", n-i) + script
			break
		}
	}
	return []string{"bash", "-c", script}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestSecurityCorpusOutsideNeverLooser judges both corpora at levels full
// and supervised, under the sandbox (mnemos run) and outside it (a hook
// that cannot rewrite, policy check --unsandboxed), and reports the
// figures: what is allowed outside the sandbox is never more than what
// is allowed inside it, line by line, and nothing the corpus expects
// denied is allowed in any of the four.
func TestSecurityCorpusOutsideNeverLooser(t *testing.T) {
	caught := loadCorpus(t, "caught.txt", "notallow", "deny", "guard")
	benign := loadCorpus(t, "benign.txt", "any", "allow", "ask", "notdeny")
	type tally struct{ allow, ask, deny int }
	var rows []string
	for _, run := range []struct {
		level   string
		journal bool
	}{{"full", false}, {"supervised", false}, {"full", true}} {
		level := run.level
		f := newFixture(t, strings.Replace(string(policy.DefaultSource()), "\nlevel: supervised\n", "\nlevel: "+level+"\n", 1))
		f.journal(run.journal)
		for _, set := range []struct {
			name  string
			cases []corpusCase
		}{{"caught", caught}, {"benign", benign}} {
			var in, out tally
			for _, c := range set.cases {
				cmd := strings.NewReplacer("@HOME@", f.home, "@WS@", f.ws).Replace(c.cmd)
				var got [2]policy.Outcome
				for i, unsandboxed := range []bool{false, true} {
					req := f.req("bash", "-c", cmd)
					req.Unsandboxed = unsandboxed
					d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
					if err != nil {
						t.Fatal(err)
					}
					got[i] = d.Outcome
					tl := &in
					if unsandboxed {
						tl = &out
					}
					switch d.Outcome {
					case policy.Allow:
						tl.allow++
					case policy.Ask:
						tl.ask++
					default:
						tl.deny++
					}
					if os.Getenv("MNEMOS_CORPUS_LIST") == level && unsandboxed && set.name == "caught" && d.Outcome == policy.Allow {
						t.Logf("allowed outside at %s: %s.txt:%d: %q: %s", level, set.name, c.line, c.cmd, d.Reason)
					}
					if d.Outcome == policy.Allow && (c.expect == "deny" && !(run.journal && undoneByJournal(d)) || c.expect == "guard") && c.gap == "" {
						t.Errorf("%s.txt:%d at %s (unsandboxed %v): %q allowed, want deny", set.name, c.line, level, unsandboxed, c.cmd)
					}
				}
				if got[1].Restrictiveness() < got[0].Restrictiveness() {
					t.Errorf("%s.txt:%d at %s: %q is %s outside the sandbox, %s inside: outside must never be looser", set.name, c.line, level, c.cmd, got[1], got[0])
				}
			}
			for _, r := range []struct {
				where string
				t     tally
			}{{"sandboxed", in}, {"unsandboxed", out}} {
				n := len(set.cases)
				rows = append(rows, fmt.Sprintf("| %s | %v | %s | %s | %d | %d (%.1f %%) | %d | %d |", level, run.journal, r.where, set.name, n,
					r.t.allow, 100*float64(r.t.allow)/float64(n), r.t.ask, r.t.deny))
			}
		}
	}
	t.Logf("corpus by level, journal and sandbox:\n| level | journal | where | corpus | lines | allow | ask | deny |\n|---|---|---|---|---:|---:|---:|---:|\n%s", strings.Join(rows, "\n"))
}
