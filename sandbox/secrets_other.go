//go:build !linux

package sandbox

import (
	"os"
	"slices"
)

// dirNames lists a directory's entries, sorted.
func dirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	slices.Sort(names)
	return names, err
}

// lexists reports whether p exists, without following a final symbolic
// link.
func lexists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
