package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Probe asks the kernel which Landlock ABI and errata it offers, whether
// it takes mnemos's seccomp filter, and whether it lets a process push
// input into a terminal.
func Probe() Status {
	s := Status{TerminalInjection: legacyTIOCSTI()}
	s.Seccomp, s.SeccompErr = probeSeccomp()
	s.Watch, s.WatchErr = probeWatch()
	s.View, s.ViewErr, s.ViewHint = probeView()
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		s.Err = err.Error()
		return s.WithABI(0)
	}
	s = s.WithABI(v)
	if e, err := llsys.LandlockGetErrata(); err == nil {
		s.Errata = e
	}
	return s
}

// legacyTIOCSTI reports whether TIOCSTI works: always before Linux 6.2,
// afterwards unless the dev.tty.legacy_tiocsti sysctl is 0.
func legacyTIOCSTI() bool {
	b, err := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti")
	if err != nil {
		return true
	}
	return strings.TrimSpace(string(b)) != "0"
}

// sealedByPermissions reports whether p exists, is not a symbolic link,
// is owned by someone else than the effective user, and the effective
// credentials (capabilities included) may neither read, write nor execute
// or search it. A command started by mnemos has no more privileges
// (no_new_privs, capabilities only dropped), so it cannot reach p either,
// nor change its permissions. Root, whose CAP_DAC_OVERRIDE passes every
// check, never sees a path as sealed.
//
// A path that does not exist is sealed when the nearest directory above it
// that exists is someone else's and the credentials may not write it: the
// command cannot create it (buildPlan asks only for read-only grants,
// where Landlock refuses that too); only its owner could, while the
// command runs. A directory that can be listed but not written, and
// whose entries (at most 64, two levels down) are all sealed, is sealed
// too (/etc/sudoers.d): the command may then see the names in it, as the
// user can, but nothing else.
func sealedByPermissions(p string) bool { return sealedDepth(p, 2) }

func sealedDepth(p string, depth int) bool {
	var st unix.Stat_t
	err := unix.Lstat(p, &st)
	for errors.Is(err, unix.ENOENT) && p != "/" {
		p = filepath.Dir(p)
		if err = unix.Lstat(p, &st); err == nil {
			return st.Mode&unix.S_IFMT == unix.S_IFDIR && int(st.Uid) != unix.Geteuid() &&
				unix.Faccessat(unix.AT_FDCWD, p, unix.W_OK, unix.AT_EACCESS|unix.AT_SYMLINK_NOFOLLOW) != nil
		}
	}
	if err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return false
	}
	if int(st.Uid) == unix.Geteuid() {
		return false
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR && depth > 0 &&
		unix.Faccessat(unix.AT_FDCWD, p, unix.W_OK, unix.AT_EACCESS|unix.AT_SYMLINK_NOFOLLOW) != nil {
		if ents, err := os.ReadDir(p); err == nil && len(ents) <= 64 {
			all := true
			for _, e := range ents {
				if all = sealedDepth(filepath.Join(p, e.Name()), depth-1); !all {
					break
				}
			}
			if all {
				return true
			}
		}
	}
	for _, mode := range []uint32{unix.R_OK, unix.W_OK, unix.X_OK} {
		if unix.Faccessat(unix.AT_FDCWD, p, mode, unix.AT_EACCESS|unix.AT_SYMLINK_NOFOLLOW) == nil {
			return false
		}
	}
	return true
}

// probeView reports whether the private mount view can be built: the
// kernel has the new mount API (open_tree, move_mount and mount_setattr,
// Linux 5.12), and mnemos may make a mount namespace. It asks without
// making one: a call with a bad descriptor fails with EBADF where the
// system call exists.
func probeView() (ok bool, why, hint string) {
	attr := unix.MountAttr{}
	if err := unix.MountSetattr(-1, "", unix.AT_EMPTY_PATH, &attr); errors.Is(err, unix.ENOSYS) {
		return false, "the kernel lacks mount_setattr (Linux 5.12)", "upgrade the kernel to Linux 5.12 or later"
	}
	if hasSysAdmin() {
		return true, "", ""
	}
	return userNamespaces()
}

// hasSysAdmin reports whether the process holds CAP_SYS_ADMIN, with which
// a thread makes its own mount namespace.
func hasSysAdmin() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_SYS_ADMIN/32].Effective&(1<<(unix.CAP_SYS_ADMIN%32)) != 0
}

// userNamespaces reports whether an unprivileged process may make a user
// namespace here, in which mnemos builds the view in a helper process,
// and if not, which setting forbids it.
func userNamespaces() (ok bool, why, hint string) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	switch {
	case read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
		return false, "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)",
			"sudo sysctl -w kernel.unprivileged_userns_clone=1 (and set it in /etc/sysctl.d to keep it)"
	case read("/proc/sys/user/max_user_namespaces") == "0":
		return false, "user namespaces are disabled (user.max_user_namespaces = 0)",
			"sudo sysctl -w user.max_user_namespaces=15000 (and set it in /etc/sysctl.d to keep it)"
	case read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
		return false, "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)",
			"allow them for mnemos with an AppArmor profile that has the userns rule, or sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
	}
	return true, "", ""
}
