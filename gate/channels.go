package gate

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"sync"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/policy"
)

// deliver sends the card of a new pending request to the channels of the
// configured policy (its system and user layers: a project policy cannot
// add one, and neither can the --policy file, which only tightens) and
// records channel.delivered or channel.failed for each. A failed delivery
// is reported in dec.Deliveries and changes nothing else: the request
// stays an ask. Only a failure to write the audit log is an error.
func (g *Gate) deliver(ctx context.Context, p approvals.Pending, dec *Decision) error {
	// A telegram channel's bot and an email channel's mail are mnemos
	// serve's: it sends the card itself (policy.Channel.Direct says why).
	var chans []policy.Channel
	for _, c := range g.cfg.Policy.Channels {
		if c.Direct() {
			chans = append(chans, c)
		}
	}
	if len(chans) == 0 {
		return nil
	}
	dec.Deliveries = approvals.Deliverer{}.Deliver(ctx, chans, CardMessage(p))
	for _, d := range dec.Deliveries {
		kind := audit.KindChannelDelivered
		attrs := []slog.Attr{
			slog.String("id", p.Token),
			slog.String("channel", d.Channel),
			slog.String("kind", d.Kind),
			slog.Int64("duration_ms", d.Duration.Milliseconds()),
		}
		if !d.OK() {
			kind = audit.KindChannelFailed
			attrs = append(attrs, slog.String("error", d.Err))
		}
		if err := g.cfg.Audit.Append(ctx, kind, attrs...); err != nil {
			return err
		}
	}
	return nil
}

// CardMessage is what a channel receives for a pending request. It holds
// the text the audit log would write: every string redacted as the audit
// log redacts it (audit.RedactString, and audit.RedactArgv for the argv),
// so a channel learns no secret the log does not.
func CardMessage(p approvals.Pending) approvals.Message {
	card := p.Card()
	lines := append(approvals.RenderCard(card), cardExtras(p, false)...)
	for i, l := range lines {
		lines[i] = audit.RedactString(l)
	}
	id := p.Requester()
	return approvals.Message{
		Token:           p.Token,
		Card:            lines,
		Form:            approvals.Form(card.Recurrence),
		Buttons:         card.Buttons(),
		Requester:       id,
		Argv:            audit.RedactArgv(p.Details.Argv),
		Cwd:             audit.RedactString(p.Details.Cwd),
		CapabilityClass: audit.RedactString(p.CapabilityClass),
		Reversibility:   p.Details.Reversibility,
		CreatedAt:       p.CreatedAt,
		ExpiresAt:       p.ExpiresAt,
		Answer:          "mnemos approvals answer --channel " + shellWord(id.Channel) + " --sender " + shellWord(id.Sender) + " DATA",
	}
}

var plainShellWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`) })

// shellWord quotes s for a POSIX shell where needed.
func shellWord(s string) string {
	if plainShellWord().MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
