package classify

import (
	"path"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// PlaceOf collects the directories a script may run its commands in: the
// working directory and every static cd target. A cd whose target is not
// static makes relative paths unknown.
func PlaceOf(s *shellparse.Script, cwd, home string) Place {
	pl := Place{Dirs: []string{cwd}, Home: home}
	seen := map[string]bool{cwd: true}
	for _, c := range s.Commands {
		if !ChangesDir(c) {
			continue
		}
		next, ok := CdTargets(c, pl.Dirs, home)
		if !ok {
			pl.UnknownDir = true
			continue
		}
		for _, n := range next {
			if !seen[n] {
				seen[n] = true
				pl.Dirs = append(pl.Dirs, n)
			}
		}
	}
	return pl
}

// ChangesDir reports a command that changes the shell's working directory:
// cd, pushd, popd, chdir.
func ChangesDir(c shellparse.Command) bool {
	switch c.Name() {
	case "cd", "pushd", "popd", "chdir":
		return true
	}
	return false
}

// CdTargets returns the directories a cd, pushd or chdir moves to when it
// starts in any of dirs (a bare cd goes home); ok is false when that is
// not known statically (a computed target, "cd -", popd). The target is
// taken as the shell reads it without CDPATH: whether CDPATH applies is
// the caller's to judge (see CdTargetBare).
func CdTargets(c shellparse.Command, dirs []string, home string) (next []string, ok bool) {
	target, ok := cdTarget(c, home)
	if !ok {
		return nil, false
	}
	if path.IsAbs(target) {
		return []string{path.Clean(target)}, true
	}
	for _, d := range dirs {
		next = append(next, joinClean(d, target))
	}
	return next, true
}

// joinClean is path.Join(dir, rel), without cleaning again what is clean
// already: a clean absolute directory and a clean relative path.
func joinClean(dir, rel string) string {
	if !cleanAbs(dir) || !path.IsAbs(dir) || !cleanRel(rel) {
		return path.Join(dir, rel)
	}
	if dir == "/" {
		return "/" + rel
	}
	return dir + "/" + rel
}

// cleanRel reports whether a relative path is already what path.Clean
// would make of it, and not ".": no empty, "." or ".." element, no
// trailing slash.
func cleanRel(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return p != "" && first != "" && first != "." && first != ".." && cleanAbs(p)
}

// CdTargetBare reports a cd whose target is a bare relative name ("build",
// not "./build" or "/srv"): the one form CDPATH can send elsewhere.
func CdTargetBare(c shellparse.Command, home string) bool {
	target, ok := cdTarget(c, home)
	if !ok || path.IsAbs(target) || target == "." || target == ".." {
		return false
	}
	return !strings.HasPrefix(target, "./") && !strings.HasPrefix(target, "../")
}

func cdTarget(c shellparse.Command, home string) (string, bool) {
	if c.Name() == "popd" {
		return "", false
	}
	var target string
	for _, a := range c.Args() {
		if a == "--" || strings.HasPrefix(a, "-") && a != "-" {
			continue
		}
		target = a
		break
	}
	for _, w := range c.Argv[1:] {
		if w.Dynamic {
			return "", false
		}
	}
	switch {
	case target == "-":
		return "", false
	case target == "" || target == "~":
		target = home
	case strings.HasPrefix(target, "~/"):
		target = home + target[1:]
	}
	return target, target != ""
}
