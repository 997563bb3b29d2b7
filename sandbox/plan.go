package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Landlock filesystem rights, grouped the way Spec grants them.
const (
	accessRead  uint64 = ll.AccessFSReadFile | ll.AccessFSReadDir
	accessExec  uint64 = ll.AccessFSExecute
	accessWrite uint64 = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
		ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate
	accessDevice   uint64 = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate
	accessTerminal uint64 = accessDevice | ll.AccessFSIoctlDev
	// accessFile is what a rule on anything but a directory may carry.
	accessFile uint64 = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile |
		ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// handledFS is every filesystem right this package restricts at an ABI:
// all of them up to ABI 7. The unix-socket right of later ABIs is not
// handled, so connecting to socket files stays open (Status.Gaps).
func handledFS(abi int) uint64 {
	if abi < 1 {
		return 0
	}
	h := uint64(ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSReadDir |
		ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar | ll.AccessFSMakeDir |
		ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeBlock |
		ll.AccessFSMakeSym)
	if abi >= 2 {
		h |= ll.AccessFSRefer
	}
	if abi >= 3 {
		h |= ll.AccessFSTruncate
	}
	if abi >= 5 {
		h |= ll.AccessFSIoctlDev
	}
	return h
}

// rule grants access beneath one path.
type rule struct {
	path   string // absolute, cleaned, free of symbolic links
	access uint64
	// kind is what the plan saw at path when it listed its directory:
	// kindDir, kindFile, or kindUnknown (then the rule's file is looked
	// at when it is opened).
	kind uint8
}

const (
	kindUnknown uint8 = iota
	kindDir
	kindFile
)

// plan is the filesystem part of a ruleset, before the kernel sees it.
type plan struct {
	rules   []rule
	skipped []string
	notes   []string
}

// buildPlan resolves the spec's paths and applies its Deny list: a grant
// inside a denied path is dropped, a grant holding one is carved around it.
// A grant that cannot write (ReadExec, ReadOnly) is not carved around a
// denied path that file permissions already keep from mnemos's user (see
// sealedByPermissions): the command, started with no_new_privs from a
// thread with no more privileges, cannot reach it either. That spares
// a non-root user one rule per entry of /etc, for /etc/shadow and the
// like. It reads the filesystem but changes nothing.
func buildPlan(s Spec) (plan, error) { return buildPlanWith(s, sealedByPermissions) }

// buildPlanWith is buildPlan with the permission check passed in.
func buildPlanWith(s Spec, sealed func(string) bool) (plan, error) {
	var p plan
	res := resolver{}
	deny := make([]string, 0, len(s.Deny))
	for _, d := range s.Deny {
		if !filepath.IsAbs(d) {
			return plan{}, fmt.Errorf("denied path %q is not absolute", d)
		}
		r, _ := res.real(d)
		deny = append(deny, r)
	}
	classes := []struct {
		paths  []string
		access uint64
	}{
		{s.ReadExec, accessRead | accessExec},
		{s.ReadOnly, accessRead},
		{s.ReadWrite, accessRead | accessExec | accessWrite},
		{s.Devices, accessDevice},
		{s.Terminals, accessTerminal},
	}
	for _, c := range classes {
		for _, g := range c.paths {
			if !filepath.IsAbs(g) {
				return plan{}, fmt.Errorf("sandbox path %q is not absolute", g)
			}
			real, ok := res.real(g)
			if !ok {
				p.skipped = append(p.skipped, g)
				continue
			}
			if d, in := insideAny(real, deny); in {
				p.notes = append(p.notes, fmt.Sprintf("%s not granted: it is inside the denied path %s", g, d))
				continue
			}
			held := heldBy(real, deny)
			var shut []string
			if c.access&accessWrite == 0 {
				// Nothing in this tree can be renamed, replaced or
				// re-permissioned through this grant.
				open := held[:0:0]
				for _, d := range held {
					if sealed(d) {
						shut = append(shut, d)
					} else {
						open = append(open, d)
					}
				}
				held = open
			}
			if len(shut) > 0 {
				p.notes = append(p.notes, fmt.Sprintf("%s not carved around %s: file permissions keep them from this user", g, strings.Join(shut, ", ")))
			}
			if len(held) == 0 {
				p.rules = append(p.rules, rule{path: real, access: c.access})
				continue
			}
			p.notes = append(p.notes, fmt.Sprintf("%s granted except %s (the directory itself may only be listed)", g, strings.Join(held, ", ")))
			p.carve(real, c.access, held)
		}
	}
	return p, nil
}

// carve grants access to every entry of dir that is not denied, and
// descends into entries that hold a denied path. dir itself only gets the
// right to be listed, since any other right on it would reach the denied
// path below it. Symbolic links are left out: a rule would follow them to
// wherever they point.
func (p *plan) carve(dir string, access uint64, deny []string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		p.notes = append(p.notes, fmt.Sprintf("%s not granted: cannot list it to leave out denied paths: %v", dir, err))
		return
	}
	if access&ll.AccessFSReadDir != 0 {
		p.rules = append(p.rules, rule{path: dir, access: ll.AccessFSReadDir, kind: kindDir})
	}
	for _, e := range entries {
		child := filepath.Join(dir, e.Name())
		if e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		if _, in := insideAny(child, deny); in {
			continue
		}
		if holdsAny(child, deny) {
			if e.IsDir() {
				p.carve(child, access, deny)
			}
			continue
		}
		kind := kindFile
		if e.IsDir() {
			kind = kindDir
		}
		p.rules = append(p.rules, rule{path: child, access: access, kind: kind})
	}
}

// resolver resolves symbolic links in absolute paths, remembering every
// prefix it has seen, so that resolving many paths under the same
// directories costs one lstat per distinct element.
type resolver map[string]resolved

type resolved struct {
	real string
	ok   bool
}

// real makes p clean and resolves its symbolic links. For a path that does
// not exist it resolves the longest existing prefix and appends the rest,
// so a denied path not created yet still names the place it would appear.
// ok reports whether p exists.
func (r resolver) real(p string) (string, bool) {
	p = filepath.Clean(p)
	if p == "/" {
		return p, true
	}
	if v, hit := r[p]; hit {
		return v.real, v.ok
	}
	parent, ok := r.real(filepath.Dir(p))
	v := resolved{real: filepath.Join(parent, filepath.Base(p))}
	if ok {
		// parent holds no links, so only the last element may be one.
		if fi, err := os.Lstat(v.real); err == nil {
			v.ok = true
			if fi.Mode()&fs.ModeSymlink != 0 {
				v = r.follow(p, parent, v.real)
			}
		}
	}
	r[p] = v
	return v.real, v.ok
}

// follow resolves the symbolic link at link (whose directory, free of
// links, is dir). A dangling link resolves to where its target would
// appear, so a denied path behind a dangling link is still denied there.
func (r resolver) follow(p, dir, link string) resolved {
	if target, err := filepath.EvalSymlinks(link); err == nil {
		return resolved{real: target, ok: true}
	}
	// A loop ends here: while following, p resolves to the link itself.
	r[p] = resolved{real: link}
	target, err := os.Readlink(link)
	if err != nil {
		return resolved{real: link}
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	real, _ := r.real(target)
	return resolved{real: real}
}

// within reports whether p is dir or lies beneath it. Both are clean and
// absolute.
func within(p, dir string) bool {
	if !strings.HasPrefix(p, dir) {
		return false
	}
	return len(p) == len(dir) || dir == "/" || p[len(dir)] == '/'
}

// insideAny returns the denied path that p equals or lies beneath.
func insideAny(p string, deny []string) (string, bool) {
	for _, d := range deny {
		if within(p, d) {
			return d, true
		}
	}
	return "", false
}

// holdsAny reports whether a denied path lies strictly beneath dir.
func holdsAny(dir string, deny []string) bool {
	for _, d := range deny {
		if len(d) > len(dir) && within(d, dir) {
			return true
		}
	}
	return false
}

// heldBy returns the denied paths strictly beneath dir.
func heldBy(dir string, deny []string) []string {
	var held []string
	for _, d := range deny {
		if d != dir && within(d, dir) {
			held = append(held, d)
		}
	}
	return held
}
