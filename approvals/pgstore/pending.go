package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemos-dev/mnemos/approvals"
)

// NotifyChannel is the channel a request's token is sent on when it is
// parked, resolved, cancelled or expired.
const NotifyChannel = "mnemos_pending"

func pendingColumns(statusExpr string) string {
	return `token, host, channel, sender_id, capability_class, action_verb, target_summary,
		created_at, expires_at, ` + statusExpr + `, decision_at, decision_by_channel,
		decision_by_sender, request_key, request_extra, territory, recurrence, cancel_reason, territory_under`
}

func scanPending(r pgx.Row, extra ...any) (approvals.Pending, error) {
	var (
		p                              approvals.Pending
		status                         string
		decAt                          *time.Time
		decChan, decSend, terr, extra_ *string
		cancel, under                  *string
	)
	dest := []any{&p.Token, &p.Host, &p.Channel, &p.Sender, &p.CapabilityClass, &p.ActionVerb, &p.TargetSummary,
		&p.CreatedAt, &p.ExpiresAt, &status, &decAt, &decChan, &decSend, &p.RequestKey, &extra_, &terr, &p.Recurrence, &cancel, &under}
	if err := r.Scan(append(dest, extra...)...); err != nil {
		return approvals.Pending{}, err
	}
	p.CreatedAt, p.ExpiresAt, p.DecisionAt = utc(p.CreatedAt), utc(p.ExpiresAt), utcp(decAt)
	p.Status = approvals.Status(status)
	if p.Status == approvals.StatusRejected && cancel != nil {
		p.Status, p.CancelReason = approvals.StatusCancelled, *cancel
	}
	if decChan != nil || decSend != nil {
		p.DecisionBy = &approvals.Identity{Channel: str(decChan), Sender: str(decSend)}
	}
	p.Territory, p.TerritoryUnder = str(terr), str(under)
	if extra_ != nil && *extra_ != "" {
		if err := json.Unmarshal([]byte(*extra_), &p.Details); err != nil {
			return approvals.Pending{}, fmt.Errorf("bad request_extra for %s: %w", p.Token, err)
		}
	}
	return p, nil
}

func collectPending(rows pgx.Rows) ([]approvals.Pending, error) {
	defer rows.Close()
	var out []approvals.Pending
	for rows.Next() {
		p, err := scanPending(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// CreatePending parks a request on this host. Its times are the server's.
func (s *Store) CreatePending(ctx context.Context, n approvals.NewPending, now time.Time, ttl time.Duration) (approvals.Pending, error) {
	switch {
	case n.Channel == "" || n.Sender == "":
		return approvals.Pending{}, errors.New("create pending: channel and sender are required")
	case n.RequestKey == "":
		return approvals.Pending{}, errors.New("create pending: request key is required")
	case n.ActionVerb == "" || n.CapabilityClass == "":
		return approvals.Pending{}, errors.New("create pending: action verb and capability class are required")
	case ttl < 0:
		return approvals.Pending{}, fmt.Errorf("create pending: negative ttl %v", ttl)
	}
	if ttl == 0 {
		ttl = approvals.DefaultTTL
	}
	token, err := approvals.NewToken(s.rand)
	if err != nil {
		return approvals.Pending{}, fmt.Errorf("create pending: %w", err)
	}
	extra, err := json.Marshal(n.Details)
	if err != nil {
		return approvals.Pending{}, fmt.Errorf("create pending: %w", err)
	}
	p := approvals.Pending{
		Token: token, Host: s.host, Channel: n.Channel, Sender: n.Sender, CapabilityClass: n.CapabilityClass,
		ActionVerb: n.ActionVerb, TargetSummary: n.TargetSummary, Status: approvals.StatusPending,
		RequestKey: n.RequestKey, Details: n.Details,
	}
	off := s.off(now)
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM pending
			WHERE channel = $1 AND sender_id = $2 AND capability_class = $3`,
			p.Channel, p.Sender, p.CapabilityClass).Scan(&p.Recurrence); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO pending (token, host, channel, sender_id, capability_class,
			action_verb, target_summary, created_at, expires_at, status, request_key, request_extra, recurrence)
			VALUES ($1, $2, $3, $4, $5, $6, $7, `+at(8)+`, `+at(8)+` + $9::float8 * interval '1 microsecond',
			        'pending', $10, $11, $12)
			RETURNING created_at, expires_at`,
			p.Token, p.Host, p.Channel, p.Sender, p.CapabilityClass, p.ActionVerb, p.TargetSummary,
			off, float64(ttl.Microseconds()), p.RequestKey, string(extra), p.Recurrence).Scan(&p.CreatedAt, &p.ExpiresAt); err != nil {
			return err
		}
		// Pages and terminals on any host learn of the new card at once.
		return notify(ctx, tx, p.Token)
	})
	if err != nil {
		return approvals.Pending{}, fmt.Errorf("create pending: %w", err)
	}
	p.CreatedAt, p.ExpiresAt = utc(p.CreatedAt), utc(p.ExpiresAt)
	return p, nil
}

// FindOpen returns the newest open request with this key parked on this
// host (a ticket its approval issues is bound to this host).
func (s *Store) FindOpen(ctx context.Context, requestKey string, now time.Time) (approvals.Pending, bool, error) {
	p, err := scanPending(s.pool.QueryRow(ctx, `SELECT `+pendingColumns("status")+` FROM pending
		WHERE request_key = $1 AND host = $2 AND status = 'pending' AND expires_at >= `+at(3)+`
		ORDER BY created_at DESC, seq DESC LIMIT 1`, requestKey, s.host, s.off(now)))
	if errors.Is(err, pgx.ErrNoRows) {
		return approvals.Pending{}, false, nil
	}
	if err != nil {
		return approvals.Pending{}, false, fmt.Errorf("find open request: %w", err)
	}
	return p, true, nil
}

// RecentRejection returns the latest answer to requestKey, on any host,
// when it is a rejection given at or after since.
func (s *Store) RecentRejection(ctx context.Context, requestKey string, since time.Time) (approvals.Pending, bool, error) {
	var recent bool
	p, err := scanPending(s.pool.QueryRow(ctx, `SELECT `+pendingColumns("status")+`, decision_at >= `+at(2)+` FROM pending
		WHERE request_key = $1 AND status IN ('approved', 'rejected') AND cancel_reason IS NULL
		ORDER BY decision_at DESC, seq DESC LIMIT 1`, requestKey, s.off(since)), &recent)
	if errors.Is(err, pgx.ErrNoRows) {
		return approvals.Pending{}, false, nil
	}
	if err != nil {
		return approvals.Pending{}, false, fmt.Errorf("find rejection: %w", err)
	}
	if p.Status != approvals.StatusRejected || p.DecisionAt == nil || !recent {
		return approvals.Pending{}, false, nil
	}
	return p, true, nil
}

// Get returns the request with this token, parked on any host.
func (s *Store) Get(ctx context.Context, token string) (approvals.Pending, error) {
	p, err := scanPending(s.pool.QueryRow(ctx, `SELECT `+pendingColumns("status")+` FROM pending WHERE token = $1`, normToken(token)))
	if errors.Is(err, pgx.ErrNoRows) {
		return approvals.Pending{}, approvals.ErrUnknownToken
	}
	if err != nil {
		return approvals.Pending{}, fmt.Errorf("get request: %w", err)
	}
	return p, nil
}

// List returns this host's requests, or with o.Fleet every host's,
// newest first.
func (s *Store) List(ctx context.Context, o approvals.ListOptions, now time.Time) ([]approvals.Pending, error) {
	limit := o.Limit
	if limit == 0 {
		limit = approvals.DefaultListLimit
	}
	q := `SELECT ` + pendingColumns("CASE WHEN status = 'pending' AND expires_at < "+at(1)+" THEN 'expired' ELSE status END") +
		` FROM pending WHERE true`
	args := []any{s.off(now)}
	if !o.Fleet {
		args = append(args, s.host)
		q += fmt.Sprintf(` AND host = $%d`, len(args))
	}
	if !o.IncludeResolved {
		q += ` AND status = 'pending' AND expires_at >= ` + at(1)
	}
	if o.Requester != nil {
		args = append(args, o.Requester.Channel, o.Requester.Sender)
		q += fmt.Sprintf(` AND channel = $%d AND sender_id = $%d`, len(args)-1, len(args))
	}
	q += ` ORDER BY created_at DESC, seq DESC`
	if limit > 0 {
		args = append(args, limit)
		q += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list requests: %w", err)
	}
	out, err := collectPending(rows)
	if err != nil {
		return nil, fmt.Errorf("list requests: %w", err)
	}
	return out, nil
}

// Resolve applies a decision, from any host, after the four checks.
func (s *Store) Resolve(ctx context.Context, token string, d approvals.Decision, by approvals.Identity, now time.Time, o approvals.ResolveOptions) (approvals.Pending, error) {
	var status approvals.Status
	switch d {
	case approvals.Approve:
		status = approvals.StatusApproved
	case approvals.Reject:
		status = approvals.StatusRejected
	default:
		return approvals.Pending{}, fmt.Errorf("resolve: unknown decision %q (want approve or reject)", string(d))
	}
	territory := o.Territory
	switch territory {
	case "":
		territory = approvals.TerritoryNone
	case approvals.TerritoryNone, approvals.TerritorySession, approvals.TerritoryPermanent:
	default:
		return approvals.Pending{}, fmt.Errorf("resolve: unknown territory %q (want none, session or permanent)", o.Territory)
	}
	ticketTTL := o.TicketTTL
	if ticketTTL < 0 {
		return approvals.Pending{}, fmt.Errorf("resolve: negative ticket ttl %v", ticketTTL)
	}
	if ticketTTL == 0 {
		ticketTTL = approvals.DefaultTicketTTL
	}
	return s.settle(ctx, "resolve", token, by, o.For, d == approvals.Approve, now, func(tx pgx.Tx, p *approvals.Pending, off float64) error {
		var terr, under *string
		if d == approvals.Approve {
			terr, under = &territory, nullStr(o.Under)
		}
		var decided time.Time
		err := tx.QueryRow(ctx, `UPDATE pending SET status = $1, decision_at = `+at(2)+`,
			decision_by_channel = $3, decision_by_sender = $4, territory = $5, territory_under = $6, decision_host = $7
			WHERE token = $8 AND status = 'pending' AND expires_at >= `+at(2)+`
			RETURNING decision_at`,
			string(status), off, by.Channel, by.Sender, terr, under, s.host, p.Token).Scan(&decided)
		if errors.Is(err, pgx.ErrNoRows) {
			return approvals.ErrAlreadyResolved
		}
		if err != nil {
			return err
		}
		if d == approvals.Approve && !o.NoTicket {
			if _, err := tx.Exec(ctx, `INSERT INTO tickets (host, request_key, approval_token, created_at, expires_at)
				VALUES ($1, $2, $3, `+at(4)+`, `+at(4)+` + $5::float8 * interval '1 microsecond')`,
				p.Host, p.RequestKey, p.Token, off, float64(ticketTTL.Microseconds())); err != nil {
				return fmt.Errorf("issue ticket: %w", err)
			}
		}
		if d == approvals.Approve {
			p.Territory, p.TerritoryUnder = territory, o.Under
		}
		p.Status = status
		decided = decided.UTC()
		p.DecisionAt = &decided
		return nil
	})
}

// Cancel withdraws a request on its requester's word.
func (s *Store) Cancel(ctx context.Context, token string, by approvals.Identity, reason string, now time.Time) (approvals.Pending, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		reason = "withdrawn by the requester"
	}
	return s.settle(ctx, "cancel", token, by, approvals.Identity{}, false, now, func(tx pgx.Tx, p *approvals.Pending, off float64) error {
		var decided time.Time
		err := tx.QueryRow(ctx, `UPDATE pending SET status = 'rejected', cancel_reason = $1,
			decision_at = `+at(2)+`, decision_by_channel = $3, decision_by_sender = $4, decision_host = $5
			WHERE token = $6 AND status = 'pending' AND expires_at >= `+at(2)+`
			RETURNING decision_at`,
			reason, off, by.Channel, by.Sender, s.host, p.Token).Scan(&decided)
		if errors.Is(err, pgx.ErrNoRows) {
			return approvals.ErrAlreadyResolved
		}
		if err != nil {
			return err
		}
		decided = decided.UTC()
		p.Status, p.CancelReason, p.DecisionAt = approvals.StatusCancelled, reason, &decided
		return nil
	})
}

// settle makes the four checks in order, in one transaction holding the
// request's row: unknown token; already resolved; expired (committed,
// then ErrExpired); the answer is not for the requester, or approves as
// the requester's own identity (approvals.CheckAnswerer). Then apply writes the
// decision with a conditional UPDATE. Every change is notified.
func (s *Store) settle(ctx context.Context, op, token string, by, forID approvals.Identity, approve bool, now time.Time,
	apply func(tx pgx.Tx, p *approvals.Pending, off float64) error) (approvals.Pending, error) {
	token = normToken(token)
	off := s.off(now)
	var (
		out     approvals.Pending
		expired bool
	)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var past bool
		p, err := scanPending(tx.QueryRow(ctx, `SELECT `+pendingColumns("status")+`, expires_at < `+at(2)+`
			FROM pending WHERE token = $1 FOR UPDATE`, token, off), &past)
		// 1. unknown token
		if errors.Is(err, pgx.ErrNoRows) {
			return approvals.ErrUnknownToken
		}
		if err != nil {
			return err
		}
		// 2. already resolved: no double spend
		if p.Status != approvals.StatusPending {
			return fmt.Errorf("%w: %s", approvals.ErrAlreadyResolved, p.Status)
		}
		// 3. expired: the status change is committed, then ErrExpired
		if past {
			if _, err := tx.Exec(ctx, `UPDATE pending SET status = 'expired' WHERE token = $1 AND status = 'pending'`, token); err != nil {
				return err
			}
			expired = true
			return notify(ctx, tx, token)
		}
		// 4. only for the requester, never by its own identity
		if err := approvals.CheckAnswerer(p.Requester(), by, forID, approve); err != nil {
			return err
		}
		if err := apply(tx, &p, off); err != nil {
			return err
		}
		p.DecisionBy = &approvals.Identity{Channel: by.Channel, Sender: by.Sender}
		out = p
		return notify(ctx, tx, token)
	})
	if err != nil {
		if errors.Is(err, approvals.ErrUnknownToken) || errors.Is(err, approvals.ErrAlreadyResolved) || errors.Is(err, approvals.ErrNotRequester) || errors.Is(err, approvals.ErrOwnRequest) {
			return approvals.Pending{}, err
		}
		return approvals.Pending{}, fmt.Errorf("%s: %w", op, err)
	}
	if expired {
		return approvals.Pending{}, approvals.ErrExpired
	}
	return out, nil
}

func notify(ctx context.Context, tx pgx.Tx, tokens ...string) error {
	if len(tokens) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `SELECT pg_notify('`+NotifyChannel+`', t) FROM unnest($1::text[]) AS t`, tokens)
	return err
}

// SpendTicket spends the oldest unspent, unexpired ticket bound to
// requestKey and to this host, in one conditional UPDATE. Of any number
// of concurrent spenders on any hosts, one gets ok.
func (s *Store) SpendTicket(ctx context.Context, requestKey string, now time.Time) (string, bool, error) {
	var token string
	err := s.pool.QueryRow(ctx, `UPDATE tickets SET spent_at = `+at(3)+`, spent_host = $2
		WHERE id = (SELECT id FROM tickets
		            WHERE request_key = $1 AND host = $2 AND spent_at IS NULL AND expires_at > `+at(3)+`
		            ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
		  AND spent_at IS NULL
		RETURNING approval_token`, requestKey, s.host, s.off(now)).Scan(&token)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("spend ticket: %w", err)
	}
	return token, true, nil
}

// CleanupExpired marks this host's requests past their expiry expired and
// returns them, oldest first.
func (s *Store) CleanupExpired(ctx context.Context, now time.Time) ([]approvals.Pending, error) {
	var out []approvals.Pending
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `UPDATE pending SET status = 'expired'
			WHERE host = $1 AND status = 'pending' AND expires_at < `+at(2)+`
			RETURNING `+pendingColumns("status"), s.host, s.off(now))
		if err != nil {
			return err
		}
		if out, err = collectPending(rows); err != nil {
			return err
		}
		toks := make([]string, len(out))
		for i, p := range out {
			toks[i] = p.Token
		}
		return notify(ctx, tx, toks...)
	})
	if err != nil {
		return nil, fmt.Errorf("cleanup expired: %w", err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// Recurrence counts the identity's requests of a class on every host.
func (s *Store) Recurrence(ctx context.Context, channel, sender, capabilityClass string) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT COUNT(*) FROM pending
		WHERE channel = $1 AND sender_id = $2 AND capability_class = $3`, channel, sender, capabilityClass).Scan(&n); err != nil {
		return 0, fmt.Errorf("count recurrence: %w", err)
	}
	return n, nil
}
