package shellparse

import (
	"slices"
	"strings"
)

// optSpec describes the options of a wrapper, getopt style. Letters not
// listed are taken as flags without argument.
type optSpec struct {
	flags    string   // short options without argument (documentation only)
	args     string   // short options taking an argument (rest of the cluster, or the next word)
	optional string   // short options whose argument can only be attached (-iR)
	longArgs []string // long options taking the next word when no '=' is given
}

type opt struct {
	name   string // "-u" or "--user"
	val    string
	hasVal bool
}

// parseOpts parses the options after args[0]. It stops at "--" (consumed),
// at the first operand, and at a dynamic word (which may be an option or
// the command: it is left for the caller, so the command becomes dynamic).
func parseOpts(args []field, spec optSpec) (int, []opt) {
	var opts []opt
	i := 1
	for i < len(args) {
		a := args[i]
		if a.dyn {
			break
		}
		s := a.val
		if s == "--" {
			i++
			break
		}
		if len(s) < 2 || s[0] != '-' {
			break
		}
		i++
		if strings.HasPrefix(s, "--") {
			name, val, hasVal := strings.Cut(s[2:], "=")
			if !hasVal && slices.Contains(spec.longArgs, name) && i < len(args) {
				val, hasVal = args[i].val, true
				i++
			}
			opts = append(opts, opt{name: "--" + name, val: val, hasVal: hasVal})
			continue
		}
		for j := 1; j < len(s); j++ {
			c := s[j]
			name := "-" + string(c)
			switch {
			case strings.IndexByte(spec.args, c) >= 0:
				switch {
				case j+1 < len(s):
					opts = append(opts, opt{name: name, val: s[j+1:], hasVal: true})
				case i < len(args):
					opts = append(opts, opt{name: name, val: args[i].val, hasVal: true})
					i++
				default:
					opts = append(opts, opt{name: name})
				}
				j = len(s)
			case strings.IndexByte(spec.optional, c) >= 0:
				opts = append(opts, opt{name: name, val: s[j+1:], hasVal: j+1 < len(s)})
				j = len(s)
			default:
				opts = append(opts, opt{name: name})
			}
		}
	}
	return i, opts
}

func hasOpt(opts []opt, names ...string) bool {
	for _, o := range opts {
		if slices.Contains(names, o.name) {
			return true
		}
	}
	return false
}

func optVal(opts []opt, names ...string) (opt, bool) {
	for i := len(opts) - 1; i >= 0; i-- {
		if slices.Contains(names, opts[i].name) {
			return opts[i], true
		}
	}
	return opt{}, false
}

// isAssignWord reports whether a word is NAME=value.
func isAssignWord(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	return ok && validName(name)
}

// setEnv records NAME=value given to env or sudo: the wrapped program, and
// everything it starts, runs with it.
func (inv *invocation) setEnv(f field) {
	inv.assigns = append(inv.assigns, f.val)
	name, val, _ := strings.Cut(f.val, "=")
	if inv.callSt == inv.st {
		inv.callSt = inv.st.clone()
	}
	v := value{exported: true}
	if !f.dyn {
		v = value{known: true, set: true, str: val, exported: true}
	}
	inv.callSt.assign(name, v)
}

// peelSimple peels a wrapper made of options and a fixed number of
// operands before the command.
func (w *walker) peelSimple(inv *invocation, name string, spec optSpec, operands int) bool {
	i, _ := parseOpts(inv.args, spec)
	i += operands
	if i >= len(inv.args) {
		w.emitInv(inv, false)
		return false
	}
	inv.peel(name, i)
	return true
}

func (w *walker) peelOther(inv *invocation, name string) bool {
	switch name {
	case "nohup":
		return w.peelSimple(inv, name, optSpec{}, 0)
	case "setsid":
		return w.peelSimple(inv, name, optSpec{flags: "cfw"}, 0)
	case "stdbuf":
		return w.peelSimple(inv, name, optSpec{args: "ioe", longArgs: []string{"input", "output", "error"}}, 0)
	case "time":
		return w.peelSimple(inv, name, optSpec{flags: "pavqV", args: "fo", longArgs: []string{"format", "output"}}, 0)
	case "chroot":
		i, _ := parseOpts(inv.args, optSpec{longArgs: []string{"userspec", "groups"}})
		if i+1 >= len(inv.args) {
			w.emitInv(inv, false, "chroot starts an interactive shell")
			return false
		}
		inv.peel(name, i+1)
		return true
	case "taskset":
		_, opts := parseOpts(inv.args, optSpec{flags: "acpV"})
		if hasOpt(opts, "-p", "--pid") {
			w.emitInv(inv, false)
			return false
		}
		return w.peelSimple(inv, name, optSpec{flags: "acpV"}, 1)
	case "strace":
		spec := optSpec{args: "abeEIoOpPsSuUX", longArgs: []string{"attach", "output", "user", "env", "trace", "signal", "status"}}
		_, opts := parseOpts(inv.args, spec)
		if hasOpt(opts, "-p", "--attach") {
			w.emitInv(inv, false)
			return false
		}
		return w.peelSimple(inv, name, spec, 0)
	}
	w.emitInv(inv, false)
	return false
}

func (w *walker) peelSudo(inv *invocation) bool {
	spec := optSpec{
		flags: "AbBEeHiKklNnPSsVv",
		args:  "CDghpRrTtUu",
		longArgs: []string{"user", "group", "prompt", "close-from", "chdir", "chroot",
			"role", "type", "command-timeout", "other-user", "host"},
	}
	i, opts := parseOpts(inv.args, spec)
	if hasOpt(opts, "-e", "--edit") {
		w.emitInv(inv, false, "sudoedit edits files as another user")
		return false
	}
	if len(inv.args) == 2 && inv.args[1].val == "-h" {
		w.emitInv(inv, false) // sudo -h: help
		return false
	}
	if hasOpt(opts, "-l", "--list", "-v", "--validate", "-V", "--version", "--help", "-K", "--remove-timestamp") {
		w.emitInv(inv, false)
		return false
	}
	for i < len(inv.args) && isAssignWord(inv.args[i].val) {
		inv.setEnv(inv.args[i])
		i++
	}
	if i >= len(inv.args) {
		if hasOpt(opts, "-s", "--shell", "-i", "--login") {
			w.emitInv(inv, false, "sudo starts an interactive shell")
		} else {
			w.emitInv(inv, false)
		}
		return false
	}
	inv.peel("sudo", i)
	return true
}

func (w *walker) peelDoas(inv *invocation) bool {
	i, opts := parseOpts(inv.args, optSpec{flags: "Lns", args: "uC"})
	if hasOpt(opts, "-C", "-L") {
		w.emitInv(inv, false)
		return false
	}
	if i >= len(inv.args) {
		if hasOpt(opts, "-s") {
			w.emitInv(inv, false, "doas starts an interactive shell")
		} else {
			w.emitInv(inv, false)
		}
		return false
	}
	inv.peel("doas", i)
	return true
}

func (w *walker) peelPkexec(inv *invocation) bool {
	i, opts := parseOpts(inv.args, optSpec{longArgs: []string{"user"}})
	if hasOpt(opts, "--version", "--help") {
		w.emitInv(inv, false)
		return false
	}
	if i >= len(inv.args) {
		w.emitInv(inv, false, "pkexec starts an interactive shell")
		return false
	}
	inv.peel("pkexec", i)
	return true
}

// peelEnv handles env: options, -S strings and NAME=value words.
func (w *walker) peelEnv(inv *invocation) bool {
	args := slices.Clone(inv.args)
	i := 1
	opts := true
	for i < len(args) {
		a := args[i]
		if a.dyn {
			// NAME=$VALUE is still an assignment: its name is static.
			if isAssignWord(a.val) {
				inv.setEnv(a)
				opts = false
				i++
				continue
			}
			break
		}
		s := a.val
		if opts {
			switch {
			case s == "--":
				opts = false
				i++
				continue
			case s == "-":
				i++
				continue
			case strings.HasPrefix(s, "--"):
				name, val, hasVal := strings.Cut(s[2:], "=")
				switch name {
				case "unset", "chdir", "split-string":
					n := 1
					if !hasVal {
						if i+1 >= len(args) {
							i = len(args)
							continue
						}
						val = args[i+1].val
						n = 2
						if args[i+1].dyn {
							w.emitInv(inv, true, "env -S string comes from "+val)
							return false
						}
					}
					if name == "split-string" {
						split, ok := w.envSplit(inv.callSt, val)
						if !ok {
							w.emitInv(inv, false, "env -S string does not parse")
							return false
						}
						args = slices.Concat(args[:i+n], split, args[i+n:])
					}
					i += n
				default:
					i++
				}
				continue
			case len(s) > 1 && s[0] == '-':
				i++
				for j := 1; j < len(s); j++ {
					c := s[j]
					if !strings.ContainsRune("uCSP", rune(c)) {
						continue
					}
					val := s[j+1:]
					if val == "" {
						if i >= len(args) {
							break
						}
						if args[i].dyn {
							w.emitInv(inv, true, "env option value comes from "+args[i].val)
							return false
						}
						val = args[i].val
						i++
					}
					if c == 'S' {
						split, ok := w.envSplit(inv.callSt, val)
						if !ok {
							w.emitInv(inv, false, "env -S string does not parse")
							return false
						}
						args = slices.Concat(args[:i], split, args[i:])
					}
					break
				}
				continue
			}
		}
		if isAssignWord(s) {
			inv.setEnv(a)
			opts = false
			i++
			continue
		}
		break
	}
	inv.args = args
	if i >= len(args) {
		w.emitInv(inv, false)
		return false
	}
	inv.peel("env", i)
	return true
}

// envSplit splits an env -S string into words: whitespace separates,
// quotes group, backslash escapes, ${NAME} expands, # starts a comment.
func (w *walker) envSplit(st *state, s string) ([]field, bool) {
	var out []field
	var cur strings.Builder
	dyn := false
	have := false
	flush := func() {
		if have {
			if dyn {
				v := cur.String()
				out = append(out, field{val: v, dyn: true, tmpl: w.marker(v)})
			} else {
				out = append(out, lit(cur.String()))
			}
		}
		cur.Reset()
		have, dyn = false, false
	}
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
				continue
			}
			if c == '\\' && i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == '\'') {
				i++
				c = s[i]
			}
			cur.WriteByte(c)
			continue
		case c == '\'' || c == '"':
			if quote == c {
				quote = 0
				continue
			}
			if quote == 0 {
				quote = c
				have = true
				continue
			}
		case quote == 0 && (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'):
			flush()
			continue
		case quote == 0 && c == '#' && !have:
			flush()
			return out, true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
			switch s[i] {
			case '_':
				if quote == 0 {
					flush()
					continue
				}
				c = ' '
			case 'c':
				flush()
				return out, true
			case 'n':
				c = '\n'
			case 't':
				c = '\t'
			case 'r':
				c = '\r'
			case 'f':
				c = '\f'
			case 'v':
				c = '\v'
			case '\\', '\'', '"', '$', '#':
				c = s[i]
			default:
				return nil, false
			}
		case c == '$':
			if i+1 >= len(s) || s[i+1] != '{' {
				return nil, false
			}
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, false
			}
			name := s[i+2 : i+end]
			v := st.lookup(name)
			if !validName(name) || !v.known {
				dyn = true
				cur.WriteString("${" + name + "}")
			} else {
				cur.WriteString(v.str)
			}
			have = true
			i += end
			continue
		}
		cur.WriteByte(c)
		have = true
	}
	if quote != 0 {
		return nil, false
	}
	flush()
	return out, true
}

func (w *walker) peelIonice(inv *invocation) bool {
	spec := optSpec{flags: "th", args: "cnpPu", longArgs: []string{"class", "classdata", "pid", "pgid", "uid"}}
	_, opts := parseOpts(inv.args, spec)
	if hasOpt(opts, "-p", "-P", "-u", "--pid", "--pgid", "--uid") {
		w.emitInv(inv, false)
		return false
	}
	return w.peelSimple(inv, "ionice", spec, 0)
}

func (w *walker) peelCommand(inv *invocation) bool {
	i, opts := parseOpts(inv.args, optSpec{flags: "pvV"})
	if hasOpt(opts, "-v", "-V") || i >= len(inv.args) {
		w.emitInv(inv, false)
		return false
	}
	shell := inv.shell
	inv.peel("command", i)
	inv.shell, inv.noFunc = shell, true
	return true
}

func (w *walker) peelExec(inv *invocation) bool {
	i, _ := parseOpts(inv.args, optSpec{flags: "cl", args: "a"})
	if i >= len(inv.args) {
		w.emitInv(inv, false)
		return false
	}
	inv.peel("exec", i)
	inv.noFunc = true
	return true
}

// stdinArg is the word standing for the arguments xargs reads from stdin.
const stdinArg = "<stdin>"

func (w *walker) peelXargs(inv *invocation) bool {
	spec := optSpec{
		flags:    "0prtxob",
		args:     "adEILnPs",
		optional: "eil",
		longArgs: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"},
	}
	i, opts := parseOpts(inv.args, spec)
	if hasOpt(opts, "--help", "--version", "--show-limits") {
		w.emitInv(inv, false)
		return false
	}
	repl := ""
	if o, ok := optVal(opts, "-I", "-i", "--replace"); ok {
		repl = o.val
		if !o.hasVal || (o.name != "-I" && repl == "") {
			repl = "{}"
		}
	}
	inv.peel("xargs", i)
	if len(inv.args) == 0 {
		inv.args = []field{lit("echo")}
	}
	if repl != "" {
		args := slices.Clone(inv.args)
		for k, a := range args {
			if !a.dyn && strings.Contains(a.val, repl) {
				args[k] = field{val: a.val, dyn: true, tmpl: w.marker(a.val)}
			}
		}
		inv.args = args
		inv.notes = append(inv.notes, "xargs replaces "+repl+" with input read from stdin")
		return true
	}
	inv.args = append(slices.Clip(inv.args), field{val: stdinArg, dyn: true, tmpl: w.marker(stdinArg)})
	inv.notes = append(inv.notes, "xargs appends arguments read from stdin")
	return true
}

// runFind emits find itself and each command of its -exec, -execdir, -ok
// and -okdir actions.
func (w *walker) runFind(inv *invocation) {
	w.emitInv(inv, false)
	args := inv.args
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			continue
		}
		switch a.val {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		k := j
		for ; k < len(args); k++ {
			t := args[k]
			if t.dyn {
				continue
			}
			if t.val == ";" || (t.val == "+" && k > j && !args[k-1].dyn && args[k-1].val == "{}") {
				break
			}
		}
		inner := slices.Clone(args[j:k])
		subst := false
		for n, f := range inner {
			if !f.dyn && strings.Contains(f.val, "{}") {
				inner[n] = field{val: f.val, dyn: true, tmpl: w.marker(f.val)}
				subst = true
			}
		}
		if len(inner) > 0 {
			name := "find " + a.val
			sub := inv.sub(inner, Wrapper{Name: name, Argv: fieldValues(args[:j])})
			if subst {
				sub.notes = []string{"find replaces {} with each path found"}
			}
			n := w.pushCtx(name)
			w.run(sub)
			w.popCtx(n)
		}
		i = k
	}
}

// peelMnemos unwraps a nested `mnemos run [flags] -- X`: it is judged as
// X. Other mnemos subcommands stay commands named mnemos.
func (w *walker) peelMnemos(inv *invocation) bool {
	args := inv.args
	valued := func(s string) bool {
		switch s {
		case "--home", "--policy", "--level", "--channel", "--sender", "--session",
			"--cwd", "--config", "--timeout", "--for", "--remember", "--log-level":
			return true
		}
		return false
	}
	skipFlags := func(i int) int {
		for i < len(args) && !args[i].dyn && strings.HasPrefix(args[i].val, "-") && args[i].val != "--" {
			if valued(args[i].val) {
				i++
			}
			i++
		}
		return i
	}
	i := skipFlags(1)
	if i >= len(args) || args[i].dyn || args[i].val != "run" {
		w.emitInv(inv, false)
		return false
	}
	for k := i + 1; k < len(args); k++ {
		if args[k].dyn {
			break
		}
		if args[k].val == "--" {
			if k+1 >= len(args) {
				break
			}
			inv.peel("mnemos run", k+1)
			return true
		}
	}
	i = skipFlags(i + 1)
	if i >= len(args) {
		w.emitInv(inv, false)
		return false
	}
	inv.peel("mnemos run", i)
	return true
}

func (w *walker) peelFlock(inv *invocation) bool {
	spec := optSpec{
		flags:    "sexunoFhV",
		args:     "wEc",
		longArgs: []string{"timeout", "conflict-exit-code", "command"},
	}
	i, opts := parseOpts(inv.args, spec)
	args := inv.args
	if o, ok := optVal(opts, "-c", "--command"); ok && o.hasVal {
		// flock -c CMD FILE is not valid, but be generous.
		inv.peel("flock", min(i+1, len(args)))
		inv.args = []field{lit("sh"), lit("-c"), findArg(args, o.val)}
		return true
	}
	if i >= len(args) {
		w.emitInv(inv, false)
		return false
	}
	file := i
	if file+1 >= len(args) {
		w.emitInv(inv, false)
		return false
	}
	next := args[file+1]
	if !next.dyn && (next.val == "-c" || next.val == "--command") {
		if file+2 >= len(args) {
			w.emitInv(inv, false)
			return false
		}
		script := args[file+2]
		inv.peel("flock", file+1)
		inv.args = []field{lit("sh"), lit("-c"), script}
		return true
	}
	inv.peel("flock", file+1)
	return true
}

// findArg returns the field whose value is s (keeping its dynamic flag).
func findArg(args []field, s string) field {
	for _, a := range args {
		if a.val == s {
			return a
		}
	}
	return lit(s)
}

func (w *walker) peelWatch(inv *invocation) bool {
	spec := optSpec{flags: "bcCdegtxprwhv", args: "nq", longArgs: []string{"interval", "equexit"}}
	i, opts := parseOpts(inv.args, spec)
	if i >= len(inv.args) {
		w.emitInv(inv, false)
		return false
	}
	if hasOpt(opts, "-x", "--exec") {
		inv.peel("watch", i)
		return true
	}
	cmd := joinFields(w, inv.args[i:])
	inv.peel("watch", i)
	inv.args = []field{lit("sh"), lit("-c"), cmd}
	return true
}

func (w *walker) peelNamespace(inv *invocation, name string) bool {
	var spec optSpec
	if name == "nsenter" {
		spec = optSpec{args: "tSG", optional: "muinpUCTrw", longArgs: []string{"target", "setuid", "setgid"}}
	} else {
		spec = optSpec{
			args: "RwSGl",
			longArgs: []string{"root", "wd", "setuid", "setgid", "load-interp", "propagation",
				"setgroups", "map-user", "map-group", "map-users", "map-groups"},
		}
	}
	i, _ := parseOpts(inv.args, spec)
	if i >= len(inv.args) {
		w.emitInv(inv, false, name+" starts an interactive shell")
		return false
	}
	inv.peel(name, i)
	return true
}

// peelSu handles su and runuser: -c runs a script with the user's shell,
// runuser -u runs a command; options may come anywhere.
func (w *walker) peelSu(inv *invocation, name string) bool {
	args := inv.args
	var script *field
	var operands []field
	direct := false
	wrapArgv := []string{args[0].val}
	i := 1
	for i < len(args) {
		a := args[i]
		if a.dyn {
			operands = append(operands, a)
			i++
			continue
		}
		s := a.val
		takeNext := func() (field, bool) {
			if i+1 >= len(args) {
				return field{}, false
			}
			wrapArgv = append(wrapArgv, s)
			i++
			return args[i], true
		}
		switch {
		case s == "--":
			wrapArgv = append(wrapArgv, s)
			operands = append(operands, args[i+1:]...)
			i = len(args)
			continue
		case s == "-c" || s == "--command" || s == "--session-command":
			if f, ok := takeNext(); ok {
				script = &f
			}
		case strings.HasPrefix(s, "--command=") || strings.HasPrefix(s, "--session-command="):
			_, v, _ := strings.Cut(s, "=")
			f := lit(v)
			script = &f
		case name == "runuser" && (s == "-u" || s == "--user"):
			if f, ok := takeNext(); ok {
				wrapArgv = append(wrapArgv, f.val)
			}
			direct = true
			i++
			continue
		case s == "-s" || s == "--shell" || s == "-g" || s == "--group" || s == "-G" ||
			s == "--supp-group" || s == "-w" || s == "--whitelist-environment":
			if f, ok := takeNext(); ok {
				wrapArgv = append(wrapArgv, f.val)
			}
			i++
			continue
		case len(s) > 1 && s[0] == '-' && !strings.HasPrefix(s, "--"):
			wrapArgv = append(wrapArgv, s)
			for j := 1; j < len(s); j++ {
				if c := s[j]; c == 'c' || c == 's' || c == 'g' || c == 'G' || c == 'w' || (c == 'u' && name == "runuser") {
					val := s[j+1:]
					if val == "" && i+1 < len(args) {
						i++
						if c == 'c' {
							f := args[i]
							script = &f
						} else {
							wrapArgv = append(wrapArgv, args[i].val)
						}
					} else if c == 'c' {
						f := lit(val)
						script = &f
					}
					if c == 'u' {
						direct = true
					}
					break
				}
			}
			i++
			continue
		case s == "-" || strings.HasPrefix(s, "--"):
		default:
			operands = append(operands, a)
			i++
			continue
		}
		if s != "-c" && s != "--command" && s != "--session-command" {
			wrapArgv = append(wrapArgv, s)
		}
		i++
	}
	if direct && script == nil {
		if len(operands) == 0 {
			w.emitInv(inv, false, name+" starts an interactive shell")
			return false
		}
		inv.wraps = append(slices.Clip(inv.wraps), Wrapper{Name: name, Argv: wrapArgv})
		inv.args = operands
		inv.shell = false
		return true
	}
	if script == nil {
		w.emitInv(inv, false, name+" starts an interactive shell")
		return false
	}
	var rest []field
	if len(operands) > 0 {
		wrapArgv = append(wrapArgv, operands[0].val)
		rest = operands[1:]
	}
	inv.wraps = append(slices.Clip(inv.wraps), Wrapper{Name: name, Argv: wrapArgv})
	inv.args = append([]field{lit("sh"), lit("-c"), *script}, rest...)
	inv.shell = false
	return true
}

// peelSg handles `sg [-] group [-c] command`: the command runs with sh -c.
func (w *walker) peelSg(inv *invocation) bool {
	args := inv.args
	i := 1
	if i < len(args) && !args[i].dyn && args[i].val == "-" {
		i++
	}
	i++ // group
	if i < len(args) && !args[i].dyn && args[i].val == "-c" {
		i++
	}
	if i >= len(args) {
		w.emitInv(inv, false, "sg starts an interactive shell")
		return false
	}
	cmd := joinFields(w, args[i:])
	inv.peel("sg", i)
	inv.args = []field{lit("sh"), lit("-c"), cmd}
	return true
}

// peelScript handles util-linux script -c CMD.
func (w *walker) peelScript(inv *invocation) bool {
	args := inv.args
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			continue
		}
		var cmd field
		switch {
		case (a.val == "-c" || a.val == "--command") && i+1 < len(args):
			cmd = args[i+1]
		case strings.HasPrefix(a.val, "--command="):
			cmd = lit(strings.TrimPrefix(a.val, "--command="))
		case len(a.val) > 2 && a.val[0] == '-' && a.val[1] != '-' && strings.IndexByte(a.val, 'c') > 0:
			// A cluster ending in c takes the next word (-qc CMD); one
			// with letters after the c has the command glued on (-cCMD).
			k := strings.IndexByte(a.val, 'c')
			switch {
			case k+1 < len(a.val):
				cmd = lit(a.val[k+1:])
			case i+1 < len(args):
				cmd = args[i+1]
			default:
				continue
			}
		default:
			continue
		}
		inv.peel("script", len(args))
		inv.args = []field{lit("sh"), lit("-c"), cmd}
		return true
	}
	w.emitInv(inv, false, "script starts an interactive shell")
	return false
}
