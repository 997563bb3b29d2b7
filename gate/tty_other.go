//go:build !linux

package gate

import "os/exec"

// job is a command run in the foreground of mnemos's terminal; elsewhere
// than Linux, commands share mnemos's process group.
type job struct{}

func foregroundJob(*exec.Cmd) *job { return nil }

func (j *job) restore(*exec.Cmd) {}

func (j *job) wait(cmd *exec.Cmd) error { return cmd.Wait() }
