//go:build unix

package policy

import (
	"io/fs"
	"syscall"
)

// fileOwner reads the owner's uid from a file's stat data.
func fileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st == nil {
		return 0, false
	}
	return int(st.Uid), true
}

// openNoBlock keeps opening a FIFO planted where a policy is expected
// from blocking; it changes nothing for a regular file.
const openNoBlock = syscall.O_NONBLOCK
