package gate

import (
	"errors"

	"golang.org/x/sys/unix"
)

// pathLinks says, in one openat2 call, whether the absolute path p holds
// a symbolic link in any element (the kernel walks it refusing links):
// linkNone when p exists and holds none, linkMissing when an element is
// missing before any link (nothing below it exists, so nothing is
// linked), linkMaybe when an element is a link or the kernel cannot say
// (no openat2, no search permission): the caller resolves p element by
// element then.
func pathLinks(p string) linkState {
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	switch {
	case err == nil:
		unix.Close(fd)
		return linkNone
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
		return linkMissing
	}
	return linkMaybe
}
