package gate

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// What find -delete drops (dropswork.go). Its expression is read
// (findexpr.go) and evaluated on what lies below its starting points, as
// find would: only the files it selects count. Below a starting point
// that holds the repository (find . ...), .git is walked too, but what
// the expression selects there is not counted with the work tree: it is
// the repository's own (its index, its objects), and a deletion of any
// of it asks at every level, whatever the journal keeps (rm -rf .git is
// the guard's). A starting point in .git names it: find .git -name
// '*.lock' -delete counts as any other deletion. An expression that
// cannot be read counts every file below its starting points, as a
// recursive rm would, and asks at every level where .git lies below one.

// findGit is what a find expression selects under .git.
type findGit struct {
	// hits are the first few paths it selects there.
	hits []string
	n    int
	// unknown: .git held more than one decision walks.
	unknown bool
	visited int
}

func (dc *dropCounter) findDrops(cmd shellparse.Command, dirs []string) dropped {
	e, ok := parseFind(cmd.Argv)
	if ok && !e.deletes {
		return dropped{}
	}
	var roots []shellparse.Word
	if ok {
		for _, r := range e.roots {
			roots = append(roots, shellparse.Word{Value: r})
		}
	} else {
		roots = findStartWords(cmd.Argv)
	}
	type start struct{ written, abs string }
	var starts []start
	for _, r := range roots {
		if r.Dynamic {
			return dropped{}
		}
		for _, d := range dirs {
			abs := r.Value
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(d, abs)
			}
			abs = filepath.Clean(abs)
			if !classify.Within(dc.ws, abs) {
				// Asked about already (classify).
				return dropped{}
			}
			starts = append(starts, start{r.Value, abs})
			if filepath.IsAbs(r.Value) {
				break
			}
		}
	}
	if len(starts) == 0 {
		return dropped{}
	}
	set := &fileSet{limit: dc.journal.BigDeletion}
	var git findGit
	readable := ok
	if readable {
		for _, s := range starts {
			if !dc.findWalk(e, s.written, s.abs, set, &git) {
				readable = false
				break
			}
		}
	}
	if !readable {
		// Everything below the starting points, as today's rm -r.
		set = &fileSet{limit: dc.journal.BigDeletion}
		below := ""
		for _, s := range starts {
			if g := dc.collectBesideGit(s.abs, set); g != "" && below == "" {
				below = s.written
			}
		}
		if below != "" {
			return dropped{what: "deletes what find's expression selects below " + below + ", .git included (mnemos reads only -name, -iname, -path, -type, -empty, -maxdepth, -mindepth, -prune and the operators)", always: true}
		}
		if d, ok := dc.bigDeletion(set); ok {
			return dc.keeps(d)
		}
		changed, changedKept := "", true
		for _, s := range starts {
			if f, excluded, ok := dc.changedUnder(s.abs, true); ok {
				changed, changedKept = f, !excluded
				break
			}
		}
		return dc.keeps(dc.combine(changed, changedKept, dc.untracked(set.files)))
	}
	if git.n > 0 || git.unknown {
		what := ""
		if git.unknown {
			what = "deletes what find's expression selects below .git, which holds more than one decision checks"
		} else {
			names := make([]string, len(git.hits))
			for i, h := range git.hits {
				names[i] = dc.rel(h)
			}
			more := ""
			if git.n > len(git.hits) {
				more = fmt.Sprintf(" and %d more", git.n-len(git.hits))
			}
			what = "deletes " + strings.Join(names, ", ") + more + ", the repository's own files under .git (find's expression selects them too)"
		}
		return dropped{what: what, always: true}
	}
	if d, ok := dc.bigDeletion(set); ok {
		return dc.keeps(d)
	}
	changed, changedKept := "", true
	for _, s := range starts {
		if f, excluded, ok := dc.findChanged(e, s.written, s.abs); ok {
			changed, changedKept = f, !excluded
			break
		}
	}
	return dc.keeps(dc.combine(changed, changedKept, dc.untracked(set.files)))
}

// findStartWords are find's starting points as classify reads them.
func findStartWords(argv []shellparse.Word) []shellparse.Word {
	var out []shellparse.Word
	args := argv[1:]
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if len(out) == 0 && !args[i].Dynamic {
			if v == "-H" || v == "-L" || v == "-P" || strings.HasPrefix(v, "-O") {
				continue
			}
			if v == "-D" {
				i++
				continue
			}
		}
		if strings.HasPrefix(v, "-") || v == "(" || v == "!" || v == "," {
			break
		}
		out = append(out, args[i])
	}
	if len(out) == 0 {
		out = []shellparse.Word{{Value: "."}}
	}
	return out
}

// namesGit reports whether abs, below the workspace, lies in (or is) a
// .git directory.
func (dc *dropCounter) namesGit(abs string) bool {
	return slices.Contains(strings.Split(dc.rel(abs), "/"), ".git")
}

// findTypeOf is find's letter for the type m.
func findTypeOf(m fs.FileMode) byte {
	switch {
	case m.IsDir():
		return 'd'
	case m&fs.ModeSymlink != 0:
		return 'l'
	case m&fs.ModeNamedPipe != 0:
		return 'p'
	case m&fs.ModeSocket != 0:
		return 's'
	case m&fs.ModeCharDevice != 0:
		return 'c'
	case m&fs.ModeDevice != 0:
		return 'b'
	}
	return 'f'
}

// emptyFunc says, when asked, whether abs (of type typ) is empty as
// find's -empty tests it.
func emptyFunc(abs string, typ byte) func() bool {
	return func() bool {
		switch typ {
		case 'f':
			fi, err := os.Lstat(abs)
			return err == nil && fi.Size() == 0
		case 'd':
			f, err := os.Open(abs)
			if err != nil {
				return false
			}
			defer f.Close()
			names, _ := f.Readdirnames(1)
			return len(names) == 0
		}
		return false
	}
}

// findWalk walks the starting point abs (written as find was given it),
// adding to set the files e deletes outside .git and the excluded
// directories, and to git what it deletes under .git when the starting
// point lies above it. false when a pattern took too long to match.
func (dc *dropCounter) findWalk(e *findExpr, written, abs string, set *fileSet, git *findGit) bool {
	fi, err := os.Lstat(abs)
	if err != nil {
		return true
	}
	named := dc.namesGit(abs)
	readable := true
	excludedVisited := 0
	var visit func(path, name, abs string, typ byte, depth int, inGit bool) bool
	visit = func(path, name, abs string, typ byte, depth int, inGit bool) bool {
		if inGit {
			git.visited++
			if git.visited > maxGitWalk {
				git.unknown = true
				return false
			}
		} else {
			dc.visited++
			if dc.visited > maxDropWalk {
				set.big, dc.cut = true, true
				return false
			}
		}
		if depth >= e.minDepth {
			deleted, ok := e.eval(&findEntry{path: path, name: name, typ: typ, empty: emptyFunc(abs, typ)})
			if !ok {
				readable = false
				return false
			}
			switch {
			case !deleted:
			case inGit:
				if typ != 'd' || emptyFunc(abs, typ)() {
					if git.n++; len(git.hits) < 3 {
						git.hits = append(git.hits, abs)
					}
				}
			case typ != 'd' && !dc.excluded(abs, false):
				set.add(abs)
				if typ == 'f' {
					if fi, err := os.Lstat(abs); err == nil {
						dc.weigh(abs, fi)
					}
				}
			}
		}
		if typ != 'd' || e.maxDepth >= 0 && depth >= e.maxDepth {
			return true
		}
		if !inGit && depth > 0 && dc.excluded(abs, true) {
			// Counts for nothing: its tools make it again. Whether it
			// selects anything there is noted: the journal does not
			// keep it (dropped.swept).
			dc.findSweeps(e, path, abs, depth, &excludedVisited)
			return true
		}
		f, err := os.Open(abs)
		if err != nil {
			return true
		}
		ents, _ := f.ReadDir(-1)
		f.Close()
		// .git first: what is selected there is known before the walk
		// of the work tree runs out.
		slices.SortStableFunc(ents, func(a, b os.DirEntry) int {
			switch {
			case a.Name() == ".git" && b.Name() != ".git":
				return -1
			case b.Name() == ".git" && a.Name() != ".git":
				return 1
			}
			return 0
		})
		for _, c := range ents {
			child := filepath.Join(abs, c.Name())
			g := inGit || c.Name() == ".git" && !named
			if !visit(findJoin(path, c.Name()), c.Name(), child, findTypeOf(c.Type()), depth+1, g) {
				if !readable || !g {
					return false
				}
				// .git too large: its walk ends, the work tree's goes on.
				if !inGit {
					continue
				}
				return false
			}
		}
		return true
	}
	visit(written, findName(written), abs, findTypeOf(fi.Mode()), 0, false)
	return readable
}

// maxSweepWalk bounds the entries of excluded directories one find
// walks to tell whether its expression selects anything there.
const maxSweepWalk = 5000

// findSweeps notes the excluded directory dir (find's path for it, at
// depth) as swept when e deletes a file below it; visited counts against
// maxSweepWalk, past which nothing more is noted.
func (dc *dropCounter) findSweeps(e *findExpr, path, dir string, depth int, visited *int) {
	found := false
	var walk func(path, abs string, depth int)
	walk = func(path, abs string, depth int) {
		if found || e.maxDepth >= 0 && depth >= e.maxDepth {
			return
		}
		f, err := os.Open(abs)
		if err != nil {
			return
		}
		ents, _ := f.ReadDir(-1)
		f.Close()
		for _, c := range ents {
			if *visited++; *visited > maxSweepWalk || found {
				return
			}
			q := filepath.Join(abs, c.Name())
			typ := findTypeOf(c.Type())
			p := findJoin(path, c.Name())
			if depth+1 >= e.minDepth && typ != 'd' {
				if deleted, ok := e.eval(&findEntry{path: p, name: c.Name(), typ: typ, empty: emptyFunc(q, typ)}); ok && deleted {
					found = true
					dc.sweep(q)
					return
				}
			}
			if typ == 'd' {
				walk(p, q, depth+1)
			}
		}
	}
	walk(path, dir, depth)
}

// collectBesideGit adds to set every file below abs outside .git and the
// excluded directories (an expression that cannot be read selects them
// all), and returns the first .git directory met below it, unless abs
// names one.
func (dc *dropCounter) collectBesideGit(abs string, set *fileSet) string {
	named := dc.namesGit(abs)
	found := ""
	fi, err := os.Lstat(abs)
	if err != nil {
		return ""
	}
	if !fi.IsDir() {
		if !dc.excluded(abs, false) {
			set.add(abs)
			dc.weigh(abs, fi)
		}
		return ""
	}
	if dc.excluded(abs, true) {
		return ""
	}
	var walk func(dir string) bool
	walk = func(dir string) bool {
		f, err := os.Open(dir)
		if err != nil {
			return true
		}
		ents, _ := f.ReadDir(-1)
		f.Close()
		for _, e := range ents {
			q := filepath.Join(dir, e.Name())
			if e.Name() == ".git" && !named {
				if found == "" {
					found = q
				}
				continue
			}
			dc.visited++
			if dc.visited > maxDropWalk {
				set.big, dc.cut = true, true
				return false
			}
			if e.IsDir() {
				if dc.excluded(q, true) {
					dc.sweep(q)
					continue
				}
				if !walk(q) {
					return false
				}
				continue
			}
			set.add(q)
			if e.Type().IsRegular() {
				if info, err := e.Info(); err == nil {
					dc.weigh(q, info)
				}
			}
		}
		return true
	}
	walk(abs)
	return found
}

// findChanged finds a file git holds with uncommitted changes that e
// deletes below the starting point abs (written as find was given it):
// what it is, whether it lies in a directory the journal excludes, and
// true; as changedUnder, an index that cannot be read counts as holding
// one.
func (dc *dropCounter) findChanged(e *findExpr, written, abs string) (string, bool, bool) {
	root := dc.workTree(abs)
	if root == "" {
		return "", false, false
	}
	ix, err := dc.index(root)
	if err != nil {
		return dc.rel(abs) + ", whose uncommitted changes git's index cannot tell (" + err.Error() + ")", dc.excluded(abs, true), true
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return "", false, false
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		rel = ""
	}
	for _, en := range ix.under(rel) {
		dc.visited++
		if dc.visited > maxDropWalk {
			return dc.rel(abs) + ", too many files to check for uncommitted changes", dc.excluded(abs, true), true
		}
		below := strings.TrimPrefix(strings.TrimPrefix(en.path, rel), "/")
		p, depth := written, 0
		if below != "" {
			p = findJoin(written, below)
			depth = strings.Count(below, "/") + 1
		}
		if depth < e.minDepth || e.maxDepth >= 0 && depth > e.maxDepth {
			continue
		}
		f := filepath.Join(root, filepath.FromSlash(en.path))
		fi, err := os.Lstat(f)
		if err != nil {
			continue
		}
		typ := findTypeOf(fi.Mode())
		if deleted, ok := e.eval(&findEntry{path: p, name: filepath.Base(f), typ: typ, empty: emptyFunc(f, typ)}); !ok || !deleted {
			if !ok {
				return dc.rel(abs) + ", whose files find's expression selects too slowly to check", dc.excluded(f, false), true
			}
			continue
		}
		if why := ix.changed(en); why != "" {
			return dc.rel(f) + ", " + why, dc.excluded(f, false), true
		}
	}
	return "", false, false
}
