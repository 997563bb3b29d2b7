package serve

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
)

// term is a Terminal over a pipe, run against a fixture's gate.
type term struct {
	t    *testing.T
	keys *io.PipeWriter
	out  *syncBuffer
	// stopped is closed when Run returns, with its error in err.
	stopped chan struct{}
	err     error
	// from is where the next wait starts reading out.
	from int
}

// terminal runs a Terminal for id, polling every 10 ms unless poll says
// otherwise (0: the default).
func (f *fixture) terminal(id approvals.Identity, poll ...time.Duration) *term {
	f.t.Helper()
	every, refresh := 10*time.Millisecond, 200*time.Millisecond
	if len(poll) > 0 {
		every, refresh = poll[0], 0
	}
	return f.terminalWith(&Terminal{Identity: id, Resolver: f.g, Registry: f.st,
		Watch: f.cfg.Watch, Poll: every, Refresh: refresh})
}

// terminalWith runs tr over a pipe.
func (f *fixture) terminalWith(tr *Terminal) *term {
	f.t.Helper()
	r, w := io.Pipe()
	tm := &term{t: f.t, keys: w, out: &syncBuffer{}, stopped: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	tr.In, tr.Out = r, tm.out
	go func() { tm.err = tr.Run(ctx); close(tm.stopped) }()
	f.t.Cleanup(func() {
		cancel()
		w.Close()
		select {
		case <-tm.stopped:
		case <-time.After(5 * time.Second):
			f.t.Error("the terminal did not stop")
		}
	})
	return tm
}

// wait waits until the output after the last wait holds s, and moves on
// past it.
func (tm *term) wait(s string) string {
	tm.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := tm.out.String()
		if i := strings.Index(out[tm.from:], s); i >= 0 {
			seen := out[tm.from : tm.from+i+len(s)]
			tm.from += i + len(s)
			return seen
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the terminal never showed %q; it shows:\n%s", s, out[tm.from:])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitAny waits until the output after the last wait holds one of ss,
// moves on past the first found and returns it.
func (tm *term) waitAny(ss ...string) string {
	tm.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := tm.out.String()[tm.from:]
		best, at := "", -1
		for _, s := range ss {
			if i := strings.Index(out, s); i >= 0 && (at < 0 || i < at) {
				best, at = s, i
			}
		}
		if at >= 0 {
			tm.from += at + len(best)
			return best
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the terminal never showed any of %q; it shows:\n%s", ss, out)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (tm *term) press(k string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.keys, k); err != nil {
		tm.t.Fatal(err)
	}
}

// TestTerminalAnswers: each request is shown as it arrives, oldest
// first, and one key answers it through the gate: a approves once, r
// rejects, n skips (it keeps waiting), s approves for the session (a
// grant), q quits; a request answered elsewhere is said so and put away.
func TestTerminalAnswers(t *testing.T) {
	f := newFixture(t)
	tm := f.terminal(dev)
	tm.wait("waiting for new requests")

	a := f.ask("touch", "a.txt")
	card := tm.wait("[q] quit? ")
	for _, want := range []string{"--- request " + a.Token, "command:   touch a.txt", "in:        " + f.ws, "[a] approve once", "[s] approve for this session", "[p] approve permanently", "remember:  grant fs:write on " + f.ws + "/a.txt\n"} {
		if !strings.Contains(card, want) {
			t.Errorf("the card lacks %q:\n%s", want, card)
		}
	}
	tm.press("a")
	tm.wait("approved " + a.Token + ": write touch a.txt")
	if st := f.status(a.Token); st != approvals.StatusApproved {
		t.Fatalf("after a: %s", st)
	}

	b := f.ask("touch", "b.txt")
	tm.wait("--- request " + b.Token)
	tm.wait("? ")
	tm.press("x") // not a key it takes
	// c where the sandbox holds touch (contained work), not elsewhere.
	tm.waitAny("press a, s, p, r, n, q", "press a, c, s, p, r, n, q")
	tm.press("r")
	tm.wait("rejected " + b.Token)
	if st := f.status(b.Token); st != approvals.StatusRejected {
		t.Fatalf("after r: %s", st)
	}

	c := f.ask("touch", "c.txt")
	d := f.ask("touch", "d.txt")
	tm.wait("--- request " + c.Token)
	tm.press("n")
	tm.wait("skipped " + c.Token)
	tm.wait("--- request " + d.Token)
	tm.wait("? ")
	tm.press("s")
	tm.wait("approved " + d.Token)
	tm.wait("grant ")
	if st := f.status(c.Token); st != approvals.StatusPending {
		t.Fatalf("the skipped request is %s", st)
	}
	if st := f.status(d.Token); st != approvals.StatusApproved {
		t.Fatalf("after s: %s", st)
	}
	grants, err := f.st.ListGrants(context.Background(), approvals.GrantFilter{}, time.Now())
	if err != nil || len(grants) != 1 || grants[0].Target != f.ws+"/d.txt" {
		t.Fatalf("grants after s: %+v, %v", grants, err)
	}
	tm.wait("1 skipped still waits")

	// Answered elsewhere while shown.
	e := f.ask("touch", "e.txt")
	tm.wait("--- request " + e.Token)
	if _, err := f.g.Deny(context.Background(), e.Token, dev); err != nil {
		t.Fatal(err)
	}
	tm.wait(e.Token + " was rejected by cli:dev")

	tm.press("q")
	tm.wait("stopped watching")
	select {
	case <-tm.stopped:
		if tm.err != nil {
			t.Fatal(tm.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("q did not quit")
	}
	// The audit log has each answer once, from the gate.
	recs, err := f.audit.Tail(0)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, r := range recs {
		if r.Kind == "approval.approved" || r.Kind == "approval.denied" {
			n[r.Attrs["id"].(string)]++
		}
	}
	for _, p := range []approvals.Pending{a, b, d, e} {
		if n[p.Token] != 1 {
			t.Errorf("%s answered %d times in the audit log", p.Token, n[p.Token])
		}
	}
	if n[c.Token] != 0 {
		t.Errorf("the skipped request was answered")
	}
}

// TestSecurityTerminalShowsEscaped: what a request holds reaches the
// terminal escaped: no escape sequence, no carriage return or line of
// its own; others' requests are named without their words, and not
// answered from here.
func TestSecurityTerminalShowsEscaped(t *testing.T) {
	f := newFixture(t)
	evil := "x\x1b]0;owned\x07\x1b[2J\r\nmnemos: approved everything"
	other := f.park(approvals.Identity{Channel: "claude-code", Sender: "dev"}, []string{"touch", "secret-plan.txt"}, 0)
	p := f.park(dev, []string{"touch", evil}, 0)
	tm := f.terminal(dev)
	tm.wait("request " + other.Token + " of claude-code:dev waits")
	tm.wait("--- request " + p.Token)
	tm.wait("? ")
	out := tm.out.String()
	if strings.ContainsAny(out, "\x1b\x07\r") {
		t.Fatalf("a control character reached the terminal: %q", out)
	}
	if strings.Contains(out, "\nmnemos: approved everything") {
		t.Fatalf("the request's words made a line of their own:\n%s", out)
	}
	if !strings.Contains(out, "request "+other.Token+" of claude-code:dev waits") ||
		!strings.Contains(out, "mnemos --channel claude-code --sender dev approvals watch") {
		t.Fatalf("the other identity's request is not named:\n%s", out)
	}
	if strings.Contains(out, "secret-plan") {
		t.Fatalf("the other identity's request is shown:\n%s", out)
	}
	tm.press("a")
	tm.wait("approved " + p.Token)
	if st := f.status(other.Token); st != approvals.StatusPending {
		t.Fatalf("the other identity's request is %s", st)
	}
}
