package gate

import (
	"os"

	"golang.org/x/sys/unix"
)

// isForeground reports whether mnemos runs in the terminal's foreground
// process group, so terminal-generated signals reach its child directly.
func isForeground() bool {
	f, err := os.Open("/dev/tty")
	if err != nil {
		return false
	}
	defer f.Close()
	pgrp, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP)
	if err != nil {
		return false
	}
	return pgrp == unix.Getpgrp()
}
