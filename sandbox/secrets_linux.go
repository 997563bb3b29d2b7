package sandbox

import (
	"slices"

	"golang.org/x/sys/unix"
)

// dirNames lists a directory's entries, sorted, with the fewest system
// calls: open, read the entries, close.
func dirNames(dir string) ([]string, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var names []string
	buf := make([]byte, 8192)
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			slices.Sort(names)
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

// lexists reports whether p exists, without following a final symbolic
// link.
func lexists(p string) bool {
	var st unix.Stat_t
	return unix.Lstat(p, &st) == nil
}
