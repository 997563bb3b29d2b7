package serve

import (
	"context"
	"log/slog"
	"time"

	"github.com/mnemos-dev/mnemos/audit"
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
