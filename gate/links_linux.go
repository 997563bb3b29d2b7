package gate

import (
	"errors"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// linkProbe tells, for absolute paths, whether an element is a symbolic
// link: each directory is opened once with openat2 refusing links
// (RESOLVE_NO_SYMLINKS walks every element of it in the kernel), and each
// path's last element is looked at with one fstatat below it. One
// linkProbe serves one decision; close releases its directories.
type linkProbe struct {
	dirs []probedDir
}

type probedDir struct {
	path  string
	fd    int
	state linkState
}

// links returns linkNone when p exists and holds no link, linkMissing when
// an element is missing before any link (nothing below it exists, so
// nothing is linked), linkMaybe when an element is a link or the kernel
// cannot say (no openat2, no search permission): the caller resolves p
// element by element then.
func (lp *linkProbe) links(p string) linkState {
	dir, base := filepath.Dir(p), filepath.Base(p)
	if p == "/" {
		return linkNone
	}
	d := lp.dir(dir)
	if d.state != linkNone {
		return d.state
	}
	var st unix.Stat_t
	switch err := unix.Fstatat(d.fd, base, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return linkMaybe
	case err == nil:
		return linkNone
	case errors.Is(err, unix.ENOENT):
		return linkMissing
	}
	return linkMaybe
}

func (lp *linkProbe) dir(dir string) probedDir {
	for _, d := range lp.dirs {
		if d.path == dir {
			return d
		}
	}
	d := probedDir{path: dir, fd: -1, state: linkMaybe}
	fd, err := unix.Openat2(unix.AT_FDCWD, dir, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	switch {
	case err == nil:
		d.fd, d.state = fd, linkNone
	case errors.Is(err, unix.ENOENT):
		d.state = linkMissing
	}
	lp.dirs = append(lp.dirs, d)
	return d
}

func (lp *linkProbe) close() {
	for _, d := range lp.dirs {
		if d.fd >= 0 {
			unix.Close(d.fd)
		}
	}
	lp.dirs = nil
}
