package gate

import (
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// What git ignores in a work tree, read as git reads it, for telling the
// files git does not track and does not ignore (work only the journal
// brings back) from build outputs: the work tree's .gitignore files (each
// for its directory and below, the deeper one deciding), the
// repository's info/exclude, and the user's global file at its default
// place ($XDG_CONFIG_HOME/git/ignore, else ~/.config/git/ignore). A
// core.excludesFile set elsewhere in git's configuration is not read
// (git's configuration is not parsed at decision time): what only it
// ignores counts as untracked, so a deletion of it asks rather than
// passes unseen. A .gitignore too large or unreadable ignores nothing.

// maxIgnoreFile bounds one ignore file read at decision time.
const maxIgnoreFile = 256 << 10

// ignorePattern is one line of an ignore file.
type ignorePattern struct {
	pat string
	// neg: the line began with '!' (it re-includes what it matches).
	neg bool
	// dirOnly: it ended with '/' (it matches directories only).
	dirOnly bool
	// anchored: it holds a '/' before its end, so it matches the path
	// from the ignore file's directory, not any name below it.
	anchored bool
}

// ignoreList is the patterns of one ignore file, for the paths below its
// directory base (slash-separated, relative to the work tree; "" for the
// top).
type ignoreList struct {
	base string
	pats []ignorePattern
}

// gitIgnores answers, for one work tree, whether git ignores a path.
type gitIgnores struct {
	root string
	// top are the lists that apply everywhere, lowest precedence first:
	// the global file, info/exclude.
	top []ignoreList
	// dirs caches each directory's .gitignore (nil when it has none).
	dirs map[string]*ignoreList
	// ignoredDir caches the answer for directories.
	ignoredDir map[string]bool
}

// newGitIgnores reads what applies everywhere in the work tree root:
// the global file (under home, or $XDG_CONFIG_HOME when xdg is set) and
// the repository's info/exclude.
func newGitIgnores(root, home, xdg string) *gitIgnores {
	gi := &gitIgnores{root: root, dirs: map[string]*ignoreList{}, ignoredDir: map[string]bool{}}
	global := ""
	switch {
	case xdg != "" && filepath.IsAbs(xdg):
		global = filepath.Join(xdg, "git", "ignore")
	case home != "":
		global = filepath.Join(home, ".config", "git", "ignore")
	}
	if global != "" {
		if l := readIgnoreFile(global, ""); l != nil {
			gi.top = append(gi.top, *l)
		}
	}
	if gitDir, ok := gitDirOf(root); ok {
		common := gitDir
		if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
			if c := strings.TrimSpace(string(b)); c != "" {
				if !filepath.IsAbs(c) {
					c = filepath.Join(gitDir, c)
				}
				common = c
			}
		}
		if l := readIgnoreFile(filepath.Join(common, "info", "exclude"), ""); l != nil {
			gi.top = append(gi.top, *l)
		}
	}
	return gi
}

// readIgnoreFile reads the ignore file at p for the directory base; nil
// when there is none or it cannot be read.
func readIgnoreFile(p, base string) *ignoreList {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIgnoreFile {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, maxIgnoreFile))
	if err != nil {
		return nil
	}
	l := &ignoreList{base: base}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := parseIgnoreLine(line); ok {
			l.pats = append(l.pats, p)
		}
	}
	return l
}

// parseIgnoreLine reads one line of an ignore file (gitignore(5)).
func parseIgnoreLine(line string) (ignorePattern, bool) {
	line = strings.TrimSuffix(line, "\r")
	// Trailing spaces go, unless escaped.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
		line = line[:len(line)-1]
	}
	if line == "" || line[0] == '#' {
		return ignorePattern{}, false
	}
	var p ignorePattern
	if line[0] == '!' {
		p.neg = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignorePattern{}, false
	}
	if strings.Contains(line, "/") {
		p.anchored = true
		line = strings.TrimPrefix(line, "/")
	}
	p.pat = line
	return p, true
}

// list is the .gitignore of the directory dir (relative, "" for the
// top), read once.
func (gi *gitIgnores) list(dir string) *ignoreList {
	if l, ok := gi.dirs[dir]; ok {
		return l
	}
	l := readIgnoreFile(filepath.Join(gi.root, filepath.FromSlash(dir), ".gitignore"), dir)
	gi.dirs[dir] = l
	return l
}

// ignored reports whether git ignores rel (slash-separated, relative to
// the work tree), a directory when dir: it, or a directory holding it,
// matches an ignore pattern last.
func (gi *gitIgnores) ignored(rel string, dir bool) bool {
	rel = strings.Trim(rel, "/")
	if rel == "" || rel == "." {
		return false
	}
	// A directory git ignores hides all it holds: nothing below it can
	// be re-included.
	if parent := path.Dir(rel); parent != "." && gi.ignoredDirectory(parent) {
		return true
	}
	if dir {
		return gi.ignoredDirectory(rel)
	}
	return gi.matches(rel, false)
}

func (gi *gitIgnores) ignoredDirectory(rel string) bool {
	if v, ok := gi.ignoredDir[rel]; ok {
		return v
	}
	v := false
	if parent := path.Dir(rel); parent != "." && gi.ignoredDirectory(parent) {
		v = true
	} else {
		v = gi.matches(rel, true)
	}
	gi.ignoredDir[rel] = v
	return v
}

// matches reports whether the last pattern that matches rel itself (not
// its directories) ignores it.
func (gi *gitIgnores) matches(rel string, dir bool) bool {
	lists := append([]ignoreList(nil), gi.top...)
	// The .gitignore of the top, then of each directory down to rel's.
	d := ""
	elems := strings.Split(rel, "/")
	for i := 0; i < len(elems); i++ {
		if l := gi.list(d); l != nil {
			lists = append(lists, *l)
		}
		if i == len(elems)-1 {
			break
		}
		d = path.Join(d, elems[i])
	}
	base := elems[len(elems)-1]
	for i := len(lists) - 1; i >= 0; i-- {
		l := lists[i]
		sub := rel
		if l.base != "" {
			sub = strings.TrimPrefix(rel, l.base+"/")
		}
		for j := len(l.pats) - 1; j >= 0; j-- {
			p := l.pats[j]
			if p.dirOnly && !dir {
				continue
			}
			text := base
			if p.anchored {
				text = sub
			}
			m, ok := wildmatch(p.pat, text, true, false)
			if !ok {
				// Too costly to tell: not ignored (a deletion of it asks).
				return false
			}
			if m {
				return !p.neg
			}
		}
	}
	return false
}
