package journal

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

const (
	noFollow      = unix.O_NOFOLLOW
	lockShared    = unix.LOCK_SH
	lockExclusive = unix.LOCK_EX
	lockUnlock    = unix.LOCK_UN
	lockNB        = unix.LOCK_NB
)

// errWouldBlock is what a non-blocking flock returns when another holds it.
var errWouldBlock = unix.EWOULDBLOCK

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), how)
			if !errors.Is(ferr, unix.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// sysStat fills what the kernel says of a file beyond fs.FileInfo.
func sysStat(fi fs.FileInfo, s *State) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	s.Ino, s.Dev, s.Nlink = st.Ino, uint64(st.Dev), uint64(st.Nlink)
	s.UID, s.GID = int(st.Uid), int(st.Gid)
	s.Ctime = st.Ctim.Nano()
	s.Mtime = st.Mtim.Nano()
}

// exchange swaps two names atomically (renameat2 RENAME_EXCHANGE).
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// mkfifo makes a named pipe.
func mkfifo(path string, mode uint32) error { return unix.Mkfifo(path, mode) }

// lutimes sets a file's modification time without following a link.
func lutimes(path string, mtimeNs int64) error {
	ts := []unix.Timespec{{Sec: 0, Nsec: unix.UTIME_OMIT}, unix.NsecToTimespec(mtimeNs)}
	return unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, unix.AT_SYMLINK_NOFOLLOW)
}
