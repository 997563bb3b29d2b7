package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// What you approve is what runs. A person approves a command line in a
// directory; what it does depends on more than its words: the file PATH
// finds for the program's name, the script or makefile it executes, and
// the environment variables that change what runs (policy's table of
// them). A one-shot ticket is bound to all of these: the request key
// includes a digest of them, computed when the request asks and again
// when a rerun would spend the ticket. An edited script, another PAGER,
// a program replaced on PATH give another key, so the ticket is not
// spent and the request asks again. A rule remembered on approval
// carries the digest of its command (its pin) and matches only while
// the digest holds.
//
// What is bound, for each simple command:
//
//   - exe NAME: the file PATH resolves a bare name to (the inherited PATH,
//     or the command's own PATH=...), by path, and, when the user may
//     change the file or its directory, by identity (device, inode, size,
//     modification and change times), which any write or replacement
//     changes and no one can set back;
//   - file PATH: the content (SHA-256) of the script the command runs:
//     the operand of an interpreter (python3 x.py, bash x.sh, node x.js,
//     perl, ruby, php -f, lua...), a program named by a path (./build.sh),
//     source FILE, awk/sed -f FILE, make's makefiles (-f FILE, or
//     GNUmakefile, makefile, Makefile in its directory, -C DIR applied),
//     package.json for npm/pnpm/yarn/bun run; "absent" when it does not
//     exist (creating it changes the key);
//   - file PATH: the patch patch, git apply and git am apply (-i FILE,
//     their operands);
//   - file PATH, listing DIR: what the command loads beyond its script
//     (bindloads.go): the files its makefiles include, what the
//     package.json scripts npm runs run, pytest's conftest.py and
//     configuration files, python -m's module, a program read from a
//     file on stdin;
//   - write PATH, patch: the digest of what a file tool writes
//     (written.go);
//   - env NAME: a digest of the value of each variable of the inherited
//     environment in policy's table that the loader or every shell reads
//     (LD_*, BASH_ENV...), of PATH, of those the table says the program
//     reads by name (GIT_* for git, PYTHON* for python...), and of any
//     whose value is not ordinary (see environ.go). An ordinary PAGER or
//     SHELL, which any program may read, is the user's setup: the gate
//     judges a command the same whatever its value, and binding it would
//     only make the same request ask again in another terminal.
//
// sh -c 'code' and python3 -c 'code' run no file: their code is in the
// words already bound.

// binding computes the facts of one request on first use: a request
// settled by rules and the table needs none.
type binding struct {
	cmds  []shellparse.Command
	place classify.Place
	env   envFacts
	// written is what a file tool writes (written.go).
	written *Written
	pins    map[string]string // Pin's, by command

	facts []string
	done  bool
}

func (b *binding) get() []string {
	if b == nil {
		return nil
	}
	if !b.done {
		f := append(requestFacts(b.cmds, b.place, b.env), writtenFacts(b.written)...)
		slices.Sort(f)
		b.facts, b.done = f, true
	}
	return b.facts
}

// pin is the digest a rule remembered for the request carries: that of
// its command, "" when the request is not one command.
func (b *binding) pin() string {
	if b == nil || len(b.cmds) != 1 {
		return ""
	}
	return commandPin(b.cmds[0], b.place, b.env, writtenFacts(b.written)...)
}

// digest is what the request key binds ("" when nothing is).
func (b *binding) digest() string { return factsDigest(b.get()) }

func factsDigest(facts []string) string {
	if len(facts) == 0 {
		return ""
	}
	h := sha256.New()
	for _, f := range facts {
		io.WriteString(h, f)
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// requestFacts are the facts of every command of a request, sorted and
// without duplicates.
func requestFacts(cmds []shellparse.Command, place classify.Place, env envFacts) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, commandFacts(c, place, env)...)
	}
	if place.Packages != nil {
		// The project's package-manager configuration that named the
		// registries on the card (packages.go).
		for _, p := range place.Packages.Sources {
			out = append(out, "file "+p+" "+fileDigest(p))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// commandPin is the digest a remembered rule for this command carries;
// extra are the request's facts beyond its commands' (what a file tool
// writes).
func commandPin(c shellparse.Command, place classify.Place, env envFacts, extra ...string) string {
	f := append(commandFacts(c, place, env), extra...)
	slices.Sort(f)
	f = slices.Compact(f)
	if len(f) == 0 {
		// Nothing to bind is itself a fact: the pin is never empty.
		f = []string{"none"}
	}
	return factsDigest(f)
}

// envFacts is the inherited environment as the binding reads it. known
// says whether it is known (Config.Environ): without it, a bare name is
// not looked up. unusual are the variables whose value is not ordinary.
type envFacts struct {
	vars    []string
	known   bool
	unusual []string
	// binPath, when set, is the PATH a package.json script runs with
	// (node_modules/.bin first): what a bare name finds there.
	binPath string
	// budget is what is left of the work one command's facts may take
	// (maxBindWork): scripts that run scripts that run scripts could
	// otherwise keep the decision waiting past an agent's hook timeout,
	// which some agents answer by running the command.
	budget *int
}

// maxBindWork bounds the scripts parsed and the trees walked for one
// command's facts; beyond it the binding holds the fact "truncated".
const maxBindWork = 2000

// spend takes n units of the work budget, reporting whether there were.
func (e envFacts) spend(n int) bool {
	if e.budget == nil {
		return true
	}
	if *e.budget < n {
		*e.budget = 0
		return false
	}
	*e.budget -= n
	return true
}

// commandFacts lists what one command's effect depends on beyond its
// words.
func commandFacts(c shellparse.Command, place classify.Place, env envFacts) []string {
	if env.budget == nil {
		work := maxBindWork
		env.budget = &work
	}
	return commandFactsDepth(c, place, env, 0)
}

// commandFactsDepth is commandFacts for a command run by a script depth
// levels down (a package.json script's).
func commandFactsDepth(c shellparse.Command, place classify.Place, env envFacts, depth int) []string {
	name := c.Name()
	if name == "" {
		return nil
	}
	if !env.spend(1) {
		return []string{"truncated"}
	}
	var out []string
	prog := c.Argv[0].Value
	dirs := place.Dirs
	if place.UnknownDir {
		dirs = nil
	}
	if strings.Contains(prog, "/") {
		for _, p := range resolveIn(prog, dirs) {
			out = append(out, "file "+p+" "+fileDigest(p))
		}
	} else if env.known && !shellBuiltin(name) {
		pathEnv := envValue(env.vars, "PATH")
		if env.binPath != "" {
			pathEnv = env.binPath
		}
		for _, a := range c.Assigns {
			if v, ok := strings.CutPrefix(a, "PATH="); ok {
				pathEnv = v
			}
		}
		out = append(out, "exe "+name+" "+lookPathIdentity(name, pathEnv, dirs))
	}
	for _, f := range scriptFiles(c, name) {
		for _, p := range resolveIn(f, dirs) {
			out = append(out, "file "+p+" "+fileDigest(p))
		}
	}
	for _, d := range dirs {
		out = append(out, loadFacts(c, name, d, place, env, depth)...)
	}
	for _, kv := range env.vars {
		n, v, _ := strings.Cut(kv, "=")
		e, ok := classify.EnvVarOf(n)
		if !ok || v == "" || e.Effect == classify.EnvNone || !e.ReadsEnv(name) {
			continue
		}
		if !e.Every && n != "PATH" && len(e.Programs) == 0 && !slices.Contains(env.unusual, n) {
			continue // an ordinary PAGER, SHELL, HOME: the user's setup
		}
		sum := sha256.Sum256([]byte(v))
		out = append(out, "env "+n+" "+hex.EncodeToString(sum[:8]))
	}
	return out
}

// describeFacts is what a person is shown of the facts: the files and
// programs by name, the variables by name only (their values may hold
// secrets).
func describeFacts(facts []string) []string {
	var out []string
	for _, f := range facts {
		kind, rest, _ := strings.Cut(f, " ")
		switch kind {
		case "env":
			n, _, _ := strings.Cut(rest, " ")
			out = append(out, "environment "+n)
		case "exe":
			n, id, _ := strings.Cut(rest, " ")
			p, _, _ := strings.Cut(id, "@")
			out = append(out, "program "+n+" = "+p)
		default:
			out = append(out, f)
		}
	}
	return out
}

// resolveIn makes a path absolute against each candidate directory.
func resolveIn(p string, dirs []string) []string {
	if filepath.IsAbs(p) {
		return []string{filepath.Clean(p)}
	}
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		out = append(out, filepath.Join(d, p))
	}
	return out
}

// maxHashed bounds the files hashed whole; a larger one is bound by its
// identity.
const maxHashed = 64 << 20

// fileDigest is "sha256:HEX" of a regular file's content, its identity
// when it is larger than maxHashed, or "absent" / "unreadable" /
// "not-a-file".
func fileDigest(p string) string {
	fi, err := os.Stat(p)
	switch {
	case err != nil && os.IsNotExist(err):
		return "absent"
	case err != nil:
		return "unreadable"
	case !fi.Mode().IsRegular():
		return "not-a-file"
	case fi.Size() > maxHashed:
		return "id:" + fileIdentity(fi)
	}
	f, err := os.Open(p)
	if err != nil {
		return "unreadable"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxHashed+1)); err != nil {
		return "unreadable"
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// lookPathIdentity resolves a program name as the shell would on
// pathEnv and returns "PATH@IDENTITY" (identity only when the user could
// change the file), or "absent".
func lookPathIdentity(name, pathEnv string, dirs []string) string {
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		for _, d := range resolveIn(dir, dirs[:min(1, len(dirs))]) {
			p := filepath.Join(d, name)
			fi, err := os.Stat(p)
			if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
				continue
			}
			if systemOwned(p, fi) {
				return p
			}
			return p + "@" + fileIdentity(fi)
		}
	}
	return "absent"
}

// systemOwned reports a file that neither the user nor a command run as
// the user can change: it and its directory belong to root, and neither
// group nor others may write them. The user root owns everything.
func systemOwned(p string, fi fs.FileInfo) bool {
	if os.Geteuid() == 0 {
		return false
	}
	uid, ok := policy.FileOwner(fi)
	if !ok || uid != 0 || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	di, err := os.Stat(filepath.Dir(p))
	if err != nil {
		return false
	}
	duid, ok := policy.FileOwner(di)
	return ok && duid == 0 && di.Mode().Perm()&0o022 == 0
}

// shellBuiltin reports a name bash runs itself, whatever PATH says.
func shellBuiltin(name string) bool {
	switch name {
	case "cd", "echo", "printf", "read", "export", "declare", "typeset", "local", "readonly", "unset",
		"set", "shift", "test", "[", "[[", "true", "false", ":", "source", ".", "eval", "exec", "exit",
		"return", "alias", "unalias", "type", "command", "builtin", "hash", "pwd", "pushd", "popd",
		"dirs", "umask", "wait", "jobs", "fg", "bg", "kill", "trap", "let", "getopts", "mapfile",
		"readarray", "shopt", "enable", "help", "history", "fc", "times", "ulimit", "break", "continue":
		return true
	}
	return false
}

// scriptFiles are the files a command runs as code, relative or
// absolute, as written (see the comment at the top).
func scriptFiles(c shellparse.Command, name string) []string {
	args := c.Argv[1:]
	for _, a := range args {
		if a.Dynamic {
			return nil // the words are bound; what they name is not known
		}
	}
	family := strings.TrimRight(name, "0123456789.")
	switch family {
	case "python", "pypy":
		return interpreterScript(args, "cm", "WXQ", nil)
	case "node", "nodejs", "tsx", "ts-node":
		return interpreterScript(args, "ep", "rC", []string{"--require", "--import", "--loader", "--experimental-loader", "--conditions", "--env-file", "--title", "--input-type"})
	case "bash", "sh", "dash", "zsh", "ksh", "mksh", "fish":
		return interpreterScript(args, "c", "oO", []string{"--rcfile", "--init-file"})
	case "perl":
		return interpreterScript(args, "eE", "", nil)
	case "ruby":
		return interpreterScript(args, "e", "IrCEx", nil)
	case "lua", "luajit":
		return interpreterScript(args, "e", "l", nil)
	case "php":
		if f, ok := optionArg(args, "-f", ""); ok {
			return []string{f}
		}
		return interpreterScript(args, "rBRFE", "cdz", nil)
	case "Rscript", "tclsh", "wish", "deno", "bun":
		if family == "deno" || family == "bun" {
			if len(args) == 0 || args[0].Value != "run" {
				return packageJSON(c)
			}
			args = args[1:]
		}
		return interpreterScript(args, "e", "", nil)
	case "source", ".":
		if len(args) > 0 {
			return []string{args[0].Value}
		}
	case "awk", "gawk", "mawk", "nawk", "sed", "gsed", "jq", "gojq":
		var out []string
		for i := 0; i < len(args); i++ {
			v := args[i].Value
			switch {
			case (v == "-f" || v == "--file") && i+1 < len(args):
				i++
				out = append(out, args[i].Value)
			case strings.HasPrefix(v, "--file="):
				out = append(out, v[len("--file="):])
			case strings.HasPrefix(v, "-f") && len(v) > 2 && !strings.HasPrefix(v, "--"):
				out = append(out, v[2:])
			}
		}
		return out
	case "make", "gmake":
		return makefiles(values(args))
	case "npm", "pnpm", "yarn":
		return packageJSON(c)
	case "patch", "gpatch":
		return patchFiles(values(args))
	case "git":
		return gitPatchFiles(values(args))
	}
	return nil
}

// packageJSON is the package.json whose scripts (and lifecycle scripts)
// npm, pnpm, yarn or bun run.
func packageJSON(c shellparse.Command) []string {
	if len(c.Argv) < 2 {
		return nil
	}
	return []string{"package.json"}
}

// interpreterScript returns the first operand of an interpreter's
// command line, its script: none when a code option (codeFlags: -c, -e,
// -m...) comes first, or the script is stdin ("-"). valueFlags are short
// options whose value is the next word (or attached), long their long
// counterparts (with "=" or the next word).
func interpreterScript(args []shellparse.Word, codeFlags, valueFlags string, long []string) []string {
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "--":
			if i+1 < len(args) {
				return []string{args[i+1].Value}
			}
			return nil
		case v == "-":
			return nil
		case strings.HasPrefix(v, "--"):
			opt, _, eq := strings.Cut(v, "=")
			if !eq && slices.Contains(long, opt) {
				i++
			}
			if opt == "--eval" || opt == "--print" || opt == "--command" {
				return nil
			}
		case strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+"):
			for k := 1; k < len(v); k++ {
				if strings.IndexByte(codeFlags, v[k]) >= 0 {
					return nil
				}
				if strings.IndexByte(valueFlags, v[k]) >= 0 {
					if k == len(v)-1 {
						i++
					}
					break
				}
			}
		default:
			return []string{v}
		}
	}
	return nil
}

// optionArg returns the value of a short or long option.
func optionArg(args []shellparse.Word, short, long string) (string, bool) {
	for i, a := range args {
		v := a.Value
		switch {
		case v == short || long != "" && v == long:
			if i+1 < len(args) {
				return args[i+1].Value, true
			}
		case long != "" && strings.HasPrefix(v, long+"="):
			return v[len(long)+1:], true
		case strings.HasPrefix(v, short) && len(v) > len(short) && !strings.HasPrefix(v, "--"):
			return v[len(short):], true
		}
	}
	return "", false
}

// Pin implements policy.PinSource for the rules remembered on approval:
// each command's pin, computed once per command of the request.
func (b *binding) Pin(cmd shellparse.Command) string {
	k := strings.Join(cmd.Assigns, "\x00") + "\x00" + cmd.String()
	if pin, ok := b.pins[k]; ok {
		return pin
	}
	pin := commandPin(cmd, b.place, b.env, writtenFacts(b.written)...)
	if b.pins == nil {
		b.pins = map[string]string{}
	}
	b.pins[k] = pin
	return pin
}
