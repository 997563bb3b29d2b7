package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/hook"
	"github.com/mnemos-dev/mnemos/policy"
)

// HookCmd answers agents' hooks and wires them up.
type HookCmd struct {
	Answer    HookAnswerCmd    `cmd:"" default:"withargs" hidden:"" help:"Answer the agent's hook: read its payload on stdin, decide, print its answer."`
	Install   HookInstallCmd   `cmd:"" help:"Add mnemos's hook to the agent's settings (merged with what is there; a second install changes nothing)."`
	Uninstall HookUninstallCmd `cmd:"" help:"Remove mnemos's hook from the agent's settings."`
	Doctor    DoctorCmd        `cmd:"" help:"For each agent found: is mnemos's hook wired, does it run this mnemos, does it block a destructive command and allow a harmless one; and do the policy, state, audit log and sandbox work. Exit 1 when protection is not active."`
}

// HookAnswerCmd is mnemos hook AGENT, run by the agent before a tool call.
type HookAnswerCmd struct {
	Agent     string        `arg:"" help:"The agent: claude-code, codex, gemini, cursor, copilot or amp."`
	Hold      time.Duration `help:"When a person must approve and the agent cannot ask, wait this long for an answer from another channel (keep it below the agent's hook timeout)."`
	NoRewrite bool          `name:"no-rewrite" help:"Never rewrite an allowed command into mnemos run: decide it as a command that runs outside the sandbox."`
}

// Run answers one tool call. Whatever happens inside, the agent gets an
// answer it reads as a decision: every agent runs the tool when its hook
// fails, so an error here is the agent's block, never an error status.
func (c *HookAnswerCmd) Run(a *app) (err error) {
	agent, ok := hook.Lookup(c.Agent)
	if !ok {
		// The agent's format is unknown: exit 2 with a reason on stderr
		// is a block for most of them.
		fmt.Fprintf(a.io.err, "mnemos: error: unknown agent %q (want one of %s); the tool call is blocked\n", c.Agent, strings.Join(hook.Names(), ", "))
		return quietExit(2)
	}
	var ans hook.Answer
	defer func() {
		if r := recover(); r != nil {
			ans = agent.Refuse(fmt.Sprintf("internal error: %v", r))
		}
		a.io.out.Write(ans.Stdout)
		io.WriteString(a.io.err, ans.Stderr)
		err = quietExit(ans.Exit)
	}()
	ans = c.answer(a, agent)
	return nil
}

func (c *HookAnswerCmd) answer(a *app, agent *hook.Agent) hook.Answer {
	payload, err := io.ReadAll(io.LimitReader(a.io.in, hook.MaxPayload+1))
	if err != nil {
		return agent.Refuse("cannot read the payload: " + err.Error())
	}
	here, _ := os.Getwd()
	call, err := agent.Parse(payload, hook.Env{Getenv: a.getenv, Cwd: here})
	if err != nil {
		return agent.Refuse(err.Error())
	}
	cwd := call.Cwd
	if cwd == "" {
		cwd = here
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return agent.Refuse(fmt.Sprintf("the working directory %q is not a directory", cwd))
	}
	// The request is judged where the agent runs it: the project policy
	// of that workspace, relative paths from there.
	if err := os.Chdir(cwd); err != nil {
		return agent.Refuse(err.Error())
	}
	a.cli.Channel = agent.Name
	if call.Session != "" {
		a.cli.Session = call.Session
	}
	g, err := a.gate()
	if err != nil {
		return agent.Refuse(errorText(err))
	}
	argv, fields := toolRequest(call)
	req, err := a.request(argv, RequestFlags{Reason: call.Intent})
	if err != nil {
		return agent.Refuse(errorText(err))
	}
	req.Context = fields
	if w := call.Written; w != nil {
		// What a file tool writes: shown on the card, bound to the
		// approval.
		req.Written = &gate.Written{Kind: w.Kind, Path: w.Path, Text: w.Text, Fields: w.Fields}
	}

	// What runs outside the sandbox is decided as such: a file tool, a
	// command the agent runs itself, any run where the sandbox cannot
	// keep its promises.
	rewriteAsk := call.CanRewrite && !c.NoRewrite
	rewriteAllow := rewriteAsk && agent.QuietRewrite()
	req.Unsandboxed = !rewriteAllow || len(probeSandbox().Missing()) > 0

	dec, err := g.Decide(a.ctx, req, gate.Mode{SpendTicket: true, AgentAsks: call.CanAsk})
	if err != nil {
		return agent.Refuse(errorText(err))
	}
	warnDeliveries(a, dec)
	hold := c.Hold
	if hold == 0 {
		hold = g.Config().Policy.HookHold
	}
	if dec.Outcome == policy.Ask && !call.CanAsk && hold > 0 && dec.Approval != nil {
		ctx, cancel := context.WithTimeout(a.ctx, hold)
		fmt.Fprintf(a.io.err, "mnemos: holding for approval %s (up to %s)\n", dec.Approval.Token, hold)
		dec, err = g.HoldApproval(ctx, req, dec, gate.Mode{SpendTicket: true}, 0)
		cancel()
		if err != nil {
			return agent.Refuse(errorText(err))
		}
	}
	v := hook.Verdict{Reason: dec.Reason}
	if call.Kind != hook.Shell {
		// The reason names the command the tool was judged as; say which
		// tool it was.
		v.Reason = call.Tool + " (judged as " + hook.QuoteLine(argv...) + "): " + dec.Reason
	}
	switch dec.Outcome {
	case policy.Allow:
		v.Outcome = hook.Allow
		if rewriteAllow {
			if v.Rewrite, err = rewriteLine(g, req, dec, 0); err != nil {
				return agent.Refuse(errorText(err))
			}
		}
	case policy.Ask:
		if call.CanAsk {
			v.Outcome, v.Card = hook.Ask, g.HookCard(req, dec)
			if rewriteAsk {
				ttl := g.Config().Policy.ApprovalTTL
				if ttl <= 0 {
					ttl = approvals.DefaultTTL
				}
				if v.Rewrite, err = rewriteLine(g, req, dec, ttl); err != nil {
					return agent.Refuse(errorText(err))
				}
			}
			break
		}
		v.Outcome = hook.Pending
		if dec.Approval != nil {
			tok := dec.Approval.Token
			v.Approval = tok
			// Only the requester's identity resolves a request: the
			// agent's channel.
			v.Hint = "Ask the user to approve it with `mnemos --channel " + agent.Name + " approvals approve " + tok + "` (or to deny it), then run exactly the same command again from the same directory; do not look for another way to do it"
		}
	default:
		v.Outcome, v.Hint = hook.Deny, denyHint(dec)
	}
	return agent.Answer(call, v)
}

// toolRequest is the command a tool call is judged as: a shell command as
// its shell runs it; a file tool as the program that touches the same
// paths (cat reads, tee writes, rm deletes, ls lists, grep -r searches),
// so the guard and the policy see every path; a fetch as curl; any other
// tool as a program named after it, which the table judges as code the
// agent runs.
func toolRequest(c hook.Call) ([]string, map[string]any) {
	switch c.Kind {
	case hook.Shell:
		if c.Argv != nil {
			return c.Argv, nil
		}
		if c.Interpreter == "pwsh" {
			return []string{"pwsh", "-Command", c.Command}, nil
		}
		return []string{"bash", "-c", c.Command}, nil
	case hook.Fetch:
		return append([]string{"curl", "-sS", "--"}, c.URLs...), map[string]any{"tool": c.Tool}
	case hook.Files:
		var cmds [][]string
		for _, f := range c.Files {
			var cmd []string
			switch f.Op {
			case hook.Read:
				cmd = []string{"cat", "--", f.Path}
			case hook.Write:
				cmd = []string{"tee", "--", f.Path}
			case hook.Delete:
				cmd = []string{"rm", "-f", "--", f.Path}
			case hook.List:
				cmd = []string{"ls", "-d", "--", f.Path}
			default:
				cmd = []string{"grep", "-r", "-e", f.Pattern, "--", f.Path}
			}
			cmds = append(cmds, cmd)
		}
		ctx := map[string]any{"tool": c.Tool}
		if len(cmds) == 1 {
			return cmds[0], ctx
		}
		lines := make([]string, len(cmds))
		for i, cmd := range cmds {
			lines[i] = hook.QuoteLine(cmd...)
		}
		return []string{"bash", "-c", strings.Join(lines, "; ")}, ctx
	}
	ctx := map[string]any{"tool": c.Tool}
	if in := c.Input(); in != nil {
		if b, err := json.Marshal(in); err == nil && len(b) <= 4096 {
			ctx["tool_input"] = in
		}
	}
	return []string{"tool:" + c.Tool}, ctx
}

// rewriteLine issues the hook ticket and returns the command line the
// agent runs instead: mnemos run with the same words, identity and
// session, carrying the ticket.
func rewriteLine(g *gate.Gate, req gate.Request, dec gate.Decision, ttl time.Duration) (string, error) {
	tok, err := g.IssueHookTicket(req, dec, ttl)
	if err != nil {
		return "", err
	}
	exe, err := selfPath()
	if err != nil {
		return "", err
	}
	// NAME=VALUE: a session id that starts with a dash stays a value.
	words := []string{exe, "run", "--channel=" + req.Channel}
	if req.Session != "" {
		words = append(words, "--session="+req.Session)
	}
	words = append(words, "--hook-ticket="+tok, "--")
	return hook.QuoteLine(append(words, req.Argv...)...), nil
}

// denyHint tells the model what to do about a denial.
func denyHint(d gate.Decision) string {
	switch d.BlockedBy {
	case "guard":
		return "mnemos never allows this, at any level; do not retry it or a variant of it"
	case "parse":
		return "write the command so that it parses as a POSIX shell command"
	case "judge":
		return "the command does not fit what you said you are doing; say what you are doing, or ask the user"
	case "approval":
		return "a person decided against it; do not retry it"
	}
	return "the policy does not allow it; ask the user how to go on"
}

// errorText is an error as the CLI prints it, on one line.
func errorText(err error) string {
	var b bytes.Buffer
	exitCodeOf(&b, err)
	s := strings.TrimSpace(b.String())
	s = strings.ReplaceAll(s, "\nmnemos: hint: ", "; ")
	s = strings.ReplaceAll(s, "\n", "; ")
	return strings.TrimPrefix(s, "mnemos: error: ")
}

// HookInstallCmd is mnemos hook install AGENT.
type HookInstallCmd struct {
	Agent     string        `arg:"" enum:"claude-code,codex,gemini,cursor,copilot,amp" help:"The agent: claude-code, codex, gemini, cursor, copilot or amp."`
	Project   bool          `help:"Write the project's settings (in the workspace of the current directory), shared with whoever uses the project, instead of yours."`
	DryRun    bool          `name:"dry-run" aliases:"print" help:"Print what would change; write nothing."`
	Hold      time.Duration `help:"Pass --hold to the hook: when a person must approve and the agent cannot ask, wait this long for an answer from another channel."`
	NoRewrite bool          `name:"no-rewrite" help:"Pass --no-rewrite to the hook: allowed commands run as the agent runs them, not under mnemos run."`
}

// Run writes the agent's settings.
func (c *HookInstallCmd) Run(a *app) error {
	agent, _ := hook.Lookup(c.Agent)
	loc, err := a.hookLocations(c.Project)
	if err != nil {
		return err
	}
	exe, err := selfPath()
	if err != nil {
		return &exitError{code: exitFailure, msg: "cannot find this program's path: " + err.Error()}
	}
	if tmp := inTemp(exe); tmp != "" || strings.Contains(exe, "go-build") {
		fmt.Fprintf(a.io.err, "mnemos: warning: %s is a temporary build; the agent's hook will stop working when it is removed\n", exe)
		fmt.Fprintln(a.io.err, "mnemos: hint: install mnemos first (go install, or copy it to a directory on PATH), then run this again")
	}
	words := []string{exe, "hook", agent.Name}
	if c.Hold > 0 {
		words = append(words, "--hold", c.Hold.String())
	}
	if c.NoRewrite {
		words = append(words, "--no-rewrite")
	}
	e := hook.Entry{Command: hook.QuoteLine(words...), Timeout: max(60*time.Second, c.Hold+30*time.Second), Project: c.Project}
	plan, err := agent.Install(loc, e, os.ReadFile)
	if err != nil {
		return hookConfigError(err)
	}
	if err := a.applyPlan(plan, c.DryRun); err != nil {
		return err
	}
	if len(plan.Changes) > 0 || c.DryRun {
		for _, n := range plan.Notes {
			fmt.Fprintf(a.io.out, "note: %s\n", n)
		}
	}
	if !c.DryRun {
		fmt.Fprintf(a.io.out, "check it with: mnemos hook doctor %s\n", agent.Name)
	}
	return nil
}

// HookUninstallCmd is mnemos hook uninstall AGENT.
type HookUninstallCmd struct {
	Agent   string `arg:"" enum:"claude-code,codex,gemini,cursor,copilot,amp" help:"The agent."`
	Project bool   `help:"Edit the project's settings instead of yours."`
	DryRun  bool   `name:"dry-run" aliases:"print" help:"Print what would change; write nothing."`
}

// Run removes mnemos's entries.
func (c *HookUninstallCmd) Run(a *app) error {
	agent, _ := hook.Lookup(c.Agent)
	loc, err := a.hookLocations(c.Project)
	if err != nil {
		return err
	}
	plan, err := agent.Uninstall(loc, c.Project, os.ReadFile)
	if err != nil {
		return hookConfigError(err)
	}
	return a.applyPlan(plan, c.DryRun)
}

func (a *app) hookLocations(project bool) (hook.Locations, error) {
	p, err := a.paths()
	if err != nil {
		return hook.Locations{}, err
	}
	loc := hook.Locations{Home: a.userHome(), Getenv: a.getenv, MnemosConfig: p.ConfigDir}
	if cwd, err := os.Getwd(); err == nil {
		loc.Project = gate.Workspace(cwd)
	}
	if project && loc.Project == "" {
		return loc, &exitError{code: exitUsage, msg: "cannot read the current directory"}
	}
	return loc, nil
}

// hookConfigError makes a settings file mnemos cannot edit a
// configuration error (exit 78) naming the place.
func hookConfigError(err error) error {
	var ce *hook.ConfigError
	if errors.As(err, &ce) {
		return &exitError{code: exitConfig, msg: ce.Error(), hint: "fix the file (or move it aside), then run this again; nothing was written"}
	}
	return &exitError{code: exitFailure, msg: err.Error()}
}

// applyPlan prints each change as a diff and, unless dryRun, writes it,
// keeping a copy of the file as it was next to it.
func (a *app) applyPlan(p hook.Plan, dryRun bool) error {
	for _, f := range p.Unchanged {
		fmt.Fprintf(a.io.out, "unchanged: %s\n", f)
	}
	for _, ch := range p.Changes {
		verb := "wrote"
		switch {
		case dryRun:
			verb = "would write"
		case ch.After == nil:
			verb = "removed"
		case ch.Before == nil:
			verb = "created"
		}
		if dryRun && ch.After == nil {
			verb = "would remove"
		}
		fmt.Fprintf(a.io.out, "%s %s\n", verb, ch.Path)
		io.WriteString(a.io.out, lineDiff(string(ch.Before), string(ch.After)))
		if dryRun {
			continue
		}
		if ch.Before != nil {
			backup := ch.Path + ".mnemos-backup"
			if err := os.WriteFile(backup, ch.Before, 0o600); err != nil {
				return &exitError{code: exitConfig, msg: "cannot keep a copy of " + ch.Path + ": " + err.Error(), hint: "nothing was changed"}
			}
			fmt.Fprintf(a.io.out, "  (the file as it was: %s)\n", backup)
		}
		if ch.After == nil {
			if err := os.Remove(ch.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return &exitError{code: exitConfig, msg: err.Error()}
			}
			continue
		}
		mode := ch.Mode
		if fi, err := os.Stat(ch.Path); err == nil {
			mode = fi.Mode().Perm() | mode&0o111
		}
		if err := gate.WriteFileAtomic(ch.Path, ch.After, mode); err != nil {
			return &exitError{code: exitConfig, msg: "cannot write " + ch.Path + ": " + err.Error()}
		}
	}
	if dryRun {
		fmt.Fprintln(a.io.out, "nothing written (--dry-run)")
	}
	return nil
}

// lineDiff shows what changes between two texts, line by line: removed
// lines with "-", added ones with "+", a few unchanged ones around them.
func lineDiff(before, after string) string {
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	}
	x, y := split(before), split(after)
	// Longest common subsequence, on lines: the files are small.
	n, m := len(x), len(y)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
	}
	var ops []line
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, line{' ', x[i]})
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, line{'+', y[j]})
			j++
		default:
			ops = append(ops, line{'-', x[i]})
			i++
		}
	}
	const context = 2
	var b strings.Builder
	last := -1
	for k, o := range ops {
		near := false
		for d := max(0, k-context); d <= min(len(ops)-1, k+context); d++ {
			if ops[d].op != ' ' {
				near = true
				break
			}
		}
		if !near {
			continue
		}
		if last >= 0 && k > last+1 {
			b.WriteString("  ...\n")
		}
		fmt.Fprintf(&b, "%c %s\n", o.op, o.text)
		last = k
	}
	return b.String()
}

// DoctorCmd is mnemos hook doctor: is the protection people believe in
// there?
type DoctorCmd struct {
	JSON   bool     `name:"json" help:"Print one JSON object."`
	Agents []string `arg:"" optional:"" help:"The agents to check (default: every agent found on this machine or wired to mnemos)."`
}

type doctorCheck struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Hint   string `json:"hint,omitempty"`
	// Note marks a check that informs without failing.
	Note bool `json:"note,omitempty"`
}

type doctorAgent struct {
	Agent  string        `json:"agent"`
	Found  bool          `json:"found"`
	Wired  []hook.Wiring `json:"wired"`
	Checks []doctorCheck `json:"checks"`
}

type doctorReport struct {
	// Version is the version mnemos --version prints (build.Short).
	Version string        `json:"version"`
	Mnemos  string        `json:"mnemos"`
	Checks  []doctorCheck `json:"checks"`
	Agents  []doctorAgent `json:"agents"`
	OK      bool          `json:"ok"`
}

// Run checks mnemos itself, then each agent: wired, running this mnemos,
// and answering a destructive and a harmless command as it should, in
// the agent's own format, through the exact command the agent runs.
func (c *DoctorCmd) Run(a *app) error {
	rep := doctorReport{OK: true, Version: readBuild().Short()}
	exe, _ := selfPath()
	rep.Mnemos = exe
	add := func(list *[]doctorCheck, ck doctorCheck) {
		*list = append(*list, ck)
		if !ck.OK && !ck.Note {
			rep.OK = false
		}
	}
	for _, ck := range a.selfChecks() {
		add(&rep.Checks, ck)
	}
	loc, err := a.hookLocations(false)
	if err != nil {
		return err
	}
	names := c.Agents
	for _, n := range names {
		if _, ok := hook.Lookup(n); !ok {
			return &exitError{code: exitUsage, msg: fmt.Sprintf("unknown agent %q", n), hint: "agents: " + strings.Join(hook.Names(), ", ")}
		}
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	anyWired := false
	for _, agent := range hook.Agents() {
		asked := len(names) > 0 && containsString(names, agent.Name)
		if len(names) > 0 && !asked {
			continue
		}
		da := doctorAgent{Agent: agent.Name, Found: agent.Present(loc, exists)}
		wired, err := agent.Find(loc, os.ReadFile)
		da.Wired = wired
		if err != nil {
			add(&da.Checks, doctorCheck{Name: "settings", Detail: err.Error(), Hint: "fix the file; until then " + agent.Title + " may not run mnemos"})
		}
		if !da.Found && len(wired) == 0 && !asked {
			continue
		}
		if len(wired) == 0 {
			add(&da.Checks, doctorCheck{Name: "wired", Detail: "mnemos's hook is not in " + strings.Join(agent.Files(loc), " or "),
				Hint: "mnemos hook install " + agent.Name})
		}
		for _, w := range wired {
			anyWired = true
			for _, ck := range a.wiringChecks(agent, w, exe) {
				add(&da.Checks, ck)
			}
		}
		rep.Agents = append(rep.Agents, da)
	}
	if !anyWired && len(names) == 0 {
		add(&rep.Checks, doctorCheck{Name: "agents", Detail: "no agent runs mnemos's hook: nothing is protected",
			Hint: "mnemos hook install AGENT (" + strings.Join(hook.Names(), ", ") + ")"})
	}
	if c.JSON {
		if err := writeJSON(a.io.out, rep); err != nil {
			return err
		}
	} else {
		printDoctor(a.io.out, rep)
	}
	if !rep.OK {
		return quietExit(exitFailure)
	}
	return nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// selfChecks: the policy loads, the state opens, the audit log verifies,
// the sandbox keeps its promises.
func (a *app) selfChecks() []doctorCheck {
	var out []doctorCheck
	g, err := a.gate()
	if err != nil {
		return append(out, doctorCheck{Name: "policy", Detail: errorText(err), Hint: "every hook answers with a block until the policy loads"})
	}
	p := g.Config().Policy
	out = append(out, doctorCheck{Name: "policy", OK: true, Detail: fmt.Sprintf("%s, level %s", p.Source, p.Level)})
	if st, err := g.Store(a.ctx); err != nil {
		out = append(out, doctorCheck{Name: "state", Detail: errorText(err), Hint: "check that the state directory is readable and writable"})
	} else {
		out = append(out, doctorCheck{Name: "state", OK: true, Detail: st.Path()})
	}
	paths := g.Config().Paths
	out = append(out, a.secretsChecks(paths, p)...)
	if rep, err := verifyAudit(paths.AuditFile, paths.AuditKey); err != nil {
		out = append(out, doctorCheck{Name: "audit", Detail: err.Error(), Hint: "see mnemos audit verify"})
	} else {
		out = append(out, doctorCheck{Name: "audit", OK: true, Detail: rep})
	}
	st := probeSandbox()
	missing := st.Missing()
	if len(missing) == 0 {
		out = append(out, doctorCheck{Name: "sandbox", OK: true, Detail: "keeps all 7 of its promises"})
	} else {
		var keys []string
		for _, m := range missing {
			keys = append(keys, m.Key)
		}
		out = append(out, doctorCheck{Name: "sandbox", Detail: fmt.Sprintf("keeps %d of its 7 promises; %s do not hold (%s)", 7-len(missing), strings.Join(keys, ", "), missing[0].Why),
			Hint: "mnemos sandbox status says what restores them; meanwhile hooks decide as for commands run outside the sandbox"})
	}
	return out
}

// secretsChecks: mnemos's secrets are in their directory, only the user
// can read it, nothing an older mnemos left is taken for them, and the
// channels' credential files are as private.
func (a *app) secretsChecks(paths gate.Paths, pol *policy.Policy) []doctorCheck {
	var out []doctorCheck
	switch {
	case a.settled.Postponed != "":
		out = append(out, doctorCheck{Name: "secrets", Detail: "still in the state directory: " + a.settled.Postponed,
			Hint: "stop the older mnemos serve, then run any mnemos command: the secrets move into " + a.settled.Dir})
	default:
		detail := paths.SecretsDir + " (only you can read it): the audit key, the state database, the hook tickets; the approvals page's sign-in lives in mnemos serve's memory only"
		if fi, err := os.Stat(paths.SecretsDir); err != nil {
			detail = paths.SecretsDir + " (made, mode 0700, when mnemos first writes a secret)"
		} else if fi.Mode().Perm()&0o077 != 0 {
			out = append(out, doctorCheck{Name: "secrets", Detail: fmt.Sprintf("%s is open to others (mode %04o)", paths.SecretsDir, fi.Mode().Perm()),
				Hint: "chmod 700 " + shellQuote([]string{paths.SecretsDir})})
			break
		}
		out = append(out, doctorCheck{Name: "secrets", OK: true, Detail: detail})
	}
	for _, f := range a.settled.Stale {
		out = append(out, doctorCheck{Name: "secrets", Detail: f + " was written by an older mnemos after its secrets moved; it is not used",
			Hint: "look at it, then remove it: mnemos reads " + paths.SecretsDir + " only"})
	}
	for _, f := range channelSecretFiles(pol, a.userHome()) {
		fi, err := os.Stat(f)
		if err != nil {
			continue
		}
		if fi.Mode().Perm()&0o077 != 0 {
			out = append(out, doctorCheck{Name: "secrets", Detail: fmt.Sprintf("%s, a channel's credential, is readable by others (mode %04o)", f, fi.Mode().Perm()),
				Hint: "chmod 600 " + shellQuote([]string{f})})
		}
		if dir := a.settled.Dir; dir != "" && !strings.HasPrefix(f, dir+string(os.PathSeparator)) {
			out = append(out, doctorCheck{Name: "secrets", Note: true, OK: true,
				Detail: f + ", a credential the policy names, lies outside mnemos's secrets directory (the guard keeps it from gated commands all the same)",
				Hint:   "move it into " + dir + " (mode 600) and change the policy's path"})
		}
	}
	return out
}

// channelSecretFiles are the credential files the policy names: the
// channels' tokens, passwords and signing keys, and a shared state's
// connection string.
func channelSecretFiles(pol *policy.Policy, home string) []string {
	if pol == nil {
		return nil
	}
	var out []string
	for _, c := range pol.Channels {
		if c.SecretFile != "" {
			out = append(out, c.SecretFile)
		}
		if c.Telegram != nil && c.Telegram.TokenFile != "" {
			out = append(out, c.Telegram.TokenFile)
		}
		if c.Email != nil && c.Email.PasswordFile != "" {
			out = append(out, c.Email.PasswordFile)
		}
	}
	if pg := pol.State.Postgres; pg != nil && pg.DSNFile != "" {
		out = append(out, pg.DSNPath(home))
	}
	return out
}

// wiringChecks: the entry runs this mnemos, covers the shell, fails
// closed where the agent can, and its exact command answers a
// destructive command with a block and a harmless one with an allow.
func (a *app) wiringChecks(agent *hook.Agent, w hook.Wiring, exe string) []doctorCheck {
	out, probe := wiringStatic(agent, w, exe)
	if probe {
		out = append(out, a.probe(agent, w))
	}
	return out
}

// wiringStatic is wiringChecks without running the hook command (mnemos
// status); probe says whether the entry is one the doctor's probe runs.
func wiringStatic(agent *hook.Agent, w hook.Wiring, exe string) (out []doctorCheck, probe bool) {
	where := w.File + " (" + w.Event
	if w.Matcher != "" {
		where += ", " + w.Matcher
	}
	where += ")"
	out = []doctorCheck{{Name: "wired", OK: true, Detail: where}}
	prog := w.Program
	switch {
	case prog == "":
		return append(out, doctorCheck{Name: "program", Detail: "the entry runs no mnemos program", Hint: "mnemos hook install " + agent.Name}), false
	case !filepath.IsAbs(prog):
		out = append(out, doctorCheck{Name: "program", Detail: prog + " is found on the agent's PATH, which may not be yours", Hint: "mnemos hook install " + agent.Name + " writes the absolute path", Note: true, OK: true})
	}
	if fi, err := os.Stat(prog); err != nil && filepath.IsAbs(prog) {
		return append(out, doctorCheck{Name: "program", Detail: prog + " does not exist: " + agent.Title + " runs nothing and lets every tool call through", Hint: "mnemos hook install " + agent.Name}), false
	} else if err == nil {
		if me, err := os.Stat(exe); err == nil && !os.SameFile(fi, me) {
			out = append(out, doctorCheck{Name: "program", Detail: "runs " + prog + ", not this mnemos (" + exe + ")", Hint: "mnemos hook install " + agent.Name + " (with the mnemos you mean)"})
		} else if err == nil {
			out = append(out, doctorCheck{Name: "program", OK: true, Detail: "runs this mnemos"})
		}
	}
	if w.Tools != nil {
		shell := map[string]string{"claude-code": "Bash", "codex": "Bash", "gemini": "run_shell_command", "amp": "Bash"}[agent.Name]
		if shell != "" && !containsString(w.Tools, shell) && agent.Name != "amp" {
			out = append(out, doctorCheck{Name: "tools", Detail: "the entry does not match " + shell + ": shell commands run unchecked", Hint: "mnemos hook install " + agent.Name})
		}
	}
	switch agent.Name {
	case "claude-code":
		if !w.FailClosed {
			out = append(out, doctorCheck{Name: "fail-closed", OK: true, Note: true, Detail: "the entry lacks onFailure: block: a hook that crashes or times out lets the tool call run", Hint: "mnemos hook install claude-code"})
		}
	case "cursor":
		if !w.FailClosed {
			out = append(out, doctorCheck{Name: "fail-closed", OK: true, Note: true, Detail: "the entry lacks failClosed: true", Hint: "mnemos hook install cursor"})
		}
	case "codex":
		out = append(out, doctorCheck{Name: "trust", OK: true, Note: true, Detail: "Codex runs the hook only once it is trusted: check /hooks in Codex after every change"})
	}
	if agent.Name == "cursor" && w.Event == "beforeReadFile" || agent.Name == "amp" && w.Matcher != "Bash" {
		return out, false
	}
	return out, true
}

// probe runs the entry's exact command, as the agent would, with a
// destructive and a harmless shell command in the agent's format.
func (a *app) probe(agent *hook.Agent, w hook.Wiring) doctorCheck {
	dir, err := os.MkdirTemp("", "mnemos-doctor-")
	if err != nil {
		return doctorCheck{Name: "answers", Detail: err.Error()}
	}
	defer os.RemoveAll(dir)
	home := a.userHome()
	bad, good := "rm -rf "+home, "ls"
	run := func(cmd string) (hook.Answer, error) {
		ctx, cancel := context.WithTimeout(a.ctx, 20*time.Second)
		defer cancel()
		return runHookCommand(ctx, agent, w, agent.Probe(cmd, dir, "mnemos-doctor"), dir)
	}
	ans, err := run(bad)
	if err != nil {
		return doctorCheck{Name: "answers", Detail: "the hook command did not run: " + err.Error(), Hint: "mnemos hook install " + agent.Name}
	}
	if got := agent.Read(ans); got != hook.Deny {
		return doctorCheck{Name: "answers", Detail: fmt.Sprintf("%s reads the answer to %q as %s, not a block (exit %d: %s)", agent.Title, bad, got, ans.Exit, oneLine(strings.TrimSpace(string(ans.Stdout)+" "+ans.Stderr))),
			Hint: "mnemos hook install " + agent.Name}
	}
	ans, err = run(good)
	if err != nil {
		return doctorCheck{Name: "answers", Detail: "the hook command did not run: " + err.Error()}
	}
	got := agent.Read(ans)
	if got != hook.Allow && got != hook.Ask {
		return doctorCheck{Name: "answers", Detail: fmt.Sprintf("%s reads the answer to %q as %s (exit %d: %s)", agent.Title, good, got, ans.Exit, oneLine(strings.TrimSpace(string(ans.Stdout)+" "+ans.Stderr))),
			Hint: "see why with: mnemos policy explain -- ls"}
	}
	how := string(got)
	if agent.Rewrite(ans) != "" {
		how += ", rewritten into mnemos run"
	}
	return doctorCheck{Name: "answers", OK: true, Detail: fmt.Sprintf("blocks %q; %s %q", bad, how, good)}
}

// verifyAudit checks the audit log's chain, as mnemos audit verify does.
func verifyAudit(path, key string) (string, error) {
	rep, err := audit.VerifyWith(path, audit.VerifyOptions{Key: key})
	if err != nil {
		return "", err
	}
	if !rep.OK {
		return "", fmt.Errorf("audit log %s: %s", path, rep.Problem)
	}
	return fmt.Sprintf("%d events, chain and anchor intact", rep.Lines), nil
}

// runHookCommand runs a hook entry's command as the agent runs it: the
// command line through a shell (Amp: the delegate program, with the
// tool's name in the environment), the payload on stdin.
func runHookCommand(ctx context.Context, agent *hook.Agent, w hook.Wiring, payload []byte, dir string) (hook.Answer, error) {
	var cmd *exec.Cmd
	env := os.Environ()
	if agent.Name == "amp" {
		cmd = exec.CommandContext(ctx, w.Command)
		env = append(env, "AGENT=amp", "AGENT_TOOL_NAME=Bash", "AMP_THREAD_ID=mnemos-doctor")
	} else {
		cmd = exec.CommandContext(ctx, "/bin/sh", "-c", w.Command)
	}
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = bytes.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	ans := hook.Answer{Stdout: out.Bytes(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		ans.Exit = ee.ExitCode()
		if ans.Exit < 0 {
			return ans, fmt.Errorf("killed (%v)", err)
		}
	default:
		return ans, err
	}
	return ans, nil
}

// selfPath is the path that runs this mnemos: the name it was started by,
// found on PATH (so a symbolic link that is upgraded keeps working), or
// the executable.
func selfPath() (string, error) {
	if arg := os.Args[0]; arg != "" {
		p := arg
		if !strings.Contains(arg, "/") {
			if lp, err := exec.LookPath(arg); err == nil {
				p = lp
			}
		}
		if abs, err := filepath.Abs(p); err == nil && strings.Contains(p, "/") {
			if fi, err := os.Stat(abs); err == nil && fi.Mode().IsRegular() {
				return abs, nil
			}
		}
	}
	return os.Executable()
}

func printDoctor(w io.Writer, rep doctorReport) {
	line := func(ck doctorCheck) {
		tag := "ok  "
		switch {
		case ck.Note:
			tag = "note"
		case !ck.OK:
			tag = "FAIL"
		}
		fmt.Fprintf(w, "  %s  %s: %s\n", tag, ck.Name, oneLine(ck.Detail))
		if ck.Hint != "" && (!ck.OK || ck.Note) {
			fmt.Fprintf(w, "        hint: %s\n", oneLine(ck.Hint))
		}
	}
	fmt.Fprintf(w, "mnemos %s (%s)\n", rep.Version, rep.Mnemos)
	for _, ck := range rep.Checks {
		line(ck)
	}
	for _, ag := range rep.Agents {
		a, _ := hook.Lookup(ag.Agent)
		found := "found"
		if !ag.Found {
			found = "not found on this machine"
		}
		fmt.Fprintf(w, "%s (%s): %s\n", ag.Agent, a.Title, found)
		for _, ck := range ag.Checks {
			line(ck)
		}
	}
	if rep.OK {
		fmt.Fprintln(w, "protection is active")
	} else {
		fmt.Fprintln(w, "protection is NOT fully active: every agent runs a tool call its hook fails to answer")
	}
}
