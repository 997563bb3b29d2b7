package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// repoWS is a workspace for the repository check, with git run as a
// person would, and the listing kept outside it.
type repoWS struct {
	t       *testing.T
	ws, out string
	listing string
	git     string
}

func newRepoWS(t *testing.T, repo bool) *repoWS {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("needs git")
	}
	root := t.TempDir()
	r := &repoWS{t: t, ws: filepath.Join(root, "ws"), out: filepath.Join(root, "out"), listing: filepath.Join(root, "state", "listing"), git: git}
	for _, d := range []string{r.ws, r.out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if repo {
		r.run(r.ws, "init", "-q")
	}
	return r
}

// run runs git in dir with no user or system configuration.
func (r *repoWS) run(dir string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command(r.git, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@a",
		"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@a", "GIT_ALLOW_PROTOCOL=file")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

func (r *repoWS) write(p, s string, mode os.FileMode) {
	r.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), mode); err != nil {
		r.t.Fatal(err)
	}
}

// watch starts a check after the margin within which earlier changes
// would count as the run's.
func (r *repoWS) watch() *RepoWatch {
	time.Sleep(time.Duration(reposMargin) + 10*time.Millisecond)
	w := WatchRepos(r.ws, r.listing)
	w.Start()
	return w
}

// pwned is the file a planted command would create.
func (r *repoWS) pwned() string { return filepath.Join(r.out, "pwned") }

func (r *repoWS) evilConfig() string {
	return "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch " + r.pwned() + "\"\n\tpager = touch " + r.pwned() + "\n"
}

// statusRunsNothing runs git status and git log as a person would in dir
// and fails if the planted command ran.
func (r *repoWS) statusRunsNothing(dirs ...string) {
	r.t.Helper()
	for _, d := range dirs {
		cmd := exec.Command(r.git, "status")
		cmd.Dir = d
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		cmd.Run()
		cmd = exec.Command(r.git, "-p", "log")
		cmd.Dir = d
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		cmd.Run()
	}
	if _, err := os.Stat(r.pwned()); err == nil {
		r.t.Fatalf("git in %v ran the planted command", dirs)
	}
}

func reported(rep RepoReport, repo string) *DefusedRepo {
	for i := range rep.Repos {
		if rep.Repos[i].Repo == repo {
			return &rep.Repos[i]
		}
	}
	return nil
}

// TestSecurityReposNestedSubmoduleMadeHarmless: the attack as it was
// seen: a build makes vendor/lib a repository with core.fsmonitor and a
// hook, and registers it as a submodule; after the check, the user's
// plain git status (which enters the submodule) runs nothing, and the
// repository is still one.
func TestSecurityReposNestedSubmoduleMadeHarmless(t *testing.T) {
	r := newRepoWS(t, true)
	r.write(filepath.Join(r.ws, "README"), "x\n", 0o644)
	r.run(r.ws, "add", ".")
	r.run(r.ws, "commit", "-qm", "init")
	w := r.watch()

	lib := filepath.Join(r.ws, "vendor", "lib")
	os.MkdirAll(lib, 0o755)
	r.run(lib, "init", "-q")
	r.run(lib, "commit", "-q", "--allow-empty", "-m", "x")
	r.run(lib, "config", "core.fsmonitor", "touch "+r.pwned())
	r.write(filepath.Join(lib, ".git", "hooks", "post-checkout"), "#!/bin/sh\ntouch "+r.pwned()+"\n", 0o755)
	head := strings.TrimSpace(r.run(lib, "rev-parse", "HEAD"))
	r.write(filepath.Join(r.ws, ".gitmodules"), "[submodule \"vendor/lib\"]\n\tpath = vendor/lib\n\turl = ./vendor/lib\n", 0o644)
	r.run(r.ws, "update-index", "--add", "--cacheinfo", "160000,"+head+",vendor/lib")

	rep := w.Finish(RepoOptions{Now: time.Unix(1700000000, 0)})
	d := reported(rep, filepath.Join(lib, ".git"))
	if d == nil {
		t.Fatalf("vendor/lib/.git not reported: %+v", rep)
	}
	if !slices.Contains(d.Would, "core.fsmonitor") || !slices.Contains(d.Would, "hooks/post-checkout") {
		t.Errorf("would = %q", d.Would)
	}
	if d.Wrote != filepath.Join(lib, ".git", "config") {
		t.Errorf("wrote %q", d.Wrote)
	}
	if _, err := os.Stat(filepath.Join(lib, ".git", "config.quarantined-1700000000")); err != nil {
		t.Errorf("the configuration was not kept aside: %v", err)
	}
	r.statusRunsNothing(r.ws, lib)
	// Still a repository, with its commit.
	if got := strings.TrimSpace(r.run(lib, "rev-parse", "HEAD")); got != head {
		t.Errorf("HEAD %q, want %q", got, head)
	}
	// The workspace's own repository is left as it is.
	if reported(rep, filepath.Join(r.ws, ".git")) != nil {
		t.Errorf("the workspace's own repository was changed: %+v", rep)
	}
}

// TestSecurityReposFoundByWhatChanged: with the listing of the last run,
// only what changed is read again, and a repository made deep in an old
// directory, a bare repository, a .git file naming a directory outside
// the workspace and a new module directory are all found; a person's own
// nested repository with its own settings and hooks, which the run did
// not touch, is left alone.
func TestSecurityReposFoundByWhatChanged(t *testing.T) {
	r := newRepoWS(t, true)
	for i := range 30 {
		os.MkdirAll(filepath.Join(r.ws, "a", "b", fmt.Sprintf("c%d", i), "d"), 0o755)
	}
	mine := filepath.Join(r.ws, "mine")
	os.MkdirAll(mine, 0o755)
	r.run(mine, "init", "-q")
	r.run(mine, "config", "alias.st", "status")
	r.write(filepath.Join(mine, ".git", "hooks", "pre-commit"), "#!/bin/sh\nexit 0\n", 0o755)
	mineConfig, _ := os.ReadFile(filepath.Join(mine, ".git", "config"))

	// The first run walks the workspace and keeps the listing.
	w := r.watch()
	if rep := w.Finish(RepoOptions{}); len(rep.Repos) > 0 || rep.Unchecked != "" {
		t.Fatalf("first run: %+v", rep)
	}
	if !w.fresh {
		t.Error("the first run did not walk")
	}

	w = r.watch()
	if w.fresh {
		t.Fatal("the second run walked again instead of reading the listing")
	}
	deep := filepath.Join(r.ws, "a", "b", "c7", "d", "e")
	os.MkdirAll(deep, 0o755)
	r.run(deep, "init", "-q")
	r.write(filepath.Join(deep, ".git", "config"), r.evilConfig(), 0o644)
	bare := filepath.Join(r.ws, "a", "b", "c3", "evil.git")
	r.run(r.ws, "init", "-q", "--bare", bare)
	r.write(filepath.Join(bare, "config"), r.evilConfig(), 0o644)
	outside := filepath.Join(r.out, "gitdir")
	r.run(r.out, "init", "-q", "--bare", outside)
	r.write(filepath.Join(outside, "config"), r.evilConfig()+"\tbare = false\n\tworktree = "+filepath.Join(r.ws, "g")+"\n", 0o644)
	r.write(filepath.Join(r.ws, "g", ".git"), "gitdir: "+outside+"\n", 0o644)
	mod := filepath.Join(r.ws, ".git", "modules", "m")
	r.run(r.ws, "init", "-q", "--bare", mod)
	r.write(filepath.Join(mod, "config"), r.evilConfig(), 0o644)
	// The person's repository is used, not changed in what runs later.
	r.run(mine, "commit", "-q", "--allow-empty", "-m", "x")

	rep := w.Finish(RepoOptions{})
	for _, want := range []string{filepath.Join(deep, ".git"), bare, filepath.Join(r.ws, "g", ".git"), mod} {
		if reported(rep, want) == nil {
			t.Errorf("%s not reported: %+v", want, rep.Repos)
		}
	}
	if rep.Read > 40 || rep.Dirs < 60 {
		t.Errorf("read %d of %d directories again", rep.Read, rep.Dirs)
	}
	if d := reported(rep, filepath.Join(mine, ".git")); d != nil {
		t.Errorf("the person's own repository was changed: %+v", d)
	}
	if b, _ := os.ReadFile(filepath.Join(mine, ".git", "config")); string(b) != string(mineConfig) {
		t.Errorf("the person's configuration changed:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(mine, ".git", "hooks", "pre-commit")); err != nil {
		t.Errorf("the person's hook is gone: %v", err)
	}
	r.statusRunsNothing(r.ws, deep, bare, filepath.Join(r.ws, "g"))
}

// TestSecurityReposTwoRuns: a configuration planted in one run in a
// directory that is no repository yet, which a second run makes one
// (HEAD, objects and refs) and moves under .git, counts as the second
// run's; so does a link to a directory outside the workspace where the
// run made a repository.
func TestSecurityReposTwoRuns(t *testing.T) {
	r := newRepoWS(t, true)
	w := r.watch()
	stash := filepath.Join(r.ws, "stash")
	r.write(filepath.Join(stash, "config"), r.evilConfig(), 0o644)
	r.write(filepath.Join(stash, "hooks", "post-checkout"), "#!/bin/sh\ntouch "+r.pwned()+"\n", 0o755)
	if rep := w.Finish(RepoOptions{}); len(rep.Repos) > 0 {
		t.Fatalf("first run: %+v", rep.Repos)
	}

	w = r.watch()
	r.write(filepath.Join(stash, "HEAD"), "ref: refs/heads/main\n", 0o644)
	os.MkdirAll(filepath.Join(stash, "objects"), 0o755)
	os.MkdirAll(filepath.Join(stash, "refs", "heads"), 0o755)
	lib := filepath.Join(r.ws, "vendor", "lib")
	os.MkdirAll(lib, 0o755)
	if err := os.Rename(stash, filepath.Join(lib, ".git")); err != nil {
		t.Fatal(err)
	}
	far := filepath.Join(r.out, "far")
	os.MkdirAll(filepath.Join(far, "x"), 0o755)
	r.run(filepath.Join(far, "x"), "init", "-q")
	r.write(filepath.Join(far, "x", ".git", "config"), r.evilConfig(), 0o644)
	if err := os.Symlink(far, filepath.Join(r.ws, "far")); err != nil {
		t.Fatal(err)
	}
	rep := w.Finish(RepoOptions{})
	d := reported(rep, filepath.Join(lib, ".git"))
	if d == nil || !slices.Contains(d.Would, "core.fsmonitor") || !slices.Contains(d.Would, "hooks/post-checkout") {
		t.Errorf("the planted repository: %+v", rep.Repos)
	}
	if reported(rep, filepath.Join(r.ws, "far")) == nil {
		t.Errorf("the link to a repository outside: %+v", rep.Repos)
	}
	if _, err := os.Lstat(filepath.Join(r.ws, "far")); err == nil {
		t.Error("the link is still there")
	}
	r.statusRunsNothing(lib)
}

// TestSecurityReposFreshWorkspace: in a directory that was no repository,
// the repository a run makes at its top is checked too; one git init
// makes alone is left as it is.
func TestSecurityReposFreshWorkspace(t *testing.T) {
	r := newRepoWS(t, false)
	w := r.watch()
	r.run(r.ws, "init", "-q")
	app := filepath.Join(r.ws, "app")
	os.MkdirAll(app, 0o755)
	r.run(app, "init", "-q")
	rep := w.Finish(RepoOptions{})
	if len(rep.Repos) > 0 {
		t.Fatalf("git init's own repositories changed: %+v", rep.Repos)
	}

	r2 := newRepoWS(t, false)
	w = r2.watch()
	r2.run(r2.ws, "init", "-q")
	r2.run(r2.ws, "config", "core.fsmonitor", "touch "+r2.pwned())
	rep = w.Finish(RepoOptions{})
	if reported(rep, filepath.Join(r2.ws, ".git")) == nil {
		t.Fatalf("the new top repository: %+v", rep.Repos)
	}
	r2.statusRunsNothing(r2.ws)
}

// TestReposProtectedAndTemplates: what the view kept read-only is not
// looked at, and hooks git init copied from the user's template stay.
func TestReposProtectedAndTemplates(t *testing.T) {
	r := newRepoWS(t, true)
	home := filepath.Join(r.out, "home")
	tpl := filepath.Join(home, "tpl")
	r.write(filepath.Join(tpl, "hooks", "commit-msg"), "#!/bin/sh\n# the user's own check\n", 0o755)
	r.write(filepath.Join(home, ".gitconfig"), "[init]\n\ttemplateDir = ~/tpl\n", 0o644)
	w := r.watch()
	sub := filepath.Join(r.ws, "sub")
	os.MkdirAll(sub, 0o755)
	r.run(sub, "init", "-q", "--template="+tpl)
	r.write(filepath.Join(sub, ".git", "hooks", "pre-push"), "#!/bin/sh\n", 0o755)
	prot := filepath.Join(r.ws, "prot")
	os.MkdirAll(prot, 0o755)
	r.run(prot, "init", "-q")
	r.write(filepath.Join(prot, ".git", "config"), r.evilConfig(), 0o644)
	rep := w.Finish(RepoOptions{Home: home, Protected: []string{filepath.Join(prot, ".git", "config")}})
	d := reported(rep, filepath.Join(sub, ".git"))
	if d == nil || !slices.Equal(d.Would, []string{"hooks/pre-push"}) {
		t.Errorf("sub: %+v", rep.Repos)
	}
	if _, err := os.Stat(filepath.Join(sub, ".git", "hooks", "commit-msg")); err != nil {
		t.Errorf("the template's hook was moved: %v", err)
	}
	if reported(rep, filepath.Join(prot, ".git")) != nil {
		t.Errorf("a protected configuration was looked at: %+v", rep.Repos)
	}
}

// BenchmarkRepoWatch is the check's cost for a run that changes nothing
// in a workspace of 50 000 files in 2 551 directories, with the listing of
// the last run, and the first run's walk.
func BenchmarkRepoWatch(b *testing.B) {
	ws := filepath.Join(b.TempDir(), "ws")
	for i := range 50 {
		for j := range 50 {
			d := filepath.Join(ws, fmt.Sprintf("pkg%d", i), fmt.Sprintf("sub%d", j))
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
			for k := range 20 {
				os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d", k)), nil, 0o644)
			}
		}
	}
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	listing := filepath.Join(b.TempDir(), "listing")
	w := WatchRepos(ws, listing)
	w.Start()
	w.Finish(RepoOptions{})
	b.Run("listed", func(b *testing.B) {
		for b.Loop() {
			w := WatchRepos(ws, listing)
			w.Start()
			w.Finish(RepoOptions{})
		}
	})
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			w := WatchRepos(ws, "")
			w.Start()
			w.Finish(RepoOptions{})
		}
	})
}

// TestSecurityReposDeep: a repository nested deeper than any project
// nests its directories (1 200 levels, a path git can still read) is
// found like any other.
func TestSecurityReposDeep(t *testing.T) {
	r := newRepoWS(t, true)
	w := r.watch()
	deep := filepath.Join(r.ws, strings.Repeat("a/", 1200)+"lib")
	g := filepath.Join(deep, ".git")
	for _, d := range []string{filepath.Join(g, "objects"), filepath.Join(g, "refs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.write(filepath.Join(g, "HEAD"), "ref: refs/heads/main\n", 0o644)
	r.write(filepath.Join(g, "config"), r.evilConfig(), 0o644)
	rep := w.Finish(RepoOptions{})
	if reported(rep, g) == nil || rep.Unchecked != "" {
		t.Fatalf("the deep repository: %+v (unchecked %q)", rep.Repos, rep.Unchecked)
	}
}

// TestSecurityReposReadOnlyDirectories: a command that makes its git
// directory, or its hooks, read-only does not keep what runs later where
// it is.
func TestSecurityReposReadOnlyDirectories(t *testing.T) {
	r := newRepoWS(t, true)
	w := r.watch()
	lib := filepath.Join(r.ws, "lib")
	os.MkdirAll(lib, 0o755)
	r.run(lib, "init", "-q")
	g := filepath.Join(lib, ".git")
	r.write(filepath.Join(g, "config"), r.evilConfig(), 0o644)
	r.write(filepath.Join(g, "hooks", "post-checkout"), "#!/bin/sh\ntouch "+r.pwned()+"\n", 0o755)
	for _, d := range []string{filepath.Join(g, "hooks"), g} {
		if err := os.Chmod(d, 0o555); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Chmod(g, 0o755); os.Chmod(filepath.Join(g, "hooks"), 0o755) })
	rep := w.Finish(RepoOptions{})
	d := reported(rep, g)
	if d == nil {
		t.Fatalf("not reported: %+v", rep.Repos)
	}
	for _, m := range d.Moved {
		if strings.HasPrefix(m[1], "not moved") {
			t.Errorf("%s %s", m[0], m[1])
		}
	}
	if fi, err := os.Stat(g); err != nil || fi.Mode().Perm() != 0o555 {
		t.Errorf("the git directory's mode was not put back: %v %v", fi.Mode(), err)
	}
	r.statusRunsNothing(lib)
}
