package later

// Workspace are the entries at the top of a workspace (and, for the
// decision, of any directory below it) that tools read and run later:
// direnv's .envrc, husky's and lefthook's hooks, the editors' task and
// run configurations, dev container definitions, mnemos's own project
// policy, the coding agents' project settings (their hooks, which route
// their commands through mnemos, permissions and MCP servers), and the
// package managers' and version managers' project configuration that
// names a program to run in place of the tool (yarnPath, script-shell, a
// pnpmfile, bun's preload, cargo's runners and linkers, mise's hooks).
// An entry with a slash is a path below the workspace.
func Workspace() []string {
	return []string{".envrc", ".husky", ".vscode", ".idea", ".devcontainer", ".mnemos",
		".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", "lefthook-local.yml", ".lefthook-local.yml", ".lefthook",
		".claude", ".codex", ".gemini", ".cursor", ".amp", ".windsurf", ".continue", ".github/hooks", ".mcp.json",
		".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "bunfig.toml", ".cargo", "mise.toml", ".mise.toml", ".mise"}
}

// Git are the entries of a git directory that git runs or obeys: hooks,
// configuration (core.fsmonitor, aliases, filters, pagers, ssh
// commands), per-worktree configuration, the repository's attributes, and
// commondir, which would send git to another directory's configuration
// and hooks.
func Git() []string {
	return []string{"hooks", "config", "config.worktree", "info", "commondir"}
}
