package policy

import (
	"context"
	"fmt"
	"path"
	"time"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// Where example commands (a rule's match and not_match lists) run: the
// user's home and the working directory, which is also the workspace.
const (
	ExampleHome = "/home/user"
	ExampleCwd  = "/home/user/project"
)

// Request is a whole request to decide with the policy alone: a script,
// where it runs and who asks. It is what `mnemos policy test` evaluates;
// the guard and the judge, which the gate adds, are not part of it.
type Request struct {
	Script string
	// Cwd is the working directory (absolute); Home the user's home.
	Cwd, Home string
	// Workspace defaults to Cwd.
	Workspace string
	Level     Level
	Channel   string
	Sender    string
	Session   string
	Reason    string
	Context   map[string]any
	Scope     map[string]any
	Now       time.Time
	// Sandbox says how the commands run (the field sandbox); Writable the
	// trees the sandbox lets them write, by default the workspace and /tmp.
	Sandbox  RunSandbox
	Writable []string
	// Journaled says the journal keeps what the commands change in the
	// workspace (Input.Journaled); it holds only for a sandboxed run.
	Journaled bool
}

// CommandResult is the policy's result for one command of a request.
type CommandResult struct {
	Command shellparse.Command `json:"command"`
	Result  Result             `json:"result"`
}

// RequestResult is the policy's outcome for a whole request: the most
// restrictive outcome of its commands, and the first command that has it.
type RequestResult struct {
	Outcome   Outcome         `json:"outcome"`
	DecidedBy Decided         `json:"decided_by"`
	Reason    string          `json:"reason"`
	Rule      *RuleRef        `json:"rule,omitempty"`
	Commands  []CommandResult `json:"commands"`
}

// ByParse is a request whose script does not parse: it is denied.
const ByParse Decided = "parse"

// EvaluateRequest parses the request's script as the gate does (bash
// dialect, ~ and $HOME known) and evaluates every command it would run.
// A script that does not parse, or holds no command, is denied.
func (p *Policy) EvaluateRequest(ctx context.Context, req Request, grants GrantChecker) (RequestResult, error) {
	res := RequestResult{Outcome: Deny, DecidedBy: ByParse}
	script, err := shellparse.ParseScript(req.Script, shellparse.Env{Home: req.Home, Cwd: req.Cwd})
	if err != nil {
		res.Reason = "cannot parse the command: " + err.Error()
		return res, nil
	}
	if len(script.Commands) == 0 {
		res.Reason = "no command found"
		return res, nil
	}
	ws := req.Workspace
	if ws == "" {
		ws = req.Cwd
	}
	pl := classify.PlaceOf(script, req.Cwd, req.Home)
	pl.Workspace = ws
	// Under mnemos run, the programs that read commands from a terminal
	// start in their secure modes (classify.TerminalEnv).
	pl.TerminalEnv = req.Sandbox != Unsandboxed && classify.TerminalEnvKept(script.Commands)
	writable := req.Writable
	if writable == nil {
		writable = []string{ws, "/tmp"}
	}
	in := Input{Place: pl, Workspace: ws, Level: req.Level, Channel: req.Channel,
		Sender: req.Sender, Session: req.Session, Now: req.Now, Cwd: req.Cwd, Reason: req.Reason,
		Context: req.Context, Scope: req.Scope, Sandbox: req.Sandbox, Writable: writable,
		Journaled: req.Journaled && req.Sandbox != Unsandboxed}
	for _, c := range script.Commands {
		in.Command = c
		r, err := p.Evaluate(ctx, in, grants)
		if err != nil {
			return RequestResult{Outcome: Deny, DecidedBy: ByGrant, Reason: r.Reason}, err
		}
		res.Commands = append(res.Commands, CommandResult{Command: c, Result: r})
	}
	// A command allowed because it was contained is not, when the run's
	// sandbox reaches the network for another command (as the gate does).
	if in.Sandbox == SandboxedOffline && reliesOnSandbox(res.Commands) && p.SandboxFor(commandResults(res.Commands)).HasNetwork() {
		in.Sandbox = Sandboxed
		for i := range res.Commands {
			if !res.Commands[i].Result.ReliesOnSandbox {
				continue
			}
			in.Command = res.Commands[i].Command
			r, err := p.Evaluate(ctx, in, grants)
			if err != nil {
				return RequestResult{Outcome: Deny, DecidedBy: ByGrant, Reason: r.Reason}, err
			}
			res.Commands[i].Result = r
		}
	}
	worst := -1
	for i, c := range res.Commands {
		if worst < 0 || c.Result.Outcome.Restrictiveness() > res.Commands[worst].Result.Outcome.Restrictiveness() {
			worst = i
		}
	}
	w := res.Commands[worst].Result
	res.Outcome, res.DecidedBy, res.Reason, res.Rule = w.Outcome, w.DecidedBy, w.Reason, w.Rule
	return res, nil
}

// GrantList is an in-memory GrantChecker: the grants of a test case. A
// revoked grant, an expired one, or one bound to another session covers
// nothing.
type GrantList []Grant

// CoveringGrant returns the first grant in the list that covers target.
func (l GrantList) CoveringGrant(_ context.Context, channel, sender string, c classify.Capability, target, session string, now time.Time) (Grant, bool, error) {
	for _, g := range l {
		switch {
		case g.Channel != channel, g.Sender != sender, g.Capability != c, g.RevokedAt != nil,
			g.ExpiresAt != nil && !now.Before(*g.ExpiresAt), g.Session != "" && g.Session != session:
			continue
		}
		if MatchTarget(g.Target, target) {
			return g, true, nil
		}
	}
	return Grant{}, false, nil
}

// exampleDefaults are the level and identity of an example that does not
// give its own: the policy's level, cli and user, or a profile's.
type exampleDefaults struct {
	level           Level
	channel, sender string
	costs           *Policy // the costs: section the field cost reads
}

// checkExamples evaluates a rule on its match and not_match examples.
func checkExamples(r *Rule, def exampleDefaults) []*Error {
	var errs []*Error
	at := func(ex Example, msg string) {
		errs = append(errs, &Error{File: ex.Pos.File, Line: ex.Pos.Line, Col: ex.Pos.Col, Msg: msg})
	}
	for _, set := range []struct {
		list []Example
		want bool
	}{{r.Match, true}, {r.NotMatch, false}} {
		for _, ex := range set.list {
			got, err := exampleMatches(r, ex, def)
			switch {
			case err != nil:
				at(ex, fmt.Sprintf("example %q: %v", ex.Command, err))
			case got && !set.want:
				at(ex, fmt.Sprintf("rule %q matches %q, which is listed under not_match", r.Name, ex.Command))
			case !got && set.want:
				at(ex, fmt.Sprintf("rule %q does not match %q, which is listed under match", r.Name, ex.Command))
			}
		}
	}
	return errs
}

// exampleMatches reports whether the rule matches any command of the
// example, run in ExampleCwd (or the example's cwd) with ExampleHome.
func exampleMatches(r *Rule, ex Example, def exampleDefaults) (bool, error) {
	cwd := ex.Cwd
	if cwd == "" {
		cwd = ExampleCwd
	}
	cwd = path.Clean(cwd)
	script, err := shellparse.ParseScript(ex.Command, shellparse.Env{Home: ExampleHome, Cwd: cwd})
	if err != nil {
		return false, fmt.Errorf("does not parse: %w", err)
	}
	if len(script.Commands) == 0 {
		return false, fmt.Errorf("holds no command")
	}
	ws := cwd
	if classify.Within(ExampleCwd, cwd) {
		ws = ExampleCwd
	}
	level := def.level
	if ex.Level != nil {
		level = *ex.Level
	}
	ch, snd := ex.Channel, ex.Sender
	if ch == "" {
		ch = def.channel
	}
	if snd == "" {
		snd = def.sender
	}
	pl := classify.PlaceOf(script, cwd, ExampleHome)
	pl.Workspace = ws
	// An example is judged as mnemos run runs it.
	pl.TerminalEnv = classify.TerminalEnvKept(script.Commands)
	for _, c := range script.Commands {
		in := Input{Command: c, Place: pl, Workspace: ws, Level: level, Channel: ch, Sender: snd, Cwd: cwd, Reason: ex.Reason, costs: def.costs}
		in.Command, _ = classify.ExpandOptions(c)
		cl := classify.Classify(c, pl)
		if r.matches(&in, &cl) {
			return true, nil
		}
	}
	return false, nil
}

func reliesOnSandbox(cs []CommandResult) bool {
	for _, c := range cs {
		if c.Result.ReliesOnSandbox {
			return true
		}
	}
	return false
}

func commandResults(cs []CommandResult) []Result {
	out := make([]Result, len(cs))
	for i, c := range cs {
		out[i] = c.Result
	}
	return out
}
