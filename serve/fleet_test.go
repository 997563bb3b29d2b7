package serve

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/approvals/pgstore"
	"github.com/mnemos-dev/mnemos/approvals/pgstore/pgtest"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/policy"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

var eve = approvals.Identity{Channel: "cli", Sender: "eve"}

// fleetDSN is a new migrated database on the test binary's PostgreSQL
// server (the test skips, saying so, without one).
func fleetDSN(t *testing.T) string {
	t.Helper()
	srv := pgtest.Shared(t)
	dsn := srv.DSN(srv.NewDatabase(t))
	if _, err := pgstore.Migrate(context.Background(), dsn, ""); err != nil {
		t.Fatal(err)
	}
	return dsn
}

// fleetHost is a fixture whose gate keeps its state in the database at
// dsn as host id (MNEMOS_HOST_ID), its serve configured as mnemos serve
// configures it for a shared state; started only when serving.
func fleetHost(t *testing.T, dsn, id string, serving bool, tweak ...func(*Config)) *fixture {
	t.Helper()
	pol := *policy.Default()
	pol.State = policy.State{Postgres: &policy.PostgresState{DSNEnv: "TEAM_DSN"}}
	env := map[string]string{"TEAM_DSN": dsn, "MNEMOS_HOST_ID": id}
	f := newGateFixture(t, &pol, func(k string) string { return env[k] }, append([]func(*Config){func(c *Config) {
		c.Fleet, c.Watch = true, nil
		c.Changes = c.Registry.(approvals.Waiter)
	}}, tweak...)...)
	if serving {
		f.start()
	}
	return f
}

// waitEvent reads server-sent events until one holds want (and none of
// unwanted), failing after 10 s.
func waitEvent(t *testing.T, events <-chan string, want string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the event stream ended before showing %q", want)
			}
			if strings.Contains(ev, want) {
				return ev
			}
		case <-timeout:
			t.Fatalf("no event showed %q within 10 s", want)
		}
	}
}

// TestSecurityFleetPage: host A parks a request of dev's and one of
// eve's; the page of dev's serve on host B shows dev's with its host
// and answers it through B's gate: the ticket is bound to host A (spent
// there, not on B), the approval is in B's audit log. Eve's request
// parked on A is neither shown on B's page nor answered by it; eve's
// request parked on B itself is shown as today, for eve to answer.
func TestSecurityFleetPage(t *testing.T) {
	dsn := fleetDSN(t)
	a := fleetHost(t, dsn, "host-a", false)
	b := fleetHost(t, dsn, "host-b", true)
	mine := a.ask("touch", "fleet.txt")
	if mine.Host != "host-a" {
		t.Fatalf("parked on %q", mine.Host)
	}
	hers := a.park(eve, []string{"touch", "eve-a.txt"}, time.Hour)
	local := b.park(eve, []string{"touch", "eve-b.txt"}, time.Hour)

	br := b.browser(true)
	page := text(br.get("/"))
	card := cardOf(t, page, mine.Token)
	if !strings.Contains(card, `<dd class="host">host-a</dd>`) {
		t.Errorf("the card does not name host-a:\n%s", card)
	}
	if !strings.Contains(card, `value="approve"`) {
		t.Errorf("dev's card on another host has no Approve button:\n%s", card)
	}
	if strings.Contains(page, hers.Token) {
		t.Errorf("eve's request parked on host A is on dev's page on host B")
	}
	if c := cardOf(t, page, local.Token); !strings.Contains(c, "Only cli:eve can answer") || strings.Contains(c, "<form") {
		t.Errorf("eve's request on host B:\n%s", c)
	}

	// A forged answer to eve's request on A: the gate refuses it.
	if flash := answerFlash(t, br, hers.Token, "approve"); !strings.Contains(flash, "Not answered") {
		t.Errorf("approving eve's request from dev's page: %q", flash)
	}
	if st := a.status(hers.Token); st != approvals.StatusPending {
		t.Errorf("eve's request after dev's page approved it: %s", st)
	}

	if flash := answerFlash(t, br, mine.Token, "approve"); !strings.Contains(flash, "Approved: ") {
		t.Fatalf("approving on host B: %q", flash)
	}
	if st := a.status(mine.Token); st != approvals.StatusApproved {
		t.Fatalf("after the click on host B: %s on host A", st)
	}
	ctx := context.Background()
	if _, ok, err := b.st.SpendTicket(ctx, mine.RequestKey, time.Now()); ok || err != nil {
		t.Errorf("host B spent the ticket of a request parked on host A (%v)", err)
	}
	if tok, ok, err := a.st.SpendTicket(ctx, mine.RequestKey, time.Now()); !ok || err != nil || tok != mine.Token {
		t.Errorf("host A cannot spend its ticket: %q %v %v", tok, ok, err)
	}
	if _, ok, _ := a.st.SpendTicket(ctx, mine.RequestKey, time.Now()); ok {
		t.Error("the ticket was spent twice")
	}
	recs, err := b.audit.Tail(50)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(recs, func(r audit.Record) bool {
		return r.Kind == "approval.approved" && r.Attrs["id"] == mine.Token && r.Attrs["sender"] == "dev"
	}) {
		t.Error("host B's audit log has no approval.approved for the request it approved")
	}
}

var flashRe = regexp.MustCompile(`<p class="flash"[^>]*>([^<]*)</p>`)

// answerFlash posts an answer as the page's form does and returns the
// message the next page shows.
func answerFlash(t *testing.T, br *browser, id, answer string) string {
	t.Helper()
	if resp := br.answer(id, answer); resp.StatusCode != 303 {
		t.Fatalf("answer %s: %s", answer, resp.Status)
	}
	m := flashRe.FindStringSubmatch(text(br.get("/")))
	if m == nil {
		t.Fatal("no message after the answer")
	}
	return m[1]
}

// cardOf is the card of request id on the page.
func cardOf(t *testing.T, page, id string) string {
	t.Helper()
	i := strings.Index(page, `id="req-`+id+`"`)
	if i < 0 {
		t.Fatalf("no card for %s on the page:\n%s", id, page)
	}
	j := strings.Index(page[i:], "</article>")
	if j < 0 {
		t.Fatalf("the card of %s does not end", id)
	}
	return page[i : i+j]
}

// TestFleetNotify: serve on host B learns of a request parked on host A,
// and of its answer there, by the database's notification: with the
// registry reread only every minute, the card still reaches B's open
// page at once, and leaves it when A answers.
func TestFleetNotify(t *testing.T) {
	dsn := fleetDSN(t)
	a := fleetHost(t, dsn, "host-a", false)
	b := fleetHost(t, dsn, "host-b", true, func(c *Config) { c.Refresh = time.Minute })
	events := openEvents(t, b.browser(true))
	<-events
	start := time.Now()
	p := a.ask("touch", "notified.txt")
	ev := waitEvent(t, events, p.Token)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the card reached host B's page after %v", d)
	}
	if !strings.Contains(ev, "host-a") {
		t.Errorf("the live card does not name host-a:\n%s", ev)
	}
	if _, err := a.g.Deny(context.Background(), p.Token, dev); err != nil {
		t.Fatal(err)
	}
	ev = waitEvent(t, events, "rejected")
	if strings.Contains(ev, `id="req-`+p.Token) {
		t.Errorf("the card stays after host A rejected it:\n%s", ev)
	}
	if !strings.Contains(ev, `<tr class="st-rejected">`) || !strings.Contains(ev, "<td>host-a</td>") {
		t.Errorf("the history does not show host A's rejection:\n%s", ev)
	}
}

// TestFleetTerminal: approvals watch on host B shows dev's request
// parked on host A, naming its host, learnt of by notification, and the
// key a approves it through B's gate.
func TestFleetTerminal(t *testing.T) {
	dsn := fleetDSN(t)
	a := fleetHost(t, dsn, "host-a", false)
	b := fleetHost(t, dsn, "host-b", false)
	// watch is a process of its own, with its own connection.
	st, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Host: "host-b"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tm := b.terminalWith(&Terminal{Identity: dev, Resolver: b.g, Registry: st, Changes: st, Fleet: true,
		Poll: 10 * time.Millisecond, Refresh: time.Minute})
	tm.wait("on every host sharing the state")
	tm.wait("waiting for new requests")
	p := a.ask("touch", "watched.txt")
	card := tm.wait("[q] quit? ")
	for _, want := range []string{"--- request " + p.Token, "host:      host-a\n"} {
		if !strings.Contains(card, want) {
			t.Errorf("the card lacks %q:\n%s", want, card)
		}
	}
	hers := a.park(eve, []string{"touch", "eve.txt"}, time.Hour)
	tm.press("a")
	tm.wait("approved " + p.Token)
	if st := a.status(p.Token); st != approvals.StatusApproved {
		t.Fatalf("after a on host B: %s", st)
	}
	tm.wait("waiting for new requests")
	if strings.Contains(tm.out.String(), hers.Token) {
		t.Error("eve's request on host A was shown on dev's terminal on host B")
	}
}

// TestShipsAudit: with a shared state serve ships the audit log at
// start, every ShipEvery and once more when it stops; a failure is
// logged once until shipping works again.
func TestShipsAudit(t *testing.T) {
	var (
		mu    sync.Mutex
		calls int
		fail  = true
	)
	ship := func(ctx context.Context) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if fail {
			return 0, errors.New("database away")
		}
		return 1, nil
	}
	f := newFixture(t, func(c *Config) { c.ShipAudit, c.ShipEvery = ship, 20*time.Millisecond })
	count := func() int { mu.Lock(); defer mu.Unlock(); return calls }
	for deadline := time.Now().Add(5 * time.Second); count() < 5; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("shipped %d times in 5 s", count())
		}
	}
	if n := strings.Count(f.log.String(), "cannot ship them"); n != 1 {
		t.Errorf("the failure was logged %d times, want once:\n%s", n, f.log.String())
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(f.log.String(), "audit events shipped again"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("recovery not logged:\n%s", f.log.String())
		}
	}
	before := count()
	f.shutdown()
	if count() == before {
		t.Error("nothing shipped on the way out")
	}
}

// TestMeasureCardToPage measures the time from a card's creation to its
// arrival on an open page (server-sent event), median over rounds:
// with the state in PostgreSQL, parked on host A and shown by host B's
// serve, learnt of by LISTEN/NOTIFY and, for comparison, by the reread
// alone (every 2 s, the default); with the state in SQLite, by the
// database's files watched (every 100 ms, the default). It asserts
// nothing about speed; MNEMOS_MEASURE=1 go test ./serve -run
// TestMeasureCardToPage -v runs it.
func TestMeasureCardToPage(t *testing.T) {
	if os.Getenv("MNEMOS_MEASURE") == "" {
		t.Skip("a measurement: set MNEMOS_MEASURE=1 to run it")
	}
	// Each card is created at a random moment of the period looked at
	// (jitter), not in step with it.
	measure := func(name string, rounds int, jitter time.Duration, ask, serving *fixture) time.Duration {
		events := openEvents(t, serving.browser(true))
		<-events
		var ds []time.Duration
		for i := range rounds {
			time.Sleep(rand.N(jitter))
			start := time.Now()
			p := ask.ask("touch", name+itoa64(int64(i)))
			waitEvent(t, events, p.Token)
			ds = append(ds, time.Since(start))
			if _, err := ask.g.Deny(context.Background(), p.Token, dev); err != nil {
				t.Fatal(err)
			}
		}
		slices.Sort(ds)
		return ds[len(ds)/2].Round(100 * time.Microsecond)
	}
	dsn := fleetDSN(t)
	a := fleetHost(t, dsn, "host-a", false)
	b := fleetHost(t, dsn, "host-b", true, func(c *Config) { c.Poll, c.Refresh = 0, 0 })
	t.Logf("PostgreSQL, parked on host A -> host B's page, LISTEN/NOTIFY: median %v over 50", measure("notify", 50, 100*time.Millisecond, a, b))
	b.shutdown()
	c := fleetHost(t, dsn, "host-c", true, func(c *Config) { c.Poll, c.Refresh, c.Changes = 0, 0, nil })
	t.Logf("PostgreSQL, parked on host A -> host C's page, reread every 2 s: median %v over 20", measure("reread", 20, 2*time.Second, a, c))
	lite := newFixture(t, func(c *Config) { c.Poll, c.Refresh = 0, 0 })
	t.Logf("SQLite, the page of the same host, files watched every 100 ms: median %v over 50", measure("files", 50, 100*time.Millisecond, lite, lite))
}

// TestSecurityFleetTelegram: the bot of serve on host B sends the cards
// of the identities paired with it parked on host A (naming the host),
// not those of other identities there, and a paired click answers one
// through B's gate, its ticket spent on A only.
func TestSecurityFleetTelegram(t *testing.T) {
	dsn := fleetDSN(t)
	a := fleetHost(t, dsn, "host-a", false)
	fb := newFakeBot(t)
	// serve answers on its page as another identity: the bot's cards are
	// those of the identity paired with it.
	b := fleetHost(t, dsn, "host-b", true, func(c *Config) {
		c.Telegram, c.Refresh = []*Telegram{fb.bot()}, 50*time.Millisecond
		c.Identity = approvals.Identity{Channel: "cli", Sender: "owner"}
	})
	pair(t, b, fb)
	hers := a.park(eve, []string{"touch", "eve.txt"}, time.Hour)
	mine := a.ask("touch", "phone.txt")
	card := fb.wait(t, "sendMessage", `approve:`+mine.Token)
	if !strings.Contains(callText(card), `for cli:dev on host-a · id `+mine.Token) {
		t.Errorf("the card does not name host-a: %s", callText(card))
	}
	if n := fb.count("sendMessage", hers.Token); n != 0 {
		t.Errorf("eve's request on host A was sent to dev's chat %d times", n)
	}
	fb.push(callback(7, "approve:"+mine.Token, card.MessageID))
	fb.wait(t, "answerCallbackQuery", `"text":"Approved"`)
	if st := a.status(mine.Token); st != approvals.StatusApproved {
		t.Fatalf("after the click on host B's bot: %s", st)
	}
	ctx := context.Background()
	if _, ok, _ := b.st.SpendTicket(ctx, mine.RequestKey, time.Now()); ok {
		t.Error("host B spent the ticket of host A's request")
	}
	if _, ok, _ := a.st.SpendTicket(ctx, mine.RequestKey, time.Now()); !ok {
		t.Error("host A cannot spend its ticket")
	}
	fb.wait(t, "editMessageText", `approved by phone:7`)
	// A click on eve's request, by dev's paired account, is refused.
	fb.push(callback(7, "approve:"+hers.Token, card.MessageID))
	fb.wait(t, "answerCallbackQuery", `Not answered`)
	if st := a.status(hers.Token); st != approvals.StatusPending {
		t.Errorf("eve's request after dev's click: %s", st)
	}
}
