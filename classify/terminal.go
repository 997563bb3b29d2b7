package classify

import (
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// Programs that read commands from their terminal.
//
// A pager, an editor, a REPL with no script, a database client, a debugger,
// ftp or a terminal multiplexer runs what is typed at it, shell commands
// included (less's !, vim's :!, psql's \!, gdb's shell). An agent that can
// type into a running program (Codex's write_stdin, tmux send-keys) then
// runs commands no decision sees: its hook is not called for what it
// types. So such a program is judged as a shell whose commands are not
// known: code:exec, asking at every level, unless it cannot read what is
// typed (its output, or its input, goes elsewhere than a terminal), it is
// given what to run (a script, -c, --batch), or it runs in its own secure
// mode, which mnemos run sets (TerminalEnv) and the decision knows of
// (Place.TerminalEnv).

// termKind says how a program reads commands from its terminal (catalog
// flag terminal=).
type termKind uint8

const (
	termNone termKind = iota
	// termPager reads keys from the terminal (/dev/tty) while its output
	// is one, whatever its input: less, more, man, info.
	termPager
	// termInput reads what it runs from standard input when that is a
	// terminal: REPLs, editors, clients, debuggers, multiplexers.
	termInput
)

// TerminalEnv returns env as mnemos run gives it to a gated command: less
// in its secure mode (LESSSECURE=1: no !, |, v, s, :e, -o, -k, LESSOPEN;
// LESSSECURE_ALLOW, which lifts parts of it, removed), and every pager
// variable (PAGER, GIT_PAGER, MANPAGER and any other *PAGER) set to cat,
// so that git, man and the programs that page through $PAGER show their
// output without a pager to type commands at; and GIT_MERGE_AUTOEDIT=no,
// so that git merge and pull take their default message instead of
// opening an editor on the terminal. The decision takes a command to run
// so when Place.TerminalEnv says it does.
func TerminalEnv(env []string) []string {
	out := make([]string, 0, len(env)+6)
	set := map[string]bool{}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "LESSSECURE" || name == "LESSSECURE_ALLOW":
			continue
		case strings.HasSuffix(name, "PAGER"):
			kv = name + "=cat"
			set[name] = true
		}
		out = append(out, kv)
	}
	for _, name := range terminalPagerVars() {
		if !set[name] {
			out = append(out, name+"=cat")
		}
	}
	if !slices.ContainsFunc(out, func(kv string) bool { return strings.HasPrefix(kv, "GIT_MERGE_AUTOEDIT=") }) {
		out = append(out, "GIT_MERGE_AUTOEDIT=no")
	}
	return append(out, "LESSSECURE=1")
}

// terminalPagerVars are the pager variables TerminalEnv sets even when the
// environment does not: those git, man, systemd's tools and gh read, and
// the PAGER the others fall back to.
func terminalPagerVars() []string {
	return []string{"PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "GH_PAGER"}
}

// terminalVars are the variables TerminalEnv decides.
func terminalVar(name string) bool {
	return name == "LESSSECURE" || name == "LESSSECURE_ALLOW" || name == "GIT_MERGE_AUTOEDIT" || strings.HasSuffix(name, "PAGER")
}

// TerminalEnvKept reports whether a script leaves alone what TerminalEnv
// sets for the commands after it: it unsets, declares local or
// unexports none of those variables, nor a variable whose name is not
// known before it runs. (A variable a command is given, NAME=value cmd,
// export NAME=..., is among that command's Assigns, judged there.)
func TerminalEnvKept(cmds []shellparse.Command) bool {
	for _, c := range cmds {
		switch c.Name() {
		case "unset", "declare", "typeset", "local", "export", "readonly":
		default:
			continue
		}
		for _, w := range c.Argv[1:] {
			name, _, _ := strings.Cut(w.Value, "=")
			if w.Dynamic && !strings.HasPrefix(w.Value, "-") || terminalVar(name) {
				return false
			}
		}
	}
	return true
}

// readsTerminal adds what a program that reads commands from its terminal
// does (package comment): code:exec and an ask, with the reason.
func (c *Classification) readsTerminal(cmd shellparse.Command, pl Place, name string, spec toolSpec) {
	args := cmd.Argv[1:]
	if spec.terminal == termNone && spec.kind == kindExec {
		// python3.12, vim.tiny, node18: the program under a versioned
		// or packaged name.
		if base, ok := terminalBase(name); ok {
			name, spec.terminal = base, specOf(base).terminal
		}
	}
	why := ""
	switch spec.terminal {
	case termPager:
		why = pagerReads(cmd, pl, name, spec, args)
	case termInput:
		why = inputReads(cmd, name, spec, args)
	default:
		if spec.kind == kindGit {
			if why = gitPagerReads(cmd, pl, args); why == "" {
				why = gitEditorReads(cmd, pl, args)
			}
		}
	}
	if why == "" {
		return
	}
	c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
	if c.Verb == "read" || c.Verb == "compute" {
		c.Verb, c.Reversibility = "run", "partial"
	}
	c.raise(Ask, "reads commands from its terminal: "+why+", and no decision sees what is typed there")
}

// terminalBase is the catalogued name a program goes by, when it reads
// commands from its terminal under a version's or a package's name:
// python3.12, pypy3.10, node18, lua5.4, vim.tiny.
func terminalBase(name string) (string, bool) {
	cands := make([]string, 0, 3)
	if i := strings.IndexByte(name, '.'); i > 0 {
		cands = append(cands, name[:i])
	}
	cands = append(cands, strings.TrimRight(name, "0123456789.-"))
	for _, b := range cands {
		if b != "" && b != name && specOf(b).terminal != termNone {
			return b, true
		}
	}
	return "", false
}

// pagerReads says why a pager may read commands from a terminal, "" when
// it cannot: its output is not a terminal (it then copies its input, as
// cat does), or it runs in its secure mode.
func pagerReads(cmd shellparse.Command, pl Place, name string, spec toolSpec, args []shellparse.Word) string {
	if !outputMayBeTerminal(cmd) {
		return ""
	}
	switch name {
	case "less", "zless", "bzless", "xzless":
		if keepsTerminalEnv(cmd, pl, "LESSSECURE") {
			return ""
		}
		return name + " runs a shell command typed after ! (mnemos run starts it in its secure mode, LESSSECURE=1)"
	case "man":
		if hasSwitch(args, spec, "-f", "--whatis", "-k", "--apropos", "-w", "--where", "--path", "--location",
			"-W", "--where-cat", "--location-cat", "-c", "--catman", "-u", "--update") {
			// These print a list or a path, through no pager.
			return ""
		}
		if keepsTerminalEnv(cmd, pl, "MANPAGER") {
			return ""
		}
		return "man shows the page through a pager (less), which runs a shell command typed after ! (mnemos run gives it MANPAGER=cat)"
	case "info":
		if hasSwitch(args, spec, "-o", "--output") {
			return ""
		}
		return "info is browsed from the keyboard, and opens any file or manual typed at it"
	case "most":
		return name + " starts an editor when E is typed, which runs shell commands"
	case "bat", "batcat":
		if keepsTerminalEnv(cmd, pl, "BAT_PAGER") || hasSwitch(args, spec, "-P", "--no-paging") {
			return ""
		}
		for _, w := range optionValues(args, spec, []string{"--paging"}) {
			if w.Value == "never" {
				return ""
			}
		}
		return name + " shows a file longer than the screen through a pager (less), which runs a shell command typed after ! (mnemos run gives it BAT_PAGER=cat)"
	case "sensible-pager":
		if keepsTerminalEnv(cmd, pl, "PAGER") {
			return ""
		}
	case "tig", "lazygit", "mc", "ranger", "vifm", "nnn", "lynx", "w3m", "links", "elinks":
		return name + " is driven from the keyboard and runs shell commands typed at it"
	}
	return name + " runs a shell command typed after !, or an editor when v is typed"
}

// gitPagerReads says why a git command may show its output through a
// pager that reads commands from the terminal: a subcommand that pages
// when its output is a terminal, unless git is told not to (--no-pager,
// -P, GIT_PAGER=cat) or mnemos run set GIT_PAGER=cat.
func gitPagerReads(cmd shellparse.Command, pl Place, args []shellparse.Word) string {
	if !outputMayBeTerminal(cmd) {
		return ""
	}
	sub, paginate := "", false
	var rest []shellparse.Word
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if args[i].Dynamic {
			return ""
		}
		switch {
		case v == "--no-pager" || v == "-P":
			return ""
		case v == "-p" || v == "--paginate":
			paginate = true
			continue
		case specOf("git").takes(v):
			i++
			continue
		case strings.HasPrefix(v, "-"):
			continue
		}
		sub, rest = v, args[i+1:]
		break
	}
	if !paginate && !gitPages(sub, rest) {
		return ""
	}
	if keepsTerminalEnv(cmd, pl, "GIT_PAGER") {
		return ""
	}
	what := "git"
	if sub != "" {
		what += " " + sub
	}
	return what + " shows its output through a pager (less), which runs a shell command typed after ! (git --no-pager does not; mnemos run gives it GIT_PAGER=cat)"
}

// gitEditorReads says why a git command may start an editor, or a prompt,
// on its terminal: commit with no message, rebase -i, add -p, revert, tag
// -a, difftool... The editor (GIT_EDITOR, core.editor, VISUAL, EDITOR, vi)
// runs shell commands typed at it. Its input from elsewhere than a
// terminal, or an editor named in GIT_EDITOR (a command of its own,
// judged as such: GIT_EDITOR=true git rebase --continue), starts none.
func gitEditorReads(cmd shellparse.Command, pl Place, args []shellparse.Word) string {
	if !inputMayBeTerminal(cmd) {
		return ""
	}
	for _, a := range cmd.Assigns {
		if n, _, _ := SplitAssign(a); n == "GIT_EDITOR" {
			return ""
		}
	}
	sub, rest, _ := gitSub(args)
	spec := toolSpec{gram: gitGrammar(sub)}
	has := func(names ...string) bool { return hasSwitch(rest, spec, names...) }
	first := ""
	if len(rest) > 0 {
		first = rest[0].Value
	}
	editor := false
	switch sub {
	case "commit":
		fixup := false
		for _, w := range optionValues(rest, spec, []string{"--fixup"}) {
			fixup = fixup || !strings.HasPrefix(w.Value, "amend:") && !strings.HasPrefix(w.Value, "reword:")
		}
		editor = has("-p", "--patch", "--interactive", "-e", "--edit", "-c", "--reedit-message") ||
			!fixup && !has("-m", "--message", "-F", "--file", "-C", "--reuse-message", "--no-edit", "--dry-run")
	case "merge", "pull":
		switch {
		case sub == "pull" && has("-r", "--rebase"):
		case has("-e", "--edit") || first == "--continue":
			editor = true
		case has("--no-edit", "-m", "--message", "-F", "--file", "--ff-only", "--squash", "--no-commit", "--abort", "--quit"):
		default:
			// A merge commit's message is edited when the command runs
			// on a terminal, unless GIT_MERGE_AUTOEDIT=no, which mnemos
			// run sets (TerminalEnv).
			editor = !keepsTerminalEnv(cmd, pl, "GIT_MERGE_AUTOEDIT") && outputMayBeTerminal(cmd)
		}
	case "rebase":
		editor = has("-i", "--interactive", "--edit-todo") || first == "--continue"
	case "cherry-pick":
		editor = has("-e", "--edit") || first == "--continue"
	case "revert":
		editor = !has("--no-edit", "--abort", "--quit", "--skip")
	case "tag":
		editor = has("-e", "--edit") || has("-a", "--annotate", "-s", "--sign", "-u", "--local-user") && !has("-m", "--message", "-F", "--file")
	case "add":
		editor = has("-p", "--patch", "-i", "--interactive", "-e", "--edit")
	case "checkout", "reset", "restore", "stash":
		editor = hasSwitch(rest, spec, "-p", "--patch")
	case "clean":
		editor = has("-i", "--interactive")
	case "notes":
		editor = (first == "add" || first == "append" || first == "edit") && !hasFlag(rest, "-m", "--message", "-F", "--file", "-C", "--reuse-message")
	case "config":
		editor = has("-e", "--edit")
	case "branch":
		editor = has("--edit-description")
	case "difftool", "mergetool":
		return "git " + sub + " starts a diff or merge tool (vimdiff) on its terminal, which runs shell commands typed at it"
	}
	if !editor {
		return ""
	}
	return "git " + sub + " opens an editor (or a prompt) on its terminal (GIT_EDITOR, core.editor, EDITOR, vi), which runs shell commands typed at it (GIT_EDITOR=true, -m or --no-edit open none)"
}

// gitPages reports a git subcommand that shows its output through the
// pager by default when that output is a terminal.
func gitPages(sub string, rest []shellparse.Word) bool {
	switch sub {
	case "log", "show", "diff", "grep", "blame", "annotate", "shortlog", "whatchanged", "range-diff", "help":
		return true
	case "reflog":
		return len(rest) == 0 || rest[0].Value == "show" || strings.HasPrefix(rest[0].Value, "-")
	case "branch", "tag":
		// Listing.
		return len(rest) == 0 || onlyFlags(rest, "-a", "-r", "-v", "-vv", "--all", "--list", "-l", "--remotes", "--verbose")
	case "stash":
		return len(rest) > 0 && (rest[0].Value == "list" || rest[0].Value == "show")
	case "config":
		return hasFlag(rest, "-l", "--list", "--get-regexp")
	}
	return false
}

// inputReads says why a program may read what it runs from a terminal on
// its standard input, "" when it cannot: its input comes from a file or
// from text the script spells out, or it is given what to run.
func inputReads(cmd shellparse.Command, name string, spec toolSpec, args []shellparse.Word) string {
	r := inputForm(name, args)
	if r.batch {
		return ""
	}
	if !r.always && !inputMayBeTerminal(cmd) {
		return ""
	}
	if r.what != "" {
		return r.what
	}
	return name + " runs what is typed at it, shell commands included"
}

// inputRead is what inputForm finds of a program's command line.
type inputRead struct {
	// batch: it is given what to run and does not then read commands.
	batch bool
	// always: it reads commands from the terminal even when its standard
	// input is elsewhere (vim - reads the text there, commands from the
	// terminal).
	always bool
	what   string
}

// inputForm reads a terminal=input program's command line: whether it is
// given what to run (a script, -c, -e, --batch), by program.
func inputForm(name string, args []shellparse.Word) inputRead {
	// script: a first operand is what it runs; code: options that give
	// it what to run (their value, or a file); valued: other options
	// that take a separate value; inter: options that make it read the
	// terminal even so.
	var script bool
	var code, valued, inter []string
	switch name {
	case "python", "python2", "python3", "pypy3", "ipython":
		script, code, valued, inter = true, []string{"-c", "-m"}, []string{"-W", "-X", "--check-hash-based-pycs"}, []string{"-i"}
	case "node":
		script, code, inter = true, []string{"-e", "--eval", "-p", "--print", "--test", "--run"}, []string{"-i", "--interactive"}
		valued = []string{"-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "--input-type", "--title", "--env-file", "--stack-size"}
	case "ruby":
		script, code, valued = true, []string{"-e"}, []string{"-I", "-r", "-C", "-E", "-F", "--encoding"}
	case "perl":
		script, code, valued, inter = true, []string{"-e", "-E"}, []string{"-I", "-M", "-m"}, []string{"-d", "-de", "-dE"}
	case "php":
		script, code, valued, inter = true, []string{"-r", "-f", "-R", "-F", "-B", "-E"}, []string{"-c", "-d", "-z"}, []string{"-a", "--interactive"}
	case "irb":
		// irb FILE reads FILE as what is typed, then ends.
		script, valued = true, []string{"-I", "-r", "-E", "--prompt", "--inf-ruby-mode"}
	case "lua", "luajit":
		script, code, valued, inter = true, []string{"-e"}, []string{"-l"}, []string{"-i"}
	case "julia":
		script, code, inter = true, []string{"-e", "--eval", "-E", "--print"}, []string{"-i"}
		valued = []string{"--project", "-J", "--sysimage", "-t", "--threads", "-p", "--procs", "-L", "--load"}
	case "dc":
		script, code = true, []string{"-e", "--expression", "-f", "--file"}
	case "R":
		code, valued = []string{"-f", "--file", "-e", "CMD"}, []string{"--encoding"}
	case "ghci":
		code = []string{"-e"}
	case "sqlite3":
		// sqlite3 [OPTIONS] [DB [SQL...]]: SQL after the database runs
		// and exits.
		valued = []string{"-cmd", "-init", "-separator", "-newline", "-nullvalue", "-vfs", "-mmap", "-maxsize", "-heap", "-pagecache", "-lookaside", "-escape"}
		if len(operands(name, toolSpec{opts: valued}, args)) >= 2 {
			return inputRead{batch: true}
		}
		return inputRead{what: "sqlite3 runs what is typed at it, shell commands included (.shell, .system)"}
	case "psql":
		code = []string{"-c", "--command", "-f", "--file", "-l", "--list"}
		valued = []string{"-h", "--host", "-p", "--port", "-U", "--username", "-d", "--dbname", "-o", "--output", "-v", "--set",
			"--variable", "-P", "--pset", "-F", "-R", "-T", "-L", "--log-file"}
	case "mysql", "mariadb":
		code, valued = []string{"-e", "--execute"}, []string{"-h", "--host", "-u", "--user", "-P", "--port", "-D", "--database", "-S", "--socket"}
	case "mongosh":
		script, code = true, []string{"--eval", "-f", "--file"}
		valued = []string{"--host", "--port", "-u", "--username", "-p", "--password", "--authenticationDatabase"}
	case "lftp":
		code, valued = []string{"-c", "-f"}, []string{"-p", "-u", "--user", "--password"}
	case "sftp":
		code, valued = []string{"-b"}, []string{"-P", "-i", "-o", "-F", "-J", "-S", "-D", "-B", "-l", "-R", "-s", "-X"}
	case "gdb":
		code = []string{"-batch", "--batch", "-batch-silent", "--batch-silent"}
		valued = []string{"-ex", "--ex", "-iex", "-x", "-ix", "-p", "--pid", "-d", "--directory", "-cd", "--cd", "-s", "--symbols", "-e", "--exec", "-c", "--core"}
	case "lldb":
		code, valued = []string{"-b", "--batch"}, []string{"-o", "--one-line", "-s", "--source", "-p", "--attach-pid", "-n", "--attach-name", "-c", "--core", "-k", "-K"}
	case "emacs":
		code = []string{"--batch", "-batch", "--script", "-script"}
	case "nvim":
		code = []string{"--headless"}
		fallthrough
	case "vi", "vim", "view", "ex":
		// vim - reads the text from its input and its commands from
		// the terminal.
		for _, w := range args {
			if w.Value == "--" {
				break
			}
			if w.Value == "-" {
				return inputRead{always: true, what: name + " - takes the text from its input and runs shell commands typed at the terminal (:!)"}
			}
		}
	case "deno", "bun":
		// deno with nothing to run, and deno repl and bun repl, read
		// the terminal; their other subcommands are given what to run.
		ops := operands(name, toolSpec{}, args)
		if len(ops) > 0 && ops[0].Value == "repl" || name == "deno" && len(ops) == 0 && !hasFlag(args, "-h", "--help", "-V", "--version") {
			return inputRead{what: name + " repl runs what is typed at it, shell commands included (Deno.Command, Bun.spawn)"}
		}
		return inputRead{batch: true}
	case "tmux", "screen":
		return inputRead{always: true, what: name + " runs shells on terminals of its own, and types into them what it is given (send-keys, stuff)"}
	}
	// What to run, given on the command line, makes it run that and
	// end; an option that makes it read the terminal even so, anywhere
	// among its options, wins.
	batch := false
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		opt, _, eq := strings.Cut(v, "=")
		switch {
		case v == "--":
			return inputRead{batch: batch || script && i+1 < len(args)}
		case slices.Contains(inter, v):
			return inputRead{}
		case slices.Contains(code, opt):
			// -c CODE, --eval=CODE, --batch.
			batch = true
			if script {
				// What follows its value is the program's, but for an
				// option that reads the terminal after all.
				if !eq {
					i++
				}
				return inputRead{batch: !afterHasInter(args[min(i+1, len(args)):], inter)}
			}
			if !eq && i+1 < len(args) && args[i+1].Value == "-" {
				// -b -, -f -: what to run comes from the input.
				batch = false
				i++
			}
		case slices.Contains(valued, opt):
			if !eq {
				i++
			}
		case len(v) > 2 && v[0] == '-' && v[1] != '-':
			// A cluster of short options: -ic CODE, -cCODE, -Wignore.
			for j := 1; j < len(v); j++ {
				o := "-" + v[j:j+1]
				if slices.Contains(inter, o) {
					return inputRead{}
				}
				if slices.Contains(code, o) {
					batch = true
					if j == len(v)-1 && script {
						i++
					}
					break
				}
				if slices.Contains(valued, o) {
					if j == len(v)-1 {
						i++
					}
					break
				}
			}
		case strings.HasPrefix(v, "-"):
			// - reads the program from the input; another option.
		case script:
			// A script, its name known or not.
			return inputRead{batch: true}
		}
	}
	return inputRead{batch: batch}
}

// afterHasInter reports an option among words that makes the program
// read its terminal: node -e CODE -i.
func afterHasInter(args []shellparse.Word, inter []string) bool {
	for _, w := range args {
		if w.Value == "--" || !strings.HasPrefix(w.Value, "-") {
			return false
		}
		if slices.Contains(inter, w.Value) {
			return true
		}
	}
	return false
}

// keepsTerminalEnv reports whether a command runs with what TerminalEnv
// sets for the variable named (LESSSECURE, MANPAGER or GIT_PAGER), or
// sets it so itself: its own LESSSECURE=1 (and no LESSSECURE_ALLOW); a
// pager it names in MANPAGER or GIT_PAGER, which is a command of its own,
// judged as such. Otherwise mnemos run gives it (Place.TerminalEnv), and
// no env wrapper takes it away.
func keepsTerminalEnv(cmd shellparse.Command, pl Place, name string) bool {
	own, lessOff := false, false
	for _, a := range cmd.Assigns {
		n, v, known := SplitAssign(a)
		switch {
		case n == "LESSSECURE_ALLOW" && v != "":
			lessOff = true
		case n == "LESSSECURE":
			lessOff = lessOff || !known || v != "1"
			own = own || name == n
		case n == name && name == "GIT_MERGE_AUTOEDIT":
			if !known || v != "no" {
				return false
			}
			own = true
		case n == name:
			own = true
		}
	}
	switch {
	case lessOff && (own || name == "LESSSECURE"):
		// less, or the pager named, runs with less's secure mode
		// taken away (GIT_PAGER=less LESSSECURE= git log).
		return false
	case own:
		return true
	case !pl.TerminalEnv:
		return false
	}
	for _, w := range cmd.Wrappers {
		if clearsEnv(w) {
			return false
		}
	}
	return true
}

// clearsEnv reports a wrapper that removes variables from the command's
// environment: env -i, env -u NAME, exec -c.
func clearsEnv(w shellparse.Wrapper) bool {
	switch w.Name {
	case "env", "exec":
	default:
		return false
	}
	for _, a := range w.Argv[1:] {
		switch {
		case a == "-" || a == "--ignore-environment" || strings.HasPrefix(a, "--unset") || strings.HasPrefix(a, "--ignore"):
			return true
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--"):
			if w.Name == "env" && strings.ContainsAny(a[1:], "iu") || w.Name == "exec" && strings.Contains(a[1:], "c") {
				return true
			}
		}
	}
	return false
}

// outputMayBeTerminal reports whether a command's standard output may be
// a terminal: it goes into no pipe, and its redirects leave it on the
// script's output or send it to a device or a path not known before it
// runs.
func outputMayBeTerminal(cmd shellparse.Command) bool {
	tty := !cmd.StdoutPiped
	for _, r := range cmd.Redirects {
		if r.By != "" {
			continue
		}
		switch r.Op {
		case ">", ">>", ">|":
			if r.Fd == "" || r.Fd == "1" {
				tty = terminalPath(r.Target)
			}
		case "&>", "&>>":
			tty = terminalPath(r.Target)
		case "<>":
			if r.Fd == "1" {
				tty = terminalPath(r.Target)
			}
		case ">&":
			if r.Fd == "" || r.Fd == "1" {
				// >&2 and >&N: another descriptor, perhaps the terminal;
				// >& FILE: that file.
				tty = r.Target.Dynamic || fdWord(r.Target.Value) || terminalPath(r.Target)
			}
		}
	}
	return tty
}

// inputMayBeTerminal reports whether a command's standard input may be a
// terminal, or what a command before it passes on from one: the script
// gives it none, a pipe from a command other than echo or printf, a
// device, or a path not known before it runs.
func inputMayBeTerminal(cmd shellparse.Command) bool {
	tty := cmd.Stdin == "" || cmd.Stdin == "pipe"
	for _, r := range cmd.Redirects {
		if r.By != "" || r.Fd != "" && r.Fd != "0" {
			continue
		}
		switch r.Op {
		case "<", "<>":
			tty = terminalPath(r.Target)
		case "<<", "<<-", "<<<":
			tty = false
		case "<&":
			tty = true
		}
	}
	return tty
}

// terminalPath reports a redirect target that may be a terminal: a
// device other than /dev/null and /dev/zero, /proc (its fd links), or a
// path not known before it runs.
func terminalPath(w shellparse.Word) bool {
	v := w.Value
	if w.Dynamic {
		return true
	}
	if v == "/dev/null" || v == "/dev/zero" {
		return false
	}
	return strings.HasPrefix(v, "/dev/") || strings.HasPrefix(v, "/proc/")
}
