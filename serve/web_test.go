package serve

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
)

// TestSecuritySignInCodeMovesToCookie: a sign-in code opens a session
// whose cookie is HttpOnly and SameSite=Strict, once, and the browser is
// sent to an address without the code; a used, expired, wrong or older
// serve's link (?t=) opens nothing.
func TestSecuritySignInCodeMovesToCookie(t *testing.T) {
	now := time.Now()
	f := newFixture(t, func(c *Config) { c.Now = func() time.Time { return now } })
	p := f.ask("touch", "notes.txt")
	b := f.browser(false)
	code := f.code()
	resp := b.get("/?signin=" + code)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("first load: %s to %q, want 303 to /", resp.Status, resp.Header.Get("Location"))
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Name != sessionCookie {
		t.Fatalf("session cookie: %+v", cookies)
	}
	if strings.Contains(cookies[0].Value, code) {
		t.Fatal("the cookie carries the sign-in code itself")
	}
	page := text(b.get("/"))
	if !strings.Contains(page, p.Token) || strings.Contains(page, code) {
		t.Fatalf("signed-in page lacks the request or shows the code:\n%s", page)
	}
	expired := f.code()
	now = now.Add(SignInTTL)

	for _, tc := range []struct{ name, path string }{
		{"no code", "/"},
		{"used code", "/?signin=" + code},
		{"expired code", "/?signin=" + expired},
		{"wrong code", "/?signin=" + strings.Repeat("a", len(code))},
		{"code prefix", "/?signin=" + code[:20]},
		{"empty code", "/?signin="},
		{"an older serve's token link", "/?t=" + code},
	} {
		anon := f.browser(false)
		resp := anon.get(tc.path)
		if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusSeeOther || len(resp.Cookies()) > 0 {
			t.Errorf("%s: %s with cookies %v", tc.name, resp.Status, resp.Cookies())
		}
		if strings.Contains(text(resp), p.Token) {
			t.Errorf("%s: the page shows the request", tc.name)
		}
		if resp := anon.get("/events"); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: events: %s", tc.name, resp.Status)
		}
	}
	// A forged cookie is no session.
	forged := f.browser(false)
	u, _ := url.Parse(f.base())
	forged.c.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookie, Value: "aaaa.9999999999.00"}})
	if resp := forged.get("/"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("forged cookie: %s", resp.Status)
	}
}

// TestSecurityHostHeader: a request naming another host (a page of
// another site whose name was rebound to 127.0.0.1) gets nothing, not even
// with the session cookie, and cannot answer.
func TestSecurityHostHeader(t *testing.T) {
	f := newFixture(t)
	p := f.ask("touch", "notes.txt")
	b := f.browser(true)
	csrf := b.csrf()
	_, port, _ := strings.Cut(f.srv.Addr(), ":")
	base, _ := url.Parse(f.base())
	for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.nip.io:" + port, "localhost:1", "127.0.0.1:1"} {
		req, _ := http.NewRequest(http.MethodGet, f.base()+"/", nil)
		req.Host = host
		for _, c := range b.c.Jar.Cookies(base) {
			req.AddCookie(c)
		}
		resp := b.do(req)
		if resp.StatusCode != http.StatusMisdirectedRequest || strings.Contains(text(resp), p.Token) {
			t.Errorf("GET with Host %q: %s", host, resp.Status)
		}
		resp = b.post("/answer", url.Values{"csrf": {csrf}, "id": {p.Token}, "answer": {"approve"}}, "Host", host)
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("POST with Host %q: %s", host, resp.Status)
		}
	}
	if st := f.status(p.Token); st != approvals.StatusPending {
		t.Fatalf("a request with a foreign Host changed the request: %s", st)
	}
	// The bound address and localhost with its port are the page's.
	for _, host := range []string{f.srv.Addr(), "localhost:" + port} {
		req, _ := http.NewRequest(http.MethodGet, f.base()+"/", nil)
		req.Host = host
		for _, c := range b.c.Jar.Cookies(base) {
			req.AddCookie(c)
		}
		if resp := b.do(req); resp.StatusCode != http.StatusOK {
			t.Errorf("GET with Host %q: %s", host, resp.Status)
		}
	}
}

// TestSecurityCSRF: an answer needs the session's CSRF token; a missing,
// wrong or other session's token, or a POST a browser says comes from
// another site, changes nothing.
func TestSecurityCSRF(t *testing.T) {
	f := newFixture(t)
	p := f.ask("touch", "notes.txt")
	b := f.browser(true)
	other := f.browser(true)
	otherCSRF := other.csrf()
	good := b.csrf()
	for _, tc := range []struct {
		name   string
		form   url.Values
		header []string
	}{
		{"missing", url.Values{"id": {p.Token}, "answer": {"approve"}}, nil},
		{"empty", url.Values{"csrf": {""}, "id": {p.Token}, "answer": {"approve"}}, nil},
		{"wrong", url.Values{"csrf": {strings.Repeat("0", 64)}, "id": {p.Token}, "answer": {"approve"}}, nil},
		{"another session's", url.Values{"csrf": {otherCSRF}, "id": {p.Token}, "answer": {"approve"}}, nil},
		{"cross-site origin", url.Values{"csrf": {good}, "id": {p.Token}, "answer": {"approve"}}, []string{"Origin", "http://evil.example"}},
		{"cross-site fetch", url.Values{"csrf": {good}, "id": {p.Token}, "answer": {"approve"}}, []string{"Sec-Fetch-Site", "cross-site"}},
		{"opaque origin", url.Values{"csrf": {good}, "id": {p.Token}, "answer": {"approve"}}, []string{"Origin", "null"}},
		{"opaque cross-site origin", url.Values{"csrf": {good}, "id": {p.Token}, "answer": {"approve"}}, []string{"Origin", "null", "Sec-Fetch-Site", "cross-site"}},
	} {
		resp := b.post("/answer", tc.form, tc.header...)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s CSRF token: %s, want 403", tc.name, resp.Status)
		}
	}
	// Without a session the token is worth nothing either.
	anon := f.browser(false)
	if resp := anon.post("/answer", url.Values{"csrf": {good}, "id": {p.Token}, "answer": {"approve"}}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no session: %s", resp.Status)
	}
	if st := f.status(p.Token); st != approvals.StatusPending {
		t.Fatalf("a forged answer resolved the request: %s", st)
	}
	resp := b.post("/answer", url.Values{"csrf": {good}, "id": {p.Token}, "answer": {"approve"}}, "Origin", f.base(), "Sec-Fetch-Site", "same-origin")
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the page's own answer: %s", resp.Status)
	}
	if st := f.status(p.Token); st != approvals.StatusApproved {
		t.Fatalf("after the page's answer: %s", st)
	}
}

// TestSecurityGetNeverChangesState: no GET, whatever it carries, answers
// a request; the answer's address takes POST only.
func TestSecurityGetNeverChangesState(t *testing.T) {
	f := newFixture(t)
	p := f.ask("touch", "notes.txt")
	b := f.browser(true)
	csrf := b.csrf()
	q := "?" + url.Values{"csrf": {csrf}, "id": {p.Token}, "answer": {"approve"}}.Encode()
	for _, path := range []string{"/answer" + q, "/" + q, "/events" + q, "/static/app.js" + q} {
		req, _ := http.NewRequest(http.MethodGet, f.base()+path, nil)
		if strings.HasPrefix(path, "/events") {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			req = req.WithContext(ctx)
			resp, err := b.c.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			cancel()
			continue
		}
		resp := b.do(req)
		if strings.HasPrefix(path, "/answer") && resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET %s: %s, want 405", path, resp.Status)
		}
	}
	for _, m := range []string{http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		req, _ := http.NewRequest(m, f.base()+"/answer"+q, strings.NewReader(q[1:]))
		if resp := b.do(req); resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s /answer: %s, want 405", m, resp.Status)
		}
	}
	if st := f.status(p.Token); st != approvals.StatusPending {
		t.Fatalf("a GET changed the request: %s", st)
	}
	recs, err := f.audit.Tail(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if strings.HasPrefix(r.Kind, "approval.") && r.Kind != "approval.requested" {
			t.Fatalf("a GET wrote %s", r.Kind)
		}
	}
}

// TestSecurityTokenNeverLeaks: after signing in, answering and failing
// to sign in, a sign-in code is in no log line, no audit event, no
// Location header, no page, and every response forbids a Referer.
func TestSecurityTokenNeverLeaks(t *testing.T) {
	f := newFixture(t)
	p := f.ask("touch", "notes.txt")
	tok := f.code()
	b := f.browser(false)
	for _, path := range []string{"/?signin=" + tok, "/?signin=" + tok + "x", "/answer?signin=" + tok, "/nothing?signin=" + tok, "/?t=" + tok} {
		resp := b.get(path)
		if strings.Contains(resp.Header.Get("Location"), tok) || strings.Contains(text(resp), tok) {
			t.Errorf("GET %s: the response carries the code", strings.ReplaceAll(path, tok, "CODE"))
		}
		if resp.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET %s: Referrer-Policy %q", strings.ReplaceAll(path, tok, "CODE"), resp.Header.Get("Referrer-Policy"))
		}
	}
	b.answer(p.Token, "reject")
	f.shutdown()
	if strings.Contains(f.log.String(), tok) {
		t.Fatalf("the log holds the sign-in code:\n%s", f.log.String())
	}
	if !strings.Contains(f.log.String(), "path=/") {
		t.Fatalf("nothing was logged:\n%s", f.log.String())
	}
	raw, err := os.ReadFile(f.paths.AuditFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), tok) {
		t.Fatal("the audit log holds the sign-in code")
	}
	if !strings.Contains(string(raw), `"approval.denied"`) {
		t.Fatal("the answer was not audited")
	}
	page := pageHTML + string(appJS)
	if !strings.Contains(page, `name="referrer" content="no-referrer"`) {
		t.Fatal("the page does not forbid a Referer")
	}
}

// TestSecurityArgvEscaped: what a request holds is shown as text: no HTML
// of its own, no terminal escape, no reordering by bidirectional marks.
func TestSecurityArgvEscaped(t *testing.T) {
	f := newFixture(t)
	argv := []string{"touch", `<script>alert(1)</script>`, "\x1b[31mred", "evil\u202etxt.exe", `"><img src=x onerror=alert(2)>`}
	p := f.park(dev, argv, 0)
	b := f.browser(true)
	page := text(b.get("/"))
	for _, bad := range []string{"<script>alert", "<img src=x", "\x1b", "\u202e"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q raw", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", `\x1b[31mred`, `evil\u202etxt.exe`, "&lt;img src=x"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks the escaped %q", want)
		}
	}
	if !strings.Contains(page, p.Token) {
		t.Fatal("the request is not shown")
	}
	// The live stream carries the same escaped fragment.
	ev := firstEvent(t, b)
	if strings.Contains(ev, "<script>alert") || !strings.Contains(ev, "&lt;script&gt;") {
		t.Fatalf("event not escaped: %s", ev)
	}
}

// TestSecurityContentSecurityPolicy: every response, the refusals
// included, carries the strict policy, and the page needs nothing it
// forbids (no inline script, style or handler).
func TestSecurityContentSecurityPolicy(t *testing.T) {
	f := newFixture(t)
	f.ask("touch", "notes.txt")
	b := f.browser(true)
	anon := f.browser(false)
	check := func(what string, resp *http.Response) {
		t.Helper()
		if got := resp.Header.Get("Content-Security-Policy"); got != contentSecurityPolicy {
			t.Errorf("%s: CSP %q", what, got)
		}
		for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Cache-Control": "no-store"} {
			if resp.Header.Get(k) != v {
				t.Errorf("%s: %s %q", what, k, resp.Header.Get(k))
			}
		}
	}
	check("page", b.get("/"))
	check("script", b.get("/static/app.js"))
	check("style", b.get("/static/style.css"))
	check("no session", anon.get("/"))
	check("not found", b.get("/nothing"))
	req, _ := http.NewRequest(http.MethodGet, f.base()+"/", nil)
	req.Host = "evil.example"
	check("foreign host", b.do(req))
	check("bad csrf", b.post("/answer", url.Values{"csrf": {"x"}}))
	for _, must := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "form-action 'self'", "base-uri 'none'"} {
		if !strings.Contains(contentSecurityPolicy, must) {
			t.Errorf("the policy lacks %s", must)
		}
	}
	page := text(b.get("/"))
	for _, inline := range []string{"<script>", "<style", " style=", " onclick=", " onload=", "javascript:"} {
		if strings.Contains(page, inline) {
			t.Errorf("the page uses %q, which the policy forbids", inline)
		}
	}
}

// TestSecurityLoopbackOnly: the page listens on a loopback address only.
func TestSecurityLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:7700", ":7700", "[::]:7700", "192.168.1.10:7700", "10.0.0.1:80", "example.com:7700", "127.0.0.1", "127.0.0.1:http", "127.0.0.1:99999"} {
		if _, err := CheckAddr(addr); err == nil {
			t.Errorf("CheckAddr(%q) accepted", addr)
		}
	}
	for addr, want := range map[string]string{"127.0.0.1:0": "127.0.0.1", "[::1]:7700": "::1", "localhost:7700": "127.0.0.1", "127.0.0.2:1": "127.0.0.2"} {
		if got, err := CheckAddr(addr); err != nil || got != want {
			t.Errorf("CheckAddr(%q) = %q, %v", addr, got, err)
		}
	}
	dir := t.TempDir()
	if _, err := Start(Config{StateDir: dir, Addr: "0.0.0.0:0", Resolver: nopResolver{}, Registry: nopRegistry{}}); err == nil {
		t.Fatal("Start listened on every address")
	}
}

// TestSecurityOnlyRequesterAnswers: the page answers as its identity; a
// request of another identity shows no buttons, and a forged answer to
// it is refused by the registry.
func TestSecurityOnlyRequesterAnswers(t *testing.T) {
	f := newFixture(t)
	mine := f.park(dev, []string{"touch", "mine"}, 0)
	theirs := f.park(approvals.Identity{Channel: "telegram", Sender: "42"}, []string{"touch", "theirs"}, 0)
	b := f.browser(true)
	page := text(b.get("/"))
	if !strings.Contains(page, `name="id" value="`+mine.Token+`"`) {
		t.Fatal("no buttons for the page's own request")
	}
	if strings.Contains(page, `name="id" value="`+theirs.Token+`"`) || !strings.Contains(page, "Only telegram:42 can answer") {
		t.Fatal("buttons for another identity's request")
	}
	b.answer(theirs.Token, "approve")
	if st := f.status(theirs.Token); st != approvals.StatusPending {
		t.Fatalf("another identity's request was answered: %s", st)
	}
	if page := text(b.get("/")); !strings.Contains(page, "only the requester can resolve") {
		t.Fatalf("the refusal is not shown:\n%s", page)
	}
}

func TestSecondInstanceRefused(t *testing.T) {
	f := newFixture(t)
	cfg := f.cfg
	if _, err := Start(cfg); !errors.Is(err, ErrRunning) {
		t.Fatalf("second Start: %v, want ErrRunning", err)
	}
	if info, ok := Running(f.paths.StateDir); !ok || info.Addr != f.srv.Addr() {
		t.Fatalf("Running = %+v, %v", info, ok)
	}
	u, _, err := SignIn(context.Background(), f.paths.ServeSocket())
	if err != nil || !strings.HasPrefix(u, "http://"+f.srv.Addr()+"/?signin=") {
		t.Fatalf("SignIn = %q, %v", u, err)
	}
	f.shutdown()
	if _, ok := Running(f.paths.StateDir); ok {
		t.Fatal("still running after the stop")
	}
	if _, _, err := SignIn(context.Background(), f.paths.ServeSocket()); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("SignIn after the stop: %v", err)
	}
}

// TestRestartLosesNothing: a request parked before a restart is shown and
// answered after it, once; a session ends with the serve that opened it
// (its key was in that serve's memory only), and a new sign-in opens
// another.
func TestRestartLosesNothing(t *testing.T) {
	f := newFixture(t)
	p := f.ask("touch", "notes.txt")
	b := f.browser(true)
	csrf := b.csrf()
	f.shutdown()
	f.start()
	if st := f.status(p.Token); st != approvals.StatusPending {
		t.Fatalf("after the restart: %s", st)
	}
	if resp := b.get("/"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the session outlived its serve: %s", resp.Status)
	}
	b = f.browser(true)
	csrf = b.csrf()
	for i := 0; i < 2; i++ {
		b.post("/answer", url.Values{"csrf": {csrf}, "id": {p.Token}, "answer": {"approve"}})
	}
	if st := f.status(p.Token); st != approvals.StatusApproved {
		t.Fatalf("after answering: %s", st)
	}
	if page := text(b.get("/")); !strings.Contains(page, "already resolved") {
		t.Fatal("the second answer was not refused")
	}
	recs, _ := f.audit.Tail(0)
	n := 0
	for _, r := range recs {
		if r.Kind == "approval.approved" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d approval.approved events, want 1", n)
	}
}

// TestLiveUpdates: a new request reaches an open page as an event.
func TestLiveUpdates(t *testing.T) {
	f := newFixture(t)
	b := f.browser(true)
	events := openEvents(t, b)
	if first := <-events; !strings.Contains(first, "Nothing is waiting") {
		t.Fatalf("first event: %s", first)
	}
	p := f.ask("touch", "notes.txt")
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if strings.Contains(ev, p.Token) {
				return
			}
		case <-deadline:
			t.Fatal("the new request never reached the page")
		}
	}
}

// TestSweepExpires: serve marks expired requests and records
// approval.expired.
func TestSweepExpires(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.SweepEvery = 20 * time.Millisecond })
	p := f.park(dev, []string{"touch", "late"}, time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		got, _ := f.st.Get(context.Background(), p.Token)
		if got.Status == approvals.StatusExpired {
			recs, _ := f.audit.Tail(0)
			for _, r := range recs {
				if r.Kind == "approval.expired" && r.Attrs["id"] == p.Token {
					return
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the expired request was not swept and recorded")
}

// openEvents reads the page's event stream; each value is one event's data.
func openEvents(t *testing.T, b *browser) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.f.base()+"/events", nil)
	c := *b.c
	c.Timeout = 0
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	out := make(chan string, 16)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var data []string
		for sc.Scan() {
			l := sc.Text()
			switch {
			case strings.HasPrefix(l, "data: "):
				data = append(data, l[len("data: "):])
			case l == "" && data != nil:
				select {
				case out <- strings.Join(data, "\n"):
				case <-ctx.Done():
					return
				}
				data = nil
			}
		}
	}()
	return out
}

func firstEvent(t *testing.T, b *browser) string {
	t.Helper()
	select {
	case ev := <-openEvents(t, b):
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	return ""
}

type nopResolver struct{ Resolver }
type nopRegistry struct{ Registry }

// TestStopsWhenStateDirGoes: serve stops by itself once its state
// directory is removed (nothing is left to serve, and nothing would stop
// it otherwise).
func TestStopsWhenStateDirGoes(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Refresh = 20 * time.Millisecond })
	if err := os.RemoveAll(f.paths.StateDir); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-f.done:
		if err != nil {
			t.Fatal(err)
		}
		f.stop = nil
	case <-time.After(10 * time.Second):
		t.Fatal("serve kept running without its state directory")
	}
	if !strings.Contains(f.log.String(), "state directory was removed") {
		t.Fatalf("no word of it:\n%s", f.log.String())
	}
}
