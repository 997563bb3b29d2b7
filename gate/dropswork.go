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

// maxGitWalk bounds the entries of .git one decision visits to tell
// whether a find expression selects any (find . -type f -delete).
const maxGitWalk = 50000

// maxExcludedWalk bounds the entries of one excluded directory visited
// to tell whether it holds a file git does not track.
const maxExcludedWalk = 2000

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
	// always says it asks at every level, whatever the journal keeps:
	// find selecting the repository's own files under .git.
	always bool
	// rule names the undoable rule the journal stood in for ("" when
	// none): when the journal does not keep all it drops, the rule asks.
	rule string
	// swept are the directories the journal excludes that the deletion
	// removes files from although it does not name them (rm -rf * over
	// dist/ and node_modules/): the journal does not keep what they hold.
	swept []string
	// few says it is a few files git does not track, and nothing else:
	// while the journal keeps them, the level decides below full (a
	// grant or a session's contained work covers them, as it covers
	// writing them); without the journal they ask.
	few bool
}

// dropCounter counts for one decision, reading each work tree's index
// and ignore files once.
type dropCounter struct {
	ws      string
	journal policy.Journal
	// home and xdg locate git's global ignore file.
	home, xdg string
	indexes   map[string]*gitIndex
	errs      map[string]error
	ignores   map[string]*gitIgnores
	visited   int
	// swept are the excluded directories the current deletion sweeps
	// (dropped.swept).
	swept []string
	// What the files counted weigh: in all, the first above max_file,
	// and whether a walk was cut short (what it left out is unknown).
	bytes  int64
	tooBig string
	big    int64
	cut    bool
}

func newDropCounter(ws string, j policy.Journal, home, xdg string) *dropCounter {
	return &dropCounter{ws: ws, journal: j, home: home, xdg: xdg}
}

// fileSet collects the files a deletion removes: all of them are
// counted, the first few past limit kept.
type fileSet struct {
	limit int
	files []string
	n     int
	// big is set past limit, or when the walk is too long.
	big bool
}

func (fs *fileSet) add(p string) {
	fs.n++
	if len(fs.files) <= fs.limit {
		fs.files = append(fs.files, p)
	}
	if fs.n > fs.limit {
		fs.big = true
	}
}

// dropsWork says what cmd, whose policy result is res, drops; dirs are
// the directories its relative paths name what they name in.
func (dc *dropCounter) dropsWork(cmd shellparse.Command, res *policy.Result, dirs []string) dropped {
	if res.Undoable != "" {
		return dc.undoable(cmd, res)
	}
	dc.swept = nil
	d := dc.deletion(cmd, res, dirs)
	d.swept = dc.swept
	return d
}

// sweep notes an excluded directory (or a file in one) a deletion
// removes without naming it.
func (dc *dropCounter) sweep(p string) {
	r := dc.rel(p)
	elems := strings.Split(r, "/")
	for i, e := range elems {
		if slices.Contains(dc.journal.Exclude, e) {
			r = strings.Join(elems[:i+1], "/") + "/"
			break
		}
	}
	if !slices.Contains(dc.swept, r) {
		dc.swept = append(dc.swept, r)
	}
}

// deletion is dropsWork for a command that deletes (rm, unlink, shred,
// find -delete).
func (dc *dropCounter) deletion(cmd shellparse.Command, res *policy.Result, dirs []string) dropped {
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
		if name == "find" {
			// Its starting points, and the files -fprint writes.
			continue
		}
		if a.Glob {
			m := globMatches(a.Target, dc.journal.BigDeletion+1)
			for _, x := range m {
				if dc.excluded(x, true) {
					dc.sweep(x)
				}
			}
			if len(m) > dc.journal.BigDeletion {
				return dropped{what: fmt.Sprintf("deletes more than %d files (%s)", dc.journal.BigDeletion, dc.rel(a.Target)), kept: true}
			}
			paths = append(paths, m...)
			continue
		}
		paths = append(paths, filepath.Clean(a.Target))
	}
	if name == "find" {
		return dc.findDrops(cmd, dirs)
	}
	if len(paths) == 0 {
		return dropped{}
	}
	set := &fileSet{limit: dc.journal.BigDeletion}
	for _, p := range paths {
		// Every path is weighed, past big_deletion too (within one
		// decision's walk): whether the journal can keep it all.
		dc.collect(p, recursive, set)
	}
	if d, ok := dc.bigDeletion(set); ok {
		return dc.keeps(d)
	}
	// Then what git cannot give back: uncommitted changes, and files it
	// does not track.
	changed, changedKept := "", true
	for _, p := range paths {
		if f, excluded, ok := dc.changedUnder(p, recursive); ok {
			changed, changedKept = f, !excluded
			break
		}
	}
	return dc.keeps(dc.combine(changed, changedKept, dc.untracked(set.files)))
}

// keeps is d, not kept when what the counted files weigh is more than
// the journal keeps (the journal would say so only after the run).
func (dc *dropCounter) keeps(d dropped) dropped {
	if !d.kept || d.what == "" {
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
		d.kept, d.few = false, false
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

// bigDeletion is what a deletion of more than big_deletion files drops.
func (dc *dropCounter) bigDeletion(set *fileSet) (dropped, bool) {
	switch {
	case set.big:
		return dropped{what: fmt.Sprintf("deletes more than %d files", dc.journal.BigDeletion), kept: true}, true
	case set.n > dc.journal.BigDeletion:
		return dropped{what: fmt.Sprintf("deletes %d files", set.n), kept: true}, true
	}
	return dropped{}, false
}

// combine says what a deletion drops: a file with uncommitted changes
// (changed, "" when none; changedKept when outside the excluded
// directories) and the files git does not track (untracked, found
// outside them).
func (dc *dropCounter) combine(changed string, changedKept bool, untracked []string) dropped {
	const most = 3
	var u string
	switch n := len(untracked); {
	case n == 1:
		u = dc.rel(untracked[0]) + ", which git does not track"
	case n > 1:
		names := make([]string, 0, most)
		for _, f := range untracked[:min(n, most)] {
			names = append(names, dc.rel(f))
		}
		more := ""
		if n > most {
			more = " ..."
		}
		u = fmt.Sprintf("%d files git does not track (%s%s)", n, strings.Join(names, ", "), more)
	}
	switch {
	case changed != "" && u != "":
		return dropped{what: "deletes " + changed + ", and " + u, kept: changedKept}
	case changed != "":
		return dropped{what: "deletes " + changed, kept: changedKept}
	case u != "":
		return dropped{what: "deletes " + u, kept: true, few: true}
	}
	return dropped{}
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

// collect adds to set the files (anything but a directory) p removes,
// and weighs them, until the walk is too long (which leaves the rest
// unweighed). Directories the journal excludes count for nothing.
func (dc *dropCounter) collect(p string, recursive bool, set *fileSet) {
	fi, err := os.Lstat(p)
	if err != nil {
		return
	}
	if !fi.IsDir() {
		if !dc.excluded(p, false) {
			set.add(p)
			dc.weigh(p, fi)
		}
		return
	}
	if !recursive || dc.excluded(p, true) {
		return
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
					set.big, dc.cut = true, true
					return true
				}
				q := filepath.Join(dir, e.Name())
				if e.IsDir() {
					if dc.excluded(q, true) {
						dc.sweep(q)
						continue
					}
					if walk(q) {
						return true
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
			if err != nil {
				return false
			}
		}
	}
	walk(p)
}

// untracked are the files of files (each a path the deletion removes)
// that lie in a git work tree, which neither holds them in its index nor
// ignores them: git cannot give them back. A path under a .git directory
// is git's own; a work tree whose index cannot be read is told of by
// changedUnder.
func (dc *dropCounter) untracked(files []string) []string {
	var out []string
	for _, f := range files {
		root := dc.workTree(f)
		if root == "" {
			continue
		}
		rel, err := filepath.Rel(root, f)
		if err != nil {
			continue
		}
		rel = filepath.ToSlash(rel)
		if slices.Contains(strings.Split(rel, "/"), ".git") {
			continue
		}
		ix, err := dc.index(root)
		if err != nil || ix.has(rel) {
			continue
		}
		if dc.gitIgnores(root).ignored(rel, false) {
			continue
		}
		out = append(out, f)
	}
	return out
}

func (dc *dropCounter) gitIgnores(root string) *gitIgnores {
	if gi, ok := dc.ignores[root]; ok {
		return gi
	}
	if dc.ignores == nil {
		dc.ignores = map[string]*gitIgnores{}
	}
	gi := newGitIgnores(root, dc.home, dc.xdg)
	dc.ignores[root] = gi
	return gi
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
