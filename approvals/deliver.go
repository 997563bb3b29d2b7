package approvals

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mnemos-dev/mnemos/policy"
)

// Message is what a channel receives for a new pending request: the card,
// its buttons and what the request is, as one JSON object. The caller
// builds it from redacted text (as the audit log writes it): a channel is
// a copy of the request outside mnemos. Deliver escapes every text in it
// a bridge may show a person (Printable), as the card's lines are.
type Message struct {
	Token string `json:"token"`
	// Card is the card's lines (RenderCard) and Form their shape.
	Card    []string `json:"card"`
	Form    string   `json:"form"`
	Buttons []Button `json:"buttons"`
	// Requester is whose request it is; only that identity can answer it.
	Requester       Identity  `json:"requester"`
	Argv            []string  `json:"argv"`
	Cwd             string    `json:"cwd"`
	CapabilityClass string    `json:"capability_class"`
	Reversibility   string    `json:"reversibility,omitempty"`
	CreatedAt       time.Time `json:"created_at"`
	ExpiresAt       time.Time `json:"expires_at"`
	// Answer is the command a bridge runs with a button's data.
	Answer string `json:"answer"`
}

// printable returns m with each of its texts escaped by Printable: what a
// bridge shows of the argv, the directory or the requester cannot add a
// line, restyle the chat or reorder the text, any more than the card can.
func (m Message) printable() Message {
	each := func(ss []string) []string {
		if ss == nil {
			return nil
		}
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = Printable(s)
		}
		return out
	}
	m.Token = Printable(m.Token)
	m.Card = each(m.Card)
	m.Form = Printable(m.Form)
	m.Buttons = slices.Clone(m.Buttons)
	for i, b := range m.Buttons {
		m.Buttons[i] = Button{Text: Printable(b.Text), Data: Printable(b.Data)}
	}
	m.Requester = Identity{Channel: Printable(m.Requester.Channel), Sender: Printable(m.Requester.Sender)}
	m.Argv = each(m.Argv)
	m.Cwd = Printable(m.Cwd)
	m.CapabilityClass = Printable(m.CapabilityClass)
	m.Reversibility = Printable(m.Reversibility)
	m.Answer = Printable(m.Answer)
	return m
}

// Delivery is the outcome of delivering a message to one channel.
type Delivery struct {
	Channel  string        `json:"channel"`
	Kind     string        `json:"kind"`
	Duration time.Duration `json:"duration"`
	// Err says why the message was not delivered; empty when it was.
	Err string `json:"error,omitempty"`
}

// OK reports whether the channel took the message.
func (d Delivery) OK() bool { return d.Err == "" }

// SystemPath is the PATH a command channel's bare program name is looked
// up in, and the PATH it runs with: never the caller's, which whoever
// starts mnemos chooses.
const SystemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Deliverer sends messages to channels. The zero value is ready to use.
type Deliverer struct {
	// Client posts to webhooks; nil means a client that uses no proxy and
	// follows no redirect (a redirect is a failure), so that neither the
	// environment nor the server sends the card elsewhere.
	Client *http.Client
	// Env is the environment of command channels; nil means this
	// process's, without the dynamic loader's variables (LD_*, DYLD_*).
	// PATH is always SystemPath.
	Env []string
	// Now stamps a signed webhook's POST; nil means time.Now.
	Now func() time.Time
}

// Deliver sends m to every channel at once and returns one Delivery per
// channel, in order. Each delivery is bounded by its channel's timeout
// (policy.DefaultChannelTimeout when unset, never above
// policy.MaxChannelTimeout). A failure is reported, never returned as an
// error: delivering a card changes no decision.
func (dl Deliverer) Deliver(ctx context.Context, channels []policy.Channel, m Message) []Delivery {
	out := make([]Delivery, len(channels))
	if len(channels) == 0 {
		return out
	}
	body, err := json.Marshal(m.printable())
	if err != nil {
		for i, c := range channels {
			out[i] = Delivery{Channel: c.Name, Kind: c.Kind(), Err: "cannot encode the card: " + err.Error()}
		}
		return out
	}
	body = append(body, '\n')
	var wg sync.WaitGroup
	for i, c := range channels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = dl.deliverOne(ctx, c, body)
		}()
	}
	wg.Wait()
	return out
}

func (dl Deliverer) deliverOne(ctx context.Context, c policy.Channel, body []byte) Delivery {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = policy.DefaultChannelTimeout
	}
	if timeout > policy.MaxChannelTimeout {
		timeout = policy.MaxChannelTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	var err error
	if c.Webhook != "" {
		err = dl.post(ctx, c.Webhook, c.SecretFile, body)
	} else {
		err = dl.run(ctx, c.Command, body)
	}
	d := Delivery{Channel: c.Name, Kind: c.Kind(), Duration: time.Since(start)}
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("timed out after %v", timeout)
		}
		d.Err = Printable(err.Error())
	}
	return d
}

// post sends body to target, signed with the key in secretFile when it
// is set; a 2xx status is delivery.
func (dl Deliverer) post(ctx context.Context, target, secretFile string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "mnemos")
	if secretFile != "" {
		secret, err := ReadSecret(secretFile)
		if err != nil {
			return err
		}
		now := time.Now
		if dl.Now != nil {
			now = dl.Now
		}
		req.Header.Set(SignatureHeader, Sign(secret, now(), body))
	}
	client := dl.Client
	if client == nil {
		client = &http.Client{
			Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		// Post "URL": dial tcp ...: the channel names the URL already.
		var ue *url.Error
		if errors.As(err, &ue) {
			return ue.Err
		}
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("webhook answered %s", resp.Status)
	}
	return nil
}

// run starts argv outside the sandbox with body on stdin; exit status 0 is
// delivery.
func (dl Deliverer) run(ctx context.Context, argv []string, body []byte) error {
	if len(argv) == 0 || argv[0] == "" {
		return errors.New("empty command")
	}
	prog, err := lookSystemPath(argv[0])
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, prog, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = "/"
	cmd.Env = dl.env()
	cmd.Stdin = bytes.NewReader(body)
	var stderr tailBuffer
	cmd.Stderr = &stderr
	// A descendant that keeps stderr open does not hold the gate past the
	// timeout.
	cmd.WaitDelay = 200 * time.Millisecond
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrWaitDelay) {
			// It exited 0; only a descendant kept its stderr open.
			return nil
		}
		if msg := strings.TrimSpace(stderr.String()); msg != "" && ctx.Err() == nil {
			return fmt.Errorf("%v: %s", err, msg)
		}
		return err
	}
	return nil
}

// lookSystemPath finds a bare program name in SystemPath; an absolute
// path is used as it is.
func lookSystemPath(name string) (string, error) {
	if filepath.IsAbs(name) {
		return name, nil
	}
	if strings.ContainsRune(name, '/') {
		return "", fmt.Errorf("program %q is a relative path", name)
	}
	for _, dir := range filepath.SplitList(SystemPath) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("program %q not found in %s (write an absolute path)", name, SystemPath)
}

func (dl Deliverer) env() []string {
	src := dl.Env
	if src == nil {
		src = os.Environ()
	}
	out := make([]string, 0, len(src)+1)
	for _, kv := range src {
		if strings.HasPrefix(kv, "LD_") || strings.HasPrefix(kv, "DYLD_") || strings.HasPrefix(kv, "PATH=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PATH="+SystemPath)
}

// tailBuffer keeps the last 512 bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 512 {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-512:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// SignatureHeader carries a webhook POST's signature.
const SignatureHeader = "Mnemos-Signature"

// Errors VerifySignature returns.
var (
	ErrBadSignature   = errors.New("webhook signature does not match the body")
	ErrStaleSignature = errors.New("webhook signature is too old or from the future (a replay?)")
)

// Sign returns the Mnemos-Signature header of a webhook POST made at t:
// "t=TIMESTAMP,v1=HEX", where TIMESTAMP is t in Unix seconds and HEX the
// HMAC-SHA256, under secret, of TIMESTAMP, a dot and the body.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + signature(secret, ts, body)
}

func signature(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// VerifySignature is what a webhook's receiver does with a POST: it
// splits the Mnemos-Signature header into its timestamp and v1 values,
// recomputes HMAC-SHA256(secret, TIMESTAMP + "." + raw body), compares
// it in constant time with v1 (ErrBadSignature for a tampered body or a
// wrong secret), and refuses a timestamp more than tolerance away from
// now (ErrStaleSignature: a replayed POST). A receiver that must not act
// twice on one card also remembers the tokens it has seen.
func VerifySignature(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts, v1 string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			v1 = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || v1 == "" {
		return ErrBadSignature
	}
	if !hmac.Equal([]byte(v1), []byte(signature(secret, ts, body))) {
		return ErrBadSignature
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrStaleSignature
	}
	return nil
}

// ReadSecret reads a signing key from a file (a final newline is not part
// of it). The error never holds the file's content.
func ReadSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the webhook secret: %w", err)
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) == 0 {
		return nil, fmt.Errorf("the webhook secret %s is empty", path)
	}
	return b, nil
}
