package gate

import (
	"os"
	"path/filepath"
	"strings"

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

// envHazard returns why the environment alone may make any command run
// code mnemos cannot judge, or "".
func envHazard(environ []string) string {
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
		}
	}
	return ""
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
	roots := []string{ws, "/tmp", "/var/tmp", "/dev/shm", os.TempDir()}
	if home != "" {
		roots = append(roots, filepath.Join(home, ".cache"))
	}
	var out []string
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue // refused by envHazard
		}
		d := filepath.Clean(dir)
		for _, r := range roots {
			if r != "" && (d == r || strings.HasPrefix(d, r+"/")) {
				out = append(out, d)
				break
			}
		}
	}
	return out
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
