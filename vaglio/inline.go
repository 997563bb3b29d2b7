package vaglio

import (
	"path"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// Interpreters given code inline (python -c, node -e, perl -e, ...) or on
// a here-document are at least ask in the policy, which cannot read the
// code. The guard reads its string literals: a literal that is a shell
// command ("rm -rf /"), a list of literals that is an argv (["rm", "-rf",
// "/"]) and a literal given to a recursive-delete function (rmtree("/"))
// are judged as the commands they are. Forbidden paths in the code are
// found by the forbidden-path check, which looks inside every word.

// maxLiterals bounds the literals read from one piece of code.
const maxLiterals = 256

// inlineCode returns the code an interpreter command runs from its
// arguments or from a here-document, with the interpreter's name.
func inlineCode(cmd shellparse.Command) (string, []string) {
	name := cmd.Name()
	kind := interpreterKind(name)
	if kind == "" {
		return "", nil
	}
	var code []string
	args := cmd.Argv[1:]
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if kind == "deno" {
			if v == "eval" && i+1 < len(args) {
				code = append(code, args[i+1].Value)
			}
			continue
		}
		_, rest, ok := inlineOption(kind, v)
		if !ok {
			continue
		}
		switch {
		case rest != "":
			code = append(code, rest)
		case kind == "pwsh":
			for _, a := range args[i+1:] {
				code = append(code, a.Value)
			}
			i = len(args)
		case i+1 < len(args):
			i++
			code = append(code, args[i].Value)
		}
	}
	for _, r := range cmd.Redirects {
		if r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
			code = append(code, r.Target.Value)
		}
	}
	return name, code
}

// interpreterKind groups the interpreters by how they take inline code.
func interpreterKind(name string) string {
	switch {
	case name == "python" || name == "pypy" || name == "pypy3" || strings.HasPrefix(name, "python") && strings.Trim(name[6:], "0123456789.") == "":
		return "python"
	case name == "perl" || name == "ruby":
		return "perl"
	case name == "node" || name == "nodejs" || name == "bun":
		return "node"
	case name == "deno":
		return "deno"
	case name == "php" || strings.HasPrefix(name, "php") && strings.Trim(name[3:], "0123456789.") == "":
		return "php"
	case name == "lua" || name == "luajit" || strings.HasPrefix(name, "lua") && strings.Trim(name[3:], "0123456789.") == "",
		name == "Rscript" || name == "R" || name == "osascript" || name == "julia" || name == "groovy" ||
			name == "scala" || name == "elixir" || name == "erl" || name == "tclsh" || name == "wish" || name == "jshell":
		return "e"
	case name == "pwsh" || name == "powershell":
		return "pwsh"
	}
	return ""
}

// inlineOption reports whether v is the option that gives inline code,
// and the code glued to it ("-c'print(1)'", "-ne", "--eval=...").
func inlineOption(kind, v string) (string, string, bool) {
	switch kind {
	case "python":
		if strings.HasPrefix(v, "-c") {
			return "-c", v[2:], true
		}
		// A cluster of flags ending in c: "-Bc".
		if len(v) > 2 && v[0] == '-' && v[1] != '-' && strings.HasSuffix(v, "c") && strings.Trim(v[1:len(v)-1], "bBdEhiIOqsSuvx") == "" {
			return "-c", "", true
		}
	case "perl":
		// -e CODE, -E CODE, and clusters such as -ne, -lpe.
		if len(v) > 1 && v[0] == '-' && v[1] != '-' {
			if k := strings.IndexAny(v, "eE"); k > 0 && strings.Trim(v[1:k], "nplaw0s") == "" {
				return v[:k+1], v[k+1:], true
			}
		}
	case "node":
		for _, o := range []string{"--eval", "--print"} {
			if v == o {
				return o, "", true
			}
			if rest, ok := strings.CutPrefix(v, o+"="); ok {
				return o, rest, true
			}
		}
		if v == "-e" || v == "-p" || v == "-pe" {
			return v, "", true
		}
	case "php":
		if strings.HasPrefix(v, "-r") {
			return "-r", v[2:], true
		}
	case "e":
		if v == "-e" || v == "-eval" || v == "--eval" {
			return v, "", true
		}
		if strings.HasPrefix(v, "-e") && len(v) > 2 && v[2] != 'v' {
			return "-e", v[2:], true
		}
	case "pwsh":
		switch strings.ToLower(v) {
		case "-c", "-command", "-commandwithargs", "-cwa":
			return v, "", true
		}
	}
	return "", "", false
}

// codeLiteral is one string literal in a piece of code, with what comes
// just before it.
type codeLiteral struct {
	val    string
	before string // the code between the previous literal and this one
}

// literals returns the string literals of code written in a C-like,
// Python-like or shell-like language: '...', "..." and `...`, with
// backslash escapes. It does not try to be exact; it errs towards finding
// more.
func literals(code string) []codeLiteral {
	var out []codeLiteral
	last := 0
	for i := 0; i < len(code) && len(out) < maxLiterals; i++ {
		q := code[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		var b strings.Builder
		j := i + 1
		for ; j < len(code) && code[j] != q; j++ {
			if code[j] == '\\' && j+1 < len(code) {
				j++
				switch code[j] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				default:
					b.WriteByte(code[j])
				}
				continue
			}
			b.WriteByte(code[j])
		}
		out = append(out, codeLiteral{val: b.String(), before: code[last:i]})
		if j >= len(code) {
			break
		}
		last = j + 1
		i = j
	}
	return out
}

// isDeleteFunc reports code that ends in a call of a function deleting
// the directory tree given as its first argument: the literal that follows
// is that tree ("shutil.rmtree(os.path.expanduser('~'))").
func isDeleteFunc(before string) bool {
	return callsOneOf(before, "rmtree", "rm_rf", "rm_r", "rmSync", "rmdirSync", "removeSync", "rimraf",
		"remove_dir_all", "deleteRecursively", "RemoveAll", "removeTree", "emptyDirSync", "emptyDir", "rm")
}

// isExecFunc reports code that ends in a call of a function running an
// argv given as separate literals (exec "rm", "-rf", "/").
func isExecFunc(before string) bool {
	b := strings.TrimRight(before, " \t\n")
	return strings.HasSuffix(b, "[") || strings.HasSuffix(b, "(") ||
		callsOneOf(before, "exec", "system", "execvp", "execlp", "spawn", "spawnSync", "execFile", "execFileSync")
}

// callsOneOf reports whether code has, as a whole identifier, one of the
// names followed by nothing but an opening parenthesis, spaces or other
// calls' openings up to its end.
func callsOneOf(code string, names ...string) bool {
	for _, n := range names {
		for from := 0; ; {
			k := strings.Index(code[from:], n)
			if k < 0 {
				break
			}
			k += from
			from = k + len(n)
			if k > 0 && isNameByte(code[k-1]) || from < len(code) && isNameByte(code[from]) {
				continue
			}
			rest := strings.TrimLeft(code[from:], " \t")
			if rest == "" || rest[0] == '(' && !strings.Contains(rest, ")") {
				return true
			}
		}
	}
	return false
}

// printCalls are the calls that only write their argument to standard
// output or standard error, in the interpreters inlineCode reads. Each is
// matched where a statement starts, so "os.print(" or "x.puts " is not one.
var printCalls = [...]string{
	"print(", "print ", "puts(", "puts ", "say ", "echo ", "printf(",
	"console.log(", "console.error(", "console.info(", "console.warn(",
	"process.stdout.write(", "process.stderr.write(",
}

// onlyPrints reports code that is nothing but calls printing plain string
// literals ("print('rm -rf /')", "console.log('rm -rf /'); console.log('x')"):
// its literals are text shown to a person, never run. A literal with
// anything a language may interpolate or run inside a string ($, @, {, `)
// or an escape other than \n, \t, \', \" and \\ does not count, nor does any
// other statement (an assignment could rebind print, an import could
// redirect standard output to a shell): then the literals are read as
// usual.
func onlyPrints(code string) bool {
	i, n := 0, 0
	for {
		for i < len(code) && (code[i] == ' ' || code[i] == '\t' || code[i] == '\n' || code[i] == ';') {
			i++
		}
		if i == len(code) {
			return n > 0
		}
		call := ""
		for _, p := range printCalls {
			if strings.HasPrefix(code[i:], p) {
				call = p
				break
			}
		}
		if call == "" {
			return false
		}
		i += len(call)
		paren := strings.HasSuffix(call, "(")
		for i < len(code) && code[i] == ' ' {
			i++
		}
		if i == len(code) || code[i] != '\'' && code[i] != '"' {
			return false
		}
		q := code[i]
		i++
		for ; i < len(code) && code[i] != q; i++ {
			switch code[i] {
			case '$', '@', '{', '`', '\n':
				return false
			case '\\':
				if i+1 == len(code) || !strings.ContainsRune("nt'\"\\", rune(code[i+1])) {
					return false
				}
				i++
			}
		}
		if i == len(code) {
			return false
		}
		i++
		for i < len(code) && code[i] == ' ' {
			i++
		}
		if paren {
			if i == len(code) || code[i] != ')' {
				return false
			}
			i++
		}
		if i < len(code) && code[i] != ';' && code[i] != '\n' && code[i] != ' ' && code[i] != '\t' {
			return false
		}
		n++
	}
}

// inlineCodeCommands returns the commands the code's literals stand for.
func inlineCodeCommands(code string, home string) []shellparse.Command {
	lits := literals(code)
	var out []shellparse.Command
	for i, l := range lits {
		v := strings.TrimSpace(l.val)
		if v == "" {
			continue
		}
		// A literal that is a shell command.
		if strings.ContainsAny(v, " \t\n;|&") && !strings.ContainsAny(v, "\x00") {
			if s, err := shellparse.ParseScript(v, shellparse.Env{Home: home}); err == nil {
				out = append(out, s.Commands...)
			}
		}
		// A literal given to a recursive delete: judged as rm -rf.
		if isDeleteFunc(l.before) {
			out = append(out, shellparse.Command{Argv: []shellparse.Word{{Value: "rm"}, {Value: "-rf"}, {Value: l.val}}})
		}
		// A list of literals that is an argv: ["rm", "-rf", "/"].
		if !isExecFunc(l.before) {
			continue
		}
		argv := []shellparse.Word{{Value: l.val}}
		for _, n := range lits[i+1:] {
			if strings.Trim(n.before, " \t\n,") != "" {
				break
			}
			argv = append(argv, shellparse.Word{Value: n.val})
		}
		if len(argv) > 1 && hasRules(path.Base(argv[0].Value)) {
			out = append(out, shellparse.Command{Argv: argv})
		}
	}
	return out
}

// inlineIrrecoverable runs the irrecoverable check on what an
// interpreter's inline code stands for.
func (c *checker) inlineIrrecoverable(cmd shellparse.Command) bool {
	name, codes := inlineCode(cmd)
	if len(codes) == 0 {
		return true
	}
	home := c.r.home
	if home == unknownHome {
		home = ""
	}
	// The inner commands are judged by a checker of their own (c's caches
	// hold the candidates of cmd's words), whose hits say where they were
	// found.
	sub := checker{r: c.r, self: c.self, protectedIn: c.protectedIn, out: c.out, prefix: c.prefix + name + " code: "}
	defer func() { c.out = sub.out }()
	printed := outputUnread(cmd)
	for _, code := range codes {
		if printed && onlyPrints(code) {
			continue
		}
		for _, inner := range inlineCodeCommands(code, home) {
			if !sub.irrecoverable(inner) {
				return false
			}
		}
	}
	return true
}

// outputUnread reports a command whose output no other command of the
// script reads as code: it is in no pipeline, no command or process
// substitution and no function (whose caller's output may be piped). What
// such a command prints is shown, not run.
func outputUnread(cmd shellparse.Command) bool {
	for _, ctx := range cmd.Context {
		if strings.ContainsAny(ctx, "|(`") || strings.HasPrefix(ctx, "function") {
			return false
		}
	}
	return true
}

// NoExec reports a command inside the script of a shell told only to read
// it: see noExec.
func NoExec(cmd shellparse.Command) bool { return noExec(cmd) }

// noExec reports a command inside the script of a shell told only to read
// it (sh -n -c '...', bash -o noexec -c '...'): the shell parses the
// script and runs none of it, nor the commands it would substitute. A
// command with redirects is still judged: the guard cannot tell the ones
// written inside the script from the ones on the shell itself.
func noExec(cmd shellparse.Command) bool {
	if len(cmd.Redirects) > 0 {
		return false
	}
	for _, wr := range cmd.Wrappers {
		if len(wr.Argv) == 0 || !strings.HasSuffix(wr.Name, " -c") {
			continue
		}
		switch baseName(wr.Argv[0]) {
		case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish":
		default:
			continue
		}
		if shellNoExec(wr.Argv[1:]) {
			return true
		}
	}
	return false
}

// shellNoExec reads a shell's options as the shell does, in order: -n or
// -o noexec turns reading-only on, +n or +o noexec turns it off, fish's
// --no-execute turns it on.
func shellNoExec(opts []string) bool {
	on := false
	for i := 0; i < len(opts); i++ {
		s := opts[i]
		switch {
		case s == "--" || s == "-" || len(s) < 2 || s[0] != '-' && s[0] != '+':
			return on
		case s == "--no-execute":
			on = true
			continue
		case strings.HasPrefix(s, "--"):
			continue
		}
		set := s[0] == '-'
		for _, c := range s[1:] {
			switch c {
			case 'n':
				on = set
			case 'o':
				if i+1 < len(opts) {
					i++
					if opts[i] == "noexec" {
						on = set
					}
				}
			case 'O':
				i++
			}
		}
	}
	return on
}
