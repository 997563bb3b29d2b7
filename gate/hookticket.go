package gate

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
)

// An agent's hook decides a command before the agent runs it. Where the
// agent runs another command line when told to, an allowed command is
// rewritten into `mnemos run --hook-ticket T -- ARGV`, so that it runs in
// the sandbox and its exit status is recorded. The hook's decision is
// already made (and recorded), so the rerun is not judged again: it
// carries a hook ticket, which binds that decision to the exact words,
// working directory, identity and session, is spent once, and expires
// soon. An ask the agent puts to its own person is rewritten the same way,
// so that the command the person approves there runs sandboxed without
// being asked about a second time.
//
// The rerun still parses the command and runs the guard and the policy in
// its own environment (the sandbox is built from that decision): the
// guard and a policy's deny stand whatever the ticket says; the ticket
// lifts only an ask or the judge's score, which the hook already weighed.
// The ticket does not bind what PATH resolves (approval tickets do): the
// agent's shell and its hook seldom share one environment, and what runs
// runs sandboxed. A ticket that is missing, spent, expired or bound to
// another request changes nothing: the rerun is decided as any mnemos run.
//
// Hook tickets are files in the secrets directory (hook-tickets/TOKEN),
// which no gated command may read or write; spending one is removing it,
// which only one process can do.

// Ticket lifetimes: an allowed rewrite runs at once, an ask waits for the
// person in front of the agent.
const (
	HookTicketTTL    = 2 * time.Minute
	hookTicketMaxAge = 24 * time.Hour
	hookTicketBytes  = 16
)

// hookTicket is what a ticket file holds.
type hookTicket struct {
	// Key binds the ticket to the request (see hookKey).
	Key     string    `json:"key"`
	Session string    `json:"session,omitempty"`
	Expires time.Time `json:"expires"`
	// Outcome is what the hook answered: allow, or ask (the agent asked
	// its person).
	Outcome string `json:"outcome"`
}

// hookTokenEncoding is lowercase base32 without padding.
func hookTokenEncoding() *base32.Encoding {
	return base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
}

// hookKey binds a hook ticket to the words, the directory, the identity
// and the caller's fields of a request.
func hookKey(req Request) string {
	return approvals.RequestKey(approvals.KeyInput{Channel: req.Channel, Sender: req.Sender, Cwd: req.Cwd, Argv: req.Argv,
		Context: req.Context, Scope: req.Scope})
}

func (g *Gate) hookTicketDir() string { return g.cfg.Paths.HookTicketDir() }

// IssueHookTicket issues a one-shot ticket for req, which the hook decided
// as dec (allow, or an ask the agent puts to its person), valid for ttl
// (HookTicketTTL when 0). The token goes into the rewritten command line.
func (g *Gate) IssueHookTicket(req Request, dec Decision, ttl time.Duration) (string, error) {
	if dec.Outcome != policy.Allow && dec.Outcome != policy.Ask {
		return "", fmt.Errorf("no hook ticket for a %s", dec.Outcome)
	}
	if ttl <= 0 {
		ttl = HookTicketTTL
	}
	dir := g.hookTicketDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", &StateError{Path: dir, Err: err}
	}
	g.sweepHookTickets(dir)
	r := g.cfg.Rand
	if r == nil {
		r = rand.Reader
	}
	b := make([]byte, hookTicketBytes)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("hook ticket: %w", err)
	}
	tok := hookTokenEncoding().EncodeToString(b)
	data, err := json.Marshal(hookTicket{Key: hookKey(req), Session: req.Session, Expires: g.cfg.Now().Add(ttl), Outcome: dec.Outcome.String()})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, tok)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", &StateError{Path: path, Err: err}
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(path)
		return "", &StateError{Path: path, Err: werr}
	}
	return tok, nil
}

// sweepHookTickets removes tickets nobody spent, long after they expired.
func (g *Gate) sweepHookTickets(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	old := g.cfg.Now().Add(-hookTicketMaxAge)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(old) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// validHookToken accepts only what IssueHookTicket makes, so a token never
// names another file.
func validHookToken(tok string) bool {
	if len(tok) != hookTokenEncoding().EncodedLen(hookTicketBytes) {
		return false
	}
	for _, r := range tok {
		if !(r >= 'a' && r <= 'z' || r >= '2' && r <= '7') {
			return false
		}
	}
	return true
}

// spendHookTicket spends the ticket tok if it is bound to req and has not
// expired. Whoever removes the file spends it: one process at most, and a
// ticket presented for another request is spent too (one attempt).
func (g *Gate) spendHookTicket(tok string, req Request) (hookTicket, bool, error) {
	if !validHookToken(tok) {
		return hookTicket{}, false, nil
	}
	path := filepath.Join(g.hookTicketDir(), tok)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return hookTicket{}, false, nil
	}
	if err != nil {
		return hookTicket{}, false, &StateError{Path: path, Err: err}
	}
	if err := os.Remove(path); err != nil {
		// Someone else spent it.
		return hookTicket{}, false, nil
	}
	var t hookTicket
	if json.Unmarshal(data, &t) != nil || t.Key != hookKey(req) || t.Session != req.Session || !g.cfg.Now().Before(t.Expires) {
		return t, false, nil
	}
	return t, true, nil
}

// liftable says whether a hook ticket may turn the rerun's decision into
// allow: nothing the guard or the policy denies, only asks and the
// judge's scores, which the hook weighed already.
func liftable(d Decision) bool {
	for _, c := range d.Commands {
		if c.Outcome == policy.Deny && c.BlockedBy != "judge" {
			return false
		}
	}
	return d.Outcome != policy.Deny || d.BlockedBy == "judge"
}

// RunHook runs a command an agent's hook rewrote into `mnemos run
// --hook-ticket TOKEN`: with the ticket spent, the decision the hook made
// stands (see liftable) and the command runs sandboxed; without it, the
// request is decided and run as by Run.
func (g *Gate) RunHook(ctx context.Context, req Request, tok string, stdio Stdio, opts RunOptions) (RunResult, error) {
	status := g.cfg.Probe()
	early := g.prepareSandbox(req, opts, status)
	defer early.close()
	// The model judge is not asked again: the hook asked it.
	quiet := &Gate{cfg: g.cfg, store: g.store}
	quiet.cfg.JudgeKind = policy.JudgeRuleBased
	d := quiet.judge(ctx, req, false)
	if g.store == nil {
		g.store = quiet.store
	}
	if d.err != nil {
		return RunResult{Decision: d.Decision}, d.err
	}
	t, ok, err := g.spendHookTicket(tok, req)
	if err != nil {
		return RunResult{Decision: d.Decision}, err
	}
	if !ok || !liftable(d.Decision) {
		early.close()
		early = nil
		return g.Run(ctx, req, stdio, opts)
	}
	dec := d.Decision
	if dec.Outcome != policy.Allow {
		how := "allowed it"
		if t.Outcome == policy.Ask.String() {
			how = "asked the person in " + req.Channel + "'s own prompt"
		}
		dec.Outcome, dec.BlockedBy, dec.DecidedBy = policy.Allow, "", "hook"
		dec.Reason = "decided by the " + req.Channel + " hook, which " + how + " (hook ticket spent)"
		for i := range dec.Commands {
			if c := &dec.Commands[i]; c.Outcome != policy.Allow {
				c.Outcome, c.BlockedBy, c.DecidedBy, c.Reason = policy.Allow, "", "hook", dec.Reason
			}
		}
	}
	dec.Ticket = "hook:" + tok
	if err := g.record(ctx, req, dec); err != nil {
		return RunResult{Decision: dec}, err
	}
	res, err := g.exec(ctx, req, dec, stdio, opts, status, early)
	res.Decision, res.Ran, res.Sandbox = dec, err == nil || res.ExitCode >= 0, status
	return res, err
}

// HookCard is the approval card of an ask the agent puts to its person:
// the card a parked approval would show, without a token.
func (g *Gate) HookCard(req Request, dec Decision) []string {
	np := g.newPending(req, dec)
	card := approvals.RenderCard(approvals.Card{
		ActionVerb: np.ActionVerb, TargetSummary: np.TargetSummary, CapabilityClass: np.CapabilityClass,
		Reversibility: np.Details.Reversibility, More: max(0, len(np.Details.Accesses)-1),
	})
	// What it reaches outside the sandbox, or that it runs outside it.
	// What a file tool writes (written.go).
	card = append(card, writtenLines(req.Written)...)
	return append(card, reachLines(dec.Reach, dec.Hidden...)...)
}

// HoldApproval waits, until ctx is done, for the person to answer the
// approval dec parked (approving it from another channel). Approved, the
// request is decided again, spending the approval's ticket, with mode;
// rejected or expired, it is denied; still pending when ctx is done, dec
// is returned as it was.
func (g *Gate) HoldApproval(ctx context.Context, req Request, dec Decision, mode Mode, every time.Duration) (Decision, error) {
	if dec.Outcome != policy.Ask || dec.Approval == nil {
		return dec, nil
	}
	if every <= 0 {
		every = 250 * time.Millisecond
	}
	// The hold ends when ctx does; a look at the state already begun is
	// not cut short by it.
	sctx := context.WithoutCancel(ctx)
	st, err := g.Store(sctx)
	if err != nil {
		return dec, err
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		p, err := st.Get(sctx, dec.Approval.Token)
		if err != nil {
			return dec, &StateError{Path: g.cfg.Paths.DBFile, Err: err}
		}
		switch p.StatusAt(g.cfg.Now()) {
		case approvals.StatusApproved:
			mode.SpendTicket = true
			return g.Decide(sctx, req, mode)
		case approvals.StatusRejected, approvals.StatusCancelled:
			return deny(dec, "approval", "approval "+p.Token+" was rejected"), nil
		case approvals.StatusExpired:
			return deny(dec, "approval", "approval "+p.Token+" expired before anyone answered"), nil
		}
		if !pause(ctx, st, dec.Approval.Token, t.C, every) {
			return dec, nil
		}
	}
}
