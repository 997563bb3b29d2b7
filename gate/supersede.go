package gate

import (
	"context"
	"errors"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
)

// A request can ask, park a card, and then run without anyone answering
// it: another approval's concession (--remember contained given for git
// init lets go mod init through), a grant, a rule remembered meanwhile.
// Its card would then wait in approvals list for an answer nobody needs.
// So when a request is allowed to run, its own open card (the pending
// approval with the same request key: the same words, directory,
// identity, context and what they run) is closed: cancelled on the
// requester's behalf, with the reason that it ran, recorded as
// approval.cancelled. Closing never approves: no ticket is issued, and
// the card's concession is not given.
//
// The decision for a command settled by rules and the table opens no
// database (design.md), so a card is closed only when the decision
// opened the state anyway (a ticket, a grant, a session rule); one whose
// request a rule of the policy file lets through waits until it expires.

// supersede closes the open card of a request that is about to run.
func (g *Gate) supersede(ctx context.Context, req Request, dec Decision) error {
	if g.store == nil || dec.Outcome != policy.Allow {
		return nil
	}
	st := g.store
	now := g.cfg.Now()
	// One indexed lookup (measured: about 0.13 ms with the state open,
	// which itself costs more; a pre-check listing open cards cost twice
	// that).
	p, ok, err := st.FindOpen(ctx, req.Key(), now)
	if err != nil || !ok || p.Token == dec.Ticket {
		return err
	}
	by := approvals.Identity{Channel: req.Channel, Sender: req.Sender}
	_, err = g.Cancel(ctx, p.Token, by, "superseded: the request ran without it ("+dec.Reason+")")
	if errors.Is(err, approvals.ErrAlreadyResolved) || errors.Is(err, approvals.ErrExpired) || errors.Is(err, approvals.ErrNotRequester) {
		// Answered, or expired, meanwhile: nothing left to close.
		return nil
	}
	return err
}
