package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/gate"
)

// ApprovalsCmd groups the approval subcommands.
type ApprovalsCmd struct {
	List    ApprovalsListCmd  `cmd:"" help:"List pending requests (all with --all)."`
	Show    ApprovalsShowCmd  `cmd:"" help:"Show one request and its card."`
	Approve ApproveCmd        `cmd:"" help:"Approve a pending request: its identical rerun runs once."`
	Deny    DenyCmd           `cmd:"" help:"Reject a pending request."`
	Cancel  CancelCmd         `cmd:"" help:"Withdraw your own pending request: it can no longer be approved."`
	Watch   ApprovalsWatchCmd `cmd:"" help:"Show your requests on this terminal as they arrive and answer each with one key: a approve once, s for the session, p permanently, r reject, n skip, u undo what a run you approved changed (asks first), q quit."`
	URL     ApprovalsURLCmd   `cmd:"" name:"url" help:"Print, to a terminal only, a one-time link that signs a browser in to the approvals page of the running mnemos serve."`
	Answer  AnswerCmd         `cmd:"" help:"Resolve a request from a channel button's data (approve:TOKEN or reject:TOKEN) as --channel and --sender; what a channel bridge runs."`
}

// ApprovalsListCmd is mnemos approvals list.
type ApprovalsListCmd struct {
	All    bool `help:"Include resolved and expired requests."`
	JSON   bool `name:"json" help:"Print a JSON array."`
	Limit  int  `default:"50" help:"At most this many requests."`
	Digest bool `help:"One line per channel, sender and capability: how many requests, and the newest (every request counts, whatever --limit)."`
	Fleet  bool `help:"List your requests (your channel and sender) on every host sharing the PostgreSQL state, with the host each was parked on."`
}

// Run lists requests, newest first.
func (c *ApprovalsListCmd) Run(a *app) error {
	a.tolerant = "approvals list"
	g, err := a.gate()
	if err != nil {
		return err
	}
	if c.Fleet && !g.SharedState() {
		return &exitError{code: exitUsage, msg: "--fleet lists the requests of the hosts sharing a PostgreSQL state; this state is the SQLite file " + g.Config().Paths.DBFile,
			hint: "to share approvals across machines, name a database in your policy: state: {postgres: {dsn_file: PATH}}"}
	}
	if _, err := g.ExpireSweep(a.ctx); err != nil {
		return err
	}
	st, err := g.Store(a.ctx)
	if err != nil {
		return err
	}
	limit := c.Limit
	if c.Digest {
		limit = -1
	}
	o := approvals.ListOptions{IncludeResolved: c.All, Limit: limit, Fleet: c.Fleet}
	if c.Fleet {
		// A team's database holds everyone's requests: the fleet's list
		// is of those this identity can answer.
		id := a.identity()
		o.Requester = &id
	}
	list, err := st.List(a.ctx, o, a.now())
	if err != nil {
		return err
	}
	if c.Digest {
		groups := digest(list)
		if c.JSON {
			if groups == nil {
				groups = []digestGroup{}
			}
			return writeJSON(a.io.out, groups)
		}
		printDigest(a, groups, a.now())
		return nil
	}
	if c.JSON {
		if list == nil {
			list = []approvals.Pending{}
		}
		return writeJSON(a.io.out, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(a.io.out, "no pending requests")
		return nil
	}
	for _, p := range list {
		if c.Fleet {
			fmt.Fprintf(a.io.out, "%s  ", oneLine(p.Host))
		}
		fmt.Fprintf(a.io.out, "%s  %-8s  %s  %s:%s  %s  %s\n", oneLine(p.Token), p.StatusAt(a.now()),
			p.CreatedAt.Local().Format("2006-01-02 15:04:05"), oneLine(p.Channel), oneLine(p.Sender), classOf(p), oneLine(p.TargetSummary))
	}
	return nil
}

// ApprovalsShowCmd is mnemos approvals show.
type ApprovalsShowCmd struct {
	ID   string `arg:"" help:"The request id."`
	JSON bool   `name:"json" help:"Print JSON."`
}

// Run prints one request.
func (c *ApprovalsShowCmd) Run(a *app) error {
	a.tolerant = "approvals show"
	g, err := a.gate()
	if err != nil {
		return err
	}
	st, err := g.Store(a.ctx)
	if err != nil {
		return err
	}
	p, err := st.Get(a.ctx, c.ID)
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(a.io.out, p)
	}
	// The card as the channels show it: seed 002's lines, then why it asks
	// again and what outside the sandbox approving lets the run reach.
	for _, l := range gate.CardMessage(p).Card {
		fmt.Fprintln(a.io.out, l)
	}
	fmt.Fprintf(a.io.out, "id: %s\nstatus: %s\nrequested by: %s:%s\n", oneLine(p.Token), p.StatusAt(a.now()), oneLine(p.Channel), oneLine(p.Sender))
	if p.DecisionBy != nil {
		fmt.Fprintf(a.io.out, "answered by: %s:%s\n", oneLine(p.DecisionBy.Channel), oneLine(p.DecisionBy.Sender))
	}
	if p.CancelReason != "" {
		fmt.Fprintf(a.io.out, "why: %s\n", oneLine(p.CancelReason))
	}
	if ext, ok := gate.ExtensionOf(p); ok {
		fmt.Fprintf(a.io.out, "extension: %s\ncapability: %s\n", oneLine(ext), oneLine(p.CapabilityClass))
	} else {
		fmt.Fprintf(a.io.out, "command: %s\ncwd: %s\n", argvLine(p.Details.Argv), oneLine(p.Details.Cwd))
		// Every access the request asks for, the card's headline first.
		if len(p.Details.Accesses) > 0 {
			fmt.Fprintln(a.io.out, "accesses:")
		}
		for _, acc := range p.Details.Accesses {
			line := "  " + oneLine(string(acc.Capability))
			if acc.Target != "" {
				line += " " + oneLine(acc.Target)
			}
			fmt.Fprintln(a.io.out, line)
		}
		// What a one-shot ticket binds besides the words: a change to
		// any of them asks again.
		if len(p.Details.Bound) > 0 || p.Details.Pin != "" {
			fmt.Fprintln(a.io.out, "bound:")
		}
		for _, b := range p.Details.Bound {
			fmt.Fprintln(a.io.out, "  "+oneLine(b))
		}
		if p.Details.Pin != "" {
			fmt.Fprintln(a.io.out, "  pin: "+oneLine(p.Details.Pin))
		}
		if p.StatusAt(a.now()) == approvals.StatusPending {
			printChoices(a.io.out, "", p)
		}
	}
	fmt.Fprintf(a.io.out, "reason: %s\nexpires: %s\n", oneLine(p.Details.Reason), p.ExpiresAt.Local().Format(time.RFC3339))
	return nil
}

// ApproveCmd is mnemos approvals approve.
type ApproveCmd struct {
	ID       string        `arg:"" help:"The request id."`
	Remember string        `enum:",session,permanent,contained" default:"" help:"Also stop asking: record a grant for the request's session (12 hours when it was made without --session) or permanently; for code:exec and mail:send, an allow rule for each command's program and subcommand (go test, npm run lint), in the policy file when permanent, for the session (12 hours at most) otherwise; contained: stop asking about contained work (code the sandbox holds: no network, writes only in the workspace and temp) in this workspace for the session."`
	For      time.Duration `help:"Limit the grant to a duration, e.g. 2h."`
	Prefix   []string      `sep:"none" placeholder:"WORDS" help:"With --remember, remember this prefix of a command (\"go test -run X\") in place of the one proposed (approvals show lists them); repeat it for several commands."`
	Under    string        `placeholder:"DIR" help:"With --remember, grant writing anywhere in this directory (relative to the request's directory, holding what it writes) rather than only the paths it names."`
	JSON     bool          `name:"json" help:"Print JSON."`
}

// Run approves a request.
func (c *ApproveCmd) Run(a *app) error {
	g, err := a.gate()
	if err != nil {
		return err
	}
	// The flags name whose requests are answered; the answer comes from
	// the person at this terminal, never from that identity itself.
	id := a.identity()
	res, err := g.Approve(a.ctx, c.ID, id, gate.ApproveOptions{Remember: c.Remember, For: c.For,
		Prefixes: prefixWords(c.Prefix), Under: c.Under, Via: approvals.Identity{Channel: approvals.ViaTerminal, Sender: id.Sender}})
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(a.io.out, res)
	}
	if ext, ok := gate.ExtensionOf(res.Pending); ok {
		fmt.Fprintf(a.io.out, "approved %s: extension %s may use %s\n", oneLine(res.Pending.Token), oneLine(ext), oneLine(res.Pending.CapabilityClass))
	} else {
		fmt.Fprintf(a.io.out, "approved %s: %s\n", oneLine(res.Pending.Token), argvLine(res.Pending.Details.Argv))
		if remembered := len(res.Grants) > 0 || len(res.Rules) > 0 || len(res.SessionRules) > 0; !remembered || len(res.NotRemembered) > 0 {
			fmt.Fprintln(a.io.out, "the identical command, rerun from the same directory by the same identity, now runs once")
		}
	}
	for _, gr := range res.Grants {
		until := "until revoked"
		if gr.ExpiresAt != nil {
			until = "until " + gr.ExpiresAt.Local().Format("2006-01-02 15:04")
		}
		if gr.Session != "" {
			until += " in session " + gr.Session
		}
		if slices.Contains(res.Reused, gr.ID) {
			until += " (held already: reused, not recorded again)"
		} else if old, ok := res.Replaced[gr.ID]; ok {
			until += fmt.Sprintf(" (replaces grant %d, which ended sooner)", old)
		}
		fmt.Fprintf(a.io.out, "grant %d: %s on %s for %s:%s, %s\n", gr.ID, gr.Capability, oneLine(gr.Target), oneLine(gr.Channel), oneLine(gr.Sender), oneLine(until))
	}
	printRemembered(a, res)
	return nil
}

// DenyCmd is mnemos approvals deny.
type DenyCmd struct {
	ID string `arg:"" help:"The request id."`
}

// Run rejects a request.
func (c *DenyCmd) Run(a *app) error {
	a.onlyTightens, a.tolerant = "approvals deny", "approvals deny"
	g, err := a.gate()
	if err != nil {
		return err
	}
	p, err := g.Deny(a.ctx, c.ID, a.identity())
	if err != nil {
		return err
	}
	fmt.Fprintf(a.io.out, "denied %s: %s\n", oneLine(p.Token), argvLine(p.Details.Argv))
	return nil
}

// CancelCmd is mnemos approvals cancel: the requester withdraws a request
// it no longer needs, so that nobody approves it later.
type CancelCmd struct {
	ID     string `arg:"" help:"The request id."`
	Reason string `help:"Why the request is withdrawn (recorded in the audit log)."`
}

// Run withdraws a request.
func (c *CancelCmd) Run(a *app) error {
	a.onlyTightens, a.tolerant = "approvals cancel", "approvals cancel"
	g, err := a.gate()
	if err != nil {
		return err
	}
	p, err := g.Cancel(a.ctx, c.ID, a.identity(), c.Reason)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.io.out, "cancelled %s: %s (%s)\n", oneLine(p.Token), argvLine(p.Details.Argv), oneLine(p.CancelReason))
	return nil
}

// argvLine shows a request's argv on one line, quoted where a word needs
// it (so that each word's bounds show) and escaped as oneLine does.
func argvLine(argv []string) string {
	return oneLine(shellQuote(argv))
}

// classOf is the card's class of a request as listed: its capability class
// and, when the request has other accesses, how many.
func classOf(p approvals.Pending) string {
	class := oneLine(p.CapabilityClass)
	if n := p.Card().More; n > 0 {
		class += fmt.Sprintf(" and %d more", n)
	}
	return class
}
