package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
)

// lastUsedGranularity is how stale a grant's last_used may be before a
// covering lookup refreshes it (as the SQLite store does).
const lastUsedGranularity = time.Hour

const grantColumns = `id, channel, sender_id, capability, target, granted_at, expires_at,
	granted_by, revoked_at, session, approval, max_uses, uses, last_used, revoke_reason`

// activeGrant is the SQL condition for a grant that can still cover a
// request at the server time in parameter n.
func activeGrant(n int) string {
	return `(revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ` + at(n) + `)
	AND (max_uses = 0 OR uses < max_uses))`
}

func scanGrant(r pgx.Row, extra ...any) (approvals.GrantRecord, error) {
	var (
		g                    approvals.GrantRecord
		capName              string
		expires, revoked, lu *time.Time
		by, app, reason      *string
	)
	dest := []any{&g.ID, &g.Channel, &g.Sender, &capName, &g.Target, &g.GrantedAt, &expires,
		&by, &revoked, &g.Session, &app, &g.MaxUses, &g.Uses, &lu, &reason}
	if err := r.Scan(append(dest, extra...)...); err != nil {
		return approvals.GrantRecord{}, err
	}
	g.Capability = classify.Capability(capName)
	g.GrantedAt, g.ExpiresAt, g.RevokedAt, g.LastUsed = utc(g.GrantedAt), utcp(expires), utcp(revoked), utcp(lu)
	g.GrantedBy, g.Approval, g.RevokeReason = str(by), str(app), str(reason)
	return g, nil
}

func collectGrants(rows pgx.Rows) ([]approvals.GrantRecord, error) {
	defer rows.Close()
	var out []approvals.GrantRecord
	for rows.Next() {
		g, err := scanGrant(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

func plainGrants(rs []approvals.GrantRecord) []policy.Grant {
	if rs == nil {
		return nil
	}
	out := make([]policy.Grant, len(rs))
	for i, r := range rs {
		out[i] = r.Grant
	}
	return out
}

// RecordGrant records a territory concession, refusing what the SQLite
// store refuses (see approvals.Store.RecordGrant). The grant follows its
// identity to every host.
func (s *Store) RecordGrant(ctx context.Context, k policy.GrantKey, o approvals.GrantOptions, now time.Time) (policy.Grant, error) {
	spec, err := policy.Lookup(k.Capability)
	if err != nil {
		return policy.Grant{}, fmt.Errorf("record grant: %w", err)
	}
	switch {
	case spec.DefaultApproval == policy.ApprovalAlways:
		return policy.Grant{}, fmt.Errorf("record grant for %s: %w", k.Capability, approvals.ErrAlwaysCapability)
	case k.Channel == "" || k.Sender == "":
		return policy.Grant{}, errors.New("record grant: channel and sender are required")
	case strings.TrimSpace(k.Target) == "":
		return policy.Grant{}, errors.New("record grant: empty target")
	case policy.CoversEverything(k.Target):
		return policy.Grant{}, fmt.Errorf("record grant: %w: %q", approvals.ErrTargetTooBroad, k.Target)
	case o.ExpiresAt != nil && !o.ExpiresAt.After(now):
		return policy.Grant{}, fmt.Errorf("record grant: expiry %s is not after now", o.ExpiresAt.UTC().Format(time.RFC3339Nano))
	case o.MaxUses < 0:
		return policy.Grant{}, fmt.Errorf("record grant: negative max uses %d", o.MaxUses)
	}
	var expOff *float64
	if o.ExpiresAt != nil {
		e := s.off(*o.ExpiresAt)
		expOff = &e
	}
	g, err := scanGrant(s.pool.QueryRow(ctx, `INSERT INTO grants (host, channel, sender_id, capability, target,
		granted_at, expires_at, granted_by, session, approval, max_uses)
		VALUES ($1, $2, $3, $4, $5, `+at(6)+`, `+at(7)+`, $8, $9, $10, $11)
		RETURNING `+grantColumns,
		s.host, k.Channel, k.Sender, string(k.Capability), k.Target, s.off(now), expOff,
		nullStr(o.GrantedBy), o.Session, nullStr(normToken(o.Approval)), o.MaxUses))
	if err != nil {
		return policy.Grant{}, fmt.Errorf("record grant: %w", err)
	}
	return g.Grant, nil
}

// CoveringGrant implements policy.GrantChecker on the server's clock: the
// oldest active grant of (channel, sender, capability) whose target
// matches, limited to session when it names one. It spends nothing.
func (s *Store) CoveringGrant(ctx context.Context, channel, sender string, c classify.Capability, target, session string, now time.Time) (policy.Grant, bool, error) {
	spec, err := policy.Lookup(c)
	if err != nil {
		return policy.Grant{}, false, fmt.Errorf("covering grant: %w", err)
	}
	if spec.DefaultApproval == policy.ApprovalAlways || channel == "" || sender == "" || target == "" {
		return policy.Grant{}, false, nil
	}
	off := s.off(now)
	rows, err := s.pool.Query(ctx, `SELECT `+grantColumns+`,
		last_used IS NULL OR last_used < `+at(1)+` - interval '1 hour'
		FROM grants
		WHERE channel = $2 AND sender_id = $3 AND capability = $4 AND `+activeGrant(1)+`
		  AND (session = '' OR session = $5)
		ORDER BY id`, off, channel, sender, string(c), session)
	if err != nil {
		return policy.Grant{}, false, fmt.Errorf("covering grant: %w", err)
	}
	var (
		found, stale bool
		g            approvals.GrantRecord
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
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
	if err != nil {
		return policy.Grant{}, false, fmt.Errorf("covering grant: %w", err)
	}
	if !found {
		return policy.Grant{}, false, nil
	}
	if stale {
		if _, err := s.pool.Exec(ctx, `UPDATE grants SET last_used = `+at(1)+`, last_host = $2 WHERE id = $3`, off, s.host, g.ID); err != nil {
			return policy.Grant{}, false, fmt.Errorf("covering grant: %w", err)
		}
	}
	return g.Grant, true, nil
}

// SpendGrant counts one use of grant id in one conditional UPDATE: of
// any number of concurrent spenders on any hosts, exactly max_uses
// succeed.
func (s *Store) SpendGrant(ctx context.Context, id int64, now time.Time) (approvals.GrantRecord, bool, error) {
	g, err := scanGrant(s.pool.QueryRow(ctx, `UPDATE grants SET uses = uses + 1, last_used = `+at(1)+`, last_host = $2
		WHERE id = $3 AND `+activeGrant(1)+`
		RETURNING `+grantColumns, s.off(now), s.host, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return approvals.GrantRecord{}, false, nil
	}
	if err != nil {
		return approvals.GrantRecord{}, false, fmt.Errorf("spend grant %d: %w", id, err)
	}
	return g, true, nil
}

// ListGrants returns grants newest first.
func (s *Store) ListGrants(ctx context.Context, f approvals.GrantFilter, now time.Time) ([]policy.Grant, error) {
	rs, err := s.ListGrantRecords(ctx, f, now)
	return plainGrants(rs), err
}

// ListGrantRecords is ListGrants with each grant's bookkeeping.
func (s *Store) ListGrantRecords(ctx context.Context, f approvals.GrantFilter, now time.Time) ([]approvals.GrantRecord, error) {
	q := `SELECT ` + grantColumns + ` FROM grants WHERE true`
	args := []any{}
	if f.Channel != "" {
		args = append(args, f.Channel)
		q += fmt.Sprintf(` AND channel = $%d`, len(args))
	}
	if f.Sender != "" {
		args = append(args, f.Sender)
		q += fmt.Sprintf(` AND sender_id = $%d`, len(args))
	}
	if !f.IncludeRevoked {
		args = append(args, s.off(now))
		q += ` AND ` + activeGrant(len(args))
	}
	q += ` ORDER BY granted_at DESC, id DESC`
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	out, err := collectGrants(rows)
	if err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	return out, nil
}

// RevokeGrant revokes a grant on every host.
func (s *Store) RevokeGrant(ctx context.Context, id int64, now time.Time) (policy.Grant, bool, error) {
	g, err := scanGrant(s.pool.QueryRow(ctx, `UPDATE grants SET revoked_at = `+at(1)+`, revoke_reason = $2, revoked_host = $3
		WHERE id = $4 AND revoked_at IS NULL RETURNING `+grantColumns, s.off(now), approvals.RevokeReasonRevoked, s.host, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return policy.Grant{}, false, nil
	}
	if err != nil {
		return policy.Grant{}, false, fmt.Errorf("revoke grant: %w", err)
	}
	return g.Grant, true, nil
}

// PruneGrants revokes, as stale, every active grant unused for unusedFor.
func (s *Store) PruneGrants(ctx context.Context, unusedFor time.Duration, now time.Time) ([]policy.Grant, error) {
	if unusedFor <= 0 {
		return nil, fmt.Errorf("prune grants: unused-for %v is not positive", unusedFor)
	}
	rows, err := s.pool.Query(ctx, `UPDATE grants SET revoked_at = `+at(1)+`, revoke_reason = $2, revoked_host = $3
		WHERE `+activeGrant(1)+` AND COALESCE(last_used, granted_at) < `+at(1)+` - $4::float8 * interval '1 microsecond'
		RETURNING `+grantColumns, s.off(now), approvals.RevokeReasonStale, s.host, float64(unusedFor.Microseconds()))
	if err != nil {
		return nil, fmt.Errorf("prune grants: %w", err)
	}
	out, err := collectGrants(rows)
	if err != nil {
		return nil, fmt.Errorf("prune grants: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return plainGrants(out), nil
}
