//go:build !linux

package sandbox

// BecomeSubreaper does nothing where there is no sandbox.
func BecomeSubreaper() error { return nil }

// ReapLeftovers does nothing where there is no sandbox.
func ReapLeftovers() int { return 0 }
