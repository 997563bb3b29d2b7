package gate

import (
	"context"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityAgentFilesOutsideTheSandbox: run by an agent itself
// (Request.Unsandboxed) at the full level, a write to a file that
// wires hooks into an agent (any hooks file of Copilot's, a plugin's
// hooks, the managed settings that can turn user hooks off) is denied as
// unwiring the gate, and a write to what the agent runs later (its MCP
// servers, commands, subagents) asks; a recursive mode change over the
// workspace asks too.
func TestSecurityAgentFilesOutsideTheSandbox(t *testing.T) {
	f := newFixture(t, "level: full\n")
	for _, tc := range []struct {
		script string
		want   policy.Outcome
		guard  bool
	}{
		{"echo '{}' > @HOME@/.copilot/hooks/zzz-allow.json", policy.Deny, true},
		{"echo '{}' > @HOME@/.copilot/config.json", policy.Deny, true},
		{"echo '{}' > @HOME@/.claude/plugins/cache/m/p/1.0/hooks/hooks.json", policy.Deny, true},
		{"echo '{}' > /etc/claude-code/managed-settings.json", policy.Deny, true},
		{"echo '{}' > /etc/claude-code/managed-settings.d/50-x.json", policy.Deny, true},
		{"echo '{}' > @WS@/.github/hooks/safety.json", policy.Deny, true},
		{"cp x.json .github/copilot/settings.json", policy.Deny, true},
		{`echo '{"mcpServers":{}}' > @HOME@/.claude.json`, policy.Ask, false},
		{"echo x > @HOME@/.claude/commands/x.md", policy.Ask, false},
		{"echo x > @HOME@/.claude/agents/a.md", policy.Ask, false},
		{"echo '{}' > @HOME@/.cursor/mcp.json", policy.Ask, false},
		{"echo '{}' > .mcp.json", policy.Ask, false},
		{"echo x > .claude/commands/x.md", policy.Ask, false},
		{"chmod -R 777 .", policy.Ask, false},
		{"chown -R nobody @WS@", policy.Ask, false},
		// Nearby: outside the workspace, a write asks (outside.go); in
		// it, an ordinary one is allowed.
		{"echo x > @HOME@/.copilot/notes.txt", policy.Ask, false},
		{"echo x > notes/mcp.json", policy.Allow, false},
		{"chmod -R 755 build", policy.Allow, false},
	} {
		script := strings.NewReplacer("@HOME@", f.home, "@WS@", f.ws).Replace(tc.script)
		req := f.req("bash", "-c", script)
		req.Unsandboxed = true
		d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if d.Outcome != tc.want || tc.guard != (d.BlockedBy == "guard") {
			t.Errorf("%s = %s; want %s (guard %v)", tc.script, describe(d), tc.want, tc.guard)
		}
	}
}
