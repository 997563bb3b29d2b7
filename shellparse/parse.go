package shellparse

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// LimitError reports an input beyond Limits. The input is refused as a
// whole: nothing is truncated and then judged.
type LimitError struct {
	// What is "bytes", "words", "depth", "expansion" (the work needed to
	// expand functions, loops and aliases, bounded in proportion to
	// MaxArgs), "expanded" (the bytes that variables expand to, bounded
	// in proportion to MaxBytes: x=$x$x doubles at every step) or
	// "definitions" (functions or aliases defined).
	What string
	Max  int
}

func (e *LimitError) Error() string {
	switch e.What {
	case "bytes":
		return "input exceeds the limit of " + strconv.Itoa(e.Max) + " bytes"
	case "words":
		return "input exceeds the limit of " + strconv.Itoa(e.Max) + " words"
	case "depth":
		return "input nests deeper than the limit of " + strconv.Itoa(e.Max)
	case "definitions":
		return "input defines more than " + strconv.Itoa(e.Max) + " functions or aliases"
	case "expanded":
		return "input's variables expand to more than " + strconv.Itoa(e.Max) + " bytes"
	}
	return "input needs more than " + strconv.Itoa(e.Max) + " expansion steps"
}

// ParseArgv parses what `mnemos run -- CMD...` receives: an exec argv whose
// words are literal (no expansion, no globbing). Wrappers are peeled and
// shells given a script (bash -c '...') have it parsed. An empty argv
// yields an empty Script.
func ParseArgv(argv []string, env Env) (*Script, error) {
	return ParseArgvLimits(argv, env, DefaultLimits())
}

// ParseScript parses shell source in the bash dialect and returns every
// simple command it would run. Source that does not parse yields a
// *ParseError; input beyond DefaultLimits a *LimitError.
func ParseScript(src string, env Env) (*Script, error) {
	return ParseScriptLimits(src, env, DefaultLimits())
}

// ParseArgvLimits is ParseArgv with explicit limits. Zero or negative
// fields of lim take their DefaultLimits value.
func ParseArgvLimits(argv []string, env Env, lim Limits) (*Script, error) {
	lim = lim.orDefault()
	size := 0
	for _, a := range argv {
		size += len(a) + 1
	}
	if size > lim.MaxBytes {
		return nil, &LimitError{What: "bytes", Max: lim.MaxBytes}
	}
	if len(argv) > lim.MaxArgs {
		return nil, &LimitError{What: "words", Max: lim.MaxArgs}
	}
	w := newWalker(env, lim)
	return w.result(func() {
		if len(argv) == 0 {
			return
		}
		st := newState(&w.env)
		args := make([]field, len(argv))
		for i, a := range argv {
			args[i] = lit(a)
		}
		w.run(&invocation{st: st, callSt: st, args: args, shell: true})
	})
}

// ParseScriptLimits is ParseScript with explicit limits. Zero or negative
// fields of lim take their DefaultLimits value.
func ParseScriptLimits(src string, env Env, lim Limits) (*Script, error) {
	lim = lim.orDefault()
	if len(src) > lim.MaxBytes {
		return nil, &LimitError{What: "bytes", Max: lim.MaxBytes}
	}
	f, err := parseSource(src, syntax.LangBash)
	if err != nil {
		return nil, err
	}
	w := newWalker(env, lim)
	w.presize(src)
	return w.result(func() {
		w.stmts(newState(&w.env), f.Stmts)
	})
}

func (l Limits) orDefault() Limits {
	d := DefaultLimits()
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxArgs <= 0 {
		l.MaxArgs = d.MaxArgs
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	return l
}

// parseSource parses shell source, turning parser errors into *ParseError.
func parseSource(src string, lang syntax.LangVariant) (*syntax.File, error) {
	if i := strings.IndexByte(src, '\r'); i >= 0 {
		return nil, crError(src, i)
	}
	pool := parserPool(lang)
	p := pool.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	pool.Put(p)
	if err == nil {
		if err := checkComments(src, f); err != nil {
			return nil, err
		}
		return f, nil
	}
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return nil, &ParseError{Line: int(pe.Pos.Line()), Col: int(pe.Pos.Col()), Msg: pe.Text}
	}
	var le syntax.LangError
	if errors.As(err, &le) {
		msg := le.Feature + " not supported in " + le.LangUsed.String()
		return nil, &ParseError{Line: int(le.Pos.Line()), Col: int(le.Pos.Col()), Msg: msg}
	}
	return nil, &ParseError{Line: 1, Col: 1, Msg: err.Error()}
}

// parsers keeps parsers between scripts, one pool per dialect: a parser
// resets itself at each Parse, and the tree it returns holds nothing of
// it.
var parsers sync.Map // syntax.LangVariant → *sync.Pool

func parserPool(lang syntax.LangVariant) *sync.Pool {
	if p, ok := parsers.Load(lang); ok {
		return p.(*sync.Pool)
	}
	p, _ := parsers.LoadOrStore(lang, &sync.Pool{New: func() any {
		return syntax.NewParser(syntax.Variant(lang), syntax.KeepComments(true))
	}})
	return p.(*sync.Pool)
}

// walker walks the syntax tree, evaluating what it can, and collects the
// simple commands.
type walker struct {
	lim     Limits
	env     Env
	printer *syntax.Printer

	out []Command
	dry int // >0 while computing loop states: nothing is emitted
	// envCarry is >0 while walking a command held in an environment
	// variable (GIT_PAGER=...): its commands do not carry it again.
	envCarry int
	depth    int
	words    int
	work     int
	maxWork  int
	// expanded counts the bytes that known variables expanded to, against
	// maxExpanded.
	expanded    int
	maxExpanded int

	// cdSeen: a cd, pushd or popd was walked, so relative paths may no
	// longer be to Env.Cwd.
	cdSeen   bool
	ctx      []string
	ctxBuf   [8]string // ctx's first array
	wraps    []Wrapper
	redirs   []Redirect // inherited from enclosing compound statements
	calls    []string   // functions being expanded
	aliasing []string   // aliases being expanded
	locals   []map[string]value
	pipeIn   *stdinBody
	inStdin  *stdinBody // input of the enclosing compound command
	// pipeOut is true while walking what writes into a pipe: a command
	// of a pipeline other than the last, or a command substitution
	// (Command.StdoutPiped).
	pipeOut  bool
	markers  []string
	markerOf map[string]string
	srcCache map[syntax.Node]string

	// arithLevel counts the arithmetic operands being judged, one inside
	// another's value; arithSeen are the variables whose values were
	// followed since the outermost one began.
	arithLevel int
	arithSeen  map[string]struct{}

	funcDefs  map[funcKey]*funcDef
	defRanges []defRange
	called    map[*funcDef]bool

	// The slices of the commands emitted, and of the fields evaluated.
	wordSlab slab[Word]
	strs     slab[string]
	wrappers slab[Wrapper]
	flds     slab[field]

	// redirRefs are the inherited names flowing into w.redirs.
	redirRefs []string
	// refBuf collects the inherited names parameter expansions read
	// (noteRefs); callers take what was added since a mark.
	refBuf []string
}

type funcKey struct {
	name string
	body *syntax.Stmt
}

// defRange is the output of walking a function body at its definition.
type defRange struct {
	def        *funcDef
	start, end int
}

type bailout struct{ err error }

func newWalker(env Env, lim Limits) *walker {
	w := &walker{
		lim:     lim,
		env:     env,
		maxWork: 6 * lim.MaxArgs,
		// Four times the input: room for variables used a few times each,
		// none for a value that doubles at every assignment.
		maxExpanded: 4 * lim.MaxBytes,
	}
	w.ctx = w.ctxBuf[:0]
	return w
}

func (w *walker) fail(err error) { panic(bailout{err}) }

// result runs f and returns the commands found, or the error that stopped
// the walk.
func (w *walker) result(f func()) (s *Script, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				s, err = nil, fmt.Errorf("shellparse: internal error: %v", r)
				return
			}
			s, err = nil, b.err
		}
	}()
	f()
	return &Script{Commands: w.finish()}, nil
}

// finish drops what function bodies emitted at their definition when the
// function was later called (the calls emitted the same commands with
// their real arguments), unless it was exported to child shells.
func (w *walker) finish() []Command {
	if len(w.defRanges) == 0 {
		return w.out
	}
	drop := make([]bool, len(w.out))
	dropped := false
	for _, r := range w.defRanges {
		if !w.called[r.def] || r.def.exported {
			continue
		}
		for i := r.start; i < r.end && i < len(drop); i++ {
			drop[i] = true
			dropped = true
		}
	}
	if !dropped {
		return w.out
	}
	out := make([]Command, 0, len(w.out))
	// at maps an index of w.out to its index in out, +1 (0: dropped).
	at := make([]int, len(w.out))
	for i, c := range w.out {
		if !drop[i] {
			if c.AfterCd > 0 {
				// The cd comes earlier, so it is already placed; one
				// that was dropped gates nothing (0).
				c.AfterCd = at[c.AfterCd-1]
			}
			out = append(out, c)
			at[i] = len(out)
		}
	}
	return out
}

// try runs f; a *ParseError (or other non-limit failure) inside it is
// returned after the walker is restored, while limit errors still abort
// the whole parse.
func (w *walker) try(f func()) (err error) {
	saved := struct {
		ctx, calls, aliasing []string
		wraps                []Wrapper
		redirs               []Redirect
		redirRefs            []string
		locals               []map[string]value
		depth, dry           int
		out                  int
		pipeIn, inStdin      *stdinBody
		called               map[*funcDef]bool
	}{w.ctx, w.calls, w.aliasing, w.wraps, w.redirs, w.redirRefs, w.locals, w.depth, w.dry, len(w.out),
		w.pipeIn, w.inStdin, maps.Clone(w.called)}
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		b, ok := r.(bailout)
		if !ok {
			panic(r)
		}
		var le *LimitError
		if errors.As(b.err, &le) {
			panic(r)
		}
		w.ctx, w.calls, w.aliasing = saved.ctx, saved.calls, saved.aliasing
		w.wraps, w.redirs, w.locals, w.redirRefs = saved.wraps, saved.redirs, saved.locals, saved.redirRefs
		w.depth, w.dry = saved.depth, saved.dry
		w.pipeIn, w.inStdin, w.called = saved.pipeIn, saved.inStdin, saved.called
		w.truncate(saved.out)
		err = b.err
	}()
	f()
	return nil
}

// truncate drops the commands emitted from index n on, with what is
// recorded about them.
func (w *walker) truncate(n int) {
	w.out = w.out[:n]
	kept := w.defRanges[:0]
	for _, r := range w.defRanges {
		if r.start < n {
			r.end = min(r.end, n)
			kept = append(kept, r)
		}
	}
	w.defRanges = kept
}

func (w *walker) tick() {
	w.work++
	if w.work > w.maxWork {
		w.fail(&LimitError{What: "expansion", Max: w.maxWork})
	}
}

// grow counts n bytes of expanded variable values.
func (w *walker) grow(n int) {
	w.expanded += n
	if w.expanded > w.maxExpanded {
		w.fail(&LimitError{What: "expanded", Max: w.maxExpanded})
	}
}

func (w *walker) enter() {
	w.depth++
	if w.depth > w.lim.MaxDepth {
		w.fail(&LimitError{What: "depth", Max: w.lim.MaxDepth})
	}
}

func (w *walker) leave() { w.depth-- }

// pushCtx adds a context entry; list operators are not repeated. Entries
// are pushed and popped in nesting order, and whoever keeps w.ctx (emit,
// try) keeps a copy or a prefix that later pushes do not touch, so the
// stack grows in place.
func (w *walker) pushCtx(s string) int {
	n := len(w.ctx)
	if n > 0 && w.ctx[n-1] == s && (s == "&&" || s == "||" || s == "|") {
		return n
	}
	w.ctx = append(w.ctx, s)
	return n
}

func (w *walker) popCtx(n int) { w.ctx = w.ctx[:n] }

// presize sizes the list of commands, and the first arrays of the slabs
// their slices come from, for the script src when nothing was emitted
// yet: a command for every line, ";", "|" and "&" is a fair guess, and
// growing from there costs more than the few spare slots.
func (w *walker) presize(src string) {
	if w.out != nil {
		return
	}
	n := 1
	for i := 0; i < len(src) && n < maxPresize; i++ {
		switch src[i] {
		case '\n', ';', '|', '&':
			n++
		}
	}
	w.out = make([]Command, 0, n)
	// take doubles next (up to its cap) before it allocates.
	w.strs.next = max(w.strs.next, n)
	w.wrappers.next = max(w.wrappers.next, n/2)
	w.wordSlab.next = max(w.wordSlab.next, 2*n)
	w.flds.next = max(w.flds.next, 2*n)
}

// maxPresize bounds the commands presize makes room for.
const maxPresize = 256

// emit records a command with the current context, wrappers and inherited
// redirections.
func (w *walker) emit(c Command) {
	if w.dry > 0 {
		return
	}
	w.words += len(c.Argv) + len(c.Assigns) + len(c.Redirects)
	if w.words > w.lim.MaxArgs {
		w.fail(&LimitError{What: "words", Max: w.lim.MaxArgs})
	}
	if len(w.ctx) > 0 {
		c.Context = w.strs.take(len(w.ctx))
		copy(c.Context, w.ctx)
	}
	if len(w.wraps) > 0 {
		ws := w.wrappers.take(len(w.wraps) + len(c.Wrappers))
		copy(ws[copy(ws, w.wraps):], c.Wrappers)
		c.Wrappers = ws
	}
	if len(w.redirs) > 0 {
		c.Redirects = slices.Concat(w.redirs, c.Redirects)
	}
	if len(w.redirRefs) > 0 {
		c.EnvRefs = unionRefs(c.EnvRefs, w.redirRefs)
	}
	if w.out == nil {
		w.out = make([]Command, 0, 8)
	}
	w.out = append(w.out, c)
}

// markerPrefix starts the placeholder that stands for a run-time value in
// the text of a partly dynamic script.
const markerPrefix = "__shellparse_dynamic_"

func (w *walker) marker(src string) string {
	if m, ok := w.markerOf[src]; ok {
		return m
	}
	if w.markerOf == nil {
		w.markerOf = make(map[string]string)
	}
	w.markers = append(w.markers, src)
	m := markerPrefix + strconv.Itoa(len(w.markers)-1) + "__"
	w.markerOf[src] = m
	return m
}

// unmark replaces markers in s by the source text they stand for.
func (w *walker) unmark(s string) (string, bool) {
	if !strings.Contains(s, markerPrefix) {
		return s, false
	}
	var b strings.Builder
	for {
		i := strings.Index(s, markerPrefix)
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		rest := s[i+len(markerPrefix):]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(rest[:j])
		if err != nil || !strings.HasPrefix(rest[j:], "__") || n >= len(w.markers) {
			b.WriteString(markerPrefix)
			s = rest
			continue
		}
		b.WriteString(w.markers[n])
		s = rest[j+2:]
	}
	return b.String(), true
}

// fixMarkers marks as dynamic whatever came from the run-time parts of a
// partly dynamic script.
func (w *walker) fixMarkers(cmds []Command) {
	for i := range cmds {
		c := &cmds[i]
		for j := range c.Argv {
			if v, ok := w.unmark(c.Argv[j].Value); ok {
				c.Argv[j] = Word{Value: v, Dynamic: true}
			}
		}
		if len(c.Argv) > 0 && c.Argv[0].Dynamic && !c.Dynamic {
			c.Dynamic = true
			c.Notes = append(c.Notes, "command name comes from "+c.Argv[0].Value)
		}
		for j := range c.Assigns {
			c.Assigns[j], _ = w.unmark(c.Assigns[j])
		}
		for j := range c.Redirects {
			if v, ok := w.unmark(c.Redirects[j].Target.Value); ok {
				c.Redirects[j].Target = Word{Value: v, Dynamic: true}
			}
		}
		for j := range c.Wrappers {
			argv := c.Wrappers[j].Argv
			var fixed []string
			for k, a := range argv {
				if v, ok := w.unmark(a); ok {
					if fixed == nil {
						fixed = slices.Clone(argv)
					}
					fixed[k] = v
				}
			}
			if fixed != nil {
				c.Wrappers[j].Argv = fixed
			}
			c.Wrappers[j].Name, _ = w.unmark(c.Wrappers[j].Name)
		}
		for j := range c.Notes {
			c.Notes[j], _ = w.unmark(c.Notes[j])
		}
		for j := range c.Context {
			c.Context[j], _ = w.unmark(c.Context[j])
		}
	}
}

// langFor returns the parser dialect for a shell.
func langFor(shell string) syntax.LangVariant {
	switch shell {
	case "zsh":
		return syntax.LangZsh
	case "ksh", "mksh", "ksh93", "lksh", "pdksh", "oksh":
		return syntax.LangMirBSDKorn
	}
	return syntax.LangBash
}
