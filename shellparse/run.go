package shellparse

import (
	"path"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// invocation is one simple command being resolved: wrappers are peeled
// from args until the real program remains.
type invocation struct {
	st     *state // the shell's state
	callSt *state // st plus the command's own NAME=value prefixes
	args   []field
	// assigns are the NAME=value words of the command (and of env, sudo).
	assigns []string
	redirs  []Redirect
	stdin   *stdinBody
	wraps   []Wrapper
	notes   []string
	// runTimeArgs and runTimeNames are Command.RunTimeArgs and
	// Command.RunTimeNames.
	runTimeArgs  string
	runTimeNames []string
	shell        bool // builtins and functions of the shell apply
	// allexport: the shell runs its script with -a (sh -ac '…').
	allexport bool
	noFunc    bool // after `command` or `builtin`: functions are skipped
	// refs are the inherited variables whose values flow into args and
	// redirs (Command.EnvRefs).
	refs []string
	// pipeOut: its standard output goes into a pipe (Command.StdoutPiped).
	pipeOut bool
}

// peel records args[:n] as a wrapper and continues with args[n:].
func (inv *invocation) peel(name string, n int) {
	inv.wraps = append(slices.Clip(inv.wraps), Wrapper{Name: name, Argv: fieldValues(inv.args[:n])})
	inv.args = inv.args[n:]
	inv.shell = false
}

// sub starts an invocation for a command run by this one (find -exec).
func (inv *invocation) sub(args []field, wr Wrapper) *invocation {
	return &invocation{
		st:     inv.st,
		callSt: inv.callSt,
		args:   args,
		wraps:  append(slices.Clone(inv.wraps), wr),
		refs:   inv.refs,
		// The command it runs writes where it writes (find -exec, xargs).
		pipeOut: inv.pipeOut,
	}
}

// call walks a simple command.
func (w *walker) call(st *state, c *syntax.CallExpr, rs []*syntax.Redirect) {
	pipeIn := w.pipeIn
	w.pipeIn = nil
	if len(c.Args) > 0 && w.tryAlias(st, c, rs) {
		return
	}
	for _, a := range c.Args {
		w.walkWord(st, a)
	}
	for _, r := range rs {
		w.walkRedirect(st, r)
	}
	for _, a := range c.Assigns {
		w.walkAssign(st, a)
	}
	mark := len(w.refBuf)
	args := w.fields(st, c.Args)
	redirs, stdin := w.evalRedirects(st, rs)
	refs := w.takeRefs(mark)
	if stdin == nil {
		stdin = pipeIn
	}
	if stdin == nil && w.inStdin != nil {
		in := *w.inStdin
		in.inherited = true
		stdin = &in
	}
	var assigns []string
	callSt := st
	if len(c.Assigns) > 0 {
		if len(args) > 0 {
			callSt = st.clone()
		}
		for _, a := range c.Assigns {
			integer := a.Name != nil && callSt.lookup(a.Name.Value).integer
			if integer {
				w.walkIntAssign(callSt, a)
			}
			text, v, name := w.assignmentRefs(callSt, a)
			assigns = append(assigns, text.val)
			if name == "" {
				continue
			}
			if len(args) > 0 {
				v.exported = true
			}
			callSt.assign(name, v)
		}
	}
	if len(args) == 0 {
		if len(redirs) > 0 {
			w.emit(Command{Assigns: assigns, Redirects: redirs, Notes: []string{"redirection without a command"}, EnvRefs: refs})
		}
		return
	}
	w.run(&invocation{st: st, callSt: callSt, args: args, assigns: assigns, redirs: redirs, stdin: stdin, shell: true, refs: refs, pipeOut: w.pipeOut})
}

// assignment evaluates NAME=value; it returns the text of the word, the
// value, and the variable name ("" when nothing known is assigned).
func (w *walker) assignment(st *state, a *syntax.Assign) (field, value, string) {
	if a.Name == nil {
		f := w.literal(st, a.Value, false)
		return f, value{}, ""
	}
	name := a.Name.Value
	prefix := name
	old := st.lookup(name)
	if a.Index != nil {
		n, ok := w.arith(st, a.Index, 0)
		val := w.literal(st, a.Value, true)
		if !ok || val.dyn || !old.known || (!old.isArr && old.set) || n < 0 || n > 1<<16 {
			src := w.source(a)
			return field{val: src, dyn: true, tmpl: w.marker(src)}, old.unknown(), name
		}
		text := name + "[" + strconv.FormatInt(n, 10) + "]=" + val.val
		if a.Append {
			text = name + "[" + strconv.FormatInt(n, 10) + "]+=" + val.val
		}
		arr := slices.Clone(old.arr)
		for int64(len(arr)) <= n {
			arr = append(arr, "")
		}
		if a.Append {
			arr[n] += val.val
		} else {
			arr[n] = val.val
		}
		nv := value{known: true, set: true, isArr: true, arr: arr, str: arr[0], exported: old.exported}
		return lit(text), nv, name
	}
	op := "="
	if a.Append {
		op = "+="
	}
	if a.Array != nil {
		var elems []field
		sparse := false
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				sparse = true
			}
			if e.Value != nil {
				elems = append(elems, w.fields(st, []*syntax.Word{e.Value})...)
			}
		}
		dyn := sparse
		for _, e := range elems {
			dyn = dyn || e.dyn
		}
		if dyn {
			src := w.source(a)
			return field{val: src, dyn: true, tmpl: w.marker(src)}, old.unknown(), name
		}
		vals := fieldValues(elems)
		text := lit(prefix + op + "(" + strings.Join(vals, " ") + ")")
		if a.Append {
			if !old.known {
				return text, old.unknown(), name
			}
			base := old.arr
			if !old.isArr && old.set {
				base = []string{old.str}
			}
			vals = append(slices.Clone(base), vals...)
		}
		v := value{known: true, set: true, isArr: true, arr: vals}
		if len(vals) > 0 {
			v.str = vals[0]
		}
		return text, v, name
	}
	f := w.literal(st, a.Value, true)
	text := field{val: prefix + op + f.val, dyn: f.dyn, tmpl: prefix + op + f.tmpl}
	if !f.dyn {
		text = lit(text.val)
	}
	if f.dyn {
		if pat, ok := w.globValue(st, a.Value); ok && !a.Append && !old.isArr {
			// x=$f, where $f is one of the names a glob matches: so is x.
			v := old.unknown()
			v.glob, v.str = true, pat
			return text, v, name
		}
		v := old.unknown()
		// x=$((…)) or x=$(wc -l <f) holds an integer; appended to one,
		// it still does.
		v.numeric = f.num && intText(numericTemplate(f.tmpl)) && (!a.Append || numericValue(old))
		return text, v, name
	}
	if a.Append {
		if !old.known {
			return text, old.unknown(), name
		}
		if old.isArr {
			arr := slices.Clone(old.arr)
			if len(arr) == 0 {
				arr = []string{""}
			}
			arr[0] += f.val
			return text, value{known: true, set: true, isArr: true, arr: arr, str: arr[0]}, name
		}
		return text, knownString(old.str + f.val), name
	}
	if old.known && old.isArr {
		arr := slices.Clone(old.arr)
		if len(arr) == 0 {
			arr = []string{""}
		}
		arr[0] = f.val
		return text, value{known: true, set: true, isArr: true, arr: arr, str: arr[0]}, name
	}
	return text, knownString(f.val), name
}

// tryAlias expands an alias defined earlier in the script.
func (w *walker) tryAlias(st *state, c *syntax.CallExpr, rs []*syntax.Redirect) bool {
	name, ok := simpleLit(c.Args[0])
	if !ok || len(st.aliases) == 0 {
		return false
	}
	as, ok := st.aliases[name]
	if !ok || slices.Contains(w.aliasing, name) {
		return false
	}
	w.aliasing = append(w.aliasing, name)
	defer func() { w.aliasing = w.aliasing[:len(w.aliasing)-1] }()
	w.enter()
	defer w.leave()
	n := w.pushCtx("alias " + name)

	// The alias is replaced as text, as the shell does: the rest of the
	// command follows the alias value, so a value ending in ';' or '&'
	// makes the rest a command of its own.
	var rest strings.Builder
	for _, a := range c.Args[1:] {
		rest.WriteByte(' ')
		rest.WriteString(w.sourceStrict(a))
	}
	var prefix strings.Builder
	for _, a := range c.Assigns {
		prefix.WriteString(w.sourceStrict(a))
		prefix.WriteByte(' ')
	}
	var outs []*state
	for _, val := range as.vals {
		sub := st
		if len(as.vals) > 1 || as.none {
			sub = st.clone()
		}
		f, err := parseSource(prefix.String()+val+rest.String(), syntax.LangBash)
		if err != nil {
			pe := err.(*ParseError)
			pe.Msg = "alias " + name + ": " + pe.Msg
			w.fail(pe)
		}
		stmts := f.Stmts
		switch {
		case len(stmts) == 0:
			if len(rs) > 0 {
				w.call(sub, &syntax.CallExpr{}, rs)
			}
		default:
			w.stmts(sub, stmts[:len(stmts)-1])
			last := *stmts[len(stmts)-1]
			last.Redirs = append(slices.Clone(last.Redirs), rs...)
			w.stmt(sub, &last)
		}
		outs = append(outs, sub)
	}
	w.popCtx(n)
	if as.none {
		// On some paths the alias is not defined: the word is a command.
		sub := st.clone()
		w.aliasing = append(w.aliasing, name)
		w.call(sub, c, rs)
		w.aliasing = w.aliasing[:len(w.aliasing)-1]
		outs = append(outs, sub)
	}
	if len(outs) > 1 || outs[0] != st {
		*st = mergeState(outs...)
	}
	return true
}

// run resolves an invocation: peels wrappers, expands functions, applies
// builtins, and emits what remains.
func (w *walker) run(inv *invocation) {
	depth := w.depth
	defer func() { w.depth = depth }()
	for {
		w.tick()
		w.enter()
		if len(inv.args) == 0 {
			w.emitInv(inv, false)
			return
		}
		if inv.args[0].dyn {
			w.runDynamic(inv)
			return
		}
		if !w.step(inv) {
			return
		}
	}
}

// emitInv emits the invocation as it stands.
func (w *walker) emitInv(inv *invocation, dynamic bool, notes ...string) {
	c := Command{
		Argv:         w.wordsOf(inv.args),
		Assigns:      withExported(inv.assigns, inv.callSt),
		Redirects:    inv.redirs,
		Wrappers:     slices.Clone(inv.wraps),
		Dynamic:      dynamic,
		EnvRefs:      inv.refs,
		RunTimeArgs:  inv.runTimeArgs,
		RunTimeNames: inv.runTimeNames,
		Stdin:        inv.stdin.source(),
		StdoutPiped:  inv.pipeOut,
	}
	if dotGlobs(inv) {
		notes = append(slices.Clip(notes), "GLOBIGNORE or a shell option set here may let a glob match dot files (.env, .ssh)")
	}
	if len(inv.notes)+len(notes) > 0 {
		c.Notes = append(slices.Clone(inv.notes), notes...)
	}
	w.emit(c)
	if w.envCarry == 0 && len(c.Assigns) > 0 && !quietBuiltin(inv) {
		w.runEnvCommands(inv, c.Assigns)
	}
}

// dotGlobs reports an invocation with a glob among its words or redirect
// targets, run where the script may have made globs match names that
// start with a dot: a GLOBIGNORE it set (bash then matches dot files, as
// with dotglob), or BASHOPTS or -O given to the shell running it. A glob
// such as "*" or "?env" then reaches .env and .ssh, which the guard, like
// the shell by default, takes it not to.
func dotGlobs(inv *invocation) bool {
	glob := false
	for _, a := range inv.args {
		if a.glob {
			glob = true
			break
		}
	}
	for _, r := range inv.redirs {
		if glob {
			break
		}
		glob = r.Target.Dynamic && strings.ContainsAny(r.Target.Value, "*?[")
	}
	if !glob {
		return false
	}
	st := inv.st
	if st.assignedHere("BASHOPTS") {
		return true
	}
	if !st.assignedHere("GLOBIGNORE") {
		return false
	}
	// An unset or empty GLOBIGNORE leaves globbing as it was.
	v := st.lookup("GLOBIGNORE")
	return !v.known || v.set && v.str != ""
}

// quietBuiltin reports a shell builtin that starts no program, so runs
// nothing its environment names.
func quietBuiltin(inv *invocation) bool {
	if !inv.shell || len(inv.args) == 0 || inv.args[0].dyn {
		return false
	}
	switch inv.args[0].val {
	case "set", "export", "declare", "typeset", "local", "readonly", "unset", "cd", "pushd", "popd",
		"shift", "true", "false", ":", "echo", "printf", "read", "test", "[", "alias", "unalias",
		"exit", "return", "wait", "umask", "shopt", "break", "continue":
		return true
	}
	return false
}

// envCommand reports the environment variables whose value programs run as a
// shell command line or a program: pagers, editors, git's and rsync's
// transports, askpass helpers, browsers.
func envCommand(name string) bool {
	switch name {
	case "PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "BAT_PAGER", "DELTA_PAGER", "ACK_PAGER",
		"LESSOPEN", "LESSCLOSE", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "SUDO_EDITOR",
		"FCEDIT", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS",
		"SUDO_ASKPASS", "BROWSER", "PROMPT_COMMAND", "RSYNC_RSH", "CVS_RSH":
		return true
	}
	return false
}

// runEnvCommands walks the commands the program's environment holds
// (GIT_PAGER='...' git log, export PAGER=...): the program may run them.
func (w *walker) runEnvCommands(inv *invocation, assigns []string) {
	w.envCarry++
	defer func() { w.envCarry-- }()
	for _, a := range assigns {
		name, val, ok := strings.Cut(a, "=")
		if !ok || !envCommand(name) {
			continue
		}
		// less runs LESSOPEN="|cmd %s" and "||cmd %s" through a shell.
		if name == "LESSOPEN" || name == "LESSCLOSE" {
			val = strings.TrimLeft(val, "|")
		}
		val = strings.TrimSpace(val)
		if val == "" {
			continue
		}
		wr := Wrapper{Name: name + "=", Argv: fieldValues(inv.args)}
		sub := &invocation{st: inv.st, callSt: inv.st, args: []field{lit("sh"), lit("-c"), lit(val)}, wraps: append(slices.Clone(inv.wraps), wr), pipeOut: inv.pipeOut}
		n := w.pushCtx(name + "=")
		w.run(sub)
		w.popCtx(n)
	}
}

// withExported adds to a command's own NAME=value words the variables the
// script exported to it (export PAGER=..., BASH_ENV=... bash -c ...): they
// are part of what the program runs with.
func withExported(own []string, st *state) []string {
	if st == nil {
		return own
	}
	env := st.exportedEnv()
	if len(env) == 0 {
		return own
	}
	out := slices.Clip(own)
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		dup := false
		for _, a := range own {
			if n, _, _ := strings.Cut(a, "="); strings.TrimSuffix(n, "+") == name {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, e)
		}
	}
	return out
}

// runDynamic handles a command whose name is only known at run time.
func (w *walker) runDynamic(inv *invocation) {
	a0 := inv.args[0]
	w.emitInv(inv, true, "command name comes from "+a0.val)
	// `$SHELL -c 'script'`: the script is parsed too.
	if len(inv.args) >= 3 && !inv.args[1].dyn && inv.args[1].val == "-c" {
		wr := Wrapper{Name: a0.val + " -c", Argv: fieldValues(inv.args[:2])}
		var arg0 field
		params := []field(nil)
		if len(inv.args) > 3 {
			arg0, params = inv.args[3], inv.args[4:]
		}
		w.shellScript(inv, wr, wr.Name, inv.args[2], arg0, len(inv.args) > 3, params, syntax.LangBash, false)
	}
	if inv.shell {
		// It may be a builtin that changes anything (eval, read, source).
		inv.st.makeOpaque()
	}
}

// step handles the program in inv.args[0]; it returns true when it peeled
// a wrapper and the new first word must be handled in turn.
func (w *walker) step(inv *invocation) bool {
	a0 := inv.args[0].val
	if a0 == "" {
		w.emitInv(inv, false, "empty command name")
		return false
	}
	if inv.shell && !inv.noFunc {
		if fs, ok := inv.st.funcs[a0]; ok && len(fs.defs) > 0 {
			w.callFunc(inv, fs)
			return false
		}
	}
	if inv.shell && w.builtin(inv, a0) {
		return false
	}
	name := path.Base(a0)
	switch name {
	case "sudo":
		return w.peelSudo(inv)
	case "doas":
		return w.peelDoas(inv)
	case "pkexec":
		return w.peelPkexec(inv)
	case "env":
		return w.peelEnv(inv)
	case "nice":
		return w.peelSimple(inv, name, niceSpec, 0)
	case "ionice":
		return w.peelIonice(inv)
	case "timeout":
		return w.peelSimple(inv, name, timeoutSpec, 1)
	case "nohup", "setsid", "stdbuf", "time", "chroot", "taskset", "strace", "ltrace", "chrt", "setpriv":
		return w.peelOther(inv, name)
	case "command":
		return w.peelCommand(inv)
	case "builtin":
		if len(inv.args) < 2 {
			break
		}
		shell := inv.shell
		inv.peel(name, 1)
		inv.shell, inv.noFunc = shell, true
		return true
	case "exec":
		return w.peelExec(inv)
	case "xargs":
		return w.peelXargs(inv)
	case "find":
		w.runFind(inv)
		return false
	case "sed", "gsed":
		w.runSed(inv)
		return false
	case "tar", "gtar", "bsdtar":
		w.runTar(inv)
		return false
	case "ssh", "scp", "sftp":
		w.runSSH(inv, name)
		return false
	case "rsync":
		w.runRsync(inv)
		return false
	case "tmux":
		w.runTmux(inv)
		return false
	case "screen":
		w.runScreen(inv)
		return false
	case "man", "less", "more", "zless", "ack", "ag", "bat", "batcat":
		w.runPagerTool(inv, name)
		return false
	case "fd", "fdfind":
		w.runFd(inv)
		return false
	case "rg":
		w.runProgramOption(inv, "--pre", "--hostname-bin")
		return false
	case "sdiff", "diff3":
		w.runProgramOption(inv, "--diff-program")
		return false
	case "sort":
		w.runProgramOption(inv, "--compress-program")
		return false
	case "git":
		w.runGit(inv)
		return false
	case "awk", "gawk", "mawk", "nawk":
		w.runAwk(inv)
		return false
	case "at", "batch":
		w.runAt(inv)
		return false
	case "parallel":
		w.runParallel(inv)
		return false
	case "mnemos":
		return w.peelMnemos(inv)
	case "flock":
		return w.peelFlock(inv)
	case "watch":
		return w.peelWatch(inv)
	case "nsenter", "unshare":
		return w.peelNamespace(inv, name)
	case "su", "runuser":
		return w.peelSu(inv, name)
	case "sg":
		return w.peelSg(inv)
	case "script":
		return w.peelScript(inv)
	case "busybox", "toybox":
		if len(inv.args) >= 2 && !inv.args[1].dyn && !strings.HasPrefix(inv.args[1].val, "-") {
			inv.peel(name, 1)
			return true
		}
	case "sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "rbash", "ksh93", "lksh",
		"pdksh", "oksh", "yash", "posh", "bosh", "fish":
		w.runShell(inv, name)
		return false
	}
	w.emitInv(inv, false)
	return false
}

// callFunc expands a call of a function defined in the script.
func (w *walker) callFunc(inv *invocation, fs funcSet) {
	name := inv.args[0].val
	if slices.Contains(w.calls, name) {
		w.emitInv(inv, false, "recursive call of function "+name+" is not expanded")
		return
	}
	if fs.none {
		// Defined on some paths only: it may also be a program.
		w.emitInv(inv, false)
	}
	savedW, savedR, savedRefs := w.wraps, w.redirs, w.redirRefs
	if len(inv.wraps) > 0 {
		w.wraps = append(slices.Clone(w.wraps), inv.wraps...)
	}
	if len(inv.redirs) > 0 {
		w.redirs = append(slices.Clone(w.redirs), inv.redirs...)
		w.redirRefs = unionRefs(w.redirRefs, inv.refs)
	}
	n := w.pushCtx("function " + name)
	w.calls = append(w.calls, name)
	w.enter()
	var outs []*state
	for _, def := range fs.defs {
		if w.dry == 0 {
			if w.called == nil {
				w.called = make(map[*funcDef]bool)
			}
			w.called[def] = true
		}
		sub := inv.callSt
		if len(fs.defs) > 1 || sub == inv.st {
			sub = sub.clone()
		}
		savedPos, savedKnown, savedPosRefs := sub.pos, sub.posKnown, sub.posRefs
		sub.pos, sub.posKnown, sub.posRefs = slices.Clone(inv.args[1:]), true, inv.refs
		w.locals = append(w.locals, nil)
		w.stmt(sub, def.body)
		frame := w.locals[len(w.locals)-1]
		w.locals = w.locals[:len(w.locals)-1]
		for k, old := range frame {
			// A local variable goes back to its value from before the
			// call, unless the local declaration did not happen.
			if cur := sub.lookup(k); !cur.equal(old) {
				sub.setVar(k, old.unknown())
			} else {
				sub.setVar(k, old)
			}
		}
		sub.pos, sub.posKnown, sub.posRefs = savedPos, savedKnown, savedPosRefs
		outs = append(outs, sub)
	}
	w.leave()
	w.calls = w.calls[:len(w.calls)-1]
	w.popCtx(n)
	w.wraps, w.redirs, w.redirRefs = savedW, savedR, savedRefs
	if fs.none {
		outs = append(outs, inv.st.clone())
	}
	if inv.callSt != inv.st {
		outs = append(outs, inv.st.clone())
	}
	*inv.st = mergeState(outs...)
}

// shellScript parses and walks the script given to a shell (-c, eval,
// su -c, here-documents fed to a shell, ...).
//
// A dynamic script makes the command dynamic; its static parts are still
// parsed, with the run-time parts standing as dynamic words. When strict,
// a script that does not parse fails the whole request.
func (w *walker) shellScript(inv *invocation, wr Wrapper, ctx string, script field,
	arg0 field, arg0Set bool, params []field, lang syntax.LangVariant, strict bool) {
	st := inv.callSt.child()
	st.allexport = inv.allexport
	st.pos, st.posKnown, st.posRefs = params, true, inv.refs
	st.arg0, st.arg0Known = arg0, arg0Set
	if !arg0Set && len(wr.Argv) > 0 {
		st.arg0, st.arg0Known = lit(wr.Argv[0]), true
	}
	w.walkScript(st, inv, wr, ctx, script, lang, strict)
}

// walkScript walks script text in st.
func (w *walker) walkScript(st *state, inv *invocation, wr Wrapper, ctx string, script field,
	lang syntax.LangVariant, strict bool) {
	if script.dyn {
		if script.tmpl == "" {
			return
		}
		start := len(w.out)
		err := w.try(func() {
			f, err := parseSource(script.tmpl, lang)
			if err != nil {
				w.fail(err)
			}
			w.walkStmts(st, inv, wr, ctx, f.Stmts)
		})
		if err == nil {
			w.fixMarkers(w.out[start:])
		}
		return
	}
	f, err := parseSource(script.val, lang)
	if err == nil {
		w.presize(script.val)
	}
	if err != nil {
		if !strict {
			w.emitInv(inv, true, ctx+" script does not parse: "+err.Error())
			return
		}
		pe := err.(*ParseError)
		pe.Msg = ctx + ": " + pe.Msg
		w.fail(pe)
	}
	w.walkStmts(st, inv, wr, ctx, f.Stmts)
}

func (w *walker) walkStmts(st *state, inv *invocation, wr Wrapper, ctx string, stmts []*syntax.Stmt) {
	savedW, savedR, savedRefs := w.wraps, w.redirs, w.redirRefs
	w.wraps = append(append(slices.Clone(w.wraps), inv.wraps...), wr)
	if len(inv.redirs) > 0 {
		w.redirs = append(slices.Clone(w.redirs), inv.redirs...)
		w.redirRefs = unionRefs(w.redirRefs, inv.refs)
	}
	n := w.pushCtx(ctx)
	w.enter()
	w.stmts(st, stmts)
	w.leave()
	w.popCtx(n)
	w.wraps, w.redirs, w.redirRefs = savedW, savedR, savedRefs
}

// isStdinPath reports the file names that are the process's standard
// input.
func isStdinPath(p string) bool {
	switch p {
	case "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0":
		return true
	}
	return false
}

// runShell handles sh, bash and the other shells.
func (w *walker) runShell(inv *invocation, name string) {
	args := inv.args
	cmdMode, stdinMode, shopts, allexport := false, false, false, false
	i := 1
scan:
	for i < len(args) {
		a := args[i]
		if a.dyn {
			break
		}
		s := a.val
		switch {
		case s == "--" || s == "-":
			i++
			break scan
		case len(s) < 2 || (s[0] != '-' && s[0] != '+'):
			break scan
		case strings.HasPrefix(s, "--"):
			i++
			if s == "--rcfile" || s == "--init-file" {
				i++
			}
			continue
		}
		i++
		for _, c := range s[1:] {
			switch c {
			case 'c':
				cmdMode = cmdMode || s[0] == '-'
			case 's':
				stdinMode = true
			case 'a':
				// -a (allexport): every variable the script sets is
				// exported to the commands it runs.
				allexport = allexport || s[0] == '-'
			case 'o':
				if i < len(args) && (args[i].dyn || args[i].val == "allexport") {
					allexport = allexport || s[0] == '-'
				}
				i++
			case 'O':
				// -O and +O set shopt options (dotglob, nocaseglob,
				// extglob) for the script.
				i++
				shopts = true
			}
		}
	}
	if i > len(args) {
		i = len(args)
	}
	operands := args[i:]
	if shopts {
		// The shell reports its shopt options in BASHOPTS: record that
		// they are not the defaults any more.
		cs := inv.callSt.clone()
		cs.assign("BASHOPTS", value{exported: true})
		inv.callSt = cs
	}
	inv.stdin = inv.stdin.get()
	lang := langFor(name)
	strict := name != "fish"
	if cmdMode {
		if len(operands) == 0 {
			w.emitInv(inv, false, name+" -c without a command string")
			return
		}
		var arg0 field
		arg0Set := len(operands) > 1
		if arg0Set {
			arg0 = operands[1]
		}
		var params []field
		if len(operands) > 2 {
			params = operands[2:]
		}
		wr := Wrapper{Name: name + " -c", Argv: fieldValues(args[:i])}
		if operands[0].dyn {
			w.emitInv(inv, true, "shell script comes from "+operands[0].val)
		}
		inv.allexport = allexport
		w.shellScript(inv, wr, name+" -c", operands[0], arg0, arg0Set, params, lang, strict)
		return
	}
	if !stdinMode && len(operands) > 0 && !operands[0].dyn && isStdinPath(operands[0].val) {
		// bash /dev/stdin: the script is standard input.
		stdinMode, operands = true, operands[1:]
	}
	if !stdinMode && len(operands) > 0 {
		w.emitInv(inv, false, "shell runs commands from file "+operands[0].val+", which is not followed")
		return
	}
	if inv.stdin == nil {
		w.emitInv(inv, false, "shell reads commands from stdin")
		return
	}
	if inv.stdin.kind == "file" {
		w.emitInv(inv, false, "shell reads commands from file "+inv.stdin.body.val+", which is not followed")
		return
	}
	note := "shell reads commands from stdin; the " + inv.stdin.kind + " is parsed"
	if inv.stdin.body.dyn {
		note = "shell reads commands from a dynamic " + inv.stdin.kind
	}
	w.emitInv(inv, inv.stdin.body.dyn, note)
	wr := Wrapper{Name: name, Argv: fieldValues(args[:i])}
	w.shellScript(inv, wr, inv.stdin.kind, inv.stdin.body, field{}, false, operands, lang, strict)
}
