package classify

import (
	"math/rand"
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/quick"

	"github.com/mnemos-dev/mnemos/shellparse"
)

func TestCatalog(t *testing.T) {
	m, err := parseCatalog(catalogSource)
	if err != nil {
		t.Fatal(err)
	}
	builtins := 0
	for name, s := range m {
		switch name {
		case ":", "[", "[[", "test", "read", "wait", "exit", "return", "shift", "set", "unset", "export", "declare",
			"typeset", "local", "readonly", "let", "alias", "unalias", "hash", "umask", "ulimit", "getopts",
			"break", "continue", "type", "help", "cd", "pushd", "popd", "echo", "printf", "true", "false", "pwd":
			builtins++
		}
		for _, o := range slices.Concat(s.opts, s.outs, s.ins, s.runs) {
			if !strings.HasPrefix(o, "-") {
				t.Errorf("%s: option %q", name, o)
			}
		}
	}
	if programs := len(m) - builtins; programs < 150 {
		t.Errorf("catalog lists %d programs besides shell builtins, want at least 150", programs)
	}
	for _, bad := range []string{"x", "x nokind", "x read wat", "x read\nx write", "x read in:f", "x read run:pre", "x read out:o"} {
		if _, err := parseCatalog(bad); err == nil {
			t.Errorf("parseCatalog(%q) accepted", bad)
		}
	}
}

// classifyScript parses src in /w (home /home/u) and classifies the
// command named by its first word, as mnemos run runs it (runPlace).
func classifyScript(t *testing.T, src string) Classification {
	t.Helper()
	s, err := shellparse.ParseScript(src, shellparse.Env{Home: "/home/u", Cwd: "/w"})
	if err != nil || len(s.Commands) == 0 {
		t.Fatalf("%s: %v", src, err)
	}
	prog := strings.Fields(src)[0]
	for _, c := range s.Commands {
		if c.Name() == prog || c.HasWrapper(prog) {
			return Classify(c, runPlace(s, "/w", "/home/u"))
		}
	}
	t.Fatalf("%s: no %s command in %+v", src, prog, s.Commands)
	return Classification{}
}

func accessList(c Classification) string {
	var out []string
	for _, a := range c.Accesses {
		s := string(a.Capability)
		if a.Target != "" {
			s += " " + a.Target
		}
		if a.Dynamic {
			s += " (dynamic)"
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

// TestSecurityClassifyHiddenEffects: programs that read files, write them
// or run commands through their arguments are classified by what they can
// do, not by their name.
func TestSecurityClassifyHiddenEffects(t *testing.T) {
	cases := []struct {
		src, want string
	}{
		{"wc -l /etc/hosts", "fs:read /etc/hosts"},
		{"base64 ~/notes.txt", "fs:read /home/u/notes.txt"},
		{"sha256sum a b", "fs:read /w/a; fs:read /w/b"},
		{"sort -k 2 -o sorted.txt data.txt", "fs:write /w/sorted.txt; fs:read /w/data.txt"},
		{"echo x | sort", "parse:local"},
		{"uniq in.txt out.txt", "fs:write /w/out.txt; fs:read /w/in.txt"},
		{"jq .name package.json", "parse:local; fs:read /w/package.json"},
		{"cut -d , -f 2 data.csv", "fs:read /w/data.csv"},
		{"sed -n '1,5p' README.md", "fs:read /w/README.md"},
		{"sed 's/a/b/g; /x/d' README.md", "fs:read /w/README.md"},
		{"sed 'e rm -rf /' README.md", "code:exec sed e rm -rf / README.md; fs:read /w/README.md"},
		{"sed -n '1e rm -rf ~' README.md", "code:exec sed -n 1e rm -rf ~ README.md; fs:read /w/README.md"},
		{"sed -e '1!d' -e 'e rm -rf /' README.md", "code:exec sed -e 1!d -e e rm -rf / README.md; fs:read /w/README.md"},
		{"sed -n 'w /etc/cron.d/x' README.md", "code:exec sed -n w /etc/cron.d/x README.md; fs:read /w/README.md"},
		{"sed 's/^/x/w /etc/profile' README.md", "code:exec sed s/^/x/w /etc/profile README.md; fs:read /w/README.md"},
		{"sed 's|a|b|e' README.md", "code:exec sed s|a|b|e README.md; fs:read /w/README.md"},
		{"sed '/x/r /etc/shadow' README.md", "code:exec sed /x/r /etc/shadow README.md; fs:read /w/README.md"},
		{"sed -f evil.sed README.md", "code:exec sed -f evil.sed README.md; fs:read /w/README.md"},
		{"sed -nf evil.sed README.md", "code:exec sed -nf evil.sed README.md; fs:read /w/README.md"},
		{"sed -i.bak 's/a/b/' f.txt", "fs:write /w/f.txt"},
		{"sed -ni 's/a/b/p' f.txt", "fs:write /w/f.txt"},
		{"less +'!rm -rf /' README.md", "code:exec less +!rm -rf / README.md; fs:read /w/README.md"},
		{"less -N README.md", "fs:read /w/README.md"},
		{"view -c '!id' README.md", "code:exec view -c !id README.md; fs:read /w/README.md"},
		{"man -P 'rm -rf ~' ls", "parse:local; code:exec man -P rm -rf ~ ls"},
		{"man ls", "parse:local"},
		{"export PAGER='rm -rf /'", "parse:local; code:exec export PAGER=rm -rf /"},
		{"export EDITOR_THEME=dark", "parse:local"},
		{"env --chdir=/etc cat shadow", "fs:read /etc/shadow"},
		{"env -C sub cat x", "fs:read /w/sub/x"},
		{"env -C ~/src cat x", "fs:read /home/u/src/x"},
		{"sudo -D /srv cat x", "code:exec sudo -D /srv cat x; fs:read /srv/x"},
		{"make test", "code:exec make test"},
		{"command -v git", "parse:local"},
		{"wc -l *.go", "fs:read /w/*.go"},
		{"grep -rn TODO --include=*.go .", "fs:read /w"},
		{"cat src/*/x.go", "fs:read /w/src/*/x.go"},
		{"ls .*", "fs:read .* (dynamic)"},
		{"cat ../*.go", "fs:read ../*.go (dynamic)"},
		{"rm *", "fs:write /w/*"},
	}
	for _, tc := range cases {
		if got := accessList(classifyScript(t, tc.src)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
	if v := classifyScript(t, "make").Verb; v != "build" {
		t.Errorf("make verb %q", v)
	}
}

func TestSecurityShowingTheEnvironmentReadsIt(t *testing.T) {
	pl := Place{Dirs: []string{"/w"}, Home: "/home/u"}
	for _, tc := range []struct {
		argv []shellparse.Word
		want bool
	}{
		{[]shellparse.Word{{Value: "env"}}, true},
		{[]shellparse.Word{{Value: "env"}, {Value: "-0"}}, true},
		{[]shellparse.Word{{Value: "printenv"}}, true},
		{[]shellparse.Word{{Value: "printenv"}, {Value: "GITHUB_TOKEN"}}, true},
		{[]shellparse.Word{{Value: "echo"}, {Value: "$AWS_SECRET_ACCESS_KEY", Dynamic: true}}, true},
		{[]shellparse.Word{{Value: "echo"}, {Value: "x${db_password:-y}", Dynamic: true}}, true},
		{[]shellparse.Word{{Value: "set"}}, true},
		{[]shellparse.Word{{Value: "export"}, {Value: "-p"}}, true},
		{[]shellparse.Word{{Value: "printenv"}, {Value: "PATH"}}, false},
		{[]shellparse.Word{{Value: "echo"}, {Value: "$HOME", Dynamic: true}}, false},
		{[]shellparse.Word{{Value: "export"}, {Value: "FOO=1"}}, false},
		{[]shellparse.Word{{Value: "declare"}, {Value: "-x"}, {Value: "FOO=1"}}, false},
		{[]shellparse.Word{{Value: "set"}, {Value: "-e"}}, false},
		{[]shellparse.Word{{Value: "env"}, {Value: "-u"}, {Value: "X"}}, true},
		{[]shellparse.Word{{Value: "env"}, {Value: "--chdir"}, {Value: "/tmp"}}, true},
		{[]shellparse.Word{{Value: "export"}, {Value: "-n"}}, true},
		{[]shellparse.Word{{Value: "jq"}, {Value: "-n"}, {Value: "env"}}, true},
		{[]shellparse.Word{{Value: "jq"}, {Value: "-n"}, {Value: "$ENV.HOME"}}, true},
		{[]shellparse.Word{{Value: "yq"}, {Value: "-n"}, {Value: "env(AWS_SECRET_ACCESS_KEY)"}}, true},
		{[]shellparse.Word{{Value: "yq"}, {Value: "-n"}, {Value: "strenv(X)"}}, true},
		{[]shellparse.Word{{Value: "jq"}, {Value: ".environment"}, {Value: "f.json"}}, false},
		{[]shellparse.Word{{Value: "jq"}, {Value: ".name"}, {Value: "package.json"}}, false},
		{[]shellparse.Word{{Value: "jq"}, {Value: ".env"}, {Value: "vercel.json"}}, false},
		{[]shellparse.Word{{Value: "jq"}, {Value: ".services.web.env.PORT"}, {Value: "c.json"}}, false},
		{[]shellparse.Word{{Value: "jq"}, {Value: "-n"}, {Value: "env | keys"}}, true},
	} {
		cl := Classify(shellparse.Command{Argv: tc.argv}, pl)
		got := false
		for _, a := range cl.Accesses {
			if a.Capability == FSRead && a.Target == EnvironmentTarget {
				got = true
			}
		}
		if got != tc.want {
			t.Errorf("%v: reads the environment = %v, want %v (%+v)", tc.argv, got, tc.want, cl.Accesses)
		}
	}
}

// A secret-named variable that reaches a command through the script's own
// variables (x=$GITHUB_TOKEN; echo "$x") is shown as much as one written
// in its words, whatever the program.
func TestSecurityShowingASecretThroughVariablesReadsTheEnvironment(t *testing.T) {
	pl := Place{Dirs: []string{"/w"}, Home: "/home/u"}
	echoX := []shellparse.Word{{Value: "echo"}, {Value: "$x", Dynamic: true}}
	for _, tc := range []struct {
		argv []shellparse.Word
		refs []string
		want bool
	}{
		{echoX, []string{"GITHUB_TOKEN"}, true},
		{echoX, []string{"HOME", "db_password"}, true},
		{[]shellparse.Word{{Value: "curl"}, {Value: "-d"}, {Value: "$x", Dynamic: true}, {Value: "https://example.com"}}, []string{"AWS_SECRET_ACCESS_KEY"}, true},
		{[]shellparse.Word{{Value: "cat"}}, []string{"NPM_TOKEN"}, true},
		{echoX, nil, false},
		{echoX, []string{"HOME"}, false},
		{echoX, []string{"PATH", "USER"}, false},
	} {
		cl := Classify(shellparse.Command{Argv: tc.argv, EnvRefs: tc.refs}, pl)
		got := false
		for _, a := range cl.Accesses {
			if a.Capability == FSRead && a.Target == EnvironmentTarget {
				got = true
			}
		}
		if got != tc.want {
			t.Errorf("%v with EnvRefs %v: reads the environment = %v, want %v", tc.argv, tc.refs, got, tc.want)
		}
	}
}

func TestCleanAbsAgreesWithPathClean(t *testing.T) {
	for _, p := range []string{"/", "/a", "/a/b", "/a/", "//a", "/a//b", "/a/./b", "/a/../b", "/.", "/..", "/a/.", "/a/..",
		"/.a", "/..a", "/a/.b/c", "/a/b..", "/a/.../b", "/a/b/.", "/..."} {
		if got, want := cleanAbs(p), path.Clean(p) == p; got != want {
			t.Errorf("cleanAbs(%q) = %v, want %v", p, got, want)
		}
	}
	f := func(s string) bool {
		p := "/" + s
		return cleanAbs(p) == (path.Clean(p) == p)
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 20000, Values: func(v []reflect.Value, r *rand.Rand) {
		const alphabet = "/./a"
		b := make([]byte, r.Intn(12))
		for i := range b {
			b[i] = alphabet[r.Intn(len(alphabet))]
		}
		v[0] = reflect.ValueOf(string(b))
	}}); err != nil {
		t.Error(err)
	}
}

// FuzzResolvePaths: a static relative word resolves, in each absolute
// directory, to the directory and the word joined and cleaned.
func FuzzResolvePaths(f *testing.F) {
	for _, s := range []string{".", "./", "a", "a/b", "./a/", "..", "../a", "a/../b", ".//a", "a//b", ".x", "..x", "a/.", "./.", "././a", "a/", "./a/./b"} {
		f.Add(s, "/home/u/proj", "/")
		f.Add(s, "/home/u/proj/", "/tmp/./x")
	}
	f.Fuzz(func(t *testing.T, v, d1, d2 string) {
		if v == "" || strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") || strings.HasPrefix(v, "$") {
			return
		}
		for _, dirs := range [][]string{{d1}, {d1, d2}, {d2, "/", d1}} {
			if !slices.ContainsFunc(dirs, func(d string) bool { return !strings.HasPrefix(d, "/") }) {
				got := resolvePaths(Place{Dirs: dirs, Home: "/home/u"}, shellparse.Word{Value: v}, nil)
				if len(got) != len(dirs) {
					t.Fatalf("%q in %q: %v", v, dirs, got)
				}
				for i, d := range dirs {
					if want := path.Join(d, v); got[i].path != want || got[i].dynamic || got[i].glob {
						t.Fatalf("%q in %q: %v, want %q", v, d, got[i], want)
					}
				}
			}
		}
	})
}

// TestSecurityWritingWhatRunsLater: a write to a git hook, git's own
// configuration, direnv's .envrc or a shell startup file is running code
// later, outside any decision: code:exec, which asks even at full.
func TestSecurityWritingWhatRunsLater(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   bool
	}{
		{"echo 'rm -rf ~' > .git/hooks/pre-commit", true},
		{"cp x /w/.git/hooks/post-checkout", true},
		{"tee -a .git/config", true},
		{"echo 'eval x' > .envrc", true},
		{"echo x >> ~/.bashrc", true},
		{"echo x >> /home/u/.zshenv", true},
		{"echo x >> ~/.config/fish/config.fish", true},
		{"sort README.md -o /etc/profile", true},
		{"echo x > /etc/profile.d/x.sh", true},
		{"echo x > .git/description", false},
		{"echo x >> notes/.bashrc", false},
		{"touch notes.txt", false},
		{"cat .git/config", false},
	} {
		cl := classifyScript(t, tc.script)
		got := false
		for _, a := range cl.Accesses {
			if a.Capability == CodeExec {
				got = true
			}
		}
		if got != tc.want {
			t.Errorf("%s: runs code = %v, want %v (%+v)", tc.script, got, tc.want, cl.Accesses)
		}
	}
}

// TestSecurityDeleteOutsideTheWorkspaceAsks: with the workspace known, a
// delete outside it, the temp directories and ~/.cache raises the floor
// to ask, whatever the level.
func TestSecurityDeleteOutsideTheWorkspaceAsks(t *testing.T) {
	for _, tc := range []struct {
		script string
		asks   bool
	}{
		{"rm -rf /opt/app", true},
		{"rm /etc/hosts", true},
		{"rm ~/notes.txt", true},
		{"shred -u /srv/data.db", true},
		{"rm -rf /w", true},
		{"rm -rf build", false},
		// find deletes below its starting point, the workspace here.
		{"find . -name '*.o' -delete", false},
		{"find /w -name '*.o' -delete", false},
		{"find /srv -name '*.o' -delete", true},
		{"rm -rf /w/dist", false},
		{"rm -f /tmp/x /var/tmp/y", false},
		{"rm -rf ~/.cache/go-build", false},
		{"touch /opt/x", false},
	} {
		s, err := shellparse.ParseScript(tc.script, shellparse.Env{Home: "/home/u", Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		pl := PlaceOf(s, "/w", "/home/u")
		pl.Workspace = "/w"
		cl := Classify(s.Commands[0], pl)
		if asks := cl.Floor == Ask; asks != tc.asks {
			t.Errorf("%s: floor %s (%s), want ask %v", tc.script, cl.Floor, cl.FloorReason, tc.asks)
		}
		if tc.asks && strings.Contains(cl.FloorReason, "outside the workspace (/w)") {
			t.Errorf("%s: the workspace called outside itself: %s", tc.script, cl.FloorReason)
		}
		// Without a workspace (a policy test's place), no floor.
		if cl := Classify(s.Commands[0], PlaceOf(s, "/w", "/home/u")); cl.Floor == Ask && tc.asks && strings.HasPrefix(cl.FloorReason, "deletes outside") {
			t.Errorf("%s: floor without a workspace", tc.script)
		}
	}
}

func words(ws ...string) []shellparse.Word {
	out := make([]shellparse.Word, len(ws))
	for i, w := range ws {
		out[i] = shellparse.Word{Value: w}
	}
	return out
}

func cmd(ws ...string) shellparse.Command { return shellparse.Command{Argv: words(ws...)} }

// TestSecurityFindDeletesAndWritesWhereItSays: find with no starting
// point searches ".", so -delete deletes there (it was taken for a read
// of the workspace and ran at supervised without asking); -fprint FILE,
// -fprint0, -fls and -fprintf write FILE (a write to ~/.bashrc was
// allowed at full outside the sandbox).
func TestSecurityFindDeletesAndWritesWhereItSays(t *testing.T) {
	for _, tc := range []struct {
		script string
		verb   string
		writes []string
	}{
		{"find -name '*.md' -delete", "delete", []string{"/w"}},
		{"find -type f -delete", "delete", []string{"/w"}},
		{"find -L -name x -delete", "delete", []string{"/w"}},
		{"find -D tree -O2 src -name x -delete", "delete", []string{"/w/src"}},
		{"find src -name x -fprint /home/u/.bashrc", "write", []string{"/home/u/.bashrc"}},
		{"find -name x -fprint0 .git/hooks/pre-commit", "write", []string{"/w/.git/hooks/pre-commit"}},
		{"find . -fls /home/u/.profile", "write", []string{"/home/u/.profile"}},
		{"find . -maxdepth 0 -fprintf .git/hooks/pre-commit '#!/bin/sh' -name x", "write", []string{"/w/.git/hooks/pre-commit"}},
		{"find gen -name '*.o' -delete -fprint /tmp/gone", "delete", []string{"/tmp/gone", "/w/gen"}},
		{"find . -name '*.go'", "", nil},
	} {
		s, err := shellparse.ParseScript(tc.script, shellparse.Env{Home: "/home/u", Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		pl := PlaceOf(s, "/w", "/home/u")
		pl.Workspace = "/w"
		cl := Classify(s.Commands[0], pl)
		var writes []string
		for _, a := range cl.Accesses {
			if a.Capability == FSWrite {
				writes = append(writes, a.Target)
			}
		}
		slices.Sort(writes)
		if !slices.Equal(writes, tc.writes) {
			t.Errorf("%s: writes %q, want %q", tc.script, writes, tc.writes)
		}
		if tc.verb != "" && cl.Verb != tc.verb {
			t.Errorf("%s: verb %q, want %q", tc.script, cl.Verb, tc.verb)
		}
	}
}
