package audit

import (
	"context"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// openFlags are added when the log is opened: the log itself is never a
// symbolic link.
const openFlags = unix.O_NOFOLLOW

// lockFile takes a flock on f, exclusive or shared. When ctx can be
// cancelled the lock is polled, so a stuck holder costs the caller its
// deadline rather than hanging it.
func lockFile(ctx context.Context, f *os.File, exclusive bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	err := flock(f, how|unix.LOCK_NB)
	if !errors.Is(err, unix.EWOULDBLOCK) {
		return err
	}
	if ctx.Done() == nil {
		return flock(f, how)
	}
	wait := 50 * time.Microsecond
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
		}
		err := flock(f, how|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
		wait = min(2*wait, 5*time.Millisecond)
		t.Reset(wait)
	}
}

func unlockFile(f *os.File) error { return flock(f, unix.LOCK_UN) }

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
