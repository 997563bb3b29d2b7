package gate

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/shellparse"
)

func decisionOf(t *testing.T, script string) Decision {
	t.Helper()
	s, err := shellparse.ParseScript(script, shellparse.Env{})
	if err != nil {
		t.Fatal(err)
	}
	var d Decision
	for _, c := range s.Commands {
		d.Commands = append(d.Commands, CommandDecision{Command: c})
	}
	return d
}

// TestSecurityGitWritesOnlyForGitAlone: the sandbox lets a run write
// .git/config, or the editor files the repository tracks, only when every
// command of the request is git and one of them does that itself;
// another program of the same request would get the write too.
func TestSecurityGitWritesOnlyForGitAlone(t *testing.T) {
	tests := []struct {
		script           string
		config, worktree bool
	}{
		{"git config user.name x", true, false},
		{"git config --get user.name", false, false},
		{"git config get user.name", false, false},
		{"git remote add origin ../o.git", true, false},
		{"git remote -v", false, false},
		{"git push -u origin main", true, false},
		{"git push origin main", false, false},
		{"git branch --set-upstream-to=origin/main", true, false},
		{"git commit -m 'fix: x'", false, false},
		{"git checkout -b feature", true, true},
		{"git switch main", true, true},
		{"git rebase main", false, true},
		{"git -C sub config a.b c", true, false},
		{"git status && git config a.b c", true, false},
		{"git config a.b c && ./attack.sh", false, false},
		{"git switch -q side && ./attack.sh", false, false},
		{"bash -c 'git checkout x; python3 evil.py'", false, false},
		{"git checkout x; echo hi > .vscode/tasks.json", false, false},
	}
	for _, tt := range tests {
		d := decisionOf(t, tt.script)
		if got := writesGitConfig(d); got != tt.config {
			t.Errorf("%s: writesGitConfig = %v, want %v", tt.script, got, tt.config)
		}
		if got := changesGitWorktree(d); got != tt.worktree {
			t.Errorf("%s: changesGitWorktree = %v, want %v", tt.script, got, tt.worktree)
		}
	}
}

// TestSecurityAuditKeyIsNeverRead: a command that names mnemos's audit
// key is denied by the guard at every level, whatever the rules say:
// whoever reads the key can rewrite the audit log with MACs that verify.
func TestSecurityAuditKeyIsNeverRead(t *testing.T) {
	f := newFixture(t, "level: full\ndefaults: {shell: allow}\nallow:\n  - {name: cat, command: {argv_prefix: [cat]}}\n")
	key := audit.KeyPath(f.g.cfg.Paths.AuditFile)
	for _, tc := range []struct {
		cmd  string
		want policy.Outcome
	}{
		{"cat " + key, policy.Deny},
		{"cat " + filepath.Dir(key) + "/audit.k*", policy.Deny},
		{"base64 " + key, policy.Deny},
		// The log itself is no secret, but the sandbox keeps mnemos's
		// files from every command, and a command that runs outside it
		// is held to what the sandbox allows (outside.go).
		{"cat " + f.g.cfg.Paths.AuditFile, policy.Deny},
		// The state database and the hook tickets hold the tokens that
		// let a request through.
		{"cat " + f.g.cfg.Paths.DBFile, policy.Deny},
		{"strings " + f.g.cfg.Paths.DBFile + "-wal", policy.Deny},
		{"cp " + filepath.Dir(f.g.cfg.Paths.DBFile) + "/state.d? /tmp/x", policy.Deny},
		{"ls " + f.g.hookTicketDir(), policy.Deny},
		{"cat " + filepath.Join(f.g.cfg.Paths.StateDir, "serve.token"), policy.Deny},
		{"cat " + f.g.hookTicketDir() + "/*", policy.Deny},
	} {
		req := f.req("bash", "-c", tc.cmd)
		// As a hook that cannot route the command into mnemos run asks.
		req.Unsandboxed = true
		d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		byGuard := d.BlockedBy == "guard" || strings.HasSuffix(tc.cmd, "audit.jsonl") && d.BlockedBy == "sandbox"
		if d.Outcome != tc.want || tc.want == policy.Deny && !byGuard {
			t.Errorf("%s = %s by %s (%s), want %s", tc.cmd, d.Outcome, d.BlockedBy, d.Reason, tc.want)
		}
	}
}
