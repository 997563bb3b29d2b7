package gate

import (
	"context"
	"fmt"
	"log/slog"
	"math"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
)

// rateLimitFor is the rate limit on capability c for the request: the
// policy's (its profile's or layers' as the policy combines them), made
// stricter field by field by the extra policy's.
func (g *Gate) rateLimitFor(c classify.Capability, req Request) (policy.RateLimit, bool) {
	l, ok := g.cfg.Policy.RateLimitFor(c, req.Channel, req.Sender)
	if g.cfg.Extra == nil {
		return l, ok
	}
	e, eok := g.cfg.Extra.RateLimitFor(c, req.Channel, req.Sender)
	switch {
	case !eok:
		return l, ok
	case !ok:
		return e, true
	}
	l.Capacity = min(l.Capacity, e.Capacity)
	l.RefillPerMinute = math.Min(l.RefillPerMinute, e.RefillPerMinute)
	if e.Over == policy.Deny {
		l.Over = policy.Deny
	}
	return l, true
}

// rateLimit takes one token from the bucket of every rate-limited
// capability an allowed request uses, once per capability. The first
// empty bucket turns the decision into the limit's outcome (ask unless it
// says deny) and is recorded as a rate.limited event, unless a person
// approved this very request: its one-shot ticket is then spent. Tokens taken before
// it stay taken: a refused request still spent them, which only makes the
// limit stricter. A decision with no rate-limited capability never opens
// the database.
func (g *Gate) rateLimit(ctx context.Context, req Request, dec *Decision) error {
	seen := map[classify.Capability]bool{}
	for _, c := range dec.Commands {
		if c.Policy == nil {
			continue
		}
		for _, a := range c.Policy.Accesses {
			if seen[a.Capability] {
				continue
			}
			seen[a.Capability] = true
			l, ok := g.rateLimitFor(a.Capability, req)
			if !ok {
				continue
			}
			st, err := g.Store(ctx)
			if err != nil {
				return err
			}
			key := req.Channel + ":" + req.Sender + ":" + string(a.Capability)
			took, remaining, err := st.TakeToken(ctx, key, float64(l.Capacity), l.RefillPerMinute, g.cfg.Now())
			if err != nil {
				return &StateError{Path: g.cfg.Paths.DBFile, Err: err}
			}
			if took {
				continue
			}
			// Over the limit, a person's approval of this very request
			// (its one-shot ticket) still lets it run once.
			tok, spent, err := st.SpendTicket(ctx, req.Key(), g.cfg.Now())
			if err != nil {
				return &StateError{Path: g.cfg.Paths.DBFile, Err: err}
			}
			if spent {
				dec.DecidedBy, dec.Ticket = "ticket", tok
				dec.Reason = fmt.Sprintf("approved once over the rate limit for %s: one-shot ticket of approval %s spent", a.Capability, tok)
				return nil
			}
			over := policy.Ask
			if l.Over == policy.Deny {
				over = policy.Deny
			}
			wait := (1 - remaining) / l.RefillPerMinute
			dec.Outcome, dec.DecidedBy = over, "rate-limit"
			dec.BlockedBy = ""
			if over == policy.Deny {
				dec.BlockedBy = "rate-limit"
			}
			dec.Reason = fmt.Sprintf("rate limit reached for %s (%s); the next token comes in %s",
				a.Capability, l, minutes(wait))
			// The commands that use the capability carry the outcome, so
			// that an approval card names it.
			for i := range dec.Commands {
				cd := &dec.Commands[i]
				if cd.Policy != nil && cd.Outcome == policy.Allow && usesCapability(cd.Policy.Accesses, a.Capability) {
					cd.Outcome, cd.DecidedBy, cd.BlockedBy, cd.Reason = over, dec.DecidedBy, dec.BlockedBy, dec.Reason
				}
			}
			err = g.cfg.Audit.Append(ctx, "rate.limited",
				slog.String("capability", string(a.Capability)),
				slog.Int("capacity", l.Capacity),
				slog.Float64("refill_per_minute", l.RefillPerMinute),
				slog.String("outcome", over.String()),
				slog.Any("argv", req.Argv),
				slog.String("cwd", req.Cwd),
				slog.String("channel", req.Channel),
				slog.String("sender", req.Sender))
			if err != nil {
				return err
			}
			return nil
		}
	}
	return nil
}

// minutes says a duration given in minutes for a person.
func minutes(m float64) string {
	switch {
	case math.IsNaN(m) || math.IsInf(m, 0) || m > 60*24*365:
		return "a long time"
	case m < 1:
		return fmt.Sprintf("%.0f s", math.Max(1, math.Ceil(m*60)))
	case m < 120:
		return fmt.Sprintf("%.0f min", math.Ceil(m))
	default:
		return fmt.Sprintf("%.1f h", m/60)
	}
}

func usesCapability(as []policy.AccessResult, c classify.Capability) bool {
	for _, a := range as {
		if a.Capability == c {
			return true
		}
	}
	return false
}
