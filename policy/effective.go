package policy

import (
	"context"
	"fmt"
	"time"

	"github.com/mnemos-dev/mnemos/classify"
)

// EffectiveResult is seed 000's effective_outcome for one capability on one
// target: the table's cell, lifted to allowed by a grant where the table
// asks for approval.
type EffectiveResult struct {
	Level      string              `json:"level"`
	Capability classify.Capability `json:"capability"`
	Target     string              `json:"target,omitempty"`
	// Table is the cell of the autonomy table; Outcome the effective one.
	Table   Cell `json:"table"`
	Outcome Cell `json:"outcome"`
	// Grant is the grant that lifted approval_required, if any.
	Grant *Grant `json:"grant,omitempty"`
	// GrantsConsulted says whether the grants were looked at: only for an
	// approval_required cell of a capability that can take a standing
	// grant, with a target and an identity ("the DB is not queried"
	// otherwise).
	GrantsConsulted bool `json:"grants_consulted"`
}

// EffectiveOutcome is seed 000's effective_outcome(level, capability,
// channel, sender, target). The table decides denied and allowed; for
// approval_required, an active grant covering (channel, sender,
// capability, target) makes it allowed, except for capabilities whose
// default approval is always (code:exec, mail:send), which no standing
// grant covers. Without a target or an identity, or with no checker, it is
// the table's cell alone. An unknown capability is an error.
func EffectiveOutcome(ctx context.Context, level Level, c classify.Capability, channel, sender, target string, grants GrantChecker, now time.Time) (EffectiveResult, error) {
	s, ok := lookupSpec(c)
	if !ok {
		return EffectiveResult{}, fmt.Errorf("unknown capability %q (see mnemos policy registry)", c)
	}
	cell := TableCell(level, s)
	r := EffectiveResult{Level: level.String(), Capability: c, Target: target, Table: cell, Outcome: cell}
	if cell != ApprovalRequired || s.DefaultApproval == ApprovalAlways || grants == nil ||
		target == "" || channel == "" || sender == "" {
		return r, nil
	}
	r.GrantsConsulted = true
	g, found, err := grants.CoveringGrant(ctx, channel, sender, c, target, "", now)
	if err != nil {
		// A grant that cannot be read covers nothing.
		return r, err
	}
	if found {
		r.Outcome, r.Grant = Allowed, &g
	}
	return r, nil
}
