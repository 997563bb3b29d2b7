package hook

import (
	"path"
	"path/filepath"
	"strings"
)

// WiringFiles are the settings files, user, project and system-wide, in
// which the agents keep the hooks that route their commands through
// mnemos, or settings that turn hooks off: a command an agent runs must
// never change them (it would unwire the gate that judges it).
//
// An entry may be a pattern: "*" matches within one path element, "**"
// any number of whole elements (MatchWiring).
func WiringFiles(l Locations) []string {
	var out []string
	seen := map[string]bool{}
	// Claude Code's local settings can turn every hook off
	// (disableAllHooks), and Codex's configuration its hooks and sandbox.
	extra := []string{filepath.Join(l.Home, ".claude", "settings.local.json"), filepath.Join(codexHome(l), "config.toml")}
	if l.Home != "" || l.getenv("COPILOT_HOME") != "" {
		// Copilot runs every hooks file of its hooks directory, and its
		// configuration holds hooks inline (and disableAllHooks).
		extra = append(extra, filepath.Join(copilotHome(l), "hooks", "*.json"), filepath.Join(copilotHome(l), "config.json"))
	}
	if l.Home != "" {
		// A plugin's hooks run at every tool call, as mnemos's do.
		extra = append(extra, filepath.Join(l.Home, ".claude", "plugins", "**", "hooks", "hooks.json"))
	}
	if l.Project != "" {
		extra = append(extra, filepath.Join(l.Project, ".claude", "settings.local.json"), filepath.Join(l.Project, ".codex", "config.toml"),
			filepath.Join(l.Project, ".github", "hooks", "*.json"),
			filepath.Join(l.Project, ".github", "copilot", "settings.json"), filepath.Join(l.Project, ".github", "copilot", "settings.local.json"))
	}
	// Managed and system settings, which override the user's: Claude
	// Code's (allowManagedHooksOnly, disableAllHooks), Gemini CLI's,
	// Codex's requirements (allow_managed_hooks_only), Cursor's
	// enterprise hooks.
	extra = append(extra, "/etc/claude-code/managed-settings.json", "/etc/claude-code/managed-settings.d/*.json",
		"/etc/gemini-cli/settings.json", "/etc/gemini-cli/system-defaults.json",
		"/etc/codex/requirements.toml", "/etc/codex/managed_config.toml", "/etc/cursor/hooks.json")
	for _, a := range Agents() {
		if a.config.files == nil {
			continue
		}
		for _, f := range a.config.files(l) {
			if f != "" && !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	for _, f := range extra {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// MatchWiring reports whether the clean absolute path p is the file an
// entry of WiringFiles names, or one its pattern matches: "*" matches
// within one path element, "**" any number of whole elements.
func MatchWiring(entry, p string) bool {
	if !strings.ContainsRune(entry, '*') {
		return entry == p
	}
	return matchElems(strings.Split(entry, "/"), strings.Split(p, "/"))
}

func matchElems(pat, elems []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(elems); i++ {
				if matchElems(pat[1:], elems[i:]) {
					return true
				}
			}
			return false
		}
		if len(elems) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], elems[0]); !ok || err != nil {
			return false
		}
		pat, elems = pat[1:], elems[1:]
	}
	return len(elems) == 0
}
