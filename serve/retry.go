package serve

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
)

// recordDelivery writes channel.delivered or channel.failed for a card
// serve delivered (attempt counts a webhook's retries; 0 for a bot's
// card).
func recordDelivery(ctx context.Context, s *Server, token, channel, kind string, d time.Duration, err error, attempt int) {
	ev := audit.KindChannelDelivered
	attrs := []slog.Attr{
		slog.String("id", token), slog.String("channel", channel), slog.String("kind", kind),
		slog.Int64("duration_ms", d.Milliseconds()), slog.String("by", "serve"),
	}
	if attempt > 0 {
		attrs = append(attrs, slog.Int("attempt", attempt))
	}
	if err != nil {
		ev = audit.KindChannelFailed
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	if aerr := s.cfg.Audit.Append(context.WithoutCancel(ctx), ev, attrs...); aerr != nil {
		s.cfg.Log.Error("cannot write the audit log", "err", aerr)
	}
}

// Retrier delivers again, with backoff, the cards that the process which
// parked a request failed to deliver to a webhook: it reads the audit
// log's channel.failed events and tries until the channel takes the card
// or the request is answered or expires. Each try is recorded
// (channel.delivered or channel.failed, by serve, with its attempt).
type Retrier struct {
	// Channels are the webhook channels of the policy.
	Channels []policy.Channel
	// Events returns the audit log's last n events (audit.Log.Tail).
	Events func(n int) ([]audit.Record, error)
	// Deliverer posts the card (the zero value is ready).
	Deliverer approvals.Deliverer
	// First is the pause before the first retry (default 2 s); each
	// next one doubles it, up to Max (default 1 min).
	First, Max time.Duration
	// Every is how often the log is read (default 1 s).
	Every time.Duration

	mu      sync.Mutex
	pending map[retryKey]*retryState
}

type retryKey struct{ id, channel string }

type retryState struct {
	attempts int
	next     time.Time
	done     bool
}

// retryWindow is how many of the log's last events are read.
const retryWindow = 2000

func (rt *Retrier) run(ctx context.Context, s *Server) {
	if rt.First <= 0 {
		rt.First = 2 * time.Second
	}
	if rt.Max <= 0 {
		rt.Max = time.Minute
	}
	if rt.Every <= 0 {
		rt.Every = time.Second
	}
	rt.pending = map[retryKey]*retryState{}
	t := time.NewTicker(rt.Every)
	defer t.Stop()
	for {
		rt.scan(s)
		rt.retry(ctx, s)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// scan reads the failures to retry from the log: a webhook's failure
// recorded by the process that parked the request starts a series; the
// tries of serve recorded after it (even by an earlier serve) count, and
// a delivery ends it.
func (rt *Retrier) scan(s *Server) {
	recs, err := rt.Events(retryWindow)
	if err != nil {
		s.cfg.Log.Error("webhook retries: read the audit log", "err", err)
		return
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, r := range recs {
		if r.Kind != audit.KindChannelFailed && r.Kind != audit.KindChannelDelivered {
			continue
		}
		if kind, _ := r.Attrs["kind"].(string); kind != "webhook" {
			continue
		}
		id, _ := r.Attrs["id"].(string)
		ch, _ := r.Attrs["channel"].(string)
		by, _ := r.Attrs["by"].(string)
		k := retryKey{id, ch}
		st := rt.pending[k]
		switch {
		case r.Kind == audit.KindChannelDelivered:
			if st != nil {
				st.done = true
			} else if by == "" {
				rt.pending[k] = &retryState{done: true}
			}
		case by == "" && st == nil:
			rt.pending[k] = &retryState{next: r.Time.Add(rt.First)}
		case by == "serve" && st != nil && !st.done:
			if n := attemptOf(r); n > st.attempts {
				st.attempts = n
				st.next = r.Time.Add(rt.backoff(n))
			}
		}
	}
}

func attemptOf(r audit.Record) int {
	if n, ok := r.Attrs["attempt"].(json.Number); ok {
		v, _ := n.Int64()
		return int(v)
	}
	return 0
}

func (rt *Retrier) backoff(attempts int) time.Duration {
	d := rt.First
	for i := 0; i < attempts && d < rt.Max; i++ {
		d *= 2
	}
	return min(d, rt.Max)
}

func (rt *Retrier) retry(ctx context.Context, s *Server) {
	now := s.cfg.Now()
	rt.mu.Lock()
	var due []retryKey
	for k, st := range rt.pending {
		if !st.done && !now.Before(st.next) {
			due = append(due, k)
		}
	}
	rt.mu.Unlock()
	for _, k := range due {
		p, err := s.cfg.Registry.Get(ctx, k.id)
		ch, known := rt.channel(k.channel)
		if err != nil || !known || p.StatusAt(now) != approvals.StatusPending {
			// Answered, expired, gone, or no longer a channel: no more tries.
			rt.mu.Lock()
			rt.pending[k].done = true
			rt.mu.Unlock()
			continue
		}
		rt.mu.Lock()
		st := rt.pending[k]
		st.attempts++
		attempt := st.attempts
		st.next = now.Add(rt.backoff(attempt))
		rt.mu.Unlock()
		d := rt.Deliverer.Deliver(ctx, []policy.Channel{ch}, gate.CardMessage(p))[0]
		var derr error
		if !d.OK() {
			derr = errors.New(d.Err)
			s.cfg.Log.Warn("webhook retry failed", "channel", k.channel, "id", k.id, "attempt", attempt, "err", d.Err)
		} else {
			rt.mu.Lock()
			st.done = true
			rt.mu.Unlock()
			s.cfg.Log.Info("webhook retry delivered", "channel", k.channel, "id", k.id, "attempt", attempt)
		}
		recordDelivery(ctx, s, k.id, k.channel, "webhook", d.Duration, derr, attempt)
	}
}

func (rt *Retrier) channel(name string) (policy.Channel, bool) {
	for _, c := range rt.Channels {
		if c.Name == name && c.Webhook != "" {
			return c, true
		}
	}
	return policy.Channel{}, false
}
