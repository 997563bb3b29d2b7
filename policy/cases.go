package policy

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mnemos-dev/mnemos/classify"
)

// Case is one test case of a policy test file: a request and the decision
// the policy must reach for it.
//
//	cases:
//	  - name: reading the workspace runs       # optional; default the command
//	    command: git status                    # a shell command line (bash)
//	    level: supervised                      # default: the policy's level
//	    channel: cli                           # default cli
//	    sender: user                           # default user
//	    cwd: /home/user/project                # default ExampleCwd
//	    reason: check the tree                 # context.reason
//	    context: {ticket: {id: 42}}            # other context.* fields, nested
//	    scope: {max_amount: 500}               # scope.* fields, nested
//	    sandbox: offline                       # how it runs: offline (default: under mnemos run's
//	                                           # sandbox, no network), sandboxed (with network) or
//	                                           # unsandboxed (a hook runs it itself)
//	    journal: on                            # on (default: the policy's journal: enabled, for a
//	                                           # sandboxed run) or off (no journal keeps its changes)
//	    grants:                                # active grants, for this channel and sender
//	      - {capability: fs:write, target: "/home/user/project/**"}
//	    want: allow                            # allow, ask or deny
//	    rule: git status                       # optional: the first matching rule ("" for none)
//	    decided_by: rule                       # optional: rule, table, grant, defaults, floor or parse
type Case struct {
	Name      string
	Command   string
	Level     *Level
	Channel   string
	Sender    string
	Session   string
	Cwd       string
	Home      string
	Workspace string
	Reason    string
	Context   map[string]any
	Scope     map[string]any
	Grants    []Grant
	// Sandbox is how the command runs; a case that does not say runs as
	// mnemos run runs it (SandboxedOffline).
	Sandbox RunSandbox
	// Journal, when set, says whether the journal keeps what the command
	// changes; unset, it does when the policy enables it and the command
	// runs under the sandbox.
	Journal *bool
	Want    Outcome
	// Rule, when set, is the expected first matching rule; "" expects none.
	Rule *string
	// DecidedBy, when set, is the expected deciding stage.
	DecidedBy Decided
	Pos       Pos
}

// ParseCases reads a policy test file. Errors carry FILE:LINE:COL; a file
// with no case is an error.
func ParseCases(name string, data []byte) ([]Case, error) {
	d := &decoder{file: name}
	root, err := d.document(data, policyDoc)
	if err != nil {
		return nil, err
	}
	d.check(root, 0, policyDoc)
	if len(d.errs) > 0 {
		return nil, d.sorted()[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, d.errAt(root, "expected a mapping with a cases: list")
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "cases" {
			return nil, d.errAt(k, fmt.Sprintf("unknown key %q (want cases)", k.Value))
		}
		list = v
	}
	if list == nil || list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		at := root
		if list != nil {
			at = list
		}
		return nil, d.errAt(at, "no test cases: write a cases: list with at least one case")
	}
	var out []Case
	for _, n := range list.Content {
		c, err := d.testCase(n)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func (d *decoder) testCase(n *yaml.Node) (Case, *Error) {
	c := Case{Pos: Pos{File: d.file, Line: n.Line, Col: n.Column}, Sandbox: SandboxedOffline}
	if n.Kind != yaml.MappingNode {
		return c, d.errAt(n, "expected a case (a mapping with command and want)")
	}
	hasWant := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "grants" {
			gs, err := d.caseGrants(v)
			if err != nil {
				return c, err
			}
			c.Grants = gs
			continue
		}
		if k.Value == "context" || k.Value == "scope" {
			x, err := d.plainValue(v)
			if err != nil {
				return c, err
			}
			m, ok := x.(map[string]any)
			if !ok {
				return c, d.errAt(v, k.Value+" must be a mapping, e.g. {ticket: 42}")
			}
			if k.Value == "context" {
				c.Context = m
			} else {
				c.Scope = m
			}
			continue
		}
		s, err := d.strict(v)
		if err != nil {
			return c, err
		}
		switch k.Value {
		case "name":
			c.Name = s
		case "command":
			c.Command = s
		case "level":
			l, perr := ParseLevel(s)
			if perr != nil {
				return c, d.errAt(v, perr.Error())
			}
			c.Level = &l
		case "channel":
			c.Channel = s
		case "sender":
			c.Sender = s
		case "session":
			c.Session = s
		case "cwd", "home", "workspace":
			if !path.IsAbs(s) {
				return c, d.errAt(v, fmt.Sprintf("%s %q must be an absolute path", k.Value, s))
			}
			switch k.Value {
			case "cwd":
				c.Cwd = path.Clean(s)
			case "home":
				c.Home = path.Clean(s)
			default:
				c.Workspace = path.Clean(s)
			}
		case "reason":
			c.Reason = s
		case "sandbox":
			switch s {
			case "offline":
				c.Sandbox = SandboxedOffline
			case SandboxSandboxed:
				c.Sandbox = Sandboxed
			case SandboxUnsandboxed:
				c.Sandbox = Unsandboxed
			default:
				return c, d.errAt(v, fmt.Sprintf("unknown sandbox %q (want offline, sandboxed or unsandboxed)", s))
			}
		case "journal":
			switch s {
			case "on", "off":
				on := s == "on"
				c.Journal = &on
			default:
				return c, d.errAt(v, fmt.Sprintf("unknown journal %q (want on or off)", s))
			}
		case "want":
			o, perr := classify.ParseOutcome(s)
			if perr != nil {
				return c, d.errAt(v, perr.Error())
			}
			c.Want, hasWant = o, true
		case "rule":
			c.Rule = &s
		case "decided_by":
			switch by := Decided(s); by {
			case ByRule, ByTable, ByGrant, ByDefaults, ByFloor, ByParse:
				c.DecidedBy = by
			default:
				return c, d.errAt(v, fmt.Sprintf("unknown stage %q (want rule, table, grant, defaults, floor or parse)", s))
			}
		default:
			return c, d.errAt(k, fmt.Sprintf("unknown key %q in case (want name, command, level, channel, sender, session, cwd, home, workspace, reason, sandbox, journal, context, scope, grants, want, rule or decided_by)", k.Value))
		}
	}
	if strings.TrimSpace(c.Command) == "" {
		return c, d.errAt(n, "case has no command")
	}
	if !hasWant {
		return c, d.errAt(n, "case has no want: (allow, ask or deny)")
	}
	if c.Name == "" {
		c.Name = c.Command
	}
	return c, nil
}

func (d *decoder) caseGrants(n *yaml.Node) ([]Grant, *Error) {
	if n.Kind != yaml.SequenceNode {
		return nil, d.errAt(n, "grants must be a list of {capability, target}")
	}
	var out []Grant
	for i, g := range n.Content {
		if g.Kind != yaml.MappingNode {
			return nil, d.errAt(g, "expected a grant {capability: ..., target: ...}")
		}
		gr := Grant{ID: int64(i + 1)}
		for j := 0; j+1 < len(g.Content); j += 2 {
			k, v := g.Content[j], g.Content[j+1]
			s, err := d.strict(v)
			if err != nil {
				return nil, err
			}
			switch k.Value {
			case "capability":
				if _, ok := lookupSpec(classify.Capability(s)); !ok {
					return nil, d.errAt(v, fmt.Sprintf("capability %q is not in the registry (see `mnemos policy registry`)", s))
				}
				gr.Capability = classify.Capability(s)
			case "target":
				gr.Target = s
			case "channel":
				gr.Channel = s
			case "sender":
				gr.Sender = s
			case "session":
				gr.Session = s
			default:
				return nil, d.errAt(k, fmt.Sprintf("unknown key %q in grant (want capability, target, channel, sender or session)", k.Value))
			}
		}
		if gr.Capability == "" || gr.Target == "" {
			return nil, d.errAt(g, "a grant needs a capability and a target")
		}
		out = append(out, gr)
	}
	return out, nil
}

// CaseResult is the outcome of running one case.
type CaseResult struct {
	Case Case
	Got  RequestResult
	// Problems is empty when the case passed.
	Problems []string
}

// Pass reports whether the case got what it wanted.
func (r CaseResult) Pass() bool { return len(r.Problems) == 0 }

// RunCase evaluates a case's request with the policy alone (no guard, no
// judge) and its grants held in memory, at time now.
func (p *Policy) RunCase(ctx context.Context, c Case, now time.Time) (CaseResult, error) {
	req := Request{Script: c.Command, Cwd: c.Cwd, Home: c.Home, Workspace: c.Workspace,
		Channel: c.Channel, Sender: c.Sender, Session: c.Session, Reason: c.Reason, Context: c.Context, Scope: c.Scope, Now: now,
		Sandbox: c.Sandbox, Journaled: p.Journal.On}
	if c.Journal != nil {
		req.Journaled = *c.Journal
	}
	if req.Cwd == "" {
		req.Cwd = ExampleCwd
	}
	if req.Home == "" {
		req.Home = ExampleHome
	}
	if req.Workspace == "" {
		req.Workspace = req.Cwd
		if classify.Within(ExampleCwd, req.Cwd) {
			req.Workspace = ExampleCwd
		}
	}
	if req.Channel == "" {
		req.Channel = "cli"
	}
	if req.Sender == "" {
		req.Sender = "user"
	}
	req.Level = p.LevelFor(req.Channel, req.Sender)
	if c.Level != nil {
		req.Level = *c.Level
	}
	grants := make(GrantList, len(c.Grants))
	for i, g := range c.Grants {
		if g.Channel == "" {
			g.Channel = req.Channel
		}
		if g.Sender == "" {
			g.Sender = req.Sender
		}
		grants[i] = g
	}
	got, err := p.EvaluateRequest(ctx, req, grants)
	if err != nil {
		return CaseResult{Case: c, Got: got}, err
	}
	res := CaseResult{Case: c, Got: got}
	if got.Outcome != c.Want {
		res.Problems = append(res.Problems, fmt.Sprintf("got %s, want %s", got.Outcome, c.Want))
	}
	if c.Rule != nil {
		name := ""
		if got.Rule != nil {
			name = got.Rule.Name
		}
		if name != *c.Rule {
			res.Problems = append(res.Problems, fmt.Sprintf("rule %s, want %s", ruleLabel(name), ruleLabel(*c.Rule)))
		}
	}
	if c.DecidedBy != "" && got.DecidedBy != c.DecidedBy {
		res.Problems = append(res.Problems, fmt.Sprintf("decided by %s, want %s", got.DecidedBy, c.DecidedBy))
	}
	return res, nil
}

func ruleLabel(name string) string {
	if name == "" {
		return "none"
	}
	return fmt.Sprintf("%q", name)
}
