//go:build !linux

package main

import "io"

// isTerminal reports whether w is a terminal. Off Linux it is not known
// here, and the output stays JSON lines (--text gives the table).
func isTerminal(w io.Writer) bool { return false }
