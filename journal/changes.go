package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/diff"
)

// What a run did to a path, as Changes reports it.
const (
	OpAdded   = "added"
	OpChanged = "changed"
	OpDeleted = "deleted"
	OpMoved   = "moved"
	OpMode    = "mode"
	// OpNotKept: the run deleted something below a directory the journal
	// excludes (node_modules, dist): Path is that directory, and nothing
	// of it was kept.
	OpNotKept = "not kept"
)

// Change is one net change of a run to one path: what the path held
// before the run against what the run left. A path the run deleted and
// made again (git checkout, git reset --hard: unlink, then create) is
// changed, once.
type Change struct {
	Op string `json:"op"`
	// Path is absolute: where the change is (for moved, the new name).
	Path string `json:"path"`
	// From is where a moved path was.
	From string `json:"from,omitempty"`
	// Type is what the path held before the run (what it holds, for
	// added).
	Type string `json:"type"`
	// OldMode and NewMode are the permission bits before and after.
	OldMode uint32 `json:"old_mode,omitempty"`
	NewMode uint32 `json:"new_mode,omitempty"`
	// Restorable says whether undo can put it back; Why says why not.
	Restorable bool   `json:"restorable"`
	Why        string `json:"why,omitempty"`
	// Since says the path changed again after the run ended.
	Since bool `json:"changed_since,omitempty"`
	// Note adds a detail ("replaced by the file moved from x").
	Note string `json:"note,omitempty"`

	old     string // the kept content, for Diff
	oldSize int64
	rel     string // Path relative to the workspace
}

// NotKeptExcluded is why a run's change below an excluded directory was
// not kept (Summary.NotKept, OpNotKept).
const NotKeptExcluded = "excluded directory"

// IsGitIndex says whether path is a git repository's index (.git/index,
// in the workspace or a repository below it). Git rewrites it to refresh
// the file times it caches (git status, git diff do), so a run that
// changed only it changed none of the person's work, and a change to it
// since a run is git's, not the person's.
func IsGitIndex(path string) bool {
	return filepath.Base(path) == "index" && filepath.Base(filepath.Dir(path)) == ".git"
}

// Undoable says whether changes hold something undo --last takes back:
// a change undo can restore to anything but a git index (a note that a
// directory the journal excludes was changed, or a file too big or over
// the quota to keep, gives undo nothing to do).
func Undoable(changes []Change) bool {
	for _, c := range changes {
		if c.Op != OpNotKept && c.Restorable && !IsGitIndex(c.Path) {
			return true
		}
	}
	return false
}

// node follows one thing (a file, a directory) through a run's entries.
type node struct {
	orig     string // where it was before the run; "" when the run made it
	path     string // where it is now; "" once deleted
	pre      State  // its state before the run
	from     string // made by a rename from outside the workspace
	modified bool
	mode     bool
	deleted  bool
	replaced string // deleted by a rename of this over it
	// remade is what the run made where this was after deleting it;
	// merged marks that node, reported with this one.
	remade *node
	merged bool
}

// netChanges follows the entries of lg to what each path became. The
// entries saying an excluded directory was changed are left out (see
// excludedDirs).
func netChanges(lg *runLog) []*node {
	cur := map[string]*node{}
	var all []*node
	get := func(p string, pre *State) *node {
		if n := cur[p]; n != nil {
			if pre != nil && n.orig != "" && n.pre.Object == "" && pre.Object != "" {
				n.pre = *pre
			}
			return n
		}
		n := &node{orig: p, path: p}
		if pre != nil {
			n.pre = *pre
		}
		if n.pre.Type == TypeAbsent {
			n.orig = ""
		}
		cur[p] = n
		all = append(all, n)
		return n
	}
	move := func(from, to string) {
		moved := map[string]*node{}
		for k, n := range cur {
			if under(k, from) {
				delete(cur, k)
				n.path = to + k[len(from):]
				moved[n.path] = n
			}
		}
		for k, n := range moved {
			cur[k] = n
		}
	}
	for _, e := range lg.Entries {
		if e.X == xExcluded {
			continue
		}
		switch kindOf(e.K) {
		case Write:
			n := get(e.P, e.A)
			n.modified = true
		case Mkdir, Mknod, Symlink:
			get(e.P, e.A)
		case Unlink, Rmdir:
			n := get(e.P, e.A)
			n.deleted = true
			n.path = ""
			delete(cur, e.P)
		case Chmod, Chown:
			get(e.P, e.A).mode = true
		case Link:
			if !filepath.IsAbs(e.P2) {
				get(e.P2, e.B)
			}
		case Rename:
			if e.X == "in" {
				old := get(e.P2, e.B)
				if old.orig != "" {
					old.deleted, old.path, old.replaced = true, "", e.P
				}
				delete(cur, e.P2)
				n := get(e.P2, &State{Type: TypeAbsent})
				n.from = e.P
				continue
			}
			if e.A == nil || e.A.Type == TypeAbsent {
				continue
			}
			src := get(e.P, e.A)
			var old *node
			if cur[e.P2] != nil || e.B != nil && e.B.Type != TypeAbsent {
				old = get(e.P2, e.B)
				delete(cur, e.P2)
			}
			if old != nil && old.orig != "" && src.orig == "" && src.from == "" && e.A.Type == old.pre.Type {
				// A file made by the run put in place of one that was
				// there (an editor's or sed -i's temp file): the path
				// changed.
				src.deleted, src.path = true, ""
				delete(cur, e.P)
				old.modified = true
				cur[e.P2] = old
				continue
			}
			if old != nil {
				old.deleted, old.path, old.replaced = true, "", e.P
			}
			move(e.P, e.P2)
		case Exchange:
			if e.X == "in" {
				// What was there left first (its own entries).
				delete(cur, e.P2)
				get(e.P2, &State{Type: TypeAbsent}).from = e.P
				continue
			}
			get(e.P, e.A)
			get(e.P2, e.B)
			tmp := "\x00exchange"
			move(e.P, tmp)
			move(e.P2, e.P)
			move(tmp, e.P2)
		}
	}
	// A path deleted and then made again by the run (git replaces files
	// by unlink and create) is one thing changed: the new one is
	// reported with the old.
	made := map[string]*node{}
	for _, n := range all {
		if n.orig == "" && n.path != "" && n.from == "" {
			made[n.path] = n
		}
	}
	for _, n := range all {
		if n.deleted && n.orig != "" && n.replaced == "" {
			if m := made[n.orig]; m != nil {
				n.remade, m.merged = m, true
				delete(made, n.orig)
			}
		}
	}
	return all
}

// excludedDirs are the excluded directories the run changed, relative to
// the workspace, each once.
func excludedDirs(lg *runLog) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range lg.Entries {
		if e.X == xExcluded && !seen[e.P] {
			seen[e.P] = true
			out = append(out, e.P)
		}
	}
	return out
}

// Changes returns the net changes of run id, one a path, paths sorted.
func (j *Journal) Changes(id string) ([]Change, error) {
	lg, _, err := j.loadLog(id)
	if err != nil {
		return nil, j.unknown(id, err)
	}
	return j.changes(lg), nil
}

func (j *Journal) unknown(id string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		if p, ok := j.prunedRun(id); ok {
			return p
		}
		return fmt.Errorf("%w: %s", ErrUnknownRun, id)
	}
	return err
}

func (j *Journal) changes(lg *runLog) []Change {
	ws := lg.Head.WS
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(ws, p)
	}
	nowOf := map[string]State{}
	now := func(p string) (State, bool) {
		if s, ok := nowOf[p]; ok {
			return s, true
		}
		s, err := lstat(abs(p))
		if err != nil {
			return s, false
		}
		nowOf[p] = s
		return s, true
	}
	since := func(p string) bool {
		after, ok := lg.After[p]
		if !ok {
			return false
		}
		s, ok := now(p)
		return ok && !sameAfter(after, s)
	}
	// sameAsBefore says whether the file the run left at p (still there,
	// as it left it) holds what the path held before: sed -i rewrites
	// files it changes nothing in.
	sameAsBefore := func(pre State, p string) bool {
		after, ok := lg.After[p]
		if !ok || pre.Type != TypeFile || pre.Object == "" || after.Type != TypeFile || after.Size != pre.Size {
			return false
		}
		if s, ok := now(p); !ok || !sameAfter(after, s) {
			return false
		}
		return digestBelow(ws, abs(p)) == pre.Object
	}
	restorable := func(s State) (bool, string) {
		switch {
		case s.Type != TypeFile || s.Kept == keptMeta:
			return true, ""
		case s.Kept == NotKeptTooBig:
			return false, fmt.Sprintf("too big to keep (%d bytes)", s.Size)
		case s.Kept == NotKeptQuota:
			return false, "not kept: over the workspace's quota"
		case s.Object == "":
			return false, "its content was not kept"
		case !j.hasObject(s.Object):
			return false, "its content was pruned from the journal"
		}
		return true, ""
	}
	var out []Change
	for _, n := range netChanges(lg) {
		if n.merged {
			continue
		}
		ok, why := restorable(n.pre)
		c := Change{Type: n.pre.Type, Restorable: ok, Why: why, old: n.pre.Object, oldSize: n.pre.Size, OldMode: n.pre.Mode}
		switch {
		case n.deleted && n.orig == "":
			continue // made and removed by the run
		case n.remade != nil:
			// Deleted and made again: changed, if what is there differs.
			after, hasAfter := lg.After[n.orig]
			if !hasAfter || after.Type == TypeAbsent {
				c.Op, c.Path = OpDeleted, abs(n.orig)
				break
			}
			c.Op, c.Path, c.NewMode = OpChanged, abs(n.orig), after.Mode
			switch {
			case after.Type != n.pre.Type:
				c.Note = n.pre.Type + " replaced by a " + after.Type
			case after.Type == TypeFile && !sameAsBefore(n.pre, n.orig):
			case after.Type == TypeSymlink && after.Target != n.pre.Target:
			case after.Mode != n.pre.Mode && after.Type != TypeSymlink:
				c.Op, c.Restorable, c.Why, c.old = OpMode, true, "", ""
			default:
				continue // the same again
			}
			c.Since = since(n.orig)
		case n.deleted && n.replaced == "" && stillThere(lg, n):
			continue // the call failed: the same file is still there
		case n.deleted:
			c.Op, c.Path = OpDeleted, abs(n.orig)
			if n.replaced != "" {
				c.Op, c.Note = OpChanged, "replaced by "+abs(n.replaced)
			}
		case n.orig == "":
			after, ok := lg.After[n.path]
			if ok && after.Type == TypeAbsent {
				// The call failed (git's tmp_obj_ file opened in a
				// directory it had yet to make), or what it made went
				// by a way the journal keeps no record of.
				continue
			}
			c.Op, c.Path, c.Restorable, c.Why, c.old, c.OldMode = OpAdded, abs(n.path), true, "", "", 0
			if ok {
				c.Type, c.NewMode = after.Type, after.Mode
			}
			if n.from != "" {
				c.Note = "moved in from " + n.from
			}
			c.Since = since(n.path)
		default:
			after, hasAfter := lg.After[n.path]
			content := n.modified && n.pre.Type == TypeFile && n.pre.Kept != keptMeta &&
				(!hasAfter || !sameContent(n.pre, after) && !sameAsBefore(n.pre, n.path))
			typ := n.modified && n.pre.Type != TypeFile && hasAfter && after.Type != n.pre.Type
			mode := hasAfter && after.Type != TypeAbsent && after.Mode != n.pre.Mode && (n.mode || n.modified)
			if hasAfter {
				c.NewMode = after.Mode
			}
			c.Path, c.Since = abs(n.path), since(n.path)
			switch {
			case n.path != n.orig:
				c.Op, c.From = OpMoved, abs(n.orig)
				if content {
					c.Note = "and changed"
				} else {
					c.Restorable, c.Why, c.old = true, "", ""
				}
			case content:
				c.Op = OpChanged
			case typ:
				c.Op, c.Note = OpChanged, n.pre.Type+" replaced by a "+after.Type
			case mode:
				c.Op, c.Restorable, c.Why, c.old = OpMode, true, "", ""
			default:
				continue
			}
			if !mode {
				c.NewMode = c.OldMode
			}
		}
		out = append(out, c)
	}
	for _, d := range excludedDirs(lg) {
		out = append(out, Change{Op: OpNotKept, Path: abs(d), Type: TypeDir, Why: NotKeptExcluded + ": its content is not journaled"})
	}
	out = mergeByPath(out)
	for i := range out {
		if rel, ok := within(ws, out[i].Path); ok {
			out[i].rel = rel
		}
	}
	return out
}

// opRank orders the ops one path may get twice (a file moved over
// another: moved, and changed for the one it replaced): the first names
// the line.
var opRank = map[string]int{OpMoved: 0, OpChanged: 1, OpDeleted: 2, OpMode: 3, OpAdded: 4, OpNotKept: 5}

// mergeByPath sorts changes by path and makes the changes of one path
// one: a file moved over another, or moved in over one, is one line.
func mergeByPath(cs []Change) []Change {
	sort.SliceStable(cs, func(a, b int) bool {
		if cs[a].Path != cs[b].Path {
			return cs[a].Path < cs[b].Path
		}
		return opRank[cs[a].Op] < opRank[cs[b].Op]
	})
	var out []Change
	for _, c := range cs {
		if len(out) == 0 || out[len(out)-1].Path != c.Path || c.Op == OpNotKept || out[len(out)-1].Op == OpNotKept {
			out = append(out, c)
			continue
		}
		m := &out[len(out)-1]
		if c.Note != "" && !strings.Contains(m.Note, c.Note) {
			m.Note = strings.TrimPrefix(m.Note+"; "+c.Note, "; ")
		}
		if !c.Restorable && m.Restorable {
			m.Restorable, m.Why = false, c.Why
		}
		if m.old == "" && c.Op != OpAdded {
			m.old, m.oldSize = c.old, c.oldSize
		}
		m.Since = m.Since || c.Since
	}
	return out
}

// digestBelow is the SHA-256 of the file at path, reached from ws through
// no link; "" when it cannot be read.
func digestBelow(ws, path string) string {
	a, err := openAt(ws, path)
	if err != nil {
		return ""
	}
	defer a.close()
	f, err := a.open()
	if err != nil {
		return ""
	}
	defer f.Close()
	d, err := hashOnly(f)
	if err != nil {
		return ""
	}
	return d
}

// sameContent says whether a file's content before the run is known to be
// what the run left: the same size and modification time, as a run that
// opened the file for writing and wrote nothing leaves it.
func sameContent(pre, after State) bool {
	return after.Type == TypeFile && pre.Size == after.Size && pre.Mtime == after.Mtime && pre.Ino == after.Ino
}

// Diff limits: a larger file, or one that is not text, is reported, not
// shown.
const maxDiffFile = 4 << 20

// Diff returns a unified diff of what the run changed in text files: the
// kept content against the file as it is now (saying so when it changed
// again since the run). For a run that was undone, the other side is what
// the run left as its undo kept it, not the file now.
func (j *Journal) Diff(id string) (string, error) {
	lg, _, err := j.loadLog(id)
	if err != nil {
		return "", j.unknown(id, err)
	}
	var b bytes.Buffer
	// What the undo found at each path, when the run was undone.
	var undone string
	var left map[string]State
	if rec, err := j.Find(lg.Head.ID); err == nil && rec.UndoneBy != "" {
		undone, left = rec.UndoneBy, map[string]State{}
		if ulg, _, err := j.loadLog(undone); err == nil {
			for _, n := range netChanges(ulg) {
				if n.orig != "" {
					left[n.orig] = n.pre
				}
			}
		}
		fmt.Fprintf(&b, "# run %s was undone by run %s: the diff shows what the run did, its result as the undo kept it\n", lg.Head.ID, undone)
	}
	// result is what the run left at c (its content), or why it cannot
	// be shown.
	result := func(c Change) ([]byte, string) {
		if undone == "" {
			data, err := readLimited(lg.Head.WS, c.Path, maxDiffFile)
			if err != nil {
				return nil, fmt.Sprintf("the current content cannot be shown: %v", err)
			}
			return data, ""
		}
		s, ok := left[c.rel]
		after, hasAfter := lg.After[c.rel]
		if !ok || s.Object == "" || !hasAfter || s.Type != TypeFile || s.Ino != after.Ino || s.Size != after.Size || s.Mtime != after.Mtime {
			return nil, "what the run left here is not kept (the undo found something else)"
		}
		data, err := j.readObject(s.Object, maxDiffFile)
		if err != nil {
			return nil, fmt.Sprintf("what the run left cannot be shown: %v", err)
		}
		return data, ""
	}
	for _, c := range j.changes(lg) {
		var old, cur []byte
		oldName, curName := "/dev/null", "/dev/null"
		switch c.Op {
		case OpChanged:
			oldName, curName = c.Path, c.Path
		case OpDeleted:
			oldName = c.Path
		case OpAdded:
			curName = c.Path
		case OpMoved:
			if c.old == "" {
				continue
			}
			oldName, curName = c.From, c.Path
		default:
			continue
		}
		if c.Type != TypeFile {
			continue
		}
		if oldName != "/dev/null" {
			if c.old == "" {
				fmt.Fprintf(&b, "--- %s: %s\n", c.Path, c.Why)
				continue
			}
			data, err := j.readObject(c.old, maxDiffFile)
			if err != nil {
				fmt.Fprintf(&b, "--- %s: the old content cannot be shown: %v\n", c.Path, err)
				continue
			}
			old = data
		}
		if curName != "/dev/null" {
			data, why := result(c)
			if why != "" {
				fmt.Fprintf(&b, "--- %s: %s\n", c.Path, why)
				continue
			}
			cur = data
		}
		if !isText(old) || !isText(cur) {
			if !bytes.Equal(old, cur) {
				fmt.Fprintf(&b, "Binary files %s and %s differ\n", label("a", oldName, lg.Head.WS), label("b", curName, lg.Head.WS))
			}
			continue
		}
		if c.Since && undone == "" {
			fmt.Fprintf(&b, "# %s changed again after the run: the diff shows it as it is now\n", c.Path)
		}
		b.Write(diff.Diff(label("a", oldName, lg.Head.WS), old, label("b", curName, lg.Head.WS), cur))
	}
	return b.String(), nil
}

// label names a side of a diff as git does (a/path, b/path), the path
// relative to the workspace.
func label(side, name, ws string) string {
	if name == "/dev/null" {
		return name
	}
	if rel, ok := within(ws, name); ok {
		return side + "/" + rel
	}
	return side + name
}

// readLimited reads the file at path below ws, reached through no link
// (a directory a later run replaced with a link to the home directory
// does not show what is there), up to limit bytes.
func readLimited(ws, path string, limit int64) ([]byte, error) {
	a, err := openAt(ws, path)
	if err != nil {
		return nil, err
	}
	defer a.close()
	f, err := a.open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}

// isText says whether data reads as text: valid UTF-8 with no NUL.
func isText(data []byte) bool {
	return bytes.IndexByte(data, 0) < 0 && utf8.Valid(data)
}

// stillThere says whether what the run's entries say was deleted is still
// where it was when the run ended, the same file: the call was recorded
// before the kernel ran it, and the kernel refused it.
func stillThere(lg *runLog, n *node) bool {
	after, ok := lg.After[n.orig]
	return ok && n.pre.Ino != 0 && after.Ino == n.pre.Ino && after.Dev == n.pre.Dev && after.Type == n.pre.Type
}
