package vaglio

import (
	"slices"
	"strings"
	"testing"
)

// TestForbiddenPatterns: the exported list is the guard's own tables, in
// the order it checks them, and a caller cannot change them through it.
func TestForbiddenPatterns(t *testing.T) {
	rules, devices := forbiddenRules(), deviceRules()
	got := ForbiddenPatterns()
	if len(got) != len(rules)+len(devices) {
		t.Fatalf("%d patterns, want %d", len(got), len(rules)+len(devices))
	}
	for i, r := range append(rules[:], devices[:]...) {
		g := got[i]
		if g.Pattern != r.pattern || g.Why != r.why || strings.Join(g.Except, " ") != strings.Join(strings.Fields(r.except), " ") ||
			g.PublicSSH != r.publicSSH || g.NotRootHome != r.notRootHome {
			t.Errorf("%d: %+v, want %+v", i, g, r)
		}
	}
	got[0].Pattern = "/changed"
	if slices.ContainsFunc(ForbiddenPatterns(), func(p ForbiddenPattern) bool { return p.Pattern == "/changed" }) {
		t.Error("a change to the returned list reached the guard's")
	}
}
