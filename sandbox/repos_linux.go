package sandbox

import (
	"golang.org/x/sys/unix"
)

// The file system calls of the repository check (repos.go): directories
// read with getdents, which gives each entry's type without a stat, and
// statx, which gives the change time (which no program can set back) and,
// where the file system keeps it, the birth time.

// reposSupported is true where the check can run.
const reposSupported = true

// dirent is one entry of a directory.
type dirent struct {
	name string
	typ  byte // direntDir, direntLink, direntFile, direntOther, direntUnknown
}

const (
	direntUnknown = iota
	direntDir
	direntLink
	direntFile
	direntOther
)

// nodeInfo is what the check needs of a file.
type nodeInfo struct {
	typ          byte
	ctime, btime int64 // unix nanoseconds; btime 0 when unknown
	dev, ino     uint64
}

// openDir opens name, relative to the directory dirfd, as a directory;
// with nofollow, never through a symbolic link at its last component.
func openDir(dirfd int, name string, nofollow bool) (int, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if nofollow {
		flags |= unix.O_NOFOLLOW
	}
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func closeFD(fd int) { unix.Close(fd) }

// atCwd is the dirfd that names the working directory.
const atCwd = unix.AT_FDCWD

// readDirents lists the directory open at fd, "." and ".." left out.
func readDirents(fd int, buf []byte) ([]dirent, error) {
	var out []dirent
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		for off := 0; off+19 <= n; {
			reclen := int(buf[off+16]) | int(buf[off+17])<<8
			if reclen == 0 || off+reclen > n {
				return out, unix.EINVAL
			}
			typ := buf[off+18]
			name := buf[off+19 : off+reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			off += reclen
			if len(name) == 1 && name[0] == '.' || len(name) == 2 && name[0] == '.' && name[1] == '.' {
				continue
			}
			t := byte(direntOther)
			switch typ {
			case unix.DT_DIR:
				t = direntDir
			case unix.DT_LNK:
				t = direntLink
			case unix.DT_REG:
				t = direntFile
			case unix.DT_UNKNOWN:
				t = direntUnknown
			}
			out = append(out, dirent{name: string(name), typ: t})
		}
	}
}

// noFollow is the open flag that refuses a link at the last component.
const noFollow = unix.O_NOFOLLOW

// statAt is lstat of path relative to dirfd.
func statAt(dirfd int, path string) (nodeInfo, error) {
	return statx(dirfd, path, unix.AT_SYMLINK_NOFOLLOW)
}

// statFollow is stat of path, through links.
func statFollow(path string) (nodeInfo, error) { return statx(atCwd, path, 0) }

func statx(dirfd int, path string, flags int) (nodeInfo, error) {
	var st unix.Statx_t
	for {
		// As stat(2) does: a network file system's cached times may be
		// stale.
		err := unix.Statx(dirfd, path, flags|unix.AT_STATX_SYNC_AS_STAT|unix.AT_NO_AUTOMOUNT,
			unix.STATX_TYPE|unix.STATX_INO|unix.STATX_CTIME|unix.STATX_BTIME, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nodeInfo{}, err
		}
		break
	}
	ni := nodeInfo{ctime: st.Ctime.Sec*1e9 + int64(st.Ctime.Nsec), ino: st.Ino,
		dev: uint64(st.Dev_major)<<32 | uint64(st.Dev_minor)}
	if st.Mask&unix.STATX_BTIME != 0 {
		ni.btime = st.Btime.Sec*1e9 + int64(st.Btime.Nsec)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		ni.typ = direntDir
	case unix.S_IFLNK:
		ni.typ = direntLink
	case unix.S_IFREG:
		ni.typ = direntFile
	default:
		ni.typ = direntOther
	}
	return ni, nil
}
