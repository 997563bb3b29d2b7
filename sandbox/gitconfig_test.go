package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSecurityGitConfigKeepsOnlyHarmlessSettings: a repository's
// configuration keeps the settings that name no program, however the
// others are written (on the header's line, in upper case, across a
// continuation line, in quotes, through an include); what cannot be read
// with certainty is not kept at all.
func TestSecurityGitConfigKeepsOnlyHarmlessSettings(t *testing.T) {
	ws := "/w"
	inWS := func(p string) bool { return within(p, ws) }
	const initConfig = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"
	tests := []struct {
		name, in, want string
		dropped        []string
	}{
		{"git init's", initConfig, initConfig, nil},
		{"a clone's", initConfig + "[remote \"origin\"]\n\turl = https://example.com/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n", "", nil},
		{"fsmonitor", initConfig + "\tfsmonitor = \"touch /tmp/pwned\"\n", initConfig, []string{"core.fsmonitor"}},
		{"on the header's line", "[core] fsmonitor = x\n\tbare = false\n", "[core]\n\tbare = false\n", []string{"core.fsmonitor"}},
		{"upper case", "[CORE]\n\tFSMonitor = x\n", "", []string{"core.fsmonitor"}},
		// git joins the lines: the second is part of the value.
		{"continued", "[core]\n\tbare = false\\\n\tfsmonitor = x\n", "[core]\n\tbare = false\\tfsmonitor = x\n", nil},
		{"include", "[include]\n\tpath = ../../evil.cfg\n[includeIf \"gitdir:/\"]\n\tpath = x\n", "", []string{"include.path", "includeif.gitdir:/.path"}},
		{"alias and filter", "[alias]\n\tst = !sh -c x\n[filter \"lfs\"]\n\tsmudge = x\n", "", []string{"alias.st", "filter.lfs.smudge"}},
		{"hooks elsewhere", "[core]\n\thooksPath = /tmp/h\n", "", []string{"core.hookspath"}},
		{"worktree outside", "[core]\n\tworktree = /etc\n", "", []string{"core.worktree"}},
		{"worktree inside", "[core]\n\tworktree = ../../../vendor/lib\n", "[core]\n\tworktree = ../../../vendor/lib\n", nil},
		{"url through a program", "[remote \"o\"]\n\turl = ext::sh -c evil\n", "", []string{"remote.o.url"}},
		{"url through a helper", "[remote \"o\"]\n\turl = evil::x\n\tpushurl = -oProxyCommand=x\n", "", []string{"remote.o.url", "remote.o.pushurl"}},
		{"urls", "[remote \"o\"]\n\turl = ssh://[::1]/x.git\n\tpushurl = git@host:a::b.git\n", "[remote \"o\"]\n\turl = ssh://[::1]/x.git\n\tpushurl = git@host:a::b.git\n", nil},
		{"submodule update command", "[submodule \"x\"]\n\turl = ../x\n\tupdate = !sh evil\n", "[submodule \"x\"]\n\turl = ../x\n", []string{"submodule.x.update"}},
		{"old subsection form", "[core.x]\n\tbare = false\n", "", []string{"what could not be read with certainty"}},
		{"stray byte", "[core]\n\tbare = false\n\x00[core]\n\tfsmonitor = x\n", "[core]\n\tbare = false\n", []string{"what could not be read with certainty"}},
		{"a quote left open", "[core]\n\tbare = \"false\n\tfsmonitor = x\n", "", []string{"what could not be read with certainty"}},
		{"comments", "# made by hand\n[core]\n\tbare = false ; yes\n", "[core]\n\tbare = false\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, dropped, changed := harmlessGitConfig([]byte(tt.in), "/w/.git/modules/x", inWS)
			want := tt.want
			if want == "" && tt.dropped == nil {
				want = tt.in
			}
			if string(kept) != want {
				t.Errorf("kept %q, want %q", kept, want)
			}
			if !slices.Equal(dropped, tt.dropped) {
				t.Errorf("dropped %q, want %q", dropped, tt.dropped)
			}
			if changed != (string(kept) != tt.in) {
				t.Errorf("changed = %v for %q -> %q", changed, tt.in, kept)
			}
			// What is kept reads back as itself, harmless.
			if again, d, ch := harmlessGitConfig(kept, "/w/.git/modules/x", inWS); ch || len(d) > 0 || string(again) != string(kept) {
				t.Errorf("kept %q is not stable: %q %q", kept, again, d)
			}
		})
	}
}

// TestGitConfigAsGitWritesIt: the configurations git writes itself, for a
// new repository, a clone and a submodule, are kept byte for byte, and
// what mnemos writes git reads as it was meant.
func TestGitConfigAsGitWritesIt(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("needs git")
	}
	dir := t.TempDir()
	run := func(d string, args ...string) string {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir = d
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@a", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@a", "GIT_ALLOW_PROTOCOL=file")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	up := filepath.Join(dir, "up")
	os.MkdirAll(up, 0o755)
	run(up, "init", "-q", "-b", "main")
	run(up, "commit", "-q", "--allow-empty", "-m", "x")
	ws := filepath.Join(dir, "ws")
	run(dir, "clone", "-q", up, ws)
	run(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", up, "vendor/up")
	// Values git quotes or escapes as it writes them.
	for _, v := range []string{" lead", "trail ", "semi;colon", "hash#x", "tab\there", "quote\"in", `back\slash`, "cr\rx", "\tleadtab", "new\nline"} {
		run(up, "config", "--add", "user.name", v)
	}
	run(ws, "config", "core.fsmonitor", "touch "+filepath.Join(dir, "pwned"))
	inWS := func(p string) bool { return within(p, ws) }
	for _, g := range []string{filepath.Join(up, ".git"), filepath.Join(ws, ".git", "modules", "vendor", "up")} {
		b, err := os.ReadFile(filepath.Join(g, "config"))
		if err != nil {
			t.Fatal(err)
		}
		if kept, dropped, changed := harmlessGitConfig(b, g, inWS); changed {
			t.Errorf("%s: git's own configuration changed: dropped %q\n%s\n->\n%s", g, dropped, b, kept)
		}
	}
	cfg := filepath.Join(ws, ".git", "config")
	b, _ := os.ReadFile(cfg)
	kept, dropped, changed := harmlessGitConfig(b, filepath.Join(ws, ".git"), inWS)
	if !changed || !slices.Contains(dropped, "core.fsmonitor") {
		t.Fatalf("fsmonitor kept: %q", dropped)
	}
	if err := os.WriteFile(cfg, kept, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := run(ws, "config", "--list", "--local"); strings.Contains(got, "fsmonitor") || !strings.Contains(got, "remote.origin.url="+up) {
		t.Errorf("git reads back:\n%s", got)
	}
	run(ws, "status")
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("git status ran the fsmonitor")
	}
}
