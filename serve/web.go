package serve

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/gate"
)

//go:embed static/page.html
var pageHTML string

//go:embed static/app.js
var appJS []byte

//go:embed static/style.css
var styleCSS []byte

// contentSecurityPolicy allows the page its own script, style and event
// stream and nothing else: no inline script or style, no frames, no
// plugins, forms posting only to itself.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

const (
	pendingLimit = 50
	historyLimit = 20
	// historyWindow is how many of the newest requests are read for the
	// history, which shows the historyLimit answered or expired last.
	historyWindow = 100
	maxFormBytes  = 8 << 10
)

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("GET /request/{id}", s.one)
	mux.HandleFunc("POST /answer", s.answer)
	mux.HandleFunc("GET /undo/{run}", s.undoPage)
	mux.HandleFunc("POST /undo", s.undo)
	mux.HandleFunc("GET /static/app.js", static("text/javascript; charset=utf-8", appJS))
	mux.HandleFunc("GET /static/style.css", static("text/css; charset=utf-8", styleCSS))
	return s.guard(mux)
}

func static(ctype string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Write(body)
	}
}

// guard applies the rules every request meets: security headers on every
// response, the Host header naming the bound address (a page of another
// site whose name resolves to 127.0.0.1 sends its own name: DNS
// rebinding), a POST coming from the page itself, and a log line that
// names the path only (never the query, which may hold a sign-in code).
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		switch {
		case !s.hostOK(r.Host):
			http.Error(sw, "this page answers only to "+s.addr, http.StatusMisdirectedRequest)
		case r.Method == http.MethodPost && !sameOrigin(r):
			http.Error(sw, "cross-site request refused", http.StatusForbidden)
		default:
			next.ServeHTTP(sw, r)
		}
		s.cfg.Log.Info("http", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"ms", time.Since(start).Milliseconds())
	})
}

// hostOK accepts the bound address, and localhost with its port when
// bound to 127.0.0.1.
func (s *Server) hostOK(host string) bool {
	if host == s.addr {
		return true
	}
	h, port, err := net.SplitHostPort(s.addr)
	return err == nil && h == "127.0.0.1" && host == "localhost:"+port
}

// sameOrigin refuses a POST that a browser says comes from elsewhere. The
// page forbids a Referer, so a browser posting its form sends "Origin:
// null" (and Sec-Fetch-Site: same-origin); any other origin is refused.
func sameOrigin(r *http.Request) bool {
	site := r.Header.Get("Sec-Fetch-Site")
	if site != "" && site != "same-origin" {
		return false
	}
	switch o := r.Header.Get("Origin"); o {
	case "", "http://" + r.Host:
		return true
	case "null":
		return site == "same-origin"
	}
	return false
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// page shows the requests. Opened with a sign-in code (?signin=), which
// it takes once, it gives the browser a session cookie and sends it to
// the same page without the code, so the code leaves the address bar and
// the history entry at once, and never reaches a Referer (there is also
// Referrer-Policy). An older serve's ?t= link opens nothing.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	if q := r.URL.Query(); q.Has("signin") || q.Has("t") {
		if !s.signin.spend(q.Get("signin"), s.cfg.Now()) {
			s.plain(w, http.StatusForbidden, "This sign-in link is not valid: it was used already, has expired (it lasts 2 minutes), or comes from before mnemos serve restarted. Run `mnemos approvals url` in a terminal for a new one.")
			return
		}
		c, err := s.sess.issue()
		if err != nil {
			s.plain(w, http.StatusInternalServerError, "cannot start a session")
			return
		}
		http.SetCookie(w, c)
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	sid := s.sess.session(r)
	if sid == "" {
		s.plain(w, http.StatusUnauthorized, "Open the link that `mnemos approvals url` prints in a terminal (it signs this browser in).")
		return
	}
	s.mu.Lock()
	flash := s.flash[sid]
	delete(s.flash, sid)
	s.mu.Unlock()
	data, err := s.view(r, sid)
	if err != nil {
		s.cfg.Log.Error("read requests", "err", err)
		s.plain(w, http.StatusInternalServerError, "cannot read the requests; see mnemos serve's log")
		return
	}
	data.Flash = flash
	var buf bytes.Buffer
	if err := s.tmpl().ExecuteTemplate(&buf, "page", data); err != nil {
		s.cfg.Log.Error("render page", "err", err)
		s.plain(w, http.StatusInternalServerError, "cannot render the page")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

// RequestURL is the address of one request's view on the page, with the
// answer it suggests (approve or reject, or "" for none): what a message
// on another channel links to. It carries no access token, and opening it
// resolves nothing: the view asks for the click, which posts the form
// with the session's CSRF token.
func RequestURL(addr, token, answer string) string {
	u := "http://" + addr + "/request/" + url.PathEscape(token)
	if answer != "" {
		u += "?answer=" + url.QueryEscape(answer)
	}
	return u
}

// oneData is what the view of one request shows.
type oneData struct {
	ID       string
	Identity string
	// Suggest is the answer the link suggests: approve, reject or "".
	Suggest string
	// Card is the request while it waits; Done once it is answered or
	// expired; Missing when there is no such request.
	Card    *cardView
	Done    *historyView
	Missing bool
}

// one shows one request (GET /request/ID?answer=approve|reject), the view
// a link in a mail opens. Like every GET it changes nothing: the answer
// is the form's POST to /answer, with the session's CSRF token. A link
// followed from another site (a webmail) arrives without the session
// cookie, which is SameSite=Strict; the view then sends the browser on to
// the same address from the page itself (hop=1), which carries the
// cookie, and says how to sign in when there is none.
func (s *Server) one(w http.ResponseWriter, r *http.Request) {
	id := strings.ToLower(r.PathValue("id"))
	if !validRequestID(id) {
		s.plain(w, http.StatusNotFound, "no such request")
		return
	}
	suggest := r.URL.Query().Get("answer")
	if suggest != "approve" && suggest != "reject" {
		suggest = ""
	}
	sid := s.sess.session(r)
	if sid == "" {
		if r.URL.Query().Has("hop") {
			s.plain(w, http.StatusUnauthorized, "This browser is not signed in to the approvals page. Open the link that `mnemos approvals url` prints in a terminal (it signs this browser in), then open this link again.")
			return
		}
		next := "/request/" + id + "?hop=1"
		if suggest != "" {
			next += "&answer=" + suggest
		}
		s.render(w, http.StatusOK, "hop", next)
		return
	}
	d := oneData{ID: id, Identity: idString(s.cfg.Identity), Suggest: suggest}
	now := s.cfg.Now()
	p, err := s.cfg.Registry.Get(r.Context(), id)
	switch {
	case errors.Is(err, approvals.ErrUnknownToken):
		d.Missing = true
	case err != nil:
		s.cfg.Log.Error("read request", "err", err)
		s.plain(w, http.StatusInternalServerError, "cannot read the request; see mnemos serve's log")
		return
	case p.StatusAt(now) == approvals.StatusPending:
		c := s.card(p, now)
		c.CSRF = s.sess.csrf(sid)
		d.Card = &c
	default:
		hs := []historyView{history(p, p.StatusAt(now))}
		s.attachRuns(hs)
		d.Done = &hs[0]
	}
	s.render(w, http.StatusOK, "one", d)
}

// validRequestID accepts what the registry issues: 26 characters of
// lowercase base32.
func validRequestID(id string) bool {
	if len(id) != 26 {
		return false
	}
	for _, r := range id {
		if (r < 'a' || r > 'z') && (r < '2' || r > '7') {
			return false
		}
	}
	return true
}

// render writes a template of the page as HTML.
func (s *Server) render(w http.ResponseWriter, code int, name string, data any) {
	var buf bytes.Buffer
	if err := s.tmpl().ExecuteTemplate(&buf, name, data); err != nil {
		s.cfg.Log.Error("render "+name, "err", err)
		s.plain(w, http.StatusInternalServerError, "cannot render the page")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}

func (s *Server) plain(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}

// postForm reads the form of a POST from a signed-in page: the session,
// the form (bounded), and the session's CSRF token in it. It returns the
// session, or answers the refusal itself and returns false.
func (s *Server) postForm(w http.ResponseWriter, r *http.Request) (string, bool) {
	sid := s.sess.session(r)
	if sid == "" {
		s.plain(w, http.StatusUnauthorized, "no session: open the link that `mnemos approvals url` prints")
		return "", false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		s.plain(w, http.StatusBadRequest, "bad form")
		return "", false
	}
	if !s.sess.csrfOK(sid, r.PostForm.Get("csrf")) {
		s.plain(w, http.StatusForbidden, "bad or missing CSRF token: reload the page")
		return "", false
	}
	return sid, true
}

// answer resolves a request as the page's identity through the Resolver.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	sid, ok := s.postForm(w, r)
	if !ok {
		return
	}
	id := strings.TrimSpace(r.PostForm.Get("id"))
	msg, err := s.resolve(r, id, r.PostForm.Get("answer"))
	if err != nil {
		msg = "Not answered: " + approvals.Printable(err.Error())
		s.cfg.Log.Warn("answer refused", "id", approvals.Printable(id), "err", approvals.Printable(err.Error()))
	}
	s.mu.Lock()
	s.flash[sid] = msg
	s.mu.Unlock()
	s.hub.kick()
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) resolve(r *http.Request, id, answer string) (string, error) {
	by := s.cfg.Identity
	verb, remember, _ := strings.Cut(answer, ":")
	switch verb {
	case "approve":
		switch remember {
		case "", approvals.TerritorySession, approvals.TerritoryPermanent, rememberContained:
		default:
			return "", fmt.Errorf("unknown choice %q", approvals.Printable(remember))
		}
		// The gate refuses a concession the request does not allow
		// (contained for what is not contained work): the page's
		// buttons are only what it offers, not what it accepts.
		// The page answers the requests of its identity as the person on
		// the page, never as that identity itself.
		res, err := s.cfg.Resolver.Approve(r.Context(), id, by, gate.ApproveOptions{Remember: remember,
			Via: approvals.Identity{Channel: approvals.ViaPage, Sender: by.Sender}})
		if err != nil {
			return "", err
		}
		s.cfg.Log.Info("approved", "id", res.Pending.Token, "territory", res.Pending.Territory, "remember", remember, "via", "web")
		msg := "Approved: " + summary(res.Pending)
		switch {
		case res.Rule != nil:
			msg += " (an allow rule was added to " + approvals.Printable(res.Rule.File) + ")"
		case len(res.Grants) > 0:
			msg += fmt.Sprintf(" (%d grant(s) recorded)", len(res.Grants))
		case remember == rememberContained && len(res.SessionRules) > 0:
			r := res.SessionRules[0]
			ws, _ := gate.ContainedWork(res.Pending)
			msg += " (contained work in " + approvals.Printable(audit.RedactString(ws)) + " runs without asking for this session, until " +
				r.ExpiresAt.Local().Format("Jan 2 15:04") + "; mnemos grants revoke " + r.Label() + " ends it)"
		case len(res.SessionRules) > 0:
			msg += fmt.Sprintf(" (%d session rule(s) recorded)", len(res.SessionRules))
		}
		return msg, nil
	case "reject":
		p, err := s.cfg.Resolver.Deny(r.Context(), id, by)
		if err != nil {
			return "", err
		}
		s.cfg.Log.Info("rejected", "id", p.Token, "via", "web")
		return "Rejected: " + summary(p), nil
	}
	return "", errors.New("unknown answer: want approve or reject")
}

// events streams the requests to the page: one "cards" event with the
// rendered list now and after every change, a comment every 15 s to keep
// the connection open, until the page goes or serve stops.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	sid := s.sess.session(r)
	if sid == "" {
		s.plain(w, http.StatusUnauthorized, "no session")
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	ping := time.NewTicker(15 * time.Second)
	defer ping.Stop()
	for {
		changed := s.hub.changed()
		data, err := s.view(r, sid)
		if err != nil {
			s.cfg.Log.Error("read requests", "err", err)
			return
		}
		var buf bytes.Buffer
		if err := s.tmpl().ExecuteTemplate(&buf, "live", data); err != nil {
			s.cfg.Log.Error("render cards", "err", err)
			return
		}
		if _, err := w.Write(sseEvent("cards", buf.String())); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
		if !s.waitChange(w, rc, r, changed, ping.C) {
			return
		}
	}
}

// waitChange waits for a change, pinging the page meanwhile; false when
// the stream is over.
func (s *Server) waitChange(w http.ResponseWriter, rc *http.ResponseController, r *http.Request, changed <-chan struct{}, ping <-chan time.Time) bool {
	for {
		select {
		case <-changed:
			return true
		case <-ping:
			if _, err := w.Write([]byte(": ping\n\n")); err != nil || rc.Flush() != nil {
				return false
			}
		case <-r.Context().Done():
			return false
		case <-s.closed:
			return false
		}
	}
}

// sseEvent frames data as one server-sent event, a data: line per line.
func sseEvent(name, data string) []byte {
	var b bytes.Buffer
	b.WriteString("event: " + name + "\n")
	for _, l := range strings.Split(data, "\n") {
		b.WriteString("data: ")
		b.WriteString(strings.TrimSuffix(l, "\r"))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}

func (s *Server) tmpl() *template.Template {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.parsed == nil {
		s.parsed = template.Must(template.New("page").Parse(pageHTML))
	}
	return s.parsed
}
