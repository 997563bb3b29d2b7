package serve

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/approvals"
)

// TestRequestView: the view of one request (what a mail links to) shows
// its card with the answers, says which one the link suggests, and after
// an answer says how it ended.
func TestRequestView(t *testing.T) {
	f := newFixture(t)
	p := f.ask("touch", "notes.txt")
	b := f.browser(true)
	link := RequestURL(f.srv.Addr(), p.Token, "approve")
	if want := f.base() + "/request/" + p.Token + "?answer=approve"; link != want {
		t.Fatalf("RequestURL = %q, want %q", link, want)
	}
	page := text(b.get(strings.TrimPrefix(link, f.base())))
	for _, want := range []string{"Approve this request?", "Nothing is answered until you press a button", "touch notes.txt",
		`name="csrf" value="`, `value="approve"`, `value="reject"`, p.Token} {
		if !strings.Contains(page, want) {
			t.Errorf("the view lacks %q:\n%s", want, page)
		}
	}
	if page := text(b.get("/request/" + p.Token + "?answer=reject")); !strings.Contains(page, "Reject this request?") {
		t.Errorf("the reject view:\n%s", page)
	}
	// Its form answers as the page's does.
	m := csrfRe.FindStringSubmatch(page)
	if resp := b.post("/answer", url.Values{"csrf": {m[1]}, "id": {p.Token}, "answer": {"approve"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("answer: %s", resp.Status)
	}
	if st := f.status(p.Token); st != approvals.StatusApproved {
		t.Fatalf("after the click the request is %s", st)
	}
	page = text(b.get("/request/" + p.Token + "?answer=reject"))
	if !strings.Contains(page, "approved by page:dev") || strings.Contains(page, "<form") {
		t.Errorf("the answered request's view:\n%s", page)
	}
	if page := text(b.get("/request/" + strings.Repeat("a", 26))); !strings.Contains(page, "There is no request") {
		t.Errorf("an unknown request's view:\n%s", page)
	}
	for _, bad := range []string{"/request/..%2Fserve.token", "/request/" + p.Token + "x", "/request/%3Cscript%3E"} {
		if resp := b.get(bad); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", bad, resp.Status)
		}
	}
}

// TestSecurityLinkAloneNeverResolves: a mail's approve and reject links
// open a view and resolve nothing, whoever follows them, signed in or
// not, whatever they carry; a browser without a session learns nothing
// of the request; only the form's POST with the session's CSRF token
// answers.
func TestSecurityLinkAloneNeverResolves(t *testing.T) {
	f := newFixture(t)
	p := f.ask("touch", "notes.txt")
	signed, anon := f.browser(true), f.browser(false)
	csrf := signed.csrf()
	base := "/request/" + p.Token
	for _, path := range []string{
		base + "?answer=approve", base + "?answer=reject", base + "?answer=approve:permanent",
		base + "?answer=approve&hop=1", base + "?" + url.Values{"answer": {"approve"}, "csrf": {csrf}, "id": {p.Token}}.Encode(),
	} {
		for _, b := range []*browser{signed, anon} {
			resp := b.get(path)
			if b == anon {
				if body := text(resp); strings.Contains(body, "notes.txt") || strings.Contains(body, csrf) {
					t.Errorf("GET %s without a session shows the request:\n%s", path, body)
				}
			}
			// A browser that follows the hop as one would.
			if resp.StatusCode == http.StatusOK && strings.Contains(text(resp), "http-equiv=\"refresh\"") {
				b.get(base + "?hop=1&answer=approve")
			}
		}
		for _, m := range []string{http.MethodHead, http.MethodPost, http.MethodPut} {
			req, _ := http.NewRequest(m, f.base()+path, strings.NewReader(url.Values{"answer": {"approve"}, "csrf": {csrf}, "id": {p.Token}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			signed.do(req)
		}
	}
	if resp := anon.get(base + "?answer=approve&hop=1"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no session after the hop: %s, want 401", resp.Status)
	}
	if st := f.status(p.Token); st != approvals.StatusPending {
		t.Fatalf("a link resolved the request: %s", st)
	}
	recs, err := f.audit.Tail(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Kind == "approval.approved" || r.Kind == "approval.denied" || r.Kind == "grant.recorded" || r.Kind == "policy.rule_added" {
			t.Fatalf("a link wrote %s", r.Kind)
		}
	}
	// The click does.
	if resp := signed.post("/answer", url.Values{"csrf": {csrf}, "id": {p.Token}, "answer": {"reject"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("answer: %s", resp.Status)
	}
	if st := f.status(p.Token); st != approvals.StatusRejected {
		t.Fatalf("after the click the request is %s", st)
	}
}

// TestRequestViewHop: a link followed from another site arrives without
// the SameSite=Strict cookie; the view sends the browser on from the
// page's own origin, and the hop's address is the view's own.
func TestRequestViewHop(t *testing.T) {
	f := newFixture(t)
	p := f.ask("touch", "notes.txt")
	resp := f.browser(false).get("/request/" + p.Token + "?answer=reject")
	body := text(resp)
	want := `url=/request/` + p.Token + `?hop=1&amp;answer=reject`
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, want) {
		t.Fatalf("hop: %s, want a refresh to %q:\n%s", resp.Status, want, body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); csp != contentSecurityPolicy {
		t.Errorf("hop CSP = %q", csp)
	}
}
