package gate

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityAgentWiringIsNeverWritten: a command an agent runs cannot
// change the settings that route the agent's commands through mnemos
// (Claude Code's, Codex's, Gemini CLI's, Cursor's, Copilot's, Amp's, user
// and project), whatever the level or a rule says, and sandboxed or not;
// reading them stays ordinary.
func TestSecurityAgentWiringIsNeverWritten(t *testing.T) {
	f := newFixture(t, "level: full\nallow:\n  - {name: everything, command: {argv_prefix: [bash]}}\n")
	claude := filepath.Join(f.home, ".claude", "settings.json")
	for _, argv := range [][]string{
		{"bash", "-c", "echo '{}' > " + claude},
		{"bash", "-c", "sed -i s/mnemos/true/ .claude/settings.json"},
		{"bash", "-c", "cp /dev/null " + filepath.Join(f.home, ".claude", "settings.local.json")},
		{"bash", "-c", "rm -rf " + filepath.Join(f.home, ".gemini")},
		{"bash", "-c", "mv .cursor/hooks.json /tmp/x"},
		{"bash", "-c", "tee " + filepath.Join(f.home, ".codex", "hooks.json") + " < /dev/null"},
		{"bash", "-c", "echo x > .claude/settings.*"},
	} {
		for _, unsandboxed := range []bool{false, true} {
			req := f.req(argv...)
			req.Unsandboxed = unsandboxed
			d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if d.Outcome != policy.Deny || d.BlockedBy != "guard" {
				t.Errorf("%v (unsandboxed %v): %s by %s (%s), want a guard deny", argv, unsandboxed, d.Outcome, d.BlockedBy, d.Reason)
			}
		}
	}
	if d := f.decide(t, Mode{DryRun: true}, "cat", ".claude/settings.json"); d.Outcome == policy.Deny {
		t.Errorf("reading the settings: %s (%s)", d.Outcome, d.Reason)
	}
}
