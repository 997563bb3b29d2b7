package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
)

// Telegram is one channel's bot (seed 002, chapter 7): it sends each new
// card to the chat with the buttons approve:TOKEN and reject:TOKEN,
// long-polls getUpdates, resolves a button's callback as the identity the
// clicker is paired with (or, unpaired, as the channel and their
// Telegram id, which the registry then refuses unless that is the
// requester), replies with the outcome and edits the card to show it,
// also when the request was answered elsewhere.
type Telegram struct {
	// Channel is the channel's name in the policy.
	Channel string
	// Token is the bot token. It is never logged, audited or shown: errors
	// that would carry it (the API's URL holds it) are scrubbed.
	Token  string
	ChatID int64
	// APIURL is the Bot API's base URL (policy.DefaultTelegramAPI when
	// empty); tests point it at a fake server.
	APIURL string
	// Client makes the API calls; nil means one that uses no proxy.
	Client *http.Client
	// PollTimeout is getUpdates' long-poll timeout (default 25 s).
	PollTimeout time.Duration
	// Retry is the pause after a failed call (default 2 s, doubling up to
	// a minute).
	Retry time.Duration

	mu    sync.Mutex
	state tgState
	srv   *Server
}

// tgState is what the bot keeps across restarts (telegram/CHANNEL.json in
// the state directory): the next update to read, so no button press is
// handled twice, and the cards it sent, so none is sent or edited twice.
type tgState struct {
	Offset int64             `json:"offset"`
	Cards  map[string]tgCard `json:"cards"`
}

type tgCard struct {
	MessageID int64     `json:"message_id"`
	Sent      time.Time `json:"sent"`
	// Shown is the status the message shows: pending until it is edited.
	Shown approvals.Status `json:"shown"`
}

// TelegramFromPolicy builds the bot of a telegram channel, reading its
// token from token_file (which only its owner may read) or token_env.
func TelegramFromPolicy(c policy.Channel, getenv func(string) string) (*Telegram, error) {
	if c.Telegram == nil {
		return nil, fmt.Errorf("channel %s is not a telegram channel", c.Name)
	}
	tok, err := readBotToken(c.Telegram, getenv)
	if err != nil {
		return nil, fmt.Errorf("channel %s: %w", c.Name, err)
	}
	return &Telegram{Channel: c.Name, Token: tok, ChatID: c.Telegram.ChatID, APIURL: c.Telegram.APIURL}, nil
}

func readBotToken(tg *policy.Telegram, getenv func(string) string) (string, error) {
	if tg.TokenEnv != "" {
		tok := strings.TrimSpace(getenv(tg.TokenEnv))
		if tok == "" {
			return "", fmt.Errorf("the bot token's variable %s is not set", tg.TokenEnv)
		}
		return tok, nil
	}
	if err := ownerOnly(tg.TokenFile); err != nil {
		return "", err
	}
	b, err := readFile(tg.TokenFile)
	if err != nil {
		return "", fmt.Errorf("cannot read the bot token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" || strings.ContainsAny(tok, " \n/") {
		return "", fmt.Errorf("%s holds no bot token", tg.TokenFile)
	}
	return tok, nil
}

func (tg *Telegram) statePath() string {
	return filepath.Join(tg.srv.cfg.StateDir, telegramDir, tg.Channel+".json")
}

// attach binds the bot to its server (Start calls it).
func (tg *Telegram) attach(s *Server) {
	tg.srv = s
	if tg.PollTimeout <= 0 {
		tg.PollTimeout = 25 * time.Second
	}
	if tg.Retry <= 0 {
		tg.Retry = 2 * time.Second
	}
}

// run polls updates and keeps the chat's cards in step with the
// registry, until ctx is done.
func (tg *Telegram) run(ctx context.Context, s *Server) {
	if err := updateJSON(tg.statePath(), &tg.state, func() error { return nil }); err != nil {
		s.cfg.Log.Error("telegram: read state", "channel", tg.Channel, "err", err)
	}
	if tg.state.Cards == nil {
		tg.state.Cards = map[string]tgCard{}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tg.syncLoop(ctx)
	}()
	tg.pollLoop(ctx)
	wg.Wait()
}

func (tg *Telegram) save() {
	tg.mu.Lock()
	st := tg.state
	b, err := json.MarshalIndent(st, "", "  ")
	tg.mu.Unlock()
	if err == nil {
		err = writeFileAtomic(tg.statePath(), append(b, '\n'))
	}
	if err != nil {
		tg.srv.cfg.Log.Error("telegram: save state", "channel", tg.Channel, "err", err)
	}
}

func (tg *Telegram) pollLoop(ctx context.Context) {
	pause := tg.Retry
	for ctx.Err() == nil {
		tg.mu.Lock()
		offset := tg.state.Offset
		tg.mu.Unlock()
		var updates []tgUpdate
		err := tg.call(ctx, "getUpdates", map[string]any{
			"offset": offset, "timeout": int(tg.PollTimeout.Seconds()),
			"allowed_updates": []string{"message", "callback_query"},
		}, &updates)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			tg.srv.cfg.Log.Warn("telegram: getUpdates failed; retrying", "channel", tg.Channel, "err", err, "in", pause)
			select {
			case <-ctx.Done():
				return
			case <-time.After(pause):
			}
			pause = min(2*pause, time.Minute)
			continue
		}
		pause = tg.Retry
		for _, u := range updates {
			// An update is handled to its end even while serve stops.
			tg.Handle(context.WithoutCancel(ctx), u)
			tg.mu.Lock()
			if u.UpdateID >= tg.state.Offset {
				tg.state.Offset = u.UpdateID + 1
			}
			tg.mu.Unlock()
			tg.save()
		}
	}
}

// syncLoop sends the cards of new requests and edits those answered.
func (tg *Telegram) syncLoop(ctx context.Context) {
	for {
		changed := tg.srv.hub.changed()
		tg.sync(ctx)
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-time.After(tg.srv.cfg.Refresh):
		}
	}
}

func (tg *Telegram) sync(ctx context.Context) {
	now := tg.srv.cfg.Now()
	// With a shared state, the requests its paired identities made on
	// the other hosts too: those its buttons can answer.
	list, err := listRequests(ctx, tg.srv.cfg.Registry, tg.srv.cfg.Fleet, approvals.ListOptions{IncludeResolved: true, Limit: pendingLimit + historyLimit},
		now, pairedIdentities(tg.srv.cfg.StateDir, tg.Channel)...)
	if err != nil {
		if ctx.Err() == nil {
			tg.srv.cfg.Log.Error("telegram: read requests", "err", err)
		}
		return
	}
	for _, p := range list {
		st := p.StatusAt(now)
		tg.mu.Lock()
		card, sent := tg.state.Cards[p.Token]
		tg.mu.Unlock()
		switch {
		case !sent && st == approvals.StatusPending:
			tg.sendCard(ctx, p)
		case sent && card.Shown == approvals.StatusPending && st != approvals.StatusPending:
			tg.showOutcome(ctx, p, st)
		}
	}
	// Forget cards answered a day ago.
	tg.mu.Lock()
	for tok, c := range tg.state.Cards {
		if c.Shown != approvals.StatusPending && now.Sub(c.Sent) > 24*time.Hour {
			delete(tg.state.Cards, tok)
		}
	}
	tg.mu.Unlock()
}

// cardText is the card as the chat shows it: its lines (escaped and
// redacted as every channel's are), whom it is for, the host that parked
// it (with a shared state) and its id. It is sent as plain text: no
// markup of Telegram's is read in it.
func cardText(p approvals.Pending) string {
	m := gate.CardMessage(p)
	on := ""
	if p.Host != "" {
		on = " on " + approvals.Printable(p.Host)
	}
	return strings.Join(m.Card, "\n") + "\nfor " + idString(p.Requester()) + on + " · id " + p.Token
}

func (tg *Telegram) sendCard(ctx context.Context, p approvals.Pending) {
	card := p.Card()
	var row []map[string]string
	for _, b := range card.Buttons() {
		row = append(row, map[string]string{"text": b.Text, "callback_data": b.Data})
	}
	var msg tgMessage
	start := time.Now()
	err := tg.call(ctx, "sendMessage", map[string]any{
		"chat_id": tg.ChatID, "text": cardText(p),
		"reply_markup": map[string]any{"inline_keyboard": [][]map[string]string{row}},
	}, &msg)
	tg.record(ctx, p.Token, time.Since(start), err)
	if err != nil {
		// The next sync tries again, while the request waits.
		tg.srv.cfg.Log.Warn("telegram: card not sent; retrying", "channel", tg.Channel, "id", p.Token, "err", err)
		return
	}
	tg.mu.Lock()
	tg.state.Cards[p.Token] = tgCard{MessageID: msg.MessageID, Sent: tg.srv.cfg.Now().UTC(), Shown: approvals.StatusPending}
	tg.mu.Unlock()
	tg.save()
}

// record writes channel.delivered or channel.failed for a card sent.
func (tg *Telegram) record(ctx context.Context, token string, d time.Duration, err error) {
	if tg.srv.cfg.Audit == nil {
		return
	}
	recordDelivery(ctx, tg.srv, token, tg.Channel, "telegram", d, err, 0)
}

// showOutcome edits a card to say how it ended and removes its buttons.
func (tg *Telegram) showOutcome(ctx context.Context, p approvals.Pending, st approvals.Status) {
	tg.mu.Lock()
	card := tg.state.Cards[p.Token]
	tg.mu.Unlock()
	text := cardText(p) + "\n— " + outcomeLine(p, st)
	err := tg.call(ctx, "editMessageText", map[string]any{
		"chat_id": tg.ChatID, "message_id": card.MessageID, "text": text,
		"reply_markup": map[string]any{"inline_keyboard": [][]map[string]string{}},
	}, nil)
	if err != nil && !strings.Contains(err.Error(), "message is not modified") {
		tg.srv.cfg.Log.Warn("telegram: edit card", "id", p.Token, "err", err)
		return
	}
	tg.mu.Lock()
	card.Shown = st
	tg.state.Cards[p.Token] = card
	tg.mu.Unlock()
	tg.save()
}

func outcomeLine(p approvals.Pending, st approvals.Status) string {
	line := string(st)
	if p.DecisionBy != nil {
		line += " by " + idString(*p.DecisionBy)
	}
	if p.DecisionAt != nil {
		line += " at " + p.DecisionAt.Local().Format("15:04:05")
	}
	return line
}

// Telegram's objects, as far as the bot reads them.
type tgUpdate struct {
	UpdateID      int64      `json:"update_id"`
	Message       *tgMessage `json:"message,omitempty"`
	CallbackQuery *tgQuery   `json:"callback_query,omitempty"`
}

type tgMessage struct {
	MessageID int64   `json:"message_id"`
	From      *tgUser `json:"from,omitempty"`
	Chat      tgChat  `json:"chat"`
	Text      string  `json:"text,omitempty"`
}

type tgQuery struct {
	ID      string     `json:"id"`
	From    tgUser     `json:"from"`
	Message *tgMessage `json:"message,omitempty"`
	Data    string     `json:"data,omitempty"`
}

type tgUser struct {
	ID int64 `json:"id"`
}

type tgChat struct {
	ID int64 `json:"id"`
}

// Dispatch is what handling one update did (seed 002's dispatcher
// result): OK with the decision, or the reason it was not answered.
type Dispatch struct {
	OK       bool
	Reason   string // unknown_callback, approval_failed, ignored_chat, paired, pairing_failed, ignored
	Decision string
	Token    string
	Err      string
}

// Handle dispatches one update. A button's callback comes first: it is
// resolved whoever pressed it, as the identity they are paired with or
// else as (channel, their id), and the registry's fourth check refuses
// anyone who is not the requester. A message is read only for a pairing
// code. Updates from another chat than the configured one are ignored.
func (tg *Telegram) Handle(ctx context.Context, u tgUpdate) Dispatch {
	log := tg.srv.cfg.Log
	switch {
	case u.CallbackQuery != nil:
		q := u.CallbackQuery
		if q.Message == nil || q.Message.Chat.ID != tg.ChatID {
			log.Info("telegram: callback from another chat ignored", "channel", tg.Channel)
			return Dispatch{Reason: "ignored_chat"}
		}
		return tg.callback(ctx, q)
	case u.Message != nil:
		m := u.Message
		if m.Chat.ID != tg.ChatID || m.From == nil {
			log.Info("telegram: message from another chat ignored", "channel", tg.Channel)
			return Dispatch{Reason: "ignored_chat"}
		}
		return tg.message(ctx, m)
	}
	return Dispatch{Reason: "ignored"}
}

func (tg *Telegram) callback(ctx context.Context, q *tgQuery) Dispatch {
	log := tg.srv.cfg.Log
	d, token, err := approvals.ParseCallback(q.Data)
	if err != nil {
		log.Warn("telegram: unknown callback data", "channel", tg.Channel, "data", approvals.Printable(q.Data))
		tg.answerQuery(ctx, q.ID, "Unknown button")
		return Dispatch{Reason: "unknown_callback", Err: err.Error()}
	}
	by := tg.identityOf(q.From.ID)
	var (
		p     approvals.Pending
		label string
	)
	if d == approvals.Approve {
		var res gate.Approved
		// The paired identity's request, approved as this Telegram
		// account: an unpaired account answers only for itself, and so
		// approves nothing.
		res, err = tg.srv.cfg.Resolver.Approve(ctx, token, by, gate.ApproveOptions{Via: tg.account(q.From.ID)})
		p, label = res.Pending, "Approved"
	} else {
		p, err = tg.srv.cfg.Resolver.Deny(ctx, token, by)
		label = "Rejected"
	}
	if err != nil {
		msg := "Not answered: " + approvals.Printable(err.Error())
		tg.answerQuery(ctx, q.ID, msg)
		tg.reply(ctx, q.Message.MessageID, msg)
		log.Info("telegram: answer refused", "channel", tg.Channel, "id", token, "by", idString(by), "err", err)
		return Dispatch{Reason: "approval_failed", Token: token, Err: err.Error()}
	}
	log.Info("telegram: request answered", "channel", tg.Channel, "id", p.Token, "decision", label, "by", idString(by))
	tg.answerQuery(ctx, q.ID, label)
	tg.reply(ctx, q.Message.MessageID, label+": "+summary(p))
	tg.srv.hub.kick()
	return Dispatch{OK: true, Decision: strings.ToLower(label), Token: p.Token}
}

// account is a Telegram user's own identity: the channel and the user id.
func (tg *Telegram) account(user int64) approvals.Identity {
	return approvals.Identity{Channel: tg.Channel, Sender: strconv.FormatInt(user, 10)}
}

// identityOf is whose requests a Telegram user answers: the identity it is
// paired with, or its own account.
func (tg *Telegram) identityOf(user int64) approvals.Identity {
	if id, ok := pairedIdentity(tg.srv.cfg.StateDir, tg.Channel, user); ok {
		return id
	}
	return approvals.Identity{Channel: tg.Channel, Sender: strconv.FormatInt(user, 10)}
}

func (tg *Telegram) message(ctx context.Context, m *tgMessage) Dispatch {
	code, ok := pairingCodeIn(m.Text)
	if !ok {
		return Dispatch{Reason: "ignored"}
	}
	id, err := consumePairing(tg.srv.cfg.StateDir, tg.Channel, code, m.From.ID, tg.srv.cfg.Now())
	if err != nil {
		tg.reply(ctx, m.MessageID, "Not paired: "+err.Error())
		tg.srv.cfg.Log.Warn("telegram: pairing refused", "channel", tg.Channel, "err", err)
		return Dispatch{Reason: "pairing_failed", Err: err.Error()}
	}
	tg.reply(ctx, m.MessageID, "Paired: your buttons here now answer the requests of "+idString(id)+".")
	tg.srv.cfg.Log.Info("telegram: paired", "channel", tg.Channel, "identity", idString(id))
	return Dispatch{OK: true, Reason: "paired"}
}

func (tg *Telegram) answerQuery(ctx context.Context, id, text string) {
	if err := tg.call(ctx, "answerCallbackQuery", map[string]any{"callback_query_id": id, "text": truncate(text, 190)}, nil); err != nil {
		tg.srv.cfg.Log.Warn("telegram: answerCallbackQuery", "err", err)
	}
}

func (tg *Telegram) reply(ctx context.Context, to int64, text string) {
	if err := tg.call(ctx, "sendMessage", map[string]any{
		"chat_id": tg.ChatID, "text": text,
		"reply_parameters": map[string]any{"message_id": to, "allow_sending_without_reply": true},
	}, nil); err != nil {
		tg.srv.cfg.Log.Warn("telegram: reply", "err", err)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// call invokes a Bot API method with a JSON body and decodes its result.
// Its errors never hold the bot token.
func (tg *Telegram) call(ctx context.Context, method string, params any, result any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return err
	}
	base := tg.APIURL
	if base == "" {
		base = policy.DefaultTelegramAPI
	}
	timeout := 15 * time.Second
	if method == "getUpdates" {
		timeout += tg.PollTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/bot"+tg.Token+"/"+method, bytes.NewReader(body))
	if err != nil {
		return tg.scrub(err)
	}
	req.Header.Set("Content-Type", "application/json")
	client := tg.Client
	if client == nil {
		client = &http.Client{Transport: &http.Transport{Proxy: nil},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("%s: %w", method, tg.scrub(err))
	}
	defer resp.Body.Close()
	var out struct {
		OK          bool            `json:"ok"`
		Result      json.RawMessage `json:"result"`
		Description string          `json:"description"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&out); err != nil {
		return fmt.Errorf("%s: %s: bad answer", method, resp.Status)
	}
	if !out.OK {
		return tg.scrub(fmt.Errorf("%s: %s", method, approvals.Printable(out.Description)))
	}
	if result != nil {
		if err := json.Unmarshal(out.Result, result); err != nil {
			return fmt.Errorf("%s: bad result: %w", method, err)
		}
	}
	return nil
}

// scrub removes the bot token from an error's text.
func (tg *Telegram) scrub(err error) error {
	if err == nil || tg.Token == "" || !strings.Contains(err.Error(), tg.Token) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), tg.Token, "<bot token>"))
}
