package sandbox

import (
	"os"
	"strings"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Probe asks the kernel which Landlock ABI and errata it offers, whether
// it takes mnemos's seccomp filter, and whether it lets a process push
// input into a terminal.
func Probe() Status {
	s := Status{TerminalInjection: legacyTIOCSTI()}
	s.Seccomp, s.SeccompErr = probeSeccomp()
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		s.Err = err.Error()
		return s
	}
	s.ABI, s.Enforced = v, v >= 1
	if e, err := llsys.LandlockGetErrata(); err == nil {
		s.Errata = e
	}
	return s
}

// legacyTIOCSTI reports whether TIOCSTI works: always before Linux 6.2,
// afterwards unless the dev.tty.legacy_tiocsti sysctl is 0.
func legacyTIOCSTI() bool {
	b, err := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti")
	if err != nil {
		return true
	}
	return strings.TrimSpace(string(b)) != "0"
}
