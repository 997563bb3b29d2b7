package serve

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// TestSecurityRaceOneOutcome: the page (two browsers), the Telegram bot,
// the command line and the terminal of approvals watch answer the same
// request at once, approving and rejecting; exactly one answer wins, the
// others hear "already resolved" (or, on the terminal, see it answered
// elsewhere), and the registry and the audit log agree with the winner.
// Run it with -race.
func TestSecurityRaceOneOutcome(t *testing.T) {
	f, fb, tg := telegramFixture(t)
	pair(t, f, fb)
	approver, rejecter := f.browser(true), f.browser(true)
	first := f.park(dev, []string{"touch", "first"}, 0) // a form to read the CSRF tokens from
	ac, rc := approver.csrf(), rejecter.csrf()
	if _, err := f.g.Deny(context.Background(), first.Token, dev); err != nil {
		t.Fatal(err)
	}
	tm := f.terminal(dev)
	ctx := context.Background()
	rounds := 25
	if testing.Short() {
		rounds = 5
	}
	for round := 0; round < rounds; round++ {
		p := f.park(dev, []string{"touch", "race"}, 0)
		// The terminal shows the card before anyone answers.
		tm.wait("--- request " + p.Token)
		tm.wait("? ")
		var (
			mu   sync.Mutex
			wins []string
			wg   sync.WaitGroup
		)
		win := func(s string) { mu.Lock(); wins = append(wins, s); mu.Unlock() }
		wg.Add(6)
		go func() {
			defer wg.Done()
			// The terminal approves in even rounds, rejects in odd ones.
			tm.press(map[bool]string{true: "a", false: "r"}[round%2 == 0])
		}()
		go func() {
			defer wg.Done()
			if resp := approver.post("/answer", url.Values{"csrf": {ac}, "id": {p.Token}, "answer": {"approve"}}); resp.StatusCode != http.StatusSeeOther {
				t.Errorf("page: %s", resp.Status)
			}
		}()
		go func() {
			defer wg.Done()
			rejecter.post("/answer", url.Values{"csrf": {rc}, "id": {p.Token}, "answer": {"reject"}})
		}()
		go func() {
			defer wg.Done()
			if d := tg.Handle(ctx, callback(7, "approve:"+p.Token, 1)); d.OK {
				win("telegram approved")
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := f.g.Deny(ctx, p.Token, dev); err == nil {
				win("cli rejected")
			} else if !strings.Contains(err.Error(), "already resolved") {
				t.Errorf("cli: %v", err)
			}
		}()
		go func() {
			defer wg.Done()
			if d := tg.Handle(ctx, callback(7, "reject:"+p.Token, 1)); d.OK {
				win("telegram rejected")
			}
		}()
		wg.Wait()
		// The terminal says whether its key won, or that the card was
		// answered elsewhere (and then that its key found nothing).
		switch seen := tm.waitAny(p.Token+" was ", "approved "+p.Token, "rejected "+p.Token, "not answered "+p.Token); seen {
		case "approved " + p.Token:
			win("terminal approved")
		case "rejected " + p.Token:
			win("terminal rejected")
		case p.Token + " was ":
			tm.wait("nothing waits for cli:dev")
		}
		// The page's answers say on the next page whether they won.
		for _, b := range []*browser{approver, rejecter} {
			page := text(b.get("/"))
			switch {
			case strings.Contains(page, "Approved: write touch race"):
				win("page approved")
			case strings.Contains(page, "Rejected: write touch race"):
				win("page rejected")
			case !strings.Contains(page, "already resolved"):
				t.Fatalf("round %d: the page says neither outcome nor refusal", round)
			}
		}
		if len(wins) != 1 {
			t.Fatalf("round %d: %d answers won: %v", round, len(wins), wins)
		}
		st := f.status(p.Token)
		if !strings.HasSuffix(wins[0], string(st)) {
			t.Fatalf("round %d: %s won but the request is %s", round, wins[0], st)
		}
		recs, err := f.audit.Tail(0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range recs {
			if (r.Kind == "approval.approved" || r.Kind == "approval.denied") && r.Attrs["id"] == p.Token {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("round %d: %d answers audited", round, n)
		}
	}
}
