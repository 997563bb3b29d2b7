package shellparse

import (
	"fmt"
	"slices"
	"strings"

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
		for i, s := range items {
			n := w.pushCtx("|")
			sub := st.clone()
			if i > 0 {
				prev := items[i-1]
				w.pipeIn = &stdinBody{lazy: w, lazySt: st, lazyPrev: prev}
			}
			w.stmt(sub, s)
			w.pipeIn = nil
			w.popCtx(n)
			last = sub
		}
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
			case f.dyn:
				s.forget(vname)
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
	savedR, savedP, savedI, savedRefs := w.redirs, w.pipeIn, w.inStdin, w.redirRefs
	w.redirs, w.pipeIn, w.inStdin, w.redirRefs = nil, nil, nil, nil
	w.enter()
	w.stmts(st.clone(), stmts)
	w.leave()
	w.redirs, w.pipeIn, w.inStdin, w.redirRefs = savedR, savedP, savedI, savedRefs
	w.popCtx(n)
}

func (w *walker) walkParam(st *state, pe *syntax.ParamExp) {
	if pe.Excl && pe.Param != nil {
		if ref := w.lookupParam(st, pe.Param.Value); ref.known && ref.set {
			w.walkSubscript(st, ref.str)
		}
	}
	if pe.NestedParam != nil {
		w.walkParts(st, []syntax.WordPart{pe.NestedParam})
	}
	if pe.Index != nil {
		w.walkArith(st, pe.Index, 0)
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
		if f := w.literal(st, x, false); !f.dyn && strings.ContainsAny(f.val, "$`") {
			// A quoted expression (let 'a[$(cmd)]=1') is evaluated by the
			// shell after quote removal.
			w.walkArithString(st, f.val, depth+1)
		}
		if s, ok := simpleLit(x); ok && validName(s) {
			v := st.lookup(s)
			if v.known && v.set && strings.ContainsAny(v.str, "$`") {
				w.walkArithString(st, v.str, depth+1)
			}
		}
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
		w.walkArith(st, spine[len(spine)-1].X, depth)
		for i := len(spine) - 1; i >= 0; i-- {
			b := spine[i]
			w.walkArith(st, b.Y, depth)
			if isArithAssign(b.Op) {
				w.forgetArithTarget(st, b.X)
			}
		}
		w.leave()
	case *syntax.UnaryArithm:
		w.enter()
		w.walkArith(st, x.X, depth)
		w.leave()
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			w.forgetArithTarget(st, x.X)
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

// assignVar records NAME=v; a variable declared -i evaluates what it is
// given as arithmetic: y=x with x='a[$(cmd)]' runs cmd.
func (w *walker) assignVar(st *state, name string, v value) {
	st.assign(name, v)
	if st.lookup(name).integer {
		w.walkArithValue(st, v)
	}
}

// walkIntAssign walks what NAME=value, NAME+=value, NAME[i]=value or
// NAME=(...) gives a variable declared -i: the shell evaluates it as
// arithmetic.
func (w *walker) walkIntAssign(st *state, a *syntax.Assign) {
	if a.Value != nil {
		if f := w.literal(st, a.Value, true); !f.dyn {
			w.walkArithText(st, f.val)
		}
	}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			if e.Value == nil {
				continue
			}
			if f := w.literal(st, e.Value, true); !f.dyn {
				w.walkArithText(st, f.val)
			}
		}
	}
}

// walkArithValue walks a value the shell evaluates as arithmetic: each
// element of an array, the string otherwise.
func (w *walker) walkArithValue(st *state, v value) {
	if !v.known {
		return
	}
	if v.isArr {
		for _, s := range v.arr {
			w.walkArithText(st, s)
		}
		return
	}
	w.walkArithText(st, v.str)
}

// walkArithText is walkArithString for any text, also one that only names
// variables whose values hold substitutions.
func (w *walker) walkArithText(st *state, s string) {
	if strings.TrimSpace(s) == "" {
		return
	}
	x, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Arithmetic(strings.NewReader(s))
	if err != nil || x == nil {
		return
	}
	n := w.pushCtx("arithmetic")
	w.walkArith(st, x, 1)
	w.popCtx(n)
}

// walkArithString walks text the shell evaluates as arithmetic.
func (w *walker) walkArithString(st *state, s string, depth int) {
	if !strings.ContainsAny(s, "$`") {
		return
	}
	if depth > maxArithDepth {
		w.fail(&LimitError{What: "depth", Max: maxArithDepth})
	}
	x, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Arithmetic(strings.NewReader(s))
	if err != nil || x == nil {
		return
	}
	n := w.pushCtx("arithmetic")
	w.walkArith(st, x, depth+1)
	w.popCtx(n)
}

// walkSubscript walks the array subscript of a variable name given as
// text (unset 'a[$(cmd)]', read, printf -v, declare, [[ -v ]], ${!ref}):
// the shell evaluates it as arithmetic, substitutions included.
func (w *walker) walkSubscript(st *state, name string) {
	i := strings.IndexByte(name, '[')
	j := strings.LastIndexByte(name, ']')
	if i < 0 || j < i {
		return
	}
	w.walkArithString(st, name[i+1:j], 0)
}

// forgetArithTarget makes the variable an arithmetic assignment changes
// unknown.
func (w *walker) forgetArithTarget(st *state, x syntax.ArithmExpr) {
	word, ok := x.(*syntax.Word)
	if !ok {
		st.makeOpaque()
		return
	}
	name := word.Lit()
	if i := strings.IndexByte(name, '['); i > 0 {
		name = name[:i]
	}
	if !validName(name) {
		if len(word.Parts) > 0 {
			if l, ok := word.Parts[0].(*syntax.Lit); ok {
				name, _, _ = strings.Cut(l.Value, "[")
			}
		}
	}
	if validName(name) {
		st.forget(name)
		return
	}
	st.makeOpaque()
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
					if f := w.literal(st, word, false); !f.dyn {
						w.walkArithString(st, f.val, 0)
					}
					if s, ok := simpleLit(word); ok && validName(s) {
						w.walkArith(st, word, 0)
					}
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
	if a.Index != nil {
		w.walkArith(st, a.Index, 0)
	}
	w.walkWord(st, a.Value)
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				w.walkArith(st, e.Index, 0)
			}
			w.walkWord(st, e.Value)
		}
	}
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
