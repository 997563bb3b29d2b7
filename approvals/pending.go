package approvals

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/classify"
)

// Defaults.
const (
	// DefaultTTL is how long a pending request waits for an answer.
	DefaultTTL = 600 * time.Second
	// DefaultTicketTTL is how long an approval's ticket stays spendable.
	DefaultTicketTTL = 600 * time.Second
	// DefaultListLimit is how many requests List returns when asked for 0.
	DefaultListLimit = 50
	// tokenBytes is the entropy of a token: 128 bits.
	tokenBytes = 16
)

// Errors Resolve returns, in the order it checks them.
var (
	ErrUnknownToken    = errors.New("unknown approval token")
	ErrAlreadyResolved = errors.New("approval already resolved")
	ErrExpired         = errors.New("approval expired")
	ErrNotRequester    = errors.New("only the requester can resolve this approval")
	// ErrOwnRequest: the answering identity is the requester's own. A
	// requester (an agent's identity, claude-code:alice) never approves
	// its own request; the person it works for does, through a channel
	// that answers as them (the terminal, the page, a paired account).
	ErrOwnRequest = errors.New("a request is never approved by its own requester's identity")
)

// The channels an answer comes through, as the answering identity's
// channel; its sender is the person's (the sender the requests it answers
// are made for). A Telegram account answers as itself (its channel and
// its user id).
const (
	// ViaTerminal: mnemos approvals approve and deny, approvals watch.
	ViaTerminal = "terminal"
	// ViaPage: the approvals page of mnemos serve.
	ViaPage = "page"
	// ViaBridge: mnemos approvals answer, run by a channel's bridge.
	ViaBridge = "bridge"
)

// CheckAnswerer makes settle's identity checks, for every backend: the
// request's requester must be the identity the answer is for (forID; by
// itself when zero: ErrNotRequester), and an approval's answering
// identity by must not be the requester (ErrOwnRequest).
func CheckAnswerer(requester, by, forID Identity, approve bool) error {
	if forID == (Identity{}) {
		forID = by
	}
	if requester != forID {
		return ErrNotRequester
	}
	if approve && by == requester {
		return fmt.Errorf("%w: %s:%s asked; it is answered by the person it works for, from a terminal (mnemos approvals approve), the approvals page or a paired channel", ErrOwnRequest,
			Printable(requester.Channel), Printable(requester.Sender))
	}
	return nil
}

// tokenEncoding is lowercase RFC 4648 base32 without padding: 26 characters
// of a–z and 2–7, easy to read aloud and type.
var tokenEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// Status is the state of a request.
type Status string

// Statuses.
const (
	StatusPending  Status = "pending"
	StatusApproved Status = "approved"
	StatusRejected Status = "rejected"
	StatusExpired  Status = "expired"
	// StatusCancelled is a request its requester withdrew (Cancel). It is
	// stored as rejected, with the reason in cancel_reason.
	StatusCancelled Status = "cancelled"
)

// Decision is a person's answer to a request.
type Decision string

// Decisions.
const (
	Approve Decision = "approve"
	Reject  Decision = "reject"
)

// Territory values: what approving concedes beyond this one request.
const (
	TerritoryNone      = "none"
	TerritorySession   = "session"
	TerritoryPermanent = "permanent"
)

// Identity is whom a request is made for, and who decides it.
type Identity struct {
	Channel string `json:"channel"`
	Sender  string `json:"sender"`
}

// Access is one capability a request uses, on one target.
type Access struct {
	Capability classify.Capability `json:"capability"`
	Target     string              `json:"target,omitempty"`
	// Cost is an llm:online access's estimated dollars a call (the
	// policy's costs: section), shown on the card.
	Cost *float64 `json:"cost,omitempty"`
}

// Details is what a request carries beyond the card, stored as JSON in
// request_extra. The store does not interpret it.
type Details struct {
	Argv   []string `json:"argv,omitempty"`
	Script string   `json:"script,omitempty"`
	Cwd    string   `json:"cwd,omitempty"`
	// Session is the agent session the request came from.
	Session string `json:"session,omitempty"`
	Level   string `json:"level,omitempty"`
	// Reversibility is reversible, irreversible or partial (shown on the card).
	Reversibility string   `json:"reversibility,omitempty"`
	Rule          string   `json:"rule,omitempty"`
	Reason        string   `json:"reason,omitempty"`
	Accesses      []Access `json:"accesses,omitempty"`
	// Meta carries anything else the caller wants kept with the request.
	Meta map[string]string `json:"meta,omitempty"`
	// Bound lists what the request's key binds beyond its words (the
	// programs PATH finds, the scripts they run, the environment
	// variables that change what runs), as a person reads it.
	Bound []string `json:"bound,omitempty"`
	// Pin is the digest a rule remembered for this request carries: its
	// command matches the rule only while its program, script and
	// environment are those approved. Empty when the request is not one
	// command.
	Pin string `json:"pin,omitempty"`
	// Remember says, for each command that uses code:exec or mail:send,
	// what --remember would remember (or why it cannot).
	Remember []RememberItem `json:"remember,omitempty"`
}

// NewPending is what a caller supplies to park a request.
type NewPending struct {
	Channel         string
	Sender          string
	CapabilityClass string // e.g. "fs:write:/home/u/proj/**"
	ActionVerb      string // e.g. "write", as in "May I write?"
	TargetSummary   string // object, source -> destination, size
	// RequestKey binds the exact request (argv or script, cwd, identity);
	// see RequestKey. The ticket issued on approval is bound to it.
	RequestKey string
	Details    Details
}

// Pending is a stored request.
type Pending struct {
	Token           string     `json:"token"`
	Channel         string     `json:"channel"`
	Sender          string     `json:"sender"`
	CapabilityClass string     `json:"capability_class"`
	ActionVerb      string     `json:"action_verb"`
	TargetSummary   string     `json:"target_summary"`
	CreatedAt       time.Time  `json:"created_at"`
	ExpiresAt       time.Time  `json:"expires_at"`
	Status          Status     `json:"status"`
	DecisionAt      *time.Time `json:"decision_at,omitempty"`
	DecisionBy      *Identity  `json:"decision_by,omitempty"`
	RequestKey      string     `json:"request_key"`
	Details         Details    `json:"details"`
	// Territory is set when the request is approved: none, session or
	// permanent.
	Territory string `json:"territory,omitempty"`
	// TerritoryUnder is the directory whose subtree the approval's
	// fs:write grant covers (approve --under), when it has one.
	TerritoryUnder string `json:"territory_under,omitempty"`
	// Recurrence is how many requests of the same class from the same
	// identity existed when this one was created.
	Recurrence int `json:"recurrence"`
	// CancelReason is why the requester withdrew a cancelled request.
	CancelReason string `json:"cancel_reason,omitempty"`
	// Host is the machine the request was parked on, when the state is
	// shared by several (empty for the SQLite store, which serves one).
	Host string `json:"host,omitempty"`
}

// Requester returns the identity the request was made for.
func (p Pending) Requester() Identity { return Identity{Channel: p.Channel, Sender: p.Sender} }

// StatusAt is the status as of now: a pending request past its expiry is
// expired even before anything has marked it so.
func (p Pending) StatusAt(now time.Time) Status {
	if p.Status == StatusPending && p.ExpiresAt.Before(now) {
		return StatusExpired
	}
	return p.Status
}

// Card returns the card for the request.
func (p Pending) Card() Card {
	return Card{
		ActionVerb:      p.ActionVerb,
		TargetSummary:   p.TargetSummary,
		CapabilityClass: p.CapabilityClass,
		Reversibility:   p.Details.Reversibility,
		Territory:       p.Territory,
		Under:           p.TerritoryUnder,
		Recurrence:      p.Recurrence,
		More:            max(0, len(p.Details.Accesses)-1),
		Estimate:        estimate(p.Details.Accesses),
		Token:           p.Token,
	}
}

// KeyInput is the part of a request an approval is bound to.
type KeyInput struct {
	Channel string   `json:"channel"`
	Sender  string   `json:"sender"`
	Cwd     string   `json:"cwd"`
	Argv    []string `json:"argv"`
	Script  string   `json:"script"`
	// Context and Scope are the caller's fields for policy conditions;
	// absent ones leave the key as it was without them.
	Context map[string]any `json:"context,omitempty"`
	Scope   map[string]any `json:"scope,omitempty"`
	// Bound is a digest of what runs besides the words: the executables
	// PATH resolves, the content of the scripts they run, the values of
	// the environment variables that change what runs. A change gives
	// another key, so a ticket is not spent on what was not approved.
	// Empty leaves the key as it was without it.
	Bound string `json:"bound,omitempty"`
}

// RequestKey returns the hex SHA-256 of an unambiguous encoding of k. Two
// requests share a key only when every field is equal.
func RequestKey(k KeyInput) string {
	b, err := json.Marshal(k)
	if err != nil {
		// Only a value JSON cannot hold (a NaN, a channel) fails; such a
		// request gets a key no other request shares, so no ticket or
		// pending approval is ever matched to it.
		b = []byte(fmt.Sprintf("unencodable %p %v", &k, err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// normToken trims and lowercases a typed token.
func normToken(t string) string { return strings.ToLower(strings.TrimSpace(t)) }

func (s *Store) newToken() (string, error) { return NewToken(s.rand) }

// NewToken reads an approval token from r: 128 bits as 26 characters of
// lowercase base32. Every Backend makes its tokens with it.
func NewToken(r io.Reader) (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return tokenEncoding.EncodeToString(b), nil
}

// pendingColumns lists the columns scanPending reads; statusExpr replaces
// the status column (List computes expiry there).
func pendingColumns(statusExpr string) string {
	return `token, channel, sender_id, capability_class, action_verb, target_summary,
		created_at, expires_at, ` + statusExpr + `, decision_at, decision_by_channel,
		decision_by_sender, request_key, request_extra, territory, recurrence, cancel_reason, territory_under`
}

type scanner interface{ Scan(dest ...any) error }

// scanRows reads every row of a query with scan, then closes the rows.
func scanRows[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func scanOnePending(r scanner) (Pending, error) { return scanPending(r) }

func scanPending(r scanner, extra ...any) (Pending, error) {
	var (
		p                             Pending
		created, expires              string
		status                        string
		decAt, decChan, decSend, terr sql.NullString
		reqExtra, cancel, under       sql.NullString
	)
	dest := []any{&p.Token, &p.Channel, &p.Sender, &p.CapabilityClass, &p.ActionVerb, &p.TargetSummary,
		&created, &expires, &status, &decAt, &decChan, &decSend, &p.RequestKey, &reqExtra, &terr, &p.Recurrence, &cancel, &under}
	if err := r.Scan(append(dest, extra...)...); err != nil {
		return Pending{}, err
	}
	var err error
	if p.CreatedAt, err = parseTime(created); err != nil {
		return Pending{}, err
	}
	if p.ExpiresAt, err = parseTime(expires); err != nil {
		return Pending{}, err
	}
	if p.DecisionAt, err = parseNullTime(decAt); err != nil {
		return Pending{}, err
	}
	p.Status = Status(status)
	if p.Status == StatusRejected && cancel.Valid {
		p.Status, p.CancelReason = StatusCancelled, cancel.String
	}
	if decChan.Valid || decSend.Valid {
		p.DecisionBy = &Identity{Channel: decChan.String, Sender: decSend.String}
	}
	p.Territory, p.TerritoryUnder = terr.String, under.String
	if reqExtra.Valid && reqExtra.String != "" {
		if err := json.Unmarshal([]byte(reqExtra.String), &p.Details); err != nil {
			return Pending{}, fmt.Errorf("bad request_extra for %s: %w", p.Token, err)
		}
	}
	return p, nil
}

// CreatePending parks a request for approval and returns it with a fresh
// token. ttl 0 means DefaultTTL.
func (s *Store) CreatePending(ctx context.Context, n NewPending, now time.Time, ttl time.Duration) (Pending, error) {
	switch {
	case n.Channel == "" || n.Sender == "":
		return Pending{}, errors.New("create pending: channel and sender are required")
	case n.RequestKey == "":
		return Pending{}, errors.New("create pending: request key is required")
	case n.ActionVerb == "" || n.CapabilityClass == "":
		return Pending{}, errors.New("create pending: action verb and capability class are required")
	case ttl < 0:
		return Pending{}, fmt.Errorf("create pending: negative ttl %v", ttl)
	}
	if ttl == 0 {
		ttl = DefaultTTL
	}
	token, err := s.newToken()
	if err != nil {
		return Pending{}, fmt.Errorf("create pending: %w", err)
	}
	extra, err := json.Marshal(n.Details)
	if err != nil {
		return Pending{}, fmt.Errorf("create pending: %w", err)
	}
	p := Pending{
		Token:           token,
		Channel:         n.Channel,
		Sender:          n.Sender,
		CapabilityClass: n.CapabilityClass,
		ActionVerb:      n.ActionVerb,
		TargetSummary:   n.TargetSummary,
		CreatedAt:       now.UTC(),
		ExpiresAt:       now.Add(ttl).UTC(),
		Status:          StatusPending,
		RequestKey:      n.RequestKey,
		Details:         n.Details,
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx,
			`SELECT COUNT(*) FROM pending WHERE channel = ? AND sender_id = ? AND capability_class = ?`,
			p.Channel, p.Sender, p.CapabilityClass).Scan(&p.Recurrence); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO pending (token, channel, sender_id, capability_class,
			action_verb, target_summary, created_at, expires_at, status, request_key, request_extra, recurrence)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
			p.Token, p.Channel, p.Sender, p.CapabilityClass, p.ActionVerb, p.TargetSummary,
			formatTime(p.CreatedAt), formatTime(p.ExpiresAt), p.RequestKey, string(extra), p.Recurrence)
		return err
	})
	if err != nil {
		return Pending{}, fmt.Errorf("create pending: %w", err)
	}
	return p, nil
}

// FindOpen returns the newest request with this request key that is still
// pending and unexpired, so a caller can point to it instead of asking twice.
func (s *Store) FindOpen(ctx context.Context, requestKey string, now time.Time) (Pending, bool, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+pendingColumns("status")+` FROM pending
		WHERE request_key = ? AND status = 'pending' AND expires_at >= ?
		ORDER BY created_at DESC, rowid DESC LIMIT 1`, requestKey, formatTime(now))
	p, err := scanPending(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Pending{}, false, nil
	}
	if err != nil {
		return Pending{}, false, fmt.Errorf("find open request: %w", err)
	}
	return p, true, nil
}

// RecentRejection returns the request with this request key that a person
// rejected at or after since, when that is the person's latest answer to
// it (a later approval supersedes it; a request its requester cancelled
// is no answer), so that the same request is not put to them again
// straight away.
func (s *Store) RecentRejection(ctx context.Context, requestKey string, since time.Time) (Pending, bool, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+pendingColumns("status")+` FROM pending
		WHERE request_key = ? AND status IN ('approved', 'rejected') AND cancel_reason IS NULL
		ORDER BY decision_at DESC, rowid DESC LIMIT 1`, requestKey)
	p, err := scanPending(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Pending{}, false, nil
	}
	if err != nil {
		return Pending{}, false, fmt.Errorf("find rejection: %w", err)
	}
	if p.Status != StatusRejected || p.DecisionAt == nil || p.DecisionAt.Before(since) {
		return Pending{}, false, nil
	}
	return p, true, nil
}

// Get returns the request with this token as stored (see Pending.StatusAt
// for its status as of a given time), or ErrUnknownToken.
func (s *Store) Get(ctx context.Context, token string) (Pending, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+pendingColumns("status")+` FROM pending WHERE token = ?`, normToken(token))
	p, err := scanPending(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Pending{}, ErrUnknownToken
	}
	if err != nil {
		return Pending{}, fmt.Errorf("get request: %w", err)
	}
	return p, nil
}

// ListOptions selects what List returns.
type ListOptions struct {
	// IncludeResolved also lists approved, rejected and expired requests.
	IncludeResolved bool
	// Limit caps the result: 0 means DefaultListLimit, negative means no cap.
	Limit int
	// Fleet lists the requests of every host sharing the state, not only
	// this one's; a store that serves one host has only its own.
	Fleet bool
	// Requester, when set, lists only the requests of this identity:
	// those it can answer.
	Requester *Identity
}

// List returns requests newest first: by default only those still open at
// now. A pending request past its expiry is reported as expired.
func (s *Store) List(ctx context.Context, o ListOptions, now time.Time) ([]Pending, error) {
	limit := o.Limit
	if limit == 0 {
		limit = DefaultListLimit
	}
	if limit < 0 {
		limit = -1
	}
	n := formatTime(now)
	q := `SELECT ` + pendingColumns("CASE WHEN status = 'pending' AND expires_at < ? THEN 'expired' ELSE status END") +
		` FROM pending`
	args := []any{n}
	q += ` WHERE 1 = 1`
	if !o.IncludeResolved {
		q += ` AND status = 'pending' AND expires_at >= ?`
		args = append(args, n)
	}
	if o.Requester != nil {
		q += ` AND channel = ? AND sender_id = ?`
		args = append(args, o.Requester.Channel, o.Requester.Sender)
	}
	q += ` ORDER BY created_at DESC, rowid DESC LIMIT ?`
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list requests: %w", err)
	}
	out, err := scanRows(rows, scanOnePending)
	if err != nil {
		return nil, fmt.Errorf("list requests: %w", err)
	}
	return out, nil
}

// ResolveOptions qualify an approval.
type ResolveOptions struct {
	// Territory is none (or empty), session or permanent. It is recorded on
	// approval; recording the grant it implies is the caller's job
	// (RecordGrant), since the target and expiry are the caller's to choose.
	Territory string
	// Under is the directory whose subtree the approval's fs:write grant
	// covers, shown in the card's territory marker; empty for none.
	Under string
	// TicketTTL is how long the approval's ticket stays spendable: 0 means
	// DefaultTicketTTL. A policy rule's scope_template ttl ends up here.
	TicketTTL time.Duration
	// NoTicket approves without issuing a one-shot ticket: the caller
	// records a standing concession (a grant or an allow rule) that already
	// lets the rerun through, so no spare ticket is left behind to outlive
	// a revoked grant.
	NoTicket bool
	// For is the requester whose requests the answering identity (by)
	// answers: the identity a channel serves (the CLI's --channel and
	// --sender, the page's identity, a Telegram account's pairing). Zero
	// means by's own, which an approval never is (ErrOwnRequest).
	For Identity
}

// Resolve applies a decision to a pending request, answered by by for the
// requests of o.For. It checks, in order: the token is known
// (ErrUnknownToken); the request is still pending (ErrAlreadyResolved: no
// double spend); it has not expired (ErrExpired, after persisting the
// expired status); the request is o.For's (ErrNotRequester); an approval
// does not come from the requester's own identity (ErrOwnRequest). Only
// then is the decision written, with by as the decider, by a conditional
// UPDATE, so two concurrent resolvers cannot both succeed. Approving issues,
// in the same transaction, a one-shot ticket bound to the request key.
func (s *Store) Resolve(ctx context.Context, token string, d Decision, by Identity, now time.Time, o ResolveOptions) (Pending, error) {
	var status Status
	switch d {
	case Approve:
		status = StatusApproved
	case Reject:
		status = StatusRejected
	default:
		return Pending{}, fmt.Errorf("resolve: unknown decision %q (want approve or reject)", string(d))
	}
	territory := o.Territory
	switch territory {
	case "":
		territory = TerritoryNone
	case TerritoryNone, TerritorySession, TerritoryPermanent:
	default:
		return Pending{}, fmt.Errorf("resolve: unknown territory %q (want none, session or permanent)", o.Territory)
	}
	ticketTTL := o.TicketTTL
	if ticketTTL < 0 {
		return Pending{}, fmt.Errorf("resolve: negative ticket ttl %v", ticketTTL)
	}
	if ticketTTL == 0 {
		ticketTTL = DefaultTicketTTL
	}
	return s.settle(ctx, "resolve", token, by, o.For, d == Approve, now, func(tx *sql.Tx, p *Pending, n string) error {
		var terr, under any // territory is recorded on approval only
		if d == Approve {
			terr = territory
			if o.Under != "" {
				under = o.Under
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE pending SET status = ?, decision_at = ?,
			decision_by_channel = ?, decision_by_sender = ?, territory = ?, territory_under = ?
			WHERE token = ? AND status = 'pending' AND expires_at >= ?`,
			string(status), n, by.Channel, by.Sender, terr, under, p.Token, n)
		if err != nil {
			return err
		}
		if k, err := res.RowsAffected(); err != nil {
			return err
		} else if k != 1 {
			return ErrAlreadyResolved
		}
		if d == Approve && !o.NoTicket {
			if _, err := tx.ExecContext(ctx, `INSERT INTO tickets (request_key, approval_token, created_at, expires_at)
				VALUES (?, ?, ?, ?)`, p.RequestKey, p.Token, n, formatTime(now.Add(ticketTTL))); err != nil {
				return fmt.Errorf("issue ticket: %w", err)
			}
		}
		if d == Approve {
			p.Territory, p.TerritoryUnder = territory, o.Under
		}
		p.Status = status
		return nil
	})
}

// Cancel withdraws a pending request on its requester's word: it will not
// be approved, and no ticket is issued. It makes the same checks as
// Resolve, in the same order (an expired request is marked expired), and
// records the reason; the request then reads as StatusCancelled.
func (s *Store) Cancel(ctx context.Context, token string, by Identity, reason string, now time.Time) (Pending, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		reason = "withdrawn by the requester"
	}
	return s.settle(ctx, "cancel", token, by, Identity{}, false, now, func(tx *sql.Tx, p *Pending, n string) error {
		res, err := tx.ExecContext(ctx, `UPDATE pending SET status = 'rejected', cancel_reason = ?,
			decision_at = ?, decision_by_channel = ?, decision_by_sender = ?
			WHERE token = ? AND status = 'pending' AND expires_at >= ?`,
			reason, n, by.Channel, by.Sender, p.Token, n)
		if err != nil {
			return err
		}
		if k, err := res.RowsAffected(); err != nil {
			return err
		} else if k != 1 {
			return ErrAlreadyResolved
		}
		p.Status, p.CancelReason = StatusCancelled, reason
		return nil
	})
}

// settle runs seed 002's four checks on a request, in order, inside one
// immediate transaction: the token is known (ErrUnknownToken); the request
// is still pending (ErrAlreadyResolved: no double spend); it has not
// expired (ErrExpired, after committing the expired status); the request
// is forID's, and an approval is not by the requester's own identity
// (CheckAnswerer). Only then does apply write the decision; it sets the
// new status on p and must change the row with a conditional UPDATE.
func (s *Store) settle(ctx context.Context, op, token string, by, forID Identity, approve bool, now time.Time,
	apply func(tx *sql.Tx, p *Pending, n string) error) (Pending, error) {
	token = normToken(token)
	n := formatTime(now)
	var (
		out     Pending
		expired bool
	)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var past bool
		p, err := scanPending(tx.QueryRowContext(ctx, `SELECT `+pendingColumns("status")+`, expires_at < ?
			FROM pending WHERE token = ?`, n, token), &past)
		// 1. unknown token
		if errors.Is(err, sql.ErrNoRows) {
			return ErrUnknownToken
		}
		if err != nil {
			return err
		}
		// 2. already resolved: no double spend
		if p.Status != StatusPending {
			return fmt.Errorf("%w: %s", ErrAlreadyResolved, p.Status)
		}
		// 3. expired: the status change is committed, then ErrExpired
		if past {
			if _, err := tx.ExecContext(ctx, `UPDATE pending SET status = 'expired'
				WHERE token = ? AND status = 'pending'`, token); err != nil {
				return err
			}
			expired = true
			return nil
		}
		// 4. only for the requester, never by its own identity
		if err := CheckAnswerer(p.Requester(), by, forID, approve); err != nil {
			return err
		}
		if err := apply(tx, &p, n); err != nil {
			return err
		}
		at := now.UTC()
		p.DecisionAt, p.DecisionBy = &at, &Identity{Channel: by.Channel, Sender: by.Sender}
		out = p
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrUnknownToken) || errors.Is(err, ErrAlreadyResolved) || errors.Is(err, ErrNotRequester) || errors.Is(err, ErrOwnRequest) {
			return Pending{}, err
		}
		return Pending{}, fmt.Errorf("%s: %w", op, err)
	}
	if expired {
		return Pending{}, ErrExpired
	}
	return out, nil
}

// SpendTicket spends the oldest unspent, unexpired ticket bound to
// requestKey, in one conditional UPDATE: of any number of concurrent
// callers, one gets ok. It returns the token of the approval that issued it.
func (s *Store) SpendTicket(ctx context.Context, requestKey string, now time.Time) (approvalToken string, ok bool, err error) {
	n := formatTime(now)
	err = s.db.QueryRowContext(ctx, `UPDATE tickets SET spent_at = ?
		WHERE id = (SELECT id FROM tickets
		            WHERE request_key = ? AND spent_at IS NULL AND expires_at > ?
		            ORDER BY id LIMIT 1)
		  AND spent_at IS NULL
		RETURNING approval_token`, n, requestKey, n).Scan(&approvalToken)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("spend ticket: %w", err)
	}
	return approvalToken, true, nil
}

// CleanupExpired marks every pending request past its expiry as expired and
// returns them (oldest first), so the caller can record approval.expired
// for each.
func (s *Store) CleanupExpired(ctx context.Context, now time.Time) ([]Pending, error) {
	rows, err := s.db.QueryContext(ctx, `UPDATE pending SET status = 'expired'
		WHERE status = 'pending' AND expires_at < ?
		RETURNING `+pendingColumns("status"), formatTime(now))
	if err != nil {
		return nil, fmt.Errorf("cleanup expired: %w", err)
	}
	out, err := scanRows(rows, scanOnePending)
	if err != nil {
		return nil, fmt.Errorf("cleanup expired: %w", err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// Recurrence returns how many requests of this capability class the
// identity has made so far; it chooses the card's form. Called before
// CreatePending it counts the earlier ones (CreatePending records the same
// count in Pending.Recurrence).
func (s *Store) Recurrence(ctx context.Context, channel, sender, capabilityClass string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pending
		WHERE channel = ? AND sender_id = ? AND capability_class = ?`, channel, sender, capabilityClass).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count recurrence: %w", err)
	}
	return n, nil
}
