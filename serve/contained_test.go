package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/gate"
)

// parkContained stores a request of dev's that the gate found to be
// contained work in the fixture's workspace (gate.ContainedWork).
func (f *fixture) parkContained(argv ...string) approvals.Pending {
	f.t.Helper()
	p, err := f.st.CreatePending(context.Background(), approvals.NewPending{
		Channel: dev.Channel, Sender: dev.Sender, CapabilityClass: "code:exec",
		ActionVerb: "run", TargetSummary: strings.Join(argv, " "),
		RequestKey: approvals.RequestKey(approvals.KeyInput{Channel: dev.Channel, Sender: dev.Sender, Cwd: f.ws, Argv: argv}),
		Details:    approvals.Details{Argv: argv, Cwd: f.ws, Session: "s1", Meta: map[string]string{"contained": f.ws}},
	}, time.Now(), time.Hour)
	if err != nil {
		f.t.Fatal(err)
	}
	if ws, ok := gate.ContainedWork(p); !ok || ws != f.ws {
		f.t.Fatalf("not contained work: %q", ws)
	}
	return p
}

// containedRules are the contained-work session rules recorded, by
// workspace.
func (f *fixture) containedRules() []string {
	f.t.Helper()
	rs, err := f.st.ListSessionRules(context.Background(), approvals.GrantFilter{}, time.Now())
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		if ws, ok := gate.ContainedWorkspace(r); ok {
			out = append(out, ws+" for session "+r.Session)
		}
	}
	return out
}

// TestPageContainedButton: the page's handler offers "Approve contained
// work here for this session" on a request that is contained work, and
// the button approves it through the gate with --remember contained: one
// session rule for contained work in that workspace and session.
func TestPageContainedButton(t *testing.T) {
	f := newFixture(t)
	p := f.parkContained("make", "test")
	plain := f.park(dev, []string{"touch", "plain.txt"}, time.Hour)

	// The handler itself, as the server mounts it.
	h := f.srv.handler()
	get := func(path string, cookies []*http.Cookie) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "http://"+f.srv.Addr()+path, nil)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	signIn := get("/?signin="+f.code(), nil)
	if signIn.Code != http.StatusSeeOther {
		t.Fatalf("sign in: %d", signIn.Code)
	}
	cookies := signIn.Result().Cookies()
	page := get("/", cookies).Body.String()
	card := cardOf(t, page, p.Token)
	button := `<button type="submit" name="answer" value="approve:contained" class="approve remember">Approve contained work here for this session</button>`
	if !strings.Contains(card, button) {
		t.Errorf("the contained card lacks the button:\n%s", card)
	}
	if !strings.Contains(card, "contained work: no network, writes only in <code>"+f.ws+"</code> and temp") {
		t.Errorf("the contained card does not say what is contained:\n%s", card)
	}
	if c := cardOf(t, page, plain.Token); strings.Contains(c, "approve:contained") || strings.Contains(c, "contained work") {
		t.Errorf("a request that is not contained work offers the concession:\n%s", c)
	}

	csrf := csrfRe.FindStringSubmatch(page)[1]
	form := url.Values{"csrf": {csrf}, "id": {p.Token}, "answer": {"approve:contained"}}
	req := httptest.NewRequest(http.MethodPost, "http://"+f.srv.Addr()+"/answer", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, c := range cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("POST: %d %s", rec.Code, rec.Body)
	}
	flash := get("/", cookies).Body.String()
	if !strings.Contains(flash, "Approved: run make test (contained work in "+f.ws+" runs without asking for this session") {
		t.Errorf("the page does not say what was approved:\n%s", flash)
	}
	got, err := f.st.Get(context.Background(), p.Token)
	if err != nil || got.Status != approvals.StatusApproved || got.Territory != approvals.TerritorySession {
		t.Fatalf("after the button: %s %s %v", got.Status, got.Territory, err)
	}
	if rs := f.containedRules(); len(rs) != 1 || rs[0] != f.ws+" for session s1" {
		t.Errorf("contained-work rules recorded: %q", rs)
	}
}

// TestSecurityContainedOnlyForContainedWork: a POST that asks for the
// contained-work concession on a request that is not contained work (no
// button offers it) is refused by the gate: the request still waits and
// nothing is remembered. A made-up choice is refused too.
func TestSecurityContainedOnlyForContainedWork(t *testing.T) {
	f := newFixture(t)
	plain := f.park(dev, []string{"curl", "https://example.com"}, time.Hour)
	b := f.browser(true)
	if flash := answerFlash(t, b, plain.Token, "approve:contained"); !strings.Contains(flash, "Not answered: --remember contained is for contained work") {
		t.Errorf("contained asked for a request that is not contained work: %q", flash)
	}
	if flash := answerFlash(t, b, plain.Token, "approve:everything"); !strings.Contains(flash, `Not answered: unknown choice`) {
		t.Errorf("a made-up choice: %q", flash)
	}
	if st := f.status(plain.Token); st != approvals.StatusPending {
		t.Errorf("after the refused answers: %s", st)
	}
	if rs := f.containedRules(); len(rs) != 0 {
		t.Errorf("contained work remembered: %q", rs)
	}
}

// TestTerminalContainedKey: approvals watch offers the key c on a request
// that is contained work and approves it with --remember contained; on
// another request c is not a key it takes.
func TestTerminalContainedKey(t *testing.T) {
	f := newFixture(t)
	tm := f.terminal(dev)
	tm.wait("waiting for new requests")
	plain := f.park(dev, []string{"touch", "plain.txt"}, time.Hour)
	card := tm.wait("[q] quit? ")
	if strings.Contains(card, "[c]") {
		t.Errorf("c offered for a request that is not contained work:\n%s", card)
	}
	tm.press("c")
	tm.wait("press a, r, n, q")
	if st := f.status(plain.Token); st != approvals.StatusPending {
		t.Fatalf("after c on a request that is not contained work: %s", st)
	}
	tm.press("r")
	tm.wait("rejected " + plain.Token)

	p := f.parkContained("make", "test")
	card = tm.wait("[q] quit? ")
	for _, want := range []string{"--- request " + p.Token, "sandbox:   contained work: no network, writes only in " + f.ws + " and temp\n",
		"[c] approve contained work here for this session"} {
		if !strings.Contains(card, want) {
			t.Errorf("the card lacks %q:\n%s", want, card)
		}
	}
	tm.press("?")
	tm.wait("c  approve, and stop asking about contained work in this workspace")
	tm.press("c")
	tm.wait("approved " + p.Token + ": run make test")
	tm.wait("session rule r")
	if got, err := f.st.Get(context.Background(), p.Token); err != nil || got.Territory != approvals.TerritorySession {
		t.Fatalf("after c: %s %v", got.Territory, err)
	}
	if rs := f.containedRules(); len(rs) != 1 || rs[0] != f.ws+" for session s1" {
		t.Errorf("contained-work rules recorded: %q", rs)
	}
}

// TestPageHistoryOrder: the history lists the requests answered or
// expired last first, by when that happened, not by when they were
// asked; a row's class is its status alone, the concession said beside.
func TestPageHistoryOrder(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	h1 := f.ask("touch", "h1.txt")
	h2 := f.ask("touch", "h2.txt")
	h3 := f.ask("touch", "h3.txt")
	if _, err := f.g.Deny(ctx, h3.Token, dev); err != nil {
		t.Fatal(err)
	}
	if _, err := f.g.Approve(ctx, h1.Token, dev, gate.ApproveOptions{Remember: approvals.TerritorySession}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.g.Deny(ctx, h2.Token, dev); err != nil {
		t.Fatal(err)
	}
	page := text(f.browser(true).get("/"))
	recent := page[strings.Index(page, `id="recent-h"`):]
	i2, i1, i3 := strings.Index(recent, "h2.txt"), strings.Index(recent, "h1.txt"), strings.Index(recent, "h3.txt")
	if i2 < 0 || i1 < 0 || i3 < 0 || !(i2 < i1 && i1 < i3) {
		t.Errorf("history order h2 %d, h1 %d, h3 %d: want the last answered first:\n%s", i2, i1, i3, recent)
	}
	if !strings.Contains(recent, `<tr class="st-approved"><td>`) || !strings.Contains(recent, "<td>approved (session)</td>") {
		t.Errorf("the approved row:\n%s", recent)
	}
	if strings.Contains(page, `class="st-approved (`) {
		t.Error("a class attribute holds the concession")
	}
}
