package serve

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"io"
	"math/big"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/policy"
)

// fakeSMTP is an SMTP server on loopback, enough of RFC 5321 for
// net/smtp: EHLO, STARTTLS, AUTH PLAIN, MAIL, RCPT, DATA, QUIT.
type fakeSMTP struct {
	t    *testing.T
	ln   net.Listener
	tls  *tls.Config // offers STARTTLS when set
	user string
	pass string
	// echo makes a refused login quote what the client sent (a careless
	// or hostile server).
	echo bool

	mu       sync.Mutex
	messages []string
	logins   []string // the AUTH lines seen
	tlsUsed  []bool   // per message: was it sent over TLS
	conns    int
}

func newFakeSMTP(t *testing.T, withTLS bool) (*fakeSMTP, *x509.CertPool) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeSMTP{t: t, ln: ln, user: "me@example.com", pass: "correct horse battery staple"}
	var pool *x509.CertPool
	if withTLS {
		var cert tls.Certificate
		cert, pool = selfSigned(t)
		s.tls = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	go s.serve()
	t.Cleanup(func() { ln.Close() })
	return s, pool
}

func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fake smtp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

func (s *fakeSMTP) addr() string { return s.ln.Addr().String() }

func (s *fakeSMTP) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns++
		s.mu.Unlock()
		go s.session(c)
	}
}

func (s *fakeSMTP) session(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r, w := bufio.NewReader(c), c
	say := func(l string) { io.WriteString(w, l+"\r\n") }
	say("220 fake ESMTP")
	secure, authed := false, false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb := strings.ToUpper(strings.SplitN(line, " ", 2)[0])
		switch verb {
		case "EHLO", "HELO":
			if s.tls != nil && !secure {
				say("250-fake")
				say("250-STARTTLS")
			} else {
				say("250-fake")
			}
			say("250 AUTH PLAIN")
		case "STARTTLS":
			if s.tls == nil {
				say("502 no")
				continue
			}
			say("220 go ahead")
			tc := tls.Server(c, s.tls)
			if err := tc.Handshake(); err != nil {
				return
			}
			c, secure = tc, true
			r, w = bufio.NewReader(tc), tc
		case "AUTH":
			s.mu.Lock()
			s.logins = append(s.logins, line)
			s.mu.Unlock()
			f := strings.Fields(line)
			want := base64.StdEncoding.EncodeToString([]byte("\x00" + s.user + "\x00" + s.pass))
			switch {
			case len(f) == 3 && f[1] == "PLAIN" && f[2] == want:
				authed = true
				say("235 2.7.0 Authentication successful")
			case s.echo:
				// What the client sent, and the password in it.
				sent := ""
				if len(f) == 3 {
					b, _ := base64.StdEncoding.DecodeString(f[2])
					sent = string(b[strings.LastIndexByte(string(b), 0)+1:])
				}
				say("535 5.7.8 Authentication credentials invalid: " + strings.Join(f[1:], " ") + " (password " + sent + ")")
			default:
				say("535 5.7.8 Authentication credentials invalid")
			}
		case "MAIL":
			if s.pass != "" && !authed {
				say("530 5.7.0 Authentication required")
				continue
			}
			say("250 ok")
		case "RCPT":
			say("250 ok")
		case "DATA":
			say("354 go on")
			var msg strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				msg.WriteString(strings.TrimPrefix(l, "."))
			}
			s.mu.Lock()
			s.messages = append(s.messages, msg.String())
			s.tlsUsed = append(s.tlsUsed, secure)
			s.mu.Unlock()
			say("250 queued")
		case "QUIT":
			say("221 bye")
			return
		default:
			say("500 what")
		}
	}
}

func (s *fakeSMTP) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.messages)
}

// mailFixture is a serve with one email channel to srv.
func mailFixture(t *testing.T, srv *fakeSMTP, pool *x509.CertPool, tweak func(*Mailer)) (*fixture, *Mailer) {
	t.Helper()
	m := &Mailer{Channel: "mail", SMTP: srv.addr(), From: "mnemos <me@example.com>", To: "me@example.com",
		Password: srv.pass, StartTLS: pool != nil, First: 20 * time.Millisecond, Timeout: 5 * time.Second}
	if pool != nil {
		m.TLS = &tls.Config{RootCAs: pool}
	}
	if tweak != nil {
		tweak(m)
	}
	f := newFixture(t, func(c *Config) {
		c.Mailers = []*Mailer{m}
		c.Refresh = 30 * time.Millisecond
	})
	return f, m
}

// waitEvents waits until the audit log holds n events of kind for id.
func waitEvents(t *testing.T, f *fixture, kind, id string, n int) []audit.Record {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		recs, err := f.audit.Tail(0)
		if err != nil {
			t.Fatal(err)
		}
		var out []audit.Record
		for _, r := range recs {
			if r.Kind == kind && r.Attrs["id"] == id {
				out = append(out, r)
			}
		}
		if len(out) >= n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d %s events for %s, want %d\nlog:\n%s", len(out), kind, id, n, f.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// decodeMail parses a message and decodes its body.
func decodeMail(t *testing.T, raw string) (*mail.Message, string) {
	t.Helper()
	msg, err := mail.ReadMessage(strings.NewReader(raw))
	if err != nil {
		t.Fatalf("not a mail: %v\n%s", err, raw)
	}
	r := io.Reader(msg.Body)
	switch cte := msg.Header.Get("Content-Transfer-Encoding"); cte {
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	case "7bit":
	default:
		t.Fatalf("Content-Transfer-Encoding %q", cte)
	}
	body, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return msg, string(body)
}

// TestEmailCard: serve mails the card of a new request over STARTTLS
// after logging in: a short plain-text message with the request and the
// links to its approve and reject views, which carry no access token;
// channel.delivered records it, and a restart mails nothing twice.
func TestEmailCard(t *testing.T) {
	smtpd, pool := newFakeSMTP(t, true)
	f, _ := mailFixture(t, smtpd, pool, nil)
	p := f.ask("touch", "notes.txt")
	waitEvents(t, f, audit.KindChannelDelivered, p.Token, 1)
	msgs := smtpd.got()
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	if !smtpd.tlsUsed[0] {
		t.Fatal("the message was sent before STARTTLS")
	}
	msg, body := decodeMail(t, msgs[0])
	if got := msg.Header.Get("From"); got != `"mnemos" <me@example.com>` {
		t.Errorf("From = %q", got)
	}
	if got := msg.Header.Get("To"); got != "<me@example.com>" {
		t.Errorf("To = %q", got)
	}
	if got := msg.Header.Get("Subject"); !strings.HasPrefix(got, "mnemos: ") || !strings.Contains(got, "notes.txt") {
		t.Errorf("Subject = %q", got)
	}
	if ct := msg.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	for _, want := range []string{
		"command:  touch notes.txt", "for:      cli:dev", "id:       " + p.Token,
		"Approve: " + RequestURL(f.srv.Addr(), p.Token, "approve") + "\r\n",
		"Reject:  " + RequestURL(f.srv.Addr(), p.Token, "reject") + "\r\n",
		"Opening a link answers nothing",
		"mnemos approvals approve " + p.Token,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the mail lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(msgs[0], "signin=") || strings.Contains(msgs[0], "?t=") {
		t.Fatal("the mail holds a sign-in code")
	}
	// The link opens the view, which asks for the click.
	b := f.browser(true)
	if page := text(b.get("/request/" + p.Token + "?answer=approve")); !strings.Contains(page, "Approve this request?") {
		t.Errorf("the approve link's view:\n%s", page)
	}
	if st := f.status(p.Token); st != approvals.StatusPending {
		t.Fatalf("mailing or viewing changed the request: %s", st)
	}
	// A restart mails nothing twice; a new request gets its own mail.
	f.shutdown()
	f.start()
	q := f.ask("touch", "other.txt")
	waitEvents(t, f, audit.KindChannelDelivered, q.Token, 1)
	time.Sleep(100 * time.Millisecond)
	if n := len(smtpd.got()); n != 2 {
		t.Fatalf("%d messages after a restart and a new request, want 2", n)
	}
	if _, err := os.Stat(filepath.Join(f.paths.StateDir, emailDir, "mail.json")); err != nil {
		t.Fatal(err)
	}
}

// TestEmailFailures: a refused connection and a refused login each
// record channel.failed and change nothing else: the request waits, no
// answer or grant is recorded. A refused connection is tried again; a
// refused login (a 5xx reply) is not.
func TestEmailFailures(t *testing.T) {
	t.Run("refused connection", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := ln.Addr().String()
		ln.Close()
		smtpd, _ := newFakeSMTP(t, false)
		f, _ := mailFixture(t, smtpd, nil, func(m *Mailer) { m.SMTP = closed })
		p := f.ask("touch", "notes.txt")
		recs := waitEvents(t, f, audit.KindChannelFailed, p.Token, 2)
		if e, _ := recs[0].Attrs["error"].(string); !strings.Contains(e, "cannot reach "+closed) || !strings.Contains(e, "refused") {
			t.Errorf("error = %q", e)
		}
		if recs[0].Attrs["kind"] != "email" || recs[0].Attrs["channel"] != "mail" || recs[0].Attrs["by"] != "serve" {
			t.Errorf("event = %+v", recs[0].Attrs)
		}
		onlyFailures(t, f, p)
	})
	t.Run("bad password", func(t *testing.T) {
		smtpd, pool := newFakeSMTP(t, true)
		f, _ := mailFixture(t, smtpd, pool, func(m *Mailer) { m.Password = "wrong" })
		p := f.ask("touch", "notes.txt")
		recs := waitEvents(t, f, audit.KindChannelFailed, p.Token, 1)
		if e, _ := recs[0].Attrs["error"].(string); !strings.Contains(e, "login as me@example.com refused: 535") {
			t.Errorf("error = %q", e)
		}
		time.Sleep(200 * time.Millisecond)
		if recs := waitEvents(t, f, audit.KindChannelFailed, p.Token, 1); len(recs) != 1 {
			t.Errorf("a refused login was tried %d times", len(recs))
		}
		if len(smtpd.got()) != 0 {
			t.Fatal("a message went through")
		}
		onlyFailures(t, f, p)
	})
}

// onlyFailures checks that p still waits and that the audit log holds
// nothing about it but its request and channel failures.
func onlyFailures(t *testing.T, f *fixture, p approvals.Pending) {
	t.Helper()
	if st := f.status(p.Token); st != approvals.StatusPending {
		t.Fatalf("the request is %s", st)
	}
	recs, err := f.audit.Tail(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		switch r.Kind {
		case "policy.decision", "approval.requested", audit.KindChannelFailed:
		default:
			t.Errorf("the failure wrote %s", r.Kind)
		}
	}
}

// TestSecurityEmailPasswordNeverLeaks: the SMTP password, and the login
// that encodes it, are in neither serve's log nor the audit log nor the
// mail, even when the server quotes them back in its refusal; and a
// password is sent only after STARTTLS.
func TestSecurityEmailPasswordNeverLeaks(t *testing.T) {
	smtpd, pool := newFakeSMTP(t, true)
	smtpd.echo = true
	wrong := "s3cret-but-wrong"
	f, _ := mailFixture(t, smtpd, pool, func(m *Mailer) { m.Password = wrong })
	p := f.ask("touch", "notes.txt")
	recs := waitEvents(t, f, audit.KindChannelFailed, p.Token, 1)
	blob := base64.StdEncoding.EncodeToString([]byte("\x00me@example.com\x00" + wrong))
	smtpd.mu.Lock()
	logins := slices.Clone(smtpd.logins)
	smtpd.mu.Unlock()
	if len(logins) == 0 || !strings.Contains(logins[0], blob) {
		t.Fatalf("the server saw no login: %v", logins)
	}
	f.shutdown()
	// The right one, which gets through.
	ok, okPool := newFakeSMTP(t, true)
	g, _ := mailFixture(t, ok, okPool, nil)
	q := g.ask("touch", "notes.txt")
	waitEvents(t, g, audit.KindChannelDelivered, q.Token, 1)
	g.shutdown()
	var logs, audits []byte
	for _, x := range []*fixture{f, g} {
		b, err := os.ReadFile(x.paths.AuditFile)
		if err != nil {
			t.Fatal(err)
		}
		audits = append(audits, b...)
		logs = append(logs, x.log.String()...)
	}
	good := base64.StdEncoding.EncodeToString([]byte("\x00me@example.com\x00" + ok.pass))
	for _, where := range []struct{ name, text string }{
		{"serve's log", string(logs)}, {"the audit log", string(audits)}, {"the mail", strings.Join(ok.got(), "")},
		{"the failure", recs[0].Attrs["error"].(string)},
	} {
		for _, secret := range []string{wrong, blob, ok.pass, good} {
			if strings.Contains(where.text, secret) {
				t.Errorf("%s holds %q:\n%s", where.name, secret, where.text)
			}
		}
	}
	if !strings.Contains(recs[0].Attrs["error"].(string), "535") {
		t.Errorf("the failure lost the server's reply: %v", recs[0].Attrs["error"])
	}

	// No STARTTLS offered where the channel requires it: no login, no
	// message, a failure.
	plain, _ := newFakeSMTP(t, false)
	h, _ := mailFixture(t, plain, pool, nil)
	r := h.ask("touch", "other.txt")
	recs = waitEvents(t, h, audit.KindChannelFailed, r.Token, 1)
	if e, _ := recs[0].Attrs["error"].(string); !strings.Contains(e, "does not offer STARTTLS") {
		t.Errorf("error = %q", e)
	}
	plain.mu.Lock()
	defer plain.mu.Unlock()
	if len(plain.logins) > 0 || len(plain.messages) > 0 {
		t.Fatalf("sent over a plain connection: logins %v, messages %d", plain.logins, len(plain.messages))
	}
}

// TestSecurityEmailHeaders: what a request holds cannot add a header to
// the mail nor a line to its subject.
func TestSecurityEmailHeaders(t *testing.T) {
	from, _ := mail.ParseAddress("me@example.com")
	f := newFixture(t)
	p := f.park(dev, []string{"touch", "x\r\nBcc: evil@example.com\r\n\r\nforged body"}, 0)
	raw := string(mailMessage(p, "127.0.0.1:7700", from, from, time.Now()))
	head, _, ok := strings.Cut(raw, "\r\n\r\n")
	if !ok {
		t.Fatal("no header end")
	}
	var names []string
	for _, l := range strings.Split(head, "\r\n") {
		k, _, _ := strings.Cut(l, ":")
		names = append(names, k)
	}
	want := []string{"From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type", "Content-Transfer-Encoding", "Auto-Submitted"}
	if !slices.Equal(names, want) {
		t.Fatalf("headers %v, want %v:\n%s", names, want, head)
	}
	msg, body := decodeMail(t, raw)
	if msg.Header.Get("Content-Transfer-Encoding") != "7bit" {
		t.Errorf("an ASCII card is sent as %s", msg.Header.Get("Content-Transfer-Encoding"))
	}
	if strings.Contains(body, "\nBcc:") || strings.Contains(body, "\nforged body") {
		t.Fatalf("the request's words made lines of their own:\n%s", body)
	}
	if s := msg.Header.Get("Subject"); strings.ContainsAny(s, "\r\n") {
		t.Fatalf("subject %q", s)
	}
	// Words beyond ASCII travel quoted-printable, and read back whole.
	q := f.park(dev, []string{"touch", "résumé.txt"}, 0)
	msg, body = decodeMail(t, string(mailMessage(q, "127.0.0.1:7700", from, from, time.Now())))
	if msg.Header.Get("Content-Transfer-Encoding") != "quoted-printable" || !strings.Contains(body, "command:  touch 'résumé.txt'\r\n") {
		t.Errorf("a card beyond ASCII: %s\n%s", msg.Header.Get("Content-Transfer-Encoding"), body)
	}
	if s, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject")); err != nil || !strings.Contains(s, "résumé.txt") {
		t.Errorf("subject %q, %v", s, err)
	}
}

// TestMailerFromPolicy reads the password from a file only its owner can
// read, and refuses one others can.
func TestMailerFromPolicy(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "smtp.password")
	if err := os.WriteFile(pw, []byte("hunter2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := policy.Channel{Name: "mail", Email: &policy.Email{SMTP: "smtp.example.com:587", From: "me@example.com", To: "me@example.com", PasswordFile: pw, StartTLS: true}}
	if _, err := MailerFromPolicy(c); err == nil || !strings.Contains(err.Error(), "chmod 600") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("a password file others can read: %v", err)
	}
	if err := os.Chmod(pw, 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := MailerFromPolicy(c)
	if err != nil {
		t.Fatal(err)
	}
	if m.Password != "hunter2" || !m.StartTLS || m.Timeout < 30*time.Second {
		t.Fatalf("mailer = %+v", m)
	}
	_ = context.Background()
}
