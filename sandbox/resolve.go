package sandbox

import "path/filepath"

// A Resolver resolves the symbolic links in absolute paths as the sandbox
// does when it builds its rules (Landlock grants what a path resolves to
// then), remembering every prefix it has seen: resolving many paths under
// the same directories costs one lstat per distinct element. A path that
// does not exist resolves its longest existing prefix and keeps the rest,
// so a file not created yet names the place it would appear. The zero
// value is ready to use; one Resolver is for one moment (it never looks
// at a path again).
type Resolver struct{ r resolver }

// Real returns p cleaned with its links resolved, and whether p exists.
// A relative p is returned as it is.
func (r *Resolver) Real(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		return p, false
	}
	if r.r == nil {
		r.r = resolver{}
	}
	return r.r.real(p)
}
