//go:build !linux

package sandbox

import (
	"fmt"
	"os/exec"
)

// Start starts cmd. Landlock is Linux-only, so the command runs unconfined
// unless spec.Required, and the returned Applied says so.
func Start(cmd *exec.Cmd, spec Spec) (Applied, error) {
	return startOn(cmd, spec, Probe())
}

// startOn is Start, reporting st.
func startOn(cmd *exec.Cmd, spec Spec, st Status) (Applied, error) {
	a := Applied{}
	p, err := buildPlan(spec)
	if err != nil {
		return a, err
	}
	a.Skipped, a.Notes = p.skipped, p.notes
	if spec.Required {
		return a, fmt.Errorf("%w: %s", ErrUnenforceable, st.Note())
	}
	a.Notes = append(a.Notes, "no Landlock on this system: the command runs unconfined")
	return a, cmd.Start()
}

// Prepared stands for rules built ahead; there are none without Landlock.
type Prepared struct{}

// Prepare does nothing without Landlock.
func Prepare(Spec, Status) *Prepared { return &Prepared{} }

// Wait returns at once.
func (*Prepared) Wait() {}

// Close does nothing.
func (*Prepared) Close() {}

// StartPrepared is startOn.
func StartPrepared(cmd *exec.Cmd, spec Spec, st Status, _ *Prepared) (Applied, error) {
	return startOn(cmd, spec, st)
}
