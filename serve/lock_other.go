//go:build !linux

package serve

import "os"

// tryLock takes no lock where flock is not available: a second instance
// is then not refused.
func tryLock(*os.File) error { return nil }

func lockWait(*os.File) error { return nil }
