package approvals

// RememberItem is what approving a request with --remember would
// remember for one of its simple commands that uses a capability whose
// approval is always (code:exec, mail:send): an allow rule for a prefix
// of its words, pinned to what it ran with, or, when none is safe, why
// it is left to ask. The gate works it out when the request asks.
type RememberItem struct {
	// Argv is the command's words, as the policy reads them.
	Argv []string `json:"argv"`
	// Static is how many of the leading words are known before the
	// command runs; a prefix never reaches past them.
	Static int `json:"static"`
	// Prefix is the proposed argv_prefix, empty when Why is set.
	Prefix []string `json:"prefix,omitempty"`
	// Exact limits the rule to the prefix's words and no more.
	Exact bool `json:"exact,omitempty"`
	// Pin binds the rule to the program, script and environment the
	// command ran with (policy.Rule.Pin).
	Pin string `json:"pin,omitempty"`
	// Why says why nothing is remembered for the command: it asks again.
	Why string `json:"why,omitempty"`
}
