//go:build !linux

package gate

func isForeground() bool { return false }
