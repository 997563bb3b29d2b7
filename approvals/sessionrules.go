package approvals

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A session rule is the "don't ask again" a person gives a command whose
// capability never takes a standing grant (code:exec, mail:send) for one
// agent session only (approve --remember session): an allow rule for a
// command prefix, pinned like a rule remembered in the policy file, kept
// here rather than in the policy so that it cannot outlive the session.
// It is limited to the request's session (or, when the request named
// none, to any session of the same identity), and it always ends: the
// store refuses one that would last longer than MaxSessionRuleLife. The
// gate consults it as it would a rule at the end of the policy, only
// for a command the table would ask about; `grants list` lists it and
// `grants revoke rN` ends it.

// MaxSessionRuleLife bounds a session rule's life, session or not: mnemos
// does not see a session end, so a rule never outlasts a working day.
const MaxSessionRuleLife = 12 * time.Hour

// SessionRuleKind is SessionRule.Kind, which tells a session rule from a
// grant where both are listed.
const SessionRuleKind = "session_rule"

// SessionRule is an allow rule for a command prefix limited to an agent
// session and a time.
type SessionRule struct {
	Kind       string   `json:"kind"`
	ID         int64    `json:"id"`
	Channel    string   `json:"channel"`
	Sender     string   `json:"sender"`
	ArgvPrefix []string `json:"argv_prefix"`
	// Exact limits the rule to the prefix's words and no more (a bare
	// make, not every make command).
	Exact bool `json:"exact,omitempty"`
	// Pin binds the rule to the program, script and environment the
	// approved command ran with (policy.Rule.Pin).
	Pin       string     `json:"pin"`
	Session   string     `json:"session,omitempty"`
	GrantedAt time.Time  `json:"granted_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	GrantedBy string     `json:"granted_by,omitempty"`
	Approval  string     `json:"approval,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// Label is how a person refers to a session rule: "r" and its id.
func (r SessionRule) Label() string { return fmt.Sprintf("r%d", r.ID) }

// ParseSessionRuleLabel reads "rN" (or "RN"), as Label writes it.
func ParseSessionRuleLabel(s string) (int64, bool) {
	n, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(s)), "r")
	if !ok || n == "" {
		return 0, false
	}
	var id int64
	for _, c := range n {
		if c < '0' || c > '9' || id > (1<<62)/10 {
			return 0, false
		}
		id = id*10 + int64(c-'0')
	}
	return id, id > 0
}

const sessionRuleColumns = `id, channel, sender_id, argv_prefix, exact, pin, session, granted_at,
	expires_at, granted_by, approval, revoked_at`

func scanSessionRule(r scanner) (SessionRule, error) {
	var (
		sr                    SessionRule
		prefix, granted, exp  string
		by, approval, revoked sql.NullString
	)
	if err := r.Scan(&sr.ID, &sr.Channel, &sr.Sender, &prefix, &sr.Exact, &sr.Pin, &sr.Session, &granted,
		&exp, &by, &approval, &revoked); err != nil {
		return SessionRule{}, err
	}
	sr.Kind = SessionRuleKind
	if err := json.Unmarshal([]byte(prefix), &sr.ArgvPrefix); err != nil {
		return SessionRule{}, fmt.Errorf("bad argv_prefix of session rule %d: %w", sr.ID, err)
	}
	var err error
	if sr.GrantedAt, err = parseTime(granted); err != nil {
		return SessionRule{}, err
	}
	if sr.ExpiresAt, err = parseTime(exp); err != nil {
		return SessionRule{}, err
	}
	if sr.RevokedAt, err = parseNullTime(revoked); err != nil {
		return SessionRule{}, err
	}
	sr.GrantedBy, sr.Approval = by.String, approval.String
	return sr, nil
}

func scanSessionRules(rows *sql.Rows) ([]SessionRule, error) {
	return scanRows(rows, scanSessionRule)
}

// RecordSessionRule records a session rule. It refuses an empty identity,
// prefix word or pin, an expiry that is not after now or lies more than
// MaxSessionRuleLife after it, and an exact rule of no words.
func (s *Store) RecordSessionRule(ctx context.Context, r SessionRule, now time.Time) (SessionRule, error) {
	switch {
	case r.Channel == "" || r.Sender == "":
		return SessionRule{}, errors.New("record session rule: channel and sender are required")
	case len(r.ArgvPrefix) == 0 || slices.Contains(r.ArgvPrefix, ""):
		return SessionRule{}, errors.New("record session rule: empty prefix or prefix word")
	case r.Pin == "":
		return SessionRule{}, errors.New("record session rule: no pin: what the command runs besides its words is not bound")
	case !r.ExpiresAt.After(now):
		return SessionRule{}, fmt.Errorf("record session rule: expiry %s is not after now", formatTime(r.ExpiresAt))
	case r.ExpiresAt.After(now.Add(MaxSessionRuleLife)):
		return SessionRule{}, fmt.Errorf("record session rule: expiry %s is more than %v away", formatTime(r.ExpiresAt), MaxSessionRuleLife)
	}
	prefix, err := json.Marshal(r.ArgvPrefix)
	if err != nil {
		return SessionRule{}, fmt.Errorf("record session rule: %w", err)
	}
	r.Kind, r.GrantedAt, r.ExpiresAt, r.Approval, r.RevokedAt = SessionRuleKind, now.UTC(), r.ExpiresAt.UTC(), normToken(r.Approval), nil
	err = s.db.QueryRowContext(ctx, `INSERT INTO session_rules (channel, sender_id, argv_prefix, exact, pin,
		session, granted_at, expires_at, granted_by, approval) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		r.Channel, r.Sender, string(prefix), r.Exact, r.Pin, r.Session, formatTime(r.GrantedAt), formatTime(r.ExpiresAt),
		nullString(r.GrantedBy), nullString(r.Approval)).Scan(&r.ID)
	if err != nil {
		return SessionRule{}, fmt.Errorf("record session rule: %w", err)
	}
	return r, nil
}

// ActiveSessionRules returns the session rules that may apply to a
// request of (channel, sender) from session: not revoked, not expired at
// now (compared in SQL), limited to that session or to none; oldest
// first.
func (s *Store) ActiveSessionRules(ctx context.Context, channel, sender, session string, now time.Time) ([]SessionRule, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+sessionRuleColumns+` FROM session_rules
		WHERE channel = ? AND sender_id = ? AND revoked_at IS NULL AND expires_at > ?
		  AND (session = '' OR session = ?) ORDER BY id`, channel, sender, formatTime(now), session)
	if err != nil {
		return nil, fmt.Errorf("session rules: %w", err)
	}
	out, err := scanSessionRules(rows)
	if err != nil {
		return nil, fmt.Errorf("session rules: %w", err)
	}
	return out, nil
}

// ListSessionRules returns session rules newest first: by default only
// active ones; f.IncludeRevoked adds revoked and expired ones.
func (s *Store) ListSessionRules(ctx context.Context, f GrantFilter, now time.Time) ([]SessionRule, error) {
	q := `SELECT ` + sessionRuleColumns + ` FROM session_rules WHERE 1 = 1`
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
		q += ` AND revoked_at IS NULL AND expires_at > ?`
		args = append(args, formatTime(now))
	}
	q += ` ORDER BY granted_at DESC, id DESC`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list session rules: %w", err)
	}
	out, err := scanSessionRules(rows)
	if err != nil {
		return nil, fmt.Errorf("list session rules: %w", err)
	}
	return out, nil
}

// RevokeSessionRule ends a session rule and returns it; ok is false when
// no session rule has this id or it was already revoked.
func (s *Store) RevokeSessionRule(ctx context.Context, id int64, now time.Time) (SessionRule, bool, error) {
	sr, err := scanSessionRule(s.db.QueryRowContext(ctx, `UPDATE session_rules SET revoked_at = ?
		WHERE id = ? AND revoked_at IS NULL RETURNING `+sessionRuleColumns, formatTime(now), id))
	if errors.Is(err, sql.ErrNoRows) {
		return SessionRule{}, false, nil
	}
	if err != nil {
		return SessionRule{}, false, fmt.Errorf("revoke session rule: %w", err)
	}
	return sr, true, nil
}
