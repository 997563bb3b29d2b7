//go:build !linux

package sandbox

// BecomeSubreaper does nothing where there is no sandbox.
func BecomeSubreaper() error { return nil }

// ReapLeftovers does nothing where there is no sandbox.
func ReapLeftovers() []string { return nil }

// HelperName is the helper's program name; there is no helper here.
const HelperName = "mnemos-sandbox-helper"

// IsHelper reports whether the process was started as the helper.
func IsHelper(argv0 string) bool { return argv0 == HelperName }

// RunHelper fails: there is no sandbox here.
func RunHelper(argv []string) int { return 127 }
