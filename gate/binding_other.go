//go:build !linux

package gate

import (
	"io/fs"
	"strconv"
)

// fileIdentity names one version of a file by its size and modification
// time (the change time is read on Linux only).
func fileIdentity(fi fs.FileInfo) string {
	return strconv.FormatInt(fi.Size(), 10) + ":" + strconv.FormatInt(fi.ModTime().UnixNano(), 10)
}
