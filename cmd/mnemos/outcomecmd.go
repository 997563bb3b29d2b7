package main

import (
	"context"
	"fmt"
	"time"

	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
)

// OutcomeCmd is mnemos policy outcome: seed 000's effective_outcome for
// one capability, without a command.
type OutcomeCmd struct {
	Level      string `arg:"" help:"The autonomy level: readonly, supervised or full."`
	Capability string `arg:"" help:"A capability of the registry (mnemos policy registry), e.g. fs:write."`
	Target     string `help:"The target (a path, a host, a recipient); with it, the grants of the identity (--channel, --sender, and --session for session grants) are consulted."`
	JSON       bool   `name:"json" help:"Print one JSON object."`
}

// Run prints the table's cell and the effective outcome.
func (c *OutcomeCmd) Run(a *app) error {
	lvl, err := policy.ParseLevel(c.Level)
	if err != nil {
		return usageErr(err.Error(), "levels: readonly, supervised, full")
	}
	if _, err := policy.Lookup(policy.Capability(c.Capability)); err != nil {
		return usageErr(err.Error(), "see `mnemos policy registry`")
	}
	g, err := a.gate()
	if err != nil {
		return err
	}
	id := a.identity()
	r, err := policy.EffectiveOutcome(a.ctx, lvl, policy.Capability(c.Capability), id.Channel, id.Sender, c.Target, storeGrants{g: g, session: a.cli.Session}, a.now())
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(a.io.out, r)
	}
	fmt.Fprintln(a.io.out, r.Outcome)
	fmt.Fprintf(a.io.out, "table: %s × %s = %s\n", r.Level, r.Capability, r.Table)
	switch {
	case r.Grant != nil:
		fmt.Fprintf(a.io.out, "grant %d for %s:%s on %s lifts it\n", r.Grant.ID, r.Grant.Channel, r.Grant.Sender, r.Grant.Target)
	case r.GrantsConsulted:
		fmt.Fprintf(a.io.out, "no grant for %s:%s covers %s\n", id.Channel, id.Sender, r.Target)
	}
	return nil
}

// storeGrants opens the state database only when a grant is looked up.
// A lookup without a session of its own is made in the caller's session
// (--session), so a session grant counts where mnemos run would use it.
type storeGrants struct {
	g       *gate.Gate
	session string
}

func (s storeGrants) CoveringGrant(ctx context.Context, channel, sender string, c policy.Capability, target, session string, now time.Time) (policy.Grant, bool, error) {
	st, err := s.g.Store(ctx)
	if err != nil {
		return policy.Grant{}, false, err
	}
	if session == "" {
		session = s.session
	}
	return st.CoveringGrant(ctx, channel, sender, c, target, session, now)
}
