package sandbox

import "fmt"

// Status is what the kernel offers and what mnemos enforces.
type Status struct {
	// ABI is the Landlock ABI version, 0 when the kernel has none.
	ABI int `json:"landlock_abi"`
	// Enforced is true when mnemos applies a ruleset to commands it runs.
	Enforced bool `json:"enforced"`
	// Err is why the probe failed, if it did.
	Err string `json:"error,omitempty"`
}

// Enforceable reports whether a run would be confined.
func (s Status) Enforceable() bool { return s.Enforced }

// Note is a one-line human summary.
func (s Status) Note() string {
	switch {
	case s.ABI == 0 && s.Err != "":
		return "no Landlock on this kernel (" + s.Err + "); commands run unconfined"
	case !s.Enforced:
		return fmt.Sprintf("Landlock ABI %d is available but mnemos does not apply a ruleset yet; commands run unconfined", s.ABI)
	}
	return fmt.Sprintf("Landlock ABI %d enforced", s.ABI)
}

// Gaps lists what Landlock cannot restrict at this ABI.
func (s Status) Gaps() []string {
	var g []string
	if s.ABI < 4 {
		g = append(g, "TCP bind and connect (needs ABI 4)")
	}
	if s.ABI < 6 {
		g = append(g, "abstract unix sockets and signals (needs ABI 6)")
	}
	g = append(g, "UDP", "MPTCP", "connecting to a unix socket file")
	return g
}
