package sandbox

import llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"

// Probe asks the kernel which Landlock ABI it offers.
func Probe() Status {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return Status{Err: err.Error()}
	}
	return Status{ABI: v}
}
