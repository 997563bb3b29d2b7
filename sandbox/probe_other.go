//go:build !linux

package sandbox

// Probe reports that Landlock and seccomp exist only on Linux.
func Probe() Status {
	return Status{Err: "Landlock is Linux-only", SeccompErr: "seccomp is Linux-only", WatchErr: "changes are watched on Linux only"}
}

// sealedByPermissions reports false: only Linux carves grants.
func sealedByPermissions(string) bool { return false }
