package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
)

// PolicyCmd groups the policy subcommands.
type PolicyCmd struct {
	Check    CheckCmd    `cmd:"" help:"Decide a command without running it: mnemos policy check [--json] -- CMD [ARG...]. An ask parks a pending approval, as run does, unless --dry-run. Exit 0 allow, 75 ask, 77 deny."`
	Explain  ExplainCmd  `cmd:"" help:"Explain a decision step by step without running or recording anything: the parse, each unwrapping, each command's guard checks, accesses, table cells, every rule considered and why it did or did not match, the grants consulted, the decision."`
	Registry RegistryCmd `cmd:"" help:"Print the 13 capabilities of the registry: a table on a terminal, one JSON line each otherwise (or with --json)."`
	Table    TableCmd    `cmd:"" help:"Print the autonomy × capability table: a table on a terminal, one JSON line per level otherwise (or with --json)."`
	Outcome  OutcomeCmd  `cmd:"" help:"The effective outcome of one capability at a level: the table's cell, lifted by a grant of the identity on --target."`
	Show     ShowCmd     `cmd:"" help:"Print which policy file applies and its rules."`
	Lint     LintCmd     `cmd:"" help:"Validate a policy file: every error as FILE:LINE:COL: message, warnings for unreachable rules. Exit 78 on error."`
	Test     TestCmd     `cmd:"" help:"Run a file of test cases against the policy's rules and table (not the guard or the judge: rm -rf / is a guard denial, not a policy case): a pass/fail line per case and a summary. Exit 1 on any failure."`
}

// CheckCmd is mnemos policy check.
type CheckCmd struct {
	JSON    bool `name:"json" help:"Print one JSON object."`
	DryRun  bool `help:"Record nothing and create no pending approval (without it, an ask is parked for a person to approve and recorded in the audit log)."`
	Explain bool `help:"Print the step-by-step trace of policy explain (with --json: the rules considered in each command)."`
	// Unsandboxed only makes the decision stricter.
	Unsandboxed bool `help:"The command will run outside mnemos's sandbox (a hook runs it itself): a read of a path not known before it runs asks at every level. Recorded in the audit log."`
	RequestFlags
	Command []string `arg:"" passthrough:"partial" help:"The command to check, after --."`
}

// Run prints the decision and why.
func (c *CheckCmd) Run(a *app) error {
	g, req, err := a.gatedRequest(c.Command, c.RequestFlags, "mnemos policy check -- CMD [ARG...]")
	if err != nil {
		return err
	}
	req.Unsandboxed = c.Unsandboxed
	d, err := g.Decide(a.ctx, req, gate.Mode{DryRun: c.DryRun, Explain: c.Explain})
	if err != nil {
		return err
	}
	warnDeliveries(a, d)
	switch {
	case c.JSON:
		if err := writeJSON(a.io.out, d); err != nil {
			return err
		}
	case c.Explain:
		printExplanation(a.io.out, req, d)
	default:
		printDecision(a.io.out, d)
	}
	return decisionExit(d)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// printDecision renders a decision for people. Every text that can come
// from the request, the policy or the state is escaped (oneLine).
func printDecision(w io.Writer, d gate.Decision) {
	fmt.Fprintf(w, "decision: %s\n", d.Outcome)
	fmt.Fprintf(w, "reason: %s\n", oneLine(d.Reason))
	if d.BlockedBy != "" {
		fmt.Fprintf(w, "blocked by: %s\n", oneLine(d.BlockedBy))
	}
	fmt.Fprintf(w, "level: %s (policy: %s)\n", d.Level, oneLine(d.Policy))
	fmt.Fprintf(w, "workspace: %s\n", oneLine(d.Workspace))
	if d.Sandboxed {
		fmt.Fprintln(w, "sandboxed: yes (decided as mnemos run runs it, under the sandbox)")
	} else {
		fmt.Fprintln(w, "sandboxed: no (decided for a command that runs outside mnemos's sandbox)")
	}
	for i, c := range d.Commands {
		fmt.Fprintf(w, "command %d: %s\n", i+1, oneLine(c.Text))
		if len(c.Command.Context) > 0 {
			fmt.Fprintf(w, "  inside: %s\n", oneLine(strings.Join(c.Command.Context, " > ")))
		}
		for _, wr := range c.Command.Wrappers {
			fmt.Fprintf(w, "  wrapper: %s\n", oneLine(wr.Name))
		}
		if c.Guard != nil {
			fmt.Fprintf(w, "  guard: %s (%s)\n", oneLine(c.Guard.Reason), oneLine(c.Guard.Check))
		}
		if c.Policy != nil {
			for _, acc := range c.Policy.Accesses {
				t := oneLine(acc.Target)
				if acc.Dynamic {
					t += " (not known before it runs)"
				}
				line := fmt.Sprintf("  capability: %s", oneLine(string(acc.Capability)))
				if t != "" {
					line += " " + t
				}
				line += fmt.Sprintf(" [table: %s]", acc.Cell)
				if acc.Grant != nil {
					line += fmt.Sprintf(" [grant %d]", acc.Grant.ID)
				}
				fmt.Fprintln(w, line)
			}
			if c.Policy.Rule != nil {
				undoable := ""
				switch {
				case c.Policy.Undoable != c.Policy.Rule.Name:
				case c.Drops != "" && !c.DropsKept():
					undoable = "; undoable, but the journal does not keep all it drops: it asks"
				default:
					undoable = "; undoable: the journal keeps what it changes, so it asks below level full and runs at full"
				}
				fmt.Fprintf(w, "  rule: %s (%s, %s%s)\n", oneLine(c.Policy.Rule.Name), c.Policy.Rule.Action, oneLine(c.Policy.Rule.Pos.String()), undoable)
			}
		}
		if c.Judge != nil {
			fmt.Fprintf(w, "  judge: %.2f %s\n", c.Judge.Score, oneLine(c.Judge.Reason))
		}
		fmt.Fprintf(w, "  outcome: %s, decided by %s: %s\n", c.Outcome, oneLine(c.DecidedBy), oneLine(c.Reason))
	}
	if d.Approval != nil {
		tok := oneLine(d.Approval.Token)
		fmt.Fprintf(w, "approval: %s; approve with: mnemos approvals approve %s\n", tok, tok)
	}
}

// formatFlags choose between the aligned table people read and the JSON
// lines programs read: the table on a terminal, JSON lines elsewhere.
type formatFlags struct {
	JSON bool `name:"json" xor:"format" help:"Print JSON lines (the default when stdout is not a terminal)."`
	Text bool `name:"text" xor:"format" help:"Print the aligned table (the default on a terminal)."`
}

// table reports whether to print the table.
func (f formatFlags) table(a *app) bool { return f.Text || (!f.JSON && isTerminal(a.io.out)) }

// RegistryCmd prints seed 000's registry.
type RegistryCmd struct {
	formatFlags
}

// Run prints the registry as a table, or one JSON line per capability.
func (c RegistryCmd) Run(a *app) error {
	if c.table(a) {
		tw := tabwriter.NewWriter(a.io.out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "capability\tcritical\tdefault approval\ttarget kind\tdescription")
		for _, s := range policy.Registry() {
			critical := "no"
			if s.Critical {
				critical = "yes"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, critical, s.DefaultApproval, s.TargetKind, s.Description)
		}
		return tw.Flush()
	}
	for _, s := range policy.Registry() {
		if err := writeJSON(a.io.out, s); err != nil {
			return err
		}
	}
	return nil
}

// TableCmd prints seed 000's table.
type TableCmd struct {
	formatFlags
}

type tableLine struct {
	Level    string            `json:"level"`
	Outcomes map[string]string `json:"outcomes"`
}

// Run prints the table with a row per capability and a column per level,
// the levels named as the policy file's level: names them; or one JSON
// line per level, named as seed 000 does (ReadOnly, Supervised, Full).
func (c TableCmd) Run(a *app) error {
	if c.table(a) {
		tw := tabwriter.NewWriter(a.io.out, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "capability")
		for _, l := range policy.Levels() {
			fmt.Fprintf(tw, "\t%s", l)
		}
		fmt.Fprintln(tw)
		for _, s := range policy.Registry() {
			fmt.Fprint(tw, s.Name)
			for _, l := range policy.Levels() {
				fmt.Fprintf(tw, "\t%s", policy.TableCell(l, s))
			}
			fmt.Fprintln(tw)
		}
		return tw.Flush()
	}
	for _, l := range policy.Levels() {
		line := tableLine{Level: l.Title(), Outcomes: map[string]string{}}
		for _, s := range policy.Registry() {
			line.Outcomes[string(s.Name)] = string(policy.TableCell(l, s))
		}
		if err := writeJSON(a.io.out, line); err != nil {
			return err
		}
	}
	return nil
}

// ShowCmd prints the policy in effect.
type ShowCmd struct {
	JSON bool `name:"json" xor:"format" help:"Print JSON."`
	YAML bool `name:"yaml" xor:"format" help:"Print each policy file as mnemos reads it, normalised: every setting the file writes or that differs from the default, every rule in evaluation order, no comments. With layers, one YAML document per layer, system first, each headed by a comment naming its file."`
}

// Run prints the policy's source, level and rules in evaluation order.
func (c *ShowCmd) Run(a *app) error {
	g, err := a.gate()
	if err != nil {
		return err
	}
	p := g.Config().Policy
	if c.YAML {
		return showYAML(a.io.out, p)
	}
	j := g.Journal()
	if c.JSON {
		return writeJSON(a.io.out, map[string]any{"source": p.Source, "level": p.Level.String(), "shell": p.Shell, "rules": p.Rules,
			"journal": map[string]any{"enabled": j.On, "quota": j.Quota, "keep": formatDays(j.Keep), "max_file": j.MaxFile,
				"big_deletion": j.BigDeletion, "exclude": j.Exclude, "watch": g.CanJournal()}})
	}
	fmt.Fprintf(a.io.out, "policy: %s\nlevel: %s\ndefaults.shell: %s\n", p.Source, p.Level, p.Shell)
	fmt.Fprintf(a.io.out, "journal: %s\n", journalSummary(j, g.CanJournal()))
	layers := p.Layers()
	if len(layers) == 0 {
		layers = []*policy.Policy{p}
	}
	for _, l := range layers {
		if l.Layer != "" {
			fmt.Fprintf(a.io.out, "\n%s layer: %s\n", l.Layer, l.Source)
		}
		for _, r := range l.Rules {
			fmt.Fprintf(a.io.out, "%6d  %-5s  %s\n", r.Priority, r.Action, r.Name)
		}
		for _, pr := range l.Profiles {
			fmt.Fprintf(a.io.out, "profile %s (%s/%s)", pr.Name, pr.Channel, pr.Sender)
			if pr.Level != nil {
				fmt.Fprintf(a.io.out, " level %s", *pr.Level)
			}
			fmt.Fprintln(a.io.out)
			for _, r := range pr.Rules {
				fmt.Fprintf(a.io.out, "%6d  %-5s  %s\n", r.Priority, r.Action, r.Name)
			}
		}
	}
	return nil
}

// showYAML prints the policy normalised (policy.Format): a stack of layers
// as one document per layer, each headed by its layer and file.
func showYAML(w io.Writer, p *policy.Policy) error {
	layers := p.Layers()
	if len(layers) == 0 {
		layers = []*policy.Policy{p}
	}
	for i, l := range layers {
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		if l.Layer != "" {
			fmt.Fprintf(w, "# %s layer: %s\n", l.Layer, oneLine(l.Source))
		} else {
			fmt.Fprintf(w, "# %s\n", oneLine(l.Source))
		}
		if _, err := w.Write(policy.Format(l)); err != nil {
			return err
		}
	}
	return nil
}

// journalSummary is policy show's line for the journal's settings.
func journalSummary(j policy.Journal, watch bool) string {
	if !j.On {
		return "off (the policy turns it off: nothing is contained work)"
	}
	s := fmt.Sprintf("on (quota %s per workspace, keep %s, max_file %s, big_deletion %d, %d directories excluded)",
		policy.FormatSize(j.Quota), formatDays(j.Keep), policy.FormatSize(j.MaxFile), j.BigDeletion, len(j.Exclude))
	if !watch {
		s += "; but this machine cannot trap the changes of confined commands (mnemos sandbox status): nothing is journaled, nor contained work"
	}
	return s
}

// formatDays writes a duration of whole days as 7d, else as Go does.
func formatDays(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}
