package policy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/mnemos-dev/mnemos/classify"
)

// Layer names where a policy file sits in a stack.
type Layer string

// The layers, from the most to the least authoritative.
const (
	LayerSystem  Layer = "system"
	LayerUser    Layer = "user"
	LayerProject Layer = "project"
)

// SystemFile is where the administrator's policy is read from.
const SystemFile = "/etc/mnemos/policy.yaml"

// ProjectFile is where a workspace keeps its project policy.
func ProjectFile(workspace string) string {
	return filepath.Join(workspace, ".mnemos", "policy.yaml")
}

// MaxPolicySize bounds a system or project policy file.
const MaxPolicySize = 4 << 20

// ErrUntrustedSystemPolicy is returned by LoadSystem for a file (or
// directory) not owned by root, or writable by group or others: it is not
// the administrator's, and is not honoured.
var ErrUntrustedSystemPolicy = errors.New("system policy is not trusted")

// TrustSystemPolicy checks that a file, or the directory holding it, may
// be honoured as the administrator's: owned by root and not writable by
// group or others. It reads the owner from fi.Sys() (a *syscall.Stat_t on
// Unix systems); where there is none, the file is not trusted.
func TrustSystemPolicy(fi fs.FileInfo) error {
	uid, ok := FileOwner(fi)
	switch {
	case !ok:
		return fmt.Errorf("%w: cannot tell who owns %s", ErrUntrustedSystemPolicy, fi.Name())
	case uid != 0:
		return fmt.Errorf("%w: %s is owned by uid %d, not root", ErrUntrustedSystemPolicy, fi.Name(), uid)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%w: %s is writable by group or others (mode %v); run chmod go-w on it", ErrUntrustedSystemPolicy, fi.Name(), fi.Mode().Perm())
	case !fi.IsDir() && !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a regular file", ErrUntrustedSystemPolicy, fi.Name())
	}
	return nil
}

// LoadSystem reads the system policy at file. A missing file is no
// policy (nil, nil). A file or directory that TrustSystemPolicy rejects
// is an error wrapping ErrUntrustedSystemPolicy: the caller reports it and
// goes on without the layer. An invalid file is an *Error, as for Load.
func LoadSystem(file string) (*Policy, error) {
	dir, err := os.Stat(filepath.Dir(file))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{File: file, Msg: fmt.Sprintf("cannot read policy: %v", errors.Unwrap(err))}
	}
	if err := TrustSystemPolicy(dir); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return loadChecked(file, TrustSystemPolicy)
}

// LoadProject reads a project policy (ProjectFile of the workspace). A
// missing file is no policy (nil, nil); anything but a regular file is an
// error, as is an invalid one.
func LoadProject(file string) (*Policy, error) {
	return loadChecked(file, func(fi fs.FileInfo) error {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", fi.Name())
		}
		return nil
	})
}

// loadChecked opens file, checks what it opened, and parses it.
func loadChecked(file string, check func(fs.FileInfo) error) (*Policy, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|openNoBlock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{File: file, Msg: fmt.Sprintf("cannot read policy: %v", errors.Unwrap(err))}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, &Error{File: file, Msg: fmt.Sprintf("cannot read policy: %v", err)}
	}
	if err := check(fi); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxPolicySize+1))
	if err != nil {
		return nil, &Error{File: file, Msg: fmt.Sprintf("cannot read policy: %v", err)}
	}
	if len(data) > MaxPolicySize {
		return nil, &Error{File: file, Line: 1, Col: 1, Msg: fmt.Sprintf("policy file is larger than %d bytes", MaxPolicySize)}
	}
	return Parse(file, data)
}

// Merge stacks a system, a user and a project policy (any of system and
// project may be nil) into one policy whose Evaluate decides with all of
// them. A lower layer may tighten a higher one, never loosen it:
//
//   - Rules of the system and user layers: each layer's first matching
//     rule (in the view of the request's identity) counts, and the most
//     restrictive is the rule outcome (deny over ask over allow; at equal
//     action the system's), combined with the table and defaults.shell as
//     for one file. A layer no rule of which matches has no say.
//   - The project layer is a filter on that outcome: its first matching
//     rule, when it denies or asks, makes the outcome at least that; when
//     no project rule matches, a defaults.shell of deny or ask that the
//     project file writes does the same for code:exec. A project allow
//     rule does nothing across layers; it only keeps the project's own
//     lower rules and defaults.shell from applying. A project file need
//     not repeat the rules above it. Grants, then the command's floor,
//     apply last, as for one file (an ask of a project rule needs grants
//     for every access, as an ask rule does).
//   - Level (and LevelFor): the user layer's, lowered by the level the
//     system or project file writes (top level or a matching profile). A
//     setting a file does not write is not a constraint.
//   - defaults.shell: the user layer's, made stricter by the system's or
//     project's when they write one. Approval TTL: the shortest written;
//     judge threshold: the highest written.
//   - Sandbox (SandboxFor): required when any layer requires it; extra
//     paths only from the system and user layers (a project cannot widen
//     the sandbox of the commands run in it); port lists intersected;
//     network false when any layer says false, true only from the system
//     or user layer; caches those of the highest layer that lists them
//     (the system's or user's, else the defaults), which each lower layer
//     listing caches can only narrow (drop a cache, make one read-only).
//   - Rate limits (RateLimitFor): per capability, the limits the layers
//     give the request's identity combine field by field, the strictest
//     each time (smallest capacity, slowest refill, deny over ask); a
//     limit only one layer sets applies.
//
// So a loosening attempt is ignored at run time by construction. Merge
// reports each one it can see as a warning positioned in the file that
// makes it (a level above a higher layer's, a looser defaults.shell,
// approvals.ttl or judge.threshold, a project allow rule one of whose
// match examples, or its argv_prefix, the layers above do not allow,
// sandbox paths or network in a project file, a sandbox cache a lower
// layer adds or makes writable, a rate limit with a larger
// capacity, a faster refill or over: ask where a layer above says deny).
//
// user should be the user's policy, or Default() when there is none; nil
// is an empty policy with default settings. When system and project are
// both nil, Merge returns user itself. The policies given must each come
// from one file (not from Merge); Merge does not change them.
func Merge(system, user, project *Policy) (*Policy, []Diagnostic) {
	if user == nil {
		user = &Policy{Source: "no user policy", Level: Supervised, Shell: Ask, ApprovalTTL: DefaultApprovalTTL, JudgeThreshold: DefaultJudgeThreshold, Journal: DefaultJournal()}
	}
	if system == nil && project == nil {
		return user, nil
	}
	var diags []Diagnostic
	if system != nil {
		diags = append(diags, loosening(system, user, LayerSystem, string(LayerSystem)+" policy "+system.Source)...)
	}
	m := &Policy{}
	var sources []string
	for _, l := range []struct {
		p     *Policy
		layer Layer
	}{{system, LayerSystem}, {user, LayerUser}, {project, LayerProject}} {
		if l.p == nil {
			continue
		}
		c := *l.p
		c.Layer = l.layer
		m.layers = append(m.layers, &c)
		sources = append(sources, c.Source)
		m.Rules = append(m.Rules, c.Rules...)
	}
	m.Source = strings.Join(sources, " + ")
	u := m.layer(LayerUser)
	m.Level, m.Shell, m.ApprovalTTL, m.JudgeThreshold = u.Level, u.Shell, u.ApprovalTTL, u.JudgeThreshold
	m.HookHold = u.HookHold
	m.State = stackState(system, u)
	if system != nil && system.HookHold > 0 {
		m.HookHold = system.HookHold
	}
	if system != nil && system.has(setShell) {
		m.Shell = Stricter(m.Shell, system.Shell)
	}
	m.upperShell = m.Shell
	for _, l := range m.layers {
		if l == u {
			continue
		}
		if l.has(setLevel) && l.Level < m.Level {
			m.Level = l.Level
		}
		if l.has(setShell) {
			m.Shell = Stricter(m.Shell, l.Shell)
		}
		if l.has(setTTL) && l.ApprovalTTL < m.ApprovalTTL {
			m.ApprovalTTL = l.ApprovalTTL
		}
		if l.has(setThreshold) && l.JudgeThreshold > m.JudgeThreshold {
			m.JudgeThreshold = l.JudgeThreshold
		}
	}
	m.Sandbox = m.sandboxSection()
	m.RateLimits = m.rateLimitSection()
	m.Costs = nil
	for _, l := range m.layers {
		m.Costs = append(m.Costs, l.Costs...)
	}
	m.Channels = stackChannels(m.layers)
	m.Judge = stackJudge(m.layers)
	m.Journal = stackJournal(m.layers)
	if system != nil {
		diags = append(diags, journalLoosening(system, user, true, string(LayerSystem)+" policy "+system.Source)...)
	}
	if project != nil {
		upper, _ := Merge(system, user, nil)
		diags = append(diags, loosening(upper, project, LayerProject, "layers above ("+upper.Source+")")...)
		diags = append(diags, projectRules(upper, project)...)
		diags = append(diags, projectChannels(project)...)
		diags = append(diags, projectJudge(project)...)
		diags = append(diags, projectState(project)...)
		diags = append(diags, journalLoosening(upper, project, false, "layers above ("+upper.Source+")")...)
	}
	sortDiagnostics(diags)
	return m, diags
}

// Layers returns the policies of a stack built by Merge, system first,
// each with its Layer set; nil for a policy of one file.
func (p *Policy) Layers() []*Policy { return slices.Clone(p.layers) }

// layer returns the stack's policy of layer l, or nil.
func (p *Policy) layer(l Layer) *Policy {
	for _, q := range p.layers {
		if q.Layer == l {
			return q
		}
	}
	return nil
}

// stackLevel is LevelFor of a stack: the user layer's level for the
// identity, lowered by the level another layer writes for it.
func (p *Policy) stackLevel(channel, sender string) Level {
	u := p.layer(LayerUser)
	lv, _ := u.levelFor(channel, sender)
	for _, l := range p.layers {
		if l == u {
			continue
		}
		if x, wrote := l.levelFor(channel, sender); wrote && x < lv {
			lv = x
		}
	}
	return lv
}

// sandboxSection is the stack's sandbox section, for display: the
// layers' sections combined as SandboxFor combines them, Network left
// unset when no layer sets it.
func (p *Policy) sandboxSection() SandboxConfig {
	var out SandboxConfig
	var netFalse, netTrue, closed, bindTrusted bool
	portsSet, bindSet := false, false
	for _, l := range p.layers {
		s := l.Sandbox
		if l.Layer != LayerProject {
			out.Read = appendNew(out.Read, s.Read...)
			out.Write = appendNew(out.Write, s.Write...)
			out.Sockets = appendNew(out.Sockets, s.Sockets...)
		}
		out.Required = out.Required || s.Required
		if s.Network != nil {
			if !*s.Network {
				netFalse = true
			} else if l.Layer != LayerProject {
				netTrue = true
			}
		}
		out.Ports, portsSet, closed = intersectPorts(out.Ports, portsSet, s.Ports, closed)
		// As SandboxFor: no common bind port binds nothing, the network
		// stays, and only a layer above the project's can grant binding.
		out.Bind, bindSet, _ = intersectPorts(out.Bind, bindSet, s.Bind, false)
		bindTrusted = bindTrusted || l.Layer != LayerProject && len(s.Bind) > 0
	}
	if !bindTrusted {
		out.Bind = nil
	}
	out.Caches, out.CachesSet = stackCaches(p.layers)
	switch {
	case netFalse || closed:
		f := false
		out.Network = &f
	case netTrue:
		t := true
		out.Network = &t
	}
	return out
}

// verdict is what the project layer says of a command on its own: deny
// or ask (with the rule, or defaults.shell, that says so), or nothing
// (Allow).
type verdict struct {
	outcome Outcome
	by      Decided
	reason  string
	rule    *Rule
}

// stackMatch finds the first matching rule of the system and user layers
// and returns the most restrictive, and the project layer's verdict,
// recording the sandbox overrides of the rules that count in res.
func (p *Policy) stackMatch(in *Input, cl *classify.Classification, res *Result, tr *tracer) (*Rule, Layer, verdict) {
	var chosen *Rule
	var layer Layer
	filter := verdict{outcome: Allow}
	for _, l := range p.layers {
		r := l.firstMatch(in, cl, tr)
		if l.Layer == LayerProject {
			switch {
			case r != nil && r.Action == Allow:
				if tr != nil {
					tr.note("a project allow rule cannot loosen the layers above: it only keeps the project's own lower rules and defaults.shell from applying")
				}
			case r != nil && p.undoes(r, in, cl):
				// An undoable rule the journal stands for asks below
				// level full and filters nothing at full.
				if in.Level < Full {
					filter = verdict{outcome: Ask, by: ByRule, rule: r, reason: reasonLabel(r, l.Layer) + undoableReason(Ask)}
				}
				if res.Cell != Denied {
					res.Undoable = r.Name
				}
			case r != nil:
				// r.Action is ask or deny.
				filter = verdict{outcome: r.Action, by: ByRule, rule: r, reason: r.reason(l.Layer)}
			case l.has(setShell) && l.Shell != Allow && classify.HasCap(cl, classify.CodeExec):
				filter = verdict{outcome: l.Shell, by: ByDefaults, reason: fmt.Sprintf("the project's defaults.shell is %s and no project rule matches", l.Shell)}
			}
			if r == nil || r.Action == Allow {
				continue
			}
		} else if r == nil {
			continue
		} else if chosen == nil || r.Action.Restrictiveness() > chosen.Action.Restrictiveness() {
			chosen, layer = r, l.Layer
		}
		if r.Sandbox != nil {
			res.Sandbox = append(res.Sandbox, SandboxOverride{Rule: r.Name, Layer: l.Layer, Profile: r.profile, Config: *r.Sandbox})
		}
	}
	if chosen != nil {
		res.Rule = ruleRef(chosen, layer)
	}
	return chosen, layer, filter
}

// loosening reports the settings of lower (the user or project file) that
// are looser than those of upper, which it cannot loosen. what names
// upper in messages.
func loosening(upper, lower *Policy, upperLayer Layer, what string) []Diagnostic {
	var out []Diagnostic
	warn := func(pos Pos, msg string) {
		out = append(out, Diagnostic{Pos: pos, Severity: SeverityWarning, Msg: msg})
	}
	// Against the system policy only what it writes binds; against the
	// layers above a project, their effective settings do.
	binds := func(s settings) bool { return upperLayer != LayerSystem || upper.has(s) }
	if lower.has(setLevel) && binds(setLevel) && lower.Level > upper.Level {
		warn(lower.posOf(setLevel), fmt.Sprintf("level %s is above the level %s of the %s; the lower level applies", lower.Level, upper.Level, what))
	}
	for i := range lower.Profiles {
		pr := &lower.Profiles[i]
		if pr.Level == nil {
			continue
		}
		ul, wrote := upper.levelFor(pr.Channel, pr.Sender)
		if len(upper.layers) > 0 {
			ul, wrote = upper.LevelFor(pr.Channel, pr.Sender), true
		}
		if (wrote || upperLayer != LayerSystem) && *pr.Level > ul {
			warn(pr.Pos, fmt.Sprintf("profile %q sets level %s, above the level %s the %s gives these requests; the lower level applies", pr.Name, *pr.Level, ul, what))
		}
	}
	if lower.has(setShell) && binds(setShell) && lower.Shell.Restrictiveness() < upper.Shell.Restrictiveness() {
		warn(lower.posOf(setShell), fmt.Sprintf("defaults.shell %s is looser than %s in the %s, which it cannot loosen; %s applies", lower.Shell, upper.Shell, what, upper.Shell))
	}
	if lower.has(setTTL) && binds(setTTL) && lower.ApprovalTTL > upper.ApprovalTTL {
		warn(lower.posOf(setTTL), fmt.Sprintf("approvals.ttl %s is longer than %s in the %s; the shorter applies", formatDuration(lower.ApprovalTTL), formatDuration(upper.ApprovalTTL), what))
	}
	if lower.has(setThreshold) && binds(setThreshold) && lower.JudgeThreshold < upper.JudgeThreshold {
		warn(lower.posOf(setThreshold), fmt.Sprintf("judge.threshold %s is lower than %s in the %s; the higher applies", formatNumber(lower.JudgeThreshold), formatNumber(upper.JudgeThreshold), what))
	}
	us, ls := upper.Sandbox, lower.Sandbox
	if ls.HasNetwork() && us.Network != nil && !*us.Network {
		warn(ls.Pos, fmt.Sprintf("sandbox network: true cannot loosen network: false in the %s; it is ignored", what))
	}
	if len(us.Ports) > 0 {
		for _, port := range ls.Ports {
			if !slices.Contains(us.Ports, port) {
				warn(ls.Pos, fmt.Sprintf("sandbox port %d is not among the ports of the %s (%v); it stays closed", port, what, us.Ports))
				break
			}
		}
	}
	if ls.CachesSet && (upperLayer != LayerSystem || us.CachesSet) {
		base := cachesOf(us, DefaultCaches())
		for _, c := range ls.Caches {
			kept := NarrowCaches(base, []SandboxCache{c})
			switch {
			case len(kept) == 0:
				warn(ls.Pos, fmt.Sprintf("sandbox cache %s is not among the caches of the %s, which it cannot add to; it is ignored", c.Path, what))
			case c.Write && !kept[0].Write:
				warn(ls.Pos, fmt.Sprintf("sandbox cache %s cannot be made writable, being read-only in the %s; it stays read-only", c.Path, what))
			}
		}
	}
	out = append(out, rateLimitLoosening(upper, lower, what)...)
	return out
}

// projectRules reports what a project file writes that would loosen the
// layers above: extra sandbox paths and network, and allow rules.
func projectRules(upper, project *Policy) []Diagnostic {
	var out []Diagnostic
	warn := func(pos Pos, msg string) {
		out = append(out, Diagnostic{Pos: pos, Severity: SeverityWarning, Msg: msg})
	}
	sandbox := func(sc *SandboxConfig, whose string) {
		if len(sc.Read) > 0 || len(sc.Write) > 0 || len(sc.Sockets) > 0 {
			warn(sc.Pos, whose+"sandbox read, write and socket paths are ignored: a project policy cannot widen the sandbox")
		}
		if sc.HasNetwork() {
			warn(sc.Pos, whose+"sandbox network: true is ignored: a project policy cannot give commands network")
		}
	}
	sandbox(&project.Sandbox, "")
	check := func(r *Rule, def exampleDefaults) {
		if r.Sandbox != nil {
			sandbox(r.Sandbox, fmt.Sprintf("rule %q: ", r.Name))
		}
		if r.Action != Allow {
			return
		}
		examples := slices.Clone(r.Match)
		if len(examples) == 0 && len(r.ArgvPrefix) > 0 {
			ex := Example{Command: shellJoin(r.ArgvPrefix)}
			if ok, err := exampleMatches(r, ex, def); err == nil && ok {
				examples = append(examples, ex)
			}
		}
		if len(examples) == 0 {
			warn(r.Pos, fmt.Sprintf("project allow rule %q cannot allow what the layers above ask about or deny, and cannot be checked against them: give it match: examples", r.Name))
			return
		}
		for _, ex := range examples {
			got, ok := upperOutcome(upper, ex, def)
			if ok && got.Outcome != Allow {
				verb := "ask about"
				if got.Outcome == Deny {
					verb = "deny"
				}
				warn(r.Pos, fmt.Sprintf("project allow rule %q would allow %q, which the layers above %s (%s); it is ignored there and only takes precedence over the project's own lower rules", r.Name, ex.Command, verb, got.Reason))
				return
			}
		}
	}
	base := exampleDefaults{level: project.Level, channel: "cli", sender: "user"}
	for i := range project.Rules {
		check(&project.Rules[i], base)
	}
	for i := range project.Profiles {
		pr := &project.Profiles[i]
		def := base
		if pr.Channel != "*" {
			def.channel = pr.Channel
		}
		if pr.Sender != "*" {
			def.sender = pr.Sender
		}
		for j := range pr.Rules {
			check(&pr.Rules[j], def)
		}
	}
	return out
}

// userRulesUnderSystem reports the user's allow rules whose examples a
// rule of the system policy denies or asks about: the system's rules bind
// the layers below it, so such a rule cannot take effect there.
func userRulesUnderSystem(system, user *Policy) []Diagnostic {
	var out []Diagnostic
	def := exampleDefaults{level: user.Level, channel: "cli", sender: "user"}
	for i := range user.Rules {
		r := &user.Rules[i]
		if r.Action != Allow {
			continue
		}
		examples := slices.Clone(r.Match)
		if len(examples) == 0 && len(r.ArgvPrefix) > 0 {
			examples = append(examples, Example{Command: shellJoin(r.ArgvPrefix)})
		}
		for _, ex := range examples {
			got, ok := upperOutcome(system, ex, def)
			if !ok || got.DecidedBy != ByRule || got.Outcome == Allow {
				continue
			}
			verb := "asks about"
			if got.Outcome == Deny {
				verb = "denies"
			}
			out = append(out, Diagnostic{Pos: r.Pos, Severity: SeverityWarning,
				Msg: fmt.Sprintf("allow rule %q would allow %q, which the system policy %s (%s); the system's rule applies", r.Name, ex.Command, verb, got.Reason)})
			break
		}
	}
	return out
}

// upperOutcome is how the layers above decide an example of a project
// rule, at the level they give its identity (or the example's, if lower).
func upperOutcome(upper *Policy, ex Example, def exampleDefaults) (RequestResult, bool) {
	cwd := ex.Cwd
	if cwd == "" {
		cwd = ExampleCwd
	}
	req := Request{Script: ex.Command, Cwd: cwd, Home: ExampleHome, Workspace: ExampleCwd,
		Channel: def.channel, Sender: def.sender, Reason: ex.Reason}
	if ex.Channel != "" {
		req.Channel = ex.Channel
	}
	if ex.Sender != "" {
		req.Sender = ex.Sender
	}
	req.Level = upper.LevelFor(req.Channel, req.Sender)
	if ex.Level != nil && *ex.Level < req.Level {
		req.Level = *ex.Level
	}
	res, err := upper.EvaluateRequest(context.Background(), req, nil)
	return res, err == nil
}

var plainWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`) })

// shellJoin writes words as a command line, quoting where needed.
func shellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if plainWord().MatchString(w) {
			out[i] = w
		} else {
			out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// LintLayered lints src as the given layer of a stack, with the layers
// above it (nil when absent): for LayerProject, system and user; for
// LayerUser, system (user is not used); for LayerSystem, neither. It
// reports what Lint reports and, when the file loads, the loosening
// attempts Merge finds in it, as warnings positioned in the file.
func LintLayered(layer Layer, system, user *Policy, name string, src []byte) []Diagnostic {
	diags := Lint(name, src)
	if HasErrors(diags) {
		return diags
	}
	p, err := Parse(name, src)
	if err != nil {
		return diags
	}
	var md []Diagnostic
	switch layer {
	case LayerProject:
		_, md = Merge(system, user, p)
	case LayerUser:
		_, md = Merge(system, p, nil)
		if system != nil {
			md = append(md, userRulesUnderSystem(system, p)...)
		}
	}
	for _, d := range md {
		if d.Pos.File == name {
			diags = append(diags, d)
		}
	}
	sortDiagnostics(diags)
	return diags
}

func sortDiagnostics(diags []Diagnostic) {
	slices.SortStableFunc(diags, func(x, y Diagnostic) int {
		if x.Pos.File != y.Pos.File {
			return strings.Compare(x.Pos.File, y.Pos.File)
		}
		if x.Pos.Line != y.Pos.Line {
			return x.Pos.Line - y.Pos.Line
		}
		return x.Pos.Col - y.Pos.Col
	})
}
