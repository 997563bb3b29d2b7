package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
)

const (
	botToken = "123456:SECRET-bot-token-do-not-leak"
	chatID   = int64(4242)
	tgName   = "phone"
)

type sentMsg struct {
	Method    string
	Params    map[string]any
	MessageID int64
}

// fakeBot is the Bot API as far as the bot uses it, on loopback.
type fakeBot struct {
	srv     *httptest.Server
	mu      sync.Mutex
	updates []tgUpdate
	next    int64
	calls   []sentMsg
	offsets []int64
	down    bool
	wake    chan struct{}
}

func newFakeBot(t *testing.T) *fakeBot {
	b := &fakeBot{next: 100, wake: make(chan struct{}, 1)}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *fakeBot) serve(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	down := b.down
	b.mu.Unlock()
	if down {
		// A network failure: the connection drops.
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
				return
			}
		}
	}
	prefix := "/bot" + botToken + "/"
	if !strings.HasPrefix(r.URL.Path, prefix) {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"ok":false,"description":"Unauthorized"}`))
		return
	}
	method := strings.TrimPrefix(r.URL.Path, prefix)
	var params map[string]any
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	_ = dec.Decode(&params)
	reply := func(result any) {
		json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
	}
	switch method {
	case "getUpdates":
		off, _ := params["offset"].(json.Number).Int64()
		b.mu.Lock()
		b.offsets = append(b.offsets, off)
		b.mu.Unlock()
		deadline := time.After(300 * time.Millisecond)
		for {
			b.mu.Lock()
			var out []tgUpdate
			for _, u := range b.updates {
				if u.UpdateID >= off {
					out = append(out, u)
				}
			}
			if len(out) > 0 || deadline == nil {
				b.mu.Unlock()
				if out == nil {
					out = []tgUpdate{}
				}
				reply(out)
				return
			}
			b.mu.Unlock()
			select {
			case <-b.wake:
			case <-deadline:
				deadline = nil
			case <-r.Context().Done():
				return
			}
		}
	case "sendMessage", "editMessageText", "answerCallbackQuery":
		b.mu.Lock()
		b.next++
		id := b.next
		b.calls = append(b.calls, sentMsg{Method: method, Params: params, MessageID: id})
		b.mu.Unlock()
		if method == "sendMessage" {
			reply(map[string]any{"message_id": id, "chat": map[string]any{"id": chatID}, "text": params["text"]})
			return
		}
		reply(true)
	default:
		w.Write([]byte(`{"ok":false,"description":"Not Found: method not found"}`))
	}
}

// push queues an update for getUpdates.
func (b *fakeBot) push(u tgUpdate) {
	b.mu.Lock()
	b.next++
	u.UpdateID = b.next
	b.updates = append(b.updates, u)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// wait returns the first call of method whose text matches re.
func (b *fakeBot) wait(t *testing.T, method, re string) sentMsg {
	t.Helper()
	rx := regexp.MustCompile(re)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b.mu.Lock()
		for _, c := range b.calls {
			if c.Method == method && rx.MatchString(callText(c)) {
				b.mu.Unlock()
				return c
			}
		}
		b.mu.Unlock()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t.Fatalf("no %s matching %q; calls: %+v", method, re, b.calls)
	return sentMsg{}
}

func (b *fakeBot) count(method, re string) int {
	rx := regexp.MustCompile(re)
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, c := range b.calls {
		if c.Method == method && rx.MatchString(callText(c)) {
			n++
		}
	}
	return n
}

func callText(c sentMsg) string {
	raw, _ := json.Marshal(c.Params)
	return string(raw)
}

func (b *fakeBot) bot() *Telegram {
	return &Telegram{Channel: tgName, Token: botToken, ChatID: chatID, APIURL: b.srv.URL, PollTimeout: time.Second, Retry: 20 * time.Millisecond}
}

func callback(from int64, data string, msgID int64) tgUpdate {
	return tgUpdate{CallbackQuery: &tgQuery{ID: "q" + data, From: tgUser{ID: from}, Data: data,
		Message: &tgMessage{MessageID: msgID, Chat: tgChat{ID: chatID}}}}
}

func message(from, chat int64, text string) tgUpdate {
	return tgUpdate{Message: &tgMessage{MessageID: 1, From: &tgUser{ID: from}, Chat: tgChat{ID: chat}, Text: text}}
}

// telegramFixture runs serve with a bot talking to a fake Bot API.
func telegramFixture(t *testing.T) (*fixture, *fakeBot, *Telegram) {
	fb := newFakeBot(t)
	tg := fb.bot()
	f := newFixture(t, func(c *Config) { c.Telegram = []*Telegram{tg}; c.Refresh = 50 * time.Millisecond })
	return f, fb, tg
}

// pair pairs Telegram user 7 with dev through the bot.
func pair(t *testing.T, f *fixture, fb *fakeBot) {
	t.Helper()
	code, _, err := NewPairingCode(f.paths.StateDir, tgName, dev, time.Now(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	fb.push(message(7, chatID, "/pair "+code))
	fb.wait(t, "sendMessage", `Paired: your buttons here now answer the requests of cli:dev`)
}

var cardToken = regexp.MustCompile(`approve:([a-z2-7]{26})`)

// TestTelegramApproveFromPhone: the card goes to the chat with its two
// buttons; a paired user's click approves, is confirmed, and the card is
// edited to say so.
func TestTelegramApproveFromPhone(t *testing.T) {
	f, fb, _ := telegramFixture(t)
	pair(t, f, fb)
	p := f.ask("touch", "notes.txt")
	card := fb.wait(t, "sendMessage", `May I write\?\\n.*touch notes.txt`)
	if !strings.Contains(callText(card), `"callback_data":"approve:`+p.Token+`"`) || !strings.Contains(callText(card), `"callback_data":"reject:`+p.Token+`"`) {
		t.Fatalf("card without its buttons: %s", callText(card))
	}
	if c, _ := card.Params["chat_id"].(json.Number).Int64(); c != chatID {
		t.Fatalf("card sent to chat %d", c)
	}
	fb.push(callback(7, "approve:"+p.Token, card.MessageID))
	fb.wait(t, "answerCallbackQuery", `"text":"Approved"`)
	fb.wait(t, "sendMessage", `Approved: write touch notes.txt`)
	fb.wait(t, "editMessageText", `"message_id":`+itoa64(card.MessageID)+`.*approved by phone:7`)
	if st := f.status(p.Token); st != approvals.StatusApproved {
		t.Fatalf("status %s", st)
	}
	if n := fb.count("sendMessage", "May I write"); n != 1 {
		t.Fatalf("the card was sent %d times", n)
	}
}

// TestTelegramDispatcher covers seed 002's five dispatcher cases, a
// replay, a forged token, an unpaired clicker and another chat.
func TestTelegramDispatcher(t *testing.T) {
	f, fb, tg := telegramFixture(t)
	pair(t, f, fb)
	ctx := context.Background()

	// 1. approve: resolved approved, "Approved: ..." sent.
	a := f.park(dev, []string{"touch", "a"}, 0)
	if d := tg.Handle(ctx, callback(7, "approve:"+a.Token, 1)); !d.OK || d.Decision != "approved" {
		t.Fatalf("approve: %+v", d)
	}
	fb.wait(t, "sendMessage", `Approved: write touch a`)
	// 2. reject, symmetric.
	r := f.park(dev, []string{"touch", "r"}, 0)
	if d := tg.Handle(ctx, callback(7, "reject:"+r.Token, 1)); !d.OK || d.Decision != "rejected" || f.status(r.Token) != approvals.StatusRejected {
		t.Fatalf("reject: %+v", d)
	}
	fb.wait(t, "sendMessage", `Rejected: write touch r`)
	// 3. malformed data: unknown_callback, a warning.
	if d := tg.Handle(ctx, callback(7, "maybe:"+a.Token, 1)); d.OK || d.Reason != "unknown_callback" {
		t.Fatalf("malformed: %+v", d)
	}
	if !strings.Contains(f.log.String(), "unknown callback data") {
		t.Fatal("no warning for malformed data")
	}
	// 4. the registry's error goes back to the sender (here: a replay).
	if d := tg.Handle(ctx, callback(7, "approve:"+a.Token, 1)); d.OK || d.Reason != "approval_failed" {
		t.Fatalf("replay: %+v", d)
	}
	fb.wait(t, "sendMessage", `Not answered: approval already resolved`)
	// 5. a callback is dispatched before any pairing check: an unpaired
	// user answers for their own Telegram identity only, and a request
	// made as that identity is never approved by it (it may reject it).
	own := f.park(approvals.Identity{Channel: tgName, Sender: "99"}, []string{"touch", "own"}, 0)
	if d := tg.Handle(ctx, callback(99, "approve:"+own.Token, 1)); d.OK || !strings.Contains(d.Err, "never approved by its own requester's identity") {
		t.Fatalf("unpaired requester approving its own request: %+v", d)
	}
	if d := tg.Handle(ctx, callback(99, "reject:"+own.Token, 1)); !d.OK {
		t.Fatalf("unpaired requester rejecting its own request: %+v", d)
	}
	// A forged token.
	forged := "approve:" + strings.Repeat("a", 26)
	if d := tg.Handle(ctx, callback(7, forged, 1)); d.OK || !strings.Contains(d.Err, "unknown approval token") {
		t.Fatalf("forged: %+v", d)
	}
	// An unpaired clicker cannot answer dev's request.
	p := f.park(dev, []string{"touch", "p"}, 0)
	if d := tg.Handle(ctx, callback(666, "approve:"+p.Token, 1)); d.OK || !strings.Contains(d.Err, "only the requester") {
		t.Fatalf("unpaired clicker: %+v", d)
	}
	if f.status(p.Token) != approvals.StatusPending {
		t.Fatal("an unpaired clicker answered")
	}
	// Another chat is ignored, and nothing is said there.
	before := fb.count("sendMessage", ".")
	u := callback(7, "approve:"+p.Token, 1)
	u.CallbackQuery.Message.Chat.ID = 555
	if d := tg.Handle(ctx, u); d.Reason != "ignored_chat" || f.status(p.Token) != approvals.StatusPending {
		t.Fatalf("another chat: %+v", d)
	}
	if fb.count("sendMessage", ".") != before {
		t.Fatal("the bot answered another chat")
	}
}

// TestTelegramEditsCardAnsweredElsewhere: a card answered on the page or
// the command line is edited to say so, once.
func TestTelegramEditsCardAnsweredElsewhere(t *testing.T) {
	f, fb, _ := telegramFixture(t)
	p := f.ask("touch", "notes.txt")
	card := fb.wait(t, "sendMessage", `touch notes.txt`)
	if _, err := f.g.Deny(context.Background(), p.Token, dev); err != nil {
		t.Fatal(err)
	}
	fb.wait(t, "editMessageText", `"message_id":`+itoa64(card.MessageID)+`.*rejected by cli:dev`)
	time.Sleep(200 * time.Millisecond)
	if n := fb.count("editMessageText", "."); n != 1 {
		t.Fatalf("%d edits", n)
	}
}

// TestTelegramRestartAnswersNothingTwice: after a restart the bot asks
// for the updates after the last one handled and sends no card twice.
func TestTelegramRestartAnswersNothingTwice(t *testing.T) {
	f, fb, _ := telegramFixture(t)
	pair(t, f, fb)
	p := f.ask("touch", "notes.txt")
	card := fb.wait(t, "sendMessage", `touch notes.txt`)
	fb.push(callback(7, "approve:"+p.Token, card.MessageID))
	fb.wait(t, "sendMessage", `Approved: write touch notes.txt`)
	fb.wait(t, "editMessageText", `approved by phone:7`)
	f.shutdown()
	fb.mu.Lock()
	last := fb.updates[len(fb.updates)-1].UpdateID
	fb.offsets = nil
	fb.mu.Unlock()
	f.cfg.Telegram = []*Telegram{fb.bot()}
	f.start()
	q := f.ask("touch", "other.txt")
	fb.wait(t, "sendMessage", `touch other.txt`)
	fb.mu.Lock()
	offsets := append([]int64(nil), fb.offsets...)
	fb.mu.Unlock()
	if len(offsets) == 0 || offsets[0] != last+1 {
		t.Fatalf("after the restart getUpdates asked from %v, want %d", offsets, last+1)
	}
	if n := fb.count("sendMessage", "May I write.*touch notes.txt"); n != 1 {
		t.Fatalf("the answered card was sent %d times", n)
	}
	if n := fb.count("sendMessage", "Approved:"); n != 1 {
		t.Fatalf("%d confirmations", n)
	}
	_ = q
}

// TestTelegramPairing: a code pairs once, only in the configured chat,
// until it expires; wrong codes void the open ones.
func TestTelegramPairing(t *testing.T) {
	f, fb, tg := telegramFixture(t)
	ctx := context.Background()
	code, _, err := NewPairingCode(f.paths.StateDir, tgName, dev, time.Now(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if d := tg.Handle(ctx, message(7, 555, code)); d.Reason != "ignored_chat" {
		t.Fatalf("another chat: %+v", d)
	}
	if d := tg.Handle(ctx, message(7, chatID, "hello")); d.Reason != "ignored" {
		t.Fatalf("chat text: %+v", d)
	}
	if d := tg.Handle(ctx, message(7, chatID, strings.ToLower(code))); !d.OK {
		t.Fatalf("pairing: %+v", d)
	}
	if id, ok := pairedIdentity(f.paths.StateDir, tgName, 7); !ok || id != dev {
		t.Fatalf("paired = %+v, %v", id, ok)
	}
	if d := tg.Handle(ctx, message(8, chatID, code)); d.OK {
		t.Fatal("a code paired twice")
	}
	// Wrong codes void the open ones.
	code2, _, _ := NewPairingCode(f.paths.StateDir, tgName, dev, time.Now(), rand.Reader)
	for i := 0; i < maxPairingFailures; i++ {
		tg.Handle(ctx, message(9, chatID, "/pair AAAAA-AAAAA"))
	}
	if d := tg.Handle(ctx, message(9, chatID, code2)); d.OK {
		t.Fatal("a code survived too many wrong ones")
	}
	// An expired code pairs nobody.
	old, _, _ := NewPairingCode(f.paths.StateDir, tgName, dev, time.Now().Add(-PairingTTL-time.Second), rand.Reader)
	if d := tg.Handle(ctx, message(10, chatID, old)); d.OK {
		t.Fatal("an expired code paired")
	}
	_ = fb
}

// TestSecurityTelegramTokenNeverLeaks: the bot token is in no log line,
// no audit event and no message, also when the network fails.
func TestSecurityTelegramTokenNeverLeaks(t *testing.T) {
	fb := newFakeBot(t)
	fb.down = true
	tg := fb.bot()
	f := newFixture(t, func(c *Config) { c.Telegram = []*Telegram{tg}; c.Refresh = 50 * time.Millisecond })
	p := f.ask("touch", "notes.txt")
	// The failures are logged and recorded; serve keeps going.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(f.log.String(), "getUpdates failed") || !strings.Contains(f.log.String(), "card not sent"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no failure logged:\n%s", f.log.String())
		}
	}
	fb.mu.Lock()
	fb.down = false
	fb.mu.Unlock()
	fb.wait(t, "sendMessage", `touch notes.txt`)
	f.shutdown()
	if strings.Contains(f.log.String(), botToken) || strings.Contains(f.log.String(), "SECRET") {
		t.Fatalf("the log holds the bot token:\n%s", f.log.String())
	}
	raw, err := os.ReadFile(f.paths.AuditFile)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("SECRET")) {
		t.Fatal("the audit log holds the bot token")
	}
	if !bytes.Contains(raw, []byte(`"channel.failed"`)) || !bytes.Contains(raw, []byte(`"channel.delivered"`)) {
		t.Fatalf("the card's failed and good deliveries are not recorded:\n%s", raw)
	}
	for _, c := range fb.calls {
		if strings.Contains(callText(c), "SECRET") {
			t.Fatalf("a message holds the bot token: %s", callText(c))
		}
	}
	// The error of a failed call names no token.
	tg.Token = botToken
	if err := tg.call(context.Background(), "getMe", nil, nil); err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("call error %v", err)
	}
	fb.srv.Close()
	if err := tg.call(context.Background(), "getMe", nil, nil); err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("network error %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(f.log.String()))
	for sc.Scan() {
		if strings.Contains(sc.Text(), "/bot") {
			t.Fatalf("a log line names the API path: %s", sc.Text())
		}
	}
	_ = p
}
