package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// The environment mnemos runs in is the environment the command inherits,
// and whoever starts mnemos chooses it. Some variables make a shell or the
// loader run code that no word of the command shows: a script given to
// mnemos would carry them as assignments the parser judges; inherited,
// nobody would see them. envHazard finds them.
//
// PATH decides which file a program's name runs. An entry that is
// relative (or empty: the working directory) is refused outright; an
// absolute entry inside a directory a command may write (the workspace,
// the temp directories, the caches) is looked into, and a name found
// there first is judged as the path it is (see pathShadows).
//
// The other variables of policy's table (classify.EnvVars: pagers, editors,
// interpreter search paths and options, git's, trace files...) are judged
// by their value. An ordinary value (EDITOR=vim, LESSOPEN="| /usr/bin/lesspipe
// %s", LD_LIBRARY_PATH=/opt/cuda/lib64) is the user's setup. A value that
// loads code from a place commands may write, or runs more than a program
// found outside them, is not: for what the loader or every shell reads it
// refuses the request; for the others it is judged, with each command of
// the programs that read it, as if the command were given it
// (inheritedAssigns): the same classification as GIT_PAGER=... git log.

// envHazard returns why the environment alone may make any command run
// code mnemos cannot judge, or "". roots are the directories commands
// may write (writableRoots).
func envHazard(environ []string, roots []string) string {
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "BASH_FUNC_"):
			return "the environment exports the shell function " + quoteName(strings.TrimSuffix(strings.TrimPrefix(name, "BASH_FUNC_"), "%%")) + ", which replaces a command of that name in every bash"
		case val == "":
			continue
		case name == "BASH_ENV":
			return "the environment sets BASH_ENV, a file every non-interactive bash runs before the command"
		case name == "LD_PRELOAD" || name == "LD_AUDIT":
			return "the environment sets " + name + ", which loads a library into every program"
		case name == "PS4" && (strings.Contains(val, "$(") || strings.Contains(val, "`")):
			return "the environment sets PS4 to run a command whenever a shell traces"
		case name == "PATH":
			for _, dir := range filepath.SplitList(val) {
				if !filepath.IsAbs(dir) {
					if dir == "" {
						dir = "."
					}
					return "the environment's PATH holds the relative directory " + quoteName(dir) + ", so a program's name may run a file of the working directory"
				}
			}
		default:
			v, ok := classify.EnvVarOf(name)
			if !ok || !v.Every || !v.Paths || (v.Effect != classify.EnvLoads && v.Effect != classify.EnvRuns) {
				continue
			}
			if dir, bad := unordinaryEntry(val, roots); bad {
				return "the environment sets " + name + " to load code from " + quoteName(dir) + ", which " + where(dir) + ": it " + v.What
			}
		}
	}
	return ""
}

// where says why a directory is not one the environment may load from.
func where(dir string) string {
	if !filepath.IsAbs(dir) {
		return "is relative to the working directory"
	}
	return "commands may write"
}

// unordinaryEntry returns the first entry of a list of directories or
// files (':' or ';' separated) that is relative, empty (the working
// directory, for the loader) or inside roots.
func unordinaryEntry(val string, roots []string) (string, bool) {
	for _, e := range strings.Split(strings.ReplaceAll(val, ";", ":"), ":") {
		if i := strings.IndexAny(e, "?"); i >= 0 {
			// A Lua pattern (/usr/share/lua/?.lua): its directory.
			e = filepath.Dir(e[:i] + "x")
		}
		if e == "" {
			return ".", true
		}
		if !filepath.IsAbs(e) || underRoots(filepath.Clean(e), roots) {
			return e, true
		}
	}
	return "", false
}

// writableRoots are the directories a confined command may write: the
// workspace, the temp directories, home's cache.
func writableRoots(ws, home string) []string {
	roots := []string{ws, "/tmp", "/var/tmp", "/dev/shm", os.TempDir()}
	if home != "" {
		roots = append(roots, filepath.Join(home, ".cache"))
	}
	return roots
}

func underRoots(d string, roots []string) bool {
	for _, r := range roots {
		if r != "" && (d == r || strings.HasPrefix(d, r+"/")) {
			return true
		}
	}
	return false
}

// inherited is a variable of the inherited environment whose value is not
// ordinary: it is judged with the commands of the programs that read it.
type inherited struct {
	name, assign string
	v            classify.EnvVar
	exec         bool // what it does is running code
}

// inheritedAssigns returns the variables of the environment whose value
// is not ordinary (see the comment at the top), or nil.
func inheritedAssigns(environ []string, roots []string, pathEnv, home string) []inherited {
	var out []inherited
	gitPlain := gitConfigRunsNothing(environ)
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if val == "" {
			continue
		}
		switch {
		case name == "PATH" || name == "PS4" || name == "BASH_ENV" || name == "LD_PRELOAD" || name == "LD_AUDIT" ||
			strings.HasPrefix(name, "BASH_FUNC_"):
			continue // envHazard and pathShadows
		case name == "HOME":
			continue // the user's home, wherever it is
		}
		v, ok := classify.EnvVarOf(name)
		if !ok || v.Effect == classify.EnvNone || v.Every && v.Effect == classify.EnvLoads {
			continue
		}
		j := classify.JudgeEnv(name, val, true)
		if j.Capability == "" {
			continue
		}
		if d, ok := strings.CutPrefix(v.Default, "~/"); ok && home != "" && filepath.Clean(val) == filepath.Join(home, d) {
			continue // where the program looks anyway
		}
		bad := false
		switch v.Effect {
		case classify.EnvRuns:
			bad = !plainCommand(name, val, roots, pathEnv)
		case classify.EnvLoads:
			switch {
			case strings.HasPrefix(name, "GIT_CONFIG_"):
				// Configuration given to every git: core.pager,
				// core.sshCommand, aliases and hooks run from it,
				// unless all of it only takes configuration away.
				bad = !gitPlain
			case v.Paths:
				_, bad = unordinaryEntry(val, roots)
			default:
				bad = !plainOptions(val, roots)
			}
		case classify.EnvWrites, classify.EnvProtocol:
			bad = true
		}
		if bad {
			out = append(out, inherited{name: name, assign: name + "=" + val, v: v, exec: j.Capability == classify.CodeExec})
		}
	}
	return out
}

// gitConfigRunsNothing reports whether the git configuration the
// environment gives only takes configuration away or turns off what runs
// a program: GIT_CONFIG_GLOBAL and GIT_CONFIG_SYSTEM naming /dev/null (no
// file read), GIT_CONFIG_NOSYSTEM, and GIT_CONFIG_COUNT's KEY_n/VALUE_n
// pairs each set to the empty value (a helper list reset, a pager,
// editor, ssh command, hook directory or fsmonitor unset: no program of
// its own) or to one of a few values that run nothing (core.pager cat,
// core.fsmonitor false, safe.bareRepository explicit). Gemini CLI gives
// every shell command such an environment, so that git neither prompts
// nor pages. Anything else (GIT_CONFIG_PARAMETERS, another file, a pair
// past the count or without its key, a count git would refuse) is not:
// each git command is judged as if it set them itself.
func gitConfigRunsNothing(environ []string) bool {
	vars := map[string]string{}
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GIT_CONFIG_") && val != "" {
			vars[name] = val
		}
	}
	n := 0
	if c, ok := vars["GIT_CONFIG_COUNT"]; ok {
		v, err := strconv.Atoi(c)
		if err != nil || v < 0 || v > 1000 {
			return false
		}
		n = v
	}
	seen := map[string]bool{"GIT_CONFIG_COUNT": true}
	for i := 0; i < n; i++ {
		kName, vName := "GIT_CONFIG_KEY_"+strconv.Itoa(i), "GIT_CONFIG_VALUE_"+strconv.Itoa(i)
		seen[kName], seen[vName] = true, true
		key, ok := vars[kName]
		if !ok || !gitConfigPairRunsNothing(key, vars[vName]) {
			return false
		}
	}
	for name, val := range vars {
		switch {
		case seen[name]:
		case (name == "GIT_CONFIG_GLOBAL" || name == "GIT_CONFIG_SYSTEM") && val == "/dev/null":
		case name == "GIT_CONFIG_NOSYSTEM":
			// It only skips the system file.
		default:
			// GIT_CONFIG_PARAMETERS, another file, a pair past the
			// count (git ignores it; a value written there is not
			// worth the guess).
			return false
		}
	}
	return true
}

// gitConfigPairRunsNothing reports a configuration key and value given to
// git that runs no program: the empty value, which unsets (a program
// named by the empty string is none; git pages through no pager and
// starts no fsmonitor for it), or a value of the few that switch
// something off.
func gitConfigPairRunsNothing(key, val string) bool {
	if val == "" {
		return true
	}
	switch strings.ToLower(key) {
	case "core.pager":
		return val == "cat"
	case "core.fsmonitor":
		switch strings.ToLower(val) {
		case "false", "no", "off", "0":
			return true
		}
	case "safe.barerepository":
		return val == "explicit"
	}
	return false
}

// applyInherited gives each command the inherited variables its program
// reads, unless the command sets them itself, so that they are judged as
// its own NAME=value words are.
func applyInherited(cmds []shellparse.Command, vars []inherited) {
	if len(vars) == 0 {
		return
	}
	for i := range cmds {
		c := &cmds[i]
		name := c.Name()
		var add []string
		for _, iv := range vars {
			if name != "" && !iv.v.ReadsEnv(name) {
				continue
			}
			own := false
			for _, a := range c.Assigns {
				if n, _, _ := strings.Cut(a, "="); strings.TrimSuffix(n, "+") == iv.name {
					own = true
					break
				}
			}
			if !own {
				add = append(add, iv.assign)
				if iv.exec {
					c.Notes = append(c.Notes[:len(c.Notes):len(c.Notes)], "the environment sets "+iv.name+", which "+iv.v.What)
				}
			}
		}
		if len(add) > 0 {
			c.Assigns = append(c.Assigns[:len(c.Assigns):len(c.Assigns)], add...)
		}
	}
}

// plainCommand reports a command-valued variable (PAGER, EDITOR,
// GIT_SSH_COMMAND, LESSOPEN...) that runs one program found outside the
// directories commands may write, with options that run nothing else:
// "less -R", "code --wait", "| /usr/bin/lesspipe %s".
func plainCommand(name, val string, roots []string, pathEnv string) bool {
	v := strings.TrimSpace(val)
	if name == "LESSOPEN" || name == "LESSCLOSE" {
		v = strings.TrimSpace(strings.TrimLeft(v, "|-"))
	}
	if strings.ContainsAny(v, ";&|`$()<>{}\\\n\"'*?[") {
		return false
	}
	words := strings.Fields(v)
	if len(words) == 0 {
		return false
	}
	prog := words[0]
	if strings.HasPrefix(prog, "~/") {
		return false
	}
	if strings.Contains(prog, "/") {
		if !filepath.IsAbs(prog) || underRoots(filepath.Clean(prog), roots) {
			return false
		}
	} else if shadowingFile(prog, pathEnv, writableOnPath(pathEnv, roots)) != "" {
		return false
	}
	for _, w := range words[1:] {
		lw := strings.ToLower(w)
		switch {
		case w == "-c" || w == "-e" || w == "--eval" || w == "-x" || w == "--exec" || strings.HasPrefix(w, "--cmd") ||
			strings.HasPrefix(w, "+"):
			// sh -c, perl -e, vim +cmd, less +!cmd: code in the value.
			return false
		case strings.Contains(lw, "command") || strings.Contains(lw, "pkcs11provider") || strings.Contains(lw, "securitykeyprovider"):
			// ssh -o ProxyCommand=..., LocalCommand, KnownHostsCommand.
			return false
		case w == "%s":
			// LESSOPEN's file name.
		case !strings.HasPrefix(w, "-") && strings.Contains(w, "="):
			// An option's value (ssh -o IdentitiesOnly=yes).
			if !plainOptions(w, roots) {
				return false
			}
		case !strings.HasPrefix(w, "-"):
			// An operand (python3 x.py): a file outside the directories
			// commands may write.
			if !filepath.IsAbs(w) || underRoots(filepath.Clean(w), roots) {
				return false
			}
		case !plainOptions(w, roots):
			return false
		}
	}
	return true
}

// writableOnPath are the entries of PATH inside roots.
func writableOnPath(pathEnv string, roots []string) []string {
	var out []string
	for _, dir := range filepath.SplitList(pathEnv) {
		if filepath.IsAbs(dir) && underRoots(filepath.Clean(dir), roots) {
			out = append(out, filepath.Clean(dir))
		}
	}
	return out
}

// pathDirs returns the absolute entries of PATH, clean, each once.
func pathDirs(pathEnv string) []string {
	var out []string
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		if d := filepath.Clean(dir); !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// plainOptions reports option-valued variables (NODE_OPTIONS, RUBYOPT,
// JAVA_TOOL_OPTIONS, MAKEFLAGS...) that name no file relative to the
// working directory or inside roots and no option that loads code by
// itself.
func plainOptions(val string, roots []string) bool {
	for _, f := range strings.FieldsFunc(val, func(r rune) bool { return r == ' ' || r == '\t' || r == '=' || r == ':' || r == ',' || r == ';' }) {
		switch {
		case f == "-r" || f == "--require" || f == "--import" || f == "--loader" || f == "--experimental-loader" ||
			strings.HasPrefix(f, "-javaagent") || strings.HasPrefix(f, "-agentpath") || strings.HasPrefix(f, "-agentlib") ||
			strings.HasPrefix(f, "-XX") && strings.Contains(f, "On") || strings.HasPrefix(f, "-Xbootclasspath") ||
			f == "-d" || strings.HasPrefix(f, "-d:") || f == "-f" || f == "--file" || f == "--makefile" || f == "-E" ||
			f == "--eval" || f == "-C" || f == "--directory" || strings.HasPrefix(f, "@"):
			return false
		}
		if !strings.ContainsAny(f, "/.") {
			continue
		}
		p := f
		if strings.HasPrefix(p, "-") {
			p = strings.TrimLeft(p, "-")
			p = strings.TrimLeft(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
		}
		if p == "" || !strings.Contains(p, "/") && !strings.HasPrefix(p, ".") {
			continue
		}
		if !filepath.IsAbs(p) || underRoots(filepath.Clean(p), roots) {
			return false
		}
	}
	return true
}

// exportedNames are the variables of the environment in policy's table
// (but PATH, which the parser always takes as exported): a script that
// assigns one (PAGER=x; git log) changes what later programs are given.
func exportedNames(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name == "PATH" || name == "HOME" || name == "IFS" {
			continue
		}
		if v, ok := classify.EnvVarOf(name); ok && v.Effect != classify.EnvNone {
			out = append(out, name)
		}
	}
	return out
}

// envValue is the value of a variable of environ ("" when unset).
func envValue(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

func quoteName(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return `"` + s + `"`
}

// writablePathDirs returns the entries of PATH a confined command could
// put a program in: inside the workspace, a temp directory or home's
// cache. Most PATHs have none, and then no name is looked up.
func writablePathDirs(pathEnv, ws, home string) []string {
	return writableOnPath(pathEnv, writableRoots(ws, home))
}

// pathShadows rewrites, in place, the program of each command whose bare
// name PATH resolves into one of the writable directories: "ls" found
// first in WORKSPACE/bin is judged as WORKSPACE/bin/ls, a program of the
// workspace, not the system's ls. It looks only when such directories are
// on PATH, and each name once.
func pathShadows(cmds []shellparse.Command, pathEnv string, writable []string) {
	if len(writable) == 0 {
		return
	}
	found := map[string]string{}
	for i := range cmds {
		c := &cmds[i]
		if c.Dynamic || len(c.Argv) == 0 || c.Argv[0].Dynamic {
			continue
		}
		name := c.Argv[0].Value
		if name == "" || strings.Contains(name, "/") {
			continue
		}
		p, seen := found[name]
		if !seen {
			p = shadowingFile(name, pathEnv, writable)
			found[name] = p
		}
		if p == "" {
			continue
		}
		argv := make([]shellparse.Word, len(c.Argv))
		copy(argv, c.Argv)
		argv[0].Value = p
		c.Argv = argv
		c.Notes = append(c.Notes[:len(c.Notes):len(c.Notes)], "PATH finds "+name+" first in "+filepath.Dir(p)+", a directory commands may write")
	}
}

// shadowingFile returns the executable file name resolves to on pathEnv
// when that file lies in one of the writable directories, else "".
func shadowingFile(name, pathEnv string, writable []string) string {
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			continue
		}
		d := filepath.Clean(dir)
		for _, w := range writable {
			if d == w {
				return p
			}
		}
		return "" // the first match is elsewhere: that file runs
	}
	return ""
}
