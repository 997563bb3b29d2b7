//go:build !linux

package audit

import (
	"context"
	"errors"
	"os"
)

const openFlags = 0

// lockFile fails: without a file lock, concurrent writers could break the
// chain, so appending is refused (Verify and Tail read without a lock).
func lockFile(ctx context.Context, f *os.File, exclusive bool) error {
	return errors.ErrUnsupported
}

func unlockFile(f *os.File) error { return nil }
