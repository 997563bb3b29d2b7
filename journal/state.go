package journal

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"syscall"
)

var errNotDir = syscall.ENOTDIR

// Why undo leaves a path alone.
var (
	// errOutside: the path is not below the workspace.
	errOutside = errors.New("outside the workspace: mnemos undo does not write there")
	// errLinkOnTheWay: a directory on the way to the path is a link now
	// (or not a directory), which could lead out of the workspace.
	errLinkOnTheWay = errors.New("a link now stands where the run left a directory: mnemos undo does not follow it")
)

// Types of what a path holds.
const (
	TypeAbsent  = "absent"
	TypeFile    = "file"
	TypeDir     = "dir"
	TypeSymlink = "symlink"
	TypeFIFO    = "fifo"
	TypeOther   = "other"
)

// Why a file's content is not in its State.Object.
const (
	// keptEarlier: an earlier entry of the run kept it.
	keptEarlier = "earlier"
	// keptMeta: only the metadata was recorded; the call does not change
	// the content (chmod, the source of a rename).
	keptMeta = "meta"
	// NotKeptTooBig: the file is above Options.MaxFile; its digest is kept.
	NotKeptTooBig = "too big"
	// NotKeptQuota: keeping it would exceed the workspace's quota.
	NotKeptQuota = "quota"
)

// State is what a path held at one moment.
type State struct {
	Type  string `json:"t"`
	Mode  uint32 `json:"m,omitempty"` // permission and special bits (07777)
	Size  int64  `json:"sz,omitempty"`
	Mtime int64  `json:"mt,omitempty"` // nanoseconds since the epoch
	Ctime int64  `json:"ct,omitempty"`
	UID   int    `json:"u,omitempty"`
	GID   int    `json:"g,omitempty"`
	Nlink uint64 `json:"nl,omitempty"`
	Ino   uint64 `json:"i,omitempty"`
	Dev   uint64 `json:"d,omitempty"`
	// Target is a symbolic link's target.
	Target string `json:"l,omitempty"`
	// Object is the digest of the kept content (a regular file).
	Object string `json:"o,omitempty"`
	// Digest is the content's digest when the content was not kept.
	Digest string `json:"h,omitempty"`
	// Kept says why a regular file has no Object: keptEarlier, keptMeta,
	// NotKeptTooBig, NotKeptQuota.
	Kept string `json:"k,omitempty"`
}

// MarshalJSON writes a link's target that is not UTF-8 whole beside it
// (see record.MarshalJSON).
func (s State) MarshalJSON() ([]byte, error) {
	type plain State
	return json.Marshal(struct {
		plain
		TargetX []byte `json:"lx,omitempty"`
	}{plain(s), rawName(s.Target)})
}

func (s *State) UnmarshalJSON(b []byte) error {
	type plain State
	var v struct {
		plain
		TargetX []byte `json:"lx,omitempty"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = State(v.plain)
	s.Target = nameOf(s.Target, v.TargetX)
	return nil
}

// Restorable says whether the content the state describes can be put back.
func (s State) Restorable() bool {
	return s.Type != TypeFile || s.Object != "" || s.Kept == keptEarlier || s.Kept == keptMeta
}

// lstat describes what is at path now, without content.
func lstat(path string) (State, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) {
		return State{Type: TypeAbsent}, nil
	}
	if err != nil {
		return State{}, err
	}
	return stateOf(path, fi), nil
}

// stateOf describes fi; a link's target is read from path.
func stateOf(path string, fi fs.FileInfo) State {
	return stateWith(fi, func() string {
		t, _ := os.Readlink(path)
		return t
	})
}

// stateWith describes fi; target reads a link's target.
func stateWith(fi fs.FileInfo, target func() string) State {
	s := State{Type: typeOf(fi.Mode()), Mode: unixPerm(fi.Mode()), Size: fi.Size()}
	sysStat(fi, &s)
	if s.Type == TypeSymlink {
		s.Target = target()
	}
	if s.Type == TypeDir || s.Type == TypeSymlink {
		s.Size = 0
	}
	return s
}

func typeOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return TypeFile
	case m.IsDir():
		return TypeDir
	case m&fs.ModeSymlink != 0:
		return TypeSymlink
	case m&fs.ModeNamedPipe != 0:
		return TypeFIFO
	}
	return TypeOther
}

// unixPerm turns Go's mode bits into the Unix permission and special bits.
func unixPerm(m fs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		p |= 0o1000
	}
	return p
}

// goMode is unixPerm's inverse, for os.Chmod.
func goMode(p uint32) fs.FileMode {
	m := fs.FileMode(p & 0o777)
	if p&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if p&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if p&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// sameAfter says whether what is at a path now (now) is what the run left
// there (after): a regular file by its inode, size, times and mode, a
// directory by its inode and mode (its times move with every name made in
// it), a link by its target.
func sameAfter(after, now State) bool {
	if after.Type != now.Type {
		return false
	}
	switch after.Type {
	case TypeAbsent:
		return true
	case TypeDir:
		return after.Ino == now.Ino && after.Mode == now.Mode
	case TypeSymlink:
		return after.Target == now.Target && after.Ino == now.Ino
	}
	return after.Ino == now.Ino && after.Dev == now.Dev && after.Size == now.Size && after.Mtime == now.Mtime &&
		after.Ctime == now.Ctime && after.Mode == now.Mode
}
