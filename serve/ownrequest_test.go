package serve

import (
	"context"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/approvals"
)

// agent is an agent's identity: Claude Code working for dev.
var agent = approvals.Identity{Channel: "claude-code", Sender: "dev"}

// decidedBy returns who decided a request.
func (f *fixture) decidedBy(token string) approvals.Identity {
	f.t.Helper()
	p, err := f.st.Get(context.Background(), token)
	if err != nil {
		f.t.Fatal(err)
	}
	if p.DecisionBy == nil {
		return approvals.Identity{}
	}
	return *p.DecisionBy
}

// TestSecurityPageNeverApprovesAsTheRequester: the page serving an
// agent's identity approves its requests as the person on the page
// (page:dev), never as the agent; a request made as the page's own
// answering identity is refused, with the reason shown.
func TestSecurityPageNeverApprovesAsTheRequester(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Identity = agent })
	p := f.park(agent, []string{"touch", "x"}, 0)
	b := f.browser(true)
	b.answer(p.Token, "approve")
	if st, by := f.status(p.Token), f.decidedBy(p.Token); st != approvals.StatusApproved || by != (approvals.Identity{Channel: approvals.ViaPage, Sender: "dev"}) {
		t.Fatalf("the person's answer on the page: %s by %+v", st, by)
	}

	own := approvals.Identity{Channel: approvals.ViaPage, Sender: "dev"}
	g := newFixture(t, func(c *Config) { c.Identity = own })
	q := g.park(own, []string{"touch", "y"}, 0)
	gb := g.browser(true)
	gb.answer(q.Token, "approve")
	if st := g.status(q.Token); st != approvals.StatusPending {
		t.Fatalf("a request made as page:dev, approved on the page: %s", st)
	}
	if page := text(gb.get("/")); !strings.Contains(page, "never approved by its own requester") {
		t.Errorf("the page does not say why:\n%s", page)
	}
}

// TestSecurityTerminalNeverApprovesAsTheRequester: approvals watch for an
// agent's identity approves as the person at the terminal; a request made
// as terminal:dev is refused there.
func TestSecurityTerminalNeverApprovesAsTheRequester(t *testing.T) {
	f := newFixture(t)
	tm := f.terminal(agent)
	tm.wait("waiting for new requests")
	p := f.park(agent, []string{"touch", "x"}, 0)
	tm.wait("--- request " + p.Token)
	tm.wait("? ")
	tm.press("a")
	tm.wait("approved " + p.Token)
	if by := f.decidedBy(p.Token); by != (approvals.Identity{Channel: approvals.ViaTerminal, Sender: "dev"}) {
		t.Fatalf("decided by %+v", by)
	}

	own := approvals.Identity{Channel: approvals.ViaTerminal, Sender: "dev"}
	tw := f.terminal(own)
	tw.wait("waiting for new requests")
	q := f.park(own, []string{"touch", "y"}, 0)
	tw.wait("--- request " + q.Token)
	tw.wait("? ")
	tw.press("a")
	tw.wait("never approved by its own requester")
	if st := f.status(q.Token); st != approvals.StatusPending {
		t.Fatalf("a request made as terminal:dev, approved at the terminal: %s", st)
	}
}

// TestSecurityTelegramNeverApprovesAsTheRequester: a paired account
// approves the paired identity's requests as itself (phone:7); a request
// made as an account's own identity is never approved by that account.
func TestSecurityTelegramNeverApprovesAsTheRequester(t *testing.T) {
	f, fb, tg := telegramFixture(t)
	pair(t, f, fb)
	ctx := context.Background()
	p := f.park(dev, []string{"touch", "a"}, 0)
	if d := tg.Handle(ctx, callback(7, "approve:"+p.Token, 1)); !d.OK {
		t.Fatalf("the paired account: %+v", d)
	}
	if by := f.decidedBy(p.Token); by != (approvals.Identity{Channel: tgName, Sender: "7"}) {
		t.Fatalf("decided by %+v", by)
	}
	for _, user := range []int64{99, 7} {
		own := f.park(approvals.Identity{Channel: tgName, Sender: itoa64(user)}, []string{"touch", "own"}, 0)
		d := tg.Handle(ctx, callback(user, "approve:"+own.Token, 1))
		if d.OK || f.status(own.Token) != approvals.StatusPending {
			t.Fatalf("account %d approving a request made as itself: %+v", user, d)
		}
	}
}
