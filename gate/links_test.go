package gate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
)

// linkFixture is a workspace holding the links a contained run (or a
// cloned repository) could leave there, to the user's secrets, home,
// mnemos's state and what runs later.
func linkFixture(t *testing.T, policySrc string) (*fixture, string) {
	t.Helper()
	f := newFixture(t, policySrc)
	outside := filepath.Join(filepath.Dir(f.ws), "outside")
	state := filepath.Dir(f.g.cfg.Paths.AuditFile)
	for _, d := range []string{filepath.Join(f.home, ".ssh"), filepath.Join(f.home, ".aws"), filepath.Join(f.home, ".claude"), state, outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{
		filepath.Join(f.home, ".ssh", "id_rsa"):           "SECRETKEY\n",
		filepath.Join(f.home, ".aws", "credentials"):      "AWSSECRET\n",
		filepath.Join(f.home, ".claude", "settings.json"): "{}\n",
		filepath.Join(f.home, ".bashrc"):                  "# rc\n",
		audit.KeyPath(f.g.cfg.Paths.AuditFile):            "key\n",
		filepath.Join(outside, "data.txt"):                "data\n",
		filepath.Join(f.ws, "README"):                     "hi\n",
	} {
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"l_key":   filepath.Join(f.home, ".ssh", "id_rsa"),
		"l_home":  f.home,
		"l_state": state,
		"l_cc":    filepath.Join(f.home, ".claude", "settings.json"),
		"l_rc":    filepath.Join(f.home, ".bashrc"),
		"l_new":   filepath.Join(f.home, ".config", "autostart", "x.desktop"),
		"l_hook":  filepath.Join(f.ws, ".git", "hooks", "pre-commit"),
		"l_out":   filepath.Join(outside, "data.txt"),
		"l_ok":    "README",
		"sub":     ".",
	} {
		if err := os.Symlink(target, filepath.Join(f.ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	return f, outside
}

// TestSecurityLinksAreJudgedAsWhatTheyResolveTo: a command that names a
// link in the workspace is judged on what the link leads to as well as
// on its name, for a command an agent runs itself (hook mode) and for
// one mnemos runs: reading a secret, mnemos's state or home through a
// link is denied by the guard, writing an agent's hook settings or what
// runs later through one is denied, and a recursive read that follows
// the links it meets is denied when one leads to a guarded path. The
// denial names the link and its target.
func TestSecurityLinksAreJudgedAsWhatTheyResolveTo(t *testing.T) {
	f, _ := linkFixture(t, "level: full\n")
	// A sandbox the kernel does not enforce: the decision is all there is
	// for a command mnemos runs too.
	f.g.cfg.Probe = func() sandbox.Status { return sandbox.Status{} }
	for _, tc := range []struct {
		script      string
		unsandboxed bool
		want        policy.Outcome
		reason      string
	}{
		{"cat l_key", true, policy.Deny, "l_key (a link to ~/.ssh/id_rsa)"},
		{"cat l_key", false, policy.Deny, "l_key (a link to ~/.ssh/id_rsa)"},
		{"base64 l_key > out.txt", true, policy.Deny, "forbidden path"},
		{"cat -- l_home/.aws/credentials", true, policy.Deny, "l_home/.aws/credentials (a link to ~/.aws/credentials)"},
		{"cat sub/l_key", true, policy.Deny, "~/.ssh/id_rsa"},
		{"cat -- l_state/audit.key", true, policy.Deny, "mnemos's secrets"},
		{"tee -- l_state/policy.yaml", true, policy.Deny, "self-tamper"},
		{"tee -- l_cc", true, policy.Deny, "an agent's hook settings"},
		{"cp README l_cc", true, policy.Deny, "l_cc (a link to ~/.claude/settings.json)"},
		{"echo x >> l_rc", true, policy.Deny, "l_rc (a link to ~/.bashrc): a write there runs code later"},
		{"echo x > l_new", true, policy.Deny, "runs code later"},
		{"echo x > l_hook", true, policy.Deny, "runs code later"},
		{"grep -r -e SECRET -- l_home", true, policy.Deny, "l_home (a link to ~)"},
		{"grep -r -e SECRET -- l_home/.ssh", true, policy.Deny, "forbidden path"},
		{"grep -R KEY .", true, policy.Deny, "grep follows l_home (a link to ~)"},
		{"grep --dereference-recursive KEY", true, policy.Deny, "grep follows"},
		{"rg --follow KEY", true, policy.Deny, "rg follows"},
		{"cp -rL . /tmp/copy", true, policy.Deny, "cp follows"},
		{"tar -czhf /tmp/x.tgz .", true, policy.Deny, "tar follows"},
		{"zip -r /tmp/x.zip .", true, policy.Deny, "zip follows"},
		// What does not follow, or leads nowhere guarded, stays as it was.
		{"grep -r KEY .", true, policy.Allow, ""},
		{"zip -ry /tmp/x.zip .", true, policy.Ask, "code:exec"},
		{"cat README", true, policy.Allow, ""},
		{"cat l_ok", true, policy.Allow, ""},
		{"echo x > notes.txt", true, policy.Allow, ""},
		// Outside the sandbox a link counts where it leads: a listing of
		// home asks, once (outside.go).
		{"ls -la l_home", true, policy.Ask, "l_home (a link to "},
		{"cat l_missing", true, policy.Allow, ""},
	} {
		req := f.req("bash", "-c", tc.script)
		req.Unsandboxed = tc.unsandboxed
		d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if d.Outcome != tc.want || !strings.Contains(d.Reason, tc.reason) {
			t.Errorf("%s (unsandboxed %v) = %s; want %s naming %q", tc.script, tc.unsandboxed, describe(d), tc.want, tc.reason)
		}
	}
}

// TestSecurityLinkOutsideAsksOutsideTheSandbox: outside the sandbox, a
// command is decided by the policy on the paths its links lead to as
// well: reading a file outside the workspace through a link asks at
// supervised, as naming the file does, where the rule that lets the
// workspace be read would allow the link's name.
func TestSecurityLinkOutsideAsksOutsideTheSandbox(t *testing.T) {
	f, outside := linkFixture(t, "")
	for _, tc := range []struct {
		script string
		want   policy.Outcome
	}{
		{"cat " + filepath.Join(outside, "data.txt"), policy.Ask},
		{"cat l_out", policy.Ask},
		{"cat l_ok", policy.Allow},
		{"cat README", policy.Allow},
	} {
		req := f.req("bash", "-c", tc.script)
		req.Unsandboxed = true
		d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if d.Outcome != tc.want {
			t.Errorf("%s = %s; want %s", tc.script, describe(d), tc.want)
		}
		if tc.script == "cat l_out" && !strings.Contains(d.Reason, "l_out (a link to ") {
			t.Errorf("%s: the reason does not name the link: %s", tc.script, d.Reason)
		}
	}
}

// TestLinksInAWorkspaceReachedThroughALink: a workspace whose own path
// holds a link (/home/u/proj -> /data/proj) is not taken for a link out
// of it: its files are named as the workspace names them.
func TestLinksInAWorkspaceReachedThroughALink(t *testing.T) {
	f, _ := linkFixture(t, "")
	alias := filepath.Join(filepath.Dir(f.ws), "alias")
	if err := os.Symlink(f.ws, alias); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		script string
		want   policy.Outcome
	}{
		{"cat README", policy.Allow},
		{"cat l_ok", policy.Allow},
		{"cat l_key", policy.Deny},
	} {
		req := f.req("bash", "-c", tc.script)
		req.Cwd, req.Unsandboxed = alias, true
		d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if d.Outcome != tc.want {
			t.Errorf("%s in %s = %s; want %s", tc.script, alias, describe(d), tc.want)
		}
	}
}

// TestSecurityLinkedSecretUnderTheSandbox: where the kernel keeps the
// sandbox's promises, a command mnemos runs is not checked for links by
// the decision (the kernel resolves them as it confines the run): the
// sandbox refuses what lies behind a link as it refuses the path.
func TestSecurityLinkedSecretUnderTheSandbox(t *testing.T) {
	requireLandlock(t, 1)
	f, _ := linkFixture(t, "level: full\n")
	if !keepsPromises(f.g.sandboxStatus()) {
		t.Skip("the sandbox does not keep every promise here: the decision checks links itself (TestSecurityLinksAreJudgedAsWhatTheyResolveTo)")
	}
	for _, script := range []string{"cat l_key", "cat l_home/.aws/credentials", "echo x >> l_rc", "cp README l_cc", "cat l_state/audit.key"} {
		var out strings.Builder
		res, err := f.g.Run(context.Background(), f.req("bash", "-c", script), Stdio{Stdout: &out, Stderr: &out}, RunOptions{})
		if err != nil && !errors.Is(err, ErrNotAllowed) {
			t.Fatalf("%s: %v", script, err)
		}
		if res.Ran && res.ExitCode == 0 {
			t.Errorf("%s ran and succeeded under the sandbox: %q", script, out.String())
		}
		if strings.Contains(out.String(), "SECRET") {
			t.Errorf("%s printed the secret: %q", script, out.String())
		}
	}
	for name, want := range map[string]string{".bashrc": "# rc\n", ".claude/settings.json": "{}\n"} {
		if b, _ := os.ReadFile(filepath.Join(f.home, name)); string(b) != want {
			t.Errorf("~/%s = %q, want %q", name, b, want)
		}
	}
}

// BenchmarkDecideFiftyCommandsUnsandboxed is the 50-command request of
// BenchmarkDecideFiftyCommands as a hook that runs it itself asks it:
// each path it names is checked for links.
func BenchmarkDecideFiftyCommandsUnsandboxed(b *testing.B) {
	dir := b.TempDir()
	paths, _ := Locate(filepath.Join(dir, ".mnemos"), func(string) string { return "" }, dir)
	g := New(Config{Paths: paths, Policy: policy.Default(), UserHome: dir, SelfNames: []string{"mnemos"}, Audit: &memAudit{}})
	ws := benchWorkspace(b, dir)
	req := Request{Argv: []string{"bash", "-c", agentScript(ws)}, Cwd: ws, Channel: "cli", Sender: "dev", Unsandboxed: true}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Decide(ctx, req, Mode{DryRun: true}); err != nil {
			b.Fatal(err)
		}
	}
}
