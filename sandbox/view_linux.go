package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// The view is the file system a confined command sees: a private mount
// namespace in which every mount is read-only but the trees the spec lets
// it change, the paths in those trees that run later (Spec.Later) are
// read-only again, the directories that hold what the spec does not grant
// (home, /run, /var...) are replaced by empty read-only directories
// holding only what it grants, and the socket files left in visible trees
// are covered. Landlock cannot carve a read-only directory out of a
// writable one, nor restrict chmod, chown, utime, setxattr or connecting
// to a socket file; read-only mounts and absent files can.
//
// It is built on the thread that starts the command, before Landlock and
// the seccomp filter (which then refuses every mount call), so the command
// and its descendants live in it while mnemos does not.

// hiddenZones are the directories whose contents a command sees only
// where the spec grants them: they hold the user's files, other users',
// and the sockets of services (an ssh or gpg agent, the session bus, the
// docker daemon).
func hiddenZones(home string) []string {
	z := []string{"/home", "/root", "/run", "/var", "/mnt", "/media", "/srv", "/dev/shm"}
	if home != "" {
		z = append(z, home)
	}
	return z
}

// viewPlan is the view for one spec, computed without changing anything.
type viewPlan struct {
	// writable are the trees, outside every zone, re-attached with their
	// own mount flags over the read-only tree.
	writable []string
	zones    []zone
	// pins are the directories between a writable tree and a later path
	// (the git directory), bound over themselves so that they cannot be
	// renamed away and replaced by a writable copy.
	pins []string
	// later are bound read-only over themselves, after the rest.
	later []string
	// absent are Spec.Later paths that do not exist.
	absent []string
	// sockets are socket files covered with /dev/null.
	sockets []string
}

// zone is a directory replaced by an empty read-only tmpfs holding only
// the granted paths below it.
type zone struct {
	dir      string
	mode     uint32
	uid, gid uint32
	keep     []kept
	links    []link
}

type kept struct {
	path  string
	dir   bool
	write bool
}

type link struct{ path, target string }

// planView computes the view for s. It reads the file system (lstat,
// readlink, one readdir per socket directory) and changes nothing.
func planView(s Spec) viewPlan {
	var v viewPlan
	res := resolver{}
	write := map[string]bool{}
	var granted []string
	for _, group := range [][]string{s.ReadExec, s.ReadOnly, s.Devices, s.Terminals, s.Sockets, s.ReadWrite} {
		granted = append(granted, group...)
	}
	for _, p := range s.ReadWrite {
		if r, ok := res.real(p); ok {
			write[r] = true
		}
	}
	reals := map[string]string{}
	for _, g := range granted {
		if r, ok := res.real(g); ok {
			reals[g] = r
		}
	}
	// Zones: existing directories, not granted themselves nor inside a
	// grant, outermost only.
	var zones []string
	for _, z := range hiddenZones(s.Home) {
		// A zone is compared with the grants, which are resolved, and
		// mounted over where it really is (/home may be a link).
		z, ok := res.real(z)
		if !ok {
			continue
		}
		fi, err := os.Lstat(z)
		if err != nil || !fi.IsDir() || emptyDir(z) {
			// An empty directory hides nothing (/srv, /mnt and /media
			// often are): two mount calls saved.
			continue
		}
		inside := false
		for _, r := range reals {
			if within(z, r) {
				inside = true
				break
			}
		}
		if !inside {
			zones = append(zones, filepath.Clean(z))
		}
	}
	zones = slices.DeleteFunc(zones, func(z string) bool {
		for _, o := range zones {
			if o != z && within(z, o) {
				return true
			}
		}
		return false
	})
	slices.Sort(zones)
	zones = slices.Compact(zones)
	zoneOf := func(p string) int {
		for i, z := range zones {
			if p != z && within(p, z) {
				return i
			}
		}
		return -1
	}
	for _, z := range zones {
		var st unix.Stat_t
		if err := unix.Lstat(z, &st); err != nil {
			continue
		}
		v.zones = append(v.zones, zone{dir: z, mode: st.Mode & 0o7777, uid: st.Uid, gid: st.Gid})
	}
	seen := map[string]bool{}
	for _, g := range granted {
		r, ok := reals[g]
		if !ok || seen[r] {
			continue
		}
		seen[r] = true
		if i := zoneOf(r); i >= 0 {
			fi, err := os.Stat(r)
			if err != nil {
				continue
			}
			v.zones[i].keep = append(v.zones[i].keep, kept{path: r, dir: fi.IsDir(), write: write[r]})
		} else if write[r] {
			v.writable = append(v.writable, r)
		}
	}
	// Symbolic links on the way to a grant, inside a zone, are made again
	// in it: ~/.gitconfig may be a link into a dotfiles directory.
	for _, g := range granted {
		addLinks(&v, zones, filepath.Clean(g))
	}
	for i := range v.zones {
		slices.SortFunc(v.zones[i].keep, func(a, b kept) int { return strings.Compare(a.path, b.path) })
	}
	slices.Sort(v.writable)
	// What runs later is read-only wherever a writable tree holds it.
	for _, p := range s.Later {
		r, ok := res.real(p)
		if !ok {
			// Looked at again when the command ends, where the directory
			// that would hold it exists: a new repository's .git is the
			// command's own.
			if _, err := os.Lstat(filepath.Dir(p)); err == nil && underAny(filepath.Dir(r), s.ReadWrite, res) {
				v.absent = append(v.absent, p)
			}
			continue
		}
		if root, ok := treeOf(r, s.ReadWrite, res); ok {
			v.later = append(v.later, r)
			for d := filepath.Dir(r); d != root && within(d, root); d = filepath.Dir(d) {
				if !slices.Contains(v.pins, d) {
					v.pins = append(v.pins, d)
				}
			}
		}
	}
	// Outer directories first, so that each bind holds the ones before.
	slices.SortFunc(v.pins, func(a, b string) int { return len(a) - len(b) })
	// Sockets in the temp directories and the ones named to mask, unless
	// granted.
	grantedSock := map[string]bool{}
	for _, p := range s.Sockets {
		if r, ok := res.real(p); ok {
			grantedSock[r] = true
		}
	}
	addSock := func(p string) {
		r, ok := res.real(p)
		if !ok || grantedSock[r] || slices.Contains(v.sockets, r) {
			return
		}
		if i := zoneOf(r); i >= 0 && !slices.ContainsFunc(v.zones[i].keep, func(k kept) bool { return within(r, k.path) }) {
			return // hidden already
		}
		if fi, err := os.Lstat(r); err == nil && fi.Mode()&os.ModeSocket != 0 {
			v.sockets = append(v.sockets, r)
		}
	}
	for _, p := range s.MaskSockets {
		addSock(p)
	}
	// Every socket bound in this network namespace that lies in a temp
	// directory or a writable cache: they belong to the user's session
	// (tmux, zellij, screen, ssh and gpg agents, editors) as often as to
	// the command. The kernel lists them all, at any depth, in one file.
	var scanned []string
	for _, d := range s.ReadWrite {
		if len(s.ReadWrite) > 0 && d == s.ReadWrite[0] && !slices.Contains(s.SocketDirs, d) {
			continue // the workspace's sockets are the command's own
		}
		if r, ok := res.real(d); ok {
			scanned = append(scanned, r)
		}
	}
	for _, p := range boundSockets() {
		for _, d := range scanned {
			if within(p, d) {
				addSock(p)
				break
			}
		}
	}
	return v
}

// boundSockets lists the absolute paths of the unix sockets bound in this
// network namespace (/proc/net/unix): abstract and unnamed ones are left
// out, and so are paths with spaces, which the file cannot show unescaped.
func boundSockets() []string {
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) == 8 && strings.HasPrefix(f[7], "/") {
			out = append(out, filepath.Clean(f[7]))
		}
	}
	return out
}

// emptyDir reports whether dir has no entries.
func emptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && err != nil
}

// addLinks records the symbolic links among p's elements below its zone.
func addLinks(v *viewPlan, zones []string, p string) {
	for i, z := range zones {
		if p == z || !within(p, z) {
			continue
		}
		cur := z
		for _, el := range strings.Split(strings.TrimPrefix(p, z+"/"), "/") {
			cur = filepath.Join(cur, el)
			fi, err := os.Lstat(cur)
			if err != nil {
				return
			}
			if fi.Mode()&os.ModeSymlink == 0 {
				continue
			}
			target, err := os.Readlink(cur)
			if err != nil {
				return
			}
			for _, l := range v.zones[i].links {
				if l.path == cur {
					return
				}
			}
			v.zones[i].links = append(v.zones[i].links, link{path: cur, target: target})
			return
		}
		return
	}
}

// treeOf returns the writable tree that holds real, the innermost one.
func treeOf(real string, trees []string, res resolver) (string, bool) {
	best, ok := "", false
	for _, t := range trees {
		if rt, found := res.real(t); found && within(real, rt) && len(rt) > len(best) {
			best, ok = rt, true
		}
	}
	return best, ok
}

// underAny reports whether real lies in one of the trees.
func underAny(real string, trees []string, res resolver) bool {
	_, ok := treeOf(real, trees, res)
	return ok
}

// enter unshares the calling thread's mount and System V IPC namespaces
// (shared memory, semaphores and message queues of processes outside stay
// out of reach) and builds the view in the mount namespace. The thread must be locked and never run anything else. As root
// (CAP_SYS_ADMIN) this is all; elsewhere it runs in a process already in
// a new user and mount namespace, where unsharing again is harmless.
func (v *viewPlan) enter() error {
	if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_NEWIPC); err != nil {
		return fmt.Errorf("private mount namespace: %w", err)
	}
	return v.build()
}

// build makes the view in the calling thread's own mount namespace.
func (v *viewPlan) build() error {
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	// Copies of what stays visible, taken before the tree turns
	// read-only, so the writable ones keep their own flags.
	clone := func(p string, ro bool) (int, error) {
		fd, err := unix.OpenTree(unix.AT_FDCWD, p, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW)
		if err != nil {
			return -1, fmt.Errorf("copy the mount of %s: %w", p, err)
		}
		if ro {
			attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
			if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
				unix.Close(fd)
				return -1, fmt.Errorf("make %s read-only: %w", p, err)
			}
		}
		return fd, nil
	}
	var fds []int
	defer func() {
		for _, fd := range fds {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	}()
	zoneFDs := make([][]int, len(v.zones))
	for i, z := range v.zones {
		for _, k := range z.keep {
			fd, err := clone(k.path, !k.write)
			if err != nil {
				return err
			}
			fds = append(fds, fd)
			zoneFDs[i] = append(zoneFDs[i], fd)
		}
	}
	writableFDs := make([]int, len(v.writable))
	for i, w := range v.writable {
		fd, err := clone(w, false)
		if err != nil {
			return err
		}
		fds = append(fds, fd)
		writableFDs[i] = fd
	}
	ro := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &ro); err != nil {
		return fmt.Errorf("make every mount read-only: %w", err)
	}
	attach := func(fd int, to string) error {
		if err := unix.MoveMount(fd, "", unix.AT_FDCWD, to, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("attach %s: %w", to, err)
		}
		return nil
	}
	for i, z := range v.zones {
		opts := fmt.Sprintf("mode=%o,size=64k,nr_inodes=4096", z.mode)
		if unix.Geteuid() == 0 {
			opts += fmt.Sprintf(",uid=%d,gid=%d", z.uid, z.gid)
		}
		if err := unix.Mount("tmpfs", z.dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return fmt.Errorf("hide %s: %w", z.dir, err)
		}
		for _, l := range z.links {
			if err := os.MkdirAll(filepath.Dir(l.path), 0o755); err != nil {
				return fmt.Errorf("hide %s: %w", z.dir, err)
			}
			if err := os.Symlink(l.target, l.path); err != nil && !errors.Is(err, os.ErrExist) {
				return fmt.Errorf("hide %s: %w", z.dir, err)
			}
		}
		for j, k := range z.keep {
			if err := mountPoint(k.path, k.dir); err != nil {
				return fmt.Errorf("hide %s: %w", z.dir, err)
			}
			if err := attach(zoneFDs[i][j], k.path); err != nil {
				return err
			}
		}
		top := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
		if err := unix.MountSetattr(unix.AT_FDCWD, z.dir, 0, &top); err != nil {
			return fmt.Errorf("make %s read-only: %w", z.dir, err)
		}
	}
	for i, w := range v.writable {
		if err := attach(writableFDs[i], w); err != nil {
			return err
		}
	}
	for _, p := range v.pins {
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("pin %s: %w", p, err)
		}
	}
	for _, p := range v.later {
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("keep %s read-only: %w", p, err)
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW, &ro); err != nil {
			return fmt.Errorf("keep %s read-only: %w", p, err)
		}
	}
	for _, s := range v.sockets {
		if err := unix.Mount("/dev/null", s, "", unix.MS_BIND, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				// Gone since it was listed: nothing left to hide, and
				// a socket made after the view is not reachable from
				// it (the view's /tmp is the one the command sees).
				continue
			}
			return fmt.Errorf("hide the socket %s: %w", s, err)
		}
	}
	return nil
}

// mountPoint makes an empty directory or file at p, and the directories on
// the way, unless p exists (inside a tree attached before it).
func mountPoint(p string, dir bool) error {
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if dir {
		return os.Mkdir(p, 0o755)
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}
