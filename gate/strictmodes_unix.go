//go:build unix

package gate

import (
	"io/fs"
	"syscall"
)

// ownerOf reads the owner's uid from a file's stat data.
func ownerOf(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st == nil {
		return 0, false
	}
	return int(st.Uid), true
}
