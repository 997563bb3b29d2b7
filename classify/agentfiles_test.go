package classify

import (
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// TestSecurityAgentFilesRunLater: the coding agents' files that run code
// at their next start or tool call (MCP servers, hooks of any file name,
// plugins, custom commands, subagents, managed settings), the user's, the
// project's and the system's, are what runs later: a write there is
// code:exec with a floor of ask, at every level. So is a recursive
// change of mode or owner over the workspace or the home directory (it
// reaches .git, its hooks and configuration, the shell's startup files),
// and install -d of .git.
func TestSecurityAgentFilesRunLater(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   bool
	}{
		// The user's.
		{`echo '{"mcpServers":{}}' > ~/.claude.json`, true},
		{"echo x > ~/.claude/commands/x.md", true},
		{"echo x > ~/.claude/agents/a.md", true},
		{"echo x > ~/.claude/skills/s/SKILL.md", true},
		{"echo x > ~/.claude/hooks/check.sh", true},
		{"echo '{}' > ~/.claude/plugins/p/hooks/hooks.json", true},
		{"echo x > ~/.claude/plugins/marketplaces/m/plugins/p/bin/run", true},
		{"echo '{}' > ~/.cursor/mcp.json", true},
		{"echo '{}' > ~/.copilot/hooks/zzz-allow.json", true},
		{"echo '{}' > ~/.copilot/config.json", true},
		{"echo '{}' > ~/.copilot/mcp-config.json", true},
		{"echo x > ~/.gemini/commands/x.toml", true},
		{"echo x > ~/.gemini/extensions/e/gemini-extension.json", true},
		{"echo x > ~/.gemini/policies/allow.toml", true},
		{"echo x > ~/.codex/rules/default.rules", true},
		{"echo '{}' > ~/.codeium/windsurf/mcp_config.json", true},
		{"echo x > ~/.agents/plugins/p/hooks/hooks.json", true},
		{"echo x > ~/.config/opencode/plugins/p.js", true},
		{"echo x > ~/.config/goose/config.yaml", true},
		{"cp x ~/.claude/commands/", true},
		// The system's.
		{"echo '{}' > /etc/claude-code/managed-settings.json", true},
		{"echo '{}' > /etc/claude-code/managed-settings.d/10.json", true},
		{"echo '{}' > /etc/claude-code/managed-mcp.json", true},
		{"echo '{}' > /etc/gemini-cli/settings.json", true},
		{"echo x > /etc/codex/requirements.toml", true},
		// The project's.
		{"echo '{}' > .mcp.json", true},
		{"echo '{}' > sub/.mcp.json", true},
		{"echo '{}' > .cursor/mcp.json", true},
		{"echo '{}' > .cursor/environment.json", true},
		{"echo '{}' > .vscode/mcp.json", true},
		{"echo x > .claude/commands/deploy.md", true},
		{"echo x > .claude/agents/reviewer.md", true},
		{"cp -r evil .claude", true},
		{"echo '{}' > .github/hooks/any.json", true},
		{"echo '{}' > .github/copilot/settings.local.json", true},
		{"echo x > .gemini/commands/x.toml", true},
		{"echo '{}' > .windsurf/hooks.json", true},
		{"echo '{}' > opencode.json", true},
		{"echo x > .opencode/plugins/p.ts", true},
		{"echo '{}' > .amp/settings.json", true},
		// Mode changes over what runs later.
		{"chmod -R 777 .", true},
		{"chmod -R o+w /w", true},
		{"chmod --recursive 777 .", true},
		{"chmod -vR 777 .", true},
		{"chown -R nobody .", true},
		{"chgrp -R users ~", true},
		{"setfacl -R -m u:nobody:rwx .", true},
		{"chmod -R 777 /", true},
		{"chmod 777 .git", true},
		{"chmod 666 .git/config", true},
		{"chown nobody .git/hooks", true},
		{"install -m 777 -d .git", true},
		{"install -dm777 .git/hooks", true},
		// Everyday work nearby stays ordinary.
		{"echo x > notes/mcp.json", false},
		{"echo x > docs/claude.json", false},
		{"echo x > .claude/notes.md", false},
		{"echo x > .github/workflows/ci.yml", false},
		{"echo x > .github/ISSUE_TEMPLATE/bug.md", false},
		{"echo x > .cursor/rules/style.mdc", false},
		{"chmod -R 755 build", false},
		{"chmod 755 .", false},
		{"chmod -R u+w node_modules", false},
		{"chmod +x scripts/run.sh", false},
		{"install -d build/bin", false},
		{"rm .mcp.json", false},
	} {
		s, err := shellparse.ParseScript(tc.script, shellparse.Env{Home: "/home/u", Cwd: "/w"})
		if err != nil || len(s.Commands) == 0 {
			t.Fatalf("%s: %v", tc.script, err)
		}
		pl := PlaceOf(s, "/w", "/home/u")
		pl.Workspace = "/w"
		prog := strings.Fields(tc.script)[0]
		var cl Classification
		for _, c := range s.Commands {
			if c.Name() == prog {
				cl = Classify(c, pl)
			}
		}
		got := cl.Floor == Ask
		for _, a := range cl.Accesses {
			if a.Capability == CodeExec {
				got = true
			}
		}
		if got != tc.want {
			t.Errorf("%s: runs code = %v, want %v (%s)", tc.script, got, tc.want, accessList(cl))
		}
	}
}
