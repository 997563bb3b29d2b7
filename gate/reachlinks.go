package gate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/sandbox"
)

// Reaches through links. Landlock grants what a path resolves to when the
// ruleset is built: approving "write /srv/x/w3.txt" grants ~/.bashrc when
// w3.txt is a link to it, before the request or swapped in after the
// approval. So a reach carries the path its name resolves to (the card
// names both: "w3.txt (a link to ~/.bashrc)"); a write whose path resolves
// to what runs later is refused up front, as no policy can grant it (the
// home directory whole, secrets and mnemos's state are refused by
// sandbox.Assess on the resolved path already); the rerun that spends
// the approval's ticket is refused when a path now resolves elsewhere
// than the approved card said; and the run resolves each path again just
// before the sandbox is built, and refuses when it moved since the
// decision.

// reachResolved returns what the need's path resolves to ("" when it
// resolves to itself), or why no policy can grant a write there through
// a link: it runs later (a git hook or configuration, a shell startup file, an agent's
// hooks or MCP servers, one of the workspace's later files the sandbox
// keeps read-only, a PATH directory).
func (g *Gate) reachResolved(n sandbox.Need, spec sandbox.Spec, ws string, res *sandbox.Resolver) (string, string) {
	name := filepath.Clean(n.Path)
	real, _ := res.Real(name)
	resolved := ""
	if real != name {
		resolved = real
	}
	if !n.Write || resolved == "" {
		// A path named as it is already asks as what runs later where
		// it is (classify); only a link hides it.
		return resolved, ""
	}
	home := g.cfg.UserHome
	if !g.runsLater(real, spec, ws, res) {
		return resolved, ""
	}
	what := shownPath(name) + " (a link to " + shownPath(homeShort(real, home)) + ")"
	return resolved, "the sandbox does not let commands write " + what + ": it runs outside the sandbox later (a git hook or configuration, a shell startup file, an agent's hooks or MCP servers, a PATH directory), and no policy can grant it; change it yourself, outside mnemos"
}

// linkNote is what a card adds after a reach's path that is a link.
func (r Reach) linkNote() string {
	if r.Resolved == "" {
		return ""
	}
	return " (a link to " + shownPath(r.Resolved) + ")"
}

// ErrReachMoved is a run refused because a path its decision lets it
// reach resolves elsewhere than when it was decided.
var ErrReachMoved = errors.New("a path outside the sandbox now leads elsewhere")

// reachMoved resolves each path the decision lets the run reach again,
// just before the sandbox grants it, and returns an error when one
// resolves elsewhere than the decision said.
func reachMoved(dec Decision) error {
	var res sandbox.Resolver
	for _, r := range dec.Reach {
		if r.Socket {
			continue
		}
		name := filepath.Clean(r.Path)
		want := r.Resolved
		if want == "" {
			want = name
		}
		if real, _ := res.Real(name); real != want {
			return &SandboxError{Err: fmt.Errorf("%w: %s was decided as %s and now resolves to %s", ErrReachMoved, shownPath(name), shownPath(want), shownPath(real)),
				Hint: "nothing ran; run it again to be asked about where it leads now"}
		}
	}
	return nil
}

// reachAsApproved says why a rerun that spent approval tok must not run:
// a path it reaches is a link whose target the approved card did not
// name (swapped in, or changed, after the approval). "" when every reach
// reads as the card did.
func (g *Gate) reachAsApproved(ctx context.Context, st approvals.Backend, tok string, dec Decision) (string, error) {
	var moved []Reach
	for _, r := range dec.Reach {
		if r.Resolved != "" && !r.Socket {
			moved = append(moved, r)
		}
	}
	if len(moved) == 0 {
		return "", nil
	}
	p, err := st.Get(ctx, tok)
	if err != nil {
		return "", &StateError{Path: g.cfg.Paths.DBFile, Err: err}
	}
	approved := p.Details.Meta[metaReach]
	for _, r := range moved {
		line := reachLines([]Reach{r})[0]
		if !strings.Contains(approved, line) {
			return "approval " + tok + " did not let this run " + r.verb() + " " + shownPath(r.Path) + r.linkNote() +
				": the path leads elsewhere than when it was approved; ask again", nil
		}
	}
	return "", nil
}
