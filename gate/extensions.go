package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/shellparse"
	"github.com/mnemos-dev/mnemos/vaglio"
)

// Extension capability admission (seed 001) reuses the effect set and the
// approval ledger: a granted capability is a grant for the identity
// (ExtensionChannel, the extension's name); one that needs a person is a
// pending approval in the same table, which `mnemos approvals approve`
// turns into that grant instead of a run ticket.

// ExtensionChannel is the identity channel of extension grants; the
// sender is the extension's name.
const ExtensionChannel = "extension"

// Keys of approvals.Details.Meta that mark a pending request as an
// extension's.
const (
	metaExtension = "extension"
	metaVersion   = "extension_version"
	metaManifest  = "manifest"
	metaWhy       = "why"
)

// Admission states, as printed.
const (
	StateGranted = "granted"
	StatePending = "pending"
	StateDenied  = "denied"
)

// ExtensionResult is what admission did with one capability request.
type ExtensionResult struct {
	Capability classify.Capability `json:"capability"`
	// Target is the target as granted (~ expanded; "-" for none).
	Target string `json:"target"`
	Why    string `json:"why"`
	Line   int    `json:"line"`
	// State is granted, pending or denied.
	State string `json:"state"`
	// Class is, for a denial, ambient, self-granting, mnemos-replacement,
	// level or per-command.
	Class  string `json:"class,omitempty"`
	Reason string `json:"reason"`
	// Grant is the grant recorded now, or the active one found.
	Grant *policy.Grant `json:"grant,omitempty"`
	// Approval is the pending request's id.
	Approval string `json:"approval,omitempty"`
}

// Admitted is the verdict on a manifest.
type Admitted struct {
	Extension string `json:"extension"`
	Version   string `json:"version,omitempty"`
	Manifest  string `json:"manifest"`
	Level     string `json:"level"`
	// Outcome is allow when every capability is granted, ask when some
	// wait for a person and none is denied, deny when any is denied.
	Outcome      policy.Outcome    `json:"outcome"`
	Capabilities []ExtensionResult `json:"capabilities"`
}

// AdmitExtension judges a manifest's capabilities (policy.AdmitManifest)
// at the level the policy gives the extension's identity, lowered by
// lower when set. It records a grant for each granted one, parks a pending
// approval requested by by for each one that needs a person (reusing an
// open one for the same request), and writes extension.granted,
// extension.requested or extension.denied for each, then
// extension.admitted for the manifest.
func (g *Gate) AdmitExtension(ctx context.Context, m *policy.Manifest, by approvals.Identity, lower *policy.Level) (Admitted, error) {
	lvl := g.level(Request{Channel: ExtensionChannel, Sender: m.Name, Level: lower})
	verdicts := policy.AdmitManifest(m, lvl, g.cfg.UserHome, g.selfGrantCheck())
	out := Admitted{Extension: m.Name, Version: m.Version, Manifest: m.Source, Level: lvl.String()}
	now := g.cfg.Now()
	counts := map[string]int{}
	for _, v := range verdicts {
		r := ExtensionResult{Capability: v.Request.Capability, Target: v.Target, Why: v.Request.Why,
			Line: v.Request.Pos.Line, Class: v.Class, Reason: v.Reason}
		var err error
		switch v.Outcome {
		case policy.Allow:
			r.State = StateGranted
			err = g.grantExtension(ctx, m, &r, by, now)
		case policy.Ask:
			r.State = StatePending
			err = g.requestExtension(ctx, m, &r, by, lvl, now)
		default:
			r.State = StateDenied
			err = g.cfg.Audit.Append(ctx, "extension.denied",
				slog.String("extension", m.Name), slog.String("capability", string(r.Capability)),
				slog.String("target", r.Target), slog.String("class", r.Class), slog.String("reason", r.Reason),
				slog.String("manifest", m.Source), slog.String("autonomy", lvl.String()),
				slog.String("by", by.Channel+":"+by.Sender))
		}
		if err != nil {
			return out, err
		}
		counts[r.State]++
		out.Capabilities = append(out.Capabilities, r)
	}
	switch {
	case counts[StateDenied] > 0 || len(out.Capabilities) == 0:
		out.Outcome = policy.Deny
	case counts[StatePending] > 0:
		out.Outcome = policy.Ask
	default:
		out.Outcome = policy.Allow
	}
	return out, g.cfg.Audit.Append(ctx, "extension.admitted",
		slog.String("extension", m.Name), slog.String("version", m.Version), slog.String("manifest", m.Source),
		slog.String("outcome", out.Outcome.String()), slog.String("autonomy", lvl.String()),
		slog.Int("granted", counts[StateGranted]), slog.Int("pending", counts[StatePending]),
		slog.Int("denied", counts[StateDenied]), slog.String("by", by.Channel+":"+by.Sender),
		slog.String("reason", fmt.Sprintf("%s %s: %d granted, %d pending, %d denied", m.Name, m.Version,
			counts[StateGranted], counts[StatePending], counts[StateDenied])))
}

// grantExtension records the grant for a granted capability, unless an
// active one for the same target exists.
func (g *Gate) grantExtension(ctx context.Context, m *policy.Manifest, r *ExtensionResult, by approvals.Identity, now time.Time) error {
	st, err := g.Store(ctx)
	if err != nil {
		return err
	}
	if found, err := g.extensionGrant(ctx, st, m.Name, r, now); err != nil || found {
		return err
	}
	gr, err := st.RecordGrant(ctx, policy.GrantKey{Channel: ExtensionChannel, Sender: m.Name, Capability: r.Capability, Target: r.Target},
		approvals.GrantOptions{GrantedBy: "admission:" + by.Channel + ":" + by.Sender}, now)
	if err != nil {
		return &StateError{Path: g.cfg.Paths.DBFile, Err: err}
	}
	r.Grant = &gr
	if err := g.cfg.Audit.Append(ctx, "grant.recorded",
		slog.Int64("id", gr.ID), slog.String("capability", string(gr.Capability)), slog.String("target", gr.Target),
		slog.String("channel", gr.Channel), slog.String("sender", gr.Sender), slog.String("granted_by", gr.GrantedBy)); err != nil {
		return err
	}
	return g.extensionGranted(ctx, m.Name, gr, "")
}

// extensionGrant finds the extension's active grant for exactly r's
// capability and target; when there is one, r is granted by it.
func (g *Gate) extensionGrant(ctx context.Context, st approvals.Backend, name string, r *ExtensionResult, now time.Time) (bool, error) {
	active, err := st.ListGrants(ctx, approvals.GrantFilter{Channel: ExtensionChannel, Sender: name}, now)
	if err != nil {
		return false, &StateError{Path: g.cfg.Paths.DBFile, Err: err}
	}
	for _, gr := range active {
		if gr.Capability == r.Capability && gr.Target == r.Target && gr.Session == "" {
			r.State, r.Grant = StateGranted, &gr
			r.Reason += fmt.Sprintf(" (grant %d, already recorded)", gr.ID)
			return true, nil
		}
	}
	return false, nil
}

// extensionGranted writes extension.granted for a recorded grant;
// approval is the request it came from, if a person approved one.
func (g *Gate) extensionGranted(ctx context.Context, name string, gr policy.Grant, approval string) error {
	attrs := []slog.Attr{slog.String("extension", name), slog.Int64("grant", gr.ID),
		slog.String("capability", string(gr.Capability)), slog.String("target", gr.Target),
		slog.String("granted_by", gr.GrantedBy)}
	if approval != "" {
		attrs = append(attrs, slog.String("approval", approval))
	}
	if gr.ExpiresAt != nil {
		attrs = append(attrs, slog.Time("expires_at", *gr.ExpiresAt))
	}
	return g.cfg.Audit.Append(ctx, "extension.granted", attrs...)
}

// extensionKey binds a pending extension request to the person who
// admitted it, the extension, the capability and the target.
func extensionKey(by approvals.Identity, name string, c classify.Capability, target string) string {
	return approvals.RequestKey(approvals.KeyInput{Channel: by.Channel, Sender: by.Sender,
		Argv: []string{ExtensionChannel, name, string(c), target}, Context: map[string]any{"extension": name}})
}

// requestExtension parks a capability that needs a person as a pending
// approval, requested by the person admitting the extension (only they
// can resolve it).
func (g *Gate) requestExtension(ctx context.Context, m *policy.Manifest, r *ExtensionResult, by approvals.Identity, lvl policy.Level, now time.Time) error {
	st, err := g.Store(ctx)
	if err != nil {
		return err
	}
	// Approved before: the grant stands.
	if found, err := g.extensionGrant(ctx, st, m.Name, r, now); err != nil || found {
		return err
	}
	key := extensionKey(by, m.Name, r.Capability, r.Target)
	if p, ok, err := st.FindOpen(ctx, key, now); err != nil {
		return &StateError{Path: g.cfg.Paths.DBFile, Err: err}
	} else if ok {
		r.Approval = p.Token
		return nil
	}
	class := string(r.Capability)
	if r.Target != policy.NoTarget {
		class += ":" + r.Target
	}
	summary := "extension " + m.Name
	if m.Version != "" {
		summary += " " + m.Version
	}
	summary += ": " + r.Why
	if len(summary) > 200 {
		summary = summary[:197] + "..."
	}
	p, err := st.CreatePending(ctx, approvals.NewPending{
		Channel: by.Channel, Sender: by.Sender,
		CapabilityClass: class, ActionVerb: "admit", TargetSummary: summary, RequestKey: key,
		Details: approvals.Details{
			Level: lvl.String(), Reversibility: "reversible", Reason: r.Reason,
			Accesses: []approvals.Access{{Capability: r.Capability, Target: r.Target}},
			Meta:     map[string]string{metaExtension: m.Name, metaVersion: m.Version, metaManifest: m.Source, metaWhy: r.Why},
		},
	}, now, g.cfg.Policy.ApprovalTTL)
	if err != nil {
		return &StateError{Path: g.cfg.Paths.DBFile, Err: err}
	}
	r.Approval = p.Token
	if err := g.cfg.Audit.Append(ctx, "approval.requested",
		slog.String("id", p.Token), slog.String("capability_class", p.CapabilityClass),
		slog.String("channel", by.Channel), slog.String("sender", by.Sender),
		slog.Time("expires_at", p.ExpiresAt), slog.String("reason", r.Reason)); err != nil {
		return err
	}
	return g.cfg.Audit.Append(ctx, "extension.requested",
		slog.String("extension", m.Name), slog.String("id", p.Token), slog.String("capability", string(r.Capability)),
		slog.String("target", r.Target), slog.String("why", r.Why), slog.String("manifest", m.Source))
}

// ExtensionOf returns the extension a pending request asks a capability
// for, when it is an admission request rather than a command's.
func ExtensionOf(p approvals.Pending) (string, bool) {
	name := p.Details.Meta[metaExtension]
	return name, name != ""
}

// planExtension is the concession approving an extension's request
// records: a grant for the extension's identity on each access, forever
// or for dur. No ticket is issued: there is no command to rerun.
func planExtension(p approvals.Pending, name, territory string, dur time.Duration, now time.Time) (concession, error) {
	var c concession
	if territory == approvals.TerritorySession {
		return c, errors.New("an extension's grant cannot be limited to an agent session; approve without --remember, or limit it with --for")
	}
	if dur > 0 {
		t := now.Add(dur)
		c.expires = &t
	}
	for _, a := range p.Details.Accesses {
		spec, err := policy.Lookup(a.Capability)
		if err != nil {
			return c, err
		}
		if spec.DefaultApproval == policy.ApprovalAlways {
			return c, fmt.Errorf("%s is never a standing grant", a.Capability)
		}
		c.grants = append(c.grants, policy.GrantKey{Channel: ExtensionChannel, Sender: name, Capability: a.Capability, Target: a.Target})
	}
	if len(c.grants) == 0 {
		return c, errors.New("the extension request names no capability")
	}
	return c, nil
}

// selfGrantCheck judges a target the way the guard judges a command's
// argument: a path target is self-granting when it covers one of
// mnemos's own files, when the guard refuses `cat TARGET` or `touch
// TARGET`, or when, for DIR/**, the guard finds that `rm -r DIR` would
// change mnemos's own files; a code:exec target when the guard refuses
// the command it names (running mnemos's approving subcommands, touching
// forbidden paths).
func (g *Gate) selfGrantCheck() policy.SelfGrantCheck {
	guard := vaglio.Guard{Home: g.cfg.UserHome, Protected: g.cfg.Paths.Protected(), SelfNames: g.cfg.SelfNames}.Prepare()
	protected := g.cfg.Paths.Protected()
	word := func(s string) shellparse.Word {
		return shellparse.Word{Value: s, Dynamic: strings.ContainsAny(s, "*?[")}
	}
	because := func(target string, h vaglio.Hit) string {
		return fmt.Sprintf("%q reaches what the guard refuses (%s %s)", target, h.Check, h.Pattern)
	}
	return func(c classify.Capability, target string) (string, bool) {
		spec, err := policy.Lookup(c)
		if err != nil {
			return err.Error(), true
		}
		switch {
		case spec.TargetKind == "path_glob":
			for _, p := range protected {
				if policy.MatchTarget(target, p) {
					return fmt.Sprintf("%q covers mnemos's own %s", target, p), true
				}
			}
			for _, prog := range []string{"cat", "touch"} {
				cmd := shellparse.Command{Argv: []shellparse.Word{{Value: prog}, word(target)}}
				if h, ok := guard.Check(cmd, "/"); ok {
					return because(target, h), true
				}
			}
			if dir, ok := strings.CutSuffix(target, "/**"); ok && dir != "" {
				cmd := shellparse.Command{Argv: []shellparse.Word{{Value: "rm"}, {Value: "-r"}, word(dir)}}
				if h, ok := guard.Check(cmd, "/"); ok && h.Check == vaglio.CheckSelfTamper {
					return fmt.Sprintf("%q holds mnemos's own files", target), true
				}
			}
		case c == classify.CodeExec:
			script, err := shellparse.ParseScript(target, shellparse.Env{Home: g.cfg.UserHome, Cwd: "/", Vars: g.cfg.Vars})
			if err != nil {
				return "", false
			}
			for _, cmd := range script.Commands {
				if h, ok := guard.Check(cmd, "/"); ok {
					return because(target, h), true
				}
			}
		}
		return "", false
	}
}

// Extension is an extension known to mnemos: its grants and the requests
// still waiting for a person.
type Extension struct {
	Name    string                  `json:"name"`
	Grants  []approvals.GrantRecord `json:"grants"`
	Pending []approvals.Pending     `json:"pending"`
}

// Extensions lists extensions by name: those with active grants (every
// grant ever recorded with all) or open requests.
func (g *Gate) Extensions(ctx context.Context, all bool) ([]Extension, error) {
	st, err := g.Store(ctx)
	if err != nil {
		return nil, err
	}
	now := g.cfg.Now()
	grants, err := st.ListGrantRecords(ctx, approvals.GrantFilter{Channel: ExtensionChannel, IncludeRevoked: all}, now)
	if err != nil {
		return nil, &StateError{Path: g.cfg.Paths.DBFile, Err: err}
	}
	open, err := st.List(ctx, approvals.ListOptions{Limit: -1}, now)
	if err != nil {
		return nil, &StateError{Path: g.cfg.Paths.DBFile, Err: err}
	}
	by := map[string]*Extension{}
	get := func(name string) *Extension {
		if e, ok := by[name]; ok {
			return e
		}
		e := &Extension{Name: name, Grants: []approvals.GrantRecord{}, Pending: []approvals.Pending{}}
		by[name] = e
		return e
	}
	for i := len(grants) - 1; i >= 0; i-- { // oldest first
		get(grants[i].Sender).Grants = append(get(grants[i].Sender).Grants, grants[i])
	}
	for i := len(open) - 1; i >= 0; i-- {
		if name, ok := ExtensionOf(open[i]); ok {
			get(name).Pending = append(get(name).Pending, open[i])
		}
	}
	out := make([]Extension, 0, len(by))
	for _, e := range by {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// RevokedExtension is what revoking an extension ended.
type RevokedExtension struct {
	Extension string              `json:"extension"`
	Grants    []policy.Grant      `json:"grants"`
	Cancelled []string            `json:"cancelled"`
	Left      []approvals.Pending `json:"left,omitempty"`
}

// RevokeExtension revokes every active grant of an extension (recording
// grant.revoked for each), withdraws its open requests that by made
// (approval.cancelled), and records extension.revoked. Open requests
// someone else made are left, and reported. ok is false when there was
// nothing to end.
func (g *Gate) RevokeExtension(ctx context.Context, name string, by approvals.Identity) (RevokedExtension, bool, error) {
	out := RevokedExtension{Extension: name, Grants: []policy.Grant{}, Cancelled: []string{}}
	st, err := g.Store(ctx)
	if err != nil {
		return out, false, err
	}
	now := g.cfg.Now()
	grants, err := st.ListGrants(ctx, approvals.GrantFilter{Channel: ExtensionChannel, Sender: name}, now)
	if err != nil {
		return out, false, &StateError{Path: g.cfg.Paths.DBFile, Err: err}
	}
	sort.Slice(grants, func(i, j int) bool { return grants[i].ID < grants[j].ID })
	for _, gr := range grants {
		r, ok, err := g.RevokeGrant(ctx, gr.ID, by)
		if err != nil {
			return out, false, err
		}
		if ok {
			out.Grants = append(out.Grants, r)
		}
	}
	open, err := st.List(ctx, approvals.ListOptions{Limit: -1}, now)
	if err != nil {
		return out, false, &StateError{Path: g.cfg.Paths.DBFile, Err: err}
	}
	for i := len(open) - 1; i >= 0; i-- {
		p := open[i]
		if n, ok := ExtensionOf(p); !ok || n != name {
			continue
		}
		if p.Requester() != by {
			out.Left = append(out.Left, p)
			continue
		}
		if _, err := g.Cancel(ctx, p.Token, by, "extension "+name+" revoked"); err != nil {
			return out, false, err
		}
		out.Cancelled = append(out.Cancelled, p.Token)
	}
	if len(out.Grants) == 0 && len(out.Cancelled) == 0 {
		return out, false, nil
	}
	ids := make([]int64, len(out.Grants))
	for i, gr := range out.Grants {
		ids[i] = gr.ID
	}
	return out, true, g.cfg.Audit.Append(ctx, "extension.revoked",
		slog.String("extension", name), slog.Any("grants", ids), slog.Any("cancelled", out.Cancelled),
		slog.String("by", by.Channel+":"+by.Sender),
		slog.String("reason", fmt.Sprintf("%s: %d grants revoked, %d requests withdrawn", name, len(ids), len(out.Cancelled))))
}

// extensionDenied writes extension.denied for a request a person
// rejected.
func (g *Gate) extensionDenied(ctx context.Context, name string, p approvals.Pending, by approvals.Identity) error {
	var c classify.Capability
	var target string
	if len(p.Details.Accesses) > 0 {
		c, target = p.Details.Accesses[0].Capability, p.Details.Accesses[0].Target
	}
	return g.cfg.Audit.Append(ctx, "extension.denied",
		slog.String("extension", name), slog.String("id", p.Token), slog.String("capability", string(c)),
		slog.String("target", target), slog.String("class", "person"),
		slog.String("reason", "rejected by "+by.Channel+":"+by.Sender), slog.String("by", by.Channel+":"+by.Sender))
}
