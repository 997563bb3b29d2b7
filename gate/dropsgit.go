package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// What an undoable rule's git command drops where the journal does not
// keep it (dropswork.go). The policy lets an undoable rule stand aside
// when every path the command writes lies in the workspace outside the
// excluded directories; but git writes the whole work tree from
// wherever it runs, and git clean -x removes the ignored files, build
// outputs and all: the files in node_modules, dist ... that the journal
// does not keep, where hand-written files may live too (dist/HOTFIX.md).
// So, read from the work tree (never by running git):
//
//   - git clean with -x or -X: an excluded directory below where it
//     cleans that holds a file git does not track is reached;
//   - git clean without them: such a directory that git does not ignore
//     (.gitignore, info/exclude, the global ignore file) is reached;
//   - git reset, checkout, restore, switch ...: a file in an excluded
//     directory that git holds with uncommitted changes is reached;
//   - git stash drop and clear change the repository only: nothing.
//
// What reaches one asks at every level, its reason and card saying what
// the journal does not keep; the rule stands aside only for the rest.

// cleanFlags reads git clean's words: whether it removes ignored files
// (-x or -X), whether it names paths, and whether it only says what it
// would remove (-n, --dry-run).
func cleanFlags(args []string) (ignored, pathspec, dryRun bool) {
	for i := 0; i < len(args); i++ {
		v := args[i]
		switch {
		case v == "--":
			return ignored, pathspec || i+1 < len(args), dryRun
		case v == "-e" || v == "--exclude":
			i++
		case v == "--dry-run":
			dryRun = true
		case strings.HasPrefix(v, "--"):
		case strings.HasPrefix(v, "-") && len(v) > 1:
			for _, c := range v[1:] {
				if c == 'x' || c == 'X' {
					ignored = true
				}
				if c == 'n' {
					dryRun = true
				}
				if c == 'e' {
					// The rest of the word, or the next one, is the pattern.
					if strings.HasSuffix(v, "e") {
						i++
					}
					break
				}
			}
		default:
			pathspec = true
		}
	}
	return ignored, pathspec, dryRun
}

// undoable says what a command an undoable rule matched drops (res.Undoable
// names the rule), and whether the journal keeps all of it.
func (dc *dropCounter) undoable(cmd shellparse.Command, res *policy.Result) dropped {
	d := dropped{what: "it drops work (rule " + fmt.Sprintf("%q", res.Undoable) + ")", kept: true, rule: res.Undoable}
	if dc.ws == "" || len(cmd.Argv) == 0 || filepath.Base(cmd.Argv[0].Value) != "git" {
		return d
	}
	sub, args := gitSubcommand(cmd.Strings()[1:])
	if sub == "stash" || sub == "" {
		return d
	}
	ignoredToo, pathspec, dryRun := cleanFlags(args)
	for _, w := range cmd.Argv {
		if w.Dynamic {
			ignoredToo, pathspec, dryRun = true, true, false
		}
	}
	if sub == "clean" && dryRun {
		return d
	}
	var reached []string
	first := ""
	for _, a := range res.Accesses {
		if a.Capability != classify.FSWrite || a.Dynamic || !classify.Within(dc.ws, a.Target) {
			continue
		}
		root := dc.workTree(a.Target)
		if root == "" {
			root = dc.ws
		}
		if sub == "clean" {
			// It cleans where it runs, or what its paths name (anywhere
			// in the work tree).
			scope := a.Target
			if pathspec {
				scope = root
			}
			reached = append(reached, dc.cleanReaches(root, scope, ignoredToo)...)
			continue
		}
		dirs, f := dc.discardReaches(root)
		reached = append(reached, dirs...)
		if first == "" {
			first = f
		}
	}
	if len(reached) == 0 {
		return d
	}
	const most = 3
	var names []string
	for _, r := range reached {
		if n := dc.rel(r) + "/"; !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) > most {
		names = append(names[:most], "...")
	}
	where := strings.Join(names, ", ")
	switch {
	case sub == "clean" && ignoredToo:
		d.what = "removes the ignored and untracked files in " + where
	case sub == "clean":
		d.what = "removes the untracked files in " + where
	case first != "":
		d.what = "discards the uncommitted changes of " + first
	default:
		d.what = "discards uncommitted changes in " + where
	}
	d.kept = false
	return d
}

// cleanReaches are the directories the journal excludes, below scope in
// the work tree root, that git clean removes files from: each holds a
// file git does not track, and is ignored by git only where ignoredToo
// (-x, -X) says git clean removes ignored files too. A walk too long
// counts scope itself as reached.
func (dc *dropCounter) cleanReaches(root, scope string, ignoredToo bool) []string {
	var out []string
	if dc.excluded(scope, true) {
		return []string{scope}
	}
	ix, ixErr := dc.index(root)
	gi := dc.gitIgnores(root)
	whole := dc.walkDirs(scope, func(q string) bool {
		rel, _ := filepath.Rel(root, q)
		if !ignoredToo && gi.ignored(filepath.ToSlash(rel), true) {
			// git clean leaves what git ignores.
			return false
		}
		if !dc.excluded(q, true) {
			return true
		}
		if ixErr != nil || holdsUntracked(q, root, ix) {
			out = append(out, q)
		}
		return false
	})
	if !whole {
		out = append(out, scope)
	}
	return out
}

// holdsUntracked reports whether the directory dir, in the work tree
// root whose index is ix, holds a file the index does not (or more than
// it checks).
func holdsUntracked(dir, root string, ix *gitIndex) bool {
	visited := 0
	untracked := false
	var walk func(d string) bool
	walk = func(d string) bool {
		f, err := os.Open(d)
		if err != nil {
			return true
		}
		defer f.Close()
		for {
			ents, err := f.ReadDir(256)
			for _, e := range ents {
				if visited++; visited > maxExcludedWalk {
					untracked = true
					return false
				}
				q := filepath.Join(d, e.Name())
				if e.IsDir() {
					if !walk(q) {
						return false
					}
					continue
				}
				rel, _ := filepath.Rel(root, q)
				if !ix.has(filepath.ToSlash(rel)) {
					untracked = true
					return false
				}
			}
			if err != nil {
				return true
			}
		}
	}
	walk(dir)
	return untracked
}

// discardReaches are the directories the journal excludes in the work
// tree root that hold a file git holds with uncommitted changes, which a
// git reset --hard, checkout or restore would discard, and the first
// such file; an index that cannot be read reaches every excluded
// directory there.
func (dc *dropCounter) discardReaches(root string) ([]string, string) {
	ix, err := dc.index(root)
	if err != nil {
		return dc.excludedDirs(root), ""
	}
	var out []string
	first := ""
	for _, e := range ix.entries {
		if !dc.journal.Excluded(dc.rel(filepath.Join(root, filepath.FromSlash(e.path))), false) {
			continue
		}
		dc.visited++
		if dc.visited > maxDropWalk {
			return append(out, root), first
		}
		if why := ix.changed(e); why != "" {
			f := filepath.Join(root, filepath.FromSlash(e.path))
			if first == "" {
				first = dc.rel(f)
			}
			out = append(out, dc.excludedDirOf(f))
		}
	}
	return out, first
}

// excludedDirOf is the outermost directory holding f (below the
// workspace) that the journal excludes.
func (dc *dropCounter) excludedDirOf(f string) string {
	elems := strings.Split(dc.rel(f), "/")
	for i, e := range elems[:len(elems)-1] {
		if slices.Contains(dc.journal.Exclude, e) {
			return filepath.Join(dc.ws, filepath.FromSlash(strings.Join(elems[:i+1], "/")))
		}
	}
	return filepath.Dir(f)
}

// excludedDirs are the directories the journal excludes below root (not
// below one another, nor in .git).
func (dc *dropCounter) excludedDirs(root string) []string {
	var out []string
	whole := dc.walkDirs(root, func(q string) bool {
		if dc.excluded(q, true) {
			out = append(out, q)
			return false
		}
		return true
	})
	if !whole {
		out = append(out, root)
	}
	return out
}

// walkDirs walks the directories below top but .git, on the counter's
// budget (maxDropWalk entries in all): descend says, for each, whether to
// walk into it. It returns false when the budget ran out before the walk
// ended.
func (dc *dropCounter) walkDirs(top string, descend func(dir string) bool) bool {
	var walk func(dir string) bool
	walk = func(dir string) bool {
		f, err := os.Open(dir)
		if err != nil {
			return true
		}
		ents, _ := f.ReadDir(-1)
		f.Close()
		for _, e := range ents {
			if !e.IsDir() || e.Name() == ".git" {
				continue
			}
			if dc.visited++; dc.visited > maxDropWalk {
				return false
			}
			if q := filepath.Join(dir, e.Name()); descend(q) && !walk(q) {
				return false
			}
		}
		return true
	}
	return walk(top)
}
