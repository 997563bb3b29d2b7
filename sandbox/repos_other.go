//go:build !linux

package sandbox

import "syscall"

// The repository check (repos.go) runs on Linux only.
const reposSupported = false

type dirent struct {
	name string
	typ  byte
}

const (
	direntUnknown = iota
	direntDir
	direntLink
	direntFile
	direntOther
)

type nodeInfo struct {
	typ          byte
	ctime, btime int64
	dev, ino     uint64
}

const atCwd = -100

const noFollow = syscall.O_NOFOLLOW

func openDir(dirfd int, name string, nofollow bool) (int, error) { return -1, syscall.ENOSYS }
func closeFD(fd int)                                             {}
func readDirents(fd int, buf []byte) ([]dirent, error)           { return nil, syscall.ENOSYS }
func statAt(dirfd int, path string) (nodeInfo, error)            { return nodeInfo{}, syscall.ENOSYS }
func statFollow(path string) (nodeInfo, error)                   { return nodeInfo{}, syscall.ENOSYS }
