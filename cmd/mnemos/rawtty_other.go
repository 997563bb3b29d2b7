//go:build !linux

package main

import (
	"errors"
	"os"
)

// rawTerminal is not written for this system yet: approvals watch says
// so, and approvals list and approve do the same work.
func rawTerminal(f *os.File) (func(), error) {
	return nil, errors.New("single keys are read on Linux only")
}
