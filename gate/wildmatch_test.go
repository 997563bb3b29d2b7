package gate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWildmatch: patterns read as find's tests (fnmatch without
// FNM_PATHNAME: * matches '/') and as git's ignore files (slash: * stops
// at '/', ** spans directories).
func TestWildmatch(t *testing.T) {
	for _, tc := range []struct {
		pat, text   string
		slash, fold bool
		want        bool
	}{
		{"*.md", "README.md", false, false, true},
		{"*.md", "README.mdx", false, false, false},
		{"*.md", ".hidden.md", false, false, true},
		{"*.MD", "readme.md", false, true, true},
		{"*.MD", "readme.md", false, false, false},
		{"?.go", "a.go", false, false, true},
		{"?.go", "ab.go", false, false, false},
		{"[abc].go", "b.go", false, false, true},
		{"[!abc].go", "b.go", false, false, false},
		{"[^abc].go", "d.go", false, false, true},
		{"[a-c]x", "bx", false, false, true},
		{"[]]x", "]x", false, false, true},
		{"[[:digit:]]*", "7up", false, false, true},
		{"[[:digit:]]*", "up", false, false, false},
		{`\*.go`, "*.go", false, false, true},
		{`\*.go`, "a.go", false, false, false},
		{"[unclosed", "[unclosed", false, false, true},
		{"./.git/*", "./.git/objects/ab/cd", false, false, true},
		{"*/.git/*", "./sub/.git/HEAD", false, false, true},
		{"./.git/*", "./.git/objects/ab/cd", true, false, false},
		{"**/foo", "foo", true, false, true},
		{"**/foo", "a/b/foo", true, false, true},
		{"a/**/b", "a/b", true, false, true},
		{"a/**/b", "a/x/y/b", true, false, true},
		{"a/**", "a/x/y", true, false, true},
		{"a/**", "a", true, false, false},
		{"a**b", "a/b", true, false, false},
		{"doc/*.txt", "doc/x/y.txt", true, false, false},
		{"doc/*.txt", "doc/y.txt", true, false, true},
	} {
		got, ok := wildmatch(tc.pat, tc.text, tc.slash, tc.fold)
		if !ok || got != tc.want {
			t.Errorf("wildmatch(%q, %q, slash %v, fold %v) = %v, %v; want %v", tc.pat, tc.text, tc.slash, tc.fold, got, ok, tc.want)
		}
	}
	// A pattern built to take exponential time gives up.
	if _, ok := wildmatch(strings.Repeat("*a", 30)+"b", strings.Repeat("a", 200), false, false); ok {
		t.Error("an exponential pattern was matched to the end")
	}
}

// TestGitIgnoresAgreesWithGit: what gitIgnores says git ignores is what
// git check-ignore says, for the usual forms of ignore files (anchored,
// directory-only, negated, nested, **, info/exclude, the global file).
func TestGitIgnoresAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	home := t.TempDir()
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q")
	files := map[string]string{
		".gitignore":               "/build/\n*.log\n!keep.log\ndist/\ndocs/**/*.tmp\nsecret?.txt\n# a comment\n\\#hash\ntrailing.txt   \n",
		"sub/.gitignore":           "*.gen\n!important.gen\n/local.txt\n",
		".git/info/exclude":        "scratch/\n",
		"build/out.o":              "",
		"src/build/out.o":          "",
		"a.log":                    "",
		"keep.log":                 "",
		"src/deep/b.log":           "",
		"dist/x.js":                "",
		"pkg/dist/y.js":            "",
		"docs/a/b/c.tmp":           "",
		"docs/c.tmp":               "",
		"secret1.txt":              "",
		"secret12.txt":             "",
		"#hash":                    "",
		"trailing.txt":             "",
		"sub/x.gen":                "",
		"sub/important.gen":        "",
		"sub/local.txt":            "",
		"sub/deeper/local.txt":     "",
		"scratch/notes.md":         "",
		"plain.txt":                "",
		"dist-not/z.js":            "",
		"globalled.swp":            "",
		"sub/deeper/again.swp.txt": "",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	global := filepath.Join(home, ".config", "git", "ignore")
	if err := os.MkdirAll(filepath.Dir(global), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(global, []byte("*.swp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gi := newGitIgnores(dir, home, "")
	for name := range files {
		if strings.HasPrefix(name, ".git/") || strings.HasSuffix(name, ".gitignore") {
			continue
		}
		cmd := exec.Command("git", "check-ignore", "-q", "--no-index", name)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH")}
		err := cmd.Run()
		want := err == nil
		if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
			t.Fatalf("git check-ignore %s: %v", name, err)
		}
		if got := gi.ignored(name, false); got != want {
			t.Errorf("%s: ignored %v, git says %v", name, got, want)
		}
	}
	for _, d := range []string{"build", "src/build", "dist", "pkg/dist", "scratch", "dist-not", "sub/deeper"} {
		want := map[string]bool{"build": true, "dist": true, "pkg/dist": true, "scratch": true}[d]
		if got := gi.ignored(d, true); got != want {
			t.Errorf("directory %s: ignored %v, want %v", d, got, want)
		}
	}
}
