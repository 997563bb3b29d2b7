package sandbox

import (
	"fmt"
	"time"
)

// ChangeKind is what a change to the file system does. The zero value is
// no kind at all.
type ChangeKind uint8

const (
	// ChangeWrite: a file is opened for writing (O_WRONLY, O_RDWR,
	// O_CREAT or O_TRUNC), created by creat, or truncated by path. It may
	// not exist yet.
	ChangeWrite ChangeKind = iota + 1
	// ChangeUnlink: a name that is not a directory is removed.
	ChangeUnlink
	// ChangeRmdir: an empty directory is removed.
	ChangeRmdir
	// ChangeMkdir: a directory is made.
	ChangeMkdir
	// ChangeMknod: a node (a fifo, a socket, a device, or a regular file)
	// is made by mknod.
	ChangeMknod
	// ChangeRename: Path is moved to Path2, replacing what was there.
	ChangeRename
	// ChangeExchange: Path and Path2 swap places (RENAME_EXCHANGE).
	ChangeExchange
	// ChangeLink: a hard link to Path is made at Path2.
	ChangeLink
	// ChangeSymlink: a symbolic link is made at Path.
	ChangeSymlink
	// ChangeChmod: Path's mode changes.
	ChangeChmod
	// ChangeChown: Path's owner or group changes.
	ChangeChown
)

var changeNames = [...]string{"", "write", "unlink", "rmdir", "mkdir", "mknod", "rename", "exchange", "link", "symlink", "chmod", "chown"}

func (k ChangeKind) String() string {
	if int(k) < len(changeNames) && k != 0 {
		return changeNames[k]
	}
	return fmt.Sprintf("ChangeKind(%d)", uint8(k))
}

// Change is one change to the file system a watched command is about to
// make (see StartWatched), reported before the kernel makes it.
type Change struct {
	Kind ChangeKind
	// Path is absolute and clean, in mnemos's view of the file system:
	// the symbolic links in its parent directories are resolved, the
	// last element only when the call follows it (open without
	// O_NOFOLLOW or O_EXCL, truncate, chmod and chown without
	// AT_SYMLINK_NOFOLLOW, link with AT_SYMLINK_FOLLOW), never for the
	// names a call removes, moves or makes. It may not exist. For Link
	// it is the existing file; a link that names a file made without a
	// name (O_TMPFILE) is a Write of the new name.
	Path string
	// Path2 is the new name of Rename and Link, the other name of
	// Exchange; empty otherwise.
	Path2 string
	// Pid is the calling thread's id (the process id of a process with
	// one thread), in mnemos's pid namespace.
	Pid int
}

func (c Change) String() string {
	if c.Path2 != "" {
		return fmt.Sprintf("%s %s %s", c.Kind, c.Path, c.Path2)
	}
	return fmt.Sprintf("%s %s", c.Kind, c.Path)
}

// WatchStats count what a Watch served.
type WatchStats struct {
	// Calls is the number of trapped system calls the watch answered or
	// saw abandoned (the caller was killed or interrupted first).
	Calls int
	// Changes is the number of them handed to the handler.
	Changes int
	// Refused is the number of calls failed with an errno: by the
	// handler, or because the call could not be read (fail closed).
	Refused int
	// Busy is the time spent serving calls, from receiving each until
	// the answer, Handler included; Handler is the time in the handler
	// alone.
	Busy, Handler time.Duration
	// Err is why the watch stopped serving before the command ended, if
	// it did (every trapped call failed with ENOSYS from then on).
	Err error
}
