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
// event), at the Telegram bot's API, on the terminal of approvals watch
// and at a loopback SMTP server, and from a click on Approve (or the key
// a on the terminal) to the waiting run's command having run. It asserts
// nothing about speed; run it with MNEMOS_MEASURE=1 go test ./serve -run
// TestLatency -v.
func TestLatency(t *testing.T) {
	if os.Getenv("MNEMOS_MEASURE") == "" {
		t.Skip("a measurement: set MNEMOS_MEASURE=1 to run it")
	}
	fb := newFakeBot(t)
	tg := fb.bot()
	smtpd, _ := newFakeSMTP(t, false)
	mailer := &Mailer{Channel: "mail", SMTP: smtpd.addr(), From: "me@example.com", To: "me@example.com", Password: smtpd.pass}
	f := newFixture(t, func(c *Config) {
		c.Telegram, c.Mailers = []*Telegram{tg}, []*Mailer{mailer}
		c.Poll, c.Refresh = 0, 0
	})
	b := f.browser(true)
	events := openEvents(t, b)
	<-events
	tm := f.terminal(dev, 0)
	tm.wait("waiting for new requests")
	var toPage, toBot, toTerm, toMail, toRun, keyToRun []time.Duration
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
		tm.wait("--- request " + p.Token)
		toTerm = append(toTerm, time.Since(start))
		for deadline := time.Now().Add(10 * time.Second); !slices.ContainsFunc(smtpd.got(), func(m string) bool { return strings.Contains(m, p.Token) }); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the card was never mailed:\n%s", f.log.String())
			}
		}
		toMail = append(toMail, time.Since(start))
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
	for i := 0; i < 50; i++ {
		name := "key" + itoa64(int64(i))
		parked := make(chan string, 1)
		done := make(chan error, 1)
		go func() {
			_, err := f.g.Run(context.Background(), gate.Request{Argv: []string{"touch", name}, Cwd: f.ws, Channel: dev.Channel, Sender: dev.Sender},
				gate.Stdio{}, gate.RunOptions{Wait: true, OnPending: func(d gate.Decision) { parked <- d.Approval.Token }})
			done <- err
		}()
		tok := <-parked
		tm.wait("--- request " + tok)
		tm.wait("? ")
		start := time.Now()
		tm.press("a")
		for {
			if _, err := os.Stat(filepath.Join(f.ws, name)); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		keyToRun = append(keyToRun, time.Since(start))
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
	t.Logf("card created -> on the terminal of approvals watch: median %v", median(toTerm))
	t.Logf("card created -> mailed to a loopback SMTP server: median %v", median(toMail))
	t.Logf("click on Approve -> the waiting run's command ran: median %v", median(toRun))
	t.Logf("key a on the terminal -> the waiting run's command ran: median %v", median(keyToRun))
}
