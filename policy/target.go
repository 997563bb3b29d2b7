package policy

import (
	"path"
	"strings"
)

// MatchTarget reports whether a grant's target pattern covers a concrete
// target. Patterns are exact values or path globs: "*" and "?" and "[...]"
// match within one path element, a final "/**" matches the directory itself
// and anything below it. An empty pattern or target never matches.
func MatchTarget(pattern, target string) bool {
	if pattern == "" || target == "" {
		return false
	}
	if pattern == target {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/**"); ok {
		if base == "" { // "/**" would be the whole filesystem: never.
			return false
		}
		if MatchTarget(base, target) {
			return true
		}
		// Any ancestor of target that matches base covers it.
		for dir := target; ; {
			parent := path.Dir(dir)
			if parent == dir || parent == "." {
				return false
			}
			if MatchTarget(base, parent) {
				return true
			}
			dir = parent
		}
	}
	ok, err := path.Match(pattern, target)
	return err == nil && ok
}

// CoversEverything reports whether a target pattern, once trailing "/**"
// and "/" are removed, is nothing but wildcards and slashes: a grant on it
// would cover every path.
func CoversEverything(target string) bool {
	t := target
	for {
		if u, ok := strings.CutSuffix(t, "/**"); ok {
			t = u
			continue
		}
		if u, ok := strings.CutSuffix(t, "/"); ok {
			t = u
			continue
		}
		break
	}
	return strings.Trim(t, "/*?") == ""
}
