package gate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/sandbox"
)

// nestedMakefile is a build that leaves, in the workspace, repositories
// git reads later outside the sandbox: vendor/lib with core.fsmonitor and
// a hook, registered as a submodule (git status enters it); a bare
// repository with a pager; a .git file naming a git directory the build
// made in the temp directory; and a repository made in the temp directory
// reached through a link. It makes the hooks' directory read-only, which
// keeps them where they are for anyone but root. PWNED is the file any of
// them would create.
const nestedMakefile = `all:
	mkdir -p vendor/lib
	cd vendor/lib && git init -q && git commit -q --allow-empty -m x
	git -C vendor/lib config core.fsmonitor "touch $(PWNED)"
	printf '#!/bin/sh\ntouch $(PWNED)\n' > vendor/lib/.git/hooks/post-checkout
	chmod +x vendor/lib/.git/hooks/post-checkout
	chmod 555 vendor/lib/.git/hooks
	printf '[submodule "vendor/lib"]\n\tpath = vendor/lib\n\turl = ./vendor/lib\n' > .gitmodules
	git update-index --add --cacheinfo 160000,$$(git -C vendor/lib rev-parse HEAD),vendor/lib
	git init -q --bare tools/evil.git
	git -C tools/evil.git config core.pager "touch $(PWNED)"
	git init -q $(TMP)/elsewhere
	git -C $(TMP)/elsewhere config core.fsmonitor "touch $(PWNED)"
	mkdir -p other && printf 'gitdir: $(TMP)/elsewhere/.git\n' > other/.git
	mkdir -p $(TMP)/far/x && git -C $(TMP)/far/x init -q && git -C $(TMP)/far/x config core.fsmonitor "touch $(PWNED)"
	ln -s $(TMP)/far far
`

// TestSecurityNestedRepoLeavesNothingGitRuns: contained work (a build the
// policy allows) that makes repositories in the workspace leaves nothing
// git runs: the person's plain git status in the workspace, in the
// submodule, in the bare repository, in the directory whose .git names
// one in the temp directory and through the link runs nothing, as root
// and, as root runs it again, as an unprivileged user (whose view the
// helper builds).
func TestSecurityNestedRepoLeavesNothingGitRuns(t *testing.T) {
	if os.Getenv("GATE_TEST_NESTED_UNPRIV") == "1" {
		nestedRepoRun(t)
		return
	}
	requireLandlock(t, 1)
	for _, p := range []string{"git", "make"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skip("needs " + p)
		}
	}
	nestedRepoRun(t)
	if os.Geteuid() != 0 {
		return
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Log("not run as an unprivileged user: needs setpriv (util-linux)")
		return
	}
	if !sandbox.Probe().View {
		t.Log("not run as an unprivileged user: no view here")
		return
	}
	dir, err := os.MkdirTemp("/var/tmp", "mnemos-nested-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "gate.test")
	if err := os.WriteFile(bin, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-test.run=^TestSecurityNestedRepoLeavesNothingGitRuns$", "-test.v")
	cmd.Env = []string{"GATE_TEST_NESTED_UNPRIV=1", "PATH=/usr/bin:/bin", "HOME=/nonexistent"}
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

func nestedRepoRun(t *testing.T) {
	f := newSandboxFixture(t, "level: full\nrules:\n  - {name: build, action: allow, command: {argv_prefix: [make]}}\n", "")
	tmp, err := os.MkdirTemp("/tmp", "mnemos-nested-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	pwned := filepath.Join(f.out, "pwned")
	if err := os.Chmod(f.out, 0o777); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + f.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@a", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@a"}
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.RemoveAll(filepath.Join(f.ws, ".git"))
	git(f.ws, "init", "-q")
	if err := os.WriteFile(filepath.Join(f.ws, "Makefile"), []byte(nestedMakefile), 0o644); err != nil {
		t.Fatal(err)
	}
	git(f.ws, "add", ".")
	git(f.ws, "commit", "-qm", "init")
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(k, "a")
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("PWNED", pwned)
	t.Setenv("TMP", tmp)
	t.Cleanup(func() { os.Chmod(filepath.Join(f.ws, "vendor", "lib", ".git", "hooks"), 0o755) })
	res, stderr := f.run(t, "make")
	if res.ExitCode != 0 {
		t.Fatalf("make: exit %d\n%s", res.ExitCode, stderr)
	}
	if len(res.Repos) < 4 {
		t.Errorf("made harmless: %+v", res.Repos)
	}
	// The person, outside mnemos, as git is used every day.
	for _, d := range []string{f.ws, filepath.Join(f.ws, "vendor", "lib"), filepath.Join(f.ws, "tools", "evil.git"), filepath.Join(f.ws, "other"), filepath.Join(f.ws, "far", "x")} {
		for _, args := range [][]string{{"status"}, {"-p", "log"}, {"checkout", "-q", "HEAD"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir, cmd.Env = d, env
			cmd.Run()
		}
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatalf("git ran what the build planted; made harmless: %+v", res.Repos)
	}
	// vendor/lib is still a repository.
	cmd := exec.Command("git", "rev-parse", "HEAD")
	cmd.Dir, cmd.Env = filepath.Join(f.ws, "vendor", "lib"), env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("vendor/lib is no longer a repository: %v %s", err, out)
	}
}
