package gate

import (
	"context"
	"log/slog"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
)

// One concession, one grant. Approving with --remember records a grant
// for each access; approving the same kind of request again (go get, then
// go mod tidy, both reaching proxy.golang.org) would record the same
// grant again, and grants list would fill with duplicates. So a grant the
// identity already holds for the same capability, target and session,
// with no limit on its uses, is reused when it lasts at least as long as
// the new one would; when the new one lasts longer, it is recorded and
// the old one revoked, replaced by it. A grant limited in uses (a rule's
// scope_template) is always its own: its count is the point.

// heldGrant returns the identity's active grant that concedes k for
// session, with no limit on its uses, if there is one.
func heldGrant(ctx context.Context, st approvals.Backend, k policy.GrantKey, session string, now time.Time) (approvals.GrantRecord, bool, error) {
	list, err := st.ListGrantRecords(ctx, approvals.GrantFilter{Channel: k.Channel, Sender: k.Sender}, now)
	if err != nil {
		return approvals.GrantRecord{}, false, err
	}
	for _, r := range list {
		if r.Capability == k.Capability && r.Target == k.Target && r.Session == session && r.MaxUses == 0 && r.RevokedAt == nil {
			return r, true, nil
		}
	}
	return approvals.GrantRecord{}, false, nil
}

// lastsAsLong reports whether a grant ending at held (nil: never) lasts
// at least as long as one ending at want.
func lastsAsLong(held, want *time.Time) bool {
	return held == nil || want != nil && !held.Before(*want)
}

// reuseGrant is what Approve does before recording a grant for k: it
// returns the held grant to reuse (ok), or the held grant the new one
// will replace (replace), or neither.
func (g *Gate) reuseGrant(ctx context.Context, st approvals.Backend, k policy.GrantKey, session string, expires *time.Time, maxUses int, approval string, now time.Time) (held approvals.GrantRecord, ok, replace bool, err error) {
	if maxUses != 0 {
		return held, false, false, nil
	}
	held, found, err := heldGrant(ctx, st, k, session, now)
	if err != nil || !found {
		return held, false, false, err
	}
	if !lastsAsLong(held.ExpiresAt, expires) {
		return held, false, true, nil
	}
	return held, true, false, g.cfg.Audit.Append(ctx, "grant.reused",
		slog.Int64("id", held.ID), slog.String("capability", string(held.Capability)), slog.String("target", held.Target),
		slog.String("channel", held.Channel), slog.String("sender", held.Sender), slog.String("approval", approval))
}

// replaceGrant revokes a held grant that a new, longer one replaces.
func (g *Gate) replaceGrant(ctx context.Context, st approvals.Backend, held approvals.GrantRecord, by policy.Grant, now time.Time) error {
	old, ok, err := st.RevokeGrant(ctx, held.ID, now)
	if err != nil || !ok {
		return err
	}
	return g.cfg.Audit.Append(ctx, "grant.revoked",
		slog.Int64("id", old.ID), slog.String("capability", string(old.Capability)), slog.String("target", old.Target),
		slog.Int64("replaced_by", by.ID), slog.String("by", by.GrantedBy))
}

// rememberedGrants attaches to a command that a rule remembered on
// approval allows the grants that cover its other accesses: approving
// with --remember recorded both, the rule for its code and the grants for
// the rest (the registries a go get reaches). The rule decides, and the
// grants were never consulted, so grants list showed them unused, never
// used. Attached, they are spent when the command runs (spendGrants),
// which counts the use and stamps it, and a grant used up meanwhile makes
// the command ask again.
func rememberedGrants(ctx context.Context, in policy.Input, res *policy.Result, grants policy.GrantChecker) error {
	if res.Outcome != policy.Allow || res.Rule == nil || !res.Rule.Remembered {
		return nil
	}
	for i := range res.Accesses {
		a := &res.Accesses[i]
		if a.Cell != policy.ApprovalRequired || a.Dynamic || a.Target == "" || a.Grant != nil {
			continue
		}
		if s, err := policy.Lookup(a.Capability); err != nil || s.DefaultApproval != policy.ApprovalPerTarget {
			continue
		}
		gr, ok, err := grants.CoveringGrant(ctx, in.Channel, in.Sender, a.Capability, a.Target, in.Session, in.Now)
		if err != nil {
			return err
		}
		if ok {
			a.Grant = &gr
		}
	}
	return nil
}
