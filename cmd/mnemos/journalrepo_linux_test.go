package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/sandbox"
)

// A command that destroys the repository from inside the sandbox (every
// file under .git it may remove, and the sources) is undone whole: git
// sees the same history, index and work tree as before.
func TestSecurityJournalUndoesDestroyedRepository(t *testing.T) {
	if st := sandbox.Probe(); !st.Enforced || !st.Watch {
		t.Skipf("changes cannot be watched here (landlock %v, watch %v: %s)", st.Enforced, st.Watch, st.WatchErr)
	}
	// The system's python: a version manager's shim under home is not
	// what the sandbox runs.
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("no /usr/bin/python3 to play the destructive program")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	w := newWatchEnv(t)
	pol := filepath.Join(w.env["MNEMOS_HOME"], "policy.yaml")
	b, err := os.ReadFile(pol)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pol, []byte(strings.Replace(string(b), "level: supervised", "level: full", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(w.ws, ".git")); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = w.ws
		cmd.Env = append(os.Environ(), "HOME="+w.env["HOME"], "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	for i, body := range []string{"package calc\n", "package calc\n\nfunc Add(a, b int) int { return a + b }\n"} {
		if err := os.WriteFile(filepath.Join(w.ws, "calc.go"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "calc.go")
		git("commit", "-q", "-m", "step "+string(rune('1'+i)))
	}
	if err := os.WriteFile(filepath.Join(w.ws, "calc.go"), []byte("package calc\n// wip, not committed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.ws, "notes.txt"), []byte("untracked notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := git("log", "--format=%H %s") + git("status", "--porcelain") + git("rev-parse", "HEAD")

	destroy := `import os
for root, dirs, files in os.walk('.git', topdown=False):
    for f in files:
        try: os.remove(os.path.join(root, f))
        except OSError: pass
    for d in dirs:
        try: os.rmdir(os.path.join(root, d))
        except OSError: pass
os.remove('calc.go'); os.remove('notes.txt')`
	out, code := w.run(nil, "run", "--", python, "-c", destroy)
	if code != 0 {
		t.Fatalf("the destructive run exited %d: %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(w.ws, ".git", "HEAD")); err == nil {
		t.Fatal("the run did not destroy the repository: the test proves nothing")
	}
	if out, code := w.run(nil, "undo", "--last"); code != 0 {
		t.Fatalf("undo exited %d: %s", code, out)
	}
	after := git("log", "--format=%H %s") + git("status", "--porcelain") + git("rev-parse", "HEAD")
	if after != before {
		t.Errorf("after the undo git sees\n%s\nwant\n%s", after, before)
	}
	git("fsck", "--strict")
	for name, want := range map[string]string{"calc.go": "package calc\n// wip, not committed\n", "notes.txt": "untracked notes\n"} {
		if got, err := os.ReadFile(filepath.Join(w.ws, name)); err != nil || string(got) != want {
			t.Errorf("%s after the undo: %q, %v", name, got, err)
		}
	}
}
