//go:build unix

package policy

import (
	"io/fs"
	"syscall"
)

// FileOwner reads the owner's uid from a file's stat data; ok is false
// where files have no Unix owners.
func FileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st == nil {
		return 0, false
	}
	return int(st.Uid), true
}

// openNoBlock keeps opening a FIFO planted where a policy is expected
// from blocking; it changes nothing for a regular file.
const openNoBlock = syscall.O_NONBLOCK
