package policy

import "github.com/mnemos-dev/mnemos/classify"

// RunSandbox says how the request's commands will run, as the gate knows
// it before deciding: the field sandbox of condition rules reads it.
type RunSandbox uint8

const (
	// Unsandboxed: the command runs outside mnemos's sandbox (a hook runs
	// it itself, or this kernel cannot confine it). The zero value, so an
	// Input that does not say is never taken for contained.
	Unsandboxed RunSandbox = iota
	// Sandboxed: under the sandbox, which lets it reach the network.
	Sandboxed
	// SandboxedOffline: under the sandbox, with no network.
	SandboxedOffline
)

// The values of the field sandbox.
const (
	SandboxUnsandboxed = "unsandboxed"
	SandboxSandboxed   = "sandboxed"
	SandboxContained   = "contained"
)

// sandboxState is the field sandbox for one command: "contained" when it
// runs under the sandbox with no network, everything it does stays
// inside what the sandbox grants (it runs code, reads, parses, reads the
// clock, and writes only below Input.Writable, nothing that runs later),
// and the journal keeps what it changes in the workspace
// (Input.Journaled): contained work is work `mnemos undo` can undo;
// "sandboxed" when it runs under the sandbox but reaches further;
// "unsandboxed" when it runs outside it.
func (in *Input) sandboxState(cl *classify.Classification) string {
	switch in.Sandbox {
	case Unsandboxed:
		return SandboxUnsandboxed
	case Sandboxed:
		return SandboxSandboxed
	}
	if in.Journaled && Contained(cl, in.Writable) {
		return SandboxContained
	}
	return SandboxSandboxed
}

// Contained reports whether a classified command stays inside a sandbox
// with no network whose writable trees are writable: it has no floor (no
// write to what runs later, no write to a path not known before it runs),
// no access beyond running code, reading, parsing and the clock, and each
// write names a path below one of writable.
func Contained(cl *classify.Classification, writable []string) bool {
	if cl == nil || cl.Floor != classify.Allow {
		return false
	}
	for _, a := range cl.Accesses {
		switch a.Capability {
		case classify.CodeExec, classify.FSRead, classify.ParseLocal, classify.TimeRead:
		case classify.FSWrite:
			if a.Dynamic || a.Target == "" || !classify.WithinAny(a.Target, writable) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// ReliesOnSandbox reports whether the rule that settled a result reads
// the field sandbox: the gate decides such a command again when the
// request turns out to reach the network.
func (r *Rule) ReliesOnSandbox() bool {
	for i := range r.Conditions {
		if r.Conditions[i].f.kind == fSandbox {
			return true
		}
	}
	return false
}

// byWords reports a rule that names no capability, target or cost: it
// matches a command by its words and its place.
func (r *Rule) byWords() bool {
	if r.Capability != "" || r.InWorkspace {
		return false
	}
	for i := range r.Conditions {
		if r.Conditions[i].f.perAccess() {
			return false
		}
	}
	return true
}
