package classify

import (
	"path"
	"strings"
)

// Within reports whether target is dir or below it (both absolute, clean).
func Within(dir, target string) bool {
	if dir == "" || !path.IsAbs(dir) || !path.IsAbs(target) {
		return false
	}
	if !cleanAbs(dir) {
		dir = path.Clean(dir)
	}
	if !cleanAbs(target) {
		target = path.Clean(target)
	}
	return target == dir || dir == "/" ||
		len(target) > len(dir) && target[len(dir)] == '/' && strings.HasPrefix(target, dir)
}

// cleanAbs reports whether an absolute path is already what path.Clean
// would make of it: no empty, "." or ".." element, no trailing slash.
func cleanAbs(p string) bool {
	if p == "/" {
		return true
	}
	if p == "" || p[len(p)-1] == '/' {
		return false
	}
	// An empty, "." or ".." element after a slash; strings.Contains looks
	// for each faster than a loop over the bytes would.
	return !strings.Contains(p, "//") && !strings.Contains(p, "/./") && !strings.Contains(p, "/../") &&
		!strings.HasSuffix(p, "/.") && !strings.HasSuffix(p, "/..")
}

// HasCap reports whether any access of the classification uses c.
func HasCap(cl *Classification, c Capability) bool {
	for _, a := range cl.Accesses {
		if a.Capability == c {
			return true
		}
	}
	return false
}
