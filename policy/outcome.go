package policy

import (
	"errors"

	"github.com/mnemos-dev/mnemos/classify"
)

// ErrUnknownCapability is returned for a capability outside the registry.
var ErrUnknownCapability = errors.New("capability not in the registry")

// Outcome is a decision's outcome (classify.Outcome): allow, ask or deny.
// It is defined where classification gives a command its floor, and
// named here because rules, the table and every decision speak of it.
type Outcome = classify.Outcome

// Outcomes. Deny is the zero value on purpose.
const (
	Deny  = classify.Deny
	Ask   = classify.Ask
	Allow = classify.Allow
)

// Stricter returns the more restrictive of two outcomes.
func Stricter(a, b Outcome) Outcome {
	if a.Restrictiveness() >= b.Restrictiveness() {
		return a
	}
	return b
}
