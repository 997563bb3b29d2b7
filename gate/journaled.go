package gate

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
)

// Whether the journal keeps what a request changes in its workspace
// (issue 21). It does when the policy turns it on (journal: enabled),
// the kernel lets mnemos trap the changes (Config.Watch on the sandbox's
// status), and the commands run under the sandbox: not a hook's command
// that runs outside it, not an escalation approved to run unconfined.
// Only then is a command contained work (policy's field sandbox), does
// an undoable rule let it run, and may work a command drops run at full
// (dropswork.go). The decision records it (Decision.Journaled): a run
// decided with the journal must run with it, or not at all.

// Journal is the journal's settings for this gate: the policy's (a stack
// built by policy.Merge combines its layers), made stricter by the
// --policy file's (Config.Extra): turned off, a smaller big_deletion,
// fewer directories excluded.
func (g *Gate) Journal() policy.Journal {
	j := g.cfg.Policy.Journal
	if g.cfg.Extra != nil {
		j = j.Narrowed(g.cfg.Extra.Journal)
	}
	return j
}

// CanJournal reports whether this machine lets the journal keep what a
// confined command changes: the sandbox is enforced and Config.Watch says
// the kernel can trap the changes.
func (g *Gate) CanJournal() bool { return g.canWatch() }

// canWatch reports whether the kernel lets mnemos trap what a confined
// command changes: the sandbox is enforced and Config.Watch says so.
func (g *Gate) canWatch() bool {
	if g.cfg.Watch == nil {
		return false
	}
	st := g.sandboxStatus()
	return st.Enforced && g.cfg.Watch(st)
}

// journaled reports whether the journal is on for a sandboxed request in
// workspace ws: the policy turns it on, the kernel can trap the changes,
// and ws is a workspace the journal keeps (an absolute directory, not /
// and not the home directory or one holding it).
func (g *Gate) journaled(ws string) bool {
	if ws == "" || !filepath.IsAbs(ws) || filepath.Clean(ws) == "/" {
		return false
	}
	if h := g.cfg.UserHome; h != "" && classify.Within(ws, h) {
		return false
	}
	return g.Journal().On && g.canWatch()
}

// dropFloor applies what a command that drops work gets (dropswork.go)
// to its decision cd, decided at level lvl with the journal on or off.
func dropFloor(cd *CommandDecision, d dropped, lvl policy.Level, journaled bool) {
	if d.what == "" {
		return
	}
	switch {
	case journaled && d.kept && lvl < policy.Full:
		if cd.Outcome == policy.Allow {
			cd.Outcome, cd.DecidedBy = policy.Ask, string(policy.ByFloor)
			cd.Reason = d.what + ": the journal keeps it (`mnemos undo --last` brings it back after it runs), and below level full a person looks first"
		}
	case journaled && d.kept:
		if cd.Outcome == policy.Allow && !strings.Contains(cd.Reason, "mnemos undo") {
			cd.Reason += "; " + d.what + ", which the journal keeps: `mnemos undo --last` brings it back"
		}
	default:
		if cd.Outcome == policy.Allow {
			cd.Outcome, cd.DecidedBy = policy.Ask, string(policy.ByFloor)
			cd.Reason = d.what + ", and no journal keeps it: `mnemos undo` could not bring it back"
			switch {
			case journaled && d.unkept != "":
				cd.Reason = d.what + ", and the journal cannot keep it all (" + d.unkept + "): `mnemos undo` could not bring it back"
			case journaled:
				cd.Reason = d.what + ", in a directory the journal does not keep: `mnemos undo` could not bring it back"
			}
		}
	}
	cd.Drops, cd.dropsKept = d.what, journaled && d.kept
}

// metaDrops is the key of Details.Meta that keeps the card's lines for
// the work the request drops (dropLines).
const metaDrops = "drops"

// dropLines are the card's lines for the commands of an asking decision
// that drop work: what, and whether `mnemos undo` will bring it back.
func dropLines(dec *Decision) []string {
	var out []string
	for _, c := range dec.Commands {
		if c.Drops == "" || c.Outcome != policy.Ask {
			continue
		}
		l := "drops work: " + c.Text + ": " + c.Drops + "; no journal keeps it"
		if dec.Journaled && c.dropsKept {
			l = "drops work: " + c.Text + ": " + c.Drops + "; the journal keeps it: after it runs, `mnemos undo --last` brings it back (the run prints its id); below level full it asks each time"
		}
		if l = approvals.Printable(l); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}
