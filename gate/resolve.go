package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
)

// ApproveOptions qualify an approval.
type ApproveOptions struct {
	// Remember is "", "session" or "permanent": a territory concession that
	// also records grants (or, for code:exec and mail:send, an allow rule).
	Remember string
	// For limits the concession to a duration (implies a grant).
	For time.Duration
}

// Approved is what approving did.
type Approved struct {
	Pending approvals.Pending `json:"approval"`
	Grants  []policy.Grant    `json:"grants,omitempty"`
	// Rule is the allow rule appended to the policy file, if any.
	Rule *AddedRule `json:"rule,omitempty"`
}

// AddedRule is an argv_prefix allow rule written on approval.
type AddedRule struct {
	Name       string   `json:"name"`
	ArgvPrefix []string `json:"argv_prefix"`
	// Pin binds the rule to the program, script and environment the
	// approved command ran with (policy.Rule.Pin).
	Pin  string `json:"pin,omitempty"`
	File string `json:"file"`
}

// sessionGrantFallback bounds a session concession when the request
// carried no session id.
const sessionGrantFallback = 12 * time.Hour

// Approve resolves a pending request as approved by the given identity
// (seed 002's four checks apply), issuing its one-shot ticket, and records
// the territory concession asked for. The concession is checked before
// anything is resolved, so a refused --remember changes nothing.
func (g *Gate) Approve(ctx context.Context, token string, by approvals.Identity, o ApproveOptions) (Approved, error) {
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
	default:
		return Approved{}, fmt.Errorf("--remember %q: want session or permanent", o.Remember)
	}
	if o.For < 0 {
		return Approved{}, errors.New("--for must be a positive duration")
	}
	if o.For > 0 && territory == approvals.TerritoryNone {
		territory = approvals.TerritoryPermanent
	}
	// Plan the concession before resolving, so a refusal changes nothing.
	// An extension's request always records its grant (extensions.go).
	var plan concession
	pend, getErr := st.Get(ctx, token)
	ext, isExt := ExtensionOf(pend)
	switch {
	case getErr == nil && isExt:
		if plan, err = planExtension(pend, ext, territory, o.For, now); err != nil {
			return Approved{}, err
		}
		territory = approvals.TerritoryPermanent
	case territory != approvals.TerritoryNone:
		if getErr != nil {
			return Approved{}, getErr
		}
		if plan, err = planConcession(pend, territory, o.For, now); err != nil {
			return Approved{}, err
		}
	}
	// A concession lets the rerun through by itself: no spare ticket.
	noTicket := len(plan.grants) > 0 || plan.prefix != nil
	scope := g.scopeOf(ctx, st, token)
	p, err := st.Resolve(ctx, token, approvals.Approve, by, now, approvals.ResolveOptions{Territory: territory, NoTicket: noTicket, TicketTTL: scope.TTL})
	if err != nil {
		if errors.Is(err, approvals.ErrExpired) {
			_ = g.cfg.Audit.Append(ctx, "approval.expired", slog.String("id", token))
		}
		return Approved{}, err
	}
	out := Approved{Pending: p}
	if err := g.cfg.Audit.Append(ctx, "approval.approved",
		slog.String("id", p.Token), slog.String("channel", by.Channel), slog.String("sender", by.Sender),
		slog.String("territory", territory), slog.Any("argv", p.Details.Argv)); err != nil {
		return out, err
	}
	for _, k := range plan.grants {
		expires := plan.expires
		if scope.TTL > 0 && (expires == nil || now.Add(scope.TTL).Before(*expires)) {
			t := now.Add(scope.TTL)
			expires = &t
		}
		gr, err := st.RecordGrant(ctx, k, approvals.GrantOptions{ExpiresAt: expires, GrantedBy: by.Channel + ":" + by.Sender,
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
		if isExt {
			if err := g.extensionGranted(ctx, ext, gr, p.Token); err != nil {
				return out, err
			}
		}
	}
	if plan.prefix != nil {
		r, err := AppendAllowRule(g.cfg.Paths.PolicyFile, plan.prefix, plan.pin, p.Token, now)
		if err != nil {
			return out, err
		}
		out.Rule = &r
		if err := g.cfg.Audit.Append(ctx, "policy.rule_added",
			slog.String("name", r.Name), slog.Any("argv_prefix", r.ArgvPrefix), slog.String("file", r.File),
			slog.String("approval", p.Token)); err != nil {
			return out, err
		}
	}
	return out, nil
}

type concession struct {
	grants  []policy.GrantKey
	expires *time.Time
	session string
	prefix  []string
	pin     string
}

// planConcession works out the grants (and, for capabilities that never
// take a standing grant, the allow rule) a territory concession records.
func planConcession(p approvals.Pending, territory string, dur time.Duration, now time.Time) (concession, error) {
	var c concession
	if dur > 0 {
		t := now.Add(dur)
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
	if always {
		if territory == approvals.TerritorySession || dur > 0 {
			return c, errors.New("code:exec and mail:send never take a standing grant, and an allow rule cannot be limited to a session or a duration; use --remember permanent, or approve without it")
		}
		prefix, err := SafePrefix(p.Details.Argv)
		if err != nil {
			return c, err
		}
		if p.Details.Pin == "" {
			// What the command ran besides its words was not recorded:
			// a rule could not tell a changed script from the approved one.
			return c, errors.New("cannot remember this request: what it runs besides its words (its program, script and environment) was not recorded when it asked; approve without --remember")
		}
		c.prefix, c.pin = prefix, p.Details.Pin
	}
	if len(c.grants) == 0 && c.prefix == nil {
		return c, errors.New("nothing to remember for this request")
	}
	return c, nil
}

// broadPrograms are programs whose prefix would allow arbitrary code.
func broadProgram(name string) bool {
	switch name {
	case "bash", "sh", "dash", "zsh", "ksh", "fish", "ash", "csh", "tcsh", "busybox",
		"python", "python2", "python3", "node", "nodejs", "deno", "bun", "perl", "ruby",
		"php", "lua", "luajit", "tclsh", "wish", "Rscript", "julia", "osascript", "pwsh",
		"env", "sudo", "doas", "su", "runuser", "pkexec", "xargs", "eval", "exec", "command",
		"builtin", "nohup", "nice", "ionice", "timeout", "time", "stdbuf", "setsid", "watch",
		"flock", "parallel", "script", "chroot", "unshare", "nsenter", "ssh", "find",
		"npx", "pnpx", "uvx", "pipx", "mnemos", "awk", "gawk", "mawk", "sed":
		return true
	}
	return strings.HasPrefix(name, "python") || strings.HasPrefix(name, "ruby") || strings.HasPrefix(name, "perl")
}

// SafePrefix returns the argv_prefix for a "don't ask again" rule, or an
// error when the prefix would be too broad to be safe.
func SafePrefix(argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	name := path.Base(argv[0])
	if broadProgram(name) {
		return nil, fmt.Errorf("refusing to remember %q: a rule for it would allow running arbitrary code; approve once instead, or write a narrower rule in the policy", name)
	}
	if len(argv) == 1 {
		return nil, fmt.Errorf("refusing to remember a bare %q: the rule would allow every use of it; approve once instead, or write a narrower rule in the policy", name)
	}
	for _, w := range argv {
		if w == "" || strings.ContainsAny(w, "$`*?[\n") {
			return nil, fmt.Errorf("refusing to remember a command with the dynamic or unusual word %q", w)
		}
	}
	return append([]string(nil), argv...), nil
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
func (g *Gate) scopeOf(ctx context.Context, st *approvals.Store, token string) policy.ScopeTemplate {
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
