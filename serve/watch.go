package serve

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
)

// hub tells whoever waits that the requests may have changed.
type hub struct {
	mu sync.Mutex
	ch chan struct{}
}

func newHub() *hub { return &hub{ch: make(chan struct{})} }

// changed returns a channel closed at the next kick.
func (h *hub) changed() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ch
}

func (h *hub) kick() {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.ch)
	h.ch = make(chan struct{})
}

// stamp is what the watched files look like: size and modification time.
type stamp string

func stampOf(files []string) stamp {
	var b strings.Builder
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			b.WriteString(fi.ModTime().Format(time.RFC3339Nano))
			b.WriteByte('/')
			b.WriteString(itoa64(fi.Size()))
		}
		b.WriteByte(';')
	}
	return stamp(b.String())
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// watch reads the registry when the watched files change (or every
// Refresh) and kicks the hub when what the page shows changed.
func (s *Server) watch(ctx context.Context) {
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	var (
		last     stamp
		lastFP   string
		lastRead time.Time
	)
	for {
		st := stampOf(s.cfg.Watch)
		if st != last || time.Since(lastRead) >= s.cfg.Refresh {
			last, lastRead = st, time.Now()
			if !s.inst.held() {
				close(s.orphaned)
				return
			}
			if fp, err := s.fingerprint(ctx); err != nil {
				if ctx.Err() == nil {
					s.cfg.Log.Error("read requests", "err", err)
				}
			} else if fp != lastFP {
				lastFP = fp
				s.hub.kick()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// fingerprint sums up the requests the page shows and their statuses.
func (s *Server) fingerprint(ctx context.Context) (string, error) {
	list, err := s.cfg.Registry.List(ctx, approvals.ListOptions{IncludeResolved: true, Limit: historyLimit + pendingLimit}, s.cfg.Now())
	if err != nil {
		return "", err
	}
	var b strings.Builder
	now := s.cfg.Now()
	for _, p := range list {
		b.WriteString(p.Token)
		b.WriteByte(':')
		b.WriteString(string(p.StatusAt(now)))
		b.WriteByte(';')
	}
	return b.String(), nil
}
