package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSecurityLaterPathsFollowGit: what git runs or obeys later is found
// where git finds it: through a .git link, in files the configuration
// includes, in the directory a user's or the repository's core.hooksPath
// names, and in each linked worktree's administrative directory.
func TestSecurityLaterPathsFollowGit(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	ws := filepath.Join(root, "ws")
	real := filepath.Join(root, "real.git")
	for _, d := range []string{home, ws, filepath.Join(real, "hooks"), filepath.Join(real, "worktrees", "wt")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(real, filepath.Join(ws, ".git")); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(real, "config"), "[core]\n\tbare = false\n[include]\n\tpath = ../ws/.gitconfig\n[includeIf \"gitdir:~/\"]\n\tpath = ~/extra.inc\n")
	write(filepath.Join(home, ".gitconfig"), "[core]\n\thooksPath = .githooks # shared hooks\n")
	paths, _ := LaterPaths(ws, home, false, false)
	for _, want := range []string{
		filepath.Join(real, "hooks"), filepath.Join(real, "config"), filepath.Join(real, "commondir"),
		filepath.Join(ws, ".gitconfig"), filepath.Join(home, "extra.inc"), filepath.Join(ws, ".githooks"),
		filepath.Join(real, "worktrees", "wt", "commondir"), filepath.Join(real, "worktrees", "wt", "gitdir"),
		filepath.Join(ws, ".envrc"), filepath.Join(ws, ".pre-commit-config.yaml"),
	} {
		if !slices.Contains(paths, want) {
			t.Errorf("later paths lack %s: %v", want, paths)
		}
	}
	// With git writing the work tree, the workspace's own files are left
	// out, and with git writing its configuration, the config file; hooks
	// never.
	paths, _ = LaterPaths(ws, home, true, true)
	for _, gone := range []string{filepath.Join(ws, ".envrc"), filepath.Join(real, "config")} {
		if slices.Contains(paths, gone) {
			t.Errorf("later paths keep %s", gone)
		}
	}
	if !slices.Contains(paths, filepath.Join(real, "hooks")) {
		t.Error("the hooks are no longer protected")
	}
}

// TestSecurityAgentSettingsRunLater: the coding agents' project settings
// (their hooks route their commands through mnemos) and the package
// managers' files that name a program to run are what runs later: read-only
// in the sandbox, or moved aside when a run creates them.
func TestSecurityAgentSettingsRunLater(t *testing.T) {
	dir := t.TempDir()
	paths, _ := LaterPaths(dir, "", false, false)
	for _, want := range []string{".claude", ".codex", ".gemini", ".cursor", ".github/hooks", ".mcp.json", ".npmrc", ".yarnrc.yml", ".cargo", "mise.toml"} {
		if !slices.Contains(paths, filepath.Join(dir, want)) {
			t.Errorf("LaterPaths lacks %s", want)
		}
	}
}
