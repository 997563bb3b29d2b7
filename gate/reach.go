package gate

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/later"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
	"github.com/mnemos-dev/mnemos/vaglio"
)

// A Reach is a path outside what the sandbox grants by default that the
// request names: the approval of the request grants it to that one run
// (Write: for changing it), and the card names it.
type Reach struct {
	Path  string `json:"path"`
	Write bool   `json:"write,omitempty"`
	// Resolved is what Path resolves to when a link is in its way: what
	// the sandbox grants (reachlinks.go).
	Resolved string `json:"resolved,omitempty"`
	// Socket: Path is a socket file to connect to (a container engine's).
	Socket bool `json:"socket,omitempty"`
	// Signal: Path names processes the command signals (pkill x, kill
	// 1234), which the sandbox keeps it from reaching.
	Signal bool `json:"signal,omitempty"`
	// Once: no sandbox can grant it (outside.go): the request is an
	// escalation, approved once and run outside the sandbox.
	Once bool `json:"once,omitempty"`
	// Later: Path is what runs later outside the sandbox.
	Later bool `json:"later,omitempty"`
	// Policy is the line that would grant it to every run.
	Policy string `json:"policy"`
}

// decideWithSandbox judges the request against the sandbox mnemos run will
// start, so that nothing is asked that cannot then run: a path the
// commands name that the sandbox protects (a secret, mnemos's own files)
// denies the request up front; one a policy could grant makes an allowed
// request ask, and is recorded in dec.Reach, which an approval (its
// one-shot ticket) or a grant covering the access then lets that run
// reach. A write no sandbox can grant (what runs later, the home
// directory whole, a PATH directory) makes the request an escalation: it
// asks with a card saying it runs outside the sandbox, its approval is
// good once and never remembered, and the run its ticket lets through
// starts unconfined (outside.go). A read no policy can grant (find /, ls
// ~) runs in the sandbox, which hides what it does not grant. A request
// that runs outside the sandbox is judged by decideOutside; where the
// kernel confines nothing, it is left as decided.
func (g *Gate) decideWithSandbox(req Request, dec *Decision) {
	if dec.Outcome == policy.Deny {
		return
	}
	home := g.cfg.UserHome
	ws := dec.Workspace
	// Within cleans both paths: an absolute ws that is the home directory
	// cleaned is within it.
	wsIsHome := home != "" && (classify.Within(ws, home) || !filepath.IsAbs(ws) && ws == filepath.Clean(home))
	trees := sandboxTrees(ws, wsIsHome && req.Unsandboxed)
	// A write in the workspace counts where it lands in what runs later
	// (the sandbox's view keeps it read-only). The PATH directories are
	// read once, at the first write.
	var dirsOnPath []string
	pathRead := false
	writesLater := func(n sandbox.Need) bool {
		if !n.Write {
			return false
		}
		if !pathRead {
			dirsOnPath, pathRead = pathDirs(g.getenv("PATH")), true
		}
		return classify.RunsLater(filepath.Clean(n.Path), home, dirsOnPath) || workspaceLater(ws, n.Path)
	}
	var res sandbox.Resolver
	outside := decisionNeeds(req, dec, func(n sandbox.Need) bool {
		if !inSandbox(n, trees) || writesLater(n) {
			return true
		}
		// Outside the sandbox, no kernel resolves a link to refuse what
		// lies behind it: a path counts where it leads.
		if req.Unsandboxed {
			if real, _ := res.Real(filepath.Clean(n.Path)); real != filepath.Clean(n.Path) {
				return !inSandbox(sandbox.Need{Path: real, Write: n.Write}, trees)
			}
		}
		return false
	})
	if req.Unsandboxed {
		// What its copies and patches produce, which nothing hides.
		produced, unbounded := producedNeeds(req, dec)
		for _, n := range produced {
			if !inSandbox(n, trees) || writesLater(n) {
				outside = append(outside, n)
			}
		}
		if unbounded != "" && dec.Outcome == policy.Allow {
			dec.Outcome, dec.DecidedBy = policy.Ask, "sandbox"
			dec.Reason = unbounded + ", and runs outside the sandbox"
		}
		g.decideOutside(req, dec, outside)
		return
	}
	sockets := engineSockets(dec, g.getenv)
	signals := signalsOut(dec)
	if len(outside) == 0 && len(sockets) == 0 && signals == "" && !wsIsHome {
		return
	}
	st := g.sandboxStatus()
	if !st.Enforced {
		return
	}
	var reach []Reach
	if signals != "" && st.ABI >= 6 {
		reach = append(reach, Reach{Path: signals, Signal: true, Once: true,
			Policy: "the sandbox keeps signals inside it (Landlock scoping), so it cannot reach processes started elsewhere, and no policy changes that"})
	}
	sb, err := g.sandboxSpec(req, *dec, RunOptions{})
	if err != nil {
		var se *SandboxError
		hint := ""
		if errors.As(err, &se) {
			hint = se.Hint
		}
		reason := "the sandbox cannot start here: " + err.Error()
		if hint != "" {
			reason += " (" + hint + ")"
		}
		*dec = deny(*dec, "sandbox", reason)
		return
	}
	for _, f := range sandbox.Assess(sb.spec, home, outside) {
		switch {
		case f.Kind == sandbox.Protected:
			*dec = deny(*dec, "sandbox", f.Line)
			return
		case f.Never && !f.Need.Write:
			// A read-only walk of what no policy grants (find /, ls ~):
			// the sandbox hides what it does not grant, and the card
			// says so.
			if !slices.Contains(dec.Hidden, f.Need.Path) {
				dec.Hidden = append(dec.Hidden, f.Need.Path)
			}
			continue
		}
		// What the path resolves to, which the sandbox would grant.
		if _, never := g.reachResolved(f.Need, sb.spec, ws, &res); never != "" {
			*dec = deny(*dec, "sandbox", never)
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
		p := f.Need.Path
		if _, err := os.Stat(p); err != nil {
			p = f.Grant
		}
		resolved, _ := g.reachResolved(sandbox.Need{Path: p}, sb.spec, ws, &res)
		reach = append(reach, Reach{Path: p, Write: f.Need.Write, Resolved: resolved, Policy: f.Line})
	}
	for _, sock := range sockets {
		if slices.Contains(sb.spec.Sockets, sock) {
			continue
		}
		reach = append(reach, Reach{Path: sock, Socket: true,
			Policy: "the sandbox hides the socket " + sock + " (whoever reaches a container engine's socket controls the machine); to allow it, add to your user policy: sandbox: {sockets: [" + sock + "]}"})
	}
	g.askForReach(dec, reach)
}

// askForReach records the reaches of a decision and makes an allowed
// one ask for them, unless a grant covers every one (never an
// escalation's).
func (g *Gate) askForReach(dec *Decision, reach []Reach) {
	if len(reach) == 0 {
		return
	}
	dec.Reach = reach
	once := dec.Unconfined()
	if once {
		if c := alongside(dec, reach); c != nil {
			// The approval of an escalation lets the whole request run
			// unconfined: nothing else may ride along on it.
			*dec = deny(*dec, "sandbox", "runs outside the sandbox only as a request of its own: "+c.Text+
				" runs code besides what needs to reach "+describeReach(onceReach(reach))+"; run that part on its own, and the rest under the sandbox")
			return
		}
	}
	if dec.Outcome == policy.Allow && (once || !coveredByGrants(dec, reach)) {
		dec.Outcome, dec.DecidedBy = policy.Ask, "sandbox"
		dec.Reason = "needs " + describeReach(reach) + ", outside what the sandbox grants: approving lets this run reach it"
		if once {
			dec.Reason = escalationReason(dec)
		}
		for i := range dec.Commands {
			if c := &dec.Commands[i]; c.Outcome == policy.Allow && namesReach(c, reach) {
				c.Outcome, c.DecidedBy, c.Reason = policy.Ask, "sandbox", dec.Reason
			}
		}
	} else if once && dec.Outcome == policy.Ask {
		// Whatever else asks, the card says it runs outside.
		dec.Reason = escalationReason(dec) + "; " + dec.Reason
	}
}

// sandboxTrees are the trees every sandbox grants for writing, absolute
// and clean, for classify.WithinClean; without the workspace when
// noWorkspace (it is the home directory or holds it, which no sandbox
// grants, and the command runs outside one).
func sandboxTrees(ws string, noWorkspace bool) []string {
	trees := writableTrees(ws) // a new slice, filtered in place
	k := 0
	for i, t := range trees {
		if filepath.IsAbs(t) && !(i == 0 && noWorkspace) {
			trees[k] = filepath.Clean(t)
			k++
		}
	}
	return trees[:k]
}

// installAdvice is what to say of a refusal of path, when a command of
// the decision installs programs there (go install, cargo install, npm
// install -g...): whatever keeps the sandbox from granting it (a PATH
// directory, a directory in home it cannot create), the command cannot
// run here, and what to run instead.
func installAdvice(dec *Decision, path string) string {
	for _, c := range dec.Commands {
		if c.Policy == nil {
			continue
		}
		for _, a := range c.Policy.Accesses {
			if a.Capability != classify.FSWrite || a.Dynamic || !(a.Target == path || classify.Within(a.Target, path)) {
				continue
			}
			if advice := classify.InstallAdvice(c.Command); advice != "" {
				return "the sandbox does not let " + c.Text + " write " + path + ", where it installs programs that run later, outside the sandbox: " + advice
			}
		}
	}
	return ""
}

// inSandbox reports a need the default sandbox grants whatever the
// policy says: in the workspace or a temp directory (trees, the
// workspace's writableTrees, absolute and clean), or a read of the
// system's directories.
func inSandbox(n sandbox.Need, trees []string) bool {
	if n.Path == "" {
		return true
	}
	for _, d := range trees {
		if classify.WithinClean(d, n.Path) { // which cleans n.Path
			return true
		}
	}
	return !n.Write && sandbox.SystemReadable(filepath.Clean(n.Path))
}

// coveredByGrants reports whether every reach is a path an access of the
// decision that a grant covered names: the person who granted it meant
// the command to reach it.
func coveredByGrants(dec *Decision, reach []Reach) bool {
	for _, r := range reach {
		if r.Once {
			return false
		}
		ok := false
		for _, c := range dec.Commands {
			if c.Policy == nil {
				continue
			}
			for _, a := range c.Policy.Accesses {
				if a.Grant != nil && nested(a.Target, r.Path) {
					ok = true
				}
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// nested reports whether one of two paths is the other or lies below it.
func nested(a, b string) bool { return classify.Within(a, b) || classify.Within(b, a) }

// namesReach reports whether a command names one of the reaches.
func namesReach(c *CommandDecision, reach []Reach) bool {
	if c.Policy == nil {
		return true
	}
	for _, a := range c.Policy.Accesses {
		for _, r := range reach {
			if nested(a.Target, r.Path) {
				return true
			}
		}
	}
	for _, rd := range c.Command.Redirects {
		for _, r := range reach {
			if strings.HasSuffix(r.Path, rd.Target.Value) {
				return true
			}
		}
	}
	return false
}

func describeReach(reach []Reach) string {
	parts := make([]string, len(reach))
	for i, r := range reach {
		parts[i] = r.verb() + " " + r.Path + r.linkNote()
	}
	return strings.Join(parts, ", ")
}

func (r Reach) verb() string {
	switch {
	case r.Signal:
		return "signal"
	case r.Socket:
		return "connect to"
	case r.Write:
		return "write"
	}
	return "read"
}

// engineSockets are the sockets of the container engines the commands
// run (docker, podman, nerdctl, their compose tools): DOCKER_HOST's or
// CONTAINER_HOST's unix socket, else the engine's usual one, when it
// exists.
func engineSockets(dec *Decision, getenv func(string) string) []string {
	var out []string
	add := func(p string) {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&os.ModeSocket != 0 && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, c := range dec.Commands {
		switch c.Command.Name() {
		case "docker", "docker-compose", "nerdctl":
			if h, ok := strings.CutPrefix(getenv("DOCKER_HOST"), "unix://"); ok {
				add(h)
				continue
			}
			add("/var/run/docker.sock")
			add("/run/docker.sock")
		case "podman", "podman-compose":
			if h, ok := strings.CutPrefix(getenv("CONTAINER_HOST"), "unix://"); ok {
				add(h)
				continue
			}
			if d := getenv("XDG_RUNTIME_DIR"); d != "" {
				add(filepath.Join(d, "podman", "podman.sock"))
			}
			add("/run/podman/podman.sock")
		}
	}
	return out
}

// signalsOut names a command that signals processes by name or by a
// process id written out (pkill, killall, kill 1234), which the sandbox's
// signal scoping keeps from reaching anything started outside it; a kill
// of a job or of $! (a process the script started) stays inside.
func signalsOut(dec *Decision) string {
	for _, c := range dec.Commands {
		switch name := c.Command.Name(); name {
		case "pkill", "killall", "skill", "slay":
			return name
		case "kill":
			for _, w := range c.Command.Argv[1:] {
				v := w.Value
				if !w.Dynamic && v != "" && v[0] >= '0' && v[0] <= '9' && strings.Trim(v, "0123456789") == "" {
					return "kill " + v
				}
			}
		}
	}
	return ""
}

// reachOptions adds the reaches of an allowed request to the sandbox's
// options: the paths its approval or grants let this run read or write.
func reachOptions(o *sandbox.Options, dec Decision) {
	for _, r := range dec.Reach {
		if r.Once {
			// An escalation runs outside the sandbox (outside.go).
			continue
		}
		if r.Socket {
			o.Sockets = append(o.Sockets, r.Path)
			continue
		}
		if r.Write {
			o.ExtraWrite = append(o.ExtraWrite, r.Path)
		} else {
			o.ExtraRead = append(o.ExtraRead, r.Path)
		}
	}
}

// reachLines are the card's lines for the paths outside the sandbox the
// request names: what approving lets the run reach, and what would grant
// it to every run.
func reachLines(reach []Reach, hidden ...string) []string {
	var out []string
	for _, h := range hidden {
		out = append(out, approvals.Printable("in the sandbox: this run does not see "+h+" whole (no policy can grant it); it reads only what the sandbox grants there, and approving changes nothing about that"))
	}
	for _, r := range reach {
		if r.Once {
			later := ""
			if r.Later {
				later = " (it runs later, outside mnemos)"
			}
			out = append(out, approvals.Printable("runs OUTSIDE the sandbox: approving lets this one run "+r.verb()+" "+r.Path+r.linkNote()+later+" unconfined, once; "+r.Policy))
			continue
		}
		out = append(out, approvals.Printable("outside the sandbox: approving lets this run "+r.verb()+" "+r.Path+r.linkNote()+"; "+r.Policy))
	}
	return out
}

// decisionNeeds are the paths the decision's commands read or change, as
// the decision classified them (never guessed from other words): each
// access with a known absolute path, and each redirect to or from a file;
// removing or moving a file changes its directory. A command in the
// script of a shell told only to read it (sh -n) needs nothing. Only the
// needs keep reports are returned.
func decisionNeeds(req Request, dec *Decision, keep func(sandbox.Need) bool) []sandbox.Need {
	var needs []sandbox.Need
	add := func(n sandbox.Need) {
		if keep(n) {
			needs = append(needs, n)
		}
	}
	for _, c := range dec.Commands {
		if c.Policy == nil || vaglio.NoExec(c.Command) {
			continue
		}
		// Deleting or changing the mode of what does not exist fails by
		// itself: there is nothing for the sandbox to refuse.
		existing := c.Policy.Verb == "delete" || strings.HasPrefix(c.Policy.Verb, "change")
		for _, a := range c.Policy.Accesses {
			if req.Unsandboxed && a.Capability == classify.FSRead && !a.Glob && strings.ContainsAny(a.Target, "*?[") && !exists(a.Target) {
				// A pattern an agent's file tool expands itself (Glob).
				a.Glob = true
			}
			if a.Glob && req.Unsandboxed && filepath.IsAbs(a.Target) {
				// Outside the sandbox nothing hides what a pattern
				// matches: it needs the directory its matches lie below,
				// and each match as it is now (a link among them counts
				// where it leads).
				if a.Capability == classify.FSRead || a.Capability == classify.FSWrite {
					for _, m := range globMatches(a.Target, maxGlobMatches) {
						add(sandbox.Need{Path: m, Write: a.Capability == classify.FSWrite})
					}
				}
				a.Target, a.Glob = globBase(a.Target), false
			}
			if a.Dynamic || a.Glob || !filepath.IsAbs(a.Target) {
				continue
			}
			switch a.Capability {
			case classify.FSRead:
				add(sandbox.Need{Path: a.Target})
			case classify.FSWrite:
				if existing {
					if _, err := os.Lstat(a.Target); err != nil {
						continue
					}
				}
				add(sandbox.Need{Path: a.Target, Write: true})
			}
		}
		if req.Unsandboxed && runsCode(c.Policy) && len(c.Command.Argv) > 0 {
			// Code that nothing confines may do anything with a path it
			// is given: each absolute one outside the system's
			// directories counts as written (outside.go).
			for _, w := range c.Command.Argv[1:] {
				v := w.Value
				if _, after, ok := strings.Cut(v, "="); ok && strings.HasPrefix(v, "-") {
					v = after
				}
				if w.Dynamic || !filepath.IsAbs(v) || strings.HasPrefix(v, "/dev/") {
					continue
				}
				v = filepath.Clean(v)
				add(sandbox.Need{Path: v, Write: !sandbox.SystemReadable(v)})
			}
		}
		for _, r := range c.Command.Redirects {
			if r.Target.Dynamic || r.Target.Value == "" || strings.HasPrefix(r.Target.Value, "/dev/") {
				continue
			}
			p := r.Target.Value
			if !filepath.IsAbs(p) {
				p = filepath.Join(req.Cwd, p)
			}
			switch {
			case r.Writes():
				add(sandbox.Need{Path: filepath.Clean(p), Write: true})
			case r.Op == "<":
				add(sandbox.Need{Path: filepath.Clean(p)})
			}
		}
	}
	return needs
}

// workspaceLater reports a path in one of the workspace's entries that
// run later (package later: the list the sandbox keeps read-only), or in
// its git directory's.
func workspaceLater(ws, p string) bool {
	if !filepath.IsAbs(ws) {
		return false
	}
	rel, ok := strings.CutPrefix(filepath.Clean(p), strings.TrimSuffix(filepath.Clean(ws), "/")+"/")
	if !ok {
		return false
	}
	under := func(rel string, entries []string) bool {
		for _, e := range entries {
			if rel == e || strings.HasPrefix(rel, e+"/") {
				return true
			}
		}
		return false
	}
	if g, ok := strings.CutPrefix(rel, ".git/"); ok && under(g, later.Git()) {
		return true
	}
	return under(rel, later.Workspace())
}

// runsCode reports a command classified as running code.
func runsCode(res *policy.Result) bool {
	for _, a := range res.Accesses {
		if a.Capability == classify.CodeExec {
			return true
		}
	}
	return false
}

// exists reports whether p names something, a link included.
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// maxGlobMatches bounds the matches of one pattern judged outside the
// sandbox; the directory they lie below is judged whatever their number.
const maxGlobMatches = 4096

// globMatches are up to most paths the absolute pattern p matches now.
func globMatches(p string, most int) []string {
	m, err := filepath.Glob(p)
	if err != nil {
		return nil
	}
	// As the shell expands it: a wildcard matches no leading dot.
	pat := strings.Split(p, "/")
	k := 0
	for _, x := range m {
		hidden := false
		for i, e := range strings.Split(x, "/") {
			if i < len(pat) && strings.HasPrefix(e, ".") && !strings.HasPrefix(pat[i], ".") {
				hidden = true
				break
			}
		}
		if !hidden {
			m[k] = x
			k++
		}
	}
	m = m[:k]

	if len(m) > most {
		m = m[:most]
	}
	return m
}

// globBase is the directory every match of the absolute pattern p lies
// below: its elements up to the first that holds a wildcard.
func globBase(p string) string {
	i := strings.IndexAny(p, `*?[\`)
	if i < 0 {
		return p
	}
	return filepath.Dir(p[:i+1])
}

// getenv reads a variable of the environment the command inherits.
func (g *Gate) getenv(k string) string {
	if g.cfg.Environ == nil {
		return ""
	}
	return envValue(g.cfg.Environ(), k)
}
