package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
)

// GrantsCmd groups the grant subcommands.
type GrantsCmd struct {
	List   GrantsListCmd `cmd:"" help:"List active grants (all with --all)."`
	Revoke RevokeCmd     `cmd:"" help:"Revoke a grant by id."`
	Prune  PruneCmd      `cmd:"" help:"Revoke grants unused for a while (reason: stale)."`
}

// PruneCmd is mnemos grants prune.
type PruneCmd struct {
	UnusedFor string `required:"" help:"Revoke grants not used for this long: 90d, 36h, 45m."`
}

// Run revokes stale grants.
func (c *PruneCmd) Run(a *app) error {
	d, err := parseDays(c.UnusedFor)
	if err != nil || d <= 0 {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("--unused-for %q is not a positive duration", c.UnusedFor), hint: "write it like 90d, 36h or 45m"}
	}
	a.onlyTightens, a.tolerant = "grants prune", "grants prune"
	g, err := a.gate()
	if err != nil {
		return err
	}
	gone, err := g.PruneGrants(a.ctx, d, a.identity())
	if err != nil {
		return err
	}
	for _, gr := range gone {
		fmt.Fprintf(a.io.out, "revoked grant %d (stale): %s on %s for %s:%s\n", gr.ID, gr.Capability, gr.Target, gr.Channel, gr.Sender)
	}
	fmt.Fprintf(a.io.out, "%d stale grants revoked\n", len(gone))
	return nil
}

// parseDays is time.ParseDuration that also accepts whole days ("90d").
func parseDays(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 || days > 100*365 {
			return 0, fmt.Errorf("bad number of days %q", n)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// GrantsListCmd is mnemos grants list.
type GrantsListCmd struct {
	All     bool   `help:"Include revoked and expired grants."`
	Channel string `name:"of-channel" help:"Only grants for this channel."`
	Sender  string `name:"of-sender" help:"Only grants for this sender."`
	JSON    bool   `name:"json" help:"Print a JSON array."`
}

// Run lists grants, newest first.
func (c *GrantsListCmd) Run(a *app) error {
	a.tolerant = "grants list"
	g, err := a.gate()
	if err != nil {
		return err
	}
	st, err := g.Store(a.ctx)
	if err != nil {
		return err
	}
	filter := approvals.GrantFilter{Channel: c.Channel, Sender: c.Sender, IncludeRevoked: c.All}
	list, err := st.ListGrantRecords(a.ctx, filter, a.now())
	if err != nil {
		return err
	}
	rules, err := st.ListSessionRules(a.ctx, filter, a.now())
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(a.io.out, grantsAndRules(list, rules))
	}
	if len(list) == 0 && len(rules) == 0 {
		fmt.Fprintln(a.io.out, "no grants")
		return nil
	}
	defer printSessionRules(a, rules)
	for _, gr := range list {
		state := "active"
		switch {
		case gr.RevokedAt != nil && gr.RevokeReason != "" && gr.RevokeReason != approvals.RevokeReasonRevoked:
			state = "revoked (" + gr.RevokeReason + ")"
		case gr.RevokedAt != nil:
			state = "revoked"
		case gr.ExpiresAt != nil && !gr.ExpiresAt.After(a.now()):
			state = "expired"
		case gr.Exhausted():
			state = "used up"
		}
		until := "-"
		if gr.ExpiresAt != nil {
			until = gr.ExpiresAt.Local().Format("2006-01-02 15:04")
		}
		uses := strconv.Itoa(gr.Uses)
		if gr.MaxUses > 0 {
			uses += "/" + strconv.Itoa(gr.MaxUses)
		}
		last := "never"
		if gr.LastUsed != nil {
			last = gr.LastUsed.Local().Format("2006-01-02 15:04")
		}
		target := gr.Target
		if gr.Session != "" {
			target += "  session " + gr.Session
		}
		fmt.Fprintf(a.io.out, "%d  %-7s  %s:%s  %s  %s  until %s  uses %s  last used %s\n",
			gr.ID, state, gr.Channel, gr.Sender, gr.Capability, target, until, uses, last)
	}
	return nil
}

// RevokeCmd is mnemos grants revoke.
type RevokeCmd struct {
	ID string `arg:"" help:"The grant id, or rN for a session rule."`
}

// Run revokes a grant.
func (c *RevokeCmd) Run(a *app) error {
	if id, ok := approvals.ParseSessionRuleLabel(c.ID); ok {
		return revokeSessionRule(a, id)
	}
	id, err := strconv.ParseInt(c.ID, 10, 64)
	if err != nil || id <= 0 {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("grant id %q is not a positive number", c.ID), hint: "see ids with `mnemos grants list`"}
	}
	a.onlyTightens, a.tolerant = "grants revoke", "grants revoke"
	g, err := a.gate()
	if err != nil {
		return err
	}
	gr, ok, err := g.RevokeGrant(a.ctx, id, a.identity())
	if err != nil {
		return err
	}
	if !ok {
		return &exitError{code: exitFailure, msg: fmt.Sprintf("grant %d does not exist or is already revoked", id), hint: "see grants with `mnemos grants list --all`"}
	}
	fmt.Fprintf(a.io.out, "revoked grant %d: %s on %s\n", gr.ID, gr.Capability, gr.Target)
	return nil
}
