package shellparse

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Ordinary tools that run commands given in their options: the tool is
// emitted as it stands, and each command it would run is walked as the
// script or program it is, with the tool as its wrapper. The tool stays a
// command of its own, so whatever it does besides is judged too.

// maxCarried bounds the commands one tool invocation may carry.
const maxCarried = 16

// carried is one command a tool runs: a shell script (sh -c) or an argv.
type carried struct {
	via    string  // the option that carries it, for the wrapper name
	script *field  // run with sh -c
	argv   []field // run as a program
	note   string  // why its arguments are not all known
}

// runCarriers emits the tool and walks what it carries.
func (w *walker) runCarriers(inv *invocation, cs []carried, notes ...string) {
	if len(cs) > maxCarried {
		// The rest is not followed: the tool itself says so.
		notes = append(notes, path0(inv.args[0].val)+" runs more commands than are followed")
		cs = cs[:maxCarried]
	}
	w.emitInv(inv, false, notes...)
	for _, c := range cs {
		name := path0(inv.args[0].val)
		if c.via != "" {
			name += " " + c.via
		}
		wr := Wrapper{Name: name, Argv: fieldValues(inv.args)}
		var sub *invocation
		if c.script != nil {
			sub = inv.sub([]field{lit("sh"), lit("-c"), *c.script}, wr)
		} else {
			sub = inv.sub(c.argv, wr)
		}
		if c.note != "" {
			sub.notes = []string{c.note}
		}
		n := w.pushCtx(name)
		w.run(sub)
		w.popCtx(n)
	}
}

// path0 is the base name of a program word.
func path0(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 && i+1 < len(s) {
		return s[i+1:]
	}
	return s
}

// scriptOf returns a field standing for text s taken from field f (a part
// of f's value): dynamic when f is.
func (w *walker) scriptOf(f field, s string) *field {
	if !f.dyn {
		v := lit(s)
		return &v
	}
	v := field{val: s, dyn: true, tmpl: w.marker(s)}
	return &v
}

// optionArg returns the value of a long option written --name=VALUE or
// --name VALUE (next word), or a short one written -xVALUE or -x VALUE.
// It returns the index of the last word used.
func optionArg(args []field, i int, long, short string) (field, int, bool) {
	a := args[i]
	if a.dyn {
		return field{}, i, false
	}
	s := a.val
	if long != "" {
		if v, ok := strings.CutPrefix(s, long+"="); ok {
			return field{val: v, dyn: a.dyn, tmpl: v}, i, true
		}
		if s == long && i+1 < len(args) {
			return args[i+1], i + 1, true
		}
	}
	if short != "" && strings.HasPrefix(s, short) {
		if len(s) > len(short) {
			v := s[len(short):]
			return field{val: v, tmpl: v}, i, true
		}
		if i+1 < len(args) {
			return args[i+1], i + 1, true
		}
	}
	return field{}, i, false
}

// runTar handles tar's options that run commands.
func (w *walker) runTar(inv *invocation) {
	var cs []carried
	args := inv.args
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			continue
		}
		for _, o := range []struct{ long, short, via string }{
			{"--checkpoint-action", "", "--checkpoint-action"},
			{"--to-command", "", "--to-command"},
			{"--use-compress-program", "-I", "--use-compress-program"},
			{"--rsh-command", "", "--rsh-command"},
			{"--info-script", "-F", "--info-script"},
			{"--new-volume-script", "", "--new-volume-script"},
		} {
			if o.short == "" && !strings.HasPrefix(a.val, o.long) {
				continue
			}
			v, j, ok := optionArg(args, i, o.long, o.short)
			if !ok {
				continue
			}
			i = j
			if o.via == "--checkpoint-action" {
				cmd, ok := strings.CutPrefix(v.val, "exec=")
				if !ok {
					break
				}
				v = field{val: cmd, dyn: v.dyn, tmpl: strings.TrimPrefix(v.tmpl, "exec=")}
			}
			cs = append(cs, carried{via: o.via, script: w.scriptOf(v, v.val)})
			break
		}
	}
	if len(cs) == 0 {
		w.emitInv(inv, false)
		return
	}
	w.runCarriers(inv, cs)
}

// runPagerTool handles man's pager and browser options and less's
// commands given with +: both are run by a shell.
func (w *walker) runPagerTool(inv *invocation, name string) {
	var cs []carried
	var notes []string
	args := inv.args
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			continue
		}
		s := a.val
		switch name {
		case "man":
			if s == "--" {
				i = len(args)
				continue
			}
			if s == "-P" || s == "--pager" || strings.HasPrefix(s, "--pager=") || strings.HasPrefix(s, "-P") {
				long, short := "--pager", ""
				if !strings.HasPrefix(s, "--") {
					long, short = "", "-P"
				}
				if v, j, ok := optionArg(args, i, long, short); ok {
					i = j
					cs = append(cs, carried{via: "--pager", script: w.scriptOf(v, v.val)})
				}
				continue
			}
			if b, ok := strings.CutPrefix(s, "--html="); ok {
				cs = append(cs, carried{via: "--html", script: w.scriptOf(a, b)})
			} else if b, ok := strings.CutPrefix(s, "-H"); ok && b != "" {
				cs = append(cs, carried{via: "--html", script: w.scriptOf(a, b)})
			}
		case "ack", "ag", "bat", "batcat":
			if s == "--pager" || strings.HasPrefix(s, "--pager=") {
				if v, j, ok := optionArg(args, i, "--pager", ""); ok {
					i = j
					cs = append(cs, carried{via: "--pager", script: w.scriptOf(v, v.val)})
				}
			}
		default: // less, more, zless
			cmd, ok := strings.CutPrefix(s, "+")
			if !ok {
				continue
			}
			cmd = strings.TrimLeft(cmd, "+")
			switch {
			case strings.HasPrefix(cmd, "!"):
				cs = append(cs, carried{via: "+!", script: w.scriptOf(a, strings.TrimLeft(cmd, "!"))})
			case strings.ContainsAny(cmd, "!|"):
				notes = append(notes, name+" runs commands given with +")
			}
		}
	}
	if len(cs) == 0 {
		w.emitInv(inv, false, notes...)
		return
	}
	w.runCarriers(inv, cs, notes...)
}

// runProgramOption handles tools that start a program named in an option:
// rg --pre and --hostname-bin, sort --compress-program, sdiff and diff3
// --diff-program. The program gets arguments chosen at run time.
func (w *walker) runProgramOption(inv *invocation, longs ...string) {
	var cs []carried
	args := inv.args
	for i := 1; i < len(args); i++ {
		long := ""
		for _, l := range longs {
			if !args[i].dyn && (args[i].val == l || strings.HasPrefix(args[i].val, l+"=")) {
				long = l
			}
		}
		if long == "" {
			continue
		}
		v, j, ok := optionArg(args, i, long, "")
		if !ok {
			continue
		}
		i = j
		if v.val == "" && !v.dyn {
			continue
		}
		arg := field{val: "<file>", dyn: true, tmpl: w.marker("<file>")}
		cs = append(cs, carried{via: long, argv: []field{v, arg}, note: path0(args[0].val) + " " + long + " runs a program on each file"})
	}
	if len(cs) == 0 {
		w.emitInv(inv, false)
		return
	}
	w.runCarriers(inv, cs)
}

// GitRunsValue reports whether git runs the value of configuration key as
// a command (core.sshCommand, core.pager, an alias starting with "!", ...).
// The parser walks such a value, given with git -c, as the command it is.
func GitRunsValue(key, value string) bool {
	shell, bang := gitShellKey(key)
	return shell && (!bang || strings.HasPrefix(value, "!"))
}

// CommandVar reports whether programs run the value of an environment
// variable as a command line or a program (GIT_SSH_COMMAND, PAGER,
// EDITOR, ...). The parser walks such a value, set for a command, as the
// command it is.
func CommandVar(name string) bool { return envCommand(name) }

// gitShellKey reports git configuration keys whose value git runs with a
// shell ("!cmd" marks a shell command for aliases and credential helpers).
func gitShellKey(key string) (shell bool, bang bool) {
	key = strings.ToLower(key)
	switch key {
	case "core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "core.askpass",
		"sequence.editor", "diff.external", "gpg.program", "interactive.difffilter",
		"uploadpack.packobjectshook", "sendemail.smtpserver", "web.browser":
		return true, false
	case "credential.helper":
		return true, true
	}
	if strings.HasPrefix(key, "alias.") {
		return true, true
	}
	if strings.HasPrefix(key, "pager.") {
		return true, false
	}
	for _, p := range []string{"diff.", "merge.", "filter.", "gpg.", "remote.", "credential.", "browser.", "difftool.", "mergetool.", "man."} {
		if !strings.HasPrefix(key, p) {
			continue
		}
		for _, s := range []string{".textconv", ".command", ".driver", ".clean", ".smudge", ".process",
			".program", ".receivepack", ".uploadpack", ".helper", ".cmd", ".path"} {
			if strings.HasSuffix(key, s) {
				return true, strings.HasSuffix(s, ".helper")
			}
		}
	}
	return false, false
}

// runGit handles what git runs from its command line: -c configuration
// that names commands, --upload-pack and friends, rebase --exec, bisect
// run, submodule foreach and filter-branch filters.
func (w *walker) runGit(inv *invocation) {
	var cs []carried
	args := inv.args
	addScript := func(via string, f field, s string) {
		cs = append(cs, carried{via: via, script: w.scriptOf(f, s)})
	}
	configValue := func(f field, kv string) {
		key, val, ok := strings.Cut(kv, "=")
		if !ok {
			return
		}
		shell, bang := gitShellKey(key)
		switch {
		case !shell:
		case bang && strings.HasPrefix(val, "!"):
			addScript("-c "+strings.ToLower(key), f, val[1:])
		case bang:
			// A helper name runs git-credential-NAME; a path runs as is.
			if strings.Contains(val, "/") {
				addScript("-c "+strings.ToLower(key), f, val)
			}
		default:
			addScript("-c "+strings.ToLower(key), f, val)
		}
	}
	sub := -1
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			break
		}
		s := a.val
		switch {
		case s == "-c" && i+1 < len(args):
			i++
			if !args[i].dyn {
				configValue(args[i], args[i].val)
			}
			continue
		case s == "-C" || s == "--git-dir" || s == "--work-tree" || s == "--namespace" || s == "--config-env":
			i++
			continue
		case strings.HasPrefix(s, "-"):
			continue
		}
		sub = i
		break
	}
	if sub > 0 {
		rest := args[sub+1:]
		switch args[sub].val {
		case "clone", "fetch", "pull", "ls-remote", "push", "archive":
			for i := 0; i < len(rest); i++ {
				for _, long := range []string{"--upload-pack", "--receive-pack", "--exec"} {
					if rest[i].dyn || !strings.HasPrefix(rest[i].val, long) {
						continue
					}
					if v, j, ok := optionArg(rest, i, long, ""); ok {
						addScript(long, v, v.val)
						i = j
					}
				}
				if !rest[i].dyn && (rest[i].val == "-u") && i+1 < len(rest) && args[sub].val != "push" {
					addScript("--upload-pack", rest[i+1], rest[i+1].val)
					i++
				}
				if !rest[i].dyn && rest[i].val == "-c" && i+1 < len(rest) && args[sub].val == "clone" {
					configValue(rest[i+1], rest[i+1].val)
					i++
				}
				if !rest[i].dyn && strings.HasPrefix(rest[i].val, "--config=") && args[sub].val == "clone" {
					configValue(rest[i], strings.TrimPrefix(rest[i].val, "--config="))
				}
			}
		case "rebase":
			for i := 0; i < len(rest); i++ {
				if v, j, ok := optionArg(rest, i, "--exec", "-x"); ok {
					addScript("rebase --exec", v, v.val)
					i = j
				}
			}
		case "bisect":
			if len(rest) > 1 && rest[0].val == "run" && !rest[0].dyn {
				cs = append(cs, carried{via: "bisect run", argv: slices.Clone(rest[1:])})
			}
		case "submodule":
			for i := 0; i < len(rest); i++ {
				if rest[i].val != "foreach" || rest[i].dyn {
					continue
				}
				j := i + 1
				for j < len(rest) && !rest[j].dyn && strings.HasPrefix(rest[j].val, "-") {
					j++
				}
				if j < len(rest) {
					f := joinFields(w, rest[j:])
					addScript("submodule foreach", f, f.val)
				}
				break
			}
		case "filter-branch":
			for i := 0; i+1 < len(rest); i++ {
				if !rest[i].dyn && strings.HasPrefix(rest[i].val, "--") && strings.HasSuffix(rest[i].val, "-filter") {
					addScript("filter-branch "+rest[i].val, rest[i+1], rest[i+1].val)
					i++
				}
			}
		}
	}
	if len(cs) == 0 {
		w.emitInv(inv, false)
		return
	}
	w.runCarriers(inv, cs)
}

// runAwk handles awk and its relatives: string literals passed to
// system(), piped to getline or printed to a command run with sh -c.
func (w *walker) runAwk(inv *invocation) {
	args := inv.args
	var prog *field
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			if !strings.HasPrefix(a.val, "-") {
				prog = &args[i]
				break
			}
			continue
		}
		s := a.val
		if s == "--" {
			if i+1 < len(args) {
				prog = &args[i+1]
			}
			break
		}
		if s == "-f" || s == "--file" || strings.HasPrefix(s, "-f") && len(s) > 2 {
			prog = nil
			break
		}
		if s == "-F" || s == "-v" || s == "--assign" || s == "--field-separator" || s == "-i" || s == "--include" || s == "-l" || s == "--load" || s == "-E" || s == "--exec" {
			i++
			continue
		}
		if strings.HasPrefix(s, "-") && len(s) > 1 {
			continue
		}
		prog = &args[i]
		break
	}
	if prog == nil || prog.dyn {
		w.emitInv(inv, false)
		return
	}
	var cs []carried
	for _, c := range awkCommands(prog.val) {
		v := lit(c)
		cs = append(cs, carried{via: "system", script: &v})
	}
	if len(cs) == 0 {
		w.emitInv(inv, false)
		return
	}
	w.runCarriers(inv, cs)
}

// awkCommands returns the string literals an awk program runs as shell
// commands: system("..."), "..." | getline, print ... | "..." and |& "...".
func awkCommands(p string) []string {
	var out []string
	type awkLit struct {
		start, end int
		val        string
	}
	var lits []awkLit
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
		case '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(p) && p[j] != '"'; j++ {
				if p[j] == '\\' && j+1 < len(p) {
					j++
					switch p[j] {
					case 'n':
						b.WriteByte('\n')
					case 't':
						b.WriteByte('\t')
					default:
						b.WriteByte(p[j])
					}
					continue
				}
				b.WriteByte(p[j])
			}
			lits = append(lits, awkLit{i, j, b.String()})
			i = j
		}
	}
	for k, l := range lits {
		before := strings.TrimRight(p[:l.start], " \t")
		after := ""
		if l.end+1 <= len(p) {
			after = strings.TrimLeft(p[min(l.end+1, len(p)):], " \t")
		}
		switch {
		case strings.HasSuffix(before, "system("), strings.HasSuffix(before, "system ("):
		case strings.HasSuffix(before, "|"), strings.HasSuffix(before, "|&"):
		case strings.HasPrefix(after, "|") && strings.HasPrefix(strings.TrimLeft(strings.TrimLeft(after, "|&"), " \t"), "getline"):
		default:
			continue
		}
		out = append(out, l.val)
		// print "rm -rf /" | "sh": what is printed to a shell is a script.
		if k > 0 && isShellName(strings.Fields(l.val)) && strings.HasSuffix(before, "|") {
			prev := lits[k-1]
			if strings.TrimSpace(p[prev.end+1:len(before)-1]) == "" {
				out = append(out, prev.val)
			}
		}
	}
	return out
}

// isShellName reports an argv that is a shell reading its standard input.
func isShellName(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	switch path0(argv[0]) {
	case "sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "busybox":
		return len(argv) == 1 || argv[1] == "-s" || argv[1] == "-" || argv[1] == "sh"
	}
	return false
}

// runAt handles at and batch: their standard input is a shell script.
func (w *walker) runAt(inv *invocation) {
	for _, a := range inv.args[1:] {
		if !a.dyn && (a.val == "-f" || strings.HasPrefix(a.val, "-f")) {
			w.emitInv(inv, false, "at runs commands from a file, which is not followed")
			return
		}
		if !a.dyn && (a.val == "-l" || a.val == "-r" || a.val == "-d" || a.val == "-c") {
			w.emitInv(inv, false)
			return
		}
	}
	in := inv.stdin.get()
	if in == nil {
		w.emitInv(inv, false, "at reads commands from stdin")
		return
	}
	if in.kind == "file" {
		w.emitInv(inv, false, "at runs commands from file "+in.body.val+", which is not followed")
		return
	}
	note := "at runs its standard input later; the " + in.kind + " is parsed"
	if in.body.dyn {
		note = "at runs a dynamic " + in.kind + " later"
	}
	w.emitInv(inv, in.body.dyn, note)
	wr := Wrapper{Name: path0(inv.args[0].val), Argv: fieldValues(inv.args)}
	w.shellScript(inv, wr, in.kind, in.body, field{}, false, nil, syntax.LangBash, true)
}

// runParallel handles GNU parallel: the command is the words before ":::"
// (or "::::"), run by a shell with each argument appended, or put in
// place of {}. Arguments from stdin or files are not known.
func (w *walker) runParallel(inv *invocation) {
	args := inv.args
	valued := map[string]bool{"-j": true, "-P": true, "--jobs": true, "-S": true, "--sshlogin": true,
		"-a": true, "--arg-file": true, "-d": true, "--delimiter": true, "-E": true, "-I": true,
		"-n": true, "-N": true, "-L": true, "-l": true, "-s": true, "--max-args": true,
		"--timeout": true, "--joblog": true, "--results": true, "--tmpdir": true, "--workdir": true,
		"--colsep": true, "--basefile": true, "--return": true, "--sshloginfile": true, "--tag-string": true}
	i := 1
	fromFile := false
	for i < len(args) && !args[i].dyn && strings.HasPrefix(args[i].val, "-") {
		if args[i].val == "-a" || args[i].val == "--arg-file" || strings.HasPrefix(args[i].val, "--arg-file=") {
			fromFile = true
		}
		if args[i].val == "--" {
			i++
			break
		}
		if valued[args[i].val] {
			i++
		}
		i++
	}
	if i >= len(args) {
		w.emitInv(inv, false, "parallel runs commands read from stdin")
		return
	}
	tmpl := []field{}
	var groups [][]field
	for ; i < len(args); i++ {
		a := args[i]
		if !a.dyn && (a.val == ":::" || a.val == "::::" || a.val == ":::+" || a.val == "::::+") {
			if strings.HasPrefix(a.val, "::::") {
				fromFile = true
			}
			groups = append(groups, nil)
			continue
		}
		if len(groups) == 0 {
			tmpl = append(tmpl, a)
		} else {
			groups[len(groups)-1] = append(groups[len(groups)-1], a)
		}
	}
	var cs []carried
	note := ""
	if len(groups) == 0 || fromFile {
		note = "parallel appends arguments read at run time"
	}
	build := func(extra []field) {
		words := slices.Clone(tmpl)
		replaced := false
		for k, t := range words {
			if !t.dyn && strings.Contains(t.val, "{") && len(extra) > 0 {
				v := strings.ReplaceAll(t.val, "{}", extra[0].val)
				words[k] = field{val: v, dyn: extra[0].dyn, tmpl: w.marker(v)}
				if !extra[0].dyn {
					words[k] = lit(v)
				}
				replaced = true
			}
		}
		if !replaced {
			words = append(words, extra...)
		}
		f := joinFields(w, words)
		cs = append(cs, carried{via: "", script: &f, note: note})
	}
	if len(groups) == 0 || fromFile {
		build([]field{{val: stdinArg, dyn: true, tmpl: w.marker(stdinArg)}})
	} else {
		for _, g := range groups {
			for _, a := range g {
				if len(cs) > maxCarried {
					break
				}
				build([]field{a})
			}
		}
	}
	w.runCarriers(inv, cs)
}

// runFd handles fd's -x/--exec and -X/--exec-batch: every word after the
// option (up to a ";") is the command, run for the paths found, which
// replace {} (or are appended).
func (w *walker) runFd(inv *invocation) {
	args := inv.args
	var cs []carried
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			continue
		}
		switch a.val {
		case "-x", "--exec", "-X", "--exec-batch":
		default:
			continue
		}
		j := i + 1
		for j < len(args) && (args[j].dyn || args[j].val != ";") {
			j++
		}
		inner := slices.Clone(args[i+1 : j])
		placed := false
		for k, f := range inner {
			if !f.dyn && strings.Contains(f.val, "{") && strings.Contains(f.val, "}") {
				inner[k] = field{val: f.val, dyn: true, tmpl: w.marker(f.val)}
				placed = true
			}
		}
		if len(inner) > 0 && !placed {
			inner = append(inner, field{val: "<path>", dyn: true, tmpl: w.marker("<path>")})
		}
		if len(inner) > 0 {
			cs = append(cs, carried{via: a.val, argv: inner, note: "fd runs the command on each path found"})
		}
		i = j
	}
	if len(cs) == 0 {
		w.emitInv(inv, false)
		return
	}
	w.runCarriers(inv, cs)
}
