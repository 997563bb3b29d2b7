package serve

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/policy"
)

// TestWebhookRetries: a card the parking process failed to post is posted
// again by serve, with backoff, until the webhook takes it; each try is
// recorded, and nothing is retried once the request is answered.
func TestWebhookRetries(t *testing.T) {
	var (
		mu    sync.Mutex
		posts int
		fail  = 2
		cards [][]byte
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		posts++
		if posts <= fail {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		cards = append(cards, b)
	}))
	defer hook.Close()
	pol, err := policy.Parse("user.yaml", []byte("channels:\n  - {name: hook, webhook: \""+hook.URL+"\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var log atomic.Pointer[audit.Log]
	f := newFixturePolicy(t, pol, func(c *Config) {
		c.Webhooks = &Retrier{Channels: pol.Channels, First: 20 * time.Millisecond, Max: 100 * time.Millisecond, Every: 10 * time.Millisecond,
			Events: func(n int) ([]audit.Record, error) {
				if l := log.Load(); l != nil {
					return l.Tail(n)
				}
				return nil, nil
			}}
	})
	log.Store(f.audit)
	p := f.ask("touch", "notes.txt") // the gate's own try fails (503)
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		got := len(cards)
		mu.Unlock()
		if got == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the card never got through (%d posts)", posts)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !bytes.Contains(cards[0], []byte(p.Token)) {
		t.Fatalf("posted %s", cards[0])
	}
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	if posts != 3 {
		t.Fatalf("%d posts, want 3 (the gate's, a failed retry, the good one)", posts)
	}
	mu.Unlock()
	recs, _ := f.audit.Tail(0)
	var kinds []string
	for _, r := range recs {
		if r.Kind == audit.KindChannelFailed || r.Kind == audit.KindChannelDelivered {
			by, _ := r.Attrs["by"].(string)
			kinds = append(kinds, r.Kind+"/"+by+"/"+string(rune('0'+attemptOf(r))))
		}
	}
	want := []string{"channel.failed//0", "channel.failed/serve/1", "channel.delivered/serve/2"}
	if len(kinds) != len(want) || kinds[0] != want[0] || kinds[1] != want[1] || kinds[2] != want[2] {
		t.Fatalf("events %v, want %v", kinds, want)
	}

	// A request answered before its card gets through is not retried.
	mu.Lock()
	posts, fail = 0, 1000
	mu.Unlock()
	q := f.ask("touch", "other.txt")
	if _, err := f.g.Deny(t.Context(), q.Token, dev); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if posts > 2 {
		t.Fatalf("%d posts for an answered request", posts)
	}
	if f.status(q.Token) != approvals.StatusRejected {
		t.Fatal("status changed")
	}
	_ = os.Getpid
}
