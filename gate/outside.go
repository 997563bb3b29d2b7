package gate

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/hook"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
)

// Outside the sandbox. A command an agent runs itself after its hook
// asked mnemos (a hook that cannot route it into mnemos run, an agent's
// own file tools, policy check --unsandboxed) has nothing to confine it:
// the decision is the only barrier. So it is judged from what the sandbox
// would allow, never from lists of what is dangerous: a path it reads or
// changes is allowed without asking only where the sandbox mnemos run
// would start for it lets a confined command reach (reads: the
// workspace, temp, the system's directories, the caches and toolchains it
// grants; writes: the workspace and temp, except what runs later), and
// every other path asks, or is denied where no command mnemos runs may
// ever reach it. The sandbox's own lists (sandbox.DefaultSpec: what runs
// later, the secrets, mnemos's files) are the only lists: the same
// sandbox.Assess that tells mnemos run what its sandbox refuses says
// here what asks.
//
// Escalations. A write no sandbox can grant (a shell startup file, a PATH
// directory, the home directory whole) or one into what runs later (a
// grant there would let every later run plant code) is not refused: the
// request asks with a card that says it runs OUTSIDE the sandbox and what
// it changes that runs later, its approval is good once (never
// remembered, never contained work, covered by no grant), and under
// mnemos run the run that spends it starts unconfined. The guard's
// denials, and a path the sandbox protects, stay denials.

// decideOutside judges the paths outside the sandbox's default grants
// (outside) that a request running outside any sandbox names.
func (g *Gate) decideOutside(req Request, dec *Decision, outside []sandbox.Need) {
	if len(outside) == 0 {
		return
	}
	ws := dec.Workspace
	sb, err := g.sandboxSpec(req, *dec, RunOptions{})
	if err != nil {
		// No sandbox to compare with: every path outside asks, once.
		var reach []Reach
		for _, n := range outside {
			reach = append(reach, Reach{Path: n.Path, Write: n.Write, Once: true,
				Policy: "the sandbox that would tell what a confined command may reach cannot be built here: " + err.Error()})
		}
		g.askForReach(dec, reach)
		return
	}
	// A directory that holds a secret or mnemos's own files, read by
	// anything but a lister of names, even where the sandbox grants the
	// directory entry by entry (~/.cache): nothing would hide them.
	for _, n := range outside {
		if n.Write {
			continue
		}
		if d := sb.spec.Holds(n.Path); d != "" && !onlyListsNames(dec, n.Path) {
			*dec = deny(*dec, "sandbox", "reads "+shownPath(homeShort(n.Path, g.cfg.UserHome))+", which holds "+
				shownPath(homeShort(d, g.cfg.UserHome))+" (a secret or mnemos's own files): a command that runs outside the sandbox never reads a directory that holds them; name the files it needs instead")
			return
		}
	}
	var reach []Reach
	refused := sandbox.Assess(sb.spec, g.cfg.UserHome, outside)
	// The kernel's views, which the sandbox grants read-only and no
	// policy widens: a write there changes the running system.
	for _, n := range outside {
		if n.Write && (classify.Within("/proc", n.Path) || classify.Within("/sys", n.Path)) {
			refused = append(refused, sandbox.Refusal{Need: n, Kind: sandbox.Whole, Never: true,
				Line: "the sandbox keeps the kernel's views read-only, and no policy can grant them"})
		}
	}
	// A write to what runs later that the sandbox would let through
	// (a nested repository's hooks, which only its end-of-run scan
	// catches): outside it, nothing would.
	var res sandbox.Resolver
	for _, n := range outside {
		if n.Write && !slices.ContainsFunc(refused, func(f sandbox.Refusal) bool { return f.Need == n }) {
			if real, _ := res.Real(filepath.Clean(n.Path)); g.runsLater(real, sb.spec, ws, &res) {
				refused = append(refused, sandbox.Refusal{Need: n, Kind: sandbox.RunsLater, Never: true,
					Line: shownPath(homeShort(n.Path, g.cfg.UserHome)) + " runs later, outside mnemos"})
			}
		}
	}
	for _, f := range refused {
		if f.Kind == sandbox.Protected && (f.Need.Write || !onlyListsNames(dec, f.Need.Path)) {
			*dec = deny(*dec, "sandbox", f.Line+"; this command would run outside the sandbox, where nothing else keeps it out")
			return
		}
		if r, never, ok := g.escalation(dec, f, sb.spec, ws); ok {
			if never != "" {
				*dec = deny(*dec, "sandbox", never)
				return
			}
			reach = append(reach, r)
			continue
		}
		// The agent runs it itself: no sandbox section applies, only
		// an approval or a grant.
		line := "nothing confines this command, which runs outside the sandbox; approving with --remember grants it to later ones"
		if f.Never {
			line = "nothing confines this command, which runs outside the sandbox, and no grant covers it"
		}
		reach = append(reach, Reach{Path: f.Need.Path, Write: f.Need.Write, Once: f.Never, Policy: line})
	}
	for i := range reach {
		if real, _ := res.Real(filepath.Clean(reach[i].Path)); real != filepath.Clean(reach[i].Path) {
			reach[i].Resolved = homeShort(real, g.cfg.UserHome)
		}
	}
	g.askForReach(dec, reach)
}

// escalation returns, for a write the sandbox refuses, the reach of an
// escalation when no policy can grant it (f.Never) or it lands in what
// runs later: good for one approved run, outside the sandbox. never,
// when set, says why it is denied instead: the path comes from a
// variable of the inherited environment, which neither the command's
// words nor its card show (GIT_TRACE=~/.bashrc git status).
func (g *Gate) escalation(dec *Decision, f sandbox.Refusal, spec sandbox.Spec, ws string) (r Reach, never string, ok bool) {
	if !f.Need.Write {
		return Reach{}, "", false
	}
	var res sandbox.Resolver
	real, _ := res.Real(filepath.Clean(f.Need.Path))
	later := f.Kind == sandbox.RunsLater || g.runsLater(real, spec, ws, &res)
	if !f.Never && !later {
		return Reach{}, "", false
	}
	if name := g.inheritedNaming(f.Need.Path); name != "" {
		return Reach{}, f.Line + " (the inherited environment's " + name + " names it)", true
	}
	for _, own := range g.cfg.Paths.Protected() {
		if own != "" && classify.Within(real, own) && real != own {
			// A tree written there (cp -r x ~, tar x -C ~/.config)
			// could put its own policy or state in place of mnemos's.
			return Reach{}, "writes into " + shownPath(homeShort(f.Need.Path, g.cfg.UserHome)) + ", which holds mnemos's own files (" +
				shownPath(homeShort(own, g.cfg.UserHome)) + "): nothing mnemos lets through writes there, sandboxed or not; do it yourself, outside mnemos", true
		}
	}
	why := f.Line
	if f.Kind == sandbox.RunsLater {
		// The sandbox's line tells to change it by hand; approving is
		// the other way now.
		why = "the sandbox keeps what runs later read-only to every command it confines"
	}
	if a := installAdvice(dec, f.Need.Path); a != "" {
		why = a
	}
	return Reach{Path: f.Need.Path, Write: true, Once: true, Later: later, Policy: why}, "", true
}

// inheritedNaming returns the name of a variable of the inherited
// environment (not HOME, PATH or the working directory's) whose value,
// or an element of it, is p, or "".
func (g *Gate) inheritedNaming(p string) string {
	if g.cfg.Environ == nil {
		return ""
	}
	p = filepath.Clean(p)
	for _, kv := range g.cfg.Environ() {
		name, v, _ := strings.Cut(kv, "=")
		switch name {
		case "HOME", "PATH", "PWD", "OLDPWD", "TMPDIR":
			continue
		}
		for _, e := range strings.Split(v, ":") {
			if e != "" && filepath.IsAbs(e) && filepath.Clean(e) == p {
				return name
			}
		}
	}
	return ""
}

// runsLater reports whether writing real (a resolved path) writes what
// runs later outside the sandbox: the sandbox's own list for the
// workspace (spec.Later), the home directory's and the system's
// (classify.RunsLater: shell startup files, git's, editors' and build
// tools' configuration, autostart, PATH directories), or an agent's
// hook settings.
func (g *Gate) runsLater(real string, spec sandbox.Spec, ws string, res *sandbox.Resolver) bool {
	if classify.RunsLater(real, g.cfg.UserHome, pathDirs(g.getenv("PATH"))) {
		return true
	}
	for _, l := range spec.Later {
		if rl, _ := res.Real(l); classify.Within(rl, real) {
			return true
		}
	}
	for _, f := range g.wiringFiles(ws) {
		if hook.MatchWiring(f, real) {
			return true
		}
	}
	return false
}

// onlyListsNames reports whether every command of the decision that
// reads p reads only the names and metadata of what it holds (ls, tree,
// du, stat, find: its -exec commands are judged on their own), never its
// files' content.
func onlyListsNames(dec *Decision, p string) bool {
	for _, c := range dec.Commands {
		if c.Policy == nil {
			continue
		}
		for _, a := range c.Policy.Accesses {
			if a.Capability != classify.FSRead || !nested(a.Target, p) {
				continue
			}
			switch c.Command.Name() {
			case "ls", "dir", "vdir", "tree", "du", "stat", "find", "fd", "fdfind", "exa", "eza", "lsd", "realpath", "readlink", "test", "[":
			default:
				return false
			}
		}
	}
	return true
}

// Unconfined reports whether the decision is an escalation: it needs what
// no sandbox can grant, so the run an approval lets through starts
// outside the sandbox.
func (d Decision) Unconfined() bool {
	return slices.ContainsFunc(d.Reach, func(r Reach) bool { return r.Once })
}

// onceReach are the escalation's reaches.
func onceReach(reach []Reach) []Reach {
	var out []Reach
	for _, r := range reach {
		if r.Once {
			out = append(out, r)
		}
	}
	return out
}

// alongside returns a command of an escalation's request that runs code
// (or reaches the network) without naming what needs the escalation:
// the approval would let it run unconfined too.
func alongside(dec *Decision, reach []Reach) *CommandDecision {
	if len(dec.Commands) == 1 {
		// The command is the escalation itself.
		return nil
	}
	once := onceReach(reach)
	for i := range dec.Commands {
		c := &dec.Commands[i]
		if c.Policy == nil {
			return c
		}
		risky := false
		for _, a := range c.Policy.Accesses {
			if a.Capability == classify.CodeExec || a.Capability == classify.NetworkHTTP || a.Dynamic {
				risky = true
			}
		}
		if risky && !namesReach(c, once) && !signalsReach(c, once) {
			return c
		}
	}
	return nil
}

// signalsReach reports a command that is the signal an escalation names.
func signalsReach(c *CommandDecision, once []Reach) bool {
	for _, r := range once {
		if r.Signal && strings.HasPrefix(r.Path, c.Command.Name()) {
			return true
		}
	}
	return false
}

// escalationReason is the reason of a decision that is an escalation.
func escalationReason(dec *Decision) string {
	once := onceReach(dec.Reach)
	s := "runs OUTSIDE the sandbox if approved: it would " + describeReach(once) + ", which no sandbox can grant"
	if slices.ContainsFunc(once, func(r Reach) bool { return r.Later }) {
		s += " (what runs later, outside mnemos)"
	}
	if dec.Sandboxed {
		return s + "; an approval lets this one run start unconfined, once, and is never remembered"
	}
	return s + "; an approval is good once and never remembered"
}

// metaOutside is the key of Details.Meta that marks an escalation's
// request: approving it remembers nothing.
const metaOutside = "outside"

// onceOnly returns why an approval of p may not be remembered: it is an
// escalation (outside.go).
func onceOnly(p approvals.Pending) string {
	if p.Details.Meta[metaOutside] == "" {
		return ""
	}
	return "this request runs outside the sandbox (" + p.Details.Meta[metaOutside] + "): it is approved once, never remembered; approve it without --remember, --for, --prefix or --under"
}

// outsideSummary is what metaOutside keeps: the reaches of the escalation.
func outsideSummary(reach []Reach) string {
	var parts []string
	for _, r := range reach {
		if r.Once {
			parts = append(parts, r.verb()+" "+r.Path)
		}
	}
	return strings.Join(parts, ", ")
}

// escalationAllowed reports whether an allowed decision that is an
// escalation was let through by a person's approval of it (a ticket,
// or the agent's own prompt through a hook ticket): nothing else lets it
// run unconfined.
func escalationAllowed(dec Decision) bool {
	return dec.Outcome == policy.Allow && dec.Unconfined() && dec.Ticket != ""
}
