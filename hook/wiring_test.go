package hook

import (
	"slices"
	"testing"
)

func TestWiringFilesNameEveryAgentsSettings(t *testing.T) {
	l := Locations{Home: "/home/u", Project: "/home/u/proj", MnemosConfig: "/home/u/.config/mnemos"}
	got := WiringFiles(l)
	for _, want := range []string{
		"/home/u/.claude/settings.json", "/home/u/proj/.claude/settings.json",
		"/home/u/.gemini/settings.json", "/home/u/.cursor/hooks.json",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("WiringFiles lacks %s: %v", want, got)
		}
	}
}
