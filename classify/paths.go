package classify

import (
	"path"
	"strings"
)

// Within reports whether target is dir or below it (both absolute, clean).
func Within(dir, target string) bool {
	if dir == "" || !path.IsAbs(dir) {
		return false
	}
	if !cleanAbs(dir) {
		dir = path.Clean(dir)
	}
	return WithinClean(dir, target)
}

// WithinClean is Within for a dir known to be absolute and clean (as
// path.Clean leaves it), which it does not look at again: a caller
// asking about many targets cleans dir once.
func WithinClean(dir, target string) bool {
	if !path.IsAbs(target) {
		return false
	}
	if target == dir || dir == "/" {
		return true
	}
	below := len(target) > len(dir) && target[len(dir)] == '/' && strings.HasPrefix(target, dir)
	if below && cleanAbs(target[len(dir):]) {
		// dir's elements are clean, and so are those after it.
		return true
	}
	if !below && !strings.Contains(target, path.Base(dir)) {
		// Cleaning only drops elements: a target that cleans to a path
		// below dir holds dir's last element as written.
		return false
	}
	if cleanAbs(target) {
		return below
	}
	target = path.Clean(target)
	return target == dir || len(target) > len(dir) && target[len(dir)] == '/' && strings.HasPrefix(target, dir)
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
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		// The element after this slash.
		j := i + 1
		if j == len(p) || p[j] == '/' {
			return false
		}
		if p[j] == '.' && (j+1 == len(p) || p[j+1] == '/' || p[j+1] == '.' && (j+2 == len(p) || p[j+2] == '/')) {
			return false
		}
	}
	return true
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

// WithinAny reports whether target is one of dirs or below one of them
// (each compared as Within does).
func WithinAny(target string, dirs []string) bool {
	for _, d := range dirs {
		if Within(d, target) {
			return true
		}
	}
	return false
}
