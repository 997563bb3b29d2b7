package shellparse

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// optSpec describes the options of a wrapper, getopt style. Letters not
// listed are taken as flags without argument. Long options are matched
// as getopt_long matches them: the exact name, or a prefix of exactly one
// of them (--out for --output).
type optSpec struct {
	flags    string   // short options without argument (documentation only)
	args     string   // short options taking an argument (rest of the cluster, or the next word)
	optional string   // short options whose argument can only be attached (-iR)
	longArgs []string // long options taking the next word when no '=' is given
	// longFlags are the long options taking no argument, or one only
	// after '=' (--opt[=x]).
	longFlags []string
	// permute lets options follow operands, as getopt does for programs
	// that do not stop at the first operand (script).
	permute bool
}

type opt struct {
	name   string // "-u" or "--user" (a long option by its full name)
	val    string
	hasVal bool
	field  field // the value as evaluated (dynamic when the next word is)
	at     int   // the index of a long option's word
}

// long resolves a long option as getopt_long does: its full name and
// whether it takes the next word as its value. An unknown or ambiguous
// name, which the program refuses, is returned as written.
func (spec optSpec) long(name string) (string, bool) {
	if slices.Contains(spec.longArgs, name) {
		return name, true
	}
	if slices.Contains(spec.longFlags, name) {
		return name, false
	}
	found, takes, n := "", false, 0
	for _, l := range spec.longArgs {
		if strings.HasPrefix(l, name) {
			found, takes, n = l, true, n+1
		}
	}
	for _, l := range spec.longFlags {
		if strings.HasPrefix(l, name) {
			found, takes, n = l, false, n+1
		}
	}
	if n != 1 || name == "" {
		return name, false
	}
	return found, takes
}

// parseOpts parses the options after args[0]. It stops at "--" (consumed),
// at the first operand, and at a dynamic word (which may be an option or
// the command: it is left for the caller, so the command becomes dynamic).
func parseOpts(args []field, spec optSpec) (int, []opt) {
	i, opts, _ := parseOptsOperands(args, spec)
	return i, opts
}

// parseOptsOperands is parseOpts that, for a spec that permutes, goes on
// past operands and returns them.
func parseOptsOperands(args []field, spec optSpec) (int, []opt, []field) {
	var opts []opt
	var operands []field
	i := 1
	for i < len(args) {
		a := args[i]
		if a.dyn {
			if spec.permute {
				operands = append(operands, a)
				i++
				continue
			}
			break
		}
		s := a.val
		if s == "--" {
			i++
			if spec.permute {
				operands = append(operands, args[i:]...)
				i = len(args)
			}
			break
		}
		if len(s) < 2 || s[0] != '-' {
			if spec.permute {
				operands = append(operands, a)
				i++
				continue
			}
			break
		}
		at := i
		i++
		if strings.HasPrefix(s, "--") {
			name, val, hasVal := strings.Cut(s[2:], "=")
			name, takes := spec.long(name)
			f := lit(val)
			if !hasVal && takes && i < len(args) {
				f = args[i]
				val, hasVal = f.val, true
				i++
			}
			opts = append(opts, opt{name: "--" + name, val: val, hasVal: hasVal, field: f, at: at})
			continue
		}
		for j := 1; j < len(s); j++ {
			c := s[j]
			name := "-" + string(c)
			switch {
			case strings.IndexByte(spec.args, c) >= 0:
				switch {
				case j+1 < len(s):
					opts = append(opts, opt{name: name, val: s[j+1:], hasVal: true, field: lit(s[j+1:])})
				case i < len(args):
					opts = append(opts, opt{name: name, val: args[i].val, hasVal: true, field: args[i]})
					i++
				default:
					opts = append(opts, opt{name: name})
				}
				j = len(s)
			case strings.IndexByte(spec.optional, c) >= 0:
				opts = append(opts, opt{name: name, val: s[j+1:], hasVal: j+1 < len(s), field: lit(s[j+1:])})
				j = len(s)
			default:
				opts = append(opts, opt{name: name})
			}
		}
	}
	return i, opts, operands
}

// peelOpts is peel for a wrapper whose options opts were parsed from
// its words: the wrapper's Argv names its long options in full (--chdir
// for --ch), so that whatever reads them later need not know which
// abbreviations the program accepts.
func (inv *invocation) peelOpts(name string, n int, opts []opt) {
	argv := fieldValues(inv.args[:n])
	for _, o := range opts {
		if o.at <= 0 || o.at >= n {
			continue
		}
		if _, val, ok := strings.Cut(argv[o.at], "="); ok {
			argv[o.at] = o.name + "=" + val
		} else {
			argv[o.at] = o.name
		}
	}
	inv.wraps = append(slices.Clip(inv.wraps), Wrapper{Name: name, Argv: argv})
	inv.args = inv.args[n:]
	inv.shell = false
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

// unsetEnv records a variable removed from the environment of the
// wrapped program (env -u NAME, strace -E NAME): whatever it held there
// is not known.
func (inv *invocation) unsetEnv(name string) {
	if !validName(name) {
		return
	}
	if inv.callSt == inv.st {
		inv.callSt = inv.st.clone()
	}
	inv.callSt.setVar(name, value{})
}

// opens records a file the wrapper opens itself: op is ">" (truncated and
// written), ">>" (appended), "<>" (created, not truncated) or "<" (read).
// It is judged as a redirect of the command would be.
func (inv *invocation) opens(by, op string, f field) {
	inv.redirs = append(slices.Clip(inv.redirs), Redirect{Op: op, Target: f.word(), By: by})
}

// runOptionScript walks a shell command that one of the wrapper's own
// options runs besides the wrapped command (strace -o '|cmd'), with the
// wrapper, as written so far, as its wrapper.
func (w *walker) runOptionScript(inv *invocation, via string, script field) {
	name := path0(inv.args[0].val) + " " + via
	sub := inv.sub([]field{lit("sh"), lit("-c"), script}, Wrapper{Name: name, Argv: fieldValues(inv.args)})
	n := w.pushCtx(name)
	w.run(sub)
	w.popCtx(n)
}

// shellOf is the program flock -c and script -c run their command with:
// $SHELL, or sh when it is unset or empty. A SHELL the script set runs
// whatever it names.
func (w *walker) shellOf(inv *invocation) field {
	if !inv.callSt.assignedHere("SHELL") {
		return lit("sh")
	}
	v := inv.callSt.lookup("SHELL")
	switch {
	case v.known && v.set && v.str != "":
		return lit(v.str)
	case v.known:
		return lit("sh")
	}
	return field{val: "$SHELL", dyn: true, tmpl: w.marker("$SHELL")}
}

// argv0 applies the name a program is started under (env -a NAME, exec -a
// NAME) once the wrapper is peeled: a multi-call binary (busybox, toybox)
// runs the applet it is named after; any other program is told it is
// another one, which some act on.
func (w *walker) argv0(inv *invocation, by string, name field) {
	if len(inv.args) == 0 || inv.args[0].dyn {
		return
	}
	prog := path.Base(inv.args[0].val)
	if name.dyn {
		inv.notes = append(slices.Clip(inv.notes), by+" starts "+prog+" under a name only known at run time ("+name.val+")")
		return
	}
	as := path.Base(name.val)
	if as == prog || name.val == "" {
		return
	}
	switch prog {
	case "busybox", "toybox":
		if as != "busybox" && as != "toybox" {
			inv.wraps = append(slices.Clip(inv.wraps), Wrapper{Name: prog, Argv: []string{inv.args[0].val}})
			inv.args = append([]field{lit(as)}, inv.args[1:]...)
			return
		}
	}
	inv.notes = append(slices.Clip(inv.notes), by+" starts "+prog+" under the name "+name.val+
		", which some programs act on (busybox runs that applet, bash as sh is posix)")
}

// peelSimple peels a wrapper made of options and a fixed number of
// operands before the command.
func (w *walker) peelSimple(inv *invocation, name string, spec optSpec, operands int) bool {
	i, opts := parseOpts(inv.args, spec)
	i += operands
	if i >= len(inv.args) {
		w.emitInv(inv, false)
		return false
	}
	inv.peelOpts(name, i, opts)
	return true
}

// helpOpts are the options with which a wrapper only prints and exits.
var helpOpts = []string{"--help", "--version"}

// Wrappers' own options, from each program's --help and manual: those
// taking a value, and the long names getopt_long matches prefixes of.
var (
	niceSpec    = optSpec{args: "n", longArgs: []string{"adjustment"}, longFlags: helpOpts}
	timeoutSpec = optSpec{flags: "v", args: "sk", longArgs: []string{"signal", "kill-after"},
		longFlags: []string{"foreground", "preserve-status", "verbose", "help", "version"}}
	stdbufSpec = optSpec{args: "ioe", longArgs: []string{"input", "output", "error"}, longFlags: helpOpts}
	setsidSpec = optSpec{flags: "cfwhV", longFlags: []string{"ctty", "fork", "wait", "help", "version"}}
	// GNU time.
	timeSpec = optSpec{flags: "apqvVh", args: "fo", longArgs: []string{"format", "output"},
		longFlags: []string{"append", "portability", "quiet", "verbose", "help", "version"}}
	chrootSpec  = optSpec{longArgs: []string{"userspec", "groups"}, longFlags: []string{"skip-chdir", "help", "version"}}
	tasksetSpec = optSpec{flags: "acphV", longFlags: []string{"all-tasks", "pid", "cpu-list", "help", "version"}}
	chrtSpec    = optSpec{flags: "abdfimoprRvhV", args: "TPD",
		longArgs: []string{"sched-runtime", "sched-period", "sched-deadline"},
		longFlags: []string{"all-tasks", "batch", "deadline", "fifo", "idle", "max", "other", "pid", "rr",
			"reset-on-fork", "verbose", "help", "version"}}
	setprivSpec = optSpec{flags: "dhV",
		longArgs: []string{"inh-caps", "ambient-caps", "bounding-set", "ruid", "euid", "rgid", "egid",
			"reuid", "regid", "groups", "securebits", "pdeathsig", "selinux-label", "apparmor-profile",
			"landlock-access", "landlock-rule"},
		longFlags: []string{"dump", "nnp", "no-new-privs", "clear-groups", "keep-groups", "init-groups",
			"reset-env", "help", "version"}}
	straceSpec = optSpec{flags: "AcCdDfFhiknqrtTvVwxyYzZ", args: "abeEIoOpPsSuUX",
		longArgs: []string{"columns", "detach-on", "env", "attach", "user", "interruptible", "trace",
			"trace-path", "signal", "status", "abbrev", "verbose", "raw", "read", "write", "kvm", "output",
			"string-limit", "const-print-style", "summary-syscall-overhead", "summary-sort-by",
			"summary-columns", "inject", "fault", "decode-pids", "syscall-limit", "argv0"},
		longFlags: []string{"daemonize", "follow-forks", "output-separately", "output-append-mode",
			"instruction-pointer", "stack-traces", "syscall-number", "quiet", "relative-timestamps",
			"absolute-timestamps", "syscall-times", "no-abbrev", "strings-in-hex", "decode-fds",
			"summary-only", "summary", "summary-wall-clock", "successful-only", "failed-only",
			"seccomp-bpf", "debug", "help", "version", "tips", "timestamps", "secontext", "kill-on-exit",
			"stack-trace-frame-limit", "never-actually-restart"}}
	// ltrace 0.7.
	ltraceSpec = optSpec{flags: "bcCfhiLrStTV", args: "aADeFlnopsuwx",
		longArgs:  []string{"align", "debug", "indent", "library", "output", "where"},
		longFlags: []string{"demangle", "no-signals", "help", "version"}}
)

func (w *walker) peelOther(inv *invocation, name string) bool {
	switch name {
	case "nohup":
		i, opts := parseOpts(inv.args, optSpec{longFlags: helpOpts})
		if i >= len(inv.args) {
			w.emitInv(inv, false)
			return false
		}
		if !w.stdoutRedirected(inv) {
			// With a terminal on standard output, nohup appends it to
			// nohup.out (or $HOME/nohup.out when it cannot).
			inv.opens("nohup", ">>", lit("nohup.out"))
		}
		inv.peelOpts(name, i, opts)
		return true
	case "setsid":
		return w.peelSimple(inv, name, setsidSpec, 0)
	case "stdbuf":
		// stdbuf preloads its own libstdbuf: nothing the command line
		// chooses.
		return w.peelSimple(inv, name, stdbufSpec, 0)
	case "time":
		i, opts := parseOpts(inv.args, timeSpec)
		if i >= len(inv.args) || hasOpt(opts, "-h", "-V", "--help", "--version") {
			w.emitInv(inv, false)
			return false
		}
		if o, ok := optVal(opts, "-o", "--output"); ok && o.hasVal {
			op := ">"
			if hasOpt(opts, "-a", "--append") {
				op = ">>"
			}
			inv.opens("time -o", op, o.field)
		}
		inv.peelOpts(name, i, opts)
		return true
	case "chroot":
		i, opts := parseOpts(inv.args, chrootSpec)
		if i+1 >= len(inv.args) {
			w.emitInv(inv, false, "chroot starts an interactive shell")
			return false
		}
		inv.peelOpts(name, i+1, opts)
		return true
	case "taskset":
		_, opts := parseOpts(inv.args, tasksetSpec)
		if hasOpt(opts, "-p", "--pid", "-h", "-V", "--help", "--version") {
			w.emitInv(inv, false)
			return false
		}
		return w.peelSimple(inv, name, tasksetSpec, 1)
	case "chrt":
		i, opts := parseOpts(inv.args, chrtSpec)
		if hasOpt(opts, "-p", "--pid", "-m", "--max", "-h", "-V", "--help", "--version") {
			w.emitInv(inv, false)
			return false
		}
		// The priority; recent versions let policies without one leave
		// it out, so a word that is no number is the command.
		if i < len(inv.args) && !inv.args[i].dyn && intText(inv.args[i].val) && inv.args[i].val != "" {
			i++
		}
		if i >= len(inv.args) {
			w.emitInv(inv, false)
			return false
		}
		inv.peelOpts(name, i, opts)
		return true
	case "setpriv":
		i, opts := parseOpts(inv.args, setprivSpec)
		if i >= len(inv.args) || hasOpt(opts, "-d", "--dump", "-h", "-V", "--help", "--version") {
			w.emitInv(inv, false)
			return false
		}
		if hasOpt(opts, "--ruid", "--euid", "--rgid", "--egid", "--reuid", "--regid", "--groups",
			"--init-groups", "--keep-groups", "--clear-groups", "--inh-caps", "--ambient-caps",
			"--bounding-set", "--securebits", "--selinux-label", "--apparmor-profile") {
			inv.notes = append(slices.Clip(inv.notes), "setpriv runs the command with other user ids, groups or capabilities")
		}
		inv.peelOpts(name, i, opts)
		return true
	case "strace":
		return w.peelStrace(inv)
	case "ltrace":
		return w.peelLtrace(inv)
	}
	w.emitInv(inv, false)
	return false
}

// stdoutRedirected reports a command whose standard output goes to a file
// (its own redirects, or those of the compound command around it).
func (w *walker) stdoutRedirected(inv *invocation) bool {
	for _, rs := range [2][]Redirect{w.redirs, inv.redirs} {
		for _, r := range rs {
			if r.By != "" {
				continue
			}
			switch r.Op {
			case ">", ">>", ">|":
				if r.Fd == "" || r.Fd == "1" {
					return true
				}
			case "&>", "&>>":
				return true
			}
		}
	}
	return false
}

// peelStrace handles strace's own options: -o FILE writes the trace (FILE
// or FILE.PID with -ff), -o '|cmd' and -o '!cmd' pipe it to a shell
// command, -E sets the command's environment, -u runs it as another user,
// and -e inject= rewrites its system calls.
func (w *walker) peelStrace(inv *invocation) bool {
	i, opts := parseOpts(inv.args, straceSpec)
	if i >= len(inv.args) || hasOpt(opts, "-p", "--attach", "-h", "-V", "--help", "--version") {
		w.emitInv(inv, false)
		return false
	}
	forks := 0
	for _, o := range opts {
		if o.name == "-f" {
			forks++
		}
	}
	separately := forks > 1 || hasOpt(opts, "--output-separately")
	var name field
	for _, o := range opts {
		switch o.name {
		case "-o", "--output":
			if !o.hasVal {
				continue
			}
			w.traceOutput(inv, "strace -o", o, hasOpt(opts, "-A", "--output-append-mode"), separately, true)
		case "-E", "--env":
			if isAssignWord(o.val) {
				inv.setEnv(o.field)
			} else {
				inv.unsetEnv(o.val)
			}
		case "-u", "--user":
			inv.notes = append(slices.Clip(inv.notes), "strace -u runs the command as user "+o.val)
		case "--argv0":
			name = o.field
		case "-e", "--inject", "--fault":
			expr := o.val
			if o.name != "-e" {
				expr = o.name[2:] + "=" + expr
			}
			if o.field.dyn || tampers(expr) {
				inv.notes = append(slices.Clip(inv.notes), "strace "+o.name+" "+o.val+" changes what the command's system calls do")
			}
		}
	}
	inv.peelOpts("strace", i, opts)
	if name.val != "" {
		w.argv0(inv, "strace --argv0", name)
	}
	return true
}

// tampers reports a strace qualifying expression that changes the traced
// program's system calls rather than their display: inject and fault
// with a return value, a substituted call, or memory written.
func tampers(expr string) bool {
	kind, _, _ := strings.Cut(expr, "=")
	switch kind {
	case "inject", "fault":
		return strings.Contains(expr, "retval") || strings.Contains(expr, "syscall=") ||
			strings.Contains(expr, "poke_") || strings.Contains(expr, "signal=") || kind == "inject"
	}
	return false
}

// traceOutput records a tracer's output option: a file it writes, or for
// strace a command it pipes the trace to.
func (w *walker) traceOutput(inv *invocation, by string, o opt, appendTo, separately, pipes bool) {
	f := o.field
	if f.dyn {
		if pipes {
			inv.notes = append(slices.Clip(inv.notes), by+" "+f.val+" is only known at run time: it may name a command to run")
		}
		inv.opens(by, ">", f)
		return
	}
	if pipes && (strings.HasPrefix(f.val, "|") || strings.HasPrefix(f.val, "!")) {
		w.runOptionScript(inv, strings.TrimPrefix(by, "strace "), lit(f.val[1:]))
		return
	}
	op := ">"
	if appendTo {
		op = ">>"
	}
	if separately {
		// One file per process, FILE.PID.
		f = field{val: f.val + ".*", dyn: true, glob: true}
	}
	inv.opens(by, op, f)
}

// peelLtrace handles ltrace: -o FILE writes the trace, -F FILE reads a
// configuration file, -u runs the command as another user.
func (w *walker) peelLtrace(inv *invocation) bool {
	i, opts := parseOpts(inv.args, ltraceSpec)
	if i >= len(inv.args) || hasOpt(opts, "-p", "-h", "-V", "--help", "--version") {
		w.emitInv(inv, false)
		return false
	}
	for _, o := range opts {
		switch o.name {
		case "-o", "--output":
			if o.hasVal {
				w.traceOutput(inv, "ltrace -o", o, false, false, false)
			}
		case "-F":
			if o.hasVal {
				inv.opens("ltrace -F", "<", o.field)
			}
		case "-u":
			inv.notes = append(slices.Clip(inv.notes), "ltrace -u runs the command as user "+o.val)
		}
	}
	inv.peelOpts("ltrace", i, opts)
	return true
}

// sudoSpec: -h alone is help, -h HOST names a host; BSD builds add -a
// TYPE and -c CLASS.
var sudoSpec = optSpec{
	flags: "AbBEeHiKklNnPSsVv",
	args:  "aCcDghpRrTtUu",
	longArgs: []string{"user", "group", "prompt", "close-from", "chdir", "chroot",
		"role", "type", "command-timeout", "other-user", "host", "auth-type", "login-class"},
	longFlags: []string{"askpass", "background", "bell", "preserve-env", "edit", "set-home", "help",
		"login", "remove-timestamp", "reset-timestamp", "list", "non-interactive", "preserve-groups",
		"stdin", "shell", "version", "validate"},
}

func (w *walker) peelSudo(inv *invocation) bool {
	i, opts := parseOpts(inv.args, sudoSpec)
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
	if hasOpt(opts, "-s", "--shell", "-i", "--login") {
		inv.notes = append(slices.Clip(inv.notes), "sudo runs the command through the target user's shell")
	}
	inv.peelOpts("sudo", i, opts)
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

// envSpec is GNU env's (with -a from coreutils 9.5) and BSD's -P.
var envSpec = optSpec{
	flags:    "i0v",
	args:     "uCSPa",
	longArgs: []string{"unset", "chdir", "split-string", "argv0"},
	longFlags: []string{"ignore-environment", "null", "debug", "list-signal-handling", "help", "version",
		"block-signal", "default-signal", "ignore-signal"},
}

// peelEnv handles env: options, -S strings and NAME=value words. -u NAME
// removes a variable, -C DIR changes directory (judged where the command
// runs), -a NAME starts the program under another name, and BSD's -P DIR
// looks the program up in DIR.
func (w *walker) peelEnv(inv *invocation) bool {
	args := slices.Clone(inv.args)
	i := 1
	opts := true
	var argv0 *field
	// option applies one option that takes a value; it returns false
	// when the walk is over.
	option := func(c byte, val field) bool {
		switch c {
		case 'S':
			if val.dyn {
				w.emitInv(inv, true, "env -S string comes from "+val.val)
				return false
			}
			split, ok := w.envSplit(inv.callSt, val.val)
			if !ok {
				w.emitInv(inv, false, "env -S string does not parse")
				return false
			}
			args = slices.Concat(args[:i], split, args[i:])
		case 'u':
			inv.unsetEnv(val.val)
		case 'a':
			argv0 = &val
		case 'P':
			inv.notes = append(slices.Clip(inv.notes), "env -P looks the program up in "+val.val)
		}
		return true
	}
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
				name, v, hasVal := strings.Cut(s[2:], "=")
				name, takes := envSpec.long(name)
				// The wrapper's words name the option in full.
				if hasVal {
					args[i] = lit("--" + name + "=" + v)
				} else {
					args[i] = lit("--" + name)
				}
				i++
				if !takes {
					continue
				}
				val := lit(v)
				if !hasVal {
					if i >= len(args) {
						continue
					}
					val = args[i]
					i++
					if val.dyn && name != "split-string" {
						w.emitInv(inv, true, "env option value comes from "+val.val)
						return false
					}
				}
				c := map[string]byte{"unset": 'u', "chdir": 'C', "split-string": 'S', "argv0": 'a'}[name]
				if !option(c, val) {
					return false
				}
				continue
			case len(s) > 1 && s[0] == '-':
				i++
				for j := 1; j < len(s); j++ {
					c := s[j]
					if strings.IndexByte(envSpec.args, c) < 0 {
						continue
					}
					val := lit(s[j+1:])
					if j+1 == len(s) {
						if i >= len(args) {
							break
						}
						val = args[i]
						i++
						if val.dyn {
							w.emitInv(inv, true, "env option value comes from "+val.val)
							return false
						}
					}
					if !option(c, val) {
						return false
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
	if argv0 != nil {
		w.argv0(inv, "env -a", *argv0)
	}
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
	spec := optSpec{flags: "thV", args: "cnpPu", longArgs: []string{"class", "classdata", "pid", "pgid", "uid"},
		longFlags: []string{"ignore", "help", "version"}}
	_, opts := parseOpts(inv.args, spec)
	if hasOpt(opts, "-p", "-P", "-u", "--pid", "--pgid", "--uid", "-h", "-V", "--help", "--version") {
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
	i, opts := parseOpts(inv.args, optSpec{flags: "cl", args: "a"})
	if i >= len(inv.args) {
		w.emitInv(inv, false)
		return false
	}
	inv.peel("exec", i)
	inv.noFunc = true
	if o, ok := optVal(opts, "-a"); ok && o.hasVal {
		w.argv0(inv, "exec -a", o.field)
	}
	return true
}

// stdinArg is the word standing for the arguments xargs reads from stdin.
const stdinArg = "<stdin>"

func (w *walker) peelXargs(inv *invocation) bool {
	spec := optSpec{
		flags:    "0prtxo",
		args:     "adEILnPs",
		optional: "eil",
		longArgs: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "max-lines",
			"process-slot-var"},
		longFlags: []string{"null", "open-tty", "interactive", "no-run-if-empty", "show-limits", "verbose",
			"exit", "help", "version", "eof", "replace"},
	}
	i, opts := parseOpts(inv.args, spec)
	if hasOpt(opts, "--help", "--version", "--show-limits") {
		w.emitInv(inv, false)
		return false
	}
	for _, o := range opts {
		switch o.name {
		case "-a", "--arg-file":
			// The arguments come from FILE instead of stdin.
			if o.hasVal {
				inv.opens("xargs -a", "<", o.field)
			}
		case "--process-slot-var":
			// Each command gets VAR set to its slot number, as if
			// assigned before it (--process-slot-var=PATH changes
			// where the command is looked up).
			if o.hasVal && validName(o.val) {
				inv.setEnv(field{val: o.val + "=", dyn: true, tmpl: o.val + "=" + w.marker("<slot>"), num: true})
			}
		}
	}
	repl := ""
	if o, ok := optVal(opts, "-I", "-i", "--replace"); ok {
		repl = o.val
		if !o.hasVal || (o.name != "-I" && repl == "") {
			repl = "{}"
		}
	}
	inv.peelOpts("xargs", i, opts)
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
		inv.runTimeArgs = "xargs replaces " + repl + " with input read from stdin"
		inv.runTimeNames = w.xargsNames(inv, opts)
		return true
	}
	inv.args = append(slices.Clip(inv.args), field{val: stdinArg, dyn: true, tmpl: w.marker(stdinArg)})
	inv.runTimeArgs = "xargs appends arguments read from stdin"
	inv.runTimeNames = w.xargsNames(inv, opts)
	return true
}

// xargsNames are the names xargs reads when the script shows them
// (Command.RunTimeNames): the words echo or printf write into its pipe,
// or the name tests of the find it reads the output of. nil when xargs
// reads a file (-a) or anything else.
func (w *walker) xargsNames(inv *invocation, opts []opt) []string {
	if hasOpt(opts, "-a", "--arg-file") {
		return nil
	}
	in := inv.stdin
	if in == nil || in.lazy == nil || in.inherited {
		return nil
	}
	prev := in.lazyPrev
	if out := in.get(); out != nil {
		if out.body.dyn {
			return nil
		}
		names := strings.FieldsFunc(out.body.val, func(r rune) bool { return r == 0 || r == ' ' || r == '\t' || r == '\n' })
		if len(names) == 0 {
			return nil
		}
		return names
	}
	if prev == nil || !plainStmtBut(prev) {
		return nil
	}
	c, ok := prev.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return nil
	}
	scratch := in.lazySt.clone()
	w.dry++
	args := w.fields(scratch, c.Args)
	w.dry--
	if len(args) == 0 || args[0].dyn || path0(args[0].val) != "find" {
		return nil
	}
	return findNames(args[1:], true)
}

// findNames are the name patterns (-name, -iname) every path a find
// expression selects matches: of the branches of its top-level -o that
// print (all of them, unless some branch has an action that prints;
// for an -exec, the branch it belongs to, the last one given), each must
// test the name. nil when one does not, when a test is not known
// statically, or when parentheses or a negation make it more than the
// flat list of branches this reads.
func findNames(args []field, printing bool) []string {
	type branch struct {
		names  []string
		prints bool
	}
	var bs []branch
	cur := branch{}
	explicit := false
	started := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !started && (a.dyn || !strings.HasPrefix(a.val, "-") && a.val != "(" && a.val != "!") {
			continue // a starting point
		}
		started = true
		if a.dyn {
			return nil
		}
		switch v := a.val; v {
		case "(", ")":
			return nil
		case "!", "-not":
			// A negated test only narrows the branch further; a negated
			// name test chooses no names.
			if i+1 < len(args) && findTakesArg(args[i+1].val) {
				i++
			}
			i++
		case "-o", "-or":
			bs = append(bs, cur)
			cur = branch{}
		case "-name", "-iname":
			if i+1 >= len(args) || args[i+1].dyn && !args[i+1].glob {
				return nil
			}
			cur.names = append(cur.names, args[i+1].val)
			i++
		case "-print", "-print0", "-printf", "-fprint", "-fprint0", "-fprintf", "-ls", "-fls", "-exec", "-execdir", "-ok", "-okdir":
			cur.prints, explicit = true, true
		}
	}
	bs = append(bs, cur)
	if !printing {
		// The -exec that follows args belongs to the last branch.
		bs, explicit = bs[len(bs)-1:], false
	}
	var out []string
	for _, b := range bs {
		if explicit && !b.prints {
			continue
		}
		if len(b.names) == 0 {
			return nil
		}
		out = append(out, b.names...)
	}
	return out
}

// findTakesArg reports find's tests that take the next word.
func findTakesArg(test string) bool {
	switch test {
	case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname", "-ilname",
		"-type", "-xtype", "-newer", "-user", "-group", "-perm", "-size", "-mtime", "-atime", "-ctime", "-mmin",
		"-amin", "-cmin", "-links", "-inum", "-samefile", "-uid", "-gid", "-fstype", "-used", "-context":
		return true
	}
	return false
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
				sub.runTimeArgs = "find replaces {} with each path found"
				sub.runTimeNames = findNames(args[1:i], false)
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

// flockSpec is util-linux flock's; -c is not among its options (only
// "FILE -c CMD" is), but "-c CMD FILE" is taken as running CMD too.
var flockSpec = optSpec{
	flags:    "sexnoFuhV",
	args:     "wEc",
	longArgs: []string{"timeout", "wait", "conflict-exit-code", "command"},
	longFlags: []string{"shared", "exclusive", "unlock", "nonblocking", "nonblock", "nb", "close", "no-fork",
		"verbose", "help", "version"},
}

// peelFlock handles flock FILE COMMAND... and flock FILE -c CMD, which
// runs CMD with $SHELL -c. flock opens FILE, creating it when it does not
// exist.
func (w *walker) peelFlock(inv *invocation) bool {
	i, opts := parseOpts(inv.args, flockSpec)
	args := inv.args
	if hasOpt(opts, "-h", "-V", "--help", "--version") {
		w.emitInv(inv, false)
		return false
	}
	if o, ok := optVal(opts, "-c", "--command"); ok && o.hasVal {
		if i < len(args) {
			inv.opens("flock", "<>", args[i])
		}
		inv.peelOpts("flock", min(i+1, len(args)), opts)
		inv.args = []field{w.shellOf(inv), lit("-c"), o.field}
		return true
	}
	if i >= len(args) {
		w.emitInv(inv, false)
		return false
	}
	file := i
	if file+1 >= len(args) {
		// flock FD: a descriptor already open.
		w.emitInv(inv, false)
		return false
	}
	inv.opens("flock", "<>", args[file])
	next := args[file+1]
	if !next.dyn && (next.val == "-c" || next.val == "--command") {
		if file+2 >= len(args) {
			w.emitInv(inv, false)
			return false
		}
		script := args[file+2]
		inv.peelOpts("flock", file+1, opts)
		inv.args = []field{w.shellOf(inv), lit("-c"), script}
		return true
	}
	inv.peelOpts("flock", file+1, opts)
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

// peelWatch handles watch, which runs its words joined with spaces by
// sh -c, or with -x as a program.
func (w *walker) peelWatch(inv *invocation) bool {
	spec := optSpec{flags: "bcCegtxprwhv", optional: "d", args: "nq", longArgs: []string{"interval", "equexit"},
		longFlags: []string{"beep", "color", "no-color", "differences", "errexit", "chgexit", "precise",
			"no-title", "no-wrap", "no-rerun", "exec", "help", "version"}}
	i, opts := parseOpts(inv.args, spec)
	if i >= len(inv.args) || hasOpt(opts, "-h", "-v", "--help", "--version") {
		w.emitInv(inv, false)
		return false
	}
	if hasOpt(opts, "-x", "--exec") {
		inv.peelOpts("watch", i, opts)
		return true
	}
	cmd := joinFields(w, inv.args[i:])
	inv.peelOpts("watch", i, opts)
	inv.args = []field{lit("sh"), lit("-c"), cmd}
	return true
}

func (w *walker) peelNamespace(inv *invocation, name string) bool {
	var spec optSpec
	if name == "nsenter" {
		spec = optSpec{flags: "aFZhV", args: "tSGW", optional: "muinpUCTrw",
			longArgs: []string{"target", "setuid", "setgid", "wdns", "env"},
			longFlags: []string{"all", "mount", "uts", "ipc", "net", "pid", "cgroup", "user", "time", "root", "wd",
				"preserve-credentials", "keep-caps", "no-fork", "follow-context", "user-parent", "help", "version"}}
	} else {
		spec = optSpec{flags: "frchV", optional: "muinpUCT",
			args: "RwSGl",
			longArgs: []string{"root", "wd", "setuid", "setgid", "load-interp", "propagation",
				"setgroups", "map-user", "map-group", "map-users", "map-groups", "monotonic", "boottime"},
			longFlags: []string{"mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time", "fork",
				"map-root-user", "map-current-user", "map-auto", "kill-child", "mount-proc", "keep-caps",
				"mount-binfmt", "help", "version"}}
	}
	i, opts := parseOpts(inv.args, spec)
	if hasOpt(opts, "-h", "-V", "--help", "--version") {
		w.emitInv(inv, false)
		return false
	}
	if i >= len(inv.args) {
		w.emitInv(inv, false, name+" starts an interactive shell")
		return false
	}
	inv.peelOpts(name, i, opts)
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

// scriptSpec is util-linux script's; its options may follow the file.
var scriptSpec = optSpec{flags: "aefqhV", args: "cEIOBTmo", optional: "t",
	longArgs: []string{"command", "echo", "log-in", "log-out", "log-io", "log-timing", "logging-format",
		"output-limit"},
	longFlags: []string{"append", "return", "flush", "force", "quiet", "timing", "help", "version"},
	permute:   true}

// peelScript handles util-linux script [options] [FILE]: with -c CMD it
// runs CMD with $SHELL -c, otherwise an interactive shell. It writes the
// session to FILE (typescript when no log file is named), to the files
// of -O, -I, -B and -T, and timing to -tFILE.
func (w *walker) peelScript(inv *invocation) bool {
	_, opts, operands := parseOptsOperands(inv.args, scriptSpec)
	if hasOpt(opts, "-h", "-V", "--help", "--version") {
		w.emitInv(inv, false)
		return false
	}
	op := ">"
	if hasOpt(opts, "-a", "--append") {
		op = ">>"
	}
	var cmd *field
	logOut, logIn := false, false
	for _, o := range opts {
		switch o.name {
		case "-c", "--command":
			if o.hasVal {
				f := o.field
				cmd = &f
			}
		case "-O", "--log-out", "-B", "--log-io", "-I", "--log-in":
			logOut = logOut || o.name != "-I" && o.name != "--log-in"
			logIn = logIn || o.name == "-I" || o.name == "--log-in" || o.name == "-B" || o.name == "--log-io"
			if o.hasVal {
				inv.opens("script "+o.name, op, o.field)
			}
		case "-T", "--log-timing", "-t", "--timing":
			f := o.field
			if o.name == "-t" && !f.dyn {
				// -t=FILE is read as -tFILE.
				f = lit(strings.TrimPrefix(f.val, "="))
			}
			if o.hasVal && f.val != "" {
				inv.opens("script "+o.name, op, f)
			}
		}
	}
	switch {
	case !logOut && len(operands) > 0:
		inv.opens("script", op, operands[0])
	case !logOut && !logIn:
		inv.opens("script", op, lit("typescript"))
	}
	if cmd == nil {
		w.emitInv(inv, false, "script starts an interactive shell")
		return false
	}
	inv.peelOpts("script", len(inv.args), opts)
	inv.args = []field{w.shellOf(inv), lit("-c"), *cmd}
	return true
}
