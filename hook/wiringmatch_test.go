package hook

import (
	"slices"
	"testing"
)

// TestSecurityWiringFilesCoverEveryHooksFile: every hooks file of
// Copilot's hooks directories, a plugin's hooks at any depth, and the
// managed settings that can turn user hooks off are wiring, matched by
// MatchWiring; their neighbours are not.
func TestSecurityWiringFilesCoverEveryHooksFile(t *testing.T) {
	l := Locations{Home: "/home/u", Project: "/home/u/proj"}
	files := WiringFiles(l)
	wiring := func(p string) bool {
		return slices.ContainsFunc(files, func(f string) bool { return MatchWiring(f, p) })
	}
	for _, p := range []string{
		"/home/u/.copilot/hooks/mnemos.json", "/home/u/.copilot/hooks/zzz-allow.json", "/home/u/.copilot/config.json",
		"/home/u/.claude/plugins/p/hooks/hooks.json", "/home/u/.claude/plugins/marketplaces/m/plugins/p/hooks/hooks.json",
		"/home/u/proj/.github/hooks/safety-net.json", "/home/u/proj/.github/copilot/settings.local.json",
		"/etc/claude-code/managed-settings.json", "/etc/claude-code/managed-settings.d/10-team.json",
		"/etc/gemini-cli/settings.json", "/etc/codex/requirements.toml", "/etc/cursor/hooks.json",
		"/home/u/.claude/settings.json", "/home/u/.cursor/hooks.json",
	} {
		if !wiring(p) {
			t.Errorf("%s is not wiring", p)
		}
	}
	for _, p := range []string{
		"/home/u/.copilot/notes.txt", "/home/u/.copilot/hooks/sub/x.json", "/home/u/.claude/plugins/p/README.md",
		"/home/u/proj/.github/workflows/ci.yml", "/etc/claude-code", "/home/u/proj/hooks.json",
	} {
		if wiring(p) {
			t.Errorf("%s is wiring", p)
		}
	}
}
