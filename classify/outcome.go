package classify

import (
	"encoding/json"
	"fmt"
)

// Outcome is a decision, ordered from least to most restrictive. The zero
// value is Deny, so a decision nobody filled in never means allow.
type Outcome int

// Outcomes. Deny is the zero value on purpose.
const (
	Deny Outcome = iota
	Ask
	Allow
)

func (o Outcome) String() string {
	switch o {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	}
	return "deny"
}

// Restrictiveness orders outcomes: allow 0 < ask 1 < deny 2.
func (o Outcome) Restrictiveness() int {
	switch o {
	case Allow:
		return 0
	case Ask:
		return 1
	}
	return 2
}

// ParseOutcome accepts allow, ask and deny (and seed 004's synonyms
// auto_approve and require_approval).
func ParseOutcome(s string) (Outcome, error) {
	switch s {
	case "allow", "auto_approve":
		return Allow, nil
	case "ask", "require_approval":
		return Ask, nil
	case "deny":
		return Deny, nil
	}
	return Deny, fmt.Errorf("unknown action %q (want allow, ask or deny)", s)
}

// MarshalJSON writes the outcome as its name.
func (o Outcome) MarshalJSON() ([]byte, error) { return json.Marshal(o.String()) }

// UnmarshalJSON reads an outcome name.
func (o *Outcome) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := ParseOutcome(s)
	if err != nil {
		return err
	}
	*o = v
	return nil
}
