package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityPathFromTheEnvironment: the directories on the PATH the
// command will run with, wherever they are, are what runs later: writing
// a program into one asks at every level for a command that runs outside
// the sandbox (a hook's), and is never allowed for one that runs inside
// it, which keeps them read-only; without them on PATH, the same write
// is an ordinary one in the workspace, and outside it asks when nothing
// confines the command (outside.go).
func TestSecurityPathFromTheEnvironment(t *testing.T) {
	f := newFixture(t, "level: full\ndefaults: {shell: allow}\n")
	goBin := filepath.Join(filepath.Dir(f.home), "usr-local-go", "bin")
	wsBin := filepath.Join(f.ws, "tools", "bin")
	homeBin := filepath.Join(f.home, "sdk", "bin")
	for _, d := range []string{goBin, wsBin, homeBin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmds := []string{
		"cp x " + goBin + "/go",
		"echo 'exec evil' > tools/bin/ls",
		"ln -sf /tmp/x " + homeBin + "/node",
		"mv x " + wsBin,
	}
	for _, onPath := range []bool{false, true} {
		path := "/usr/bin:/bin"
		if onPath {
			path = strings.Join([]string{goBin, wsBin, homeBin, "/usr/bin", "/bin"}, ":")
		}
		env := []string{"PATH=" + path, "HOME=" + f.home}
		f.g.cfg.Environ = func() []string { return env }
		for _, c := range cmds {
			for _, unsandboxed := range []bool{true, false} {
				req := f.req("bash", "-c", c)
				req.Unsandboxed = unsandboxed
				d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
				if err != nil {
					t.Fatal(err)
				}
				inWorkspace := !strings.Contains(c, goBin) && !strings.Contains(c, homeBin)
				switch {
				case unsandboxed && !onPath && inWorkspace && d.Outcome != policy.Allow,
					unsandboxed && !onPath && !inWorkspace && d.Outcome != policy.Ask,
					unsandboxed && onPath && d.Outcome != policy.Ask,
					onPath && d.Outcome == policy.Allow:
					t.Errorf("%q (unsandboxed %v) with PATH=%s: %s", c, unsandboxed, path, describe(d))
				}
			}
		}
	}
	// What is not a program on PATH stays ordinary.
	req := f.req("bash", "-c", "echo x > tools/notes.txt")
	req.Unsandboxed = true
	d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != policy.Allow {
		t.Errorf("a write beside a PATH directory: %s, want allow", describe(d))
	}
}
