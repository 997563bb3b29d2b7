package shellparse

import (
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// builtin applies a shell builtin that runs scripts or changes what the
// parser knows (variables, aliases, positional parameters). It emits the
// builtin's own command and returns false for any other name.
func (w *walker) builtin(inv *invocation, name string) bool {
	if name == "popd" {
		w.cdSeen = true
	}
	switch name {
	case "unset", "read", "printf", "mapfile", "readarray", "getopts", "export",
		"declare", "typeset", "local", "readonly", "test", "[":
		// Names with subscripts are evaluated: unset 'a[$(cmd)]' runs cmd.
		for _, a := range inv.args[1:] {
			if !a.dyn && strings.ContainsAny(a.val, "$`") {
				n, _, _ := strings.Cut(a.val, "=")
				w.walkSubscript(inv.st, n)
			}
		}
		// So are names whose subscript names variables (unset 'a[n]') or
		// is only known at run time (unset "a[$i]").
		for _, a := range varNames(inv, name) {
			switch {
			case a.dyn:
				w.dynSubscript(inv.st, a)
			case !strings.ContainsAny(a.val, "$`"):
				n, _, _ := strings.Cut(a.val, "=")
				if i := strings.IndexByte(n, '['); i > 0 && validName(n[:i]) {
					w.walkSubscript(inv.st, n)
				}
			}
		}
	}
	switch name {
	case "eval":
		w.evalBuiltin(inv)
	case "source", ".":
		file := "(none)"
		if len(inv.args) > 1 {
			file = inv.args[1].val
		}
		if in := inv.stdin.get(); len(inv.args) > 1 && !inv.args[1].dyn && isStdinPath(file) && in != nil && in.kind != "file" {
			// source /dev/stdin <<EOF: the here-document runs in this
			// shell.
			note := "sourced " + in.kind + " is parsed"
			if in.body.dyn {
				note = "sources a dynamic " + in.kind
			}
			w.emitInv(inv, in.body.dyn, note)
			wr := Wrapper{Name: inv.args[0].val, Argv: fieldValues(inv.args[:2])}
			w.walkScript(inv.st, inv, wr, in.kind, in.body, syntax.LangBash, true)
			if in.body.dyn {
				inv.st.makeOpaque()
			}
			return true
		}
		if w.sourceKnown(inv, file) {
			return true
		}
		w.emitInv(inv, false, "file "+file+" is not followed")
		inv.st.makeOpaque()
	case "trap":
		w.trapBuiltin(inv)
	case "alias":
		w.emitInv(inv, false)
		for _, a := range inv.args[1:] {
			if a.dyn {
				continue
			}
			if n, v, ok := strings.Cut(a.val, "="); ok && n != "" && !strings.HasPrefix(n, "-") {
				if !inv.st.defineAlias(n, v) {
					w.fail(&LimitError{What: "definitions", Max: maxTracked})
				}
			}
		}
	case "cd", "pushd":
		w.cdSeen = true
		// With CDPATH set by the script, "cd etc" may go to any of its
		// directories: the target is only known at run time.
		if inv.callSt.assignedHere("CDPATH") {
			for k := 1; k < len(inv.args); k++ {
				a := inv.args[k]
				if a.dyn || strings.HasPrefix(a.val, "-") {
					continue
				}
				if !strings.HasPrefix(a.val, "/") && a.val != "." && a.val != ".." &&
					!strings.HasPrefix(a.val, "./") && !strings.HasPrefix(a.val, "../") {
					src := "$CDPATH/" + a.val
					inv.args = append(slices.Clip(inv.args[:k]), append([]field{{val: src, dyn: true, tmpl: w.marker(src)}}, inv.args[k+1:]...)...)
				}
				break
			}
		}
		w.emitInv(inv, false)
	case "hash":
		// hash -p FILE NAME: the command NAME now runs FILE.
		w.emitInv(inv, false)
		args := inv.args[1:]
		for k := 0; k < len(args); k++ {
			a := args[k]
			if a.dyn {
				break
			}
			if !strings.HasPrefix(a.val, "-p") {
				continue
			}
			file := strings.TrimPrefix(a.val, "-p")
			if file == "" && k+1 < len(args) {
				k++
				file = args[k].val
				if args[k].dyn {
					file = ""
				}
			}
			for _, n := range args[k+1:] {
				if n.dyn || strings.HasPrefix(n.val, "-") {
					continue
				}
				// A file only known at run time makes NAME a program only
				// known at run time.
				val := "$(command -v " + shQuote(n.val) + ")"
				if file != "" {
					val = shQuote(file)
				}
				if !inv.st.defineAlias(n.val, val) {
					w.fail(&LimitError{What: "definitions", Max: maxTracked})
				}
			}
			break
		}
	case "unalias":
		w.emitInv(inv, false)
		for _, a := range inv.args[1:] {
			switch {
			case a.dyn:
			case a.val == "-a":
				inv.st.aliases, inv.st.aliasesShared = nil, false
			default:
				if _, ok := inv.st.aliases[a.val]; ok {
					delete(inv.st.ownAliases(), a.val)
				}
			}
		}
	case "read":
		w.emitInv(inv, false)
		w.readBuiltin(inv)
		if refs := inputRefs(inv); len(refs) > 0 || inv.st.vars != nil {
			for _, n := range readTargets(inv) {
				inv.st.setRefs(n, refs)
			}
		}
	case "mapfile", "readarray":
		w.emitInv(inv, false)
		i, _ := parseOpts(inv.args, optSpec{flags: "t", args: "dnOscCu"})
		target := "MAPFILE"
		if i < len(inv.args) {
			target = inv.args[len(inv.args)-1].val
			if inv.args[len(inv.args)-1].dyn {
				inv.st.makeOpaque()
			}
		}
		w.forgetInput(inv.st, target, inv.args[0].val)
		inv.st.setRefs(target, inputRefs(inv))
	case "printf":
		w.emitInv(inv, false)
		if len(inv.args) > 2 && !inv.args[1].dyn && inv.args[1].val == "-v" {
			if inv.args[2].dyn {
				inv.st.makeOpaque()
			} else {
				target := arrayBase(inv.args[2].val)
				static := true
				for _, a := range inv.args[3:] {
					static = static && (!a.dyn || a.num)
				}
				if static {
					// What printf prints from static words is no input.
					inv.st.forget(target)
				} else {
					w.forgetInput(inv.st, target, "printf -v")
				}
				inv.st.setRefs(target, inv.refs)
			}
		}
	case "getopts":
		w.emitInv(inv, false)
		inv.st.forget("OPTARG")
		inv.st.setNumeric("OPTIND")
		if len(inv.args) > 2 {
			if inv.args[2].dyn {
				inv.st.makeOpaque()
			} else {
				w.forgetInput(inv.st, inv.args[2].val, "getopts")
			}
		}
	case "unset":
		w.emitInv(inv, false)
		w.unsetBuiltin(inv)
	case "set":
		w.emitInv(inv, false)
		w.setBuiltin(inv)
	case "shift":
		w.emitInv(inv, false)
		st := inv.st
		n := 1
		if len(inv.args) > 1 {
			a := inv.args[1]
			v, err := strconv.Atoi(a.val)
			if a.dyn || err != nil || v < 0 {
				st.posKnown, st.pos = false, nil
				return true
			}
			n = v
		}
		if st.posKnown && n <= len(st.pos) {
			st.pos = st.pos[n:]
		}
	case "export", "declare", "typeset", "local", "readonly":
		w.emitInv(inv, false)
		var flags []string
		var items []declItem
		opaque := false
		for _, a := range inv.args[1:] {
			opaque = opaque || addDeclWord(a, &flags, &items)
		}
		for _, it := range items {
			if it.val != nil {
				it.val.refs = inv.refs
			}
		}
		w.applyDecl(inv.st, name, flags, items, opaque)
	case "test", "[":
		return false
	case "let":
		w.emitInv(inv, false)
		for _, a := range inv.args[1:] {
			switch {
			case !a.dyn:
				w.walkArithString(inv.st, a.val, 0)
				if n, _, ok := strings.Cut(a.val, "="); ok {
					if t := arrayBase(strings.TrimRight(n, "+-*/%<>&|^")); validName(t) {
						inv.st.setNumeric(t)
					} else {
						inv.st.makeOpaque()
					}
				}
			case a.num:
			default:
				w.arithUnknown(a.val, "let evaluates "+a.val+", only known at run time, as arithmetic: "+
					"an array subscript in it runs commands")
				inv.st.makeOpaque()
			}
		}
	default:
		return false
	}
	return true
}

func arrayBase(name string) string {
	if i := strings.IndexByte(name, '['); i > 0 {
		return name[:i]
	}
	return name
}

// evalBuiltin parses the joined arguments of eval as a script run in the
// current shell.
func (w *walker) evalBuiltin(inv *invocation) {
	args := inv.args[1:]
	if len(args) > 0 && !args[0].dyn && args[0].val == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		w.emitInv(inv, false)
		return
	}
	script := joinFields(w, args)
	wr := Wrapper{Name: "eval", Argv: []string{"eval"}}
	if script.dyn {
		w.emitInv(inv, true, "eval of a dynamic string: "+script.val)
	}
	w.walkScript(inv.callSt, inv, wr, "eval", script, syntax.LangBash, true)
	if script.dyn {
		inv.st.makeOpaque()
	}
	if inv.callSt != inv.st {
		*inv.st = mergeState(inv.st, inv.callSt)
	}
}

// trapBuiltin parses the action of trap, which the shell runs later.
func (w *walker) trapBuiltin(inv *invocation) {
	args := inv.args[1:]
	if len(args) > 0 && !args[0].dyn && args[0].val == "--" {
		args = args[1:]
	}
	if len(args) < 2 {
		w.emitInv(inv, false)
		return
	}
	action := args[0]
	if !action.dyn && (action.val == "-" || action.val == "" || strings.HasPrefix(action.val, "-")) {
		w.emitInv(inv, false)
		return
	}
	if action.dyn {
		w.emitInv(inv, true, "trap action comes from "+action.val)
	} else {
		w.emitInv(inv, false)
	}
	wr := Wrapper{Name: "trap", Argv: []string{"trap"}}
	w.walkScript(inv.st.clone(), inv, wr, "trap", action, syntax.LangBash, true)
}

// readBuiltin assigns what read gets from a static here-string or
// here-document; otherwise its variables become unknown.
func (w *walker) readBuiltin(inv *invocation) {
	i, opts := parseOpts(inv.args, optSpec{flags: "ers", args: "adinNptu"})
	st := inv.st
	var names []string
	for _, a := range inv.args[i:] {
		if a.dyn {
			st.makeOpaque()
			return
		}
		names = append(names, a.val)
	}
	arr, isArr := optVal(opts, "-a")
	forgetAll := func() {
		if isArr {
			w.forgetInput(st, arr.val, "read")
		}
		for _, n := range names {
			w.forgetInput(st, arrayBase(n), "read")
		}
		if len(names) == 0 && !isArr {
			st.forget("REPLY")
		}
	}
	in := inv.stdin.get()
	if in == nil || in.body.dyn || in.kind == "file" || in.inherited || hasOpt(opts, "-u", "-n", "-N") {
		forgetAll()
		return
	}
	delim := "\n"
	if d, ok := optVal(opts, "-d"); ok {
		delim = d.val
		if len(delim) > 1 {
			delim = delim[:1]
		}
	}
	line := in.body.val
	if delim != "" {
		if k := strings.Index(line, delim); k >= 0 {
			line = line[:k]
		}
	}
	if !hasOpt(opts, "-r") {
		var b strings.Builder
		for k := 0; k < len(line); k++ {
			if line[k] == '\\' && k+1 < len(line) {
				k++
			}
			b.WriteByte(line[k])
		}
		line = b.String()
	}
	ifsV := inv.callSt.lookup("IFS")
	if !ifsV.known {
		forgetAll()
		return
	}
	ifs := " \t\n"
	if ifsV.set {
		ifs = ifsV.str
	}
	if isArr {
		parts := splitRead(line, ifs, -1)
		v := value{known: true, set: true, isArr: true, arr: parts}
		if len(parts) > 0 {
			v.str = parts[0]
		}
		w.assignVar(st, arr.val, v)
		return
	}
	if len(names) == 0 {
		w.assignVar(st, "REPLY", knownString(line))
		return
	}
	parts := splitRead(line, ifs, len(names))
	for k, n := range names {
		v := ""
		if k < len(parts) {
			v = parts[k]
		}
		w.assignVar(st, n, knownString(v))
	}
}

// splitRead splits a line the way read does for n names (n < 0: all
// fields): the last name gets the rest of the line.
func splitRead(line, ifs string, n int) []string {
	isIFS := func(c byte) bool { return strings.IndexByte(ifs, c) >= 0 }
	isWS := func(c byte) bool { return (c == ' ' || c == '\t' || c == '\n') && isIFS(c) }
	i := 0
	for i < len(line) && isWS(line[i]) {
		i++
	}
	var out []string
	for i < len(line) {
		if n > 0 && len(out) == n-1 {
			rest := line[i:]
			j := len(rest)
			for j > 0 && isWS(rest[j-1]) {
				j--
			}
			out = append(out, rest[:j])
			return out
		}
		j := i
		for j < len(line) && !isIFS(line[j]) {
			j++
		}
		out = append(out, line[i:j])
		i = j
		for i < len(line) && isWS(line[i]) {
			i++
		}
		if i < len(line) && isIFS(line[i]) && !isWS(line[i]) {
			i++
			for i < len(line) && isWS(line[i]) {
				i++
			}
		}
	}
	return out
}

func (w *walker) unsetBuiltin(inv *invocation) {
	st := inv.st
	funcs := false
	for _, a := range inv.args[1:] {
		if a.dyn {
			st.makeOpaque()
			continue
		}
		switch a.val {
		case "-f":
			funcs = true
			continue
		case "-v", "-n":
			continue
		}
		if funcs {
			if _, ok := st.funcs[a.val]; ok {
				delete(st.ownFuncs(), a.val)
			}
			continue
		}
		if strings.Contains(a.val, "[") {
			st.forget(arrayBase(a.val))
			continue
		}
		if validName(a.val) {
			old := st.lookup(a.val)
			st.setVar(a.val, value{known: !old.attr, exported: old.exported, attr: old.attr})
			if dynamicSpecial(a.val) {
				st.forget(a.val)
			}
		}
	}
}

func (w *walker) setBuiltin(inv *invocation) {
	st := inv.st
	args := inv.args[1:]
	for k := 0; k < len(args); k++ {
		a := args[k]
		if a.dyn {
			// It may be -a too.
			st.posKnown, st.pos, st.allexport = false, nil, true
			return
		}
		switch {
		case a.val == "--":
			st.pos, st.posKnown, st.posRefs = append([]field(nil), args[k+1:]...), true, inv.refs
			return
		case a.val == "-o" || a.val == "+o":
			k++
			if k < len(args) && args[k].val == "allexport" {
				st.allexport = a.val == "-o" || args[k].dyn
			}
		case strings.HasPrefix(a.val, "-") || strings.HasPrefix(a.val, "+"):
			if a.val == "-" {
				st.pos, st.posKnown, st.posRefs = append([]field(nil), args[k+1:]...), true, inv.refs
				return
			}
			if strings.ContainsRune(a.val[1:], 'a') {
				st.allexport = a.val[0] == '-'
			}
		default:
			st.pos, st.posKnown, st.posRefs = append([]field(nil), args[k:]...), true, inv.refs
			return
		}
	}
}

// declItem is one NAME or NAME=value given to declare and friends.
type declItem struct {
	name string
	val  *value
}

// addDeclWord sorts one expanded argument of declare: an option, a name
// or an assignment. It returns true when the word is dynamic.
func addDeclWord(f field, flags *[]string, items *[]declItem) bool {
	if f.dyn {
		return true
	}
	switch {
	case strings.HasPrefix(f.val, "-") || strings.HasPrefix(f.val, "+"):
		*flags = append(*flags, f.val)
	default:
		if n, v, ok := strings.Cut(f.val, "="); ok {
			n = strings.TrimSuffix(n, "+")
			if validName(n) {
				val := knownString(v)
				if strings.HasSuffix(strings.SplitN(f.val, "=", 2)[0], "+") {
					val = value{}
				}
				*items = append(*items, declItem{name: n, val: &val})
			} else {
				*items = append(*items, declItem{name: arrayBase(n)})
				return !validName(arrayBase(n))
			}
		} else if validName(f.val) {
			*items = append(*items, declItem{name: f.val})
		}
	}
	return false
}

// declClause walks declare, export, local, readonly, typeset and nameref.
func (w *walker) declClause(st *state, c *syntax.DeclClause) {
	assoc := false
	for _, a := range c.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			if s, ok := simpleLit(a.Value); ok && strings.HasPrefix(s, "-") && strings.Contains(s, "A") {
				assoc = true
			}
		}
	}
	for _, a := range c.Args {
		w.walkAssignAs(st, a, assoc)
	}
	variant := c.Variant.Value
	argv := []field{lit(variant)}
	var flags []string
	var items []declItem
	opaque := false
	var refs []string
	for _, a := range c.Args {
		switch {
		case a.Naked && a.Name == nil:
			mark := len(w.refBuf)
			fs := w.fields(st, []*syntax.Word{a.Value})
			fRefs := w.takeRefs(mark)
			refs = unionRefs(refs, fRefs)
			argv = append(argv, fs...)
			for _, f := range fs {
				switch {
				case !f.dyn:
					n, _, _ := strings.Cut(f.val, "=")
					if i := strings.IndexByte(n, '['); i > 0 && validName(n[:i]) || strings.ContainsAny(n, "$`") {
						w.walkSubscript(st, n)
					}
				case !strings.HasPrefix(f.tmpl, "-"):
					w.dynSubscript(st, f)
				}
				k := len(items)
				opaque = opaque || addDeclWord(f, &flags, &items)
				for _, it := range items[k:] {
					if it.val != nil {
						it.val.refs = fRefs
					}
				}
			}
		case a.Naked:
			argv = append(argv, lit(a.Name.Value))
			items = append(items, declItem{name: a.Name.Value})
		default:
			text, v, name := w.assignmentRefs(st, a)
			argv = append(argv, text)
			if name != "" {
				items = append(items, declItem{name: name, val: &v})
				refs = unionRefs(refs, v.refs)
			}
		}
	}
	w.emit(Command{Argv: w.wordsOf(argv), EnvRefs: refs})
	w.applyDecl(st, variant, flags, items, opaque)
}

// applyDecl records the effect of declare and friends.
func (w *walker) applyDecl(st *state, variant string, flags []string, items []declItem, opaque bool) {
	var minus, plus string
	for _, f := range flags {
		if strings.HasPrefix(f, "-") {
			minus += f[1:]
		} else {
			plus += f[1:]
		}
	}
	if variant == "nameref" {
		minus += "n"
	}
	if strings.ContainsAny(minus, "fF") {
		if variant == "export" || strings.Contains(minus, "x") {
			for _, it := range items {
				for _, d := range st.funcs[it.name].defs {
					d.exported = true
				}
			}
		}
		return
	}
	local := variant == "local" ||
		((variant == "declare" || variant == "typeset") && len(w.calls) > 0 && !strings.Contains(minus, "g"))
	transform := strings.ContainsAny(minus, "iluAcn")
	for _, it := range items {
		if local {
			w.saveLocal(st, it.name)
		}
		old := st.lookup(it.name)
		v := old
		switch {
		case it.val != nil:
			if old.attr || transform || dynamicSpecial(it.name) {
				v = old.unknown()
			} else {
				v = *it.val
			}
		case local:
			v = value{known: true}
		}
		if it.val != nil {
			v.refs = it.val.refs
		}
		if strings.Contains(minus, "n") && it.val != nil && it.val.known {
			// A name reference holds what the variable it names holds.
			if target := arrayBase(it.val.str); validName(target) {
				v.refs = unionRefs(v.refs, st.envRefs(target, nil))
			}
		}
		if transform {
			v = value{exported: v.exported, attr: true, integer: v.integer, assoc: v.assoc,
				numeric: it.val == nil && v.numeric, refs: v.refs}
		}
		if strings.Contains(minus, "A") {
			v.assoc = true
		}
		switch {
		case strings.Contains(minus, "i"):
			v.integer = true
		case strings.Contains(plus, "i"):
			v.integer = false
		default:
			v.integer = v.integer || old.integer
		}
		v.exported = old.exported || variant == "export" || strings.Contains(minus, "x")
		if strings.Contains(plus, "x") {
			v.exported = false
		}
		v.attr = v.attr || old.attr
		v.assoc = v.assoc || old.assoc
		if v.integer && it.val != nil {
			// declare -i y=VALUE evaluates VALUE as arithmetic, where an
			// array subscript runs its substitutions; y then holds an
			// integer.
			v.numeric = true
		}
		st.setVar(it.name, v)
		if v.integer && it.val != nil {
			w.walkArithValue(st, it.name, *it.val)
		}
	}
	if strings.Contains(minus, "n") {
		// A reference to an array element evaluates its subscript each
		// time it is used: declare -n r='a[$(cmd)]' runs cmd.
		for _, it := range items {
			if it.val != nil && it.val.known && strings.ContainsAny(it.val.str, "$`") {
				w.walkSubscript(st, it.val.str)
			}
			if it.val != nil && it.val.known && validName(it.val.str) {
				// What is assigned through the reference is assigned to
				// its target: an exported one (PATH) is then passed to
				// later programs with a value not known here, which may
				// still be the environment's.
				target := it.val.str
				v := st.lookup(target).unknown()
				if !st.assignedHere(target) {
					v.refs = unionRefs(v.refs, []string{target})
				}
				st.setVar(target, v)
			}
		}
		st.namerefs = true
	}
	if opaque {
		st.makeOpaque()
	}
}

// saveLocal remembers the value a variable had before a function made it
// local, so that it can be restored when the call returns.
func (w *walker) saveLocal(st *state, name string) {
	if len(w.locals) == 0 {
		return
	}
	frame := w.locals[len(w.locals)-1]
	if frame == nil {
		frame = make(map[string]value)
		w.locals[len(w.locals)-1] = frame
	}
	if _, ok := frame[name]; !ok {
		frame[name] = st.lookup(name)
	}
}

// mayModify reports whether walking node could change the state: it
// decides whether a loop needs the rounds that find its steady state.
func (w *walker) mayModify(st *state, node syntax.Node) bool {
	found := false
	syntax.Walk(node, func(n syntax.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *syntax.Assign, *syntax.DeclClause, *syntax.FuncDecl, *syntax.LetClause, *syntax.WordIter:
			found = true
		case *syntax.BinaryArithm:
			found = isArithAssign(n.Op)
		case *syntax.UnaryArithm:
			found = n.Op == syntax.Inc || n.Op == syntax.Dec
		case *syntax.ParamExp:
			found = n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull)
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				break
			}
			name, ok := simpleLit(n.Args[0])
			if !ok {
				found = true
				break
			}
			switch name {
			case "read", "mapfile", "readarray", "printf", "getopts", "unset", "set",
				"shift", "export", "declare", "typeset", "local", "readonly", "alias",
				"unalias", "eval", "source", ".", "builtin", "command", "trap", "let":
				found = true
			}
			if _, ok := st.funcs[name]; ok {
				found = true
			}
			if _, ok := st.aliases[name]; ok {
				found = true
			}
		}
		return !found
	})
	return found
}

// shQuote quotes s for the shell.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// varNames returns the words of a builtin that name variables it sets or
// tests: read's names, printf -v's and mapfile's target, getopts' name,
// unset's and declare's names, test -v's operand.
func varNames(inv *invocation, name string) []field {
	args := inv.args
	var out []field
	switch name {
	case "read":
		i, opts := parseOpts(args, optSpec{flags: "ers", args: "adinNptu"})
		if o, ok := optVal(opts, "-a"); ok {
			out = append(out, findArg(args, o.val))
		}
		out = append(out, args[min(i, len(args)):]...)
	case "printf":
		if len(args) > 2 && !args[1].dyn && args[1].val == "-v" {
			out = append(out, args[2])
		}
	case "mapfile", "readarray":
		if i, _ := parseOpts(args, optSpec{flags: "t", args: "dnOscCu"}); i < len(args) {
			out = append(out, args[len(args)-1])
		}
	case "getopts":
		if len(args) > 2 {
			out = append(out, args[2])
		}
	case "test", "[":
		for k := 1; k+1 < len(args); k++ {
			if !args[k].dyn && args[k].val == "-v" {
				out = append(out, args[k+1])
			}
		}
	default: // unset, export, declare, typeset, local, readonly
		for _, a := range args[1:] {
			if a.dyn && strings.HasPrefix(a.tmpl, "-") || !a.dyn && strings.HasPrefix(a.val, "-") {
				continue
			}
			out = append(out, a)
		}
	}
	return out
}

// sourceKnown applies `source FILE` for a FILE Env.Sourced knows: the
// command runs the file, with no note, and sets and exports what Sourced
// says it sets, "$PATH" in a value standing for PATH before it. It
// reports false, doing nothing, when FILE is not such a file: a name not
// known statically, a relative name after a cd, or one Sourced does not
// know.
func (w *walker) sourceKnown(inv *invocation, file string) bool {
	if w.env.Sourced == nil || len(inv.args) != 2 || inv.args[1].dyn || file == "" ||
		!strings.HasPrefix(file, "/") && w.cdSeen {
		return false
	}
	vars, ok := w.env.Sourced(file)
	if !ok {
		return false
	}
	w.emitInv(inv, false)
	names := make([]string, 0, len(vars))
	for n := range vars {
		if validName(n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	path := inv.st.lookup("PATH")
	for _, n := range names {
		v := vars[n]
		if strings.Contains(v, "$PATH") {
			if !path.known || path.isArr {
				inv.st.assign(n, value{exported: true})
				continue
			}
			v = strings.ReplaceAll(v, "$PATH", path.str)
		}
		inv.st.assign(n, value{known: true, set: true, str: v, exported: true})
	}
	return true
}
