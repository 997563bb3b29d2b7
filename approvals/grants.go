package approvals

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/classify"
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

// Revoke reasons, kept in grants.revoke_reason.
const (
	// RevokeReasonRevoked: a person revoked the grant (RevokeGrant).
	RevokeReasonRevoked = "revoked"
	// RevokeReasonStale: PruneGrants revoked it for going unused.
	RevokeReasonStale = "stale"
)

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
	// MaxUses, when positive, is how many times the grant may be spent
	// (SpendGrant); 0 means unlimited. A policy rule's scope_template
	// max_uses ends up here.
	MaxUses int
}

// GrantRecord is a grant with the bookkeeping the store keeps beside it.
type GrantRecord struct {
	policy.Grant
	// MaxUses is how many spends the grant allows; 0 means unlimited.
	MaxUses int `json:"max_uses"`
	// Uses is how many times it has been spent.
	Uses int `json:"uses"`
	// LastUsed is when it was last spent (or, at hourly granularity,
	// found covering); nil when never.
	LastUsed *time.Time `json:"last_used,omitempty"`
	// RevokeReason is RevokeReasonRevoked or RevokeReasonStale when the
	// grant is revoked, empty otherwise.
	RevokeReason string `json:"revoke_reason,omitempty"`
}

// Exhausted reports whether every use the grant allows has been spent.
func (r GrantRecord) Exhausted() bool { return r.MaxUses > 0 && r.Uses >= r.MaxUses }

// GrantFilter selects what ListGrants returns. Empty fields match all.
type GrantFilter struct {
	Channel string
	Sender  string
	// IncludeRevoked also lists revoked, expired and exhausted grants.
	IncludeRevoked bool
}

const grantColumns = `id, channel, sender_id, capability, target, granted_at, expires_at,
	granted_by, revoked_at, session, approval, max_uses, uses, last_used, revoke_reason`

// activeGrant is the SQL condition for a grant that can still cover a
// request: not revoked, not expired at the time bound to its one
// parameter, not exhausted.
const activeGrant = `(revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)
	AND (max_uses = 0 OR uses < max_uses))`

func scanGrant(r scanner, extra ...any) (GrantRecord, error) {
	var (
		g                         GrantRecord
		capName, granted          string
		expires, by, revoked, app sql.NullString
		lastUsed, reason          sql.NullString
	)
	dest := []any{&g.ID, &g.Channel, &g.Sender, &capName, &g.Target, &granted, &expires,
		&by, &revoked, &g.Session, &app, &g.MaxUses, &g.Uses, &lastUsed, &reason}
	if err := r.Scan(append(dest, extra...)...); err != nil {
		return GrantRecord{}, err
	}
	g.Capability = classify.Capability(capName)
	var err error
	if g.GrantedAt, err = parseTime(granted); err != nil {
		return GrantRecord{}, err
	}
	if g.ExpiresAt, err = parseNullTime(expires); err != nil {
		return GrantRecord{}, err
	}
	if g.RevokedAt, err = parseNullTime(revoked); err != nil {
		return GrantRecord{}, err
	}
	if g.LastUsed, err = parseNullTime(lastUsed); err != nil {
		return GrantRecord{}, err
	}
	g.GrantedBy, g.Approval, g.RevokeReason = by.String, app.String, reason.String
	return g, nil
}

// scanGrants collects the rows of a grant query.
func scanGrants(rows *sql.Rows) ([]GrantRecord, error) {
	return scanRows(rows, func(r scanner) (GrantRecord, error) { return scanGrant(r) })
}

func plainGrants(rs []GrantRecord) []policy.Grant {
	if rs == nil {
		return nil
	}
	out := make([]policy.Grant, len(rs))
	for i, r := range rs {
		out[i] = r.Grant
	}
	return out
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// RecordGrant records a territory concession. It refuses a capability
// outside the registry (policy.ErrUnknownCapability), one whose default
// approval is always (ErrAlwaysCapability), an empty identity or target,
// a target that covers everything (ErrTargetTooBroad), an expiry that is
// not after now, and a negative MaxUses.
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
	case policy.CoversEverything(k.Target):
		return policy.Grant{}, fmt.Errorf("record grant: %w: %q", ErrTargetTooBroad, k.Target)
	case o.ExpiresAt != nil && !o.ExpiresAt.After(now):
		return policy.Grant{}, fmt.Errorf("record grant: expiry %s is not after now", formatTime(*o.ExpiresAt))
	case o.MaxUses < 0:
		return policy.Grant{}, fmt.Errorf("record grant: negative max uses %d", o.MaxUses)
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
		granted_at, expires_at, granted_by, session, approval, max_uses)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		k.Channel, k.Sender, string(k.Capability), k.Target, formatTime(g.GrantedAt), expires,
		nullString(o.GrantedBy), o.Session, nullString(g.Approval), o.MaxUses).Scan(&g.ID)
	if err != nil {
		return policy.Grant{}, fmt.Errorf("record grant: %w", err)
	}
	return g, nil
}

// CoveringGrant implements policy.GrantChecker. Revocation, expiry and
// exhaustion (uses reaching max_uses) are compared in SQL at query time;
// targets are matched with policy.MatchTarget over the candidates for
// (channel, sender, capability); a grant limited to a session matches only
// that session; of several matches the oldest is returned. Its last_used is
// refreshed when older than an hour. Capabilities marked always are never
// covered, whatever the table holds.
//
// CoveringGrant only looks: it spends nothing. A caller that lets a
// request through on the strength of a grant spends it with SpendGrant,
// which is what enforces max_uses under concurrency.
func (s *Store) CoveringGrant(ctx context.Context, channel, sender string, c classify.Capability, target, session string, now time.Time) (policy.Grant, bool, error) {
	spec, err := policy.Lookup(c)
	if err != nil {
		return policy.Grant{}, false, fmt.Errorf("covering grant: %w", err)
	}
	if spec.DefaultApproval == policy.ApprovalAlways || channel == "" || sender == "" || target == "" {
		return policy.Grant{}, false, nil
	}
	n := formatTime(now)
	rows, err := s.db.QueryContext(ctx, `SELECT `+grantColumns+`, last_used < ? OR last_used IS NULL FROM grants
		WHERE channel = ? AND sender_id = ? AND capability = ? AND `+activeGrant+`
		  AND (session = '' OR session = ?)
		ORDER BY id`, formatTime(now.Add(-lastUsedGranularity)), channel, sender, string(c), n, session)
	if err != nil {
		return policy.Grant{}, false, fmt.Errorf("covering grant: %w", err)
	}
	var (
		found, stale bool
		g            GrantRecord
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
	// lastUsedGranularity: the usual lookup writes nothing. SpendGrant
	// stamps it exactly.
	if stale {
		if _, err := s.db.ExecContext(ctx, `UPDATE grants SET last_used = ? WHERE id = ?`, n, g.ID); err != nil {
			return policy.Grant{}, false, fmt.Errorf("covering grant: %w", err)
		}
	}
	return g.Grant, true, nil
}

// SpendGrant records one use of grant id at now, in one conditional
// UPDATE: it counts the use and stamps last_used only while the grant is
// not revoked, not expired and has uses left. Of any number of concurrent
// callers (goroutines or processes) on a grant with max_uses n, exactly n
// get ok. ok is false, with no error, when the grant is unknown, revoked,
// expired or exhausted; the caller then treats the request as not covered.
// It returns the grant as it stands after the use.
func (s *Store) SpendGrant(ctx context.Context, id int64, now time.Time) (GrantRecord, bool, error) {
	n := formatTime(now)
	g, err := scanGrant(s.db.QueryRowContext(ctx, `UPDATE grants SET uses = uses + 1, last_used = ?
		WHERE id = ? AND `+activeGrant+`
		RETURNING `+grantColumns, n, id, n))
	if errors.Is(err, sql.ErrNoRows) {
		return GrantRecord{}, false, nil
	}
	if err != nil {
		return GrantRecord{}, false, fmt.Errorf("spend grant %d: %w", id, err)
	}
	return g, true, nil
}

// ListGrants returns grants newest first: by default only active ones (not
// revoked, not expired at now, not exhausted).
func (s *Store) ListGrants(ctx context.Context, f GrantFilter, now time.Time) ([]policy.Grant, error) {
	rs, err := s.ListGrantRecords(ctx, f, now)
	return plainGrants(rs), err
}

// ListGrantRecords is ListGrants with each grant's uses, last use and
// revoke reason.
func (s *Store) ListGrantRecords(ctx context.Context, f GrantFilter, now time.Time) ([]GrantRecord, error) {
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
		q += ` AND ` + activeGrant
		args = append(args, formatTime(now))
	}
	q += ` ORDER BY granted_at DESC, id DESC`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	out, err := scanGrants(rows)
	if err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	return out, nil
}

// RevokeGrant revokes a grant, with reason RevokeReasonRevoked, and
// returns it; ok is false when no grant has this id or it was already
// revoked.
func (s *Store) RevokeGrant(ctx context.Context, id int64, now time.Time) (policy.Grant, bool, error) {
	g, err := scanGrant(s.db.QueryRowContext(ctx, `UPDATE grants SET revoked_at = ?, revoke_reason = ?
		WHERE id = ? AND revoked_at IS NULL RETURNING `+grantColumns, formatTime(now), RevokeReasonRevoked, id))
	if errors.Is(err, sql.ErrNoRows) {
		return policy.Grant{}, false, nil
	}
	if err != nil {
		return policy.Grant{}, false, fmt.Errorf("revoke grant: %w", err)
	}
	return g.Grant, true, nil
}

// PruneGrants revokes, with reason RevokeReasonStale, every active grant
// (not revoked, not expired, not exhausted) whose last use, or its
// granting when it was never used, is before now-unusedFor, in one
// UPDATE. It returns the revoked grants in id order, so the caller can
// record grant.revoked for each. unusedFor must be positive.
func (s *Store) PruneGrants(ctx context.Context, unusedFor time.Duration, now time.Time) ([]policy.Grant, error) {
	if unusedFor <= 0 {
		return nil, fmt.Errorf("prune grants: unused-for %v is not positive", unusedFor)
	}
	n := formatTime(now)
	rows, err := s.db.QueryContext(ctx, `UPDATE grants SET revoked_at = ?, revoke_reason = ?
		WHERE `+activeGrant+` AND COALESCE(last_used, granted_at) < ?
		RETURNING `+grantColumns, n, RevokeReasonStale, n, formatTime(now.Add(-unusedFor)))
	if err != nil {
		return nil, fmt.Errorf("prune grants: %w", err)
	}
	out, err := scanGrants(rows)
	if err != nil {
		return nil, fmt.Errorf("prune grants: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return plainGrants(out), nil
}
