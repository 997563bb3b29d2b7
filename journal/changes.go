package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
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
)

// Change is one net change of a run: what the path held before the run
// against what the run left.
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
}

// netChanges follows the entries of lg to what each path became.
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
	return all
}

// Changes returns the net changes of run id, paths sorted.
func (j *Journal) Changes(id string) ([]Change, error) {
	lg, _, err := j.loadLog(id)
	if err != nil {
		return nil, j.unknown(id, err)
	}
	return j.changes(lg), nil
}

func (j *Journal) unknown(id string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
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
	since := func(p string) bool {
		after, ok := lg.After[p]
		if !ok {
			return false
		}
		now, err := lstat(abs(p))
		return err == nil && !sameAfter(after, now)
	}
	restorable := func(n *node) (bool, string) {
		s := n.pre
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
	nodes := netChanges(lg)
	// What the run made where a path it deleted was (git checkout, an
	// editor or a formatter that removes a file and writes it again): the
	// deletion happened (the new thing was recorded as made on an absent
	// path, whatever inode number it was given), and the path changed.
	remade := map[string]*node{}
	for _, n := range nodes {
		if n.orig == "" && !n.deleted && n.path != "" {
			remade[n.path] = n
		}
	}
	paired := map[*node]bool{}
	var out []Change
	for _, n := range nodes {
		ok, why := restorable(n)
		c := Change{Type: n.pre.Type, Restorable: ok, Why: why, old: n.pre.Object, oldSize: n.pre.Size, OldMode: n.pre.Mode}
		var again *node
		if n.deleted && n.orig != "" && n.replaced == "" {
			again = remade[n.orig]
		}
		switch {
		case n.deleted && n.orig == "":
			continue // made and removed by the run
		case paired[n]:
			continue // listed as the change of the path it was made on
		case again != nil && again.from == "" && n.pre.Type != TypeAbsent && lg.After[n.orig].Type == n.pre.Type:
			paired[again] = true
			after := lg.After[n.orig]
			if n.pre.Type != TypeDir && (n.pre.Type != TypeSymlink || after.Target != n.pre.Target) {
				m := c
				m.Op, m.Path = OpChanged, abs(n.orig)
				m.Since = since(n.orig)
				out = append(out, m)
			}
			if after.Mode != n.pre.Mode {
				m := c
				m.Op, m.Path, m.NewMode = OpMode, abs(n.orig), after.Mode
				m.Restorable, m.Why = true, ""
				m.Since = since(n.orig)
				out = append(out, m)
			}
			continue
		case n.deleted && n.replaced == "" && again == nil && stillThere(lg, n):
			continue // the call failed: the same file is still there
		case n.deleted:
			c.Op, c.Path = OpDeleted, abs(n.orig)
			if n.replaced != "" {
				c.Op, c.Note = OpChanged, "replaced by "+abs(n.replaced)
			}
			out = append(out, c)
			continue
		case n.orig == "":
			c.Op, c.Path, c.Restorable, c.Why, c.old = OpAdded, abs(n.path), true, "", ""
			if after, ok := lg.After[n.path]; ok {
				c.Type, c.NewMode = after.Type, after.Mode
			}
			if n.from != "" {
				c.Note = "moved in from " + n.from
			}
			c.Since = since(n.path)
			out = append(out, c)
			continue
		}
		after, hasAfter := lg.After[n.path]
		if n.path != n.orig {
			m := c
			m.Op, m.Path, m.From, m.old = OpMoved, abs(n.path), abs(n.orig), ""
			m.Restorable, m.Why = true, ""
			m.Since = since(n.path)
			out = append(out, m)
		}
		if n.modified && n.pre.Type == TypeFile && n.pre.Kept != keptMeta && (!hasAfter || !sameContent(n.pre, after)) {
			m := c
			m.Op, m.Path = OpChanged, abs(n.path)
			m.Since = since(n.path)
			out = append(out, m)
		} else if n.modified && n.pre.Type != TypeFile && hasAfter && after.Type != n.pre.Type {
			m := c
			m.Op, m.Path = OpChanged, abs(n.path)
			m.Note = n.pre.Type + " replaced by a " + after.Type
			m.Since = since(n.path)
			out = append(out, m)
		}
		if hasAfter && after.Type != TypeAbsent && after.Mode != n.pre.Mode && (n.mode || n.modified) {
			m := c
			m.Op, m.Path, m.NewMode = OpMode, abs(n.path), after.Mode
			m.Restorable, m.Why = true, ""
			m.Since = since(n.path)
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Path != out[b].Path {
			return out[a].Path < out[b].Path
		}
		return out[a].Op < out[b].Op
	})
	return out
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
// again since the run).
func (j *Journal) Diff(id string) (string, error) {
	lg, _, err := j.loadLog(id)
	if err != nil {
		return "", j.unknown(id, err)
	}
	var b bytes.Buffer
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
			data, err := readLimited(c.Path, maxDiffFile)
			if err != nil {
				fmt.Fprintf(&b, "--- %s: the current content cannot be shown: %v\n", c.Path, err)
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
		if c.Since {
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

func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
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
