package shellparse

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"mvdan.cc/sh/v3/syntax"
)

// maxLoopItems bounds how many items of a for loop get their own walk of
// the loop body; beyond it the loop variable is unknown.
const maxLoopItems = 32

// maxFixpoint bounds the rounds spent finding what a loop body changes.
const maxFixpoint = 8

func (w *walker) stmts(st *state, list []*syntax.Stmt) {
	for _, s := range list {
		w.stmt(st, s)
	}
}

func (w *walker) stmt(st *state, s *syntax.Stmt) {
	w.tick()
	if s.Background || s.Coprocess || s.Disown {
		sub := st.clone()
		n := w.pushCtx("&")
		w.stmtCmd(sub, s)
		w.popCtx(n)
		return
	}
	w.stmtCmd(st, s)
}

func (w *walker) stmtCmd(st *state, s *syntax.Stmt) {
	switch c := s.Cmd.(type) {
	case nil:
		w.call(st, &syntax.CallExpr{}, s.Redirs)
	case *syntax.CallExpr:
		w.call(st, c, s.Redirs)
	default:
		pipeIn := w.pipeIn
		w.pipeIn = nil
		for _, r := range s.Redirs {
			w.walkRedirect(st, r)
		}
		mark := len(w.refBuf)
		rs, stdin := w.evalRedirects(st, s.Redirs)
		refs := w.takeRefs(mark)
		if stdin == nil {
			stdin = pipeIn
		}
		saved, savedIn, savedRefs := w.redirs, w.inStdin, w.redirRefs
		if len(rs) > 0 {
			w.redirs = append(slices.Clone(w.redirs), rs...)
		}
		if len(refs) > 0 {
			w.redirRefs = unionRefs(w.redirRefs, refs)
		}
		if stdin != nil {
			w.inStdin = stdin
		}
		start := len(w.out)
		w.enter()
		w.compound(st, c)
		w.leave()
		w.redirs, w.inStdin, w.redirRefs = saved, savedIn, savedRefs
		if len(rs) > 0 && len(w.out) == start {
			w.emit(Command{Redirects: rs, Notes: []string{"redirection without a command"}, EnvRefs: refs})
		}
	}
}

func (w *walker) compound(st *state, c syntax.Command) {
	switch c := c.(type) {
	case *syntax.Block:
		w.stmts(st, c.Stmts)
	case *syntax.Subshell:
		n := w.pushCtx("(…)")
		w.stmts(st.clone(), c.Stmts)
		w.popCtx(n)
	case *syntax.BinaryCmd:
		w.binary(st, c)
	case *syntax.IfClause:
		n := w.pushCtx("if")
		w.ifClause(st, c)
		w.popCtx(n)
	case *syntax.WhileClause:
		name := "while"
		if c.Until {
			name = "until"
		}
		n := w.pushCtx(name)
		body := func(s *state) {
			w.stmts(s, c.Cond)
			w.stmts(s, c.Do)
		}
		w.loop(st, c, body, body)
		w.popCtx(n)
	case *syntax.ForClause:
		w.forClause(st, c)
	case *syntax.CaseClause:
		w.caseClause(st, c)
	case *syntax.FuncDecl:
		w.funcDecl(st, c)
	case *syntax.ArithmCmd:
		n := w.pushCtx("((…))")
		w.walkArith(st, c.X, 0)
		w.popCtx(n)
	case *syntax.TestClause:
		n := w.pushCtx("[[…]]")
		w.walkTest(st, c.X)
		w.popCtx(n)
	case *syntax.DeclClause:
		w.declClause(st, c)
	case *syntax.LetClause:
		n := w.pushCtx("let")
		for _, x := range c.Exprs {
			w.walkArith(st, x, 0)
		}
		w.popCtx(n)
	case *syntax.TimeClause:
		wr := Wrapper{Name: "time", Argv: []string{"time"}}
		if c.PosixFormat {
			wr.Argv = append(wr.Argv, "-p")
		}
		saved := w.wraps
		w.wraps = append(slices.Clone(w.wraps), wr)
		if c.Stmt != nil {
			w.stmt(st, c.Stmt)
		}
		w.wraps = saved
	case *syntax.CoprocClause:
		n := w.pushCtx("coproc")
		if c.Name != nil {
			w.walkWord(st, c.Name)
		}
		w.stmt(st.clone(), c.Stmt)
		w.popCtx(n)
	case *syntax.TestDecl:
		w.walkWord(st, c.Description)
		w.stmt(st.clone(), c.Body)
	default:
		pos := c.Pos()
		w.fail(&ParseError{Line: int(pos.Line()), Col: int(pos.Col()), Msg: fmt.Sprintf("unsupported shell construct %T", c)})
	}
}

// binary walks lists (&&, ||) and pipelines, flattened so that long
// chains do not nest.
func (w *walker) binary(st *state, c *syntax.BinaryCmd) {
	pipe := c.Op == syntax.Pipe || c.Op == syntax.PipeAll
	var itemsBuf [8]*syntax.Stmt
	var opsBuf [8]string
	items, ops := itemsBuf[:0], opsBuf[:0]
	cur := c
	for {
		items = append(items, cur.Y)
		ops = append(ops, binOp(cur.Op))
		x := cur.X
		if xb, ok := x.Cmd.(*syntax.BinaryCmd); ok && plainStmt(x) &&
			(xb.Op == syntax.Pipe || xb.Op == syntax.PipeAll) == pipe {
			cur = xb
			continue
		}
		items = append(items, x)
		break
	}
	slices.Reverse(items)
	slices.Reverse(ops)
	// ops[i] joins items[i] and items[i+1].
	if pipe {
		var last *state
		out := w.pipeOut
		for i, s := range items {
			n := w.pushCtx("|")
			sub := st.clone()
			if i > 0 {
				prev := items[i-1]
				w.pipeIn = &stdinBody{lazy: w, lazySt: st, lazyPrev: prev}
			}
			// All but the last write into the pipe; the last writes
			// where the pipeline does.
			w.pipeOut = out || i < len(items)-1
			w.stmt(sub, s)
			w.pipeIn = nil
			w.popCtx(n)
			last = sub
		}
		w.pipeOut = out
		*st = mergeState(st, last)
		return
	}
	// cdGate is AfterCd for the items that run only once a cd item has
	// succeeded: those after it while the operators stay &&.
	cdGate := 0
	for i, s := range items {
		op := ops[0]
		if i > 0 {
			op = ops[i-1]
			if op != "&&" {
				cdGate = 0
			}
		}
		n := w.pushCtx(op)
		start := len(w.out)
		if i == 0 {
			w.stmt(st, s)
		} else {
			sub := st.clone()
			w.stmt(sub, s)
			*st = mergeState(st, sub)
		}
		w.popCtx(n)
		if cdGate > 0 {
			for j := start; j < len(w.out); j++ {
				if w.out[j].AfterCd == 0 {
					w.out[j].AfterCd = cdGate
				}
			}
		}
		if _, call := s.Cmd.(*syntax.CallExpr); call && plainStmt(s) && len(w.out) > start {
			switch w.out[len(w.out)-1].Name() {
			case "cd", "pushd":
				cdGate = len(w.out)
			}
		}
	}
}

func binOp(op syntax.BinCmdOperator) string {
	switch op {
	case syntax.AndStmt:
		return "&&"
	case syntax.OrStmt:
		return "||"
	}
	return "|"
}

// plainStmt reports whether a statement is only its command.
func plainStmt(s *syntax.Stmt) bool {
	return !s.Negated && !s.Background && !s.Coprocess && !s.Disown && len(s.Redirs) == 0
}

func (w *walker) ifClause(st *state, c *syntax.IfClause) {
	w.stmts(st, c.Cond)
	thenSt := st.clone()
	w.stmts(thenSt, c.Then)
	elseSt := st.clone()
	if e := c.Else; e != nil {
		if len(e.Cond) == 0 {
			w.stmts(elseSt, e.Then)
		} else {
			w.ifClause(elseSt, e)
		}
	}
	*st = mergeState(thenSt, elseSt)
}

// loop walks a loop. First it finds, without emitting, the state at the
// start of any iteration (what the body changes becomes unknown); then it
// walks the body once more from that state, emitting.
func (w *walker) loop(st *state, node syntax.Node, dry, final func(*state)) {
	cur := st
	if w.mayModify(st, node) {
		cur = st.clone()
		for round := 0; ; round++ {
			trial := cur.clone()
			w.dry++
			dry(trial)
			w.dry--
			next := merge(cur, trial)
			if next.equal(cur) {
				break
			}
			cur = next
			if round == maxFixpoint {
				cur.makeOpaque()
				break
			}
		}
	}
	end := cur.clone()
	final(end)
	*st = mergeState(cur, end)
}

func (w *walker) forClause(st *state, c *syntax.ForClause) {
	name := "for"
	if c.Select {
		name = "select"
	}
	n := w.pushCtx(name)
	defer w.popCtx(n)
	switch l := c.Loop.(type) {
	case *syntax.CStyleLoop:
		if l.Init != nil {
			w.walkArith(st, l.Init, 0)
		}
		body := func(s *state) {
			if l.Cond != nil {
				w.walkArith(s, l.Cond, 0)
			}
			w.stmts(s, c.Do)
			if l.Post != nil {
				w.walkArith(s, l.Post, 0)
			}
		}
		w.loop(st, c, body, body)
	case *syntax.WordIter:
		for _, item := range l.Items {
			w.walkWord(st, item)
		}
		var items []field
		var refs []string
		switch {
		case l.InPos.IsValid():
			mark := len(w.refBuf)
			items = w.fields(st, l.Items)
			refs = w.takeRefs(mark)
		case st.posKnown:
			items = slices.Clone(st.pos)
			refs = st.posRefs
		default:
			items = []field{{val: "\"$@\"", dyn: true, tmpl: w.marker("\"$@\"")}}
			refs = st.posRefs
		}
		vname := l.Name.Value
		set := func(s *state, f field) {
			switch {
			case f.glob:
				// One of the names the glob matches; which one is only
				// known at run time.
				w.assignVar(s, vname, value{glob: true, str: f.val})
			case f.dyn && f.num:
				w.assignVar(s, vname, value{numeric: true})
			case f.dyn:
				w.forgetInput(s, vname, "the loop")
			default:
				w.assignVar(s, vname, knownString(f.val))
			}
			s.setRefs(vname, refs)
			if c.Select {
				s.forget("REPLY")
			}
		}
		// One iteration: the body with the variable set to each item in
		// turn (when there are few), or unknown.
		iter := func(s *state) {
			if len(items) == 0 || len(items) > maxLoopItems {
				s.forget(vname)
				s.setRefs(vname, refs)
				w.stmts(s, c.Do)
				return
			}
			var outs []*state
			var prev []Command
			for _, item := range items {
				it := s.clone()
				set(it, item)
				start := len(w.out)
				w.stmts(it, c.Do)
				// Iterations that emit exactly the same commands are
				// kept once.
				got := w.out[start:]
				if prev != nil && equalCommands(got, prev) {
					w.truncate(start)
				} else {
					prev = slices.Clone(got)
				}
				outs = append(outs, it)
			}
			*s = mergeState(outs...)
		}
		w.loop(st, c, iter, iter)
	}
}

func equalCommands(a, b []Command) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].String() != b[i].String() || a[i].Dynamic != b[i].Dynamic ||
			!slices.Equal(a[i].Argv, b[i].Argv) || !slices.Equal(a[i].Context, b[i].Context) ||
			!slices.Equal(a[i].Notes, b[i].Notes) || !slices.Equal(a[i].EnvRefs, b[i].EnvRefs) {
			return false
		}
	}
	return true
}

func (w *walker) caseClause(st *state, c *syntax.CaseClause) {
	n := w.pushCtx("case")
	defer w.popCtx(n)
	w.walkWord(st, c.Word)
	w.literal(st, c.Word, false)
	outs := []*state{st.clone()}
	var prev *state
	var prevOp syntax.CaseOperator
	for _, item := range c.Items {
		for _, p := range item.Patterns {
			w.walkWord(st, p)
		}
		start := st.clone()
		if prev != nil && (prevOp == syntax.Fallthrough || prevOp == syntax.Resume || prevOp == syntax.ResumeKorn) {
			start = merge(start, prev)
		}
		w.stmts(start, item.Stmts)
		outs = append(outs, start)
		prev, prevOp = start, item.Op
	}
	*st = mergeState(outs...)
}

func (w *walker) funcDecl(st *state, c *syntax.FuncDecl) {
	names := c.Names
	if c.Name != nil {
		names = append([]*syntax.Lit{c.Name}, names...)
	}
	for _, nameLit := range names {
		name := nameLit.Value
		key := funcKey{name, c.Body}
		if w.funcDefs == nil {
			w.funcDefs = make(map[funcKey]*funcDef)
		}
		def := w.funcDefs[key]
		if def == nil {
			def = &funcDef{name: name, body: c.Body}
			w.funcDefs[key] = def
		}
		if !st.defineFunc(def) {
			w.fail(&LimitError{What: "definitions", Max: maxTracked})
		}

		// The body counts as commands that would run, with unknown
		// arguments, whether or not the script calls it.
		sub := st.clone()
		sub.posKnown, sub.pos = false, nil
		n := w.pushCtx("function " + name)
		w.calls = append(w.calls, name)
		w.locals = append(w.locals, nil)
		start := len(w.out)
		w.enter()
		w.stmt(sub, c.Body)
		w.leave()
		if w.dry == 0 && len(w.out) > start {
			w.defRanges = append(w.defRanges, defRange{def: def, start: start, end: len(w.out)})
		}
		w.locals = w.locals[:len(w.locals)-1]
		w.calls = w.calls[:len(w.calls)-1]
		w.popCtx(n)
	}
}

// walkWord walks the command and process substitutions of a word.
func (w *walker) walkWord(st *state, word *syntax.Word) {
	if word == nil {
		return
	}
	w.walkParts(st, word.Parts)
}

func (w *walker) walkParts(st *state, parts []syntax.WordPart) {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.CmdSubst:
			w.subst(st, "$(…)", p.Stmts)
		case *syntax.ProcSubst:
			ctx := "<(…)"
			if p.Op == syntax.CmdOut {
				ctx = ">(…)"
			}
			w.subst(st, ctx, p.Stmts)
		case *syntax.DblQuoted:
			w.walkParts(st, p.Parts)
		case *syntax.ParamExp:
			w.walkParam(st, p)
		case *syntax.ArithmExp:
			w.walkArith(st, p.X, 0)
		case *syntax.BraceExp:
			for _, e := range p.Elems {
				w.walkWord(st, e)
			}
		}
	}
}

func (w *walker) subst(st *state, ctx string, stmts []*syntax.Stmt) {
	n := w.pushCtx(ctx)
	savedR, savedP, savedI, savedRefs, savedO := w.redirs, w.pipeIn, w.inStdin, w.redirRefs, w.pipeOut
	w.redirs, w.pipeIn, w.inStdin, w.redirRefs = nil, nil, nil, nil
	// The shell reads what $(…) and <(…) print; >(…) prints where the
	// script does.
	w.pipeOut = ctx != ">(…)"
	w.enter()
	w.stmts(st.clone(), stmts)
	w.leave()
	w.redirs, w.pipeIn, w.inStdin, w.redirRefs, w.pipeOut = savedR, savedP, savedI, savedRefs, savedO
	w.popCtx(n)
}

func (w *walker) walkParam(st *state, pe *syntax.ParamExp) {
	if pe.Excl && pe.Param != nil {
		ref := w.lookupParam(st, pe.Param.Value)
		switch {
		case ref.known && ref.set:
			w.walkSubscript(st, ref.str)
		case !ref.known && pe.Names == 0 && pe.Index == nil && validName(pe.Param.Value) && !numericName(st, pe.Param.Value):
			// ${!n} with n only known at run time: the name it holds
			// may carry a subscript (a[$(cmd)]), which bash evaluates.
			w.arithUnknown("${!"+pe.Param.Value+"}", "${!"+pe.Param.Value+"} expands the variable named by "+
				pe.Param.Value+", which is only known at run time: a subscript in that name (a[$(cmd)]) is evaluated as arithmetic and runs commands")
		}
	}
	if pe.NestedParam != nil {
		w.walkParts(st, []syntax.WordPart{pe.NestedParam})
	}
	if pe.Index != nil {
		w.walkIndex(st, pe.Index, pe.Param != nil && st.lookup(pe.Param.Value).assoc)
	}
	if pe.Slice != nil {
		if pe.Slice.Offset != nil {
			w.walkArith(st, pe.Slice.Offset, 0)
		}
		if pe.Slice.Length != nil {
			w.walkArith(st, pe.Slice.Length, 0)
		}
	}
	if pe.Repl != nil {
		w.walkWord(st, pe.Repl.Orig)
		w.walkWord(st, pe.Repl.With)
	}
	if pe.Exp != nil {
		w.walkWord(st, pe.Exp.Word)
		if pe.Exp.Op == syntax.OtherParamOps && pe.Exp.Word != nil && pe.Exp.Word.Lit() == "P" && pe.Param != nil {
			w.walkPrompt(st, pe)
		}
	}
}

// walkPrompt walks ${x@P}: the value is expanded as a prompt string, and
// the command substitutions in it run.
func (w *walker) walkPrompt(st *state, pe *syntax.ParamExp) {
	v := w.lookupParam(st, pe.Param.Value)
	if !v.known {
		src := w.source(pe)
		w.emit(Command{Argv: []Word{{Value: src, Dynamic: true}}, Dynamic: true,
			Notes: []string{"prompt expansion " + src + " runs the commands its value holds, which is not known"}})
		return
	}
	vals := []string{v.str}
	if v.isArr {
		vals = v.arr
	}
	for _, s := range vals {
		if !strings.ContainsAny(s, "$`") {
			continue
		}
		doc, err := syntax.NewParser().Document(strings.NewReader(s))
		if err != nil {
			w.emit(Command{Argv: []Word{{Value: s, Dynamic: true}}, Dynamic: true,
				Notes: []string{"prompt string does not parse: " + err.Error()}})
			continue
		}
		n := w.pushCtx("${…@P}")
		w.enter()
		w.walkWord(st, doc)
		w.leave()
		w.popCtx(n)
	}
}

// walkArith walks an arithmetic expression: substitutions in it, values
// of variables that the shell would evaluate as expressions (where array
// subscripts may hold substitutions), and assignments. depth counts the
// values evaluated in turn; nesting in the expression counts towards
// Limits.MaxDepth. Beyond either the input is refused, never skipped: a
// substitution deep inside parentheses still runs.
func (w *walker) walkArith(st *state, x syntax.ArithmExpr, depth int) {
	if x == nil {
		return
	}
	if depth > maxArithDepth {
		w.fail(&LimitError{What: "depth", Max: maxArithDepth})
	}
	switch x := x.(type) {
	case *syntax.Word:
		w.walkWord(st, x)
		w.arithWord(st, x, depth)
	case *syntax.BinaryArithm:
		// 1+2+3+... nests to the left: walk that spine in a loop, so that
		// only real nesting counts as depth.
		spine := []*syntax.BinaryArithm{x}
		for {
			l, ok := spine[len(spine)-1].X.(*syntax.BinaryArithm)
			if !ok || isArithAssign(l.Op) {
				break
			}
			spine = append(spine, l)
		}
		w.enter()
		if bottom := spine[len(spine)-1]; bottom.Op == syntax.Assgn {
			// x=... does not read x: only a subscript of it is evaluated.
			w.walkArithTarget(st, bottom.X, depth)
		} else {
			w.walkArith(st, bottom.X, depth)
		}
		for i := len(spine) - 1; i >= 0; i-- {
			b := spine[i]
			w.walkArith(st, b.Y, depth)
			if isArithAssign(b.Op) {
				w.arithAssigned(st, b.X)
			}
		}
		w.leave()
	case *syntax.UnaryArithm:
		w.enter()
		w.walkArith(st, x.X, depth)
		w.leave()
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			w.arithAssigned(st, x.X)
		}
	case *syntax.ParenArithm:
		w.enter()
		w.walkArith(st, x.X, depth)
		w.leave()
	case *syntax.FlagsArithm:
		w.enter()
		w.walkArith(st, x.X, depth)
		w.leave()
	}
}

// walkArithTarget walks the variable an arithmetic assignment sets: its
// substitutions and subscript, not its value.
func (w *walker) walkArithTarget(st *state, x syntax.ArithmExpr, depth int) {
	if word, ok := x.(*syntax.Word); ok {
		w.walkWord(st, word)
		return
	}
	w.walkArith(st, x, depth)
}

// arithWord judges what the shell evaluates when it meets word as an
// arithmetic operand. A variable's value, and the text the word expands
// to, are evaluated as arithmetic in turn, and an array subscript there
// (a[$(cmd)]) runs its command substitutions. What is known statically is
// walked; an integer not known exactly ($((…)), $#, $(wc -l)) is
// harmless; any other value only known at run time (read from input or a
// file, the output of a command, the environment, an argument) may hold
// such a subscript: it is reported as a command of its own, whose name
// is not known.
func (w *walker) arithWord(st *state, word *syntax.Word, depth int) {
	if w.arithLevel == 0 && len(w.arithSeen) > 0 {
		clear(w.arithSeen)
	}
	w.arithLevel++
	defer func() { w.arithLevel-- }()
	if s, ok := simpleLit(word); ok {
		if validName(s) {
			w.arithName(st, s, depth)
		}
		return
	}
	f := w.literal(st, word, false)
	switch {
	case !f.dyn:
		w.arithText(st, f.val, depth+1)
	case f.num:
		// The integers leave the rest of the text, which may complete
		// the name of a variable (x$i is the variable x5): which one is
		// only known at run time.
		t := numericTemplate(f.tmpl)
		if strings.IndexFunc(t, func(r rune) bool { return r == '_' || unicode.IsLetter(r) }) >= 0 {
			w.arithUnknown(w.source(word), "")
			return
		}
		w.arithText(st, t, depth+1)
	default:
		w.arithUnknown(w.source(word), "")
	}
}

// arithName judges a variable met in arithmetic: its value is evaluated.
func (w *walker) arithName(st *state, name string, depth int) {
	if _, ok := w.arithSeen[name]; ok {
		return // already followed in this expression
	}
	if w.arithSeen == nil {
		w.arithSeen = make(map[string]struct{})
	}
	w.arithSeen[name] = struct{}{}
	v := st.lookup(name)
	switch {
	case v.known:
		if v.set {
			w.arithText(st, v.str, depth+1)
		}
	case numericName(st, name):
	default:
		w.arithUnknown(name, "")
	}
}

// arithUnknown reports text the shell evaluates as arithmetic without its
// value being known statically: it may run any command.
func (w *walker) arithUnknown(src, why string) {
	if why == "" {
		why = "arithmetic evaluates " + src + ", whose value is only known at run time (input, a file, " +
			"a command's output, the environment): an array subscript in it runs commands"
	}
	w.emit(Command{Argv: []Word{{Value: src, Dynamic: true}}, Dynamic: true, Notes: []string{why}})
}

// numericTemplate replaces the run-time parts of a word's template, all
// integers, by 0.
func numericTemplate(tmpl string) string {
	if !strings.Contains(tmpl, markerPrefix) {
		return tmpl
	}
	var b strings.Builder
	for {
		i := strings.Index(tmpl, markerPrefix)
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		b.WriteString(tmpl[:i])
		b.WriteByte('0')
		rest := tmpl[i+len(markerPrefix):]
		j := strings.Index(rest, "__")
		if j < 0 {
			return b.String()
		}
		tmpl = rest[j+2:]
	}
}

// assignVar records NAME=v; a variable declared -i evaluates what it is
// given as arithmetic: y=x with x='a[$(cmd)]' runs cmd.
func (w *walker) assignVar(st *state, name string, v value) {
	integer := st.lookup(name).integer
	st.assign(name, v)
	if integer {
		w.walkArithValue(st, name, v)
	}
}

// forgetInput makes a variable unknown that is given input only known at
// run time (read, mapfile, printf -v): one declared -i evaluates it as
// arithmetic.
func (w *walker) forgetInput(st *state, name, how string) {
	if st.lookup(name).integer {
		w.arithUnknown(name, how+" gives "+name+", declared -i, a value only known at run time, "+
			"which is evaluated as arithmetic: an array subscript in it runs commands")
	}
	st.forget(name)
}

// walkIntAssign walks what NAME=value, NAME+=value, NAME[i]=value or
// NAME=(...) gives a variable declared -i: the shell evaluates it as
// arithmetic.
func (w *walker) walkIntAssign(st *state, a *syntax.Assign) {
	one := func(word *syntax.Word) {
		switch f := w.literal(st, word, true); {
		case !f.dyn:
			w.arithText(st, f.val, 1)
		case f.num:
			w.arithText(st, numericTemplate(f.tmpl), 1)
		default:
			w.arithUnknown(w.source(word), "the value given to "+a.Name.Value+", declared -i, is evaluated as "+
				"arithmetic and only known at run time: an array subscript in it runs commands")
		}
	}
	if a.Value != nil {
		one(a.Value)
	}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			if e.Value != nil {
				one(e.Value)
			}
		}
	}
}

// walkArithValue walks a value the shell evaluates as arithmetic because
// it is given to name, declared -i: each element of an array, the string
// otherwise.
func (w *walker) walkArithValue(st *state, name string, v value) {
	switch {
	case v.known && v.isArr:
		for _, s := range v.arr {
			w.arithText(st, s, 1)
		}
	case v.known:
		w.arithText(st, v.str, 1)
	case !v.numeric:
		w.arithUnknown(name, "the value given to "+name+", declared -i, is evaluated as arithmetic and "+
			"only known at run time: an array subscript in it runs commands")
	}
}

// walkArithString walks text the shell evaluates as arithmetic.
func (w *walker) walkArithString(st *state, s string, depth int) {
	w.arithText(st, s, depth+1)
}

// arithText walks text the shell evaluates as arithmetic: a value met in
// an expression, a quoted expression (let 'a[$(cmd)]=1'), a subscript.
// An integer constant needs nothing. Text that does not parse still runs
// the substitutions before the error, as bash evaluates as it parses.
func (w *walker) arithText(st *state, s string, depth int) {
	if intText(s) {
		return
	}
	code := strings.ContainsAny(s, "$`")
	if depth > maxArithDepth {
		if code {
			w.fail(&LimitError{What: "depth", Max: maxArithDepth})
		}
		w.arithUnknown(s, "arithmetic evaluates "+s+", nested in values deeper than followed")
		return
	}
	x, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Arithmetic(strings.NewReader(s))
	if err != nil || x == nil {
		if code {
			w.arithUnknown(s, "arithmetic evaluates "+s+", which does not parse: the shell runs its "+
				"substitutions before it stops")
		}
		return
	}
	n := w.pushCtx("arithmetic")
	w.walkArith(st, x, depth+1)
	w.popCtx(n)
}

// walkSubscript walks the array subscript of a variable name given as
// text (unset 'a[$(cmd)]', read, printf -v, declare, [[ -v ]], ${!ref}):
// the shell evaluates it as arithmetic, substitutions included. The
// subscript of an array declared -A is a string: only its substitutions
// run.
func (w *walker) walkSubscript(st *state, name string) {
	i := strings.IndexByte(name, '[')
	j := strings.LastIndexByte(name, ']')
	if i < 0 || j < i {
		return
	}
	sub := name[i+1 : j]
	if st.lookup(name[:i]).assoc {
		if strings.ContainsAny(sub, "$`") {
			if word, err := syntax.NewParser().Document(strings.NewReader(sub)); err == nil {
				w.walkWord(st, word)
			}
		}
		return
	}
	w.arithText(st, sub, 1)
}

// dynSubscript judges a variable name, only partly known statically,
// given to a builtin that assigns or tests it ("a[$i]"): its subscript
// is evaluated as arithmetic.
func (w *walker) dynSubscript(st *state, f field) {
	i := strings.IndexByte(f.tmpl, '[')
	if m := strings.Index(f.tmpl, markerPrefix); m >= 0 && (i < 0 || m < i) && !f.num {
		// The name itself is only known at run time: it may carry a
		// subscript (a[$(cmd)]) that bash evaluates, and runs.
		w.arithUnknown(f.val, "the variable name "+f.val+" is only known at run time: a subscript in it "+
			"(a[$(cmd)]) is evaluated as arithmetic and runs commands")
		return
	}
	if i <= 0 || !validName(f.tmpl[:i]) {
		return
	}
	if st.lookup(f.tmpl[:i]).assoc {
		return
	}
	t := numericTemplate(f.tmpl)
	if !f.num || strings.IndexFunc(t[i:], func(r rune) bool { return r == '_' || unicode.IsLetter(r) }) >= 0 &&
		strings.Contains(f.tmpl[i:], markerPrefix) {
		w.arithUnknown(f.val, "the subscript of "+f.val+" is evaluated as arithmetic and only known at run "+
			"time: an array subscript in it runs commands")
		return
	}
	w.walkSubscript(st, t)
}

// arithAssigned records what an arithmetic assignment changes: the
// variable holds an integer.
func (w *walker) arithAssigned(st *state, x syntax.ArithmExpr) {
	word, ok := x.(*syntax.Word)
	if !ok || len(word.Parts) != 1 {
		st.makeOpaque()
		return
	}
	name, element := "", false
	switch p := word.Parts[0].(type) {
	case *syntax.Lit:
		name = p.Value
	case *syntax.ParamExp:
		if p.Param != nil && !p.Excl && p.Exp == nil && p.Slice == nil && p.Repl == nil && !p.Length {
			name, element = p.Param.Value, p.Index != nil
		}
	}
	if !validName(name) {
		st.makeOpaque()
		return
	}
	if element && !numericValue(st.lookup(name)) {
		// One element holds an integer; the others are what they were.
		st.forget(name)
		return
	}
	st.setNumeric(name)
}

func (w *walker) walkTest(st *state, x syntax.TestExpr) {
	switch x := x.(type) {
	case *syntax.Word:
		w.walkWord(st, x)
	case *syntax.UnaryTest:
		w.walkTest(st, x.X)
		if word, ok := x.X.(*syntax.Word); ok && x.Op == syntax.TsVarSet {
			if f := w.literal(st, word, false); !f.dyn {
				w.walkSubscript(st, f.val)
			} else {
				w.dynSubscript(st, f)
			}
		}
	case *syntax.ParenTest:
		w.walkTest(st, x.X)
	case *syntax.BinaryTest:
		w.walkTest(st, x.X)
		w.walkTest(st, x.Y)
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			// Operands of arithmetic comparisons are evaluated as
			// arithmetic expressions.
			for _, op := range []syntax.TestExpr{x.X, x.Y} {
				if word, ok := op.(*syntax.Word); ok {
					w.arithWord(st, word, 0)
				}
			}
		}
	}
}

func (w *walker) walkRedirect(st *state, r *syntax.Redirect) {
	if r.Word != nil && r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc {
		n := w.pushCtx("redirect target")
		w.walkWord(st, r.Word)
		w.popCtx(n)
	}
	if r.Hdoc != nil && !quotedDelim(r.Word) {
		n := w.pushCtx("here-doc")
		w.walkWord(st, r.Hdoc)
		w.popCtx(n)
	}
}

func (w *walker) walkAssign(st *state, a *syntax.Assign) {
	w.walkAssignAs(st, a, false)
}

// walkAssignAs walks an assignment; assoc says the array is declared -A
// by the same command (declare -A m=([k]=v)).
func (w *walker) walkAssignAs(st *state, a *syntax.Assign, assoc bool) {
	assoc = assoc || a.Name != nil && st.lookup(a.Name.Value).assoc
	if a.Index != nil {
		w.walkIndex(st, a.Index, assoc)
	}
	w.walkWord(st, a.Value)
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				w.walkIndex(st, e.Index, assoc)
			}
			w.walkWord(st, e.Value)
		}
	}
}

// walkIndex walks an array subscript: arithmetic, or for an array
// declared -A a string whose substitutions run.
func (w *walker) walkIndex(st *state, x syntax.ArithmExpr, assoc bool) {
	if word, ok := x.(*syntax.Word); ok && assoc {
		w.walkWord(st, word)
		return
	}
	w.walkArith(st, x, 0)
}

// quotedDelim reports whether a here-document delimiter is quoted, which
// makes the body literal.
func quotedDelim(word *syntax.Word) bool {
	if word == nil {
		return false
	}
	for _, p := range word.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.Contains(p.Value, "\\") {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// stdinBody is what a command reads on standard input, when known.
type stdinBody struct {
	body field
	kind string // "here-doc", "here-string", "stdin" (a pipe), "file"
	// inherited is set for the input of an enclosing compound command,
	// which several commands may share.
	inherited bool
	// refs are the inherited variables whose values flow into the body.
	refs []string
	// lazy, when set, computes the body when it is needed: the output of
	// the previous command of a pipeline, lazyPrev run in lazySt
	// (staticOutput; it may be nil).
	lazy     *walker
	lazySt   *state
	lazyPrev *syntax.Stmt
}

// source is where the input comes from, for Command.Stdin: "text",
// "pipe" or "file", or "" when the script does not set it.
func (s *stdinBody) source() string {
	switch {
	case s == nil:
		return ""
	case s.kind == "file":
		return "file"
	case s.lazy != nil && s.get() == nil:
		// The output of a command other than echo, printf or cat of a
		// here-document: whatever it passes on.
		return "pipe"
	}
	return "text"
}

// get resolves a lazy body.
func (s *stdinBody) get() *stdinBody {
	if s == nil || s.lazy == nil {
		return s
	}
	r := s.lazy.staticOutput(s.lazySt, s.lazyPrev)
	if r != nil {
		r.inherited = s.inherited
	}
	return r
}

// evalRedirects evaluates redirections; it also returns standard input
// when a here-document, here-string or file provides it.
func (w *walker) evalRedirects(st *state, rs []*syntax.Redirect) ([]Redirect, *stdinBody) {
	if len(rs) == 0 {
		return nil, nil
	}
	out := make([]Redirect, 0, len(rs))
	var stdin *stdinBody
	mark := len(w.refBuf)
	defer func() {
		if stdin != nil {
			stdin.refs = w.peekRefs(mark)
		}
	}()
	for _, r := range rs {
		red := Redirect{Op: r.Op.String()}
		if r.N != nil {
			red.Fd = r.N.Value
		}
		toStdin := red.Fd == "" || red.Fd == "0"
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			var body field
			if quotedDelim(r.Word) {
				body = lit(rawWord(r.Hdoc))
			} else {
				body = w.document(st, r.Hdoc)
			}
			if r.Op == syntax.DashHdoc && !body.dyn {
				body = lit(stripTabs(body.val))
			}
			red.Target = body.word()
			if toStdin {
				stdin = &stdinBody{body: body, kind: "here-doc"}
			}
		case syntax.WordHdoc:
			f := w.literal(st, r.Word, false)
			body := f
			if f.dyn {
				body.tmpl += "\n"
			} else {
				body = lit(f.val + "\n")
			}
			red.Target = f.word()
			if toStdin {
				stdin = &stdinBody{body: body, kind: "here-string"}
			}
		default:
			fs := w.fields(st, []*syntax.Word{r.Word})
			var f field
			if len(fs) == 1 {
				f = fs[0]
			} else {
				src := w.source(r.Word)
				f = field{val: src, dyn: true, tmpl: w.marker(src)}
			}
			red.Target = f.word()
			if toStdin && (r.Op == syntax.RdrIn || r.Op == syntax.RdrInOut) {
				stdin = &stdinBody{body: f, kind: "file"}
			}
		}
		out = append(out, red)
	}
	return out, stdin
}

// stripTabs removes the leading tabs of each line, as <<- does.
func stripTabs(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, "\t")
	}
	return strings.Join(lines, "\n")
}

// rawWord is the literal text of a word (a quoted here-document body).
func rawWord(word *syntax.Word) string {
	if word == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range word.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(l.Value)
		}
	}
	return b.String()
}

// staticOutput returns what a simple echo, printf or cat of a here-document
// writes, when it is known; it feeds a shell reading its standard input.
func (w *walker) staticOutput(st *state, s *syntax.Stmt) *stdinBody {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || !plainStmtBut(s) || len(c.Args) == 0 || len(c.Assigns) > 0 {
		return nil
	}
	scratch := st.clone()
	w.dry++
	args := w.fields(scratch, c.Args)
	rs, stdin := w.evalRedirects(scratch, s.Redirs)
	w.dry--
	if len(args) == 0 {
		return nil
	}
	if args[0].dyn {
		return nil
	}
	var out string
	switch args[0].val {
	case "echo":
		if len(rs) > 0 {
			return nil
		}
		rest := args[1:]
		for len(rest) > 0 && !rest[0].dyn && strings.HasPrefix(rest[0].val, "-") {
			rest = rest[1:]
		}
		for _, a := range rest {
			if a.dyn {
				// The shell reads a partly dynamic script.
				f := joinFields(w, rest)
				f.tmpl += "\n"
				return &stdinBody{body: f, kind: "stdin"}
			}
		}
		words := fieldValues(args[1:])
		newline, escapes := true, false
		for len(words) > 0 && len(words[0]) > 1 && words[0][0] == '-' && strings.Trim(words[0][1:], "neE") == "" {
			for _, f := range words[0][1:] {
				switch f {
				case 'n':
					newline = false
				case 'e':
					escapes = true
				case 'E':
					escapes = false
				}
			}
			words = words[1:]
		}
		out = strings.Join(words, " ")
		if escapes {
			out = ansiC(out)
		}
		if newline {
			out += "\n"
		}
	case "printf":
		if len(rs) > 0 || len(args) < 2 {
			return nil
		}
		for _, a := range args {
			if a.dyn {
				return nil
			}
		}
		s, ok := printfStatic(args[1].val, fieldValues(args[2:]))
		if !ok {
			return nil
		}
		out = s
	case "cat":
		if len(args) != 1 || stdin == nil || stdin.kind == "file" {
			return nil
		}
		if stdin.body.dyn {
			return &stdinBody{body: stdin.body, kind: "stdin"}
		}
		out = stdin.body.val
	default:
		return nil
	}
	return &stdinBody{body: lit(out), kind: "stdin"}
}

func plainStmtBut(s *syntax.Stmt) bool {
	return !s.Negated && !s.Background && !s.Coprocess && !s.Disown
}

// printfStatic formats with %s, %b and %% only, reusing the format
// while arguments remain, as printf does.
func printfStatic(format string, args []string) (string, bool) {
	var b strings.Builder
	for {
		used := 0
		lit := 0
		flushLit := func(end int) {
			b.WriteString(ansiC(format[lit:end]))
		}
		for i := 0; i < len(format); i++ {
			if format[i] == '\\' {
				i++
				continue
			}
			if format[i] != '%' {
				continue
			}
			flushLit(i)
			if i+1 >= len(format) {
				return "", false
			}
			i++
			switch format[i] {
			case '%':
				b.WriteByte('%')
			case 's', 'b':
				arg := ""
				if used < len(args) {
					arg = args[used]
				}
				used++
				if format[i] == 'b' {
					arg = ansiC(arg)
				}
				b.WriteString(arg)
			default:
				return "", false
			}
			lit = i + 1
		}
		flushLit(len(format))
		if used == 0 || used >= len(args) {
			break
		}
		args = args[used:]
	}
	return b.String(), true
}
