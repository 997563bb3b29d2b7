package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// A git repository made inside another is what runs later: git status in
// the outer one enters it when it is a submodule, and a person's prompt,
// editor or git command in it reads its configuration and runs its hooks.
// A command that makes one asks, at every level, and its card says so
// (metaNested); under mnemos run, what the run leaves is made harmless
// when it ends (sandbox.WatchRepos), so a new repository in a directory
// the request makes afresh (mkdir -p t && cd t && git init), which holds
// nothing of the outer repository, runs without asking there.

// nestedRepo returns where the command makes a git repository inside
// another one (its path, or a phrase such as "in a directory not known
// before it runs"), or "":
// git init, clone, submodule add and update, worktree add; a copy, move,
// link or archive extraction that puts a .git (or a git directory) in
// place; a write into a .git below the workspace's own or into the
// workspace's .git/modules or worktrees. pl is the command's place;
// sandboxed says it runs under mnemos run.
func nestedRepo(cmd shellparse.Command, res *policy.Result, pl classify.Place, ws string, sandboxed bool) string {
	if cmd.Dynamic {
		return ""
	}
	base := pl.Dirs
	if pl.UnknownDir || len(base) == 0 {
		base = nil
	}
	switch cmd.Name() {
	case "git":
		return nestedByGit(cmd, base, ws, sandboxed)
	case "cp", "mv", "rsync", "ln", "install", "ditto":
		return nestedByCopy(cmd, base, ws)
	case "tar", "bsdtar", "gtar", "unzip", "7z", "7za", "unrar", "cpio", "pax":
		for _, w := range cmd.Argv[1:] {
			v, _ := strings.CutPrefix(w.Value, "--directory=")
			if !w.Dynamic && hasGitSegment(v) {
				return v
			}
		}
		return ""
	}
	if res == nil || res.Verb == "delete" {
		return ""
	}
	for _, a := range res.Accesses {
		if a.Capability == classify.FSWrite && !a.Dynamic && intoNestedGit(a.Target, ws) {
			return a.Target
		}
	}
	for _, r := range cmd.Redirects {
		if r.Writes() && !r.Target.Dynamic {
			for _, d := range joinEach(base, r.Target.Value) {
				if intoNestedGit(d, ws) {
					return d
				}
			}
		}
	}
	return ""
}

// nestedByGit is nestedRepo for git.
func nestedByGit(cmd shellparse.Command, base []string, ws string, sandboxed bool) string {
	args := cmd.Argv[1:]
	dirs := slices.Clone(base)
	gitDir := ""
	i := 0
	for ; i < len(args); i++ {
		if args[i].Dynamic {
			return ""
		}
		v := args[i].Value
		if !strings.HasPrefix(v, "-") {
			break
		}
		if strings.HasPrefix(v, "--git-dir=") {
			gitDir = strings.TrimPrefix(v, "--git-dir=")
		}
		switch v {
		case "-C", "--git-dir", "--work-tree", "--namespace", "-c", "--exec-path", "--config-env":
			if i+1 >= len(args) || args[i+1].Dynamic {
				return ""
			}
			i++
			switch v {
			case "-C":
				dirs = resolveAll(dirs, args[i].Value)
			case "--git-dir":
				gitDir = args[i].Value
			}
		}
	}
	if i >= len(args) {
		return ""
	}
	for _, kv := range cmd.Assigns {
		if d, ok := strings.CutPrefix(kv, "GIT_DIR="); ok && d != "" {
			gitDir = d
		}
	}
	sub, rest := args[i].Value, args[i+1:]
	pos, ok := gitPositionals(rest, gitValueOptions(sub))
	if !ok {
		return ""
	}
	switch sub {
	case "init":
		// The directory that becomes a repository (its work tree, or a
		// bare repository itself), and its git directory.
		target := dirs
		if len(pos) > 0 {
			target = resolveAll(dirs, pos[0])
		}
		for _, t := range orUnknown(target) {
			if t == "" {
				if lexists(filepath.Join(ws, ".git")) {
					return "in a directory not known before it runs"
				}
				continue
			}
			g := filepath.Join(t, ".git")
			if gitDir != "" {
				g = joinEach([]string{t}, gitDir)[0]
			}
			if lexists(g) && gitDir == "" {
				continue // initialises again the repository that is there
			}
			if !insideRepository(t) && !insideRepository(g) {
				continue
			}
			if sandboxed && gitDir == "" && freshDir(t) {
				// Made by this request: it holds nothing of the outer
				// repository, and the run's check looks after the rest.
				continue
			}
			return t
		}
	case "clone":
		if len(pos) == 0 {
			return ""
		}
		name := ""
		if len(pos) > 1 {
			name = pos[1]
		} else {
			name = humanishName(pos[0])
		}
		for _, d := range orUnknown(dirs) {
			if d == "" || name == "" {
				if insideRepository(ws) {
					return "in a directory not known before it runs"
				}
				continue
			}
			if t := joinEach([]string{d}, name)[0]; insideRepository(t) {
				return t
			}
		}
	case "submodule":
		if len(pos) == 0 {
			return ""
		}
		switch pos[0] {
		case "add":
			p, ok := gitPositionals(rest[wordIndex(rest, "add")+1:], gitValueOptions("submodule add"))
			if !ok || len(p) == 0 {
				return "in the submodule's directory"
			}
			name := humanishName(p[0])
			if len(p) > 1 {
				name = p[1]
			}
			for _, d := range orUnknown(dirs) {
				if d != "" && name != "" {
					return joinEach([]string{d}, name)[0]
				}
			}
			return "in the submodule's directory"
		case "update":
			return "for each submodule it checks out"
		case "absorbgitdirs":
			return "under .git/modules for each submodule whose git directory it moves there"
		}
	case "worktree":
		if len(pos) == 0 || pos[0] != "add" {
			return ""
		}
		p, ok := gitPositionals(rest[wordIndex(rest, "add")+1:], gitValueOptions("worktree add"))
		if !ok || len(p) == 0 {
			return "in a directory not known before it runs"
		}
		for _, d := range orUnknown(dirs) {
			if d != "" {
				return joinEach([]string{d}, p[0])[0]
			}
		}
		return "in a directory not known before it runs"
	}
	return ""
}

// gitValueOptions are the options of a git subcommand that take the next
// word as their value.
func gitValueOptions(sub string) []string {
	switch sub {
	case "init":
		return []string{"--template", "--separate-git-dir", "-b", "--initial-branch", "--object-format", "--ref-format"}
	case "clone":
		return []string{"-o", "--origin", "-b", "--branch", "-u", "--upload-pack", "--reference", "--reference-if-able", "--separate-git-dir",
			"--depth", "--shallow-since", "--shallow-exclude", "-c", "--config", "--template", "-j", "--jobs", "--filter", "--server-option",
			"--bundle-uri", "--ref-format", "--revision"}
	case "submodule add":
		return []string{"-b", "--branch", "--name", "--reference", "--depth"}
	case "worktree add":
		return []string{"-b", "-B", "--reason", "--orphan"}
	}
	return nil
}

// gitPositionals returns the words of args that are not options nor their
// values; false when one of them is dynamic.
func gitPositionals(args []shellparse.Word, valued []string) ([]string, bool) {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.Dynamic {
			return out, false
		}
		switch v := a.Value; {
		case v == "--":
			for _, w := range args[i+1:] {
				if w.Dynamic {
					return out, false
				}
				out = append(out, w.Value)
			}
			return out, true
		case slices.Contains(valued, v):
			i++
		case strings.HasPrefix(v, "-") && v != "-":
		default:
			out = append(out, v)
		}
	}
	return out, true
}

// nestedByCopy is nestedRepo for the programs that put a file or a tree in
// place: the path each source lands at, when it is a .git or a
// repository (a directory holding .git, or a git directory).
func nestedByCopy(cmd shellparse.Command, base []string, ws string) string {
	var pos []string
	target := ""
	for i := 1; i < len(cmd.Argv); i++ {
		w := cmd.Argv[i]
		if w.Dynamic {
			return ""
		}
		switch v := w.Value; {
		case v == "-t" && i+1 < len(cmd.Argv):
			target = cmd.Argv[i+1].Value
			i++
		case strings.HasPrefix(v, "--target-directory="):
			target = strings.TrimPrefix(v, "--target-directory=")
		case strings.HasPrefix(v, "-") && v != "-":
		default:
			pos = append(pos, v)
		}
	}
	if target == "" {
		if len(pos) < 2 {
			return ""
		}
		target, pos = pos[len(pos)-1], pos[:len(pos)-1]
	}
	for _, d := range base {
		t := joinEach([]string{d}, target)[0]
		into := strings.HasSuffix(target, "/") || len(pos) > 1 || isDir(t)
		for _, src := range pos {
			s := joinEach([]string{d}, src)[0]
			landed := t
			if into {
				landed = filepath.Join(t, filepath.Base(s))
			}
			if cmd.Name() == "rsync" && strings.HasSuffix(src, "/") {
				landed = t // the directory's contents
			}
			repo := filepath.Base(s) == ".git" || isDir(filepath.Join(s, ".git")) || lexists(filepath.Join(s, ".git")) || isGitDirShape(s)
			if intoNestedGit(landed, ws) || repo && classify.Within(ws, landed) && landed != ws {
				return landed
			}
		}
	}
	return ""
}

// intoNestedGit reports a path in or at a .git below the workspace that is
// not the workspace's own, or in the workspace's own .git/modules or
// .git/worktrees (where submodules' and linked worktrees' git directories
// live).
func intoNestedGit(p string, ws string) bool {
	if !classify.Within(ws, p) {
		return false
	}
	own := filepath.Join(ws, ".git")
	if classify.Within(own, p) {
		rel, _ := filepath.Rel(own, p)
		first, _, _ := strings.Cut(rel, string(filepath.Separator))
		return first == "modules" || first == "worktrees"
	}
	return hasGitSegment(p)
}

// hasGitSegment reports a path with a component named .git.
func hasGitSegment(p string) bool {
	for _, s := range strings.Split(filepath.ToSlash(p), "/") {
		if s == ".git" {
			return true
		}
	}
	return false
}

// insideRepository reports whether a directory above p holds a .git.
func insideRepository(p string) bool {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}

// freshDir reports a directory that does not exist yet, or is empty.
func freshDir(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		_, lerr := os.Lstat(p)
		return os.IsNotExist(lerr)
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) == 0
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// lexists reports whether p names anything, a dangling link too.
func lexists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// isGitDirShape reports a directory git takes for a git directory: HEAD,
// objects and refs.
func isGitDirShape(p string) bool {
	return lexists(filepath.Join(p, "HEAD")) && isDir(filepath.Join(p, "objects")) && isDir(filepath.Join(p, "refs"))
}

// humanishName is the directory git clone makes for a repository URL.
func humanishName(u string) string {
	u = strings.TrimRight(u, "/")
	u = strings.TrimSuffix(u, "/.git")
	if i := strings.LastIndexAny(u, "/:"); i >= 0 {
		u = u[i+1:]
	}
	u = strings.TrimSuffix(strings.TrimSuffix(u, ".git"), ".bundle")
	if u == "" || u == "." || u == ".." {
		return ""
	}
	return u
}

// joinEach resolves p against each directory (p absolute: itself; with
// no directory known, "").
func joinEach(dirs []string, p string) []string {
	if filepath.IsAbs(p) || len(dirs) == 0 {
		if !filepath.IsAbs(p) {
			return []string{""}
		}
		return []string{filepath.Clean(p)}
	}
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = filepath.Join(d, p)
	}
	return out
}

// resolveAll is joinEach that keeps "" (a directory not known) as it is.
func resolveAll(dirs []string, p string) []string {
	if len(dirs) == 0 {
		return joinEach(nil, p)
	}
	var out []string
	for _, d := range dirs {
		if d == "" {
			out = append(out, d)
			continue
		}
		out = append(out, joinEach([]string{d}, p)...)
	}
	return out
}

// orUnknown is dirs, or one unknown directory ("") when there are none.
func orUnknown(dirs []string) []string {
	if len(dirs) == 0 {
		return []string{""}
	}
	return dirs
}

// nestedLine is the card's line for a request that makes a repository
// inside another: where is a path, or a phrase (nestedRepo).
func nestedLine(where, ws string, sandboxed bool) string {
	line := "makes a git repository " + where + ", inside the repository " + ws
	if filepath.IsAbs(where) {
		if rel, err := filepath.Rel(ws, where); err == nil && !strings.HasPrefix(rel, "..") {
			line = "makes a git repository at " + rel + " inside the repository " + ws
		} else {
			line = "makes a git repository at " + where + " linked to the repository " + ws
		}
	}
	line += ": git reads its settings and runs its hooks outside the sandbox"
	if sandboxed {
		line += " (when the run ends, those that would run commands are moved aside)"
	}
	return line
}

// wordIndex is the index of the first static word v.
func wordIndex(ws []shellparse.Word, v string) int {
	for i, w := range ws {
		if !w.Dynamic && w.Value == v {
			return i
		}
	}
	return -1
}

// metaNested is the key of Details.Meta that keeps the card's lines for
// the repositories a request makes inside another, so that every channel
// shows them.
const metaNested = "nested_repos"

// nestedLines are the card's lines for the repositories the request's
// commands make inside another, one each.
func nestedLines(dec *Decision) []string {
	var out []string
	for _, c := range dec.Commands {
		if c.NestedRepo != "" {
			if l := approvals.Printable(nestedLine(c.NestedRepo, dec.Workspace, dec.Sandboxed)); !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	return out
}
