package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
)

// Approvals that go stale. An approval binds what its words run besides
// the words (binding.go): the program PATH finds, the script or makefile,
// package.json for npm. When one of those changes after the approval was
// given, often because an earlier approved npm install rewrote
// package.json, the rerun has another request key: the approval's ticket
// (or the rule it remembered, pinned to what ran) does not let it
// through, and it asks again. That is what keeps an approval to what was
// approved, and it stays so; what was missing is the word why. So a new
// request records, beside its card, the key of its words alone (without
// what they run) and a digest of each fact it binds, and when an approval
// of the same words, directory and identity still stands unused (its
// ticket unspent, or the rule it remembered still in force), the new
// card says which of those facts changed since:
//
//	asked again: package.json changed since approval ID was given

// Keys of Details.Meta.
const (
	// metaWords is the request key of the words alone (Request.wordsKey).
	metaWords = "words"
	// metaFacts lists the facts the request binds, one "SUBJECT\tDIGEST"
	// a line (factLines).
	metaFacts = "bound_facts"
	// metaStale is the card's line saying why the request asks again.
	metaStale = "asked_again"
)

// staleLookback bounds how many recent requests are searched for an
// approval of the same words.
const staleLookback = 200

// wordsKey is the request's key without what it binds beyond its words.
func (r Request) wordsKey() string {
	return approvals.RequestKey(approvals.KeyInput{Channel: r.Channel, Sender: r.Sender, Cwd: r.Cwd, Argv: r.Argv,
		Context: r.Context, Scope: r.Scope})
}

// factSubject is what a fact is about, without its value: "file PATH",
// "listing DIR", "write PATH", "patch", "exe NAME" or "env NAME".
func factSubject(f string) string {
	kind, rest, _ := strings.Cut(f, " ")
	switch kind {
	case "file", "listing", "write":
		if i := strings.LastIndexByte(rest, ' '); i >= 0 {
			return kind + " " + rest[:i]
		}
	case "exe", "env":
		n, _, _ := strings.Cut(rest, " ")
		return kind + " " + n
	case "patch":
		return kind
	}
	return f
}

// factLines are the facts as metaFacts keeps them: each one's subject
// and a digest of the whole fact (never a value: an environment
// variable's is a digest already).
func factLines(facts []string) string {
	lines := make([]string, 0, len(facts))
	for _, f := range facts {
		sum := sha256.Sum256([]byte(f))
		lines = append(lines, factSubject(f)+"\t"+hex.EncodeToString(sum[:8]))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// changedSubjects are the subjects whose facts differ between two
// metaFacts values, in order. Subjects bound only now (the programs a
// changed script runs) are named only when none bound before changed:
// they follow from that change.
func changedSubjects(old, cur string) []string {
	parse := func(s string) map[string]string {
		m := map[string]string{}
		for _, l := range strings.Split(s, "\n") {
			if subj, d, ok := strings.Cut(l, "\t"); ok {
				m[subj] = d
			}
		}
		return m
	}
	o, c := parse(old), parse(cur)
	var out, added []string
	for subj, d := range c {
		if od, ok := o[subj]; !ok {
			added = append(added, subj)
		} else if od != d {
			out = append(out, subj)
		}
	}
	for subj := range o {
		if _, ok := c[subj]; !ok {
			out = append(out, subj)
		}
	}
	if len(out) == 0 {
		out = added
	}
	slices.Sort(out)
	return out
}

// describeSubjects names changed facts for a person: a file by its path
// (relative to cwd when inside it), a program by name, a variable by name.
func describeSubjects(subjects []string, cwd string) string {
	names := make([]string, 0, len(subjects))
	for _, s := range subjects {
		kind, rest, _ := strings.Cut(s, " ")
		switch kind {
		case "file":
			if rel, err := filepath.Rel(cwd, rest); err == nil && classify.Within(cwd, rest) {
				rest = rel
			}
			names = append(names, rest)
		case "write":
			if rel, err := filepath.Rel(cwd, rest); err == nil && classify.Within(cwd, rest) {
				rest = rel
			}
			names = append(names, "what is written to "+rest)
		case "patch":
			names = append(names, "the patch")
		case "listing":
			if rel, err := filepath.Rel(cwd, rest); err == nil && classify.Within(cwd, rest) {
				rest = rel
			}
			names = append(names, "the files in "+rest)
		case "exe":
			names = append(names, "the program "+rest+" (what PATH finds)")
		case "env":
			names = append(names, "the environment variable "+rest)
		default:
			names = append(names, s)
		}
	}
	switch len(names) {
	case 0:
		return "what it runs"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// noteStale records in a new request's details the key of its words and
// the facts it binds and, when an approval of the same words still
// stands unused, the card's line saying what changed since.
func (g *Gate) noteStale(ctx context.Context, st approvals.Backend, req Request, np *approvals.NewPending, now time.Time) error {
	if req.bound == nil {
		return nil
	}
	if np.Details.Meta == nil {
		np.Details.Meta = map[string]string{}
	}
	words, facts := req.wordsKey(), factLines(req.bound.get())
	np.Details.Meta[metaWords], np.Details.Meta[metaFacts] = words, facts
	recent, err := st.List(ctx, approvals.ListOptions{IncludeResolved: true, Limit: staleLookback}, now)
	if err != nil {
		return err
	}
	for _, p := range recent {
		if p.Status != approvals.StatusApproved || p.Details.Meta[metaWords] != words || p.RequestKey == np.RequestKey {
			continue
		}
		stands, err := g.stillStands(ctx, st, p, now)
		if err != nil {
			return err
		}
		if !stands {
			continue
		}
		changed := changedSubjects(p.Details.Meta[metaFacts], facts)
		np.Details.Meta[metaStale] = approvals.Printable("asked again: " + describeSubjects(changed, req.Cwd) +
			" changed since approval " + p.Token + " was given")
		return nil
	}
	return nil
}

// stillStands reports whether an approval would still have let its own
// request through: its ticket unspent, or a rule it remembered still in
// force.
func (g *Gate) stillStands(ctx context.Context, st approvals.Backend, p approvals.Pending, now time.Time) (bool, error) {
	if ts, ok := st.(approvals.TicketState); ok {
		unspent, err := ts.UnspentTicket(ctx, p.RequestKey, p.Token, now)
		if err != nil || unspent {
			return unspent, err
		}
	}
	switch p.Territory {
	case approvals.TerritorySession:
		rs, err := st.ActiveSessionRules(ctx, p.Channel, p.Sender, p.Details.Session, now)
		if err != nil {
			return false, err
		}
		return slices.ContainsFunc(rs, func(r approvals.SessionRule) bool {
			_, contained := ContainedWorkspace(r)
			return r.Approval == p.Token && !contained
		}), nil
	case approvals.TerritoryPermanent:
		for _, r := range g.cfg.Policy.Rules {
			if r.Pin != "" && strings.Contains(r.Name, "(approval "+p.Token+",") {
				return true, nil
			}
		}
	}
	return false, nil
}
