package gate

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
)

// hookReq is a request as an agent's hook makes it.
func (f *fixture) hookReq(argv ...string) Request {
	return Request{Argv: argv, Cwd: f.ws, Channel: "claude-code", Sender: "dev", Session: "s1"}
}

// askedInAgent decides req as the hook of an agent that asks its person
// does, and issues the ticket its rewrite carries.
func (f *fixture) askedInAgent(t *testing.T, req Request) string {
	t.Helper()
	d, err := f.g.Decide(context.Background(), req, Mode{SpendTicket: true, AgentAsks: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != policy.Ask || d.Approval != nil {
		t.Fatalf("want an ask that is not parked, got %s (approval %v)", d.Outcome, d.Approval)
	}
	tok, err := f.g.IssueHookTicket(req, d, 0)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (f *fixture) runHook(t *testing.T, req Request, tok string) RunResult {
	t.Helper()
	res, err := f.g.RunHook(context.Background(), req, tok, Stdio{}, RunOptions{})
	if err != nil {
		t.Fatalf("RunHook(%v): %v", req.Argv, err)
	}
	return res
}

func TestHookAskIsNotParked(t *testing.T) {
	f := newFixture(t, "")
	f.askedInAgent(t, f.hookReq("touch", "notes.txt"))
	if f.audit.count("policy.decision") != 1 || f.audit.count("approval.requested") != 0 {
		t.Fatalf("events %v", f.audit.kinds)
	}
	st, err := f.g.Store(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := st.List(context.Background(), approvals.ListOptions{}, f.now); len(l) != 0 {
		t.Fatalf("an ask the agent puts was parked: %+v", l)
	}
}

// TestSecurityHookTicketIsSpentOnce: the rewritten command runs once on
// the hook's decision; the same ticket again is decided as any run.
func TestSecurityHookTicketIsSpentOnce(t *testing.T) {
	f := newFixture(t, "")
	req := f.hookReq("touch", "notes.txt")
	tok := f.askedInAgent(t, req)
	res := f.runHook(t, req, tok)
	if !res.Ran || res.ExitCode != 0 || res.Decision.DecidedBy != "hook" || res.Decision.Ticket != "hook:"+tok {
		t.Fatalf("first run: ran=%v code=%d %+v", res.Ran, res.ExitCode, res.Decision)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if f.audit.count("run.finished") != 1 {
		t.Fatalf("events %v", f.audit.kinds)
	}
	os.Remove(filepath.Join(f.ws, "notes.txt"))
	res = f.runHook(t, req, tok)
	if res.Ran || res.Decision.Outcome != policy.Ask || res.Decision.Approval == nil {
		t.Fatalf("second run of a spent ticket: ran=%v %+v", res.Ran, res.Decision)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "notes.txt")); err == nil {
		t.Fatal("the spent ticket ran the command again")
	}
}

// TestSecurityHookTicketIsBound: a ticket lifts only the request it was
// issued for (words, directory, identity, session), before it expires;
// presented for another, it is spent without lifting anything.
func TestSecurityHookTicketIsBound(t *testing.T) {
	other := func(f *fixture, r Request) []Request {
		sub := filepath.Join(f.ws, "sub")
		_ = os.MkdirAll(sub, 0o755)
		a, b, c, d, e := r, r, r, r, r
		a.Argv = []string{"touch", "other.txt"}
		b.Cwd = sub
		c.Channel = "codex"
		d.Sender = "mallory"
		e.Session = "s2"
		return []Request{a, b, c, d, e}
	}
	f := newFixture(t, "")
	req := f.hookReq("touch", "notes.txt")
	for i, o := range other(f, req) {
		tok := f.askedInAgent(t, req)
		if res := f.runHook(t, o, tok); res.Ran || res.Decision.Outcome == policy.Allow {
			t.Errorf("case %d: a ticket for %v lifted %+v", i, req, o)
		}
		if res := f.runHook(t, req, tok); res.Ran {
			t.Errorf("case %d: a ticket presented for another request was still spendable", i)
		}
	}
	tok := f.askedInAgent(t, req)
	f.now = f.now.Add(HookTicketTTL + time.Second)
	if res := f.runHook(t, req, tok); res.Ran {
		t.Error("an expired ticket lifted the ask")
	}
	for _, bad := range []string{"", "../../state.db", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", tok + "a"} {
		if res := f.runHook(t, req, bad); res.Ran {
			t.Errorf("token %q lifted the ask", bad)
		}
	}
}

// TestSecurityHookTicketNeverLiftsGuard: whatever a ticket says, what the
// guard or a deny rule refuses does not run.
func TestSecurityHookTicketNeverLiftsGuard(t *testing.T) {
	f := newFixture(t, "level: full\nrules:\n  - name: no curl\n    command: {argv_prefix: [curl]}\n    action: deny\n")
	for _, argv := range [][]string{{"rm", "-rf", f.home}, {"cat", filepath.Join(f.home, ".ssh", "id_rsa")}, {"curl", "https://example.com"}} {
		req := f.hookReq(argv...)
		// A ticket as a broken hook might have issued it.
		tok, err := f.g.IssueHookTicket(req, Decision{Outcome: policy.Allow}, 0)
		if err != nil {
			t.Fatal(err)
		}
		res := f.runHook(t, req, tok)
		if res.Ran || res.Decision.Outcome != policy.Deny {
			t.Errorf("%v ran on a hook ticket: %+v", argv, res.Decision)
		}
	}
}

func TestHoldApproval(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	req := f.hookReq("touch", "held.txt")
	d, err := f.g.Decide(ctx, req, Mode{SpendTicket: true})
	if err != nil || d.Approval == nil {
		t.Fatalf("not parked: %+v %v", d, err)
	}
	// Nobody answers within the hold: still pending.
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	got, err := f.g.HoldApproval(short, req, d, Mode{}, 5*time.Millisecond)
	cancel()
	if err != nil || got.Outcome != policy.Ask || got.Approval == nil {
		t.Fatalf("after an unanswered hold: %+v %v", got, err)
	}
	// Someone approves from another channel while the hook holds.
	go func() {
		time.Sleep(20 * time.Millisecond)
		other := New(f.g.cfg)
		defer other.Close()
		_, _ = other.Approve(ctx, d.Approval.Token, approvals.Identity{Channel: "claude-code", Sender: "dev"}, ApproveOptions{})
	}()
	long, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	got, err = f.g.HoldApproval(long, req, d, Mode{}, 5*time.Millisecond)
	if err != nil || got.Outcome != policy.Allow || got.DecidedBy != "ticket" {
		t.Fatalf("after approval: %+v %v", got, err)
	}
}
