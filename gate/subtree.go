package gate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
)

// A subtree grant (approve --remember session --under internal/) widens
// the fs:write grant of a request to a directory and everything below it
// (the grant's target is DIR/**). The directory is named relative to the
// request's directory and must hold every path the request writes; it is
// never /, the home directory or a directory above it, a directory above
// the workspace, a directory inside .git, nor one that is, holds or lies
// in mnemos's own files or a secret the sandbox keeps from every command.
// A symlink on the way is followed, and what it leads to must pass the
// same checks.
//
// What the grant covers is policy's rule for a grant on a tree
// (policy/grants.go): writing anything inside it, and deleting or moving
// what lies below its top, since that only changes directories inside
// the tree the person handed over, where rewriting a file's content could
// already destroy it. It never covers deleting or moving the directory
// itself (rm -rf internal, mv internal elsewhere) nor anything outside it,
// siblings that share its name's beginning (internal2/) included: a grant
// on a path never covers deleting or moving that path.

// planUnder replaces the request's fs:write grants by one on the
// subtree under names.
func (g *Gate) planUnder(p approvals.Pending, c *concession, under string) error {
	dir, err := g.subtree(p.Details.Cwd, under)
	if err != nil {
		return fmt.Errorf("--under %s: %w", under, err)
	}
	fi, statErr := os.Stat(dir)
	isDir := statErr == nil && fi.IsDir()
	if statErr == nil && !isDir {
		return fmt.Errorf("--under %s: %s is not a directory", under, dir)
	}
	writes := 0
	keep := c.grants[:0:0]
	for _, k := range c.grants {
		if k.Capability != classify.FSWrite {
			keep = append(keep, k)
			continue
		}
		t := strings.TrimSuffix(k.Target, "/**")
		if !filepath.IsAbs(t) || strings.ContainsAny(t, "*?[") || !classify.Within(dir, t) || t == dir && !isDir {
			return fmt.Errorf("--under %s: the request writes %s, which is not inside %s", under, k.Target, dir)
		}
		writes++
	}
	if writes == 0 {
		return fmt.Errorf("--under %s: the request writes no file; --under widens an fs:write grant", under)
	}
	c.grants = append(keep, policy.GrantKey{Channel: p.Channel, Sender: p.Sender, Capability: classify.FSWrite, Target: dir + "/**"})
	c.under = dir
	return nil
}

// subtree resolves the directory a person named for a subtree grant,
// relative to cwd, and refuses one no grant may cover (see the comment
// at the top).
func (g *Gate) subtree(cwd, under string) (string, error) {
	if strings.TrimSpace(under) == "" {
		return "", errors.New("empty directory")
	}
	if !filepath.IsAbs(cwd) {
		return "", errors.New("the request's directory is not known")
	}
	dir := under
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(cwd, dir)
	}
	dir = filepath.Clean(dir)
	ws := Workspace(cwd)
	if err := g.subtreeRefused(dir, ws); err != nil {
		return "", err
	}
	if real := resolveExisting(dir); real != dir {
		if err := g.subtreeRefused(real, resolveExisting(ws)); err != nil {
			return "", fmt.Errorf("it leads to %s: %w", real, err)
		}
	}
	return dir, nil
}

// subtreeRefused says why no subtree grant may cover dir, or nil.
func (g *Gate) subtreeRefused(dir, ws string) error {
	home := filepath.Clean(g.cfg.UserHome)
	switch {
	case dir == "/":
		return errors.New("a grant on the whole filesystem is never given")
	case g.cfg.UserHome != "" && classify.Within(dir, home):
		return fmt.Errorf("it holds your home directory %s", home)
	case ws != "" && dir != ws && classify.Within(dir, ws):
		return fmt.Errorf("it lies above the workspace %s", ws)
	case slices.Contains(strings.Split(dir, string(filepath.Separator)), ".git"):
		return errors.New("what lies in .git runs later (hooks, configuration): no subtree grant covers it")
	}
	for _, q := range g.noSubtree() {
		q = filepath.Clean(q)
		if classify.Within(q, dir) {
			return fmt.Errorf("it lies in %s, which no grant reaches", q)
		}
		if classify.Within(dir, q) {
			return fmt.Errorf("it holds %s, which no grant reaches", q)
		}
	}
	return nil
}

// noSubtree are the paths no subtree grant may be, hold or lie in:
// mnemos's own files and the secrets the sandbox keeps from every
// command.
func (g *Gate) noSubtree() []string {
	return slices.Concat(g.cfg.Paths.Protected(), sandbox.DefaultSecrets(g.cfg.UserHome))
}

// resolveExisting follows the symlinks of the longest part of p that
// exists, a dangling one included (writing through it creates what it
// points to), and joins the rest to it.
func resolveExisting(p string) string { return resolveFrom(p, 0) }

func resolveFrom(p string, depth int) string {
	const maxLinks = 40
	rest := ""
	for dir := p; ; {
		if _, err := os.Lstat(dir); err == nil {
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				return filepath.Join(real, rest)
			}
			if to, err := os.Readlink(dir); err == nil && depth < maxLinks {
				if !filepath.IsAbs(to) {
					to = filepath.Join(filepath.Dir(dir), to)
				}
				return resolveFrom(filepath.Join(to, rest), depth+1)
			}
			return filepath.Join(dir, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// A grant names paths as they are written; the filesystem may lead
// elsewhere. A symlink inside a granted directory (created before, or by
// a command the grant let through) would carry a write covered by the
// grant to wherever it points: under mnemos run the sandbox refuses
// that, but a command checked for a hook runs outside it. So a path
// grant covers a target only while the target, its symlinks followed,
// is still what the grant names.

// grantReaches reports whether a grant on pattern still covers target
// once the symlinks on the target's way are followed: a target with none
// is covered as written; one that leads elsewhere only when where it
// leads matches the pattern too (as written, or with the pattern's own
// symlinks followed).
func grantReaches(pattern, target string) bool {
	if !filepath.IsAbs(target) {
		return true // a host, a recipient: no path to follow
	}
	real := resolveExisting(filepath.Clean(target))
	if real == filepath.Clean(target) {
		return true
	}
	if policy.MatchTarget(pattern, real) {
		return true
	}
	base, tree := strings.CutSuffix(pattern, "/**")
	if strings.ContainsAny(base, "*?[") || !filepath.IsAbs(base) {
		return false
	}
	realBase := resolveExisting(base)
	if tree {
		return policy.MatchTarget(realBase+"/**", real)
	}
	return realBase == real
}
