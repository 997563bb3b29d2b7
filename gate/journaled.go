package gate

import (
	"fmt"
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
	cd.dropsSwept = d.swept
	if d.what == "" {
		if journaled && len(d.swept) > 0 && cd.Outcome == policy.Allow {
			cd.Reason += "; the journal does not keep what it removes in " + sweptList(d.swept) + " (journal: exclude)"
		}
		return
	}
	// The reason the policy gave an undoable rule that stood aside, which
	// says the journal keeps what it changes.
	undoableReason := d.rule != "" && cd.Policy != nil && cd.Reason == cd.Policy.Reason
	switch {
	case d.always:
		if cd.Outcome == policy.Allow || undoableReason {
			cd.Outcome, cd.DecidedBy = policy.Ask, string(policy.ByFloor)
			cd.Reason = d.what + ": a person looks first at every level, whatever the journal keeps"
		}
	case journaled && d.kept && lvl < policy.Full:
		if cd.Outcome == policy.Allow && !d.few {
			cd.Outcome, cd.DecidedBy = policy.Ask, string(policy.ByFloor)
			cd.Reason = d.what + ": the journal keeps it (`mnemos undo --last` brings it back after it runs), and below level full a person looks first"
		}
	case journaled && d.kept:
		if cd.Outcome == policy.Allow && !strings.Contains(cd.Reason, "mnemos undo") {
			if len(d.swept) > 0 {
				cd.Reason += "; " + d.what + " (the journal keeps it: `mnemos undo --last` brings it back, but not what it removes in " + sweptList(d.swept) + ", which the journal excludes)"
			} else {
				cd.Reason += "; " + d.what + " (the journal keeps it: `mnemos undo --last` brings it back)"
			}
		}
	case journaled && d.rule != "":
		// An undoable rule the journal cannot stand for: it asks at
		// every level, saying what the journal does not keep.
		if cd.Outcome == policy.Allow || undoableReason {
			cd.Outcome, cd.DecidedBy = policy.Ask, string(policy.ByRule)
			cd.Reason = fmt.Sprintf("rule %q asks: it %s, which the journal does not keep (journal: exclude): `mnemos undo` could not bring them back", d.rule, strings.TrimPrefix(d.what, "it "))
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
	cd.Drops, cd.dropsKept, cd.dropsAlways, cd.dropsUnkept = d.what, journaled && d.kept && !d.always, d.always, d.unkept
	// Nothing remembered makes it run: it asks each time (the card
	// offers no --remember).
	cd.dropsAsks = d.always || !(journaled && d.kept) || lvl < policy.Full && !d.few
}

// sweptList names up to three excluded directories.
func sweptList(dirs []string) string {
	const most = 3
	if len(dirs) > most {
		return strings.Join(dirs[:most], ", ") + " ..."
	}
	return strings.Join(dirs, ", ")
}

// DropsKept reports whether the journal keeps all the work c drops (Drops).
func (c CommandDecision) DropsKept() bool { return c.dropsKept }

// metaDrops is the key of Details.Meta that keeps the card's lines for
// the work the request drops (dropLines).
const metaDrops = "drops"

// metaDropsAsk is the key of Details.Meta that says why nothing
// remembered would stop a request from asking: every command of it that
// asks drops work that asks each time (dropsAsks). Its card offers no
// --remember (RememberChoices) and no contained work.
const metaDropsAsk = "drops_ask"

// dropsAskAnyway says why nothing remembered stops dec from asking, ""
// when something could.
func dropsAskAnyway(dec *Decision) string {
	why := ""
	for _, c := range dec.Commands {
		if c.Outcome != policy.Ask {
			continue
		}
		if c.Drops == "" || !c.dropsAsks {
			return ""
		}
		if why != "" {
			continue
		}
		why = c.Text + ": " + c.Drops + "; "
		switch {
		case c.dropsAlways:
			why += "it asks at every level"
		case dec.Journaled && c.dropsKept:
			why += "below level full it asks each time"
		case dec.Journaled:
			why += "the journal does not keep it, so it asks at every level"
		default:
			why += "without the journal it asks at every level"
		}
	}
	if why == "" {
		return ""
	}
	return approvals.Printable(why + ", whatever a grant, a rule or --remember contained says: approve it once")
}

// dropLines are the card's lines for the commands of an asking decision
// that drop work: what, and whether `mnemos undo` will bring it back.
func dropLines(dec *Decision) []string {
	var out []string
	for _, c := range dec.Commands {
		if c.Drops == "" || c.Outcome != policy.Ask {
			continue
		}
		l := "drops work: " + c.Text + ": " + c.Drops + "; no journal keeps it"
		notKept := ""
		if len(c.dropsSwept) > 0 {
			notKept = " (not what it removes in " + sweptList(c.dropsSwept) + ", which the journal excludes: their tools make them again)"
		}
		switch {
		case dec.Journaled && c.dropsKept && c.dropsAsks:
			l = "drops work: " + c.Text + ": " + c.Drops + "; the journal keeps it" + notKept + ": after it runs, `mnemos undo --last` brings it back (the run prints its id); below level full it asks each time"
		case dec.Journaled && c.dropsKept:
			l = "drops work: " + c.Text + ": " + c.Drops + "; the journal keeps it" + notKept + ": after it runs, `mnemos undo --last` brings it back (the run prints its id)"
		case c.dropsAlways:
			l = "drops work: " + c.Text + ": " + c.Drops + "; a person looks first at every level, whatever the journal keeps"
		case dec.Journaled && c.dropsUnkept != "":
			l = "drops work: " + c.Text + ": " + c.Drops + "; the journal cannot keep it all (" + c.dropsUnkept + "): `mnemos undo` could not bring it back"
		case dec.Journaled:
			l = "drops work: " + c.Text + ": " + c.Drops + "; the journal does not keep it (journal: exclude): `mnemos undo` could not bring it back"
		}
		if l = approvals.Printable(l); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}
