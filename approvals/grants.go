package approvals

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/policy"
)

// Errors RecordGrant returns for grants it refuses to record.
var (
	// ErrAlwaysCapability: no grant is ever created for a capability whose
	// default approval is always (code:exec, mail:send).
	ErrAlwaysCapability = errors.New("no grant is ever created for capabilities marked always")
	// ErrTargetTooBroad: the target would cover everything ("/", "/**",
	// "*", "**", "/*/**", ...).
	ErrTargetTooBroad = errors.New("grant target too broad")
)

var _ policy.GrantChecker = (*Store)(nil)

// lastUsedGranularity is how stale a grant's last_used may be before a
// covering lookup refreshes it.
const lastUsedGranularity = time.Hour

// GrantOptions qualify a grant.
type GrantOptions struct {
	// ExpiresAt, when set, ends the grant; it must be after now.
	ExpiresAt *time.Time
	// GrantedBy says who conceded it (free text, e.g. "cli:alice").
	GrantedBy string
	// Session, when set, limits the grant to one agent session.
	Session string
	// Approval is the token of the approval the grant came from, if any.
	Approval string
}

// GrantFilter selects what ListGrants returns. Empty fields match all.
type GrantFilter struct {
	Channel string
	Sender  string
	// IncludeRevoked also lists revoked and expired grants.
	IncludeRevoked bool
}

const grantColumns = `id, channel, sender_id, capability, target, granted_at, expires_at,
	granted_by, revoked_at, session, approval`

func scanGrant(r scanner, extra ...any) (policy.Grant, error) {
	var (
		g                         policy.Grant
		capName, granted          string
		expires, by, revoked, app sql.NullString
	)
	dest := []any{&g.ID, &g.Channel, &g.Sender, &capName, &g.Target, &granted, &expires,
		&by, &revoked, &g.Session, &app}
	if err := r.Scan(append(dest, extra...)...); err != nil {
		return policy.Grant{}, err
	}
	g.Capability = policy.Capability(capName)
	var err error
	if g.GrantedAt, err = parseTime(granted); err != nil {
		return policy.Grant{}, err
	}
	if g.ExpiresAt, err = parseNullTime(expires); err != nil {
		return policy.Grant{}, err
	}
	if g.RevokedAt, err = parseNullTime(revoked); err != nil {
		return policy.Grant{}, err
	}
	g.GrantedBy, g.Approval = by.String, app.String
	return g, nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// tooBroad reports whether a target pattern would cover everything: once
// trailing "/**" and "/" are removed, nothing is left but wildcards and
// slashes.
func tooBroad(target string) bool {
	t := target
	for {
		if u, ok := strings.CutSuffix(t, "/**"); ok {
			t = u
			continue
		}
		if u, ok := strings.CutSuffix(t, "/"); ok {
			t = u
			continue
		}
		break
	}
	return strings.Trim(t, "/*?") == ""
}

// RecordGrant records a territory concession. It refuses a capability
// outside the registry (policy.ErrUnknownCapability), one whose default
// approval is always (ErrAlwaysCapability), an empty identity or target,
// a target that covers everything (ErrTargetTooBroad), and an expiry that
// is not after now.
func (s *Store) RecordGrant(ctx context.Context, k policy.GrantKey, o GrantOptions, now time.Time) (policy.Grant, error) {
	spec, err := policy.Lookup(k.Capability)
	if err != nil {
		return policy.Grant{}, fmt.Errorf("record grant: %w", err)
	}
	switch {
	case spec.DefaultApproval == policy.ApprovalAlways:
		return policy.Grant{}, fmt.Errorf("record grant for %s: %w", k.Capability, ErrAlwaysCapability)
	case k.Channel == "" || k.Sender == "":
		return policy.Grant{}, errors.New("record grant: channel and sender are required")
	case strings.TrimSpace(k.Target) == "":
		return policy.Grant{}, errors.New("record grant: empty target")
	case tooBroad(k.Target):
		return policy.Grant{}, fmt.Errorf("record grant: %w: %q", ErrTargetTooBroad, k.Target)
	case o.ExpiresAt != nil && !o.ExpiresAt.After(now):
		return policy.Grant{}, fmt.Errorf("record grant: expiry %s is not after now", formatTime(*o.ExpiresAt))
	}
	g := policy.Grant{
		GrantKey:  k,
		GrantedAt: now.UTC(),
		GrantedBy: o.GrantedBy,
		Session:   o.Session,
		Approval:  normToken(o.Approval),
	}
	var expires any
	if o.ExpiresAt != nil {
		e := o.ExpiresAt.UTC()
		g.ExpiresAt = &e
		expires = formatTime(e)
	}
	err = s.db.QueryRowContext(ctx, `INSERT INTO grants (channel, sender_id, capability, target,
		granted_at, expires_at, granted_by, session, approval)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		k.Channel, k.Sender, string(k.Capability), k.Target, formatTime(g.GrantedAt), expires,
		nullString(o.GrantedBy), o.Session, nullString(g.Approval)).Scan(&g.ID)
	if err != nil {
		return policy.Grant{}, fmt.Errorf("record grant: %w", err)
	}
	return g, nil
}

// CoveringGrant implements policy.GrantChecker. Revocation and expiry are
// compared in SQL at query time; targets are matched with
// policy.MatchTarget over the candidates for (channel, sender, capability);
// a grant limited to a session matches only that session; of several
// matches the oldest is returned. Its last_used is refreshed when older
// than an hour. Capabilities marked always are never covered, whatever the
// table holds.
func (s *Store) CoveringGrant(ctx context.Context, channel, sender string, c policy.Capability, target, session string, now time.Time) (policy.Grant, bool, error) {
	spec, err := policy.Lookup(c)
	if err != nil {
		return policy.Grant{}, false, fmt.Errorf("covering grant: %w", err)
	}
	if spec.DefaultApproval == policy.ApprovalAlways || channel == "" || sender == "" || target == "" {
		return policy.Grant{}, false, nil
	}
	n := formatTime(now)
	rows, err := s.db.QueryContext(ctx, `SELECT `+grantColumns+`, last_used < ? OR last_used IS NULL FROM grants
		WHERE channel = ? AND sender_id = ? AND capability = ?
		  AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)
		  AND (session = '' OR session = ?)
		ORDER BY id`, formatTime(now.Add(-lastUsedGranularity)), channel, sender, string(c), n, session)
	if err != nil {
		return policy.Grant{}, false, fmt.Errorf("covering grant: %w", err)
	}
	var (
		found, stale bool
		g            policy.Grant
	)
	for rows.Next() {
		if g, err = scanGrant(rows, &stale); err != nil {
			break
		}
		if policy.MatchTarget(g.Target, target) {
			found = true
			break
		}
	}
	if err == nil {
		err = rows.Err()
	}
	rows.Close()
	if err != nil {
		return policy.Grant{}, false, fmt.Errorf("covering grant: %w", err)
	}
	if !found {
		return policy.Grant{}, false, nil
	}
	// Stamp last_used, for pruning stale grants, at most once per
	// lastUsedGranularity: the usual lookup writes nothing.
	if stale {
		if _, err := s.db.ExecContext(ctx, `UPDATE grants SET last_used = ? WHERE id = ?`, n, g.ID); err != nil {
			return policy.Grant{}, false, fmt.Errorf("covering grant: %w", err)
		}
	}
	return g, true, nil
}

// ListGrants returns grants newest first: by default only active ones (not
// revoked, not expired at now).
func (s *Store) ListGrants(ctx context.Context, f GrantFilter, now time.Time) ([]policy.Grant, error) {
	q := `SELECT ` + grantColumns + ` FROM grants WHERE 1 = 1`
	var args []any
	if f.Channel != "" {
		q += ` AND channel = ?`
		args = append(args, f.Channel)
	}
	if f.Sender != "" {
		q += ` AND sender_id = ?`
		args = append(args, f.Sender)
	}
	if !f.IncludeRevoked {
		q += ` AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)`
		args = append(args, formatTime(now))
	}
	q += ` ORDER BY granted_at DESC, id DESC`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	defer rows.Close()
	var out []policy.Grant
	for rows.Next() {
		g, err := scanGrant(rows)
		if err != nil {
			return nil, fmt.Errorf("list grants: %w", err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	return out, nil
}

// RevokeGrant revokes a grant and returns it; ok is false when no grant
// has this id or it was already revoked.
func (s *Store) RevokeGrant(ctx context.Context, id int64, now time.Time) (policy.Grant, bool, error) {
	g, err := scanGrant(s.db.QueryRowContext(ctx, `UPDATE grants SET revoked_at = ?
		WHERE id = ? AND revoked_at IS NULL RETURNING `+grantColumns, formatTime(now), id))
	if errors.Is(err, sql.ErrNoRows) {
		return policy.Grant{}, false, nil
	}
	if err != nil {
		return policy.Grant{}, false, fmt.Errorf("revoke grant: %w", err)
	}
	return g, true, nil
}
