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
}

// plan is the filesystem part of a ruleset, before the kernel sees it.
type plan struct {
	rules   []rule
	skipped []string
	notes   []string
}

// buildPlan resolves the spec's paths and applies its Deny list: a grant
// inside a denied path is dropped, a grant holding one is carved around it.
// It reads the filesystem but changes nothing.
func buildPlan(s Spec) (plan, error) {
	var p plan
	deny := make([]string, 0, len(s.Deny))
	for _, d := range s.Deny {
		if !filepath.IsAbs(d) {
			return plan{}, fmt.Errorf("denied path %q is not absolute", d)
		}
		r, _ := realPath(d)
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
			real, ok := realPath(g)
			if !ok {
				p.skipped = append(p.skipped, g)
				continue
			}
			if d, in := insideAny(real, deny); in {
				p.notes = append(p.notes, fmt.Sprintf("%s not granted: it is inside the denied path %s", g, d))
				continue
			}
			held := heldBy(real, deny)
			if len(held) == 0 {
				p.rules = append(p.rules, rule{path: real, access: c.access})
				continue
			}
			p.notes = append(p.notes, fmt.Sprintf("%s granted except %s (the directory itself may only be listed)", g, strings.Join(held, ", ")))
			p.carve(real, c.access, deny)
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
		p.rules = append(p.rules, rule{path: dir, access: ll.AccessFSReadDir})
	}
	for _, e := range entries {
		child := filepath.Join(dir, e.Name())
		if e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		if _, in := insideAny(child, deny); in {
			continue
		}
		if len(heldBy(child, deny)) > 0 {
			if e.IsDir() {
				p.carve(child, access, deny)
			}
			continue
		}
		p.rules = append(p.rules, rule{path: child, access: access})
	}
}

// realPath makes p absolute and clean and resolves its symbolic links. For
// a path that does not exist it resolves the longest existing prefix and
// appends the rest, so a denied path not created yet still names the place
// it would appear. ok reports whether p exists.
func realPath(p string) (real string, ok bool) {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r, true
	}
	dir, rest := p, ""
	for {
		parent := filepath.Dir(dir)
		if parent == dir {
			return p, false
		}
		if rest == "" {
			rest = filepath.Base(dir)
		} else {
			rest = filepath.Join(filepath.Base(dir), rest)
		}
		dir = parent
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest), false
		}
	}
}

// within reports whether p is dir or lies beneath it. Both are clean and
// absolute.
func within(p, dir string) bool {
	return dir == "/" || p == dir || strings.HasPrefix(p, dir+"/")
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
