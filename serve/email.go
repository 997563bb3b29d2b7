package serve

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
)

// Mailer is one email channel (seed 004's "notifications are sent via
// configured channels (Telegram, email, webhook)"): it mails the card of
// each new request, as a short plain-text message with links to the
// request's view on the page (RequestURL), approve and reject. A link
// carries no access token and answers nothing: the view asks for the
// click, which posts the form with the session's CSRF token, in a browser
// signed in to the page.
//
// The mail is sent by serve, not by the process that parks the request:
// its links lead to serve's page, an SMTP exchange (with TLS) takes longer
// than a command should wait, a failure is tried again, and the password
// is read by this one process rather than by every command an agent runs.
//
// The password is never logged, audited or shown: errors that could carry
// it (or the login that encodes it) are scrubbed.
type Mailer struct {
	// Channel is the channel's name in the policy.
	Channel string
	// SMTP is the server's HOST:PORT.
	SMTP string
	// From and To are the addresses, as the policy writes them.
	From, To string
	// Username and Password log in (AUTH PLAIN) when Password is set;
	// Username defaults to From's address.
	Username, Password string
	// StartTLS upgrades the connection before the login and the message;
	// a server that does not offer it gets nothing.
	StartTLS bool
	// TLS is the client's TLS configuration (nil: the system's roots and
	// the server's host name); tests give their own roots.
	TLS *tls.Config
	// Timeout bounds one exchange with the server (default 30 s).
	Timeout time.Duration
	// First is the pause before trying a failed mail again (default 5 s),
	// doubling up to Max (default 2 min), while the request waits. A
	// refusal the server says is permanent (a 5xx reply: a wrong password,
	// an unknown recipient) is not tried again for that request.
	First, Max time.Duration
	// Hostname is the name given in EHLO (default "localhost").
	Hostname string

	srv   *Server
	mu    sync.Mutex
	state mailState
	tries map[string]*mailTry
}

// mailState is what a mailer keeps across restarts (email/CHANNEL.json in
// the state directory): the requests whose card was mailed, so that none
// is mailed twice.
type mailState struct {
	Sent map[string]time.Time `json:"sent"`
}

type mailTry struct {
	attempts int
	next     time.Time
	gaveUp   bool
}

const emailDir = "email"

// MailerFromPolicy builds the mailer of an email channel, reading its
// password from password_file, which only its owner may read.
func MailerFromPolicy(c policy.Channel) (*Mailer, error) {
	if c.Email == nil {
		return nil, fmt.Errorf("channel %s is not an email channel", c.Name)
	}
	m := &Mailer{Channel: c.Name, SMTP: c.Email.SMTP, From: c.Email.From, To: c.Email.To,
		Username: c.Email.Username, StartTLS: c.Email.StartTLS, Timeout: max(c.Timeout, 30*time.Second)}
	if c.Email.PasswordFile != "" {
		pw, err := readPassword(c.Email.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("channel %s: %w", c.Name, err)
		}
		m.Password = pw
	}
	if _, err := m.check(); err != nil {
		return nil, fmt.Errorf("channel %s: %w", c.Name, err)
	}
	return m, nil
}

// readPassword reads an SMTP password from a file only its owner can
// read (a final newline is not part of it). Its errors never hold the
// file's content.
func readPassword(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the SMTP password: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s must be a file only its owner can read (mode %04o): chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the SMTP password: %w", err)
	}
	pw := strings.TrimRight(string(b), "\r\n")
	if pw == "" || strings.ContainsAny(pw, "\r\n\x00") {
		return "", fmt.Errorf("%s holds no password (one line)", path)
	}
	return pw, nil
}

// mailAddrs are a mailer's parsed addresses.
type mailAddrs struct {
	from, to *mail.Address
	host     string
}

func (m *Mailer) check() (mailAddrs, error) {
	var a mailAddrs
	var err error
	if a.from, err = mail.ParseAddress(m.From); err != nil {
		return a, fmt.Errorf("from %q: %w", m.From, err)
	}
	if a.to, err = mail.ParseAddress(m.To); err != nil {
		return a, fmt.Errorf("to %q: %w", m.To, err)
	}
	if a.host, _, err = net.SplitHostPort(m.SMTP); err != nil {
		return a, fmt.Errorf("smtp %q: %w", m.SMTP, err)
	}
	return a, nil
}

func (m *Mailer) attach(s *Server) {
	m.srv = s
	if m.Timeout <= 0 {
		m.Timeout = 30 * time.Second
	}
	if m.First <= 0 {
		m.First = 5 * time.Second
	}
	if m.Max <= 0 {
		m.Max = 2 * time.Minute
	}
	if m.Hostname == "" {
		m.Hostname = "localhost"
	}
	m.tries = map[string]*mailTry{}
}

func (m *Mailer) statePath() string {
	return filepath.Join(m.srv.cfg.StateDir, emailDir, m.Channel+".json")
}

// run mails the cards of new requests until ctx is done: at every change
// of the registry, and at least every Refresh (for the tries due).
func (m *Mailer) run(ctx context.Context, s *Server) {
	if err := updateJSON(m.statePath(), &m.state, func() error { return nil }); err != nil {
		s.cfg.Log.Error("email: read state", "channel", m.Channel, "err", err)
	}
	if m.state.Sent == nil {
		m.state.Sent = map[string]time.Time{}
	}
	for {
		changed := s.hub.changed()
		m.sync(ctx)
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-time.After(s.cfg.Refresh):
		}
	}
}

func (m *Mailer) sync(ctx context.Context) {
	s := m.srv
	now := s.cfg.Now()
	list, err := s.cfg.Registry.List(ctx, approvals.ListOptions{Limit: pendingLimit}, now)
	if err != nil {
		if ctx.Err() == nil {
			s.cfg.Log.Error("email: read requests", "err", err)
		}
		return
	}
	for _, p := range list {
		if ctx.Err() != nil {
			return
		}
		if p.StatusAt(now) != approvals.StatusPending {
			continue
		}
		m.mu.Lock()
		_, sent := m.state.Sent[p.Token]
		try := m.tries[p.Token]
		m.mu.Unlock()
		if sent || try != nil && (try.gaveUp || now.Before(try.next)) {
			continue
		}
		m.mailCard(ctx, p, try)
	}
	// Forget what was mailed a day ago.
	m.mu.Lock()
	changed := false
	for tok, at := range m.state.Sent {
		if now.Sub(at) > 24*time.Hour {
			delete(m.state.Sent, tok)
			delete(m.tries, tok)
			changed = true
		}
	}
	m.mu.Unlock()
	if changed {
		m.save()
	}
}

func (m *Mailer) mailCard(ctx context.Context, p approvals.Pending, try *mailTry) {
	s := m.srv
	if try == nil {
		try = &mailTry{}
		m.mu.Lock()
		m.tries[p.Token] = try
		m.mu.Unlock()
	}
	start := time.Now()
	err := m.Send(ctx, p, s.addr)
	m.mu.Lock()
	try.attempts++
	attempt := try.attempts
	m.mu.Unlock()
	recordDelivery(ctx, s, p.Token, m.Channel, "email", time.Since(start), err, attempt)
	if err == nil {
		s.cfg.Log.Info("email: card sent", "channel", m.Channel, "id", p.Token, "attempt", attempt)
		m.mu.Lock()
		m.state.Sent[p.Token] = s.cfg.Now().UTC()
		m.mu.Unlock()
		m.save()
		return
	}
	m.mu.Lock()
	var te *textproto.Error
	if errors.As(err, &te) && te.Code >= 500 {
		try.gaveUp = true
	} else {
		d := m.First
		for i := 1; i < attempt && d < m.Max; i++ {
			d *= 2
		}
		try.next = s.cfg.Now().Add(min(d, m.Max))
	}
	gaveUp := try.gaveUp
	m.mu.Unlock()
	if gaveUp {
		s.cfg.Log.Error("email: card not sent; the server refused it for good", "channel", m.Channel, "id", p.Token, "err", err)
	} else {
		s.cfg.Log.Warn("email: card not sent; retrying", "channel", m.Channel, "id", p.Token, "attempt", attempt, "err", err)
	}
}

func (m *Mailer) save() {
	m.mu.Lock()
	b, err := json.MarshalIndent(m.state, "", "  ")
	m.mu.Unlock()
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(m.statePath()), 0o700); err == nil {
			err = writeFileAtomic(m.statePath(), append(b, '\n'))
		}
	}
	if err != nil {
		m.srv.cfg.Log.Error("email: save state", "channel", m.Channel, "err", err)
	}
}

// Send mails the card of p, its links pointing at the page on addr. Its
// error never holds the password.
func (m *Mailer) Send(ctx context.Context, p approvals.Pending, addr string) error {
	a, err := m.check()
	if err != nil {
		return err
	}
	now := time.Now()
	if m.srv != nil {
		now = m.srv.cfg.Now()
	}
	msg := mailMessage(p, addr, a.from, a.to, now)
	return m.scrub(m.deliver(ctx, a, msg))
}

// deliver is one SMTP exchange: EHLO, STARTTLS (required when asked
// for), AUTH PLAIN when there is a password, MAIL, RCPT, DATA, QUIT.
func (m *Mailer) deliver(ctx context.Context, a mailAddrs, msg []byte) error {
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d := net.Dialer{}
	conn, err := d.DialContext(ctx, "tcp", m.SMTP)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) {
			return fmt.Errorf("cannot reach %s: %w", m.SMTP, oe.Err)
		}
		return err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	c, err := smtp.NewClient(conn, a.host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("greeting: %w", err)
	}
	defer c.Close()
	hostname := m.Hostname
	if hostname == "" {
		hostname = "localhost"
	}
	if err := c.Hello(hostname); err != nil {
		return fmt.Errorf("EHLO: %w", err)
	}
	if m.StartTLS {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return errors.New("the server does not offer STARTTLS, which the channel requires (starttls: true): nothing was sent")
		}
		cfg := m.TLS.Clone()
		if cfg == nil {
			cfg = &tls.Config{}
		}
		if cfg.ServerName == "" {
			cfg.ServerName = a.host
		}
		if cfg.MinVersion == 0 {
			cfg.MinVersion = tls.VersionTLS12
		}
		if err := c.StartTLS(cfg); err != nil {
			return fmt.Errorf("STARTTLS: %w", err)
		}
	}
	if m.Password != "" {
		if ok, _ := c.Extension("AUTH"); !ok {
			return errors.New("the server offers no login (AUTH), and the channel has a password: nothing was sent")
		}
		// PlainAuth sends the password only over TLS or to a loopback
		// address.
		if err := c.Auth(smtp.PlainAuth("", m.user(a), m.Password, a.host)); err != nil {
			return fmt.Errorf("login as %s refused: %w", m.user(a), err)
		}
	}
	if err := c.Mail(a.from.Address); err != nil {
		return fmt.Errorf("MAIL FROM: %w", err)
	}
	if err := c.Rcpt(a.to.Address); err != nil {
		return fmt.Errorf("RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	return c.Quit()
}

func (m *Mailer) user(a mailAddrs) string {
	if m.Username != "" {
		return m.Username
	}
	return a.from.Address
}

// scrub removes the password, and the login that encodes it, from an
// error's text, keeping what callers branch on (a server's reply code).
func (m *Mailer) scrub(err error) error {
	if err == nil || m.Password == "" {
		return err
	}
	msg := err.Error()
	secrets := []string{m.Password}
	if a, cerr := m.check(); cerr == nil {
		u := m.user(a)
		secrets = append(secrets, base64.StdEncoding.EncodeToString([]byte("\x00"+u+"\x00"+m.Password)))
	}
	clean := msg
	for _, s := range secrets {
		clean = strings.ReplaceAll(clean, s, "<password>")
	}
	if clean == msg {
		return err
	}
	var te *textproto.Error
	if errors.As(err, &te) {
		return &scrubbedError{msg: clean, code: &textproto.Error{Code: te.Code, Msg: "<scrubbed>"}}
	}
	return errors.New(clean)
}

// scrubbedError is an error whose text was scrubbed, still holding the
// server's reply code.
type scrubbedError struct {
	msg  string
	code *textproto.Error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.code }

// mailMessage is the mail of a card: headers and a quoted-printable plain
// text body. Every text from the request is redacted as the audit log
// redacts it and escaped (Printable); the subject is one line, encoded
// where it is not plain ASCII, so nothing from the request can add a
// header.
func mailMessage(p approvals.Pending, addr string, from, to *mail.Address, now time.Time) []byte {
	msg := gate.CardMessage(p)
	lines := make([]string, len(msg.Card))
	for i, l := range msg.Card {
		lines[i] = approvals.Printable(l)
	}
	subject := "mnemos: a request waits"
	if len(lines) > 0 {
		subject = "mnemos: " + lines[0]
	}
	if len(msg.Argv) > 0 {
		subject += " " + approvals.Printable(quoteArgv(msg.Argv))
	}
	subject = truncate(strings.Join(strings.Fields(subject), " "), 150)

	var body bytes.Buffer
	for _, l := range lines {
		body.WriteString(l + "\n")
	}
	body.WriteString("\n")
	if ext, ok := gate.ExtensionOf(p); ok {
		fmt.Fprintf(&body, "extension: %s\n", approvals.Printable(ext))
	} else {
		fmt.Fprintf(&body, "command:  %s\n", approvals.Printable(quoteArgv(msg.Argv)))
		fmt.Fprintf(&body, "in:       %s\n", approvals.Printable(msg.Cwd))
	}
	fmt.Fprintf(&body, "for:      %s\n", idString(p.Requester()))
	fmt.Fprintf(&body, "expires:  %s\n", p.ExpiresAt.Local().Format("Mon Jan 2 15:04:05 MST"))
	fmt.Fprintf(&body, "id:       %s\n\n", p.Token)
	fmt.Fprintf(&body, "Approve: %s\n", RequestURL(addr, p.Token, "approve"))
	fmt.Fprintf(&body, "Reject:  %s\n\n", RequestURL(addr, p.Token, "reject"))
	body.WriteString("Each link opens this request on the approvals page of mnemos serve,\n" +
		"in a browser signed in to it (`mnemos approvals url` prints the address\n" +
		"that signs one in), on the machine serve runs on or through an SSH\n" +
		"tunnel to it. Opening a link answers nothing: the page asks for the click.\n\n")
	flags := ""
	if id := p.Requester(); id.Channel != "cli" {
		flags = "--channel " + shellWord(id.Channel) + " "
	}
	fmt.Fprintf(&body, "Or in a terminal: mnemos %sapprovals approve %s (or deny, or watch)\n", flags, p.Token)

	var out bytes.Buffer
	header := func(k, v string) { out.WriteString(k + ": " + v + "\r\n") }
	header("From", from.String())
	header("To", to.String())
	header("Subject", mime.QEncoding.Encode("utf-8", subject))
	header("Date", now.Format(time.RFC1123Z))
	header("Message-ID", "<"+p.Token+"."+fmt.Sprint(p.CreatedAt.Unix())+"@mnemos.invalid>")
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	text := bytes.ReplaceAll(body.Bytes(), []byte("\n"), []byte("\r\n"))
	if plainASCII(text) {
		// As it is, so that even a reader of the raw mail sees whole
		// links.
		header("Content-Transfer-Encoding", "7bit")
		header("Auto-Submitted", "auto-generated")
		out.WriteString("\r\n")
		out.Write(text)
		return out.Bytes()
	}
	header("Content-Transfer-Encoding", "quoted-printable")
	header("Auto-Submitted", "auto-generated")
	out.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&out)
	qp.Write(text)
	qp.Close()
	out.WriteString("\r\n")
	return out.Bytes()
}

// plainASCII reports text that 7bit carries as it is: ASCII, lines of at
// most 998 characters (RFC 5322).
func plainASCII(text []byte) bool {
	for _, l := range bytes.Split(text, []byte("\r\n")) {
		if len(l) > 998 {
			return false
		}
		for _, c := range l {
			if c >= 0x80 || c == 0 || c == '\r' || c == '\n' {
				return false
			}
		}
	}
	return true
}
