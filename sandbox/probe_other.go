//go:build !linux

package sandbox

// Probe reports that Landlock exists only on Linux.
func Probe() Status { return Status{Err: "Landlock is Linux-only"} }
