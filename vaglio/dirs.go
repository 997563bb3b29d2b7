package vaglio

import (
	"path"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// CheckDirs returns the first hit for a command that may run in any of
// dirs (absolute), as Check in each of them would. A command whose words
// cannot name anything outside the directory it runs in, other than
// through absolute paths, is judged once when every directory is ordinary
// (see ordinaryDir): the checks then see the same thing from each, but
// for fixtureStore, which tells apart directories that lie differently
// towards the workspace (wsPlace). From those, it is judged once when
// fixtureStore had nothing to say from the first.
func (p *Prepared) CheckDirs(cmd shellparse.Command, dirs []string) (Hit, bool) {
	return p.ForDirs(dirs).Check(cmd)
}

// DirChecker judges commands that may run in any of a set of directories
// (see CheckDirs), with what it takes to know whether they are all
// ordinary worked out once.
type DirChecker struct {
	p        *Prepared
	dirs     []string
	ordinary bool
	// alike says the ordinary directories also lie alike towards the
	// workspace (wsPlace).
	alike bool
	// clean says every directory is absolute and clean, as a resolver
	// takes it.
	clean bool
}

// ForDirs returns a checker for commands that may run in any of dirs.
func (p *Prepared) ForDirs(dirs []string) DirChecker {
	clean := p.ready
	for _, d := range dirs {
		clean = clean && strings.HasPrefix(d, "/") && isClean(d)
	}
	ordinary := len(dirs) > 1 && p.ready && p.ordinaryDirs(dirs)
	return DirChecker{p: p, dirs: dirs, ordinary: ordinary, alike: ordinary && p.alikeDirs(dirs), clean: clean}
}

// Check is CheckDirs.
func (d DirChecker) Check(cmd shellparse.Command) (Hit, bool) {
	dirs := d.dirs
	if d.ordinary && dirNeutral(cmd) {
		if d.alike {
			dirs = dirs[:1]
		} else if d.clean {
			// The first directory's hit is the one every directory in
			// turn would give; without one, the others are judged alike
			// unless fixtureStore was asked.
			out := d.p.g.judgeFrom(d.p, cmd, dirs[0], dirs[0])
			if out.found || !out.placeRead {
				return out.hit, out.found
			}
			dirs = dirs[1:]
		}
	}
	for _, dir := range dirs {
		var h Hit
		var ok bool
		if d.clean {
			h, ok = d.p.g.checkFrom(d.p, cmd, dir, dir)
		} else {
			h, ok = d.p.Check(cmd, dir)
		}
		if ok {
			return h, true
		}
	}
	return Hit{}, false
}

// dirNeutral reports a command whose every word (program, arguments,
// redirect targets and bodies, assignments, wrappers) is static and holds
// no "..", "~" or "$", and whose relative words name something strictly
// below the directory: not "." itself (nor find's unwritten "."), nor a
// relative program path. Such
// a word names, from an ordinary directory D, D/word, which the guard's
// rules judge by the word's own elements alone.
func dirNeutral(cmd shellparse.Command) bool {
	if cmd.Dynamic || len(cmd.Argv) == 0 {
		return false
	}
	if a0 := cmd.Argv[0].Value; strings.Contains(a0, "/") && !strings.HasPrefix(a0, "/") {
		return false
	}
	if cmd.Name() == "find" && findFromHere(cmd.Argv[1:]) {
		return false // find's unwritten starting point is "."
	}
	if isMkfs(path.Base(cmd.Name())) {
		return false // an image file is judged by whether it is in the workspace
	}
	for _, w := range cmd.Argv {
		if w.Dynamic || !neutralText(w.Value) || gitText(w.Value) {
			return false
		}
	}
	for _, r := range cmd.Redirects {
		if r.Target.Dynamic || !neutralText(r.Target.Value) {
			return false
		}
	}
	for _, a := range cmd.Assigns {
		if !neutralText(a) {
			return false
		}
	}
	for _, wr := range cmd.Wrappers {
		shell := len(wr.Argv) > 0 && isShell(baseName(wr.Argv[0]))
		if len(wr.Argv) > 0 && baseName(wr.Argv[0]) == "find" && findFromHereText(wr.Argv[1:]) {
			return false
		}
		for i := 0; i < len(wr.Argv); i++ {
			if shell && wr.Argv[i] == "-c" {
				i++ // the script, whose commands are judged on their own
				continue
			}
			if !neutralText(wr.Argv[i]) || gitText(wr.Argv[i]) {
				return false
			}
		}
	}
	return true
}

// findFromHere reports find arguments that name no starting point, so
// that find starts from the directory it runs in.
func findFromHere(args []shellparse.Word) bool {
	for i := 0; i < len(args); i++ {
		if args[i].Dynamic {
			return false
		}
		switch a := args[i].Value; {
		case a == "-H" || a == "-L" || a == "-P" || strings.HasPrefix(a, "-O"):
		case a == "-D":
			i++
		default:
			return strings.HasPrefix(a, "-") || a == "(" || a == "!"
		}
	}
	return true
}

// findFromHereText is findFromHere on a wrapper's words.
func findFromHereText(args []string) bool {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-H" || a == "-L" || a == "-P" || strings.HasPrefix(a, "-O"):
		case a == "-D":
			i++
		default:
			return strings.HasPrefix(a, "-") || a == "(" || a == "!"
		}
	}
	return true
}

// gitText reports a relative word that may name a .git directory in the
// directory the command runs in: from the workspace, that is its
// repository, whose delete the guard judges by the directory.
func gitText(s string) bool {
	for strings.HasPrefix(s, "./") {
		s = s[2:]
	}
	return strings.HasPrefix(s, ".git")
}

// neutralText reports text with no "..", "~" or "$", that is not "." (or
// "./") on its own.
func neutralText(s string) bool {
	other := s == "" // holds a byte other than '.' and '/'
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '~', '$', '`':
			return false
		case '.':
			if i+1 < len(s) && s[i+1] == '.' {
				return false
			}
		case '/':
		default:
			other = true
		}
	}
	return other
}

// allOrdinary reports whether every directory is ordinary, and all lie
// alike towards the workspace.
func (p *Prepared) allOrdinary(dirs []string) bool {
	return p.ordinaryDirs(dirs) && p.alikeDirs(dirs)
}

// ordinaryDirs reports whether every directory is ordinary.
func (p *Prepared) ordinaryDirs(dirs []string) bool {
	for _, d := range dirs {
		if !p.ordinaryDir(d) {
			return false
		}
	}
	return true
}

// alikeDirs reports whether the directories lie alike towards the
// workspace. A secret store below the workspace's top is a fixture
// (fixtureStore): the same word is one from the workspace's top, from
// below it, and from outside it.
func (p *Prepared) alikeDirs(dirs []string) bool {
	place := -1
	for _, d := range dirs {
		pl := p.wsPlace(d)
		if pl < 0 || place >= 0 && pl != place {
			return false
		}
		place = pl
	}
	return true
}

// wsPlace says where d lies for fixtureStore: 0 outside the workspace (or
// none is known), 1 at its top, 2 below it; -1 below it under a private
// key name, which fixtureStore reads from the whole path.
func (p *Prepared) wsPlace(d string) int {
	switch {
	case p.ws == "" || !inside(d, p.ws):
		return 0
	case d == p.ws:
		return 1
	}
	for rest := d[len(p.ws)+1:]; ; {
		e, more, ok := strings.Cut(rest, "/")
		if privateKeyName(e) {
			return -1
		}
		if !ok {
			return 2
		}
		rest = more
	}
}

// ordinaryDir reports a directory from which the guard judges a neutral
// word by the word alone: clean and absolute, with no element starting
// with a dot (every floating rule starts with a dot name, which must then
// lie in the word), outside the system trees the anchored rules name, at
// least three levels down under /home, not /usr or /var (which hold
// system directories), not the home directory, its parent
// or above them, neither inside nor above a protected path or a self
// path's directory, and not above the workspace.
// Then D/word is strictly below D, so it is no broad directory (those are
// /, the home directory, its parent, top-level directories, those below
// /usr and /var, and /home/*), nor the workspace's .git (see gitText), no device
// node, and not inside a protected path unless the word's own elements
// put it there from every such D alike.
func (p *Prepared) ordinaryDir(d string) bool {
	if d == "/" || !isClean(d) || !strings.HasPrefix(d, "/") || strings.Contains(d, "/.") {
		return false
	}
	first, rest, _ := strings.Cut(d[1:], "/")
	switch first {
	case "etc", "proc", "sys", "boot", "dev", "root":
		return false
	case "usr", "var":
		if rest == "" {
			return false // holds system directories (/usr/lib, /var/lib)
		}
	case "home", "Users":
		if strings.Count(rest, "/") < 1 {
			return false // /home or /home/NAME (/Users on macOS)
		}
	}
	if !p.protectedLiteral {
		return false
	}
	related := func(x string) bool {
		return x != "" && (inside(d, x) || inside(x, d))
	}
	// Below the home directory is fine (its dot directories are not
	// ordinary by their names); the home directory, its parent and what
	// holds them are broad.
	if p.home != "" && (inside(p.home, d) || inside(p.homeParent, d)) {
		return false
	}
	for _, x := range p.protected {
		if related(x) {
			return false
		}
	}
	// Above the workspace, D/word may be the workspace or hold it.
	if p.ws != "" && d != p.ws && inside(p.ws, d) {
		return false
	}
	for _, s := range p.g.SelfNames {
		if strings.HasPrefix(s, "/") && related(path.Dir(path.Clean(s))) {
			return false
		}
	}
	return true
}

// inside reports whether p is dir or lies below it (both clean, absolute).
func inside(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir) && len(p) > len(dir) && p[len(dir)] == '/'
}
