package serve

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/gate"
)

// Resolver answers requests and sweeps expired ones; *gate.Gate is one.
// It makes the registry's checks, issues tickets and writes the audit
// events: serve decides nothing itself.
type Resolver interface {
	Approve(ctx context.Context, token string, by approvals.Identity, o gate.ApproveOptions) (gate.Approved, error)
	Deny(ctx context.Context, token string, by approvals.Identity) (approvals.Pending, error)
	ExpireSweep(ctx context.Context) (int, error)
}

// Registry reads requests; *approvals.Store is one.
type Registry interface {
	List(ctx context.Context, o approvals.ListOptions, now time.Time) ([]approvals.Pending, error)
	Get(ctx context.Context, token string) (approvals.Pending, error)
}

// Recorder appends audit events (channel.delivered, channel.failed).
type Recorder interface {
	Append(ctx context.Context, kind string, attrs ...slog.Attr) error
}

// Config is what a Server needs; nothing is read from globals.
type Config struct {
	// StateDir holds serve's lock, serve.json and the channels' state.
	StateDir string
	// Socket is the unix socket, in the secrets directory, on which the
	// user's own commands ask for a sign-in link (SignIn); none when "".
	Socket string
	// Addr is the loopback address to listen on (host:port; port 0
	// chooses one).
	Addr string
	// Identity is whom the page answers as: the requests of this identity
	// get buttons, and the registry refuses the others.
	Identity approvals.Identity
	Resolver Resolver
	Registry Registry
	// Audit receives the channel events serve writes itself.
	Audit Recorder
	// Log is the diagnostic log (stderr).
	Log *slog.Logger
	Now func() time.Time
	// Rand is the source of the session key, sign-in codes and session
	// ids (crypto/rand when nil).
	Rand io.Reader
	// Watch are files whose change means the registry may have changed
	// (the database and its WAL); they are checked every Poll.
	Watch []string
	// Poll is how often Watch is checked (default 100 ms); the registry
	// is read at least every Refresh (default 2 s) all the same.
	Poll, Refresh time.Duration
	// Changes, when set, tells of every change to the requests as it is
	// committed, on any host (the PostgreSQL store's LISTEN/NOTIFY): the
	// registry is read when it wakes, and at least every Refresh; Watch
	// is not looked at.
	Changes approvals.Waiter
	// Fleet: the state is shared by several hosts. The page and the bot
	// then also show the requests of the identities they answer for (the
	// page's Identity, the bot's paired ones) parked on the other hosts,
	// each card naming its host. Those are answered through the Resolver
	// as every other: the registry's four checks, the one-shot ticket
	// bound to the host that parked the request, the audit events.
	Fleet bool
	// ShipAudit, when set, sends the local audit log's new events to the
	// shared state's central table (gate.Gate.ShipAudit) every ShipEvery
	// (default 30 s) and once more on the way out; it returns how many
	// it sent.
	ShipAudit func(context.Context) (int, error)
	ShipEvery time.Duration
	// SweepEvery is how often expired requests are swept (default 5 s).
	SweepEvery time.Duration
	// Drain bounds how long a stop waits for requests in flight (5 s).
	Drain time.Duration
	// Telegram are the bots of the policy's telegram channels.
	Telegram []*Telegram
	// Webhooks, when set, retries failed webhook deliveries.
	Webhooks *Retrier
	// Mailers are the policy's email channels.
	Mailers []*Mailer
	// Journal, when set, is where the page finds what the runs an
	// approval let through changed, and undoes them (journal.undo is
	// written to Audit).
	Journal Journal
}

// Server is a running mnemos serve.
type Server struct {
	cfg  Config
	inst *instance
	ln   net.Listener
	addr string
	sess *sessions
	// signin are the one-time codes that sign a browser in.
	signin signIns
	sock   net.Listener
	hub    *hub
	web    *http.Server

	mu     sync.Mutex
	undoMu sync.Mutex        // one undo at a time
	flash  map[string]string // session -> message for its next page
	wg     sync.WaitGroup
	closed chan struct{}
	// orphaned is closed when the lock file is gone: the state directory
	// was removed or moved, and there is nothing left to serve.
	orphaned chan struct{}
	parsed   *template.Template
}

// Start takes the lock (ErrRunning when another instance holds it), draws
// the session key (in memory only), and listens on the page's address and
// on the socket. It does not serve yet: see Run.
func Start(cfg Config) (*Server, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 100 * time.Millisecond
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = 2 * time.Second
	}
	if cfg.SweepEvery <= 0 {
		cfg.SweepEvery = 5 * time.Second
	}
	if cfg.Drain <= 0 {
		cfg.Drain = 5 * time.Second
	}
	if cfg.ShipEvery <= 0 {
		cfg.ShipEvery = 30 * time.Second
	}
	if cfg.Resolver == nil || cfg.Registry == nil {
		return nil, errors.New("serve: a resolver and a registry are required")
	}
	host, err := CheckAddr(cfg.Addr)
	if err != nil {
		return nil, err
	}
	inst, err := acquire(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	// An older serve kept its access token in a file; it opens nothing
	// now, and is removed.
	_ = os.Remove(filepath.Join(cfg.StateDir, legacyTokenName))
	sess, err := newSessions(cfg.Rand, cfg.Now)
	if err != nil {
		inst.release()
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, portOf(cfg.Addr)))
	if err != nil {
		inst.release()
		return nil, err
	}
	var sock net.Listener
	if cfg.Socket != "" {
		if sock, err = listenSocket(cfg.Socket); err != nil {
			ln.Close()
			inst.release()
			return nil, err
		}
	}
	s := &Server{
		cfg:      cfg,
		inst:     inst,
		ln:       ln,
		sock:     sock,
		addr:     ln.Addr().String(),
		sess:     sess,
		hub:      newHub(),
		flash:    map[string]string{},
		closed:   make(chan struct{}),
		orphaned: make(chan struct{}),
	}
	for _, tg := range cfg.Telegram {
		tg.attach(s)
	}
	for _, m := range cfg.Mailers {
		m.attach(s)
	}
	if err := inst.publish(Info{Addr: s.addr, PID: os.Getpid(), Started: cfg.Now().UTC()}); err != nil {
		ln.Close()
		if sock != nil {
			sock.Close()
		}
		inst.release()
		return nil, err
	}
	s.web = &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    32 << 10,
		// Errors of the HTTP server go to the diagnostic log; they never
		// carry a request's URL.
		ErrorLog: slog.NewLogLogger(cfg.Log.Handler(), slog.LevelDebug),
	}
	return s, nil
}

// Addr is the address the page listens on.
func (s *Server) Addr() string { return s.addr }

// Run serves until ctx is done, then drains: it stops accepting, lets
// requests in flight (and the bot's current update) finish within
// Config.Drain, closes the live streams and releases the lock.
func (s *Server) Run(ctx context.Context) error {
	defer s.inst.release()
	work, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	errc := make(chan error, 1)
	go func() {
		err := s.web.Serve(s.ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		errc <- err
	}()
	if s.sock != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveSocket(s.sock)
		}()
		defer s.sock.Close()
	}
	s.goLoop(work, "watch", s.watch)
	s.goLoop(work, "sweep", s.sweep)
	if s.cfg.ShipAudit != nil {
		s.goLoop(work, "audit ship", s.ship)
	}
	if s.cfg.Webhooks != nil {
		s.goLoop(work, "webhooks", func(ctx context.Context) { s.cfg.Webhooks.run(ctx, s) })
	}
	for _, tg := range s.cfg.Telegram {
		s.goLoop(work, "telegram "+tg.Channel, func(ctx context.Context) { tg.run(ctx, s) })
	}
	for _, m := range s.cfg.Mailers {
		s.goLoop(work, "email "+m.Channel, func(ctx context.Context) { m.run(ctx, s) })
	}
	s.cfg.Log.Info("serving approvals", "addr", s.addr, "identity", s.cfg.Identity.Channel+":"+s.cfg.Identity.Sender)
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	case <-s.orphaned:
		s.cfg.Log.Warn("the state directory was removed or moved; stopping", "dir", s.cfg.StateDir)
	}
	s.cfg.Log.Info("stopping: draining requests in flight")
	close(s.closed) // live streams end
	if s.sock != nil {
		s.sock.Close() // no more sign-in links
	}
	dctx, cancel := context.WithTimeout(context.Background(), s.cfg.Drain)
	defer cancel()
	if serr := s.web.Shutdown(dctx); serr != nil && err == nil {
		err = fmt.Errorf("drain: %w", serr)
	}
	stop()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-dctx.Done():
		s.cfg.Log.Warn("stopping: background work did not finish in time")
	}
	s.cfg.Log.Info("stopped")
	return err
}

func (s *Server) goLoop(ctx context.Context, name string, fn func(context.Context)) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn(ctx)
		s.cfg.Log.Debug("loop ended", "loop", name)
	}()
}

// sweep marks expired requests, recording approval.expired for each.
func (s *Server) sweep(ctx context.Context) {
	t := time.NewTicker(s.cfg.SweepEvery)
	defer t.Stop()
	for {
		n, err := s.cfg.Resolver.ExpireSweep(ctx)
		if err != nil && ctx.Err() == nil {
			s.cfg.Log.Error("sweep expired requests", "err", err)
		} else if n > 0 {
			s.cfg.Log.Info("expired requests swept", "count", n)
			s.hub.kick()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ship sends the audit log's new events to the central table every
// ShipEvery, and once more when serve stops. A failure (the database
// away) is said once until shipping works again: the events wait in the
// local log, which is the spool.
func (s *Server) ship(ctx context.Context) {
	t := time.NewTicker(s.cfg.ShipEvery)
	defer t.Stop()
	failing := false
	once := func(ctx context.Context) {
		n, err := s.cfg.ShipAudit(ctx)
		switch {
		case err != nil:
			if !failing && ctx.Err() == nil {
				s.cfg.Log.Warn("audit events wait in the local log: cannot ship them", "err", err)
				failing = true
			}
		case failing:
			s.cfg.Log.Info("audit events shipped again", "count", n)
			failing = false
		case n > 0:
			s.cfg.Log.Debug("audit events shipped", "count", n)
		}
	}
	for {
		once(ctx)
		select {
		case <-ctx.Done():
			// The events of serve's last moments go too.
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
			once(fctx)
			cancel()
			return
		case <-t.C:
		}
	}
}

// CheckAddr accepts host:port on a loopback address only and returns the
// host to listen on ("localhost" is 127.0.0.1).
func CheckAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--addr %q: want HOST:PORT on a loopback address, e.g. 127.0.0.1:7077", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("--addr %q: bad port", addr)
	}
	if host == "localhost" {
		return "127.0.0.1", nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("--addr %q: the page listens on a loopback address only (127.0.0.1 or ::1); reach it from elsewhere through an SSH tunnel", addr)
	}
	return ip.String(), nil
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}
