package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
)

// ExplainCmd is mnemos policy explain.
type ExplainCmd struct {
	JSON bool `name:"json" help:"Print one JSON object: the decision with, for each command, the guard's checks and every rule considered."`
	RequestFlags
	Command []string `arg:"" passthrough:"partial" help:"The command to explain, after --."`
}

// Run prints the step-by-step trace of a decision. It records nothing and
// creates no pending approval; the exit status is the decision's, as for
// policy check.
func (c *ExplainCmd) Run(a *app) error {
	g, req, err := a.gatedRequest(c.Command, c.RequestFlags, "mnemos policy explain -- CMD [ARG...]")
	if err != nil {
		return err
	}
	d, err := g.Decide(a.ctx, req, gate.Mode{DryRun: true, Explain: true})
	if err != nil {
		return err
	}
	if c.JSON {
		if err := writeJSON(a.io.out, d); err != nil {
			return err
		}
	} else {
		printExplanation(a.io.out, req, d)
	}
	return decisionExit(d)
}

// decisionExit is the exit status of a decision: 0 allow, 75 ask, 77 deny.
func decisionExit(d gate.Decision) error {
	switch d.Outcome {
	case policy.Allow:
		return nil
	case policy.Ask:
		return quietExit(exitApproval)
	}
	return quietExit(exitDenied)
}

// printExplanation renders a decision made in explain mode step by step:
// the request, the parse, then for each simple command where it was found,
// what was peeled off it, the guard's checks, its accesses with their
// table cells, the rules considered, the grants consulted, the judge and
// its outcome; then the final decision.
func printExplanation(w io.Writer, req gate.Request, d gate.Decision) {
	fmt.Fprintf(w, "request: %s\n", oneLine(shellQuote(req.Argv)))
	fmt.Fprintf(w, "  from %s/%s in %s (workspace %s)\n", oneLine(req.Channel), oneLine(req.Sender), oneLine(req.Cwd), oneLine(d.Workspace))
	fmt.Fprintf(w, "  level %s; policy %s\n", d.Level, oneLine(d.Policy))
	if len(d.Commands) == 0 {
		fmt.Fprintf(w, "parse: %s\n", oneLine(d.Reason))
	} else {
		fmt.Fprintf(w, "parse: %s found\n", plural(len(d.Commands), "simple command"))
	}
	for i, c := range d.Commands {
		fmt.Fprintf(w, "\ncommand %d: %s\n", i+1, oneLine(c.Text))
		if len(c.Command.Context) > 0 {
			fmt.Fprintf(w, "  found inside: %s\n", oneLine(strings.Join(c.Command.Context, " > ")))
		} else {
			fmt.Fprintln(w, "  found at the top level")
		}
		for _, wr := range c.Command.Wrappers {
			fmt.Fprintf(w, "  unwrapped: %s\n", oneLine(wr.Name))
		}
		if c.Command.Dynamic {
			fmt.Fprintln(w, "  program: not known before it runs")
		}
		for _, n := range c.Command.Notes {
			fmt.Fprintf(w, "  note: %s\n", oneLine(n))
		}
		printGuard(w, c)
		if c.Policy != nil {
			printPolicy(w, c.Policy, c.Rules, c)
		}
		if c.Judge != nil {
			verdict := "approved"
			if !c.Judge.Approved {
				verdict = "refused"
			}
			fmt.Fprintf(w, "  judge: %s, score %.2f: %s\n", verdict, c.Judge.Score, oneLine(c.Judge.Reason))
		}
		fmt.Fprintf(w, "  outcome: %s, decided by %s: %s\n", c.Outcome, oneLine(c.DecidedBy), oneLine(c.Reason))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "decision: %s\n", d.Outcome)
	if d.BlockedBy != "" {
		fmt.Fprintf(w, "blocked by: %s\n", oneLine(d.BlockedBy))
	}
	fmt.Fprintf(w, "reason: %s\n", oneLine(d.Reason))
	if len(d.Commands) > 1 {
		fmt.Fprintln(w, "(the strictest outcome of the commands is the decision)")
	}
	if d.Approval != nil {
		tok := oneLine(d.Approval.Token)
		fmt.Fprintf(w, "approval: %s; approve with: mnemos approvals approve %s\n", tok, tok)
	}
}

func printGuard(w io.Writer, c gate.CommandDecision) {
	from := ""
	if len(c.GuardDirs) > 0 {
		from = " (from " + oneLine(strings.Join(c.GuardDirs, ", ")) + ")"
	}
	if c.Guard != nil {
		fmt.Fprintf(w, "  guard: %s hit%s: %s\n", oneLine(c.Guard.Check), from, oneLine(c.Guard.Reason))
		return
	}
	checks := "no hit"
	if len(c.GuardChecks) > 0 {
		checks = oneLine(strings.Join(c.GuardChecks, ", ")) + ": no hit"
	}
	fmt.Fprintf(w, "  guard: %s%s\n", checks, from)
}

func printPolicy(w io.Writer, res *policy.Result, rules []policy.RuleTrace, c gate.CommandDecision) {
	if len(res.Accesses) == 0 {
		fmt.Fprintln(w, "  accesses: none")
	}
	for _, acc := range res.Accesses {
		line := fmt.Sprintf("  capability: %s", oneLine(string(acc.Capability)))
		if acc.Target != "" {
			line += " " + oneLine(acc.Target)
		}
		if acc.Dynamic {
			line += " (not known before it runs)"
		}
		line += fmt.Sprintf(" -> table: %s", acc.Cell)
		fmt.Fprintln(w, line)
	}
	if len(rules) == 0 {
		fmt.Fprintln(w, "  rules: none considered")
	} else {
		fmt.Fprintln(w, "  rules considered:")
	}
	for _, t := range rules {
		where := oneLine(t.Rule.Pos.String())
		if t.Rule.Layer != "" {
			where = string(t.Rule.Layer) + " " + where
		}
		if t.Rule.Profile != "" {
			where += ", profile " + oneLine(t.Rule.Profile)
		}
		status := "no match: " + oneLine(t.Why)
		switch {
		case t.Matched && t.Selected && res.Undoable == t.Rule.Name && c.Drops != "" && !c.DropsKept():
			// An undoable rule the journal cannot stand for (gate's
			// dropFloor).
			status = "matched, selected; undoable, but the journal does not keep all it drops, so it asks"
		case t.Matched && t.Selected && res.Undoable == t.Rule.Name && c.Outcome == policy.Allow:
			status = "matched, selected; undoable: the journal keeps what the command changes, so at level full the rule stands aside and lets it run (`mnemos undo --last` brings the work back)"
		case t.Matched && t.Selected && res.Undoable == t.Rule.Name:
			status = "matched, selected; undoable: the journal keeps what the command changes, so the rule asks in place of " + rulesAction(t.Rule.Action) + " below level full, and would let it run at full"
		case t.Matched && t.Selected:
			status = "matched, selected"
		case t.Matched && t.Note != "":
			status = "matched; " + oneLine(t.Note)
		case t.Matched:
			status = "matched"
		case t.Why == "":
			status = "no match"
		}
		fmt.Fprintf(w, "    %s %q (priority %d, %s): %s\n", t.Rule.Action, t.Rule.Name, t.Priority, where, status)
	}
	for _, q := range res.Consulted {
		found := "none"
		if q.Found {
			found = fmt.Sprintf("grant %d", q.GrantID)
		}
		fmt.Fprintf(w, "  grant lookup: %s %s: %s\n", oneLine(string(q.Capability)), oneLine(q.Target), found)
	}
}

// rulesAction is the -ing form of a rule's action.
func rulesAction(a policy.Outcome) string {
	switch a {
	case policy.Deny:
		return "denying"
	case policy.Ask:
		return "asking"
	}
	return "allowing"
}

// shellQuote renders argv as a shell would need it typed.
func shellQuote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' || r == '+' || r == '@' ||
				(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
