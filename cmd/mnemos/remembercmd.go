package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/gate"
)

// prefixWords splits each --prefix value into words.
func prefixWords(vals []string) [][]string {
	var out [][]string
	for _, v := range vals {
		if w := strings.Fields(v); len(w) > 0 {
			out = append(out, w)
		}
	}
	return out
}

// printRemembered says what an approval remembered beyond its grants: the
// rules added to the policy file, the session rules, and the commands
// left to ask.
func printRemembered(a *app, res gate.Approved) {
	for _, r := range res.Rules {
		what := "commands starting with"
		if r.Exact {
			what = "exactly"
		}
		fmt.Fprintf(a.io.out, "added to %s: allow rule %q for %s: %s\n", oneLine(r.File), r.Name, what, argvLine(r.ArgvPrefix))
	}
	if len(res.Rules) > 0 {
		fmt.Fprintln(a.io.out, "remove it by editing that file")
	}
	for _, r := range res.SessionRules {
		fmt.Fprintf(a.io.out, "session rule %s: allow %s for %s:%s, %s\n", r.Label(), sessionRuleWords(r),
			oneLine(r.Channel), oneLine(r.Sender), oneLine(sessionRuleScope(r)))
	}
	if len(res.SessionRules) > 0 {
		fmt.Fprintf(a.io.out, "end it sooner with: mnemos grants revoke %s\n", res.SessionRules[0].Label())
	}
	for _, n := range res.NotRemembered {
		fmt.Fprintf(a.io.out, "not remembered, asks again: %s: %s\n", argvLine(n.Argv), oneLine(n.Why))
	}
}

// sessionRuleWords is what a session rule covers, on one line.
func sessionRuleWords(r approvals.SessionRule) string {
	if ws, ok := gate.ContainedWorkspace(r); ok {
		return "contained work in " + oneLine(ws) + " (what the sandbox holds: no network, writes only there and in temp)"
	}
	s := "commands starting with: " + argvLine(r.ArgvPrefix)
	if r.Exact {
		s = "exactly: " + argvLine(r.ArgvPrefix)
	}
	return s
}

// sessionRuleScope is the session and the end of a session rule.
func sessionRuleScope(r approvals.SessionRule) string {
	s := "until " + r.ExpiresAt.Local().Format("2006-01-02 15:04")
	if r.Session != "" {
		s += " in session " + r.Session
	}
	return s
}

// printChoices lists what approving a pending request with --remember
// would remember (gate.RememberChoices), each line after lead.
func printChoices(w io.Writer, lead string, p approvals.Pending) {
	choices := gate.RememberChoices(p)
	if len(choices) == 0 {
		return
	}
	fmt.Fprintln(w, lead+"remember:")
	for _, l := range choices {
		fmt.Fprintln(w, lead+"  "+oneLine(l))
	}
}

// grantsAndRules is grants list --json: the grants, then the session
// rules, each with "kind": "session_rule".
func grantsAndRules(list []approvals.GrantRecord, rules []approvals.SessionRule) []any {
	out := make([]any, 0, len(list)+len(rules))
	for _, g := range list {
		out = append(out, g)
	}
	for _, r := range rules {
		out = append(out, r)
	}
	return out
}

// printSessionRules lists session rules as grants list does grants.
func printSessionRules(a *app, rules []approvals.SessionRule) {
	for _, r := range rules {
		state := "active"
		switch {
		case r.RevokedAt != nil:
			state = "revoked"
		case !r.ExpiresAt.After(a.now()):
			state = "expired"
		}
		session := ""
		if r.Session != "" {
			session = "  session " + r.Session
		}
		fmt.Fprintf(a.io.out, "%s  %-7s  %s:%s  rule  allow %s%s  until %s  approval %s\n", r.Label(), state,
			oneLine(r.Channel), oneLine(r.Sender), sessionRuleWords(r), oneLine(session), r.ExpiresAt.Local().Format("2006-01-02 15:04"), oneLine(r.Approval))
	}
}

// revokeSessionRule is grants revoke rN.
func revokeSessionRule(a *app, id int64) error {
	a.onlyTightens, a.tolerant = "grants revoke", "grants revoke"
	g, err := a.gate()
	if err != nil {
		return err
	}
	r, ok, err := g.RevokeSessionRule(a.ctx, id, a.identity())
	if err != nil {
		return err
	}
	if !ok {
		return &exitError{code: exitFailure, msg: fmt.Sprintf("session rule r%d does not exist or is already revoked", id), hint: "see them with `mnemos grants list --all`"}
	}
	fmt.Fprintf(a.io.out, "revoked session rule %s: allow %s\n", r.Label(), sessionRuleWords(r))
	return nil
}

// printRememberLines is printChoices on the lines mnemos speaks on
// stderr: "mnemos: remember: ..." each.
func printRememberLines(w io.Writer, p approvals.Pending) {
	for _, l := range gate.RememberChoices(p) {
		fmt.Fprintln(w, "mnemos: remember: "+oneLine(l))
	}
}
