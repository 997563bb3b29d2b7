package classify

import (
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// What the coding agents run or obey later, at their next start or tool
// call, outside any decision and outside mnemos's sandbox: their MCP
// servers (programs they start), hooks (programs they run at every tool
// call), plugins and extensions (which bring both), custom commands,
// subagents and skills (which may run shell lines and declare hooks),
// and their managed settings (which can turn every user hook, mnemos's
// among them, off). A write there is running code later, whatever wrote
// it.

// agentLater is laterTarget for one path element seg, followed by rest,
// at any depth (a project's files, and the user's, which sit in the home
// directory under the same names).
func agentLater(seg string, rest []string, eq func(string, string) bool, eqAny func(string, ...string) bool, into bool) bool {
	if seg == "" || seg[0] != '.' && !strings.ContainsAny(seg, "*?[") && !strings.HasPrefix(seg, "opencode.") {
		return false
	}
	// first is rest[0] written into or below: a file, or a directory
	// written into or below.
	first := func(names ...string) bool {
		return len(rest) >= 1 && eqAny(rest[0], names...) && (into || len(rest) > 1)
	}
	file := func(names ...string) bool { return len(rest) == 1 && eqAny(rest[0], names...) && into }
	switch {
	case len(rest) == 0 && into && eqAny(seg, ".mcp.json", ".claude.json", "opencode.json", "opencode.jsonc"):
		// Claude Code's project and user MCP servers (~/.claude.json
		// also holds each project's), opencode's plugins.
		return true
	case eq(seg, ".claude"):
		// The directory whole (cp -r x .claude), its commands, subagents,
		// skills, hook scripts and plugins (their hooks/hooks.json).
		return len(rest) == 0 && into || first("commands", "agents", "skills", "hooks", "plugins")
	case eq(seg, ".cursor"):
		return file("mcp.json", "hooks.json", "environment.json", "cli-config.json") || first("hooks")
	case eq(seg, ".vscode"):
		return file("mcp.json")
	case eq(seg, ".github"):
		// Copilot's hooks (every file of .github/hooks) and its settings,
		// which hold hooks inline.
		return first("hooks") || len(rest) == 2 && eq(rest[0], "copilot") && eqAny(rest[1], "settings.json", "settings.local.json") && into
	case eq(seg, ".copilot"):
		return first("hooks") || file("config.json", "mcp-config.json")
	case eq(seg, ".gemini"):
		// Gemini's settings (hooks, MCP servers), custom commands (which
		// run shell lines), extensions, policies, and the hooks file of
		// Antigravity's CLI.
		return file("settings.json") || first("commands", "extensions", "policies", "config")
	case eq(seg, ".codex"):
		// Codex's configuration and hooks, its execution rules (which
		// let commands run outside its sandbox), managed requirements,
		// plugins.
		return file("config.toml", "hooks.json", "requirements.toml") || first("rules", "plugins")
	case eq(seg, ".codeium"):
		return len(rest) == 2 && eq(rest[0], "windsurf") && eqAny(rest[1], "hooks.json", "mcp_config.json") && into
	case eq(seg, ".windsurf"):
		return file("hooks.json")
	case eq(seg, ".agents"), eq(seg, ".opencode"):
		// Goose's and opencode's plugins.
		return first("plugins")
	case eq(seg, ".amp"):
		return file("settings.json")
	case eq(seg, ".config"):
		return first("opencode") || len(rest) == 2 && eq(rest[0], "goose") && eqAny(rest[1], "config.yaml") && into
	}
	return false
}

// agentSystemLater is laterSystem for the agents' system-wide settings:
// Claude Code's managed settings (and their drop-ins and managed MCP
// servers), Gemini CLI's system settings, Codex's managed configuration
// and requirements, Cursor's and Windsurf's enterprise hooks.
func agentSystemLater(segs []string, eq func(string, string) bool, into bool) bool {
	if len(segs) < 2 || !eq(segs[0], "etc") {
		return false
	}
	for _, d := range []string{"claude-code", "gemini-cli", "codex", "cursor", "windsurf"} {
		if underSegs(segs, []string{"etc", d}, eq, into) {
			return true
		}
	}
	return false
}

// changesModeOverLater reports a recursive change of mode, owner, ACL or
// attributes (chmod -R, chown -R, chgrp -R, setfacl -R, chattr -R) of a
// directory that holds what runs later: the workspace or a directory
// above it (its .git, its hooks and configuration, its later files), the
// home directory or one above it (the shell's startup files, the agents'
// settings), /etc and the system's directories on PATH. A mode change on
// what runs later is a write to it: a git directory any user may write is
// hooks anyone may plant.
func changesModeOverLater(cmd shellparse.Command, target string, pl Place) bool {
	switch cmd.Name() {
	case "chmod", "chown", "chgrp", "setfacl", "chattr":
	default:
		return false
	}
	recursive := false
	for _, w := range cmd.Argv[1:] {
		v := w.Value
		if v == "--" {
			break
		}
		if v == "--recursive" || len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsRune(v, 'R') {
			recursive = true
		}
	}
	if !recursive {
		return false
	}
	for _, d := range append([]string{pl.Workspace, pl.Home, "/etc", "/bin", "/usr/bin", "/usr/local/bin"}, pl.Path...) {
		if d != "" && Within(target, d) {
			return true
		}
	}
	return false
}
