package approvals

import (
	"slices"
	"testing"
)

// TestCardTerritoryUnder: a concession whose fs:write grant covers a
// subtree names it in the territory marker, escaped like every field.
func TestCardTerritoryUnder(t *testing.T) {
	c := Card{ActionVerb: "write", TargetSummary: "touch internal/util/a.go (in /w)", CapabilityClass: "fs:write:/w/internal/util/a.go",
		Territory: TerritorySession, Under: "/w/internal"}
	want := []string{"May I write?", "touch internal/util/a.go (in /w)",
		"reversible | class: fs:write:/w/internal/util/a.go [territory: session, under /w/internal/]"}
	if got := RenderCard(c); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	c.Recurrence, c.Under = ShortFrom, "/w/in\nternal"
	if got := RenderCard(c); len(got) != 1 || got[0] != `Write touch internal/util/a.go (in /w) [rev | fs:write:/w/internal/util/a.go] [territory: session, under /w/in\nternal/]` {
		t.Errorf("short form: %q", got)
	}
	p := Pending{Territory: TerritoryPermanent, TerritoryUnder: "/w/x"}
	if p.Card().Under != "/w/x" {
		t.Error("Pending.Card drops the subtree")
	}
}
