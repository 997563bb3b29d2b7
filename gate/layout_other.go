//go:build !linux

package gate

import (
	"errors"
	"os"
)

// lockState takes no lock where flock is not available.
func lockState(string) (func(), error) { return func() {}, nil }

// olderServe cannot tell without flock.
func olderServe(string) (int, bool) { return 0, false }

// isNoLinks reports a file system that refuses hard links.
func isNoLinks(err error) bool { return errors.Is(err, os.ErrPermission) }
