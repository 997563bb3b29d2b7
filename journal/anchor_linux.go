package journal

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// at is a name in a directory held open: where undo changes something,
// reached from the workspace one name at a time without following a
// link. A directory a run replaced with a link (to the home directory,
// say) therefore cannot lead undo out of the workspace, even if it is
// swapped in after undo looked.
type at struct {
	dir  int // the directory, opened O_PATH
	name string
}

// openAt opens the directory that holds path, which must lie strictly
// below ws: errOutside otherwise, errLinkOnTheWay when a directory on
// the way is a link or not a directory.
func openAt(ws, path string) (*at, error) {
	rel, ok := within(ws, path)
	if !ok || !filepath.IsLocal(rel) {
		return nil, errOutside
	}
	const flags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Open(ws, flags, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: ws, Err: err}
	}
	dir, name := filepath.Split(rel)
	walked := ws
	for _, c := range strings.Split(dir, "/") {
		if c == "" {
			continue
		}
		walked = filepath.Join(walked, c)
		next, err := unix.Openat(fd, c, flags, 0)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			var st unix.Stat_t
			if unix.Fstatat(fd, c, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = errLinkOnTheWay
			}
		}
		unix.Close(fd)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: walked, Err: err}
		}
		fd = next
	}
	return &at{dir: fd, name: name}, nil
}

func (a *at) close() { unix.Close(a.dir) }

// sibling is another name in a's directory, held by a: closing a ends it.
func (a *at) sibling(name string) *at { return &at{dir: a.dir, name: name} }

// lstat describes what is at the name, absent when nothing is.
func (a *at) lstat() (State, error) {
	fd, err := unix.Openat(a.dir, a.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return State{Type: TypeAbsent}, nil
	}
	if err != nil {
		return State{}, err
	}
	f := os.NewFile(uintptr(fd), a.name)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return State{}, err
	}
	return stateWith(fi, func() string {
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(a.dir, a.name, buf)
		if err != nil || n < 0 {
			return ""
		}
		return string(buf[:n])
	}), nil
}

func (a *at) unlink() error { return unix.Unlinkat(a.dir, a.name, 0) }
func (a *at) rmdir() error  { return unix.Unlinkat(a.dir, a.name, unix.AT_REMOVEDIR) }

func (a *at) mkdir(mode uint32) error     { return unix.Mkdirat(a.dir, a.name, mode&0o777) }
func (a *at) symlink(target string) error { return unix.Symlinkat(target, a.dir, a.name) }
func (a *at) mkfifo(mode uint32) error    { return unix.Mkfifoat(a.dir, a.name, mode&0o777) }
func (a *at) lchown(uid, gid int) error {
	return unix.Fchownat(a.dir, a.name, uid, gid, unix.AT_SYMLINK_NOFOLLOW)
}
func (a *at) lutimes(mtimeNs int64) error {
	return unix.UtimesNanoAt(a.dir, a.name, omitAtime(mtimeNs), unix.AT_SYMLINK_NOFOLLOW)
}
func (a *at) openFlags(flags int, mode uint32) (*os.File, error) {
	fd, err := unix.Openat(a.dir, a.name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), a.name), nil
}

// create makes a new file at the name (it must not exist).
func (a *at) create(mode uint32) (*os.File, error) {
	return a.openFlags(unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, mode&0o777)
}

// open opens the file at the name for reading, not through a link.
func (a *at) open() (*os.File, error) { return a.openFlags(unix.O_RDONLY|unix.O_NONBLOCK, 0) }

// chmod sets the mode of what is at the name, never through a link.
func (a *at) chmod(mode uint32) error {
	err := unix.Fchmodat(a.dir, a.name, mode, unix.AT_SYMLINK_NOFOLLOW)
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS) {
		return err
	}
	// Before fchmodat2 (Linux 6.6): through a descriptor of the file
	// itself, which a link cannot redirect.
	fd, err := unix.Openat(a.dir, a.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return unix.EOPNOTSUPP
	}
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), mode)
}

func renameAt(from, to *at) error { return unix.Renameat(from.dir, from.name, to.dir, to.name) }
func linkAt(from, to *at) error   { return unix.Linkat(from.dir, from.name, to.dir, to.name, 0) }
func exchangeAt(a, b *at) error {
	return unix.Renameat2(a.dir, a.name, b.dir, b.name, unix.RENAME_EXCHANGE)
}

// omitAtime is the times that set the modification time alone.
func omitAtime(mtimeNs int64) []unix.Timespec {
	return []unix.Timespec{{Sec: 0, Nsec: unix.UTIME_OMIT}, unix.NsecToTimespec(mtimeNs)}
}
