package serve

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/gate"
)

// TestLatency measures, over 50 rounds with serve's default polling, the
// time from a card's creation to its arrival on an open page (server-sent
// event) and at the Telegram bot's API, and from a click on Approve to the
// waiting run's command having run. It asserts nothing about speed; run
// it with MNEMOS_MEASURE=1 go test ./serve -run TestLatency -v.
func TestLatency(t *testing.T) {
	if os.Getenv("MNEMOS_MEASURE") == "" {
		t.Skip("a measurement: set MNEMOS_MEASURE=1 to run it")
	}
	fb := newFakeBot(t)
	tg := fb.bot()
	f := newFixture(t, func(c *Config) { c.Telegram = []*Telegram{tg}; c.Poll = 0; c.Refresh = 0 })
	b := f.browser(true)
	events := openEvents(t, b)
	<-events
	var toPage, toBot, toRun []time.Duration
	for i := 0; i < 50; i++ {
		name := "f" + itoa64(int64(i))
		start := time.Now()
		p := f.ask("touch", name)
		for ev := range events {
			if strings.Contains(ev, p.Token) {
				break
			}
		}
		toPage = append(toPage, time.Since(start))
		fb.wait(t, "sendMessage", "approve:"+p.Token)
		toBot = append(toBot, time.Since(start))
		if _, err := f.g.Deny(context.Background(), p.Token, dev); err != nil {
			t.Fatal(err)
		}
	}
	csrf := ""
	for i := 0; i < 50; i++ {
		name := "run" + itoa64(int64(i))
		parked := make(chan string, 1)
		done := make(chan error, 1)
		go func() {
			_, err := f.g.Run(context.Background(), gate.Request{Argv: []string{"touch", name}, Cwd: f.ws, Channel: dev.Channel, Sender: dev.Sender},
				gate.Stdio{}, gate.RunOptions{Wait: true, OnPending: func(d gate.Decision) { parked <- d.Approval.Token }})
			done <- err
		}()
		tok := <-parked
		if csrf == "" {
			csrf = b.csrf()
		}
		start := time.Now()
		b.post("/answer", url.Values{"csrf": {csrf}, "id": {tok}, "answer": {"approve"}})
		for {
			if _, err := os.Stat(filepath.Join(f.ws, name)); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		toRun = append(toRun, time.Since(start))
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	median := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2].Round(100 * time.Microsecond)
	}
	t.Logf("card created -> on the page (SSE): median %v", median(toPage))
	t.Logf("card created -> at the Telegram API: median %v", median(toBot))
	t.Logf("click on Approve -> the waiting run's command ran: median %v", median(toRun))
}
