package shellparse

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// field is one word during evaluation.
type field struct {
	// val is the static value; for a dynamic word its source text, for a
	// glob the pattern.
	val string
	dyn bool
	// glob marks a field that is a glob: val is the pattern, and the field
	// names the files it matches.
	glob bool
	// tmpl is, for a dynamic word, its static text with a marker standing
	// for each part only known at run time (see walker.marker).
	tmpl string
	// num marks a dynamic word whose every part known only at run time
	// is an integer ($((…)), $#, a variable holding an integer, $(wc -l)).
	num bool
	// tildeLit marks a static field whose leading "~" was quoted or
	// escaped in the source (see Word.TildeLiteral).
	tildeLit bool
}

func lit(s string) field { return field{val: s, tmpl: s} }

func (f field) word() Word { return Word{Value: f.val, Dynamic: f.dyn, TildeLiteral: f.tildeLit} }

// text is the field as script text: static value or template.
func (f field) text() string {
	if f.dyn {
		return f.tmpl
	}
	return f.val
}

func fieldValues(fs []field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.val
	}
	return out
}

// wordsOf returns the fields as words, taken from the walker's slab.
func (w *walker) wordsOf(fs []field) []Word {
	out := w.wordSlab.take(len(fs))
	for i, f := range fs {
		out[i] = f.word()
	}
	return out
}

// joinFields joins fields with spaces, the way eval and sh -c strings are
// built from several words.
func joinFields(w *walker, fs []field) field {
	dyn := false
	for _, f := range fs {
		dyn = dyn || f.dyn
	}
	vals := make([]string, len(fs))
	for i, f := range fs {
		vals[i] = f.val
	}
	if !dyn {
		return lit(strings.Join(vals, " "))
	}
	tmpls := make([]string, len(fs))
	for i, f := range fs {
		tmpls[i] = f.text()
	}
	return field{val: strings.Join(vals, " "), dyn: true, tmpl: strings.Join(tmpls, " ")}
}

// seg is a piece of a word after expansion, before field splitting.
type seg struct {
	s      string
	quoted bool // neither split nor globbed
	split  bool // result of an unquoted expansion: split by IFS
	brk    bool // a new field starts here ("$@")
	dyn    bool
	src    string // dynamic part: its source text
	// glob marks a dynamic part that is one of the names a glob matches
	// (a loop variable over a glob): s is the pattern. Where words are
	// split and globbed it stays a live glob, quoted or not; elsewhere it
	// is as unknown as any dynamic part.
	glob bool
	// num marks a dynamic part that is an integer.
	num bool
}

type quoteLevel int

const (
	quoteNone quoteLevel = iota
	quoteDouble
	quoteHeredoc
)

// source renders a node as shell text.
func (w *walker) source(n syntax.Node) string {
	if s, ok := w.srcCache[n]; ok {
		return s
	}
	if w.printer == nil {
		w.printer = syntax.NewPrinter(syntax.SingleLine(true))
		w.srcCache = make(map[syntax.Node]string)
	}
	var b strings.Builder
	if err := w.printer.Print(&b, n); err != nil {
		w.srcCache[n] = "?"
		return "?"
	}
	s := b.String()
	w.srcCache[n] = s
	return s
}

// sourceStrict renders a node as shell text that must parse back to the
// same node; the walk fails when it cannot.
func (w *walker) sourceStrict(n syntax.Node) string {
	s := w.source(n)
	if s == "?" {
		pos := n.Pos()
		w.fail(&ParseError{Line: int(pos.Line()), Col: int(pos.Col()), Msg: "cannot render word for alias expansion"})
	}
	return s
}

// simpleLit reports whether a word is one literal needing no evaluation.
func simpleLit(word *syntax.Word) (string, bool) {
	if len(word.Parts) != 1 {
		return "", false
	}
	l, ok := word.Parts[0].(*syntax.Lit)
	if !ok {
		return "", false
	}
	for i := 0; i < len(l.Value); i++ {
		switch l.Value[i] {
		case '\\', '*', '?', '[', '{', '~':
			return "", false
		}
	}
	return l.Value, true
}

// fields expands words as command arguments: brace expansion, tilde,
// parameters, quote removal, field splitting and (as dynamic) globbing.
func (w *walker) fields(st *state, words []*syntax.Word) []field {
	var out []field
	if len(words) > 0 {
		out = w.flds.take(len(words))[:0]
	}
	for _, word := range words {
		w.tick()
		if s, ok := simpleLit(word); ok {
			out = append(out, lit(s))
			continue
		}
		if fs, ok := w.exactParam(st, word); ok {
			for range fs {
				w.tick()
			}
			out = append(out, fs...)
			continue
		}
		wc := *word
		if syntax.SplitBraces(&wc) {
			for _, piece := range w.braces(&wc) {
				out = markTilde(piece, len(out), w.fieldsOf(st, piece, out))
			}
			continue
		}
		out = markTilde(word, len(out), w.fieldsOf(st, word, out))
	}
	return out
}

// markTilde marks the first field a word expanded to (fs[first:]) as
// holding a literal leading "~" when the word starts with a quoted or
// escaped tilde. Only what the source shows counts: a "~" that came out
// of a variable is left unmarked, and the guard then still reads it as
// home (more than the shell would, never less).
func markTilde(word *syntax.Word, first int, fs []field) []field {
	if first < len(fs) && !fs[first].dyn && strings.HasPrefix(fs[first].val, "~") && quotedTilde(word) {
		fs[first].tildeLit = true
	}
	return fs
}

// quotedTilde reports a word whose first character is a "~" the shell
// will not expand: '~…', $'~…', "~…" or \~….
func quotedTilde(word *syntax.Word) bool {
	if len(word.Parts) == 0 {
		return false
	}
	switch p := word.Parts[0].(type) {
	case *syntax.SglQuoted:
		return strings.HasPrefix(p.Value, "~")
	case *syntax.DblQuoted:
		if len(p.Parts) == 0 {
			return false
		}
		l, ok := p.Parts[0].(*syntax.Lit)
		return ok && strings.HasPrefix(l.Value, "~")
	case *syntax.Lit:
		return strings.HasPrefix(p.Value, `\~`)
	}
	return false
}

// exactParam handles a word that is exactly "$@", "$N" or "${N}" so that
// positional parameters keep their own dynamic flags.
func (w *walker) exactParam(st *state, word *syntax.Word) ([]field, bool) {
	if len(word.Parts) != 1 || !st.posKnown {
		return nil, false
	}
	part := word.Parts[0]
	quoted := false
	if dq, ok := part.(*syntax.DblQuoted); ok {
		if len(dq.Parts) != 1 {
			return nil, false
		}
		part = dq.Parts[0]
		quoted = true
	}
	pe, ok := part.(*syntax.ParamExp)
	if !ok || !plainParam(pe) {
		return nil, false
	}
	w.noteRefs(st, pe)
	name := pe.Param.Value
	if name == "@" && quoted {
		return append([]field(nil), st.pos...), true
	}
	n, err := strconv.Atoi(name)
	if err != nil || n < 1 {
		return nil, false
	}
	if n > len(st.pos) {
		if quoted {
			return []field{lit("")}, true
		}
		return nil, true
	}
	f := st.pos[n-1]
	if !f.dyn && !quoted {
		return nil, false // let field splitting happen
	}
	return []field{f}, true
}

func plainParam(pe *syntax.ParamExp) bool {
	return pe.Param != nil && !pe.Excl && !pe.Length && !pe.Width && !pe.IsSet &&
		pe.Flags == nil && pe.NestedParam == nil && pe.Index == nil &&
		len(pe.Modifiers) == 0 && pe.Slice == nil && pe.Repl == nil &&
		pe.Names == 0 && pe.Exp == nil
}

// braces performs brace expansion on a word split by syntax.SplitBraces.
func (w *walker) braces(word *syntax.Word) []*syntax.Word {
	var all []*syntax.Word
	w.bracesRec(word, func(piece *syntax.Word) {
		w.tick()
		all = append(all, piece)
		if len(all) > w.lim.MaxArgs {
			w.fail(&LimitError{What: "words", Max: w.lim.MaxArgs})
		}
	})
	return all
}

func (w *walker) bracesRec(word *syntax.Word, yield func(*syntax.Word)) {
	var left []syntax.WordPart
	for i, wp := range word.Parts {
		br, ok := wp.(*syntax.BraceExp)
		if !ok {
			left = append(left, wp)
			continue
		}
		rest := word.Parts[i+1:]
		prefix := append([]syntax.WordPart(nil), left...)
		next := func(parts []syntax.WordPart) {
			w.bracesRec(&syntax.Word{Parts: parts}, func(piece *syntax.Word) {
				piece.Parts = append(append([]syntax.WordPart(nil), prefix...), piece.Parts...)
				yield(piece)
			})
		}
		if br.Sequence {
			for _, s := range braceSeq(br, w.lim.MaxArgs) {
				parts := append([]syntax.WordPart{&syntax.Lit{Value: s}}, rest...)
				next(parts)
			}
			return
		}
		for _, elem := range br.Elems {
			parts := append(append([]syntax.WordPart(nil), elem.Parts...), rest...)
			next(parts)
		}
		return
	}
	yield(&syntax.Word{Parts: left})
}

// braceSeq lists the elements of {x..y[..incr]}, at most max+1 of them.
func braceSeq(br *syntax.BraceExp, max int) []string {
	fromLit, toLit := br.Elems[0].Lit(), br.Elems[1].Lit()
	chars := false
	from, err1 := strconv.ParseInt(fromLit, 10, 64)
	to, err2 := strconv.ParseInt(toLit, 10, 64)
	if err1 != nil || err2 != nil {
		if fromLit == "" || toLit == "" {
			return []string{"{" + fromLit + ".." + toLit + "}"}
		}
		chars = true
		from, to = int64(fromLit[0]), int64(toLit[0])
	}
	width := 0
	if !chars && (leadingZero(fromLit) || leadingZero(toLit)) {
		width = max2(len(fromLit), len(toLit))
	}
	incr := int64(1)
	if len(br.Elems) > 2 {
		n, _ := strconv.ParseInt(br.Elems[2].Lit(), 10, 64)
		if n < 0 {
			n = -n
		}
		if n != 0 {
			incr = n
		}
	}
	up := from <= to
	if !up {
		incr = -incr
	}
	var out []string
	for n := from; (up && n <= to) || (!up && n >= to); n += incr {
		var s string
		switch {
		case chars:
			s = string(rune(n))
		case width > 0:
			s = strconv.FormatInt(n, 10)
			neg := strings.HasPrefix(s, "-")
			s = strings.TrimPrefix(s, "-")
			for len(s) < width-boolInt(neg) {
				s = "0" + s
			}
			if neg {
				s = "-" + s
			}
		default:
			s = strconv.FormatInt(n, 10)
		}
		out = append(out, s)
		if len(out) > max {
			break
		}
		if (incr > 0 && n > (1<<62)) || (incr < 0 && n < -(1<<62)) {
			break
		}
	}
	return out
}

func leadingZero(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return len(s) > 1 && s[0] == '0'
}

func max2(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fieldsOf expands one word (already brace-expanded) into fields, which
// it appends to out.
func (w *walker) fieldsOf(st *state, word *syntax.Word, out []field) []field {
	segs := w.segs(st, word.Parts, quoteNone, false, nil)
	for _, s := range segs {
		if s.dyn && !s.glob {
			return append(out, w.dynField(word, segs))
		}
	}
	ifs := " \t\n"
	ifsKnown := true
	if v := st.lookup("IFS"); !v.known {
		ifsKnown = false
	} else if v.set {
		ifs = v.str
	}

	// The word's own fields start at first.
	first := len(out)
	var cur []seg
	have := false
	flush := func(force bool) {
		if have || force {
			out = append(out, finishField(cur))
		}
		cur = cur[:0]
		have = false
	}
	for _, s := range segs {
		if s.brk {
			flush(false)
		}
		if !s.split {
			cur = append(cur, s)
			if s.quoted || s.s != "" {
				have = true
			}
			continue
		}
		if s.s == "" {
			continue
		}
		if !ifsKnown {
			return append(out[:first], w.dynField(word, segs))
		}
		w.splitInto(s.s, ifs, &cur, &have, flush)
	}
	flush(false)
	return out
}

// splitInto adds an unquoted expansion to the fields being built,
// splitting it on IFS the way POSIX describes.
func (w *walker) splitInto(s, ifs string, cur *[]seg, have *bool, flush func(bool)) {
	isIFS := func(r rune) bool { return strings.ContainsRune(ifs, r) }
	isWS := func(r rune) bool { return (r == ' ' || r == '\t' || r == '\n') && isIFS(r) }
	start := -1
	end := func(i int) {
		if start >= 0 {
			*cur = append(*cur, seg{s: s[start:i]})
			*have = true
			start = -1
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isIFS(r) {
			if start < 0 {
				start = i
			}
			i += size
			continue
		}
		end(i)
		// A delimiter is IFS white space, or one other IFS character
		// with the white space around it.
		j := i
		for j < len(s) {
			r2, sz := utf8.DecodeRuneInString(s[j:])
			if !isWS(r2) {
				break
			}
			j += sz
		}
		nonWS := false
		if j < len(s) {
			r2, sz := utf8.DecodeRuneInString(s[j:])
			if isIFS(r2) && !isWS(r2) {
				nonWS = true
				j += sz
				for j < len(s) {
					r3, sz3 := utf8.DecodeRuneInString(s[j:])
					if !isWS(r3) {
						break
					}
					j += sz3
				}
			}
		}
		flush(nonWS)
		i = j
	}
	end(len(s))
}

// finishField joins the pieces of one field, marking globs as dynamic.
func finishField(parts []seg) field {
	var val string
	glob := false
	if len(parts) == 1 {
		val = parts[0].s
		glob = !parts[0].quoted && strings.ContainsAny(val, "*?[")
	} else {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.s)
			if !p.quoted && strings.ContainsAny(p.s, "*?[") {
				glob = true
			}
		}
		val = b.String()
	}
	if !glob {
		return lit(val)
	}
	var pb strings.Builder
	for _, p := range parts {
		if p.quoted {
			pb.WriteString(pattern.QuoteMeta(p.s, 0))
		} else {
			pb.WriteString(p.s)
		}
	}
	pat := pb.String()
	if !pattern.HasMeta(pat, 0) {
		return lit(val)
	}
	return field{val: pat, dyn: true, glob: true}
}

// dynField builds the dynamic field of a word some part of which is only
// known at run time.
func (w *walker) dynField(word *syntax.Word, segs []seg) field {
	var t strings.Builder
	num := true
	for _, s := range segs {
		if s.dyn {
			t.WriteString(w.marker(s.src))
			num = num && s.num
		} else {
			t.WriteString(s.s)
		}
	}
	return field{val: w.source(word), dyn: true, tmpl: t.String(), num: num}
}

// literal expands a word where no field splitting happens: assignment
// values, here-strings, case subjects. Globs stay literal there.
func (w *walker) literal(st *state, word *syntax.Word, assign bool) field {
	if word == nil {
		return lit("")
	}
	if s, ok := simpleLit(word); ok {
		return lit(s)
	}
	segs := w.segs(st, word.Parts, quoteNone, assign, nil)
	return w.joinSegs(word, segs)
}

// document expands a here-document body.
func (w *walker) document(st *state, word *syntax.Word) field {
	if word == nil {
		return lit("")
	}
	segs := w.segs(st, word.Parts, quoteHeredoc, false, nil)
	return w.joinSegs(word, segs)
}

func (w *walker) joinSegs(word *syntax.Word, segs []seg) field {
	var b strings.Builder
	for i, s := range segs {
		if s.dyn {
			return w.dynField(word, segs)
		}
		if s.brk && i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.s)
	}
	return lit(b.String())
}

// globValue returns the pattern of an assignment value whose only parts
// known at run time are names a glob matches (y=$f or y="$f.bak", $f a
// loop variable over a glob): the value is one of the names the pattern
// matches.
func (w *walker) globValue(st *state, word *syntax.Word) (string, bool) {
	if word == nil {
		return "", false
	}
	segs := w.segs(st, word.Parts, quoteNone, true, nil)
	glob := false
	for _, s := range segs {
		if s.dyn && !s.glob {
			return "", false
		}
		glob = glob || s.glob
	}
	if !glob {
		return "", false
	}
	var b strings.Builder
	for _, s := range segs {
		if s.glob {
			b.WriteString(s.s)
		} else {
			b.WriteString(pattern.QuoteMeta(s.s, 0))
		}
	}
	return b.String(), true
}

// segs expands word parts into segments.
func (w *walker) segs(st *state, parts []syntax.WordPart, q quoteLevel, assign bool, out []seg) []seg {
	for i, part := range parts {
		switch p := part.(type) {
		case *syntax.Lit:
			out = w.litSegs(st, p.Value, q, i == 0, len(parts) > 1, assign, out)
		case *syntax.SglQuoted:
			s := p.Value
			if p.Dollar {
				s = ansiC(s)
			}
			out = append(out, seg{s: s, quoted: true})
		case *syntax.DblQuoted:
			if len(p.Parts) == 1 {
				if pe, ok := p.Parts[0].(*syntax.ParamExp); ok {
					out = w.paramSegs(st, pe, true, out)
					continue
				}
			}
			out = append(out, seg{quoted: true})
			out = w.segs(st, p.Parts, quoteDouble, false, out)
		case *syntax.ParamExp:
			out = w.paramSegs(st, p, q != quoteNone, out)
		case *syntax.ArithmExp:
			n, ok := w.arith(st, p.X, 0)
			if !ok {
				out = append(out, seg{dyn: true, src: w.source(p), num: true})
				continue
			}
			out = append(out, seg{s: strconv.FormatInt(n, 10), quoted: q != quoteNone, split: q == quoteNone})
		case *syntax.CmdSubst:
			if v, ok := w.staticSubst(st, p); ok {
				out = append(out, seg{s: v, quoted: q != quoteNone, split: q == quoteNone})
				continue
			}
			out = append(out, seg{dyn: true, src: w.source(part), num: w.numericSubst(st, p)})
		default: // process substitutions, extended globs
			out = append(out, seg{dyn: true, src: w.source(part)})
		}
	}
	return out
}

// staticSubst returns the output of a command substitution that only
// prints static text: $(echo WORDS) and $(cat <<EOF ... EOF) (or a
// here-string), when echo and cat are not functions or aliases of the
// script. Its trailing newlines are removed, as the shell does.
func (w *walker) staticSubst(st *state, cs *syntax.CmdSubst) (string, bool) {
	if len(cs.Stmts) != 1 {
		return "", false
	}
	stmt := cs.Stmts[0]
	call, ok := stmt.Cmd.(*syntax.CallExpr)
	if !ok || stmt.Negated || stmt.Background || stmt.Coprocess || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return "", false
	}
	name, ok := simpleLit(call.Args[0])
	if !ok || (name != "echo" && name != "cat") {
		return "", false
	}
	if _, ok := st.funcs[name]; ok || st.opaque {
		return "", false // a sourced file may have defined it
	}
	if _, ok := st.aliases[name]; ok {
		return "", false
	}
	w.enter()
	defer w.leave()
	switch name {
	case "echo":
		if len(stmt.Redirs) > 0 {
			return "", false
		}
		args := w.fields(st, call.Args[1:])
		vals := make([]string, len(args))
		for i, a := range args {
			// Options and escapes depend on the shell's echo: leave them.
			if a.dyn || i == 0 && strings.HasPrefix(a.val, "-") || strings.Contains(a.val, "\\") {
				return "", false
			}
			vals[i] = a.val
		}
		return strings.TrimRight(strings.Join(vals, " "), "\n"), true
	case "cat":
		if len(call.Args) != 1 || len(stmt.Redirs) != 1 {
			return "", false
		}
		switch stmt.Redirs[0].Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		default:
			return "", false
		}
		_, in := w.evalRedirects(st, stmt.Redirs)
		if in == nil || in.body.dyn {
			return "", false
		}
		return strings.TrimRight(in.body.val, "\n"), true
	}
	return "", false
}

// litSegs handles a literal part: tilde expansion and backslash escapes.
func (w *walker) litSegs(st *state, s string, q quoteLevel, first, more, assign bool, out []seg) []seg {
	switch q {
	case quoteDouble, quoteHeredoc:
		if !strings.Contains(s, "\\") {
			return append(out, seg{s: s, quoted: true})
		}
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c == '\\' && i+1 < len(s) {
				switch s[i+1] {
				case '$', '`', '\\':
					i++
					c = s[i]
				case '"':
					if q == quoteDouble {
						i++
						c = s[i]
					}
				}
			}
			b.WriteByte(c)
		}
		return append(out, seg{s: b.String(), quoted: true})
	}
	if first && strings.HasPrefix(s, "~") {
		var ok bool
		out, s, ok = w.tilde(st, s, more, out)
		if !ok {
			return out
		}
	}
	if assign && strings.Contains(s, ":~") {
		// Tildes after ':' in assignments (PATH-like values).
		for {
			i := strings.Index(s, ":~")
			if i < 0 {
				break
			}
			rest := s[i+2:]
			if rest != "" && rest[0] != '/' && rest[0] != ':' {
				out = w.escSegs(s[:i+2], out)
				s = rest
				continue
			}
			out = w.escSegs(s[:i+1], out)
			home := st.lookup("HOME")
			if !home.known || !home.set {
				out = append(out, seg{dyn: true, src: "~"})
			} else {
				out = append(out, seg{s: home.str, quoted: true})
			}
			s = rest
		}
	}
	return w.escSegs(s, out)
}

// tilde expands a leading ~ or ~/...; it returns the rest of the literal.
func (w *walker) tilde(st *state, s string, more bool, out []seg) ([]seg, string, bool) {
	name, rest := s[1:], ""
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name, rest = name[:i], name[i:]
	} else if more {
		return out, s, true // ~"x": not a tilde prefix
	}
	if name != "" {
		// ~user, ~+, ~-: not known statically.
		out = append(out, seg{dyn: true, src: "~" + name})
		return out, rest, true
	}
	home := st.lookup("HOME")
	if !home.known || !home.set {
		out = append(out, seg{dyn: true, src: "~"})
		return out, rest, true
	}
	out = append(out, seg{s: home.str, quoted: true})
	return out, rest, true
}

// escSegs splits an unquoted literal at backslash escapes: escaped
// characters are quoted.
func (w *walker) escSegs(s string, out []seg) []seg {
	for {
		i := strings.IndexByte(s, '\\')
		if i < 0 || i == len(s)-1 {
			break
		}
		if i > 0 {
			out = append(out, seg{s: s[:i]})
		}
		_, size := utf8.DecodeRuneInString(s[i+1:])
		out = append(out, seg{s: s[i+1 : i+1+size], quoted: true})
		s = s[i+1+size:]
	}
	if s != "" {
		out = append(out, seg{s: s})
	}
	return out
}

// paramSegs expands a parameter expansion.
func (w *walker) paramSegs(st *state, pe *syntax.ParamExp, quoted bool, out []seg) []seg {
	w.noteRefs(st, pe)
	r := w.param(st, pe)
	if !r.known {
		sg := seg{dyn: true, src: w.source(pe), num: w.numericParam(st, pe)}
		if plainParam(pe) {
			if v := st.lookup(pe.Param.Value); v.glob {
				// Each name the pattern matches, whole: quoting it keeps
				// it from being split, not from being any of them.
				sg.s, sg.glob = v.str, true
			}
		}
		return append(out, sg)
	}
	// An element costs more than its bytes: each becomes a field.
	n := len(r.str) + 16*len(r.list)
	for _, e := range r.list {
		n += len(e)
	}
	w.grow(n)
	if r.isList {
		if quoted && r.star {
			return append(out, seg{s: strings.Join(r.list, ifsJoiner(st)), quoted: true})
		}
		for i, e := range r.list {
			out = append(out, seg{s: e, quoted: quoted, split: !quoted, brk: i > 0})
		}
		return out
	}
	return append(out, seg{s: r.str, quoted: quoted, split: !quoted})
}

func ifsJoiner(st *state) string {
	v := st.lookup("IFS")
	if !v.set {
		return " "
	}
	if v.str == "" {
		return ""
	}
	_, size := utf8.DecodeRuneInString(v.str)
	return v.str[:size]
}

// apply maps f over the value or its elements.
func (r *pval) apply(f func(string) string) {
	if r.isList {
		l := make([]string, len(r.list))
		for i, e := range r.list {
			l[i] = f(e)
		}
		r.list = l
		return
	}
	r.str = f(r.str)
}

// pval is the result of a parameter expansion.
type pval struct {
	known  bool
	str    string
	list   []string
	isList bool // "$@"-like: one field per element
	star   bool // "$*"-like: joined when quoted
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || (r < 128 && unicode.IsLetter(r)) || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}

// lookupParam returns what is known of a parameter, special ones included.
func (w *walker) lookupParam(st *state, name string) value {
	switch name {
	case "@", "*":
		if !st.posKnown {
			return value{}
		}
		arr := make([]string, len(st.pos))
		for i, f := range st.pos {
			if f.dyn {
				return value{}
			}
			arr[i] = f.val
		}
		v := value{known: true, set: true, isArr: true, arr: arr}
		if len(arr) > 0 {
			v.str = arr[0]
		}
		return v
	case "#":
		if !st.posKnown {
			return value{}
		}
		return knownString(strconv.Itoa(len(st.pos)))
	case "0":
		if !st.arg0Known || st.arg0.dyn {
			return value{}
		}
		return knownString(st.arg0.val)
	}
	if n, err := strconv.Atoi(name); err == nil && n > 0 {
		if !st.posKnown {
			return value{}
		}
		if n > len(st.pos) {
			return value{known: true}
		}
		if st.pos[n-1].dyn {
			return value{}
		}
		return knownString(st.pos[n-1].val)
	}
	if !validName(name) {
		return value{} // $?, $$, $!, $-, $_
	}
	return st.lookup(name)
}

// param evaluates a parameter expansion where its value is known.
func (w *walker) param(st *state, pe *syntax.ParamExp) pval {
	if pe.Param == nil || pe.Flags != nil || pe.NestedParam != nil || len(pe.Modifiers) > 0 ||
		pe.Width || pe.IsSet || pe.Split != 0 || pe.GlobSubst != 0 || pe.RcExpand != 0 {
		return pval{}
	}
	name := pe.Param.Value
	if pe.Excl {
		if pe.Names != 0 || pe.Index != nil {
			return pval{}
		}
		ref := w.lookupParam(st, name)
		if !ref.known || !ref.set || !validName(ref.str) {
			return pval{}
		}
		name = ref.str
	}
	v := w.lookupParam(st, name)
	if !v.known {
		return pval{}
	}
	var r pval
	r.known = true
	switch {
	case name == "@" || name == "*":
		r.isList, r.star, r.list = true, name == "*", v.arr
	case pe.Index != nil:
		if idx, ok := pe.Index.(*syntax.Word); ok && (idx.Lit() == "@" || idx.Lit() == "*") {
			r.isList, r.star = true, idx.Lit() == "*"
			switch {
			case v.isArr:
				r.list = v.arr
			case v.set:
				r.list = []string{v.str}
			}
			break
		}
		n, ok := w.arith(st, pe.Index, 0)
		if !ok {
			return pval{}
		}
		switch {
		case v.isArr:
			if n < 0 {
				n += int64(len(v.arr))
			}
			if n >= 0 && n < int64(len(v.arr)) {
				r.str = v.arr[n]
			} else {
				v.set = false
			}
		case n == 0:
			r.str = v.str
		default:
			v.set = false
		}
	default:
		r.str = v.str
	}
	set := v.set

	apply := func(f func(string) string) { r.apply(f) }

	switch {
	case pe.Length:
		if r.isList {
			r = pval{known: true, str: strconv.Itoa(len(r.list))}
		} else {
			r.str = strconv.Itoa(utf8.RuneCountInString(r.str))
		}
	case pe.Slice != nil:
		off, length, hasLen := int64(0), int64(0), false
		if pe.Slice.Offset != nil {
			n, ok := w.arith(st, pe.Slice.Offset, 0)
			if !ok {
				return pval{}
			}
			off = n
		}
		if pe.Slice.Length != nil {
			n, ok := w.arith(st, pe.Slice.Length, 0)
			if !ok {
				return pval{}
			}
			length, hasLen = n, true
		}
		if r.isList {
			list := r.list
			if name == "@" || name == "*" {
				if off == 0 {
					a0 := w.lookupParam(st, "0")
					if !a0.known {
						return pval{}
					}
					list = append([]string{a0.str}, list...)
				} else if off > 0 {
					off--
				}
			}
			l, ok := sliceOf(len(list), off, length, hasLen)
			if !ok {
				return pval{}
			}
			r.list = list[l[0]:l[1]]
		} else {
			rs := []rune(r.str)
			l, ok := sliceOf(len(rs), off, length, hasLen)
			if !ok {
				return pval{}
			}
			r.str = string(rs[l[0]:l[1]])
		}
	case pe.Repl != nil:
		orig, ok := w.patternOf(st, pe.Repl.Orig)
		if !ok {
			return pval{}
		}
		with := w.literal(st, pe.Repl.With, false)
		if with.dyn {
			return pval{}
		}
		if orig == "" {
			break
		}
		okAll := true
		apply(func(s string) string {
			out, ok := replacePattern(s, orig, with.val, pe.Repl.All)
			okAll = okAll && ok
			return out
		})
		if !okAll {
			return pval{}
		}
	case pe.Exp != nil:
		return w.paramOp(st, pe, name, r, set)
	}
	return r
}

func sliceOf(n int, off, length int64, hasLen bool) ([2]int, bool) {
	if off < 0 {
		off += int64(n)
		if off < 0 {
			return [2]int{n, n}, true
		}
	}
	if off > int64(n) {
		off = int64(n)
	}
	end := int64(n)
	if hasLen {
		if length >= 0 {
			if off+length < end {
				end = off + length
			}
		} else {
			end += length
			if end < off {
				return [2]int{}, false
			}
		}
	}
	return [2]int{int(off), int(end)}, true
}

// paramOp applies ${x:-y} and friends.
func (w *walker) paramOp(st *state, pe *syntax.ParamExp, name string, r pval, set bool) pval {
	apply := func(f func(string) string) { r.apply(f) }
	empty := !set || (!r.isList && r.str == "") || (r.isList && len(r.list) == 0)
	arg := func() (field, bool) {
		f := w.literal(st, pe.Exp.Word, false)
		return f, !f.dyn
	}
	switch op := pe.Exp.Op; op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull,
		syntax.AssignUnset, syntax.AssignUnsetOrNull:
		use := !set || (empty && (op == syntax.DefaultUnsetOrNull || op == syntax.AssignUnsetOrNull))
		if !use {
			return r
		}
		f, ok := arg()
		if op == syntax.AssignUnset || op == syntax.AssignUnsetOrNull {
			if validName(name) {
				if ok {
					w.assignVar(st, name, knownString(f.val))
				} else {
					st.forget(name)
				}
			}
		}
		if !ok {
			return pval{}
		}
		return pval{known: true, str: f.val}
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		use := set && !(empty && op == syntax.AlternateUnsetOrNull)
		if !use {
			return pval{known: true}
		}
		f, ok := arg()
		if !ok {
			return pval{}
		}
		return pval{known: true, str: f.val}
	case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		if !set || (empty && op == syntax.ErrorUnsetOrNull) {
			return pval{} // the shell stops here
		}
		return r
	case syntax.RemSmallPrefix, syntax.RemLargePrefix, syntax.RemSmallSuffix, syntax.RemLargeSuffix:
		pat, ok := w.patternOf(st, pe.Exp.Word)
		if !ok {
			return pval{}
		}
		suffix := op == syntax.RemSmallSuffix || op == syntax.RemLargeSuffix
		small := op == syntax.RemSmallPrefix || op == syntax.RemSmallSuffix
		okAll := true
		apply(func(s string) string {
			out, ok := removePattern(s, pat, suffix, small)
			okAll = okAll && ok
			return out
		})
		if !okAll {
			return pval{}
		}
		return r
	case syntax.UpperFirst, syntax.UpperAll, syntax.LowerFirst, syntax.LowerAll:
		pat, ok := w.patternOf(st, pe.Exp.Word)
		if !ok || (pat != "" && pat != "?" && pat != "*") {
			return pval{}
		}
		conv := unicode.ToUpper
		if op == syntax.LowerFirst || op == syntax.LowerAll {
			conv = unicode.ToLower
		}
		all := op == syntax.UpperAll || op == syntax.LowerAll
		apply(func(s string) string {
			rs := []rune(s)
			for i := range rs {
				rs[i] = conv(rs[i])
				if !all {
					break
				}
			}
			return string(rs)
		})
		return r
	case syntax.OtherParamOps:
		f, ok := arg()
		if !ok {
			return pval{}
		}
		switch f.val {
		case "U":
			apply(strings.ToUpper)
		case "L":
			apply(strings.ToLower)
		case "u":
			apply(func(s string) string {
				rs := []rune(s)
				if len(rs) > 0 {
					rs[0] = unicode.ToUpper(rs[0])
				}
				return string(rs)
			})
		case "E":
			apply(ansiC)
		case "Q":
			okAll := true
			apply(func(s string) string {
				q, err := syntax.Quote(s, syntax.LangBash)
				okAll = okAll && err == nil
				return q
			})
			if !okAll {
				return pval{}
			}
		default:
			return pval{}
		}
		return r
	}
	return pval{}
}

// patternOf expands a word used as a pattern: quoted parts are escaped.
func (w *walker) patternOf(st *state, word *syntax.Word) (string, bool) {
	if word == nil {
		return "", true
	}
	segs := w.segs(st, word.Parts, quoteNone, false, nil)
	var b strings.Builder
	for _, s := range segs {
		if s.dyn {
			return "", false
		}
		if s.quoted {
			b.WriteString(pattern.QuoteMeta(s.s, 0))
		} else {
			b.WriteString(s.s)
		}
	}
	return b.String(), true
}

// ansiC decodes the escapes of a $'...' string.
func ansiC(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(c)
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			} else {
				b.WriteString("\\c")
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		case 'x', 'u', 'U':
			max := 2
			switch c {
			case 'u':
				max = 4
			case 'U':
				max = 8
			}
			j := i + 1
			for j < len(s) && j < i+1+max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if c == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	out := b.String()
	if i := strings.IndexByte(out, 0); i >= 0 {
		out = out[:i]
	}
	return out
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
