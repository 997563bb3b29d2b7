package policy

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// Input is one simple command to decide, with who asks and where.
type Input struct {
	Command   shellparse.Command
	Place     classify.Place
	Workspace string
	Level     Level
	Channel   string
	Sender    string
	Session   string
	Now       time.Time
	// Cwd is the working directory the request came from (the field cwd of
	// condition rules); when empty, the first of Place.Dirs.
	Cwd string
	// Reason is the agent's stated intent: the field context.reason.
	Reason string
	// Context and Scope are the request's other facts, read by the fields
	// context.KEY and scope.KEY (nested maps for longer dot paths).
	Context map[string]any
	Scope   map[string]any
	// Pins gives the pin of a command, which a rule remembered on
	// approval compares with its own (Rule.Pin); nil matches no pinned
	// rule.
	Pins PinSource
	// Sandbox says how the commands will run (the field sandbox); the zero
	// value is Unsandboxed. Writable are the trees the sandbox lets them
	// write (the workspace, the temp directories): a contained command
	// writes nowhere else.
	Sandbox  RunSandbox
	Writable []string
	// Journaled says the journal keeps what the request's commands change
	// in the workspace (the policy turns it on, the kernel can trap the
	// changes, and the commands run under the sandbox): only then is a
	// command contained work (the field sandbox), and an undoable rule
	// lets it run (Rule.Undoable). The zero value is off.
	Journaled bool

	// joined caches the argv and args fields, built on first use: every
	// condition rule over them reads the same text.
	joined [2]joinedText
	// costs is the policy whose costs: section the field cost reads.
	costs *Policy
}

type joinedText struct {
	text     string
	dyn, set bool
}

// PinSource computes a command's pin: a digest of what it runs besides
// its words (the program PATH finds, the script it runs, the environment
// variables that change what runs). The gate computes it, since policy
// never looks at the filesystem; policy only compares.
type PinSource interface {
	Pin(cmd shellparse.Command) string
}

// AccessResult is one access with its table cell and the grant that
// covered it, if one was consulted and found.
type AccessResult struct {
	classify.Access
	Cell  Cell   `json:"cell"`
	Grant *Grant `json:"grant,omitempty"`
	// Cost is an llm:online access's estimated cost per call from the
	// costs: section (nil when none matches).
	Cost *float64 `json:"cost,omitempty"`
}

// RuleRef names the rule that matched.
type RuleRef struct {
	Name   string  `json:"name"`
	Action Outcome `json:"action"`
	Pos    Pos     `json:"pos"`
	// Layer is the layer of a stack built by Merge the rule comes from.
	Layer Layer `json:"layer,omitempty"`
	// Profile is the profile the rule belongs to, if any.
	Profile string `json:"profile,omitempty"`
	// Remembered: the rule was remembered on approval (it carries a pin).
	Remembered bool `json:"remembered,omitempty"`
}

func ruleRef(r *Rule, l Layer) *RuleRef {
	return &RuleRef{Name: r.Name, Action: r.Action, Pos: r.Pos, Layer: l, Profile: r.profile, Remembered: r.Pin != ""}
}

// GrantQuery is one grant lookup made while deciding a command.
type GrantQuery struct {
	Capability classify.Capability `json:"capability"`
	Target     string              `json:"target"`
	Found      bool                `json:"found"`
	GrantID    int64               `json:"grant_id,omitempty"`
}

// Decided says which stage settled a command's outcome.
type Decided string

// Stages that settle an outcome.
const (
	ByRule     Decided = "rule"
	ByTable    Decided = "table"
	ByGrant    Decided = "grant"
	ByDefaults Decided = "defaults"
	ByFloor    Decided = "floor"
)

// Result is the policy's outcome for one command, with its explanation.
type Result struct {
	Outcome       Outcome        `json:"outcome"`
	DecidedBy     Decided        `json:"decided_by"`
	Reason        string         `json:"reason"`
	Rule          *RuleRef       `json:"rule,omitempty"`
	Cell          Cell           `json:"cell"`
	Accesses      []AccessResult `json:"accesses"`
	Verb          string         `json:"verb"`
	Reversibility string         `json:"reversibility"`
	// Sandbox holds the sandbox: overrides of the rules that matched the
	// command (one at most for a single file; see SandboxFor).
	Sandbox []SandboxOverride `json:"sandbox,omitempty"`
	// Consulted are the grant lookups made, in order (none when the
	// outcome was settled by rules and the table).
	Consulted []GrantQuery `json:"grants_consulted,omitempty"`
	// ReliesOnSandbox is set when the rule that matched reads the field
	// sandbox (the default "contained work" rule does): the outcome holds
	// only while the request runs as Input.Sandbox said.
	ReliesOnSandbox bool `json:"relies_on_sandbox,omitempty"`
	// Contained says the command is contained work (the field sandbox is
	// "contained"): under the sandbox, offline, staying inside it.
	Contained bool `json:"contained,omitempty"`
	// RuleByWords says the rule that matched names no capability, target
	// or cost: it is about the command's words (git status), not about
	// what the shell writes for it.
	RuleByWords bool `json:"rule_by_words,omitempty"`
	// Undoable names the undoable rule (Rule.Undoable) that matched and
	// did not apply as written, the journal keeping what the command
	// changes: the command drops work that only `mnemos undo` brings
	// back.
	Undoable string `json:"undoable,omitempty"`
}

// Evaluate applies rules, the level × capability table and grants to one
// command (design.md, "The decision model", steps 2–4). grants may be nil;
// it is consulted only when the outcome would otherwise be ask because of
// the table or an ask rule, so a decision settled by rules and the table
// opens no database. A grant never lifts denied, and never covers a
// capability whose default approval is always.
func (p *Policy) Evaluate(ctx context.Context, in Input, grants GrantChecker) (Result, error) {
	return p.evaluate(ctx, in, grants, nil)
}

// EvaluateClassified is Evaluate for a command already classified: cl
// must be Classify(in.Command, in.Place). A caller deciding one command
// under several policies classifies it once.
func (p *Policy) EvaluateClassified(ctx context.Context, in Input, cl classify.Classification, grants GrantChecker) (Result, error) {
	return p.evaluateClassified(ctx, in, cl, grants, nil)
}

// evaluate is Evaluate, recording the rules considered in tr when it is
// not nil.
func (p *Policy) evaluate(ctx context.Context, in Input, grants GrantChecker, tr *tracer) (Result, error) {
	cl, expanded := classify.ClassifyExpanded(in.Command, in.Place)
	return p.evaluateExpanded(ctx, in, expanded, cl, grants, tr)
}

func (p *Policy) evaluateClassified(ctx context.Context, in Input, cl classify.Classification, grants GrantChecker, tr *tracer) (Result, error) {
	expanded, _ := classify.ExpandOptions(in.Command)
	return p.evaluateExpanded(ctx, in, expanded, cl, grants, tr)
}

// evaluateExpanded is evaluateClassified with the command's options
// written out (classify.ExpandOptions).
func (p *Policy) evaluateExpanded(ctx context.Context, in Input, expanded shellparse.Command, cl classify.Classification, grants GrantChecker, tr *tracer) (Result, error) {
	// in is this call's copy: what an earlier command cached in the
	// caller's Input is not this command's.
	in.joined = [2]joinedText{}
	in.costs = p
	// Rules read argv as the program does: an abbreviated long option
	// written out in full (git reset --har matches a rule on --hard).
	in.Command = expanded
	res := Result{Verb: cl.Verb, Reversibility: cl.Reversibility, Cell: Allowed}
	if len(cl.Accesses) > 0 {
		res.Accesses = make([]AccessResult, len(cl.Accesses))
		for i, a := range cl.Accesses {
			c := Table(in.Level, a.Capability)
			res.Accesses[i] = AccessResult{Access: a, Cell: c}
			if v, ok := p.EstimateCost(a); ok {
				cost := v // only an estimated access's cost is allocated
				res.Accesses[i].Cost = &cost
			}
			res.Cell = stricterCell(res.Cell, c)
		}
	}
	var rule *Rule
	layer, shell := p.Layer, p.Shell
	filter := verdict{outcome: Allow}
	if len(p.layers) == 0 {
		rule = p.firstMatch(&in, &cl, tr)
		if rule != nil {
			res.Rule = ruleRef(rule, p.Layer)
			if rule.Sandbox != nil {
				res.Sandbox = []SandboxOverride{{Rule: rule.Name, Layer: p.Layer, Profile: rule.profile, Config: *rule.Sandbox}}
			}
		}
	} else {
		rule, layer, filter = p.stackMatch(&in, &cl, &res, tr)
		shell = p.upperShell
	}
	res.ReliesOnSandbox = rule != nil && rule.ReliesOnSandbox()
	res.RuleByWords = rule != nil && rule.byWords()
	res.Contained = in.Journaled && in.Sandbox == SandboxedOffline && Contained(&cl, in.Writable)
	res.Outcome, res.DecidedBy, res.Reason = combine(&in, &cl, rule, layer, shell, res.Cell)
	if rule != nil && p.undoes(rule, &in, &cl) {
		res.Outcome, res.DecidedBy, res.Reason = combineUndoable(&in, &cl, rule, layer, res.Cell)
		if res.Outcome != Deny {
			res.Undoable = rule.Name
		}
	}
	askRule := rule != nil
	if filter.outcome != Allow {
		// The project layer only restricts (see Merge).
		askRule = askRule || filter.rule != nil
		if filter.outcome.Restrictiveness() > res.Outcome.Restrictiveness() {
			res.Outcome, res.DecidedBy, res.Reason = filter.outcome, filter.by, filter.reason
			res.Rule = nil
			if filter.rule != nil {
				res.Rule = ruleRef(filter.rule, LayerProject)
			}
		}
	}

	if res.Outcome == Ask && (rule == nil || rule.Action == Ask || len(p.layers) > 0) && grants != nil {
		covered, err := p.cover(ctx, in, res.Accesses, grants, askRule, removesTargets(&cl), &res.Consulted)
		if err != nil {
			return Result{Outcome: Deny, DecidedBy: ByGrant, Reason: "cannot read grants: " + err.Error()}, err
		}
		if covered {
			res.Outcome, res.DecidedBy = Allow, ByGrant
			res.Reason = "an active grant covers " + describeGrants(res.Accesses)
		}
	}
	if cl.Floor.Restrictiveness() > res.Outcome.Restrictiveness() {
		res.Outcome, res.DecidedBy, res.Reason = cl.Floor, ByFloor, cl.FloorReason
	}
	return res, nil
}

// firstMatch is the first rule, in evaluation order, of the view of the
// request's identity (the file's rules, or a profile's with them) that
// matches the command.
func (p *Policy) firstMatch(in *Input, cl *classify.Classification, tr *tracer) *Rule {
	rules, ix, _ := p.view(in.Channel, in.Sender)
	if tr != nil {
		return tr.scan(rules, p.Layer, in, cl)
	}
	return matchIn(rules, ix, in, cl)
}

func stricterCell(a, b Cell) Cell {
	rank := func(c Cell) int {
		switch c {
		case Allowed:
			return 0
		case ApprovalRequired:
			return 1
		}
		return 2
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// combine is design.md's step 4 without grants.
func combine(in *Input, cl *classify.Classification, rule *Rule, layer Layer, shell Outcome, cell Cell) (Outcome, Decided, string) {
	if rule != nil && rule.Action == Deny {
		return Deny, ByRule, rule.reason(layer)
	}
	if cell == Denied {
		return Deny, ByTable, "level " + in.Level.String() + " does not permit " + deniedCaps(in.Level, cl)
	}
	if rule != nil && rule.Action == Ask {
		return Ask, ByRule, rule.reason(layer)
	}
	if rule != nil && rule.Action == Allow {
		return Allow, ByRule, rule.reason(layer)
	}
	if classify.HasCap(cl, classify.CodeExec) && shell != Ask {
		switch shell {
		case Deny:
			return Deny, ByDefaults, "defaults.shell is deny and no rule allows this command"
		case Allow:
			return Allow, ByDefaults, "defaults.shell is allow"
		}
	}
	if cell == Allowed {
		return Allow, ByTable, "level " + in.Level.String() + " allows " + capList(cl)
	}
	why := "level " + in.Level.String() + " needs approval for " + approvalCaps(in.Level, cl)
	if cl.Floor == classify.Ask && cl.FloorReason != "" {
		// The command would ask whatever the table said: say why, for
		// the card (reads commands from its terminal: ...).
		why += "; " + cl.FloorReason
	}
	return Ask, ByTable, why
}

// cover reports whether grants cover every access that needs approval: the
// approval_required ones, or, under an ask rule (all), every access whose
// capability is not approval-free.
// reasonLabel names a rule in a reason: rule "x", with its layer and
// profile when it has them.
func reasonLabel(r *Rule, layer Layer) string {
	s := "rule " + strconv.Quote(r.Name)
	if layer != "" {
		s = string(layer) + " " + s
	}
	if r.profile != "" {
		s += " (profile " + strconv.Quote(r.profile) + ")"
	}
	return s
}

// actionReason is what a rule with action a does, after its label.
func actionReason(a Outcome) string {
	switch a {
	case Deny:
		return " denies it"
	case Ask:
		return " asks first"
	}
	return " allows it"
}

// ruleReasons are the reasons a parsed rule gives, one for each layer it
// may sit in, built once by Parse. They stand only while the rule keeps
// the name, profile and action they were built from.
type ruleReasons struct {
	name, profile string
	action        Outcome
	byLayer       [4]string
}

// reasonLayers are the layers ruleReasons.byLayer holds, in order.
var reasonLayers = [4]Layer{"", LayerSystem, LayerUser, LayerProject}

func newRuleReasons(r *Rule) *ruleReasons {
	m := &ruleReasons{name: r.Name, profile: r.profile, action: r.Action}
	for i, l := range reasonLayers {
		m.byLayer[i] = reasonLabel(r, l) + actionReason(r.Action)
	}
	return m
}

// reason is the reason the rule gives for its action in layer: for
// example `user rule "x" denies it`.
func (r *Rule) reason(layer Layer) string {
	if m := r.reasons; m != nil && m.name == r.Name && m.profile == r.profile && m.action == r.Action {
		for i, l := range reasonLayers {
			if l == layer {
				return m.byLayer[i]
			}
		}
	}
	return reasonLabel(r, layer) + actionReason(r.Action)
}

func (p *Policy) cover(ctx context.Context, in Input, acc []AccessResult, grants GrantChecker, all, removes bool, consulted *[]GrantQuery) (bool, error) {
	any := false
	for i := range acc {
		a := &acc[i]
		if a.Cell == Denied {
			return false, nil
		}
		spec, err := Lookup(a.Capability)
		if err != nil {
			return false, nil
		}
		if spec.DefaultApproval == ApprovalNone || (a.Cell == Allowed && !all) {
			continue
		}
		if spec.DefaultApproval == ApprovalAlways || a.Dynamic || a.Target == "" {
			return false, nil
		}
		target := a.Target
		if removes && a.Capability == classify.FSWrite {
			target = removalTarget(target)
		}
		g, ok, err := grants.CoveringGrant(ctx, in.Channel, in.Sender, a.Capability, target, in.Session, in.Now)
		if err != nil {
			return false, err
		}
		if ok && removes && a.Capability == classify.FSWrite && !coversRemoval(g.Target) {
			ok = false
		}
		q := GrantQuery{Capability: a.Capability, Target: target, Found: ok}
		if ok {
			q.GrantID = g.ID
		}
		*consulted = append(*consulted, q)
		if !ok {
			return false, nil
		}
		a.Grant = &g
		any = true
	}
	return any, nil
}

func argvHasPrefix(cmd shellparse.Command, prefix []string) bool {
	if cmd.Dynamic || len(cmd.Argv) < len(prefix) {
		return false
	}
	for i, want := range prefix {
		w := cmd.Argv[i]
		if w.Dynamic {
			return false
		}
		got := w.Value
		if i == 0 && !strings.Contains(want, "/") {
			got = path.Base(got)
		}
		if got != want {
			return false
		}
	}
	return true
}

// capsWhere lists the capabilities of the command that keep holds for,
// each once, in order of first access.
func capsWhere(cl *classify.Classification, keep func(classify.Capability) bool) string {
	var buf [8]string
	names := buf[:0]
	for _, a := range cl.Accesses {
		if !slices.Contains(names, string(a.Capability)) && keep(a.Capability) {
			names = append(names, string(a.Capability))
		}
	}
	if len(names) == 0 {
		return "this command"
	}
	return strings.Join(names, ", ")
}

func capList(cl *classify.Classification) string {
	return capsWhere(cl, func(classify.Capability) bool { return true })
}

func deniedCaps(l Level, cl *classify.Classification) string {
	return capsWhere(cl, func(c classify.Capability) bool { return Table(l, c) == Denied })
}

func approvalCaps(l Level, cl *classify.Classification) string {
	return capsWhere(cl, func(c classify.Capability) bool { return Table(l, c) == ApprovalRequired })
}

func describeGrants(acc []AccessResult) string {
	var parts []string
	for _, a := range acc {
		if a.Grant != nil {
			parts = append(parts, fmt.Sprintf("%s on %s (grant %d)", a.Capability, a.Target, a.Grant.ID))
		}
	}
	return strings.Join(parts, ", ")
}
