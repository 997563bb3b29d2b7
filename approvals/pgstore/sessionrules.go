package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemos-dev/mnemos/approvals"
)

const sessionRuleColumns = `id, channel, sender_id, argv_prefix, exact, pin, session, granted_at,
	expires_at, granted_by, approval, revoked_at`

func scanSessionRule(r pgx.Row) (approvals.SessionRule, error) {
	var (
		sr           approvals.SessionRule
		prefix       string
		by, approval *string
		revoked      *time.Time
	)
	if err := r.Scan(&sr.ID, &sr.Channel, &sr.Sender, &prefix, &sr.Exact, &sr.Pin, &sr.Session, &sr.GrantedAt,
		&sr.ExpiresAt, &by, &approval, &revoked); err != nil {
		return approvals.SessionRule{}, err
	}
	sr.Kind = approvals.SessionRuleKind
	if err := json.Unmarshal([]byte(prefix), &sr.ArgvPrefix); err != nil {
		return approvals.SessionRule{}, fmt.Errorf("bad argv_prefix of session rule %d: %w", sr.ID, err)
	}
	sr.GrantedAt, sr.ExpiresAt, sr.RevokedAt = utc(sr.GrantedAt), utc(sr.ExpiresAt), utcp(revoked)
	sr.GrantedBy, sr.Approval = str(by), str(approval)
	return sr, nil
}

func collectSessionRules(rows pgx.Rows) ([]approvals.SessionRule, error) {
	defer rows.Close()
	var out []approvals.SessionRule
	for rows.Next() {
		sr, err := scanSessionRule(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sr)
	}
	return out, rows.Err()
}

// RecordSessionRule records a session rule on the host of its session:
// the host that parked the request whose approval made it (approved on
// another host, the rule must reach the waiting run where it was asked),
// else this host. It refuses what the SQLite store refuses.
func (s *Store) RecordSessionRule(ctx context.Context, r approvals.SessionRule, now time.Time) (approvals.SessionRule, error) {
	switch {
	case r.Channel == "" || r.Sender == "":
		return approvals.SessionRule{}, errors.New("record session rule: channel and sender are required")
	case len(r.ArgvPrefix) == 0 || slices.Contains(r.ArgvPrefix, ""):
		return approvals.SessionRule{}, errors.New("record session rule: empty prefix or prefix word")
	case r.Pin == "":
		return approvals.SessionRule{}, errors.New("record session rule: no pin: what the command runs besides its words is not bound")
	case !r.ExpiresAt.After(now):
		return approvals.SessionRule{}, fmt.Errorf("record session rule: expiry %s is not after now", r.ExpiresAt.UTC().Format(time.RFC3339))
	case r.ExpiresAt.After(now.Add(approvals.MaxSessionRuleLife)):
		return approvals.SessionRule{}, fmt.Errorf("record session rule: expiry %s is more than %v away", r.ExpiresAt.UTC().Format(time.RFC3339), approvals.MaxSessionRuleLife)
	}
	prefix, err := json.Marshal(r.ArgvPrefix)
	if err != nil {
		return approvals.SessionRule{}, fmt.Errorf("record session rule: %w", err)
	}
	out, err := scanSessionRule(s.pool.QueryRow(ctx, `INSERT INTO session_rules (host, channel, sender_id, argv_prefix,
		exact, pin, session, granted_at, expires_at, granted_by, approval)
		VALUES (COALESCE((SELECT host FROM pending WHERE token = $11), $1), $2, $3, $4, $5, $6, $7, `+at(8)+`, `+at(9)+`, $10, $11)
		RETURNING `+sessionRuleColumns,
		s.host, r.Channel, r.Sender, string(prefix), r.Exact, r.Pin, r.Session, s.off(now), s.off(r.ExpiresAt),
		nullStr(r.GrantedBy), nullStr(normToken(r.Approval))))
	if err != nil {
		return approvals.SessionRule{}, fmt.Errorf("record session rule: %w", err)
	}
	return out, nil
}

// ActiveSessionRules returns this host's session rules that may apply,
// oldest first: an agent session lives on one machine.
func (s *Store) ActiveSessionRules(ctx context.Context, channel, sender, session string, now time.Time) ([]approvals.SessionRule, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+sessionRuleColumns+` FROM session_rules
		WHERE host = $1 AND channel = $2 AND sender_id = $3 AND revoked_at IS NULL AND expires_at > `+at(4)+`
		  AND (session = '' OR session = $5) ORDER BY id`, s.host, channel, sender, s.off(now), session)
	if err != nil {
		return nil, fmt.Errorf("session rules: %w", err)
	}
	out, err := collectSessionRules(rows)
	if err != nil {
		return nil, fmt.Errorf("session rules: %w", err)
	}
	return out, nil
}

// ListSessionRules returns this host's session rules, newest first.
func (s *Store) ListSessionRules(ctx context.Context, f approvals.GrantFilter, now time.Time) ([]approvals.SessionRule, error) {
	q := `SELECT ` + sessionRuleColumns + ` FROM session_rules WHERE host = $1`
	args := []any{s.host}
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
		q += ` AND revoked_at IS NULL AND expires_at > ` + at(len(args))
	}
	q += ` ORDER BY granted_at DESC, id DESC`
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list session rules: %w", err)
	}
	out, err := collectSessionRules(rows)
	if err != nil {
		return nil, fmt.Errorf("list session rules: %w", err)
	}
	return out, nil
}

// RevokeSessionRule ends a session rule.
func (s *Store) RevokeSessionRule(ctx context.Context, id int64, now time.Time) (approvals.SessionRule, bool, error) {
	sr, err := scanSessionRule(s.pool.QueryRow(ctx, `UPDATE session_rules SET revoked_at = `+at(1)+`
		WHERE id = $2 AND revoked_at IS NULL RETURNING `+sessionRuleColumns, s.off(now), id))
	if errors.Is(err, pgx.ErrNoRows) {
		return approvals.SessionRule{}, false, nil
	}
	if err != nil {
		return approvals.SessionRule{}, false, fmt.Errorf("revoke session rule: %w", err)
	}
	return sr, true, nil
}
