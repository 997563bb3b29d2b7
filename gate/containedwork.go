package gate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
)

// Contained work at supervised. The default rule "contained work" lets
// code the sandbox contains run without asking at level full; at
// supervised such a command asks, and a person who approves it with
// --remember contained stops being asked about contained work in that
// workspace for the agent's session: a session rule (it always ends,
// within approvals.MaxSessionRuleLife) whose conditions are the field
// sandbox being "contained" and the field workspace being the request's.
// It is kept with the session rules, its prefix a word no command can
// have (containedMarker, holding a NUL), so that it is listed by grants
// list, revoked by grants revoke rN and never matches a command by its
// words.

// containedMarker is the first word of a contained-work session rule's
// prefix; the second is the workspace.
const containedMarker = "\x00contained"

// containedPin is the pin such a rule carries: it binds no program, since
// what it allows is whatever the sandbox contains.
const containedPin = "contained work"

// metaContained is the key of Details.Meta that records, for a request
// that is contained work, its workspace.
const metaContained = "contained"

// ContainedWork returns the workspace of a request that is contained
// work, and whether it is: approving it with Remember "contained" may
// then stop asking about contained work there for its session. Channels
// read it to offer that choice.
func ContainedWork(p approvals.Pending) (string, bool) {
	ws := p.Details.Meta[metaContained]
	return ws, ws != ""
}

// ContainedWorkspace returns the workspace of a contained-work session
// rule, and whether it is one.
func ContainedWorkspace(r approvals.SessionRule) (string, bool) {
	if len(r.ArgvPrefix) == 2 && r.ArgvPrefix[0] == containedMarker {
		return r.ArgvPrefix[1], true
	}
	return "", false
}

// splitContained separates the contained-work session rules.
func splitContained(rs []approvals.SessionRule) (prefix, contained []approvals.SessionRule) {
	for _, r := range rs {
		if _, ok := ContainedWorkspace(r); ok {
			contained = append(contained, r)
		} else {
			prefix = append(prefix, r)
		}
	}
	return prefix, contained
}

// containedPolicy is a policy with one allow rule for each contained-work
// session rule.
func containedPolicy(rs []approvals.SessionRule) (*policy.Policy, error) {
	var b strings.Builder
	b.WriteString("rules:\n")
	for _, r := range rs {
		ws, _ := ContainedWorkspace(r)
		name, _ := json.Marshal(fmt.Sprintf("%s: contained work in %s (approval %s, until %s)", r.Label(), ws, r.Approval, r.ExpiresAt.Local().Format("15:04")))
		w, _ := json.Marshal(ws)
		fmt.Fprintf(&b, "  - name: %s\n    action: allow\n    conditions:\n      sandbox: {equals: contained}\n      workspace: {equals: %s}\n", name, w)
	}
	return policy.Parse("session rules", []byte(b.String()))
}

// containedRequest reports whether every command of a decision that asks
// is contained work, and the run reaches no network: approving it may
// then remember contained work for the session.
func (g *Gate) containedRequest(dec *Decision) bool {
	if !dec.Sandboxed || len(dec.Reach) > 0 {
		return false
	}
	asking := false
	for _, c := range dec.Commands {
		if c.Outcome != policy.Ask {
			continue
		}
		if c.Policy == nil || !c.Policy.Contained || c.DecidedBy != string(policy.ByTable) && c.DecidedBy != string(policy.ByDefaults) {
			return false
		}
		asking = true
	}
	if !asking {
		return false
	}
	_, further := g.runReachesFurther(dec)
	return !further
}

// planContained is the concession of --remember contained: one session
// rule for contained work in the request's workspace.
func planContained(p approvals.Pending, o ApproveOptions, now time.Time) (concession, error) {
	ws, ok := ContainedWork(p)
	if !ok {
		return concession{}, errors.New("--remember contained is for contained work (code that runs under the sandbox with no network, writing only the workspace and temp); this request reaches further: approve it once, or with --remember session or permanent")
	}
	if len(o.Prefixes) > 0 || o.Under != "" {
		return concession{}, errors.New("--remember contained covers the workspace's contained work: --prefix and --under do not apply")
	}
	end := now.Add(approvals.MaxSessionRuleLife)
	if o.For > 0 {
		if o.For > approvals.MaxSessionRuleLife {
			return concession{}, fmt.Errorf("contained work is remembered for at most %v; give a shorter --for", approvals.MaxSessionRuleLife)
		}
		end = now.Add(o.For)
	}
	return concession{session: p.Details.Session, expires: &end, sessionRules: true,
		rules: []plannedRule{{prefix: []string{containedMarker, ws}, pin: containedPin}}}, nil
}

// containedLine is the card's line offering the concession.
func containedLine(ws string) string {
	return approvals.Printable("contained work: the sandbox holds this command (no network, writes only in " + ws + " and temp) and changes can be undone with `mnemos undo`; --remember contained stops asking about such work here for this session")
}

// metaReach is the key of Details.Meta that keeps the card's lines for
// the paths outside the sandbox the request names (reachLines), so that
// every channel shows them.
const metaReach = "sandbox"

// cardExtras are the card's lines after seed 002's: the paths outside the
// sandbox the request names and, with concession (the command line's
// card, where --remember can be given), the contained-work concession.
func cardExtras(p approvals.Pending, concession bool) []string {
	var out []string
	if s := p.Details.Meta[metaStale]; s != "" {
		// Why it asks again (stale.go).
		out = append(out, s)
	}
	if w := p.Details.Meta[metaWritten]; w != "" {
		// What a file tool writes (written.go).
		out = append(out, strings.Split(w, "\n")...)
	}
	if r := p.Details.Meta[metaReach]; r != "" {
		out = append(out, strings.Split(r, "\n")...)
	}
	if n := p.Details.Meta[metaNested]; n != "" {
		out = append(out, strings.Split(n, "\n")...)
	}
	if d := p.Details.Meta[metaDrops]; d != "" {
		// Work only the journal brings back (dropswork.go).
		out = append(out, strings.Split(d, "\n")...)
	}
	if ws, ok := ContainedWork(p); ok && concession && p.Details.Meta[metaDropsAsk] == "" {
		out = append(out, containedLine(ws))
	}
	return out
}

// recordExtras keeps in a new request's details what cardExtras shows.
func (g *Gate) recordExtras(np *approvals.NewPending, dec *Decision) {
	set := func(k, v string) {
		if np.Details.Meta == nil {
			np.Details.Meta = map[string]string{}
		}
		np.Details.Meta[k] = v
	}
	if lines := reachLines(dec.Reach, dec.Hidden...); len(lines) > 0 {
		set(metaReach, strings.Join(lines, "\n"))
	}
	if lines := nestedLines(dec); len(lines) > 0 {
		set(metaNested, strings.Join(lines, "\n"))
	}
	if lines := dropLines(dec); len(lines) > 0 {
		set(metaDrops, strings.Join(lines, "\n"))
	}
	if why := dropsAskAnyway(dec); why != "" {
		set(metaDropsAsk, why)
	}
	if dec.Unconfined() {
		set(metaOutside, outsideSummary(dec.Reach))
	}
	if g.containedRequest(dec) {
		set(metaContained, dec.Workspace)
	}
}
