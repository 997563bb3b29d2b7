package gate

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// What git's index says of the files a deletion names: whether git holds
// each one as it is now, so that deleting it loses nothing git cannot give
// back, or the file has uncommitted changes. git itself is never run to
// ask (git status would read the repository's configuration and may run
// its fsmonitor hook, outside any sandbox): the index file is read, and
// each entry's recorded stat data compared with the file's, its content
// hashed when they differ or the entry is racy, as git does.

// maxIndexSize bounds the index read at decision time; a larger one
// cannot be read, and every file it would hold counts as changed.
const maxIndexSize = 64 << 20

// maxHashedFile bounds a file hashed to compare with its entry; a larger
// one whose stat data differs counts as changed.
const maxHashedFile = 8 << 20

// indexEntry is one entry of the index: a path (slash-separated, relative
// to the work tree), its mode, the stat data git recorded, and its object
// id.
type indexEntry struct {
	path        string
	mode        uint32
	mtime       time.Time
	size        uint32
	ino         uint32
	oid         []byte
	intentToAdd bool
}

// gitIndex is a work tree's index, its entries sorted by path.
type gitIndex struct {
	root    string // the work tree
	entries []indexEntry
	// mtime is the index file's: an entry whose file changed in the
	// same second or later is racy, its stat data not to be trusted.
	mtime time.Time
	// sha256 says the repository's objects are named by SHA-256.
	sha256 bool
}

// errIndexUnknown is an index that cannot be read as a whole: split,
// too large, or of a version or layout not known here.
var errIndexUnknown = errors.New("the git index cannot be read")

// gitDirOf returns the git directory of the work tree root: root/.git,
// or where a .git file points (a linked work tree, a submodule).
func gitDirOf(root string) (string, bool) {
	dotgit := filepath.Join(root, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return "", false
	case fi.IsDir():
		return dotgit, true
	case !fi.Mode().IsRegular() || fi.Size() > 4096:
		return "", false
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return "", false
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || dir == "" {
		return "", false
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	return filepath.Clean(dir), true
}

// readGitIndex reads the index of the work tree root.
func readGitIndex(root string) (*gitIndex, error) {
	gitDir, ok := gitDirOf(root)
	if !ok {
		return nil, fmt.Errorf("%s is not a git work tree", root)
	}
	f, err := os.Open(filepath.Join(gitDir, "index"))
	if errors.Is(err, os.ErrNotExist) {
		// A repository with nothing added yet.
		return &gitIndex{root: root}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxIndexSize {
		return nil, errIndexUnknown
	}
	data, err := io.ReadAll(io.LimitReader(f, maxIndexSize+1))
	if err != nil {
		return nil, err
	}
	ix := &gitIndex{root: root, mtime: fi.ModTime(), sha256: objectFormatSHA256(gitDir)}
	if err := ix.parse(data); err != nil {
		return nil, err
	}
	return ix, nil
}

// objectFormatSHA256 reports whether the repository's configuration
// names SHA-256 object ids (extensions.objectFormat); a linked work
// tree's is in the common directory.
func objectFormatSHA256(gitDir string) bool {
	cfg := filepath.Join(gitDir, "config")
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		cfg = filepath.Join(common, "config")
	}
	b, err := os.ReadFile(cfg)
	if err != nil || len(b) > 1<<20 {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "objectformat") && strings.EqualFold(strings.TrimSpace(v), "sha256") {
			return true
		}
	}
	return false
}

// parse reads index versions 2, 3 and 4.
func (ix *gitIndex) parse(data []byte) error {
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return errIndexUnknown
	}
	version := binary.BigEndian.Uint32(data[4:8])
	n := binary.BigEndian.Uint32(data[8:12])
	if version < 2 || version > 4 || int64(n) > int64(len(data)/40) {
		return errIndexUnknown
	}
	oidLen := sha1.Size
	if ix.sha256 {
		oidLen = sha256.Size
	}
	ix.entries = make([]indexEntry, 0, n)
	off := 12
	prev := ""
	for range n {
		start := off
		fixed := 40 + oidLen + 2
		if off+fixed > len(data) {
			return errIndexUnknown
		}
		be := binary.BigEndian
		e := indexEntry{
			mtime: time.Unix(int64(be.Uint32(data[off+8:])), int64(be.Uint32(data[off+12:]))),
			ino:   be.Uint32(data[off+20:]),
			mode:  be.Uint32(data[off+24:]),
			size:  be.Uint32(data[off+36:]),
			oid:   data[off+40 : off+40+oidLen],
		}
		flags := be.Uint16(data[off+40+oidLen:])
		off += fixed
		if flags&0x4000 != 0 {
			if version < 3 || off+2 > len(data) {
				return errIndexUnknown
			}
			e.intentToAdd = be.Uint16(data[off:])&0x2000 != 0
			off += 2
		}
		if version == 4 {
			strip, k := indexVarint(data[off:])
			if k == 0 || strip > uint64(len(prev)) {
				return errIndexUnknown
			}
			off += k
			end := bytes.IndexByte(data[off:], 0)
			if end < 0 {
				return errIndexUnknown
			}
			e.path = prev[:len(prev)-int(strip)] + string(data[off:off+end])
			off += end + 1
		} else {
			end := bytes.IndexByte(data[off:], 0)
			if end < 0 {
				return errIndexUnknown
			}
			e.path = string(data[off : off+end])
			// Padded with 1 to 8 NULs to a multiple of 8.
			off = start + (off+end-start+8)&^7
			if off > len(data) {
				return errIndexUnknown
			}
		}
		prev = e.path
		ix.entries = append(ix.entries, e)
	}
	// A split index keeps entries in a shared file as well.
	for off+8 <= len(data)-oidLen {
		sig := string(data[off : off+4])
		size := int(binary.BigEndian.Uint32(data[off+4:]))
		if sig == "link" || sig == "sdir" {
			return errIndexUnknown
		}
		if size < 0 || off+8+size > len(data) {
			break
		}
		off += 8 + size
	}
	sort.SliceStable(ix.entries, func(i, j int) bool { return ix.entries[i].path < ix.entries[j].path })
	return nil
}

// indexVarint reads the offset varint of index version 4; k is 0 when
// it does not end.
func indexVarint(b []byte) (v uint64, k int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v = uint64(c & 127)
	k = 1
	for c&128 != 0 {
		if k >= len(b) || k > 9 {
			return 0, 0
		}
		v++
		c = b[k]
		v = v<<7 + uint64(c&127)
		k++
	}
	return v, k
}

// under returns the entries at rel or below it ("" for the whole tree).
func (ix *gitIndex) under(rel string) []indexEntry {
	if rel == "" || rel == "." {
		return ix.entries
	}
	i := sort.Search(len(ix.entries), func(i int) bool { return ix.entries[i].path >= rel })
	j := i
	for j < len(ix.entries) {
		p := ix.entries[j].path
		if p != rel && !strings.HasPrefix(p, rel+"/") {
			// Paths between rel and rel+"/" ("src-old", "src.go") sort
			// before "src/": look past them.
			if strings.HasPrefix(p, rel) && p[len(rel)] < '/' {
				j++
				continue
			}
			break
		}
		j++
	}
	var out []indexEntry
	for _, e := range ix.entries[i:j] {
		if e.path == rel || strings.HasPrefix(e.path, rel+"/") {
			out = append(out, e)
		}
	}
	return out
}

// changed says how the work tree's file of e differs from what the
// index holds for it ("" when it does not): its content or its kind
// changed. A file that no longer exists has nothing left to lose. A
// gitlink (a submodule) counts as changed: its own index is not read.
func (ix *gitIndex) changed(e indexEntry) string {
	const (
		typeMask = 0o170000
		regular  = 0o100000
		symlink  = 0o120000
		gitlink  = 0o160000
	)
	const uncommitted = "which has uncommitted changes"
	if e.mode&typeMask == gitlink {
		return "a repository of its own, whose uncommitted changes are not checked"
	}
	p := filepath.Join(ix.root, filepath.FromSlash(e.path))
	fi, err := os.Lstat(p)
	if err != nil {
		return ""
	}
	switch {
	case e.mode&typeMask == symlink && fi.Mode()&os.ModeSymlink != 0:
	case e.mode&typeMask == regular && fi.Mode().IsRegular():
	default:
		return uncommitted
	}
	if e.intentToAdd {
		if fi.Size() > 0 {
			return uncommitted
		}
		return ""
	}
	racy := !ix.mtime.IsZero() && !e.mtime.Before(ix.mtime)
	if !racy && uint32(fi.Size()) == e.size && fi.ModTime().Equal(e.mtime) && sameIno(fi, e.ino) {
		return ""
	}
	if uint32(fi.Size()) != e.size || fi.Size() > maxHashedFile {
		return uncommitted
	}
	if oid, ok := ix.blobID(p, fi); !ok || !bytes.Equal(oid, e.oid) {
		return uncommitted
	}
	return ""
}

// blobID is the object id git gives the file's content (a link's
// target, for a symbolic link).
func (ix *gitIndex) blobID(p string, fi os.FileInfo) ([]byte, bool) {
	var content []byte
	var err error
	if fi.Mode()&os.ModeSymlink != 0 {
		var t string
		t, err = os.Readlink(p)
		content = []byte(t)
	} else {
		content, err = readNoFollow(p, maxHashedFile)
	}
	if err != nil {
		return nil, false
	}
	var h hash.Hash = sha1.New()
	if ix.sha256 {
		h = sha256.New()
	}
	h.Write([]byte("blob " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	return h.Sum(nil), true
}

// readNoFollow reads a regular file of at most max bytes, without
// following a link put in its place or blocking on a FIFO.
func readNoFollow(p string, max int64) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > max {
		return nil, errIndexUnknown
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// sameIno compares the inode number git recorded (its low 32 bits),
// where the platform gives one.
func sameIno(fi os.FileInfo, ino uint32) bool {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint32(st.Ino) == ino
	}
	return true
}

// has reports whether the index holds an entry for rel (slash-separated,
// relative to the work tree).
func (ix *gitIndex) has(rel string) bool {
	i := sort.Search(len(ix.entries), func(i int) bool { return ix.entries[i].path >= rel })
	return i < len(ix.entries) && ix.entries[i].path == rel
}
