package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/approvals/pgstore"
	"github.com/mnemos-dev/mnemos/policy"
)

// ApproveOptions qualify an approval.
type ApproveOptions struct {
	// Remember is "", "session" or "permanent": a territory concession that
	// also records grants (or, for code:exec and mail:send, allow rules:
	// in the policy file when permanent, in the state database for the
	// session otherwise).
	Remember string
	// For limits the concession to a duration (implies a grant).
	For time.Duration
	// Prefixes are prefixes a person chose (approve --prefix) in place of
	// the proposed ones, each for the commands of the request it begins.
	Prefixes [][]string
	// Under widens the request's fs:write grant to a directory's whole
	// subtree (approve --under): relative to the request's directory,
	// holding every path the request writes.
	Under string
	// Via is the identity the answer comes through, which approves for
	// the requester answered for: approvals.ViaTerminal, ViaPage or
	// ViaBridge with the person's sender, or a Telegram account. Zero
	// means the person at a terminal (terminal:SENDER). It is never the
	// requester's own identity (approvals.ErrOwnRequest).
	Via approvals.Identity
}

// Approved is what approving did.
type Approved struct {
	Pending approvals.Pending `json:"approval"`
	Grants  []policy.Grant    `json:"grants,omitempty"`
	// Rule is the first of Rules, for readers of one rule.
	Rule *AddedRule `json:"rule,omitempty"`
	// Rules are the allow rules appended to the policy file.
	Rules []AddedRule `json:"rules,omitempty"`
	// SessionRules are the allow rules recorded for the session.
	SessionRules []approvals.SessionRule `json:"session_rules,omitempty"`
	// NotRemembered names the commands of the request left to ask, and
	// why; the approval itself still lets the request run once.
	NotRemembered []NotRemembered `json:"not_remembered,omitempty"`
	// Reused are the grants of Grants the identity held already, which
	// the approval reused rather than record again (grantreuse.go).
	Reused []int64 `json:"reused_grants,omitempty"`
	// Replaced maps each grant of Grants that replaced a shorter one the
	// identity held to the grant it replaced (now revoked).
	Replaced map[int64]int64 `json:"replaced_grants,omitempty"`
}

// NotRemembered is a command a --remember left to ask.
type NotRemembered struct {
	Argv []string `json:"argv"`
	Why  string   `json:"why"`
}

// AddedRule is an argv_prefix allow rule written on approval.
type AddedRule struct {
	Name       string   `json:"name"`
	ArgvPrefix []string `json:"argv_prefix"`
	// Exact: the rule covers the prefix's words and no more.
	Exact bool `json:"exact,omitempty"`
	// Pin binds the rule to the program, script and environment the
	// approved command ran with (policy.Rule.Pin).
	Pin  string `json:"pin,omitempty"`
	File string `json:"file"`
}

// sessionGrantFallback bounds a session concession when the request
// carried no session id.
const sessionGrantFallback = 12 * time.Hour

// Approve resolves a pending request of by as approved, answered through
// o.Via (seed 002's four checks apply, and the answering identity is never
// the requester's own), issuing its one-shot ticket, and records the
// territory concession asked for. The concession is checked before
// anything is resolved, so a refused --remember changes nothing.
func (g *Gate) Approve(ctx context.Context, token string, by approvals.Identity, o ApproveOptions) (Approved, error) {
	via := o.Via
	if via == (approvals.Identity{}) {
		via = approvals.Identity{Channel: approvals.ViaTerminal, Sender: by.Sender}
	}
	st, err := g.Store(ctx)
	if err != nil {
		return Approved{}, err
	}
	now := g.cfg.Now()
	territory := approvals.TerritoryNone
	switch o.Remember {
	case "", "none":
	case "session":
		territory = approvals.TerritorySession
	case "permanent":
		territory = approvals.TerritoryPermanent
	case "contained":
		territory = approvals.TerritorySession
	default:
		return Approved{}, fmt.Errorf("--remember %q: want session, permanent or contained", o.Remember)
	}
	if o.For < 0 {
		return Approved{}, errors.New("--for must be a positive duration")
	}
	if o.For > 0 && territory == approvals.TerritoryNone {
		territory = approvals.TerritoryPermanent
	}
	if territory == approvals.TerritoryNone && (len(o.Prefixes) > 0 || o.Under != "") {
		return Approved{}, errors.New("--prefix and --under say what to remember: give --remember session or permanent too")
	}
	// Plan the concession before resolving, so a refusal changes nothing.
	// An extension's request always records its grant (extensions.go).
	var plan concession
	pend, getErr := st.Get(ctx, token)
	if why := onceOnly(pend); getErr == nil && why != "" && (territory != approvals.TerritoryNone || o.Remember != "") {
		return Approved{}, errors.New(why)
	}
	ext, isExt := ExtensionOf(pend)
	switch {
	case getErr == nil && isExt:
		if len(o.Prefixes) > 0 || o.Under != "" {
			return Approved{}, errors.New("--prefix and --under are for commands, not extensions")
		}
		if plan, err = planExtension(pend, ext, territory, o.For, now); err != nil {
			return Approved{}, err
		}
		territory = approvals.TerritoryPermanent
	case o.Remember == "contained":
		if getErr != nil {
			return Approved{}, getErr
		}
		if plan, err = planContained(pend, o, now); err != nil {
			return Approved{}, err
		}
	case territory != approvals.TerritoryNone:
		if getErr != nil {
			return Approved{}, getErr
		}
		if plan, err = g.planConcession(pend, territory, o, now); err != nil {
			return Approved{}, err
		}
	}
	// A concession lets the rerun through by itself: no spare ticket,
	// unless some command of the request is left to ask, or the
	// concession is an allow rule in this machine's policy file for a
	// request parked on another machine, whose rerun reads its own.
	noTicket := (len(plan.grants) > 0 || len(plan.rules) > 0) && len(plan.skipped) == 0
	if noTicket && len(plan.rules) > 0 && !plan.sessionRules && g.parkedElsewhere(pend) {
		noTicket = false
	}
	scope := g.scopeOf(ctx, st, token)
	p, err := st.Resolve(ctx, token, approvals.Approve, via, now, approvals.ResolveOptions{Territory: territory,
		Under: plan.under, NoTicket: noTicket, TicketTTL: scope.TTL, For: by})
	if err != nil {
		if errors.Is(err, approvals.ErrExpired) {
			_ = g.cfg.Audit.Append(ctx, "approval.expired", slog.String("id", token))
		}
		return Approved{}, err
	}
	out := Approved{Pending: p, NotRemembered: plan.skipped}
	if err := g.cfg.Audit.Append(ctx, "approval.approved",
		slog.String("id", p.Token), slog.String("channel", by.Channel), slog.String("sender", by.Sender),
		slog.String("by", via.Channel+":"+via.Sender),
		slog.String("territory", territory), slog.Any("argv", p.Details.Argv)); err != nil {
		return out, err
	}
	for _, k := range plan.grants {
		expires := plan.expires
		if scope.TTL > 0 && (expires == nil || now.Add(scope.TTL).Before(*expires)) {
			t := now.Add(scope.TTL)
			expires = &t
		}
		var held approvals.GrantRecord
		var reuse, replace bool
		if !isExt {
			// The same concession held already (grantreuse.go).
			if held, reuse, replace, err = g.reuseGrant(ctx, st, k, plan.session, expires, scope.MaxUses, p.Token, now); err != nil {
				return out, err
			}
		}
		if reuse {
			out.Grants, out.Reused = append(out.Grants, held.Grant), append(out.Reused, held.ID)
			continue
		}
		gr, err := st.RecordGrant(ctx, k, approvals.GrantOptions{ExpiresAt: expires, GrantedBy: via.Channel + ":" + via.Sender,
			Session: plan.session, Approval: p.Token, MaxUses: scope.MaxUses}, now)
		if err != nil {
			return out, err
		}
		out.Grants = append(out.Grants, gr)
		if err := g.cfg.Audit.Append(ctx, "grant.recorded",
			slog.Int64("id", gr.ID), slog.String("capability", string(gr.Capability)), slog.String("target", gr.Target),
			slog.String("channel", gr.Channel), slog.String("sender", gr.Sender), slog.String("approval", p.Token),
			slog.String("session", gr.Session), slog.Any("expires_at", gr.ExpiresAt), slog.Int("max_uses", scope.MaxUses)); err != nil {
			return out, err
		}
		if replace {
			if err := g.replaceGrant(ctx, st, held, gr, now); err != nil {
				return out, err
			}
			if out.Replaced == nil {
				out.Replaced = map[int64]int64{}
			}
			out.Replaced[gr.ID] = held.ID
		}
		if isExt {
			if err := g.extensionGranted(ctx, ext, gr, p.Token); err != nil {
				return out, err
			}
		}
	}
	if len(plan.rules) == 0 {
		return out, nil
	}
	if plan.sessionRules {
		return out, g.recordSessionRules(ctx, st, &out, plan, via, now)
	}
	rs, err := AppendAllowRules(g.cfg.Paths.PolicyFile, plan.rules, p.Token, now)
	if err != nil {
		return out, err
	}
	out.Rules = rs
	out.Rule = &out.Rules[0]
	for _, r := range rs {
		if err := g.cfg.Audit.Append(ctx, "policy.rule_added",
			slog.String("name", r.Name), slog.Any("argv_prefix", r.ArgvPrefix), slog.Bool("exact", r.Exact),
			slog.String("file", r.File), slog.String("approval", p.Token)); err != nil {
			return out, err
		}
	}
	return out, nil
}

// parkedElsewhere reports whether p was parked on another host sharing
// the state (or this host's id cannot be known).
func (g *Gate) parkedElsewhere(p approvals.Pending) bool {
	if p.Host == "" || !g.SharedState() {
		return false
	}
	host, err := pgstore.HostID(g.getenvOrEmpty)
	return err != nil || host != p.Host
}

// recordSessionRules records a plan's rules in the state database, each
// limited to the plan's session and expiry, and audits each.
func (g *Gate) recordSessionRules(ctx context.Context, st approvals.Backend, out *Approved, plan concession, by approvals.Identity, now time.Time) error {
	for _, r := range plan.rules {
		sr, err := st.RecordSessionRule(ctx, approvals.SessionRule{Channel: out.Pending.Channel, Sender: out.Pending.Sender,
			ArgvPrefix: r.prefix, Exact: r.exact, Pin: r.pin, Session: plan.session, ExpiresAt: *plan.expires,
			GrantedBy: by.Channel + ":" + by.Sender, Approval: out.Pending.Token}, now)
		if err != nil {
			return err
		}
		out.SessionRules = append(out.SessionRules, sr)
		if err := g.cfg.Audit.Append(ctx, "session_rule.recorded",
			slog.String("id", sr.Label()), slog.Any("argv_prefix", sr.ArgvPrefix), slog.Bool("exact", sr.Exact),
			slog.String("channel", sr.Channel), slog.String("sender", sr.Sender), slog.String("session", sr.Session),
			slog.Time("expires_at", sr.ExpiresAt), slog.String("approval", sr.Approval)); err != nil {
			return err
		}
	}
	return nil
}

type concession struct {
	grants  []policy.GrantKey
	expires *time.Time
	session string
	// rules are the allow rules to remember; sessionRules says they go to
	// the state database for the session, not to the policy file.
	rules        []plannedRule
	sessionRules bool
	// skipped are the commands left to ask.
	skipped []NotRemembered
	// under is the directory whose subtree the fs:write grant covers.
	under string
}

// plannedRule is one allow rule a concession remembers.
type plannedRule struct {
	prefix []string
	exact  bool
	pin    string
}

// planConcession works out the grants (and, for capabilities that never
// take a standing grant, the allow rules) a territory concession records.
func (g *Gate) planConcession(p approvals.Pending, territory string, o ApproveOptions, now time.Time) (concession, error) {
	var c concession
	if o.For > 0 {
		t := now.Add(o.For)
		c.expires = &t
	}
	if territory == approvals.TerritorySession {
		c.session = p.Details.Session
		if c.session == "" && c.expires == nil {
			t := now.Add(sessionGrantFallback)
			c.expires = &t
		}
	}
	always := false
	for _, a := range p.Details.Accesses {
		spec, err := policy.Lookup(a.Capability)
		if err != nil {
			return c, err
		}
		if spec.DefaultApproval == policy.ApprovalAlways {
			always = true
			continue
		}
		if a.Target == "" {
			return c, fmt.Errorf("cannot remember %s: its target is not known before the command runs; approve without --remember", a.Capability)
		}
		c.grants = append(c.grants, policy.GrantKey{Channel: p.Channel, Sender: p.Sender, Capability: a.Capability, Target: a.Target})
	}
	if o.Under != "" {
		if err := g.planUnder(p, &c, o.Under); err != nil {
			return c, err
		}
	}
	if always {
		if err := planRules(p, territory, o, &c, now); err != nil {
			return c, err
		}
	} else if len(o.Prefixes) > 0 {
		return c, errors.New("--prefix is for commands that run code or send mail; this request asks for neither")
	}
	if len(c.grants) == 0 && len(c.rules) == 0 {
		return c, errNothingToRemember
	}
	return c, nil
}

// planRules adds to c the allow rules remembered for a request's commands
// that use code:exec or mail:send: permanent ones go to the policy file,
// session ones (limited to the request's session, and always ending) to
// the state database.
func planRules(p approvals.Pending, territory string, o ApproveOptions, c *concession, now time.Time) error {
	if territory == approvals.TerritorySession {
		c.sessionRules = true
		// A session rule always ends, within MaxSessionRuleLife.
		end := now.Add(approvals.MaxSessionRuleLife)
		if c.expires == nil || c.expires.After(end) {
			if o.For > approvals.MaxSessionRuleLife {
				return fmt.Errorf("a session rule for code:exec or mail:send lasts at most %v; give a shorter --for", approvals.MaxSessionRuleLife)
			}
			c.expires = &end
		}
	} else if o.For > 0 {
		return errors.New("an allow rule for code:exec or mail:send is permanent or lasts a session: use --remember session (at most 12h, --for shortens it) or --remember permanent, or approve without them")
	}
	items := p.Details.Remember
	if len(items) == 0 {
		// A request parked before proposals were recorded: its words, as
		// one command, if it was one.
		if p.Details.Pin == "" {
			return errors.New("cannot remember this request: what it runs besides its words (its program, script and environment) was not recorded when it asked; approve without --remember")
		}
		items = []approvals.RememberItem{{Argv: p.Details.Argv, Static: len(p.Details.Argv), Pin: p.Details.Pin}}
		if pre, exact, err := proposePrefix(p.Details.Argv, len(p.Details.Argv)); err != nil {
			items[0].Why = err.Error()
		} else {
			items[0].Prefix, items[0].Exact = pre, exact
		}
	}
	used := make([]bool, len(o.Prefixes))
	for _, it := range items {
		pre, exact, why := it.Prefix, it.Exact, it.Why
		for k, words := range o.Prefixes {
			if !isPrefixOf(words, it.Argv) {
				continue
			}
			used[k] = true
			if it.Pin == "" {
				break // left to ask for its own reason
			}
			cp, ce, err := choosePrefix(it, words)
			if err != nil {
				return fmt.Errorf("--prefix %q: %w; %s", strings.Join(words, " "), err, choicesLine(it))
			}
			pre, exact, why = cp, ce, ""
			break
		}
		if why != "" || it.Pin == "" {
			if why == "" {
				why = "what it runs besides its words was not recorded"
			}
			c.skipped = append(c.skipped, NotRemembered{Argv: it.Argv, Why: why})
			continue
		}
		r := plannedRule{prefix: pre, exact: exact, pin: it.Pin}
		if !slices.ContainsFunc(c.rules, func(q plannedRule) bool {
			return slices.Equal(q.prefix, r.prefix) && q.exact == r.exact && q.pin == r.pin
		}) {
			c.rules = append(c.rules, r)
		}
	}
	for k, u := range used {
		if !u {
			return fmt.Errorf("--prefix %q begins no command of this request that runs code or sends mail", strings.Join(o.Prefixes[k], " "))
		}
	}
	if len(c.rules) == 0 {
		var whys []string
		for _, s := range c.skipped {
			whys = append(whys, strings.Join(s.Argv, " ")+": "+s.Why)
		}
		return fmt.Errorf("%w: %s; approve without --remember", errNothingToRemember, strings.Join(whys, "; "))
	}
	return nil
}

// Deny rejects a pending request.
func (g *Gate) Deny(ctx context.Context, token string, by approvals.Identity) (approvals.Pending, error) {
	st, err := g.Store(ctx)
	if err != nil {
		return approvals.Pending{}, err
	}
	p, err := st.Resolve(ctx, token, approvals.Reject, by, g.cfg.Now(), approvals.ResolveOptions{})
	if err != nil {
		if errors.Is(err, approvals.ErrExpired) {
			_ = g.cfg.Audit.Append(ctx, "approval.expired", slog.String("id", token))
		}
		return p, err
	}
	if err := g.cfg.Audit.Append(ctx, "approval.denied",
		slog.String("id", p.Token), slog.String("channel", by.Channel), slog.String("sender", by.Sender),
		slog.Any("argv", p.Details.Argv)); err != nil {
		return p, err
	}
	if ext, ok := ExtensionOf(p); ok {
		return p, g.extensionDenied(ctx, ext, p, by)
	}
	return p, nil
}

// Cancel withdraws a pending request on its requester's word (seed 002's
// cancel_pending): it can no longer be approved, and approval.cancelled
// records why.
func (g *Gate) Cancel(ctx context.Context, token string, by approvals.Identity, reason string) (approvals.Pending, error) {
	st, err := g.Store(ctx)
	if err != nil {
		return approvals.Pending{}, err
	}
	p, err := st.Cancel(ctx, token, by, reason, g.cfg.Now())
	if err != nil {
		if errors.Is(err, approvals.ErrExpired) {
			_ = g.cfg.Audit.Append(ctx, "approval.expired", slog.String("id", token))
		}
		return p, err
	}
	return p, g.cfg.Audit.Append(ctx, "approval.cancelled",
		slog.String("id", p.Token), slog.String("channel", by.Channel), slog.String("sender", by.Sender),
		slog.Any("argv", p.Details.Argv), slog.String("reason", p.CancelReason))
}

// ExpireSweep marks pending requests past their TTL as expired and records
// approval.expired for each.
func (g *Gate) ExpireSweep(ctx context.Context) (int, error) {
	st, err := g.Store(ctx)
	if err != nil {
		return 0, err
	}
	gone, err := st.CleanupExpired(ctx, g.cfg.Now())
	if err != nil {
		return 0, err
	}
	for _, p := range gone {
		if err := g.cfg.Audit.Append(ctx, "approval.expired", slog.String("id", p.Token), slog.Any("argv", p.Details.Argv)); err != nil {
			return len(gone), err
		}
	}
	return len(gone), nil
}

// RevokeGrant ends a grant and records grant.revoked.
func (g *Gate) RevokeGrant(ctx context.Context, id int64, by approvals.Identity) (policy.Grant, bool, error) {
	st, err := g.Store(ctx)
	if err != nil {
		return policy.Grant{}, false, err
	}
	gr, ok, err := st.RevokeGrant(ctx, id, g.cfg.Now())
	if err != nil || !ok {
		return gr, ok, err
	}
	return gr, true, g.cfg.Audit.Append(ctx, "grant.revoked",
		slog.Int64("id", gr.ID), slog.String("capability", string(gr.Capability)), slog.String("target", gr.Target),
		slog.String("by", by.Channel+":"+by.Sender))
}

// scopeOf returns the scope_template of the rule that asked about a
// pending request (seed 004): it limits the ticket's and the grant's life
// and the grant's uses. A request the table asked about has none.
func (g *Gate) scopeOf(ctx context.Context, st approvals.Backend, token string) policy.ScopeTemplate {
	p, err := st.Get(ctx, token)
	if err != nil || p.Details.Rule == "" {
		return policy.ScopeTemplate{}
	}
	for _, pol := range []*policy.Policy{g.cfg.Policy, g.cfg.Extra} {
		if pol == nil {
			continue
		}
		for _, r := range pol.Rules {
			if r.Name == p.Details.Rule && r.Scope != nil {
				return *r.Scope
			}
		}
	}
	return policy.ScopeTemplate{}
}

// PruneGrants revokes grants unused for the given duration with reason
// stale, recording grant.revoked for each.
func (g *Gate) PruneGrants(ctx context.Context, unusedFor time.Duration, by approvals.Identity) ([]policy.Grant, error) {
	st, err := g.Store(ctx)
	if err != nil {
		return nil, err
	}
	gone, err := st.PruneGrants(ctx, unusedFor, g.cfg.Now())
	if err != nil {
		return nil, err
	}
	for _, gr := range gone {
		if err := g.cfg.Audit.Append(ctx, "grant.revoked",
			slog.Int64("id", gr.ID), slog.String("capability", string(gr.Capability)), slog.String("target", gr.Target),
			slog.String("revoke_reason", approvals.RevokeReasonStale), slog.String("by", by.Channel+":"+by.Sender)); err != nil {
			return gone, err
		}
	}
	return gone, nil
}
