package serve

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
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

// watch reads the registry when the requests may have changed (the
// state's notification, or a change of the watched files) and at least
// every Refresh, and kicks the hub when what the page shows changed.
func (s *Server) watch(ctx context.Context) {
	if s.cfg.Changes != nil {
		s.listen(ctx)
		return
	}
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
			if !s.look(ctx, &lastFP) {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// listen is watch with the state's notifications (LISTEN/NOTIFY): the
// registry is read when a request is parked, answered, withdrawn or
// expired on any host, and every Refresh. While it cannot listen (the
// database away) it reads every Refresh and tries again.
func (s *Server) listen(ctx context.Context) {
	var lastFP string
	failing := false
	for {
		err := s.cfg.Changes.WaitChange(ctx, "", s.cfg.Refresh)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if !failing {
				s.cfg.Log.Warn("cannot listen for changes to the requests; reading them every "+s.cfg.Refresh.String(), "err", err)
			}
			failing = true
			select {
			case <-ctx.Done():
				return
			case <-time.After(s.cfg.Refresh):
			}
		} else if failing {
			failing = false
			s.cfg.Log.Info("listening for changes to the requests again")
		}
		if !s.look(ctx, &lastFP) {
			return
		}
	}
}

// look reads the requests and kicks the hub when they changed since
// lastFP; false when the state directory is gone and serve must stop.
func (s *Server) look(ctx context.Context, lastFP *string) bool {
	if !s.inst.held() {
		close(s.orphaned)
		return false
	}
	if fp, err := s.fingerprint(ctx); err != nil {
		if ctx.Err() == nil {
			s.cfg.Log.Error("read requests", "err", err)
		}
	} else if fp != *lastFP {
		*lastFP = fp
		s.hub.kick()
	}
	return true
}

// fingerprint sums up the requests the page and the bots show and their
// statuses.
func (s *Server) fingerprint(ctx context.Context) (string, error) {
	now := s.cfg.Now()
	ids := s.served()
	open, err := listRequests(ctx, s.cfg.Registry, s.cfg.Fleet, approvals.ListOptions{Limit: pendingLimit}, now, ids...)
	if err != nil {
		return "", err
	}
	recent, err := listRequests(ctx, s.cfg.Registry, s.cfg.Fleet, approvals.ListOptions{IncludeResolved: true, Limit: historyWindow}, now, ids...)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	approved := map[string]approvals.Identity{}
	for _, p := range append(open, recent...) {
		b.WriteString(p.Token)
		b.WriteByte(':')
		b.WriteString(string(p.StatusAt(now)))
		b.WriteByte(';')
		if p.StatusAt(now) == approvals.StatusApproved {
			approved[p.Token] = p.Requester()
		}
	}
	// The runs the approvals let through, as they end or are undone.
	if s.cfg.Journal != nil {
		// A journal that cannot be read keeps the requests live all the
		// same (attachRuns logs why).
		runs, _ := runsOf(s.cfg.Journal, approved)
		for _, p := range recent {
			for _, r := range runs[p.Token] {
				fmt.Fprintf(&b, "%s:%s:%d:%s;", r.ID, r.State, r.Entries, r.UndoneBy)
			}
		}
	}
	return b.String(), nil
}

// served are the identities whose requests on other hosts serve shows
// when the state is shared: the page's, and those paired with a bot.
func (s *Server) served() []approvals.Identity {
	ids := []approvals.Identity{s.cfg.Identity}
	if !s.cfg.Fleet {
		return ids
	}
	for _, tg := range s.cfg.Telegram {
		for _, id := range pairedIdentities(s.cfg.StateDir, tg.Channel) {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// listRequests lists the requests parked on this host as o says and,
// when the state is shared (fleet), those of ids parked on every host
// (approvals.ListOptions.Fleet with its Requester): a team's database
// holds everyone's requests, and these are the ones ids can answer. The
// result is newest first, capped at o's limit.
func listRequests(ctx context.Context, reg Registry, fleet bool, o approvals.ListOptions, now time.Time, ids ...approvals.Identity) ([]approvals.Pending, error) {
	list, err := reg.List(ctx, o, now)
	if err != nil || !fleet {
		return list, err
	}
	seen := make(map[string]bool, len(list))
	for _, p := range list {
		seen[p.Token] = true
	}
	var asked []approvals.Identity
	for _, id := range ids {
		if slices.Contains(asked, id) {
			continue
		}
		asked = append(asked, id)
		fo := o
		fo.Fleet, fo.Requester = true, &id
		theirs, err := reg.List(ctx, fo, now)
		if err != nil {
			return nil, err
		}
		for _, p := range theirs {
			if !seen[p.Token] {
				seen[p.Token] = true
				list = append(list, p)
			}
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].CreatedAt.After(list[j].CreatedAt) })
	limit := o.Limit
	if limit == 0 {
		limit = approvals.DefaultListLimit
	}
	if limit > 0 && len(list) > limit {
		list = list[:limit]
	}
	return list, nil
}

// wakeOnChange sends on wake whenever w says the requests may have
// changed, and at least every every, until ctx ends: what a terminal
// waits on. While w cannot listen it sends every every.
func wakeOnChange(ctx context.Context, w approvals.Waiter, every time.Duration, wake chan<- struct{}) {
	for {
		if err := w.WaitChange(ctx, "", every); err != nil {
			if ctx.Err() != nil {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(every):
			}
		}
		select {
		case wake <- struct{}{}:
		default:
		}
	}
}
