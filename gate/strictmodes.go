package gate

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mnemos-dev/mnemos/policy"
)

// StrictModes refuses, as sshd's StrictModes does, the files mnemos
// trusts when someone else could have written them: a policy it loads, its
// configuration and state directories, the state database and the audit
// log. A file or directory passes when the user mnemos runs as or root
// owns it and neither its group nor others may write it; a symbolic link
// passes when its owner does and what it points to passes. Only the file
// and the directory holding it are checked, not every directory up to /.
//
// Nothing is ever repaired: each problem comes back with the command that
// fixes it, for a person to run.
type StrictModes struct {
	// UID is the user mnemos runs as.
	UID int
	// Name returns the user name of a uid for messages and hints, or ""
	// when it is not known; nil shows uids only.
	Name func(uid int) string
}

// Unsafe is a file or directory StrictModes refuses: what is wrong with it
// and the command that fixes it.
type Unsafe struct {
	Path    string
	Problem string
	Fix     string
}

func (u Unsafe) String() string { return u.Path + " " + u.Problem }

// UnsafeError is one or more files StrictModes refuses. It is a
// configuration error (exit 78).
type UnsafeError struct{ Files []Unsafe }

func (e *UnsafeError) Error() string {
	s := make([]string, len(e.Files))
	for i, u := range e.Files {
		s[i] = u.String()
	}
	return strings.Join(s, "; ")
}

// Hint is the commands that fix every file, in order.
func (e *UnsafeError) Hint() string {
	var s []string
	for _, u := range e.Files {
		s = append(s, u.Fix)
	}
	return strings.Join(s, " && ")
}

// Check checks everything a gate reads its decisions from and writes its
// state to: CheckConfig, CheckState, and CheckPolicy of each of policies
// (empty names are skipped). A file is reported once.
func (s StrictModes) Check(p Paths, policies ...string) []Unsafe {
	var out []Unsafe
	for _, u := range slices.Concat(s.CheckConfig(p), s.CheckState(p)) {
		out = appendUnique(out, u)
	}
	for _, f := range policies {
		if f != "" {
			for _, u := range s.CheckPolicy(f) {
				out = appendUnique(out, u)
			}
		}
	}
	return out
}

// CheckConfig checks the configuration directory and the user's policy
// file in it.
func (s StrictModes) CheckConfig(p Paths) []Unsafe {
	var out []Unsafe
	out = s.add(out, p.ConfigDir, ownDir)
	return s.addEntry(out, p.PolicyFile, ownDir)
}

// CheckState checks the state directory, the secrets directory and the
// state files in them that exist: the database with its WAL and
// shared-memory files, the audit log, its anchor, and the audit key. The
// secrets directory and the files in it must also be unreadable by
// anyone but their owner: whoever reads the audit key can rewrite the log
// unnoticed, and the database holds the tokens that let requests through.
func (s StrictModes) CheckState(p Paths) []Unsafe {
	var out []Unsafe
	out = s.add(out, p.StateDir, ownDir)
	if p.SecretsDir != "" && p.SecretsDir != p.StateDir {
		out = s.add(out, p.SecretsDir, ownDir)
		out = private(out, p.SecretsDir, true)
	}
	for _, f := range []string{p.AuditFile, p.AuditFile + ".anchor"} {
		out = s.addEntry(out, f, ownDir)
	}
	for _, f := range []string{p.DBFile, p.DBFile + "-wal", p.DBFile + "-shm", p.AuditKey} {
		if f == "" || f == "-wal" || f == "-shm" {
			continue
		}
		out = s.addEntry(out, f, ownDir)
		out = private(out, f, false)
	}
	return out
}

// private appends a problem when path exists and its group or others may
// read it (or, for a directory, enter it).
func private(out []Unsafe, path string, dir bool) []Unsafe {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return out
	}
	if dir {
		return appendUnique(out, Unsafe{Path: path,
			Problem: fmt.Sprintf("is open to others than its owner (mode %s): it holds mnemos's secrets (the audit key, the state database)", modeString(fi.Mode())),
			Fix:     "chmod 700 " + quote(path)})
	}
	why := "the state database holds the tokens that let requests through"
	if filepath.Base(path) == "audit.key" {
		why = "whoever reads it can rewrite the audit log unnoticed"
	}
	return appendUnique(out, Unsafe{Path: path,
		Problem: fmt.Sprintf("is readable by others than its owner (mode %s): %s", modeString(fi.Mode()), why),
		Fix:     "chmod 600 " + quote(path)})
}

// CheckPolicy checks a policy file read from elsewhere than the
// configuration directory (a project's .mnemos/policy.yaml, a --policy
// file) and the directory holding it. That directory may be one others
// may write when it is sticky (like /tmp) and its owner passes: nobody
// else can then replace or remove the file, which is checked itself.
func (s StrictModes) CheckPolicy(file string) []Unsafe {
	return s.addFile(nil, file, readDir)
}

// dirKind says how strict the check of a directory is.
type dirKind int

const (
	// ownDir is a directory mnemos writes to: nobody else may write it,
	// sticky or not, or they could plant a file before mnemos creates it
	// (a WAL the database would replay, an audit anchor).
	ownDir dirKind = iota
	// readDir holds a file mnemos only reads: a sticky directory is enough.
	readDir
)

// addFile checks file and the directory holding it and appends what is
// wrong to out. A file that does not exist passes (the directory is still
// checked).
func (s StrictModes) addFile(out []Unsafe, file string, kind dirKind) []Unsafe {
	out = s.add(out, filepath.Dir(file), kind)
	return s.addEntry(out, file, kind)
}

// addEntry checks file, whose directory is checked already, and appends
// what is wrong to out. A symbolic link is checked, then where it points
// and the directory holding that. A file that does not exist passes.
func (s StrictModes) addEntry(out []Unsafe, file string, kind dirKind) []Unsafe {
	li, err := os.Lstat(file)
	if err != nil {
		// Missing, or unreadable: opening it says so.
		return out
	}
	if li.Mode()&fs.ModeSymlink == 0 {
		if u, bad := s.check(file, li, false, kind); bad {
			out = appendUnique(out, u)
		}
		return out
	}
	if u, bad := s.linkOwner(file, li); bad {
		out = appendUnique(out, u)
	}
	target, err := filepath.EvalSymlinks(file)
	if err != nil {
		return out
	}
	out = s.add(out, filepath.Dir(target), kind)
	fi, err := os.Stat(target)
	if err != nil {
		return out
	}
	if u, bad := s.check(target, fi, false, kind); bad {
		u.Problem = fmt.Sprintf("(where %s points) %s", file, u.Problem)
		out = appendUnique(out, u)
	}
	return out
}

// add checks the directory dir (following links) and appends what is
// wrong with it to out.
func (s StrictModes) add(out []Unsafe, dir string, kind dirKind) []Unsafe {
	if dir == "" {
		return out
	}
	if li, err := os.Lstat(dir); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		if u, bad := s.linkOwner(dir, li); bad {
			out = appendUnique(out, u)
		}
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return out
	}
	u, bad := s.check(dir, fi, true, kind)
	if bad {
		out = appendUnique(out, u)
	}
	return out
}

// appendUnique appends u unless out has a problem with the same path
// already (the configuration and state directories are often one).
func appendUnique(out []Unsafe, u Unsafe) []Unsafe {
	for _, o := range out {
		if o.Path == u.Path {
			return out
		}
	}
	return append(out, u)
}

// check returns what is wrong with the file or directory path whose stat
// data is fi: its owner, and who may write it.
func (s StrictModes) check(path string, fi fs.FileInfo, dir bool, kind dirKind) (Unsafe, bool) {
	var problems, fixes []string
	owner, known := policy.FileOwner(fi)
	if !known {
		// No owners or Unix modes here to check.
		return Unsafe{}, false
	}
	ownerOK := owner == s.UID || owner == 0
	if !ownerOK {
		problems = append(problems, "is owned by "+s.who(owner))
		fixes = append(fixes, s.sudo(0)+"chown "+s.nameOf(s.UID)+" "+quote(path))
		owner = s.UID
	}
	perm := fi.Mode().Perm()
	writable := perm & 0o022
	if writable != 0 && dir && kind == readDir && fi.Mode()&fs.ModeSticky != 0 && ownerOK {
		// Nobody but the owner can replace the file in a sticky directory.
		writable = 0
	}
	if writable != 0 {
		by := "others"
		switch writable {
		case 0o020:
			by = "its group"
		case 0o022:
			by = "its group and others"
		}
		verb := "is writable by "
		if len(problems) > 0 {
			verb = "writable by "
		}
		problems = append(problems, fmt.Sprintf("%s%s (mode %s)", verb, by, modeString(fi.Mode())))
		fixes = append(fixes, s.sudo(owner)+"chmod go-w "+quote(path))
	}
	if len(problems) == 0 {
		return Unsafe{}, false
	}
	return Unsafe{Path: path, Problem: strings.Join(problems, " and "), Fix: strings.Join(fixes, " && ")}, true
}

// linkOwner returns what is wrong with the owner of a symbolic link.
func (s StrictModes) linkOwner(path string, li fs.FileInfo) (Unsafe, bool) {
	owner, known := policy.FileOwner(li)
	if !known || owner == s.UID || owner == 0 {
		return Unsafe{}, false
	}
	return Unsafe{Path: path, Problem: "is a symbolic link owned by " + s.who(owner),
		Fix: s.sudo(0) + "chown -h " + s.nameOf(s.UID) + " " + quote(path)}, true
}

// sudo is "sudo " when the user mnemos runs as cannot change a file owned
// by owner itself (owner 0 stands for "someone else": a chown always
// needs root).
func (s StrictModes) sudo(owner int) string {
	if s.UID == 0 || (owner == s.UID && owner != 0) {
		return ""
	}
	return "sudo "
}

// who names a uid for a message: "nobody (uid 65534)".
func (s StrictModes) who(uid int) string {
	if s.Name != nil {
		if n := s.Name(uid); n != "" {
			return fmt.Sprintf("%s (uid %d)", n, uid)
		}
	}
	return "uid " + strconv.Itoa(uid)
}

// nameOf names a uid for a command: its user name, or the number.
func (s StrictModes) nameOf(uid int) string {
	if s.Name != nil {
		if n := s.Name(uid); n != "" {
			return quote(n)
		}
	}
	return strconv.Itoa(uid)
}

// modeString is a mode in octal with its special bits: 0666, 1777.
func modeString(m fs.FileMode) string {
	v := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		v |= 0o1000
	}
	return fmt.Sprintf("%04o", v)
}

// quote quotes s for a POSIX shell when it needs it.
func quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+@%:,=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
