package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
	"github.com/mnemos-dev/mnemos/shellparse"
	"github.com/mnemos-dev/mnemos/vaglio"
)

// Recorder appends audit events. A failure to record is a failure of the
// request: the gate never allows what it could not record.
type Recorder interface {
	Append(ctx context.Context, kind string, attrs ...slog.Attr) error
}

// Config is everything a Gate needs; nothing is read from globals.
type Config struct {
	Paths Paths
	// Policy is the configured policy (the user's file or the built-in
	// default).
	Policy *policy.Policy
	// Extra is a policy named by --policy or MNEMOS_POLICY. It can only make
	// a decision stricter: both are applied and the stricter result wins.
	Extra *policy.Policy
	// UserHome is the user's home directory (for ~ and $HOME).
	UserHome string
	// SelfNames are the names and paths that invoke mnemos itself.
	SelfNames []string
	// Vars are environment variables whose values the gated command will
	// see, known statically to the parser: those that locate mnemos's own
	// files (MNEMOS_HOME, XDG_CONFIG_HOME, ...) and the user's identity.
	// "$MNEMOS_HOME/policy.yaml" is then judged as the path it is.
	Vars  map[string]string
	Now   func() time.Time
	Rand  io.Reader
	Audit Recorder
	Log   *slog.Logger
	// Probe reports what the kernel's Landlock enforces; nil means
	// sandbox.Probe. Tests describe an older kernel with it.
	Probe func() sandbox.Status
	// Watch reports, from Probe's status, whether the kernel lets mnemos
	// trap what a confined command changes, so that the journal keeps it
	// (journaled.go); nil means it cannot, and the journal is off.
	Watch func(sandbox.Status) bool
	// Scorer, when set, is the model the llm-v1 judge asks, in place of
	// the endpoint the policy names (tests).
	Scorer Scorer
	// Getenv reads the environment variable the policy names for the
	// llm-v1 judge's key.
	Getenv func(string) string
	// Environ returns the environment the command inherits, judged with
	// it (envHazard, pathShadows); nil judges the command alone.
	Environ func() []string
	// VaglioLogFailed, when set, hears the first failure to write vaglio's
	// log (Paths.VaglioDir); the decision stands whatever it was.
	VaglioLogFailed func(error)
	// JudgeThreshold, from the environment (JudgeFromEnv), raises the
	// policies' judge threshold; below theirs it changes nothing.
	JudgeThreshold float64
	// JudgeKind, from the environment (JudgeFromEnv), chooses the judge
	// for this call: policy.JudgeRuleBased turns a model judge off,
	// policy.JudgeLLM turns on the one Policy.Judge names, if any.
	JudgeKind string
}

// Gate runs the pipeline for one process. It opens the state database only
// when a decision needs it.
type Gate struct {
	cfg   Config
	store approvals.Backend
	// logWarned is set once a failure to write vaglio's log was reported.
	logWarned atomic.Bool
	// status is what the kernel's sandbox enforces, probed once.
	status statusCache
	// secrets is stateSecrets, kept for the paths it was worked out from.
	secrets atomic.Pointer[stateSecretPaths]
}

// New returns a Gate. Config.Policy must be set.
func New(cfg Config) *Gate {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Probe == nil {
		cfg.Probe = sandbox.Probe
	}
	return &Gate{cfg: cfg}
}

// Config returns the gate's configuration.
func (g *Gate) Config() Config { return g.cfg }

// Store opens the state on first use: the SQLite file, or the shared
// database the policy's state: section names (openState).
func (g *Gate) Store(ctx context.Context) (approvals.Backend, error) {
	if g.store != nil {
		return g.store, nil
	}
	s, err := g.openState(ctx)
	if err != nil {
		return nil, err
	}
	g.store = s
	return s, nil
}

// Close releases the database if it was opened.
func (g *Gate) Close() error {
	if g.store == nil {
		return nil
	}
	err := g.store.Close()
	g.store = nil
	return err
}

// StateError is state that cannot be read or written (exit 78).
type StateError struct {
	Path string
	Err  error
}

func (e *StateError) Error() string { return fmt.Sprintf("state %s: %v", e.Path, e.Err) }
func (e *StateError) Unwrap() error { return e.Err }

// Request is what a caller asks the gate to judge or run.
type Request struct {
	Argv []string `json:"argv"`
	Cwd  string   `json:"cwd"`
	// Level, when set, lowers the policy's level for this request; a level
	// above the policy's is ignored.
	Level   *policy.Level `json:"-"`
	Channel string        `json:"channel"`
	Sender  string        `json:"sender"`
	Session string        `json:"session,omitempty"`
	// Reason is the agent's stated intent (given to the judge, and
	// context.reason to policy conditions).
	Reason string `json:"reason,omitempty"`
	// Context and Scope are the caller's context.* and scope.* fields for
	// policy conditions. They bind an approval like the command does: a
	// ticket approved with one context is not spent with another.
	Context map[string]any `json:"context,omitempty"`
	Scope   map[string]any `json:"scope,omitempty"`
	// Unsandboxed says the command will run outside mnemos's sandbox (a
	// hook that runs it itself after policy check): a read of a path
	// not known before it runs then asks at every level.
	Unsandboxed bool `json:"unsandboxed,omitempty"`
	// Written, for an agent's file tool, is what it writes: the card shows
	// it, and an approval is bound to it (written.go).
	Written *Written `json:"written,omitempty"`

	// bound is what the request's key binds beyond its words
	// (binding.go), set by Decide.
	bound *binding
}

// Key binds approvals and tickets to this exact request.
func (r Request) Key() string {
	return approvals.RequestKey(approvals.KeyInput{Channel: r.Channel, Sender: r.Sender, Cwd: r.Cwd, Argv: r.Argv,
		Context: r.Context, Scope: r.Scope, Bound: r.bound.digest()})
}

// CommandDecision is the verdict on one simple command.
type CommandDecision struct {
	Command   shellparse.Command `json:"command"`
	Text      string             `json:"text"`
	Outcome   policy.Outcome     `json:"outcome"`
	BlockedBy string             `json:"blocked_by,omitempty"`
	DecidedBy string             `json:"decided_by"`
	Reason    string             `json:"reason"`
	Guard     *vaglio.Hit        `json:"guard,omitempty"`
	Policy    *policy.Result     `json:"policy,omitempty"`
	Judge     *vaglio.Verdict    `json:"judge,omitempty"`
	// Explain mode only: the guard's checks and the directories the
	// command was checked from, and every rule considered (of Config.Extra
	// too, after the configured policy's).
	GuardChecks []string           `json:"guard_checks,omitempty"`
	GuardDirs   []string           `json:"guard_dirs,omitempty"`
	Rules       []policy.RuleTrace `json:"rules,omitempty"`
	// NestedRepo is where the command makes a git repository inside
	// another (nestedRepo), "" when it makes none.
	NestedRepo string `json:"nested_repo,omitempty"`
	// Drops says what work the command drops that only the journal
	// brings back (dropswork.go), "" when none.
	Drops string `json:"drops,omitempty"`
	// dropsKept says the journal keeps what Drops names.
	dropsKept bool
	// dropsAsks says it asks whatever is remembered (dropFloor), and
	// dropsAlways at every level, whatever the journal keeps.
	dropsAsks, dropsAlways bool
	// dropsUnkept says why the journal cannot keep it all (a file above
	// max_file, the quota), "" when it is not that.
	dropsUnkept string
	// dropsSwept are the excluded directories a deletion sweeps without
	// naming them, whose files the journal does not keep.
	dropsSwept []string
}

// Decision is the verdict on a whole request.
type Decision struct {
	Outcome   policy.Outcome `json:"decision"`
	Reason    string         `json:"reason"`
	BlockedBy string         `json:"blocked_by"`
	DecidedBy string         `json:"decided_by"`
	Level     string         `json:"level"`
	Policy    string         `json:"policy"`
	Workspace string         `json:"workspace"`
	// Sandboxed says the decision is for a command that runs under mnemos
	// run's sandbox (false: Request.Unsandboxed, a hook runs it itself).
	Sandboxed bool `json:"sandboxed"`
	// Journaled says the decision was made with the journal on for the
	// run (journaled.go): what it allows may be allowed only because
	// `mnemos undo` can bring back what it changes, so the run must keep
	// its changes in the journal, or not run.
	Journaled bool              `json:"journaled,omitempty"`
	Commands  []CommandDecision `json:"commands"`
	// Approval is the pending request created (or reused) for an ask.
	Approval *approvals.Pending `json:"approval,omitempty"`
	// Ticket is the approval whose one-shot ticket this run spent.
	Ticket string `json:"ticket,omitempty"`
	// Card is the approval card's lines for an ask.
	Card []string `json:"card,omitempty"`
	// Deliveries are the outcomes of sending a new approval's card to the
	// policy's channels.
	Deliveries []approvals.Delivery `json:"deliveries,omitempty"`
	// Reach are the paths outside what the sandbox grants by default that
	// the request names and that its approval lets the run reach
	// (decideWithSandbox).
	Reach []Reach `json:"sandbox_reach,omitempty"`
	// Hidden are paths the request reads that no policy can grant the
	// sandbox (find /, ls ~): it runs, and the sandbox hides them.
	Hidden []string `json:"sandbox_hidden,omitempty"`
	// Network, when the request needs the network only to fetch from
	// package registries and git remotes, names their hosts and the TCP
	// ports the run may then connect to (fetchNetwork).
	Network *Network `json:"sandbox_network,omitempty"`
}

// Mode says what Decide may change.
type Mode struct {
	// DryRun records nothing and creates no approval.
	DryRun bool
	// SpendTicket lets an approved one-shot ticket turn this ask into allow
	// (mnemos run does; policy check does not).
	SpendTicket bool
	// Explain records, for each command, the guard's checks and every rule
	// considered (CommandDecision.GuardChecks, GuardDirs and Rules).
	Explain bool
	// AgentAsks records an ask without parking it: an agent's hook puts
	// the question to the person in the agent's own prompt (hookticket.go).
	AgentAsks bool
}

// Decide runs parse, guard, policy and judge over the request, combines the
// outcomes (the strictest wins), and, unless DryRun, records the decision
// and parks an ask as a pending approval. An error means the decision could
// not be made or recorded; the caller must not run anything.
func (g *Gate) Decide(ctx context.Context, req Request, mode Mode) (Decision, error) {
	d := g.judge(ctx, req, mode.Explain)
	if d.err != nil {
		return d.Decision, d.err
	}
	dec := d.Decision
	req.bound = d.bound
	if mode.SpendTicket && dec.Outcome == policy.Ask {
		st, err := g.Store(ctx)
		if err != nil {
			return deny(dec, "state", err.Error()), err
		}
		tok, ok, err := st.SpendTicket(ctx, req.Key(), g.cfg.Now())
		if err != nil {
			return deny(dec, "state", err.Error()), &StateError{Path: g.cfg.Paths.DBFile, Err: err}
		}
		if ok {
			dec.Outcome, dec.DecidedBy, dec.Ticket = policy.Allow, "ticket", tok
			dec.Reason = "approved once: one-shot ticket of approval " + tok + " spent"
			// A link swapped in after the approval (reachlinks.go).
			if why, err := g.reachAsApproved(ctx, st, tok, dec); err != nil {
				return deny(dec, "state", err.Error()), err
			} else if why != "" {
				dec = deny(dec, "sandbox", why)
			}
		}
	}
	if dec.Outcome == policy.Ask {
		if err := g.rejectedBefore(ctx, req, &dec); err != nil {
			return deny(dec, "state", err.Error()), err
		}
	}
	if mode.SpendTicket && !mode.DryRun && dec.Outcome == policy.Allow && dec.Ticket == "" {
		// A person's approval (a ticket) is not rate limited.
		if err := g.rateLimit(ctx, req, &dec); err != nil {
			return deny(dec, "state", err.Error()), err
		}
	}
	if mode.SpendTicket && !mode.DryRun && dec.Outcome == policy.Allow {
		if err := g.spendGrants(ctx, &dec); err != nil {
			return deny(dec, "state", err.Error()), err
		}
	}
	if mode.DryRun {
		return dec, nil
	}
	g.logVerdicts(req, dec)
	if err := g.record(ctx, req, dec); err != nil {
		return deny(dec, "audit", err.Error()), err
	}
	if mode.SpendTicket {
		// The request runs: its own card waits for nothing (supersede.go).
		if err := g.supersede(ctx, req, dec); err != nil {
			return deny(dec, "state", err.Error()), &StateError{Path: g.cfg.Paths.DBFile, Err: err}
		}
	}
	if dec.Outcome == policy.Ask && !mode.AgentAsks {
		if err := g.park(ctx, req, &dec); err != nil {
			return deny(dec, "state", err.Error()), err
		}
	}
	return dec, nil
}

type judged struct {
	Decision
	err error
	// bound binds a ticket to what runs besides the words (binding.go).
	bound *binding
}

func deny(d Decision, by, reason string) Decision {
	d.Outcome, d.BlockedBy, d.DecidedBy, d.Reason = policy.Deny, by, by, reason
	return d
}

// level is the effective level: the policy's for the requester (a
// profile's when one matches), lowered by the extra policy and the request.
func (g *Gate) level(req Request) policy.Level {
	l := g.cfg.Policy.LevelFor(req.Channel, req.Sender)
	if g.cfg.Extra != nil {
		if e := g.cfg.Extra.LevelFor(req.Channel, req.Sender); e < l {
			l = e
		}
	}
	if req.Level != nil && *req.Level < l {
		l = *req.Level
	}
	return l
}

// guardChecks names the guard's checks, as explain lists them.
var guardChecks = []string{vaglio.CheckForbiddenPath, vaglio.CheckIrrecoverable, vaglio.CheckSelfTamper}

// evaluate runs one policy over one command, recording the rules it
// considered in explain mode. cl, when not nil, is the command's
// classification, computed once for both policies.
func evaluate(ctx context.Context, p *policy.Policy, in policy.Input, cl *classify.Classification, grants policy.GrantChecker, cd *CommandDecision, explain bool) (policy.Result, error) {
	var res policy.Result
	var trace []policy.RuleTrace
	var err error
	switch {
	case !explain && cl == nil:
		return p.Evaluate(ctx, in, grants)
	case !explain:
		return p.EvaluateClassified(ctx, in, *cl, grants)
	case cl == nil:
		res, trace, err = p.Explain(ctx, in, grants)
	default:
		res, trace, err = p.ExplainClassified(ctx, in, *cl, grants)
	}
	cd.Rules = append(cd.Rules, trace...)
	return res, err
}

// withExtra is res made stricter by Config.Extra, when set: the extra
// policy's result for the same command when it is more restrictive, its
// reason naming the extra policy.
func (g *Gate) withExtra(ctx context.Context, in policy.Input, cl *classify.Classification, grants policy.GrantChecker, cd *CommandDecision, explain bool, res policy.Result) (policy.Result, error) {
	if g.cfg.Extra == nil {
		return res, nil
	}
	extra, err := evaluate(ctx, g.cfg.Extra, in, cl, grants, cd, explain)
	if err != nil {
		return res, err
	}
	if extra.Outcome.Restrictiveness() > res.Outcome.Restrictiveness() {
		extra.Reason += " (" + g.cfg.Extra.Source + ")"
		return extra, nil
	}
	return res, nil
}

func (g *Gate) judge(ctx context.Context, req Request, explain bool) judged {
	lvl := g.level(req)
	src := g.cfg.Policy.Source
	if g.cfg.Extra != nil {
		src += " + " + g.cfg.Extra.Source
	}
	ws := Workspace(req.Cwd)
	dec := Decision{Outcome: policy.Deny, Level: lvl.String(), Policy: src, Workspace: ws, Sandboxed: !req.Unsandboxed}
	if len(req.Argv) == 0 {
		return judged{deny(dec, "parse", "empty command"), nil, nil}
	}
	var env []string
	if g.cfg.Environ != nil {
		env = g.cfg.Environ()
	}
	script, err := shellparse.ParseArgv(req.Argv, g.parseEnv(req, env))
	if err != nil {
		return judged{deny(dec, "parse", "cannot parse the command: "+err.Error()), nil, nil}
	}
	if len(script.Commands) == 0 {
		return judged{deny(dec, "parse", "no command found"), nil, nil}
	}
	facts := envFacts{vars: env, known: g.cfg.Environ != nil}
	if g.cfg.Environ != nil {
		roots := writableRoots(ws, g.cfg.UserHome)
		if why := envHazard(env, roots); why != "" {
			return judged{deny(dec, "environment", why), nil, nil}
		}
		pathEnv := envValue(env, "PATH")
		pathShadows(script.Commands, pathEnv, writableOnPath(pathEnv, roots))
		unusual := inheritedAssigns(env, roots, pathEnv, g.cfg.UserHome)
		applyInherited(script.Commands, unusual)
		for _, u := range unusual {
			facts.unusual = append(facts.unusual, u.name)
		}
	}
	place := classify.PlaceOf(script, req.Cwd, g.cfg.UserHome)
	place.Workspace = ws
	// mnemos run starts the command with the programs' secure modes
	// (classify.TerminalEnv): less refuses its shell commands, git and
	// man page through cat. A command run elsewhere has what it has.
	place.TerminalEnv = !req.Unsandboxed && classify.TerminalEnvKept(script.Commands)
	if g.cfg.Environ != nil {
		// The directories on the PATH the command runs with, which the
		// sandbox keeps read-only too (Run's sandbox.Options.PathDirs).
		place.Path = pathDirs(envValue(env, "PATH"))
	}
	place.Tools = pathToolDirs(g.cfg.UserHome, ws, script.Commands)
	cdpath := mayUseCdpath(env, req.Argv)
	if cdpath {
		cdpathUnknown(script.Commands, &place, g.cfg.UserHome)
	}
	// What the package managers the request runs would read: their
	// registries, whether a build's dependencies are in the cache.
	var pf pkgFacts
	if needs := classify.PackageNeeds(script.Commands); needs != 0 {
		pf = packageFacts(needs, place.Dirs, ws, g.cfg.UserHome, env)
		place.Packages = pf.pk
	}
	dirs := cmdDirs{cmds: script.Commands, place: place, home: g.cfg.UserHome, cdpath: cdpath}
	prepared := vaglio.Guard{Home: g.cfg.UserHome, Protected: g.cfg.Paths.Protected(), SelfNames: g.cfg.SelfNames, Workspace: ws}.Prepare()
	allDirs := prepared.ForDirs(place.Dirs)
	threshold := g.cfg.Policy.JudgeThreshold
	if g.cfg.Extra != nil && g.cfg.Extra.JudgeThreshold > threshold {
		threshold = g.cfg.Extra.JudgeThreshold
	}
	threshold = max(threshold, g.cfg.JudgeThreshold)
	judge := vaglio.Judge{Threshold: threshold}
	scorer := g.scorer()
	grants := &lazyGrants{g: g}
	now := g.cfg.Now()
	sess := &sessionRules{g: g, channel: req.Channel, sender: req.Sender, session: req.Session, now: now}

	dec.Outcome = policy.Allow
	n := len(script.Commands)
	dec.Commands = make([]CommandDecision, n)
	// Each command's policy result and verdict, allocated together.
	details := make([]commandDetail, n)
	// The request's part of every command's policy input.
	bound := &binding{cmds: script.Commands, place: place, env: facts, written: req.Written}
	journaled := !req.Unsandboxed && g.journaled(ws)
	journal := g.Journal()
	drops := newDropCounter(ws, journal, g.cfg.UserHome, g.getenvOrEmpty("XDG_CONFIG_HOME"))
	in := policy.Input{Place: place, Workspace: ws, Level: lvl, Cwd: req.Cwd,
		Channel: req.Channel, Sender: req.Sender, Session: req.Session, Reason: req.Reason,
		Context: req.Context, Scope: req.Scope, Now: now, Pins: bound,
		Sandbox: sandboxOf(req), Writable: writableTrees(ws), Journaled: journaled}
	stateFiles, stateDirs := g.stateSecrets()
	var wiringList []string
	wiring := func() []string {
		if wiringList == nil {
			wiringList = g.wiringFiles(ws)
		}
		return wiringList
	}
	worst := -1
	for i, cmd := range script.Commands {
		cd := &dec.Commands[i]
		cd.Command, cd.Text = cmd, cmd.String()
		guard, guardDirs, narrow := dirs.checker(i, allDirs, prepared)
		if explain {
			cd.GuardChecks, cd.GuardDirs = guardChecks, guardDirs
		}
		if hit, ok := guard.Check(cmd); ok {
			h := hit
			cd.Outcome, cd.BlockedBy, cd.DecidedBy, cd.Guard = policy.Deny, "guard", "guard", &h
			cd.Reason = "guard: " + hit.Reason
		} else {
			in.Command, in.Place = cmd, place
			if narrow {
				// Its relative paths name what they name in those
				// directories only.
				in.Place.Dirs = guardDirs
			}
			var cl *classify.Classification
			if g.cfg.Extra != nil {
				c := classify.Classify(cmd, in.Place)
				cl = &c
			}
			res, err := evaluate(ctx, g.cfg.Policy, in, cl, grants, cd, explain)
			if err == nil {
				res, _, err = sess.apply(ctx, in, cl, res, cd, explain)
			}
			if err == nil {
				err = rememberedGrants(ctx, in, &res, grants)
			}
			if err != nil {
				dec.Commands = dec.Commands[:i]
				return judged{deny(dec, "state", err.Error()), &StateError{Path: g.cfg.Paths.DBFile, Err: err}, nil}
			}
			if res, err = g.withExtra(ctx, in, cl, grants, cd, explain, res); err != nil {
				dec.Commands = dec.Commands[:i]
				return judged{deny(dec, "state", err.Error()), &StateError{Path: g.cfg.Paths.DBFile, Err: err}, nil}
			}
			det := &details[i]
			det.result = res
			cd.Policy = &det.result
			cd.Outcome, cd.DecidedBy, cd.Reason = res.Outcome, string(res.DecidedBy), res.Reason
			key, ok := namesStateSecret(&det.result, stateFiles, stateDirs)
			if !ok {
				key, ok = redirectNamesStateSecret(cmd, guardDirs, stateFiles, stateDirs)
			}
			if ok {
				// Whoever reads the audit key can rewrite the audit log
				// with MACs that verify, and the state database and hook
				// tickets hold the tokens that let a request through;
				// under mnemos run the sandbox refuses them too, but a
				// command checked for a hook runs outside.
				cd.Outcome, cd.BlockedBy, cd.DecidedBy = policy.Deny, "guard", "guard"
				cd.Reason = "guard: names mnemos's secrets " + key + " (self-tamper: the audit key, the state database, the hook tickets, serve's socket and the channels' credentials let whoever reaches them rewrite the log unnoticed or let requests through)"
			}
			if f, ok := unwiresAgent(&det.result, wiring); ok && !vaglio.NoExec(cmd) {
				cd.Outcome, cd.BlockedBy, cd.DecidedBy = policy.Deny, "guard", "guard"
				cd.Reason = "guard: writes " + f + ", an agent's hook settings that route its commands through mnemos (self-tamper: would unwire the gate)"
			}
			if r := redirectPastRule(cmd, &det.result, req.Cwd, in.Writable); r != "" && cd.Outcome == policy.Allow {
				cd.Outcome, cd.DecidedBy = policy.Ask, string(policy.ByFloor)
				cd.Reason = det.result.Reason + ", but not its redirect " + r + " outside the workspace and temp"
			}
			if cd.Outcome == policy.Allow && dirs.afterCdpath(i) {
				cd.Outcome, cd.DecidedBy, cd.Reason = policy.Ask, "parse", "CDPATH may take a cd NAME before it to another directory than NAME below this one"
			}
			if cd.Outcome == policy.Allow {
				// Both ask at every level, whatever a rule or a grant says.
				if why := sendsEnvironment(dec.Commands, i, &det.result); why != "" {
					cd.Outcome, cd.DecidedBy, cd.Reason = policy.Ask, string(policy.ByFloor), why
				} else if req.Unsandboxed && readsUnknown(&det.result) {
					cd.Outcome, cd.DecidedBy, cd.Reason = policy.Ask, string(policy.ByFloor), "reads a path not known before it runs, and runs outside the sandbox"
				} else if d, ok := pathFindsWritable(cmd, ws); ok && req.Unsandboxed {
					cd.Outcome, cd.DecidedBy, cd.Reason = policy.Ask, string(policy.ByFloor), "its PATH puts "+d+", a directory commands may write, first, and it runs outside the sandbox"
				}
			}
			// A git repository made inside another asks at every level
			// (nested.go).
			if cd.NestedRepo = nestedRepo(cmd, &det.result, in.Place, ws, !req.Unsandboxed); cd.NestedRepo != "" && cd.Outcome == policy.Allow {
				cd.Outcome, cd.DecidedBy, cd.Reason = policy.Ask, string(policy.ByFloor), nestedLine(cd.NestedRepo, ws, !req.Unsandboxed)
			}
			// Work only the journal brings back asks below level full,
			// and at full runs only while the journal keeps it
			// (dropswork.go).
			if cd.Outcome != policy.Deny {
				dropFloor(cd, drops.dropsWork(cmd, &det.result, in.Place.Dirs), lvl, journaled)
			}
			if cd.Outcome != policy.Deny {
				// Words known only when it runs, where options stand
				// (runtimeopts.go).
				g.runTimeOptions(ctx, guard, in, grants, cd)
			}
			if cd.Outcome != policy.Deny && scorer == nil {
				det.verdict = ruleJudge(judge, req.Reason, cd, "")
				cd.judged(&det.verdict)
			}
		}
		if worst < 0 || cd.Outcome.Restrictiveness() > dec.Commands[worst].Outcome.Restrictiveness() {
			worst = i
		}
	}
	if rechecked, err := g.recheckContained(ctx, &dec, details, in, grants, explain); err != nil {
		return judged{deny(dec, "state", err.Error()), &StateError{Path: g.cfg.Paths.DBFile, Err: err}, nil}
	} else if rechecked {
		worst = worstCommand(dec.Commands)
	}
	if scorer != nil {
		g.judgeByModel(ctx, scorer, judge, req, &dec)
		worst = worstCommand(dec.Commands)
	}
	// What each path resolves to, judged as well as its name (links.go).
	if changed, err := g.judgeLinks(ctx, req, &dec, linkCheck{prepared: prepared, all: allDirs, dirs: dirs, in: in, grants: grants,
		stateFiles: stateFiles, stateDirs: stateDirs}); err != nil {
		return judged{deny(dec, "state", err.Error()), &StateError{Path: g.cfg.Paths.DBFile, Err: err}, nil}
	} else if changed {
		worst = worstCommand(dec.Commands)
	}
	w := dec.Commands[worst]
	if w.Outcome == policy.Allow {
		// An allowed request says what it drops, and how to undo it.
		for _, c := range dec.Commands {
			if c.Drops != "" {
				w = c
				break
			}
		}
	}
	dec.Outcome, dec.BlockedBy, dec.DecidedBy = w.Outcome, w.BlockedBy, w.DecidedBy
	dec.Reason = w.Reason
	if len(dec.Commands) > 1 {
		dec.Reason = w.Text + ": " + w.Reason
	}
	dec.Network = fetchNetwork(dec.Commands, place, pf)
	g.decideWithSandbox(req, &dec)
	// An escalation runs unconfined, where nothing keeps its changes.
	dec.Journaled = journaled && !dec.Unconfined()
	return judged{dec, nil, bound}
}

// commandDetail is the policy result and the judge's verdict on one
// command, which its CommandDecision points to.
type commandDetail struct {
	result  policy.Result
	verdict vaglio.Verdict
}

// spendGrants spends one use of every grant an allowed run relies on, each
// by one conditional UPDATE: it keeps last_used exact and max_uses exact
// under concurrency. A grant used up by someone else in the meantime turns
// the decision back into ask.
func (g *Gate) spendGrants(ctx context.Context, dec *Decision) error {
	spent := map[int64]bool{}
	for i := range dec.Commands {
		c := &dec.Commands[i]
		if c.Policy == nil {
			continue
		}
		for _, a := range c.Policy.Accesses {
			if a.Grant == nil || spent[a.Grant.ID] {
				continue
			}
			st, err := g.Store(ctx)
			if err != nil {
				return err
			}
			_, ok, err := st.SpendGrant(ctx, a.Grant.ID, g.cfg.Now())
			if err != nil {
				return &StateError{Path: g.cfg.Paths.DBFile, Err: err}
			}
			spent[a.Grant.ID] = true
			if !ok {
				c.Outcome, c.DecidedBy = policy.Ask, "grant"
				c.Reason = fmt.Sprintf("grant %d was used up or revoked meanwhile", a.Grant.ID)
				dec.Outcome, dec.DecidedBy, dec.Reason = policy.Ask, "grant", c.Reason
			}
		}
	}
	return nil
}

// lazyGrants opens the database only when the policy asks about a grant.
type lazyGrants struct{ g *Gate }

func (l *lazyGrants) CoveringGrant(ctx context.Context, channel, sender string, c classify.Capability, target, session string, now time.Time) (policy.Grant, bool, error) {
	st, err := l.g.Store(ctx)
	if err != nil {
		return policy.Grant{}, false, err
	}
	gr, ok, err := st.CoveringGrant(ctx, channel, sender, c, target, session, now)
	if ok && !grantReaches(gr.Target, target) {
		return policy.Grant{}, false, nil
	}
	return gr, ok, err
}

// record writes the policy.decision event.
func (g *Gate) record(ctx context.Context, req Request, dec Decision) error {
	cmds := make([]any, 0, len(dec.Commands))
	for _, c := range dec.Commands {
		m := map[string]any{"command": c.Text, "outcome": c.Outcome.String(), "decided_by": c.DecidedBy, "reason": c.Reason}
		if c.Policy != nil {
			var acc []any
			for _, a := range c.Policy.Accesses {
				acc = append(acc, map[string]any{"capability": string(a.Capability), "target": a.Target, "cell": string(a.Cell)})
			}
			m["accesses"] = acc
			if c.Policy.Rule != nil {
				m["rule"] = c.Policy.Rule.Name
			}
		}
		if c.Judge != nil {
			m["score"] = c.Judge.Score
			if c.Judge.JudgeKind != vaglio.JudgeKindRuleBased || !c.Judge.Approved {
				// A model's judgement, a fallback or a refusal says why.
				m["judge"] = c.Judge.Reason
			}
		}
		cmds = append(cmds, m)
	}
	attrs := []slog.Attr{
		slog.String("decision", dec.Outcome.String()),
		slog.String("reason", dec.Reason),
		slog.String("blocked_by", dec.BlockedBy),
		slog.String("decided_by", dec.DecidedBy),
		slog.Any("argv", req.Argv),
		slog.String("cwd", req.Cwd),
		slog.String("autonomy", dec.Level),
		slog.String("policy", dec.Policy),
		slog.String("channel", req.Channel),
		slog.String("sender", req.Sender),
		slog.Any("commands", cmds),
	}
	if req.Session != "" {
		attrs = append(attrs, slog.String("session", req.Session))
	}
	if req.Context != nil {
		attrs = append(attrs, slog.Any("context", req.Context))
	}
	if req.Scope != nil {
		attrs = append(attrs, slog.Any("scope", req.Scope))
	}
	if dec.Ticket != "" {
		attrs = append(attrs, slog.String("ticket", dec.Ticket))
	}
	if req.Unsandboxed {
		attrs = append(attrs, slog.Bool("unsandboxed", true))
	}
	if req.Written != nil {
		// Which content a file tool's write was decided for (written.go).
		attrs = append(attrs, slog.String("written", req.Written.Digest()))
	}
	return g.cfg.Audit.Append(ctx, "policy.decision", attrs...)
}

// rejectedBefore turns an ask into a deny when a person rejected the same
// request (argv, directory, identity, context) within the approval TTL:
// the answer stands, and the person is not asked again straight away.
// Once that time has passed, the request asks again.
func (g *Gate) rejectedBefore(ctx context.Context, req Request, dec *Decision) error {
	st, err := g.Store(ctx)
	if err != nil {
		return err
	}
	ttl := g.cfg.Policy.ApprovalTTL
	if ttl <= 0 {
		ttl = approvals.DefaultTTL
	}
	now := g.cfg.Now()
	p, ok, err := st.RecentRejection(ctx, req.Key(), now.Add(-ttl))
	if err != nil {
		return &StateError{Path: g.cfg.Paths.DBFile, Err: err}
	}
	if !ok || p.DecisionAt == nil {
		return nil
	}
	by := p.Channel + ":" + p.Sender
	if p.DecisionBy != nil {
		by = p.DecisionBy.Channel + ":" + p.DecisionBy.Sender
	}
	reason := "rejected by " + by + " at " + p.DecisionAt.Local().Format("15:04") + " (approval " + p.Token +
		"); the same request asks again after " + p.DecisionAt.Add(ttl).Local().Format("15:04")
	dec.Outcome, dec.BlockedBy, dec.DecidedBy, dec.Reason = policy.Deny, "approval", "approval", reason
	return nil
}

// park creates (or reuses) the pending approval for an ask and renders its
// card.
func (g *Gate) park(ctx context.Context, req Request, dec *Decision) error {
	st, err := g.Store(ctx)
	if err != nil {
		return err
	}
	now := g.cfg.Now()
	if p, ok, err := st.FindOpen(ctx, req.Key(), now); err != nil {
		return &StateError{Path: g.cfg.Paths.DBFile, Err: err}
	} else if ok {
		dec.Approval = &p
		dec.Card = append(append(approvals.RenderCard(p.Card()), cardExtras(p, true)...), networkLines(dec.Network)...)
		return nil
	}
	np := g.newPending(req, *dec)
	g.recordExtras(&np, dec)
	// An approval of the same words that went unused says why (stale.go).
	if err := g.noteStale(ctx, st, req, &np, now); err != nil {
		return &StateError{Path: g.cfg.Paths.DBFile, Err: err}
	}
	noteWritten(&np, req)
	np.Details.Bound, np.Details.Pin = describeFacts(req.bound.get()), req.bound.pin()
	np.Details.Remember = rememberItems(dec, req.bound)
	p, err := st.CreatePending(ctx, np, now, g.cfg.Policy.ApprovalTTL)
	if err != nil {
		return &StateError{Path: g.cfg.Paths.DBFile, Err: err}
	}
	dec.Approval = &p
	dec.Card = append(append(approvals.RenderCard(p.Card()), cardExtras(p, true)...), networkLines(dec.Network)...)
	if err := g.cfg.Audit.Append(ctx, "approval.requested",
		slog.String("id", p.Token),
		slog.String("capability_class", p.CapabilityClass),
		slog.Any("argv", req.Argv),
		slog.String("cwd", req.Cwd),
		slog.String("channel", req.Channel),
		slog.String("sender", req.Sender),
		slog.Time("expires_at", p.ExpiresAt),
		slog.String("reason", dec.Reason),
	); err != nil {
		return err
	}
	// Only a new request is delivered: nothing nags twice.
	return g.deliver(ctx, p, dec)
}

func (g *Gate) newPending(req Request, dec Decision) approvals.NewPending {
	// The card's headline is the most dangerous access of the commands
	// that ask (approvals.Rank), whatever their order in the script: the
	// verb and rule are those of the command it belongs to, the
	// reversibility the worst of them.
	var asking *CommandDecision
	var accesses []approvals.Access
	rev := ""
	for i := range dec.Commands {
		c := &dec.Commands[i]
		if c.Outcome != policy.Ask {
			continue
		}
		if asking == nil {
			asking = c
		}
		if c.Policy == nil {
			rev = worseReversibility(rev, "partial")
			continue
		}
		switch {
		case g.undoable(dec, c):
			// The journal keeps every path it writes: `mnemos undo`
			// brings back what it destroys.
			rev = worseReversibility(rev, approvals.Undoable)
		case dec.Journaled && len(c.dropsSwept) > 0 && c.Policy.Reversibility == approvals.Irreversible:
			// It keeps all but what the excluded directories hold.
			rev = worseReversibility(rev, approvals.Partial)
		default:
			rev = worseReversibility(rev, c.Policy.Reversibility)
		}
		for _, a := range c.Policy.Accesses {
			if s, err := policy.Lookup(a.Capability); err == nil && s.DefaultApproval == policy.ApprovalNone && c.DecidedBy != "rate-limit" {
				continue
			}
			accesses = append(accesses, approvals.Access{Capability: a.Capability, Target: a.Target, Cost: a.Cost})
		}
	}
	accesses = approvals.SortAccesses(accesses)
	verb, class, rule := "run", "code:exec", ""
	if len(accesses) > 0 {
		a := accesses[0]
		class = string(a.Capability)
		if a.Target != "" && a.Capability != classify.CodeExec {
			class += ":" + a.Target
		}
		asking = commandWith(dec.Commands, a)
	}
	if asking != nil && asking.Policy != nil {
		verb = asking.Policy.Verb
		if asking.Policy.Rule != nil {
			rule = asking.Policy.Rule.Name
		}
		// The command's verb names the operation of its first access.
		if len(accesses) > 0 {
			if len(asking.Policy.Accesses) == 0 || asking.Policy.Accesses[0].Capability != accesses[0].Capability {
				verb = ""
			}
			verb = approvals.HeadlineVerb(accesses[0].Capability, verb, headlineWords(dec.Commands, asking, accesses[0].Capability)...)
		}
	}
	if rev == "" {
		rev = "partial"
	}
	summary := strings.Join(audit.RedactArgv(req.Argv), " ")
	if len(summary) > 200 {
		cut := 197
		for cut > 0 && !utf8.RuneStart(summary[cut]) {
			cut--
		}
		summary = summary[:cut] + "..."
	}
	summary += " (in " + req.Cwd + ")"
	return approvals.NewPending{
		Channel: req.Channel, Sender: req.Sender,
		CapabilityClass: class, ActionVerb: verb, TargetSummary: summary,
		RequestKey: req.Key(),
		Details: approvals.Details{
			Argv: req.Argv, Cwd: req.Cwd, Session: req.Session, Level: dec.Level,
			Reversibility: rev, Rule: rule, Reason: dec.Reason, Accesses: accesses,
		},
	}
}

// headlineWords are the words of asking, the command whose verb heads the
// card, for approvals.HeadlineVerb to tell pip --version from pip
// install; none when another asking command holds capability c as well,
// so that pip --version && pip install x still reads "install".
func headlineWords(cmds []CommandDecision, asking *CommandDecision, c classify.Capability) []string {
	for i := range cmds {
		o := &cmds[i]
		if o == asking || o.Outcome != policy.Ask || o.Policy == nil {
			continue
		}
		for _, a := range o.Policy.Accesses {
			if a.Capability == c {
				return nil
			}
		}
	}
	return asking.Command.Strings()
}

// commandWith returns the first asking command with access a.
func commandWith(cmds []CommandDecision, a approvals.Access) *CommandDecision {
	for i := range cmds {
		c := &cmds[i]
		if c.Outcome != policy.Ask || c.Policy == nil {
			continue
		}
		for _, b := range c.Policy.Accesses {
			if b.Capability == a.Capability && b.Target == a.Target {
				return c
			}
		}
	}
	return nil
}

// undoable reports whether the journal keeps every path c, a command of
// dec, writes (policy.JournalKeeps), and all the work it drops: its
// card says it can be undone with `mnemos undo`.
func (g *Gate) undoable(dec Decision, c *CommandDecision) bool {
	if !dec.Journaled || c.Policy == nil || c.Drops != "" && !c.dropsKept || len(c.dropsSwept) > 0 {
		return false
	}
	cl := classify.Classification{Accesses: make([]classify.Access, len(c.Policy.Accesses))}
	for i, a := range c.Policy.Accesses {
		cl.Accesses[i] = a.Access
	}
	return policy.JournalKeeps(&cl, dec.Workspace, g.Journal())
}

// worseReversibility returns the less reversible of a and b: irreversible,
// then partial, then undoable (the journal keeps it), then reversible; an
// unknown value counts as irreversible.
func worseReversibility(a, b string) string {
	rank := func(r string) int {
		switch r {
		case "":
			return 0
		case approvals.Reversible:
			return 1
		case approvals.Undoable:
			return 2
		case approvals.Partial:
			return 3
		}
		return 4
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// ErrNotAllowed is returned by Run when the decision is not allow.
var ErrNotAllowed = errors.New("not allowed")
