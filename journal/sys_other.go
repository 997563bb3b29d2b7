//go:build !linux

package journal

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// Elsewhere than Linux the journal can be read but keeps no lock and no
// inode: nothing there feeds it (the capture is Linux's seccomp).

const (
	noFollow      = 0
	lockShared    = 1
	lockExclusive = 2
	lockUnlock    = 8
	lockNB        = 4
)

var errWouldBlock = errors.New("would block")

func flock(*os.File, int) error { return nil }

func sysStat(fi fs.FileInfo, s *State) { s.Mtime = fi.ModTime().UnixNano() }

func exchange(a, b string) error { return syscall.ENOSYS }

func mkfifo(string, uint32) error { return syscall.ENOSYS }

func lutimes(path string, mtimeNs int64) error {
	t := time.Unix(0, mtimeNs)
	return os.Chtimes(path, t, t)
}
