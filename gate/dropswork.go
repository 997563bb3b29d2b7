package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// Work a command drops (issue 21): a deletion of more files than the
// journal's big_deletion, or of files git holds with uncommitted changes,
// or what an undoable rule of the policy names (git reset --hard, git
// clean -f, git checkout -- ...). Only the journal brings such work back,
// so the command asks below level full whatever a grant, a session's
// contained work or an allow rule says, and at full runs only while the
// journal keeps it; its reason and its card say how to undo it. Without
// the journal, a deletion the level would allow asks, and an undoable
// rule stays what it says.
//
// The files are counted when the command is decided, in a walk that stops
// after maxDropWalk entries (a tree too big to count counts as big), and
// weighed: a deletion the journal cannot keep all of (a file above its
// max_file, more than its quota in all, a tree too big to weigh) is not
// kept, and asks at full too, saying why. Directories the journal excludes (node_modules,
// target ...) are not counted: their tools make them again, and the
// journal does not keep them. A deletion outside the workspace asks at
// every level already (classify), and the guard's denials (the
// workspace itself, home, /) stand whatever the journal keeps.

// maxDropWalk bounds the entries one decision visits to count what a
// deletion removes.
const maxDropWalk = 20000

// dropped is what a command drops that only the journal brings back.
type dropped struct {
	// what says it ("deletes 120 files", "deletes src/main.go, which has
	// uncommitted changes", `rule "git reset --hard"`); "" when nothing.
	what string
	// kept says the journal keeps all of it: it lies in the workspace,
	// outside the directories the journal excludes, and fits its bounds.
	kept bool
	// unkept says why the journal cannot keep it although it lies where
	// the journal keeps: a file above max_file, more than the quota, a
	// tree too big to weigh.
	unkept string
}

// dropCounter counts for one decision, reading each work tree's index
// once.
type dropCounter struct {
	ws      string
	journal policy.Journal
	indexes map[string]*gitIndex
	errs    map[string]error
	visited int
	// What the files counted weigh: in all, the first above max_file,
	// and whether a walk was cut short (what it left out is unknown).
	bytes  int64
	tooBig string
	big    int64
	cut    bool
}

func newDropCounter(ws string, j policy.Journal) *dropCounter {
	return &dropCounter{ws: ws, journal: j}
}

// dropsWork says what cmd, whose policy result is res, drops.
func (dc *dropCounter) dropsWork(cmd shellparse.Command, res *policy.Result) dropped {
	if res.Undoable != "" {
		return dropped{what: "it drops work (rule " + fmt.Sprintf("%q", res.Undoable) + ")", kept: true}
	}
	if res.Verb != "delete" || dc.ws == "" {
		return dropped{}
	}
	name := ""
	if len(cmd.Argv) > 0 {
		name = filepath.Base(cmd.Argv[0].Value)
	}
	if name == "rmdir" {
		// It removes empty directories only.
		return dropped{}
	}
	recursive := name != "rm" || rmRecursive(cmd)
	var paths []string
	for _, a := range res.Accesses {
		if a.Capability != classify.FSWrite {
			continue
		}
		if a.Dynamic || a.Target == "" || !classify.Within(dc.ws, a.Target) {
			// Asked about already (a path not known before it runs, a
			// deletion outside the workspace).
			return dropped{}
		}
		if a.Glob {
			m := globMatches(a.Target, dc.journal.BigDeletion+1)
			if len(m) > dc.journal.BigDeletion {
				return dropped{what: fmt.Sprintf("deletes more than %d files (%s)", dc.journal.BigDeletion, dc.rel(a.Target)), kept: true}
			}
			paths = append(paths, m...)
			continue
		}
		paths = append(paths, filepath.Clean(a.Target))
	}
	if len(paths) == 0 {
		return dropped{}
	}
	n, over := 0, false
	for _, p := range paths {
		// Every path is weighed, past big_deletion too (within one
		// decision's walk): whether the journal can keep it all.
		k, big := dc.count(p, recursive, dc.journal.BigDeletion-n)
		n += k
		over = over || big
	}
	if over || n > dc.journal.BigDeletion {
		what := fmt.Sprintf("deletes %d files", n)
		if over {
			what = fmt.Sprintf("deletes more than %d files", dc.journal.BigDeletion)
		}
		return dc.keeps(dropped{what: what, kept: true})
	}
	// Then what git cannot give back: uncommitted changes.
	for _, p := range paths {
		if f, excluded, ok := dc.changedUnder(p, recursive); ok {
			return dc.keeps(dropped{what: "deletes " + f, kept: !excluded})
		}
	}
	return dropped{}
}

// keeps is d, not kept when what the counted files weigh is more than
// the journal keeps (the journal would say so only after the run).
func (dc *dropCounter) keeps(d dropped) dropped {
	if !d.kept {
		return d
	}
	j := dc.journal
	switch {
	case dc.cut:
		d.unkept = "too many files to weigh what the journal would have to keep"
	case dc.tooBig != "":
		d.unkept = fmt.Sprintf("%s holds %s, more than the journal keeps of one file (max_file %s)", dc.tooBig, mib(dc.big), mib(j.MaxFile))
	case j.Quota > 0 && dc.bytes > j.Quota:
		d.unkept = fmt.Sprintf("the files hold %s, more than the journal keeps for a workspace (quota %s)", mib(dc.bytes), mib(j.Quota))
	}
	if d.unkept != "" {
		d.kept = false
	}
	return d
}

// weigh adds a file the deletion removes to what the journal would keep.
func (dc *dropCounter) weigh(p string, fi os.FileInfo) {
	if !fi.Mode().IsRegular() {
		return
	}
	dc.bytes += fi.Size()
	if max := dc.journal.MaxFile; max > 0 && fi.Size() > max && dc.tooBig == "" {
		dc.tooBig, dc.big = dc.rel(p), fi.Size()
	}
}

// mib writes a size in MiB (KiB below one).
func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", (n+1023)>>10)
	}
	return fmt.Sprintf("%d MiB", (n+(1<<20)-1)>>20)
}

// rmRecursive reports whether rm's options remove directories' contents.
func rmRecursive(cmd shellparse.Command) bool {
	for _, w := range cmd.Argv[1:] {
		v := w.Value
		if v == "--" {
			break
		}
		if w.Dynamic || v == "--recursive" || strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.ContainsAny(v, "rR") {
			return true
		}
	}
	return false
}

func (dc *dropCounter) rel(p string) string {
	if r, err := filepath.Rel(dc.ws, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

// excluded reports whether p (below the workspace) lies in, or is, a
// directory the journal excludes.
func (dc *dropCounter) excluded(p string, dir bool) bool {
	return dc.journal.Excluded(dc.rel(p), dir)
}

// count counts the files (anything but a directory) p removes, and
// weighs them: big is set past limit, or when the walk is too long
// (which leaves the rest unweighed). Directories the journal excludes
// count for nothing.
func (dc *dropCounter) count(p string, recursive bool, limit int) (n int, big bool) {
	fi, err := os.Lstat(p)
	if err != nil {
		return 0, false
	}
	if !fi.IsDir() {
		if dc.excluded(p, false) {
			return 0, false
		}
		dc.weigh(p, fi)
		return 1, limit < 1
	}
	if !recursive || dc.excluded(p, true) {
		return 0, false
	}
	var walk func(dir string) bool
	walk = func(dir string) bool {
		f, err := os.Open(dir)
		if err != nil {
			return false
		}
		defer f.Close()
		for {
			ents, err := f.ReadDir(256)
			for _, e := range ents {
				dc.visited++
				if dc.visited > maxDropWalk {
					dc.cut = true
					return true
				}
				if e.IsDir() {
					if !dc.excluded(filepath.Join(dir, e.Name()), true) && walk(filepath.Join(dir, e.Name())) {
						return true
					}
					continue
				}
				n++
				if e.Type().IsRegular() {
					if info, err := e.Info(); err == nil {
						dc.weigh(filepath.Join(dir, e.Name()), info)
					}
				}
			}
			if err != nil {
				return false
			}
		}
	}
	big = walk(p) || n > limit
	return n, big
}

// changedUnder finds a file at p, or below it when recursive, that git
// holds with uncommitted changes: what it is (its path relative to the
// workspace, and why), whether it lies in a directory the journal
// excludes, and true. A work tree whose index cannot be read, or holding
// more entries there than one decision checks, counts as holding one.
func (dc *dropCounter) changedUnder(p string, recursive bool) (string, bool, bool) {
	root := dc.workTree(p)
	if root == "" {
		return "", false, false
	}
	ix, err := dc.index(root)
	if err != nil {
		return dc.rel(p) + ", whose uncommitted changes git's index cannot tell (" + err.Error() + ")", dc.excluded(p, true), true
	}
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return "", false, false
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		rel = ""
	}
	for _, e := range ix.under(rel) {
		if !recursive && e.path != rel {
			continue
		}
		dc.visited++
		if dc.visited > maxDropWalk {
			return dc.rel(p) + ", too many files to check for uncommitted changes", dc.excluded(p, true), true
		}
		if why := ix.changed(e); why != "" {
			f := filepath.Join(root, filepath.FromSlash(e.path))
			return dc.rel(f) + ", " + why, dc.excluded(f, false), true
		}
	}
	return "", false, false
}

// workTree is the git work tree p lies in, at the workspace or below it:
// the nearest directory holding .git, "" when none.
func (dc *dropCounter) workTree(p string) string {
	dir := p
	if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
		dir = filepath.Dir(p)
	}
	for classify.Within(dc.ws, dir) {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		if dir == dc.ws {
			break
		}
		dir = filepath.Dir(dir)
	}
	return ""
}

func (dc *dropCounter) index(root string) (*gitIndex, error) {
	if ix, ok := dc.indexes[root]; ok {
		return ix, nil
	}
	if err, ok := dc.errs[root]; ok {
		return nil, err
	}
	ix, err := readGitIndex(root)
	if err != nil {
		if dc.errs == nil {
			dc.errs = map[string]error{}
		}
		dc.errs[root] = err
		return nil, err
	}
	if dc.indexes == nil {
		dc.indexes = map[string]*gitIndex{}
	}
	dc.indexes[root] = ix
	return ix, nil
}
