package gate

import (
	"io/fs"
	"strconv"
	"syscall"
)

// fileIdentity names one version of a file: device, inode, size,
// modification and change times. Writing to the file or replacing it
// changes it, and the change time cannot be set back.
func fileIdentity(fi fs.FileInfo) string {
	s := strconv.FormatInt(fi.Size(), 10) + ":" + strconv.FormatInt(fi.ModTime().UnixNano(), 10)
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st == nil {
		return s
	}
	return strconv.FormatUint(st.Dev, 10) + ":" + strconv.FormatUint(st.Ino, 10) + ":" + s + ":" +
		strconv.FormatInt(st.Ctim.Sec, 10) + "." + strconv.FormatInt(st.Ctim.Nsec, 10)
}
