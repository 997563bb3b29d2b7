package journal

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Kind is what a call is about to do to the file system; it mirrors the
// capture's sandbox.ChangeKind.
type Kind uint8

// The kinds of change.
const (
	// Write: an open for writing or a truncate; it may create the file.
	Write Kind = iota + 1
	Unlink
	Rmdir
	Mkdir
	Mknod
	// Rename: path becomes path2, replacing what path2 held.
	Rename
	// Exchange: path and path2 swap (renameat2 RENAME_EXCHANGE).
	Exchange
	// Link: path2 becomes a new name of path.
	Link
	// Symlink: path becomes a symbolic link.
	Symlink
	Chmod
	Chown
)

var kindNames = [...]string{Write: "write", Unlink: "unlink", Rmdir: "rmdir", Mkdir: "mkdir", Mknod: "mknod",
	Rename: "rename", Exchange: "exchange", Link: "link", Symlink: "symlink", Chmod: "chmod", Chown: "chown"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

func kindOf(s string) Kind {
	for k, n := range kindNames {
		if n == s && n != "" {
			return Kind(k)
		}
	}
	return 0
}

// RunInfo describes a run: the command and the decision that let it run.
type RunInfo struct {
	// ID names the run; Begin makes one when it is empty.
	ID string
	// Workspace is the absolute directory whose changes are kept.
	Workspace string
	Argv      []string
	Cwd       string
	Session   string
	// Ticket is the approval the run spent, if any.
	Ticket  string
	Channel string
	Sender  string

	undoes []string
}

// NotKept is a path whose content the run could not keep.
type NotKept struct {
	Path string `json:"path"`
	// Why: NotKeptTooBig or NotKeptQuota.
	Why string `json:"why"`
	// Size is the content's size.
	Size int64 `json:"size"`
}

// Summary is what a run recorded.
type Summary struct {
	ID string `json:"id"`
	// Changed says whether the run changed anything in the workspace
	// (whether it has a log).
	Changed bool `json:"changed"`
	// Entries counts the calls recorded.
	Entries int `json:"entries"`
	// Kept is the size of the content kept for the run.
	Kept int64 `json:"kept"`
	// NotKept lists the files whose content could not be kept.
	NotKept []NotKept `json:"not_kept,omitempty"`
	// Pruned are the runs of the workspace the journal dropped to make
	// room for this one's: they can no longer be undone.
	Pruned []Pruned `json:"pruned,omitempty"`
}

// Run is one command's record. Before is safe for concurrent calls.
type Run struct {
	j     *Journal
	info  RunInfo
	ws    string
	start time.Time

	mu       sync.Mutex
	f        *os.File // the log, held with an exclusive flock; nil until the first entry
	off      int64
	saved    map[string]uint8
	names    map[string]struct{} // the paths the entries name
	entries  int
	objs     map[string]bool
	kept     int64
	notKept  []NotKept
	gone     []Pruned // the runs pruned to make room for this one
	usage    int64    // the bytes the workspace's other runs keep; -1 until needed
	hashed   int64    // the bytes of files too big to keep hashed so far
	unlock   func()   // releases the store lock held for the entry being written
	pruned   bool
	excluded map[string]bool // the excluded directories noted
	failed   int             // for an undo's own run: the steps that failed
	finished bool
}

// A file too big to keep is hashed only up to maxHashed bytes, and a run
// hashes at most hashBudget bytes of such files (about a second and four
// at 1 GB/s): a call waits while it is hashed.
const (
	maxHashed  = 1 << 30
	hashBudget = 4 << 30
)

// What a run already holds of a path's state before the run.
const (
	savedContent uint8 = 1 << iota
	savedMeta
)

// Begin starts recording a run. It does no I/O beyond resolving the
// workspace: the log is made when the run first changes something, so a
// run that changes nothing costs nothing.
func (j *Journal) Begin(info RunInfo) (*Run, error) {
	if !filepath.IsAbs(info.Workspace) {
		return nil, fmt.Errorf("journal: the workspace must be an absolute path, not %q", info.Workspace)
	}
	ws := resolved(info.Workspace)
	info.Workspace = ws
	now := j.o.Now()
	if info.ID == "" {
		info.ID = newID(now)
	} else if !validID(info.ID) {
		return nil, fmt.Errorf("journal: run id %q: use letters, digits, '-', '_' and '.'", info.ID)
	} else if _, err := os.Lstat(j.logPath(info.ID)); err == nil {
		return nil, fmt.Errorf("journal: run %s exists already", info.ID)
	}
	return &Run{j: j, info: info, ws: ws, start: now, saved: map[string]uint8{}, names: map[string]struct{}{}, objs: map[string]bool{}, usage: -1}, nil
}

// resolved is dir cleaned, its links resolved when it exists.
func resolved(dir string) string {
	dir = filepath.Clean(dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

// ID is the run's id.
func (r *Run) ID() string { return r.info.ID }

// Workspace is the run's workspace, its links resolved.
func (r *Run) Workspace() string { return r.ws }

// Before records what the call kind is about to change at path (and
// path2), and returns nil to let the call proceed. Paths are absolute and
// cleaned, their parent directories' links resolved. A path outside the
// workspace or below an excluded directory is let through at once.
//
// It returns an errno (a syscall.Errno) when the call must fail because
// what it would destroy could not be kept: ENOSPC when the store or the
// log cannot be written, the error reading the file otherwise. A file over
// the quota or the size limit is not an error: the entry says it was not
// kept, and Summary lists it.
func (r *Run) Before(kind Kind, path, path2 string) error {
	if kind < Write || kind > Chown {
		return syscall.EINVAL
	}
	two := kind == Rename || kind == Exchange || kind == Link
	if !two {
		path2 = ""
	}
	// A link to a file that has no name (made with O_TMPFILE) comes with
	// no path: only its new name matters.
	nameless := kind == Link && path == ""
	if !nameless && (path == "" || !filepath.IsAbs(path)) || two && (path2 == "" || !filepath.IsAbs(path2)) {
		// The capture gives absolute paths; anything else is a fault
		// the journal cannot judge, so the call fails.
		return syscall.EINVAL
	}
	var rel1 string
	var in1 bool
	if !nameless {
		path = filepath.Clean(path)
		rel1, in1 = r.ours(path, kind == Mkdir || kind == Rmdir)
	}
	var rel2 string
	var in2 bool
	if two {
		path2 = filepath.Clean(path2)
		rel2, in2 = r.ours(path2, false)
	}
	if kind == Rename || kind == Exchange {
		// A directory moved to a name the journal excludes (mv src
		// target) takes what is below it out of the journal's sight,
		// as a move out of the workspace does: it is kept as deleted.
		if in2 && r.j.excludedName(rel2) && isDir(path) {
			in2 = false
		}
		if kind == Exchange && in1 && r.j.excludedName(rel1) && isDir(path2) {
			in1 = false
		}
	}
	if kind == Link && in1 && !in2 {
		// A second name the journal does not keep (below node_modules,
		// dist...) would let a later run write the file through it
		// unrecorded: refused as a link to another file system is.
		return syscall.EXDEV
	}
	if kind == Unlink && !in1 {
		if dir, ok := r.excludedTop(path); ok {
			r.mu.Lock()
			defer r.mu.Unlock()
			return errnoOf(r.noteExcluded(dir))
		}
	}
	if !in1 && !in2 || two && kind != Link && path == path2 {
		// Renaming a name to itself changes nothing.
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return syscall.EIO
	}
	return errnoOf(r.before(kind, path, rel1, in1, path2, rel2, in2))
}

// errnoOf is the errno a call fails with when the journal could not
// record it: the error's own, or EIO.
func errnoOf(err error) error {
	if err == nil {
		return nil
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return syscall.EIO
}

// xExcluded marks an entry saying the run deleted something below an
// excluded directory (its P): nothing of it is kept.
const xExcluded = "excluded"

// excludedTop returns the outermost excluded directory path lies below,
// relative to the workspace.
func (r *Run) excludedTop(path string) (string, bool) {
	rel, ok := within(r.ws, path)
	if !ok || len(r.j.exclude) == 0 {
		return "", false
	}
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' {
			continue
		}
		if r.j.exclude[filepath.Base(rel[:i])] {
			return rel[:i], true
		}
	}
	return "", false
}

// noteExcluded records, once a run, that it deleted something below the
// excluded directory dir: mnemos changes lists it, and the summary's
// NotKept carries it. Nothing of it is copied.
func (r *Run) noteExcluded(dir string) error {
	if r.finished {
		return syscall.EIO
	}
	if r.excluded[dir] {
		return nil
	}
	if err := r.open(); err != nil {
		return err
	}
	rec := &record{T: "e", At: r.j.o.Now().UnixNano(), K: Unlink.String(), P: dir, X: xExcluded}
	if err := appendLine(r.f, &r.off, rec); err != nil {
		return err
	}
	if r.excluded == nil {
		r.excluded = map[string]bool{}
	}
	r.excluded[dir] = true
	r.entries++
	r.notKept = append(r.notKept, NotKept{Path: r.abs(dir), Why: NotKeptExcluded})
	return nil
}

// ours returns path relative to the workspace, and whether the journal
// keeps it: below the workspace and below no excluded directory. A path
// whose last name is excluded is kept unless it is a directory.
func (r *Run) ours(path string, dirKind bool) (string, bool) {
	rel, ok := within(r.ws, path)
	if !ok || r.j.excludedDir(rel) {
		return "", false
	}
	if r.j.excludedName(rel) {
		if dirKind {
			return "", false
		}
		if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
			return "", false
		}
	}
	return rel, true
}

func (r *Run) abs(rel string) string { return filepath.Join(r.ws, rel) }

func (r *Run) before(kind Kind, path, rel1 string, in1 bool, path2, rel2 string, in2 bool) error {
	switch kind {
	case Unlink, Rmdir, Chmod, Chown:
		// A call that will fail changes nothing, and the log, which
		// the quota does not count, must not grow with it: removing or
		// chmod-ing a name that does not exist, making one that does
		// (what another thread makes meanwhile is recorded as made).
		if st, err := lstat(path); err == nil && st.Type == TypeAbsent {
			return nil
		}
	case Mkdir, Mknod, Symlink:
		if st, err := lstat(path); err == nil && st.Type != TypeAbsent {
			return nil
		}
	}
	switch kind {
	case Write, Unlink, Rmdir, Mkdir, Mknod, Symlink:
		if kind == Write && r.saved[rel1]&savedContent != 0 {
			// Kept already: a write changes no more than the content.
			if st, err := lstat(path); err == nil && st.Type == TypeFile {
				return nil
			}
		}
		return r.entry(kind, rel1, "", "", func() (*State, *State, error) {
			a, err := r.capture(rel1)
			return a, nil, err
		}, func() { r.saved[rel1] |= savedContent | savedMeta })
	case Chmod, Chown:
		if r.saved[rel1] != 0 {
			return nil
		}
		return r.entry(kind, rel1, "", "", func() (*State, *State, error) {
			a, err := r.meta(rel1)
			return a, nil, err
		}, func() { r.saved[rel1] |= savedMeta })
	case Link:
		p1, p2 := rel1, rel2
		if !in1 {
			p1 = path
		}
		if !in2 {
			p2 = path2
		}
		return r.entry(kind, p1, p2, "", func() (a, b *State, err error) {
			if in1 && r.saved[rel1]&savedContent == 0 {
				// The file gets a second name through which it may be
				// written: keep it now.
				if st, err := lstat(path); err == nil && st.Type == TypeFile {
					if a, err = r.capture(rel1); err != nil {
						return nil, nil, err
					}
				}
			}
			if in2 {
				b, err = r.capture(rel2)
			}
			return a, b, err
		}, func() {
			if in1 && r.saved[rel1]&savedContent == 0 {
				r.saved[rel1] |= savedContent | savedMeta
			}
			if in2 {
				r.saved[rel2] |= savedContent | savedMeta
			}
		})
	case Rename:
		switch {
		case in1 && in2:
			var moves bool
			return r.entry(kind, rel1, rel2, "", func() (*State, *State, error) {
				a, err := r.meta(rel1)
				if err != nil {
					return nil, nil, err
				}
				moves = a.Type != TypeAbsent
				b, err := r.capture(rel2)
				return a, b, err
			}, func() {
				if moves {
					r.moveKeys(rel1, rel2)
				}
			})
		case in1:
			return r.leaves(rel1)
		default:
			return r.entry(kind, path, rel2, "in", func() (*State, *State, error) {
				b, err := r.capture(rel2)
				return nil, b, err
			}, func() {
				r.dropKeys(rel2)
				r.saved[rel2] = savedContent | savedMeta
			})
		}
	case Exchange:
		switch {
		case in1 && in2:
			return r.entry(kind, rel1, rel2, "", func() (*State, *State, error) {
				a, err := r.meta(rel1)
				if err != nil {
					return nil, nil, err
				}
				b, err := r.meta(rel2)
				return a, b, err
			}, func() { r.swapKeys(rel1, rel2) })
		default:
			// One side leaves the workspace and the other comes in.
			rel, outside := rel1, path2
			if !in1 {
				rel, outside = rel2, path
			}
			if err := r.leaves(rel); err != nil {
				return err
			}
			return r.entry(kind, outside, rel, "in", func() (*State, *State, error) {
				b, err := r.meta(rel)
				return nil, b, err
			}, func() {
				r.dropKeys(rel)
				r.saved[rel] = savedContent | savedMeta
			})
		}
	}
	return syscall.EINVAL
}

// entry writes one entry: capture gives the states (storing content),
// then the line is written, then mark updates what the run holds. The
// store lock is held from the first object stored (see capture) to the
// line written.
func (r *Run) entry(kind Kind, p, p2, x string, capture func() (*State, *State, error), mark func()) error {
	if err := r.open(); err != nil {
		return err
	}
	defer func() {
		if r.unlock != nil {
			r.unlock()
			r.unlock = nil
		}
	}()
	a, b, err := capture()
	if err != nil {
		return err
	}
	rec := &record{T: "e", At: r.j.o.Now().UnixNano(), K: kind.String(), P: p, P2: p2, A: a, B: b, X: x}
	if err := appendLine(r.f, &r.off, rec); err != nil {
		return err
	}
	r.entries++
	for _, p := range []string{p, p2} {
		if p != "" && !filepath.IsAbs(p) {
			r.names[p] = struct{}{}
		}
	}
	for _, s := range []*State{a, b} {
		if s != nil && s.Object != "" && !r.objs[s.Object] {
			r.objs[s.Object] = true
			r.kept += s.Size
		}
	}
	if mark != nil {
		mark()
	}
	return nil
}

// open makes the run's log the first time it is needed: under a hidden
// name, locked, given its header, then linked to its own name (which must
// not exist), so that a reader never sees a log without a header or
// unlocked while the run lives.
func (r *Run) open() error {
	if r.f != nil {
		return nil
	}
	if err := r.j.ensureDirs(); err != nil {
		return err
	}
	var rb [6]byte
	_, _ = rand.Read(rb[:])
	tmp := filepath.Join(r.j.runsDir(), "."+r.info.ID+"-"+hex.EncodeToString(rb[:]))
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND|noFollow, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := flock(f, lockExclusive|lockNB); err != nil {
		f.Close()
		return err
	}
	var off int64
	info := r.info
	head := &record{T: "run", V: logVersion, ID: info.ID, WS: r.ws, Argv: info.Argv, Cwd: info.Cwd,
		Session: info.Session, Ticket: info.Ticket, Channel: info.Channel, Sender: info.Sender,
		Start: r.start.UnixNano(), Undoes: info.undoes}
	if err := appendLine(f, &off, head); err != nil {
		f.Close()
		return err
	}
	if err := os.Link(tmp, r.j.logPath(info.ID)); err != nil {
		f.Close()
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("journal: run %s exists already: %w", info.ID, syscall.EEXIST)
		}
		return err
	}
	r.f, r.off = f, off
	return nil
}

// meta is the state of rel without its content: what a call that keeps
// the content (chmod, the source of a rename) needs to put back.
func (r *Run) meta(rel string) (*State, error) {
	st, err := lstat(r.abs(rel))
	if err != nil {
		return nil, err
	}
	if st.Type == TypeFile {
		st.Kept = keptMeta
	}
	return &st, nil
}

// capture is the state of rel with what the call may destroy: a regular
// file's content (unless an earlier entry of the run kept it), a link's
// target, a directory's mode.
func (r *Run) capture(rel string) (*State, error) {
	path := r.abs(rel)
	st, err := lstat(path)
	if err != nil {
		return nil, err
	}
	if st.Type != TypeFile {
		return &st, nil
	}
	if r.saved[rel]&savedContent != 0 {
		st.Kept = keptEarlier
		return &st, nil
	}
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ELOOP) {
			// It changed under us: describe what is there now.
			return r.meta(rel)
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	st = stateOf(path, fi)
	if st.Type != TypeFile {
		return &st, nil
	}
	if max := r.j.o.MaxFile; max > 0 && st.Size > max {
		// Its digest tells undo whether the content is still the one
		// the run found: read while the call waits, so only up to a
		// bound (a sparse file of a terabyte costs a command nothing).
		if st.Size <= maxHashed && r.hashed+st.Size <= hashBudget {
			r.hashed += st.Size
			if st.Digest, err = hashOnly(io.LimitReader(f, st.Size)); err != nil {
				return nil, err
			}
		}
		st.Kept = NotKeptTooBig
		r.notKept = append(r.notKept, NotKept{Path: path, Why: NotKeptTooBig, Size: st.Size})
		return &st, nil
	}
	if !r.fits(st.Size) {
		st.Kept = NotKeptQuota
		r.notKept = append(r.notKept, NotKept{Path: path, Why: NotKeptQuota, Size: st.Size})
		return &st, nil
	}
	if r.unlock == nil {
		if r.unlock, err = r.j.lockStore(); err != nil {
			return nil, err
		}
	}
	// What the file held when it was opened: a writer appending through
	// another name cannot keep the copy going.
	digest, size, err := r.j.put(io.LimitReader(f, st.Size))
	if err != nil {
		return nil, err
	}
	st.Object, st.Size = digest, size
	return &st, nil
}

// leaves records a tree that the call takes out of the workspace (a
// rename to outside it or below an excluded directory): every file in it
// is kept as if deleted, children first.
func (r *Run) leaves(rel string) error {
	st, err := lstat(r.abs(rel))
	if err != nil {
		return err
	}
	switch st.Type {
	case TypeAbsent:
		return nil
	case TypeDir:
		ents, err := os.ReadDir(r.abs(rel))
		if err != nil {
			return err
		}
		for _, e := range ents {
			child := rel + "/" + e.Name()
			if e.IsDir() && r.j.exclude[e.Name()] {
				continue
			}
			if err := r.leaves(child); err != nil {
				return err
			}
		}
		err = r.entry(Rmdir, rel, "", "out", func() (*State, *State, error) {
			a, err := r.capture(rel)
			return a, nil, err
		}, nil)
		if err == nil {
			r.dropKeys(rel)
		}
		return err
	}
	err = r.entry(Unlink, rel, "", "out", func() (*State, *State, error) {
		a, err := r.capture(rel)
		return a, nil, err
	}, nil)
	if err == nil {
		r.dropKeys(rel)
	}
	return err
}

// under says whether p is base or lies below it.
func under(p, base string) bool {
	return p == base || strings.HasPrefix(p, base) && p[len(base)] == '/'
}

// moveKeys moves what the run holds of from (and below it) to to,
// dropping what it held of to: the content now at to is from's.
func (r *Run) moveKeys(from, to string) {
	r.dropKeys(to)
	for k, v := range r.saved {
		if under(k, from) {
			delete(r.saved, k)
			r.saved[to+k[len(from):]] = v
		}
	}
}

// dropKeys forgets what the run held of p and below it.
func (r *Run) dropKeys(p string) {
	for k := range r.saved {
		if under(k, p) {
			delete(r.saved, k)
		}
	}
}

// swapKeys exchanges what the run holds of a and b (and below them).
func (r *Run) swapKeys(a, b string) {
	moved := map[string]uint8{}
	for k, v := range r.saved {
		switch {
		case under(k, a):
			delete(r.saved, k)
			moved[b+k[len(a):]] = v
		case under(k, b):
			delete(r.saved, k)
			moved[a+k[len(b):]] = v
		}
	}
	for k, v := range moved {
		r.saved[k] = v
	}
}

// fits says whether size more bytes keep the workspace within its quota,
// pruning the workspace's oldest runs (and runs past their age) to make
// room when they do not.
func (r *Run) fits(size int64) bool {
	q := r.j.o.Quota
	if q <= 0 {
		return true
	}
	if r.usage < 0 {
		r.usage = r.j.workspaceUsage(r.ws, r.info.ID)
	}
	if r.usage+r.kept+size <= q {
		return true
	}
	if r.pruned || r.kept+size > q {
		return false
	}
	// Once a run: prune what is past its age, then the oldest runs, until
	// the content fits. The objects they alone named are collected when
	// this run ends (the collector waits for every writer).
	r.pruned = true
	r.gone = append(r.gone, r.j.pruneWorkspace(r.ws, r.info.ID, r.kept+size)...)
	r.usage = r.j.workspaceUsage(r.ws, r.info.ID)
	return r.usage+r.kept+size <= q
}

// Finish records the state every path the run touched was left in, ends
// the log and releases it. It returns what the run recorded.
func (r *Run) Finish() (Summary, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sum := Summary{ID: r.info.ID, Changed: r.f != nil, Entries: r.entries, Kept: r.kept, NotKept: r.notKept, Pruned: r.gone}
	if r.finished {
		return sum, nil
	}
	r.finished = true
	if r.f == nil {
		return sum, nil
	}
	defer func() {
		r.f.Close()
		if r.pruned {
			_, _, _ = r.j.collect()
		}
		r.j.maybePrune()
	}()
	names := make([]string, 0, len(r.names))
	for n := range r.names {
		names = append(names, n)
	}
	sort.Strings(names)
	// The states go out in large writes: a run killed among them has no
	// end, and its reader takes them again.
	var buf []byte
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		n, err := r.f.Write(buf)
		r.off += int64(n)
		buf = buf[:0]
		return err
	}
	for _, n := range names {
		st, err := lstat(r.abs(n))
		if err != nil {
			continue
		}
		b, err := json.Marshal(&record{T: "after", P: n, S: &st})
		if err != nil {
			return sum, err
		}
		buf = append(append(buf, b...), '\n')
		if len(buf) >= 64<<10 {
			if err := flush(); err != nil {
				return sum, err
			}
		}
	}
	if err := flush(); err != nil {
		return sum, err
	}
	end := &record{T: "end", At: r.j.o.Now().UnixNano(), Entries: r.entries, Kept: r.kept, Failed: r.failed}
	return sum, appendLine(r.f, &r.off, end)
}

// isDir says whether path is a directory (not a link to one).
func isDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}
