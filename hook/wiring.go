package hook

import "path/filepath"

// WiringFiles are the settings files, user and project, in which the
// agents keep the hooks that route their commands through mnemos: a
// command an agent runs must never change them (it would unwire the
// gate that judges it).
func WiringFiles(l Locations) []string {
	var out []string
	seen := map[string]bool{}
	// Claude Code's local settings can turn every hook off
	// (disableAllHooks), and Codex's configuration its hooks and sandbox.
	extra := []string{filepath.Join(l.Home, ".claude", "settings.local.json"), filepath.Join(codexHome(l), "config.toml")}
	if l.Project != "" {
		extra = append(extra, filepath.Join(l.Project, ".claude", "settings.local.json"), filepath.Join(l.Project, ".codex", "config.toml"))
	}
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
