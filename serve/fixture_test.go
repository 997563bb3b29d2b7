package serve

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fixture is a gate with its state in a fresh directory and a running
// serve in front of it.
type fixture struct {
	t     *testing.T
	dir   string
	ws    string
	paths gate.Paths
	g     *gate.Gate
	st    approvals.Backend
	audit *audit.Log
	log   *syncBuffer
	srv   *Server
	stop  context.CancelFunc
	done  chan error
	cfg   Config
}

var dev = approvals.Identity{Channel: "cli", Sender: "dev"}

func newFixture(t *testing.T, tweak ...func(*Config)) *fixture {
	t.Helper()
	return newFixturePolicy(t, policy.Default(), tweak...)
}

func newFixturePolicy(t *testing.T, pol *policy.Policy, tweak ...func(*Config)) *fixture {
	t.Helper()
	f := newGateFixture(t, pol, nil, tweak...)
	f.start()
	return f
}

// newGateFixture is a fixture whose serve is configured but not started,
// its gate reading the environment through getenv (none when nil).
func newGateFixture(t *testing.T, pol *policy.Policy, getenv func(string) string, tweak ...func(*Config)) *fixture {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "mnemos-serve-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home := filepath.Join(dir, "home")
	ws := filepath.Join(dir, "ws")
	for _, d := range []string{home, filepath.Join(ws, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	paths, err := gate.Locate(filepath.Join(home, ".mnemos"), func(string) string { return "" }, home)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, dir: dir, ws: ws, paths: paths, log: &syncBuffer{}}
	f.audit = audit.Open(paths.AuditFile, audit.Options{Key: paths.AuditKey})
	f.g = gate.New(gate.Config{Paths: paths, Policy: pol, UserHome: home, SelfNames: []string{"mnemos"}, Audit: f.audit, Getenv: getenv})
	t.Cleanup(func() { f.g.Close() })
	if f.st, err = f.g.Store(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.cfg = Config{
		StateDir: paths.StateDir,
		Socket:   paths.ServeSocket(),
		Addr:     "127.0.0.1:0",
		Identity: dev,
		Resolver: f.g,
		Registry: f.st,
		Audit:    f.audit,
		Log:      slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Watch:    []string{paths.DBFile, paths.DBFile + "-wal"},
		Poll:     10 * time.Millisecond,
	}
	for _, fn := range tweak {
		fn(&f.cfg)
	}
	return f
}

func (f *fixture) start() {
	f.t.Helper()
	srv, err := Start(f.cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.srv, f.stop, f.done = srv, cancel, make(chan error, 1)
	go func() { f.done <- srv.Run(ctx) }()
	f.t.Cleanup(f.shutdown)
}

// shutdown stops the server as SIGTERM does and waits for it.
func (f *fixture) shutdown() {
	if f.stop == nil {
		return
	}
	f.stop()
	f.stop = nil
	select {
	case err := <-f.done:
		if err != nil {
			f.t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		f.t.Error("serve did not stop")
	}
}

// ask parks a request of dev's for argv through the gate.
func (f *fixture) ask(argv ...string) approvals.Pending {
	f.t.Helper()
	d, err := f.g.Decide(context.Background(), gate.Request{Argv: argv, Cwd: f.ws, Channel: dev.Channel, Sender: dev.Sender}, gate.Mode{})
	if err != nil {
		f.t.Fatal(err)
	}
	if d.Approval == nil {
		f.t.Fatalf("%v did not ask: %s %s", argv, d.Outcome, d.Reason)
	}
	return *d.Approval
}

// park stores a request as given, for what the gate would not ask.
func (f *fixture) park(id approvals.Identity, argv []string, ttl time.Duration) approvals.Pending {
	f.t.Helper()
	p, err := f.st.CreatePending(context.Background(), approvals.NewPending{
		Channel: id.Channel, Sender: id.Sender, CapabilityClass: "fs:write:" + f.ws + "/x",
		ActionVerb: "write", TargetSummary: strings.Join(argv, " "),
		RequestKey: approvals.RequestKey(approvals.KeyInput{Channel: id.Channel, Sender: id.Sender, Cwd: f.ws, Argv: argv}),
		Details:    approvals.Details{Argv: argv, Cwd: f.ws},
	}, time.Now(), ttl)
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *fixture) status(token string) approvals.Status {
	f.t.Helper()
	p, err := f.st.Get(context.Background(), token)
	if err != nil {
		f.t.Fatal(err)
	}
	return p.StatusAt(time.Now())
}

func (f *fixture) base() string { return "http://" + f.srv.Addr() }

// code issues a one-time sign-in code.
func (f *fixture) code() string {
	link, _, err := f.srv.SignInURL()
	if err != nil {
		f.t.Fatal(err)
	}
	u, err := url.Parse(link)
	if err != nil {
		f.t.Fatal(err)
	}
	return u.Query().Get("signin")
}

// browser is an HTTP client with a cookie jar that does not follow
// redirects, signed in with a sign-in code unless anonymous.
type browser struct {
	f *fixture
	c *http.Client
}

func (f *fixture) browser(signIn bool) *browser {
	f.t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &browser{f: f, c: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if signIn {
		resp := b.get("/?signin=" + f.code())
		if resp.StatusCode != http.StatusSeeOther {
			f.t.Fatalf("sign in: %s", resp.Status)
		}
	}
	return b
}

func (b *browser) do(req *http.Request) *http.Response {
	b.f.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.f.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp
}

func (b *browser) get(path string) *http.Response {
	b.f.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.f.base()+path, nil)
	if err != nil {
		b.f.t.Fatal(err)
	}
	return b.do(req)
}

func (b *browser) post(path string, form url.Values, header ...string) *http.Response {
	b.f.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.f.base()+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.f.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			// The jar would look cookies up by this host: send the
			// page's own, as a rebinding page's browser would.
			req.Host = header[i+1]
			base, _ := url.Parse(b.f.base())
			for _, c := range b.c.Jar.Cookies(base) {
				req.AddCookie(c)
			}
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(req)
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf reads the CSRF token from the page.
func (b *browser) csrf() string {
	b.f.t.Helper()
	resp := b.get("/")
	m := csrfRe.FindStringSubmatch(text(resp))
	if m == nil {
		b.f.t.Fatalf("no CSRF token on the page (%s)", resp.Status)
	}
	return m[1]
}

// answer posts an answer the way the page's form does.
func (b *browser) answer(id, answer string) *http.Response {
	b.f.t.Helper()
	return b.post("/answer", url.Values{"csrf": {b.csrf()}, "id": {id}, "answer": {answer}})
}

func text(resp *http.Response) string {
	b, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return string(b)
}
