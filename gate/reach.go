package gate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
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
	// Policy is the line that would grant it to every run.
	Policy string `json:"policy"`
}

// decideWithSandbox judges the request against the sandbox mnemos run will
// start, so that nothing is asked that cannot then run: a path the
// commands name that no policy can grant the sandbox (the home directory
// whole, mnemos's own files, a secret, what runs later, a workspace that
// is home) denies the request up front with the hint; one a policy could
// grant makes an allowed request ask, and is recorded in dec.Reach, which
// an approval (its one-shot ticket) or a grant covering the access then
// lets that run reach. A request that runs outside the sandbox, or where
// the kernel confines nothing, is left as decided.
func (g *Gate) decideWithSandbox(req Request, dec *Decision) {
	if req.Unsandboxed || dec.Outcome == policy.Deny {
		return
	}
	home := g.cfg.UserHome
	ws := dec.Workspace
	wsIsHome := home != "" && (ws == filepath.Clean(home) || classify.Within(ws, home))
	var outside []sandbox.Need
	for _, n := range decisionNeeds(req, dec) {
		if !inSandbox(n, ws) {
			outside = append(outside, n)
		}
	}
	if len(outside) == 0 && !wsIsHome {
		return
	}
	st := g.sandboxStatus()
	if !st.Enforced {
		return
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
	var reach []Reach
	for _, f := range sandbox.Assess(sb.spec, home, outside) {
		if f.Never {
			*dec = deny(*dec, "sandbox", f.Line)
			return
		}
		p := f.Need.Path
		if _, err := os.Stat(p); err != nil {
			p = f.Grant
		}
		reach = append(reach, Reach{Path: p, Write: f.Need.Write, Policy: f.Line})
	}
	if len(reach) == 0 {
		return
	}
	dec.Reach = reach
	if dec.Outcome == policy.Allow && !coveredByGrants(dec, reach) {
		dec.Outcome, dec.DecidedBy = policy.Ask, "sandbox"
		dec.Reason = "needs " + describeReach(reach) + ", outside what the sandbox grants: approving lets this run reach it"
		for i := range dec.Commands {
			if c := &dec.Commands[i]; c.Outcome == policy.Allow && namesReach(c, reach) {
				c.Outcome, c.DecidedBy, c.Reason = policy.Ask, "sandbox", dec.Reason
			}
		}
	}
}

// inSandbox reports a need the default sandbox grants whatever the
// policy says: in the workspace or a temp directory, or a read of the
// system's directories.
func inSandbox(n sandbox.Need, ws string) bool {
	if n.Path == "" {
		return true
	}
	p := filepath.Clean(n.Path)
	for _, d := range writableTrees(ws) {
		if classify.Within(d, p) {
			return true
		}
	}
	return !n.Write && sandbox.SystemReadable(p)
}

// coveredByGrants reports whether every reach is a path an access of the
// decision that a grant covered names: the person who granted it meant
// the command to reach it.
func coveredByGrants(dec *Decision, reach []Reach) bool {
	for _, r := range reach {
		ok := false
		for _, c := range dec.Commands {
			if c.Policy == nil {
				continue
			}
			for _, a := range c.Policy.Accesses {
				if a.Grant != nil && (a.Target == r.Path || classify.Within(r.Path, a.Target) || classify.Within(a.Target, r.Path)) {
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

// namesReach reports whether a command names one of the reaches.
func namesReach(c *CommandDecision, reach []Reach) bool {
	if c.Policy == nil {
		return true
	}
	for _, a := range c.Policy.Accesses {
		for _, r := range reach {
			if a.Target == r.Path || classify.Within(r.Path, a.Target) || classify.Within(a.Target, r.Path) {
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
		verb := "read "
		if r.Write {
			verb = "write "
		}
		parts[i] = verb + r.Path
	}
	return strings.Join(parts, ", ")
}

// reachOptions adds the reaches of an allowed request to the sandbox's
// options: the paths its approval or grants let this run read or write.
func reachOptions(o *sandbox.Options, dec Decision) {
	for _, r := range dec.Reach {
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
func reachLines(reach []Reach) []string {
	var out []string
	for _, r := range reach {
		verb := "read"
		if r.Write {
			verb = "write"
		}
		out = append(out, approvals.Printable("outside the sandbox: approving lets this run "+verb+" "+r.Path+"; "+r.Policy))
	}
	return out
}

// decisionNeeds are the paths the decision's commands read or change, as
// the decision classified them (never guessed from other words): each
// access with a known absolute path, and each redirect to or from a file;
// removing or moving a file changes its directory. A command in the
// script of a shell told only to read it (sh -n) needs nothing.
func decisionNeeds(req Request, dec *Decision) []sandbox.Need {
	var needs []sandbox.Need
	for _, c := range dec.Commands {
		if c.Policy == nil || vaglio.NoExec(c.Command) {
			continue
		}
		// Deleting or changing the mode of what does not exist fails by
		// itself: there is nothing for the sandbox to refuse.
		existing := c.Policy.Verb == "delete" || strings.HasPrefix(c.Policy.Verb, "change")
		for _, a := range c.Policy.Accesses {
			if a.Dynamic || a.Glob || !filepath.IsAbs(a.Target) {
				continue
			}
			switch a.Capability {
			case classify.FSRead:
				needs = append(needs, sandbox.Need{Path: a.Target})
			case classify.FSWrite:
				if existing {
					if _, err := os.Lstat(a.Target); err != nil {
						continue
					}
				}
				needs = append(needs, sandbox.Need{Path: a.Target, Write: true})
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
			switch r.Op {
			case ">", ">>", "&>", "&>>", ">|", "<>":
				needs = append(needs, sandbox.Need{Path: filepath.Clean(p), Write: true})
			case "<":
				needs = append(needs, sandbox.Need{Path: filepath.Clean(p)})
			}
		}
	}
	return needs
}
