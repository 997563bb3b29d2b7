//go:build !linux

package sandbox

import (
	"fmt"
	"os/exec"
)

// Start starts cmd. Landlock is Linux-only, so the command runs unconfined
// unless spec.Required, and the returned Applied says so.
func Start(cmd *exec.Cmd, spec Spec) (Applied, error) {
	return StartOn(cmd, spec, Probe())
}

// StartOn is Start, reporting st.
func StartOn(cmd *exec.Cmd, spec Spec, st Status) (Applied, error) {
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
