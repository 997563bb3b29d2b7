package sandbox

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"

	"github.com/mnemos-dev/mnemos/later"
)

// What runs later: files a confined command could write inside a tree it
// may change, that programs run or obey afterwards outside the sandbox
// (package later names them).

// LaterPaths lists what, in the workspace dir, runs later outside the
// sandbox or decides what runs: the workspace's own later files, its git
// directory's (followed through a .git file to a linked worktree's git
// directory and its common directory), the submodules' under
// .git/modules and the list of them (.gitmodules), and the directory
// core.hooksPath names. With gitConfig set, the git directory's config
// file and .gitmodules are left out: the run may write them.
// With gitWorktree set, the workspace's own later files are left out: the
// run is git checking out, merging or rebasing, which writes those files
// as the repository's history has them. Each path is absolute; present
// says whether it exists.
func LaterPaths(dir, home string, gitConfig, gitWorktree bool) (paths []string, present []bool) {
	add := func(p string) {
		for _, q := range paths {
			if q == p {
				return
			}
		}
		_, err := os.Lstat(p)
		paths = append(paths, p)
		present = append(present, err == nil)
	}
	if !gitWorktree {
		for _, n := range later.Workspace() {
			add(filepath.Join(dir, n))
		}
		if !gitConfig {
			// The submodules git status enters and git submodule update
			// clones: git submodule add and sync write it.
			add(filepath.Join(dir, ".gitmodules"))
		}
	}
	gitDirs := gitDirsOf(dir)
	for i, g := range gitDirs {
		for _, n := range later.Git() {
			if n == "config" && gitConfig && i == 0 {
				continue
			}
			add(filepath.Join(g, n))
		}
	}
	for _, g := range gitDirs {
		for _, m := range submoduleGitDirs(filepath.Join(g, "modules"), 3) {
			for _, n := range later.Git() {
				add(filepath.Join(m, n))
			}
		}
	}
	// Linked worktrees: each one's commondir, gitdir and configuration.
	for _, g := range gitDirs {
		ents, _ := os.ReadDir(filepath.Join(g, "worktrees"))
		for _, e := range ents {
			if e.IsDir() {
				for _, n := range []string{"commondir", "gitdir", "config.worktree", "hooks"} {
					add(filepath.Join(g, "worktrees", e.Name(), n))
				}
			}
		}
	}
	// core.hooksPath and included files, from the repository's
	// configuration and the user's and system's: a relative hooksPath is
	// in the workspace.
	configs := []string{}
	for _, g := range gitDirs {
		configs = append(configs, filepath.Join(g, "config"))
	}
	if home != "" {
		configs = append(configs, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	configs = append(configs, "/etc/gitconfig")
	for _, c := range configs {
		hp, includes := gitConfigPaths(c, dir, home)
		if hp != "" {
			add(hp)
		}
		for _, inc := range includes {
			add(inc)
		}
	}
	return paths, present
}

// gitDirsOf returns the git directory of the workspace dir and, for a
// linked worktree or a submodule checkout, the common directory it shares.
func gitDirsOf(dir string) []string {
	dotgit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return []string{dotgit}
	}
	if fi.IsDir() {
		return []string{dotgit}
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		// A link to the git directory: protect where it points.
		if real, err := filepath.EvalSymlinks(dotgit); err == nil {
			if st, err := os.Stat(real); err == nil && st.IsDir() {
				return []string{real}
			}
		}
		return []string{dotgit}
	}
	raw, err := os.ReadFile(dotgit)
	if err != nil {
		return nil
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	gd, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return nil
	}
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(dir, gd)
	}
	dirs := []string{filepath.Clean(gd)}
	if c, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gd, common)
		}
		dirs = append(dirs, filepath.Clean(common))
	}
	return dirs
}

// submoduleGitDirs lists the git directories under modules, down to depth
// levels of nested submodules: a directory holding a config file or a
// HEAD is one.
func submoduleGitDirs(modules string, depth int) []string {
	if depth == 0 {
		return nil
	}
	ents, err := os.ReadDir(modules)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		d := filepath.Join(modules, e.Name())
		if _, err := os.Lstat(filepath.Join(d, "HEAD")); err == nil {
			out = append(out, d)
			out = append(out, submoduleGitDirs(filepath.Join(d, "modules"), depth-1)...)
			continue
		}
		// A submodule named with a slash nests its git directory.
		out = append(out, submoduleGitDirs(d, depth-1)...)
	}
	return out
}

// gitConfigPaths reads core.hooksPath and the include paths
// ([include] and [includeIf] path) from a git config file. A relative
// hooksPath is relative to the worktree's top, a relative include to the
// file's directory; ~/ is home. It does not follow the includes.
func gitConfigPaths(config, top, home string) (hooks string, includes []string) {
	f, err := os.Open(config)
	if err != nil {
		return "", nil
	}
	defer f.Close()
	resolve := func(v, rel string) string {
		switch {
		case v == "":
			return ""
		case strings.HasPrefix(v, "~/") && home != "":
			return filepath.Join(home, v[2:])
		case filepath.IsAbs(v):
			return filepath.Clean(v)
		}
		return filepath.Join(rel, v)
	}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimSpace(line[1:end]), " ")
			section = strings.ToLower(name)
			line = strings.TrimSpace(line[end+1:])
		}
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if !strings.HasPrefix(v, "\"") {
			if i := strings.IndexAny(v, "#;"); i >= 0 {
				v = strings.TrimSpace(v[:i])
			}
		}
		v = strings.Trim(v, "\"")
		switch {
		case section == "core" && k == "hookspath":
			hooks = resolve(v, top)
		case (section == "include" || section == "includeif") && k == "path":
			if p := resolve(v, filepath.Dir(config)); p != "" {
				includes = append(includes, p)
			}
		}
	}
	return hooks, includes
}
