package classify

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// catalogSource is the classification catalog (see catalog.txt).
//
//go:embed catalog.txt
var catalogSource string

// toolSpec is one program of the catalog.
type toolSpec struct {
	kind    toolKind
	pattern bool     // first operand is a pattern
	script  bool     // first operand is a script
	mode    bool     // first operand is a mode or owner
	opts    []string // options that take a separate value
	outs    []string // options whose value is a file written
	ins     []string // options whose value is a file read
	runs    []string // options whose value is run as a command or loaded as code
	verb    string
	// parser marks a program that parses a known format (parse:local).
	parser bool
	// sub marks a program whose first operand is a subcommand; named
	// are the subcommands whose next operand is named too (catalog flag
	// sub=A,B).
	sub   bool
	named []string
	// proj are the subcommands of a program that otherwise runs any code
	// that only work on the project (catalog flag projsub=A,B).
	proj []string
	// terminal says how the program reads commands from its terminal
	// (catalog flag terminal=pager or terminal=input; terminal.go).
	terminal termKind
	// gram is how the program reads its options (nil when the catalog
	// records none); subs, for git, is each subcommand's.
	gram *grammar
	subs map[string]*grammar
}

// takes reports whether opt takes a separate value: the catalog lists it
// so, or the program's grammar says the option it names (an abbreviation
// included) needs a value.
func (s toolSpec) takes(opt string) bool {
	if slices.Contains(s.opts, opt) || slices.Contains(s.outs, opt) ||
		slices.Contains(s.ins, opt) || slices.Contains(s.runs, opt) {
		return true
	}
	g := s.gram.built()
	return g != nil && g.takesValue(opt)
}

// catalog is the parsed catalog, built once and never changed. Its
// entries are pointers: a map of values this large is read through the
// runtime's slow path, and every read copies the entry.
var catalog = sync.OnceValue(func() map[string]*toolSpec {
	m, err := parseCatalogLazy(catalogSource)
	if err != nil {
		// catalog.txt is embedded and tested; failing here is a build defect.
		panic("classify: " + err.Error())
	}
	out := make(map[string]*toolSpec, len(m))
	for name, spec := range m {
		out[name] = &spec
	}
	return out
})

// parseCatalog parses the catalog and builds every option grammar in it,
// so that a bad options line is an error (the tests take this way).
func parseCatalog(src string) (map[string]toolSpec, error) {
	m, err := parseCatalogLazy(src)
	if err != nil {
		return nil, err
	}
	for _, spec := range m {
		gs := []*grammar{spec.gram}
		for _, g := range spec.subs {
			gs = append(gs, g)
		}
		for _, g := range gs {
			if g != nil {
				if err := g.build(); err != nil {
					return nil, err
				}
			}
		}
	}
	return m, nil
}

// parseCatalogLazy parses the catalog, leaving each program's option
// grammar to be built the first time a command of that program needs it:
// building all of them costs a couple of milliseconds at every start.
func parseCatalogLazy(src string) (map[string]toolSpec, error) {
	kinds := map[string]toolKind{
		"pure": kindPure, "time": kindTime, "read": kindRead, "readdir": kindReadDir,
		"write": kindWrite, "copy": kindCopy, "move": kindMove, "net": kindNet,
		"mail": kindMail, "git": kindGit, "navigate": kindNavigate, "exec": kindExec,
		"llmlocal": kindLLMLocal, "llmonline": kindLLMOnline, "mailread": kindMailRead,
		"calendar": kindCalendar, "chat": kindChat,
	}
	out := map[string]toolSpec{}
	type grammarLine struct {
		n int
		f []string
	}
	var grammars []grammarLine
	for i, line := range strings.Split(src, "\n") {
		if j := strings.Index(line, "#"); j >= 0 && (j == 0 || line[j-1] == ' ') {
			line = line[:j]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] == "options" {
			grammars = append(grammars, grammarLine{i + 1, f[1:]})
			continue
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("catalog.txt:%d: want NAME KIND [FLAGS...]", i+1)
		}
		k, ok := kinds[f[1]]
		if !ok {
			return nil, fmt.Errorf("catalog.txt:%d: unknown kind %q", i+1, f[1])
		}
		if _, dup := out[f[0]]; dup {
			return nil, fmt.Errorf("catalog.txt:%d: %s listed twice", i+1, f[0])
		}
		s := toolSpec{kind: k}
		for _, flag := range f[2:] {
			switch {
			case flag == "pattern":
				s.pattern = true
			case flag == "script":
				s.script = true
			case flag == "mode":
				s.mode = true
			case flag == "parser":
				s.parser = true
			case flag == "sub":
				s.sub = true
			case strings.HasPrefix(flag, "sub="):
				s.sub, s.named = true, strings.Split(strings.TrimPrefix(flag, "sub="), ",")
				if slices.Contains(s.named, "") {
					return nil, fmt.Errorf("catalog.txt:%d: empty subcommand in %q", i+1, flag)
				}
			case strings.HasPrefix(flag, "projsub="):
				s.sub, s.proj = true, strings.Split(strings.TrimPrefix(flag, "projsub="), ",")
				if slices.Contains(s.proj, "") {
					return nil, fmt.Errorf("catalog.txt:%d: empty subcommand in %q", i+1, flag)
				}
			case flag == "terminal=pager":
				s.terminal = termPager
			case flag == "terminal=input":
				s.terminal = termInput
			case strings.HasPrefix(flag, "verb="):
				s.verb = strings.ReplaceAll(strings.TrimPrefix(flag, "verb="), "_", " ")
			case strings.HasPrefix(flag, "out:-"):
				s.outs = append(s.outs, strings.TrimPrefix(flag, "out:"))
			case strings.HasPrefix(flag, "in:-"):
				s.ins = append(s.ins, strings.TrimPrefix(flag, "in:"))
			case strings.HasPrefix(flag, "run:-"):
				s.runs = append(s.runs, strings.TrimPrefix(flag, "run:"))
			case strings.HasPrefix(flag, "-"):
				s.opts = append(s.opts, flag)
			default:
				return nil, fmt.Errorf("catalog.txt:%d: unknown flag %q", i+1, flag)
			}
		}
		out[f[0]] = s
	}
	for _, gl := range grammars {
		if err := addGrammar(out, gl.f); err != nil {
			return nil, fmt.Errorf("catalog.txt:%d: %w", gl.n, err)
		}
	}
	return out, nil
}

// specOf returns a program's catalog entry; an unlisted program runs code.
func specOf(name string) toolSpec {
	if s, ok := catalog()[name]; ok {
		return *s
	}
	return toolSpec{kind: kindExec}
}

// optStyle is how a program reads its long options.
type optStyle uint8

const (
	// styleGetopt: a unique prefix of a long option is that option (GNU
	// getopt_long and argp, less, curl 7, python's argparse); an exact
	// name wins over the names it begins; a prefix of two or more
	// options is refused by the program.
	styleGetopt optStyle = iota + 1
	// styleGit: getopt, and --no-NAME negates NAME (git's
	// parse-options); both abbreviate.
	styleGit
	// styleExact: long options only as written (git's revision options,
	// jq, find's single-dash words, Go's flag and clap by default).
	styleExact
	// styleFold: as written, in any letter case (vim).
	styleFold
)

// argKind says whether an option takes a value.
type argKind uint8

const (
	argNone     argKind = iota
	argRequired         // attached (-oFILE, --output=FILE) or the next word
	argOptional         // attached only (-i.bak, --in-place=.bak)
)

// optGroup is one option: its names (-c, --create) and its value.
type optGroup struct {
	names []string
	arg   argKind
}

// spelling is one way to write a long option, without its dashes: a
// name, or for git a negation (no-NAME, or NAME for an option named
// no-NAME).
type spelling struct {
	text  string
	group int32
	neg   bool
}

// grammar is how a program (or a git subcommand) reads its options, from
// the catalog's options lines.
type grammar struct {
	// pending are the options lines not read yet (see built).
	once    sync.Once
	err     error
	pending []pendingLine

	style  optStyle
	groups []optGroup
	long   []spelling     // sorted by text
	short  map[byte]int32 // letter → group
	runs   []string       // names of the options whose value is run (run:)
	ins    []string       // ... read (in:)
	outs   []string       // ... written (out:)
}

var styles = map[string]optStyle{"getopt": styleGetopt, "git": styleGit, "exact": styleExact, "fold": styleFold}

// addGrammar reads one options line (its fields after "options"):
// NAME[,NAME...] STYLE [OPTION...], where NAME is a catalogued program or
// git/SUB, and OPTION is [run:|in:|out:]NAMES[=|[=]] with NAMES the
// option's names joined by commas (-i,--in-place[=]). A program may have
// several lines; they add to one grammar.
func addGrammar(cat map[string]toolSpec, f []string) error {
	if len(f) < 2 {
		return fmt.Errorf("want options NAME STYLE [OPTION...]")
	}
	style, ok := styles[f[1]]
	if !ok {
		return fmt.Errorf("unknown option style %q", f[1])
	}
	for _, name := range strings.Split(f[0], ",") {
		prog, sub, isSub := strings.Cut(name, "/")
		s, ok := cat[prog]
		if !ok || (isSub && (s.kind != kindGit || sub == "")) {
			return fmt.Errorf("options for %s: not a catalogued program or git subcommand", name)
		}
		g := s.gram
		if isSub {
			g = s.subs[sub]
		}
		if g == nil {
			g = &grammar{style: style, short: map[byte]int32{}}
		} else if g.style != style {
			return fmt.Errorf("options for %s: style %s, but an earlier line says otherwise", name, f[1])
		}
		g.pending = append(g.pending, pendingLine{name: name, toks: f[2:]})
		if isSub {
			if s.subs == nil {
				s.subs = map[string]*grammar{}
			}
			s.subs[sub] = g
		} else {
			s.gram = g
		}
		cat[prog] = s
	}
	return nil
}

// pendingLine is one options line's tokens, for the program named.
type pendingLine struct {
	name string
	toks []string
}

// build reads the pending options lines and indexes the grammar, once.
func (g *grammar) build() error {
	g.once.Do(func() {
		for _, l := range g.pending {
			for _, tok := range l.toks {
				if err := g.add(tok); err != nil {
					g.err = fmt.Errorf("options for %s: %w", l.name, err)
					return
				}
			}
		}
		g.pending = nil
		g.index()
	})
	return g.err
}

// built returns the grammar, read and indexed; nil for none.
func (g *grammar) built() *grammar {
	if g == nil {
		return nil
	}
	if err := g.build(); err != nil {
		// catalog.txt is embedded and tested; failing here is a build defect.
		panic("classify: catalog: " + err.Error())
	}
	return g
}

// add reads one OPTION token.
func (g *grammar) add(tok string) error {
	var role *[]string
	for _, r := range []struct {
		prefix string
		list   *[]string
	}{{"run:", &g.runs}, {"in:", &g.ins}, {"out:", &g.outs}} {
		if rest, ok := strings.CutPrefix(tok, r.prefix); ok {
			tok, role = rest, r.list
		}
	}
	grp := optGroup{}
	switch {
	case strings.HasSuffix(tok, "[=]"):
		tok, grp.arg = strings.TrimSuffix(tok, "[=]"), argOptional
	case strings.HasSuffix(tok, "="):
		tok, grp.arg = strings.TrimSuffix(tok, "="), argRequired
	}
	id := int32(len(g.groups))
	for _, n := range strings.Split(tok, ",") {
		switch {
		case len(n) > 2 && strings.HasPrefix(n, "--") && n[2] != '-' && !strings.ContainsAny(n[2:], "=[],"):
			if g.style == styleFold {
				n = strings.ToLower(n)
			}
			for _, sp := range g.long {
				if sp.text == n[2:] && !sp.neg {
					return fmt.Errorf("%s listed twice", n)
				}
			}
			g.long = append(g.long, spelling{text: n[2:], group: id})
		case len(n) == 2 && n[0] == '-' && n[1] != '-':
			if _, dup := g.short[n[1]]; dup {
				return fmt.Errorf("%s listed twice", n)
			}
			g.short[n[1]] = id
		default:
			return fmt.Errorf("bad option %q in %q", n, tok)
		}
		grp.names = append(grp.names, n)
		if role != nil {
			*role = append(*role, n)
		}
	}
	g.groups = append(g.groups, grp)
	return nil
}

// index adds git's negations and sorts the spellings for lookup.
func (g *grammar) index() {
	plain := g.long[:0:0]
	for _, sp := range g.long {
		if !sp.neg {
			plain = append(plain, sp)
		}
	}
	g.long = plain
	if g.style == styleGit {
		for _, sp := range plain {
			neg := "no-" + sp.text
			if rest, ok := strings.CutPrefix(sp.text, "no-"); ok {
				neg = rest
			}
			g.long = append(g.long, spelling{text: neg, group: sp.group, neg: true})
		}
	}
	slices.SortStableFunc(g.long, func(a, b spelling) int {
		if c := strings.Compare(a.text, b.text); c != 0 {
			return c
		}
		// An option's own name before another's negation spelt alike.
		if a.neg != b.neg {
			if a.neg {
				return 1
			}
			return -1
		}
		return 0
	})
}
