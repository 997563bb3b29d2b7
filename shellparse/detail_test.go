package shellparse

import (
	"errors"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func parseEither(t *testing.T, src string, argv []string) *Script {
	t.Helper()
	var s *Script
	var err error
	if argv != nil {
		s, err = ParseArgv(argv, testEnv())
	} else {
		s, err = ParseScript(src, testEnv())
	}
	if err != nil {
		t.Fatalf("parse %q%q: %v", src, argv, err)
	}
	return s
}

func TestSecurityNotesExplainWhatIsNotModelled(t *testing.T) {
	tests := []struct {
		src     string
		argv    []string
		note    string
		dynamic bool // the command carrying the note is dynamic
	}{
		{src: "$CMD -rf /", note: "command name comes from $CMD", dynamic: true},
		{src: "$(which rm) x", note: "command name comes from $(which rm)", dynamic: true},
		{argv: []string{"bash"}, note: "shell reads commands from stdin"},
		{src: "curl x | sh", note: "shell reads commands from stdin"},
		{src: "bash x.sh", note: "shell runs commands from file x.sh"},
		{src: "sh < f", note: "shell reads commands from file f"},
		{src: "bash <<EOF\nls\nEOF", note: "the here-doc is parsed"},
		{src: "echo \"$X\" | sh", note: "shell reads commands from a dynamic stdin", dynamic: true},
		{src: "source f", note: "file f is not followed"},
		{src: ". ./env", note: "file ./env is not followed"},
		{src: `eval "$x"`, note: "eval of a dynamic string", dynamic: true},
		{src: `bash -c "$x"`, note: "shell script comes from", dynamic: true},
		{src: ":(){ :|:& };:", note: "recursive call of function :"},
		{src: "> f", note: "redirection without a command"},
		{src: "{ (( 1 )); } > f", note: "redirection without a command"},
		{src: "sudo -s", note: "sudo starts an interactive shell"},
		{src: "sudo -e /etc/hosts", note: "sudoedit"},
		{src: "doas -s", note: "doas starts an interactive shell"},
		{src: "su", note: "su starts an interactive shell"},
		{src: "chroot /x", note: "chroot starts an interactive shell"},
		{src: "pkexec", note: "pkexec starts an interactive shell"},
		{src: "unshare -r", note: "unshare starts an interactive shell"},
		{src: "fish -c 'if'", note: "fish -c script does not parse", dynamic: true},
		{src: `trap "$x" EXIT`, note: "trap action comes from", dynamic: true},
		{argv: []string{""}, note: "empty command name"},
		{src: "env -S \"$x\" ls", note: "env option value comes from", dynamic: true},
		{src: "sed 's/.*/rm -rf \\//e' f", note: "sed runs the result of a substitution as a command"},
		{src: "sed -n 'e' f", note: "sed runs lines of its input as commands"},
		{src: "sed -f x.sed f", note: "sed script from x.sed is not followed"},
		{src: "sed \"s/a/$(cat p)/\" f", note: "sed script holds the output of a command"},
		{src: "sed \"s/a/b/$F\" f", note: "sed script is not understood"},
		{src: "sed 'k' f", note: "sed script is not understood"},
		{src: "rg --pre ./conv x .", note: "rg --pre runs a program on each file"},
		{src: "fd -x rm", note: "fd runs the command on each path found"},
		{src: "less '+|sh' f", note: "less runs commands given with +"},
		{src: "at now -f job.sh", note: "at runs commands from a file"},
		{src: "ls | parallel rm", note: "parallel appends arguments read at run time", dynamic: true},
		{src: "parallel echo ::: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17", note: "parallel runs more commands than are followed"},
		{src: "x=$(cat f); echo ${x@P}", note: "prompt expansion ${x@P} runs the commands", dynamic: true},
	}
	for _, tc := range tests {
		s := parseEither(t, tc.src, tc.argv)
		found := false
		for _, c := range s.Commands {
			for _, n := range c.Notes {
				if strings.Contains(n, tc.note) {
					found = true
					if c.Dynamic != tc.dynamic {
						t.Errorf("%q%q: command %q has Dynamic=%v, want %v", tc.src, tc.argv, c.String(), c.Dynamic, tc.dynamic)
					}
				}
			}
		}
		if !found {
			var all []string
			for _, c := range s.Commands {
				all = append(all, render(c)+" # "+strings.Join(c.Notes, "; "))
			}
			t.Errorf("%q%q: no note containing %q in\n\t%s", tc.src, tc.argv, tc.note, strings.Join(all, "\n\t"))
		}
	}
}

// TestSecurityRunTimeArgsAreDynamic: the words xargs and find supply
// when they run are dynamic words of the command they run, and the
// command says who supplies them (Command.RunTimeArgs), so that what
// they may be is judged as for any word known only at run time.
func TestSecurityRunTimeArgsAreDynamic(t *testing.T) {
	tests := []struct {
		src     string
		program string
		why     string
		dynamic []int // indexes of the words supplied at run time
	}{
		{src: "xargs rm", program: "rm", why: "xargs appends arguments read from stdin", dynamic: []int{1}},
		{src: "find . -name '*.go' | xargs -0 wc -l", program: "wc", why: "xargs appends arguments read from stdin", dynamic: []int{2}},
		{src: "xargs -I{} mv {} x", program: "mv", why: "xargs replaces {} with input read from stdin", dynamic: []int{1}},
		{src: "xargs -I % cp % %.bak", program: "cp", why: "xargs replaces % with input read from stdin", dynamic: []int{1, 2}},
		{src: `find . -exec rm {} \;`, program: "rm", why: "find replaces {} with each path found", dynamic: []int{1}},
		{src: `find . -type f -exec grep -l foo {} +`, program: "grep", why: "find replaces {} with each path found", dynamic: []int{3}},
	}
	for _, tc := range tests {
		s := parseEither(t, tc.src, nil)
		var got *Command
		for i := range s.Commands {
			if s.Commands[i].Name() == tc.program {
				got = &s.Commands[i]
			}
		}
		if got == nil {
			t.Errorf("%q: no %s command in %v", tc.src, tc.program, s.Commands)
			continue
		}
		if got.RunTimeArgs != tc.why {
			t.Errorf("%q: RunTimeArgs = %q, want %q", tc.src, got.RunTimeArgs, tc.why)
		}
		for _, i := range tc.dynamic {
			if i >= len(got.Argv) || !got.Argv[i].Dynamic {
				t.Errorf("%q: word %d of %q is not dynamic", tc.src, i, got.String())
			}
		}
		for i, w := range got.Argv {
			if w.Dynamic && !slices.Contains(tc.dynamic, i) {
				t.Errorf("%q: word %d (%q) is dynamic, want only %v", tc.src, i, w.Value, tc.dynamic)
			}
		}
	}
}

func TestWrappersKeepTheirOwnArgv(t *testing.T) {
	tests := []struct {
		src     string
		index   int // which command
		wraps   []Wrapper
		assigns []string
	}{
		{src: "sudo -u root -E rm x", wraps: []Wrapper{{Name: "sudo", Argv: []string{"sudo", "-u", "root", "-E"}}}},
		{src: "/usr/bin/sudo ls", wraps: []Wrapper{{Name: "sudo", Argv: []string{"/usr/bin/sudo"}}}},
		{src: "sudo A=1 ls", wraps: []Wrapper{{Name: "sudo", Argv: []string{"sudo", "A=1"}}}, assigns: []string{"A=1"}},
		{src: "B=2 env -i A=1 nice -n 5 rm", assigns: []string{"B=2", "A=1"}, wraps: []Wrapper{
			{Name: "env", Argv: []string{"env", "-i", "A=1"}},
			{Name: "nice", Argv: []string{"nice", "-n", "5"}},
		}},
		{src: "find . -name x -exec rm {} +", index: 1, wraps: []Wrapper{
			{Name: "find -exec", Argv: []string{"find", ".", "-name", "x", "-exec"}},
		}},
		{src: "bash -lc 'ls'", wraps: []Wrapper{{Name: "bash -c", Argv: []string{"bash", "-lc"}}}},
		{src: "mnemos run --level full -- ls", wraps: []Wrapper{
			{Name: "mnemos run", Argv: []string{"mnemos", "run", "--level", "full", "--"}},
		}},
		{src: "xargs -0 -n1 rm", wraps: []Wrapper{{Name: "xargs", Argv: []string{"xargs", "-0", "-n1"}}}},
		{src: "time -p ls", wraps: []Wrapper{{Name: "time", Argv: []string{"time", "-p"}}}},
		{src: "timeout -k 5 10s ls", wraps: []Wrapper{{Name: "timeout", Argv: []string{"timeout", "-k", "5", "10s"}}}},
		{src: "eval ls", wraps: []Wrapper{{Name: "eval", Argv: []string{"eval"}}}},
		{src: "sudo sh -c 'ls'", wraps: []Wrapper{
			{Name: "sudo", Argv: []string{"sudo"}},
			{Name: "sh -c", Argv: []string{"sh", "-c"}},
		}},
		{src: "exec -a name ls", wraps: []Wrapper{{Name: "exec", Argv: []string{"exec", "-a", "name"}}}},
	}
	for _, tc := range tests {
		s := parseEither(t, tc.src, nil)
		if tc.index >= len(s.Commands) {
			t.Errorf("%q: %d commands", tc.src, len(s.Commands))
			continue
		}
		c := s.Commands[tc.index]
		if !reflect.DeepEqual(c.Wrappers, tc.wraps) {
			t.Errorf("%q: wrappers %+v, want %+v", tc.src, c.Wrappers, tc.wraps)
		}
		if !slices.Equal(c.Assigns, tc.assigns) {
			t.Errorf("%q: assigns %q, want %q", tc.src, c.Assigns, tc.assigns)
		}
	}
}

func TestRedirects(t *testing.T) {
	s := parseEither(t, "cmd 2>>log <in 3<&0 &>out >|clob 4<>rw <<<\"x $HOME\"", nil)
	want := []Redirect{
		{Op: ">>", Fd: "2", Target: Word{Value: "log"}},
		{Op: "<", Target: Word{Value: "in"}},
		{Op: "<&", Fd: "3", Target: Word{Value: "0"}},
		{Op: "&>", Target: Word{Value: "out"}},
		{Op: ">|", Target: Word{Value: "clob"}},
		{Op: "<>", Fd: "4", Target: Word{Value: "rw"}},
		{Op: "<<<", Target: Word{Value: "x /home/u"}},
	}
	got := s.Commands[0].Redirects
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("redirects\n got %+v\nwant %+v", got, want)
	}
	var writes []bool
	for _, r := range got {
		writes = append(writes, r.Writes())
	}
	if !slices.Equal(writes, []bool{true, false, false, true, true, true, false}) {
		t.Errorf("Writes() = %v", writes)
	}

	s = parseEither(t, "cat > \"$OUT\" 2>/dev/null", nil)
	if r := s.Commands[0].Redirects[0]; !r.Target.Dynamic || r.Target.Value != `"$OUT"` {
		t.Errorf("dynamic target = %+v", r)
	}
}

func TestEnvKnowledge(t *testing.T) {
	env := Env{Home: "", Vars: map[string]string{"USER": "bob", "HOME": "/ignored-when-Home-set"}}
	s, err := ParseScript("echo $USER ~ $HOME $PWD", Env{Vars: map[string]string{"USER": "bob"}})
	if err != nil {
		t.Fatal(err)
	}
	got := fieldRender(s.Commands[0])
	if got != "echo bob `~` `$HOME` `$PWD`" {
		t.Errorf("no home: %s", got)
	}
	env.Home = "/h"
	s, err = ParseScript("echo ~ $HOME", env)
	if err != nil {
		t.Fatal(err)
	}
	if got := fieldRender(s.Commands[0]); got != "echo /h /h" {
		t.Errorf("home: %s", got)
	}
}

func fieldRender(c Command) string {
	var parts []string
	for _, w := range c.Argv {
		parts = append(parts, renderWord(w))
	}
	return strings.Join(parts, " ")
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		src       string
		argv      []string
		line, col int
		msg       string
	}{
		{src: "if then", line: 1, col: 1, msg: "`if` must be followed by a statement list"},
		{src: "echo 'unterminated", line: 1, col: 6, msg: "reached EOF without closing quote `'`"},
		{src: "ls\nfoo )", line: 2, col: 5, msg: "a command can only contain words and redirects; encountered `)`"},
		{src: "echo $((", line: 1, col: 6, msg: "must be followed by an expression"},
		{argv: []string{"bash", "-c", "if"}, line: 1, col: 1, msg: "bash -c: "},
		{src: "sudo sh -c 'a && '", line: 1, col: 3, msg: "sh -c: "},
		{src: "eval 'fi'", line: 1, col: 1, msg: "eval: "},
		{src: "alias x='(('; x", line: 1, col: 1, msg: "alias x: "},
		{src: "bash <<EOF\ndone\nEOF", line: 1, col: 1, msg: "here-doc: "},
		{src: "trap 'case' EXIT", line: 1, col: 1, msg: "trap: "},
	}
	for _, tc := range tests {
		var err error
		if tc.argv != nil {
			_, err = ParseArgv(tc.argv, testEnv())
		} else {
			_, err = ParseScript(tc.src, testEnv())
		}
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q%q: error %v (%T), want *ParseError", tc.src, tc.argv, err, err)
			continue
		}
		if pe.Line != tc.line || pe.Col != tc.col || !strings.Contains(pe.Msg, tc.msg) {
			t.Errorf("%q%q: got %d:%d %q, want %d:%d containing %q", tc.src, tc.argv, pe.Line, pe.Col, pe.Msg, tc.line, tc.col, tc.msg)
		}
		if !strings.HasPrefix(pe.Error(), "line ") {
			t.Errorf("error text %q", pe.Error())
		}
	}
}

func TestSecurityLimitsRefuseNeverTruncate(t *testing.T) {
	nest := func(open, body, close string, n int) string {
		return strings.Repeat(open, n) + body + strings.Repeat(close, n)
	}
	var chain strings.Builder
	chain.WriteString("f0() { :; }; ")
	for i := 1; i < 40; i++ {
		p := "f" + itoa(i-1)
		chain.WriteString("f" + itoa(i) + "() { " + p + "; " + p + "; }; ")
	}
	chain.WriteString("f39")

	tests := []struct {
		name string
		src  string
		argv []string
		lim  Limits
		what string
	}{
		{name: "script bytes", src: strings.Repeat("a", (1<<20)+1), what: "bytes"},
		{name: "script bytes small limit", src: "echo hello world", lim: Limits{MaxBytes: 8}, what: "bytes"},
		{name: "argv bytes", argv: []string{"echo", strings.Repeat("a", 1<<20)}, what: "bytes"},
		{name: "argv words", argv: make([]string, 100_001), what: "words"},
		{name: "emitted words", src: "echo a b c d e f", lim: Limits{MaxArgs: 5}, what: "words"},
		{name: "brace expansion", src: "echo {1..200000}", what: "words"},
		{name: "brace product", src: "echo {1..100}{1..100}{1..100}", what: "words"},
		{name: "substitution depth", src: nest("$(", "x", ")", 70), what: "depth"},
		{name: "compound depth", src: nest("if a; then ", "b", "; fi", 70), what: "depth"},
		{name: "small depth", src: "a && (b; (c; (d)))", lim: Limits{MaxDepth: 3}, what: "depth"},
		{name: "eval depth", src: strings.Repeat("eval ", 8) + "x", lim: Limits{MaxDepth: 6}, what: "depth"},
		{name: "shell depth", argv: []string{"sh", "-c", "sh -c 'sh -c \"sh -c x\"'"}, lim: Limits{MaxDepth: 4}, what: "depth"},
		{name: "wrapper depth", src: strings.Repeat("nice ", 80) + "rm", what: "depth"},
		{name: "exponential functions", src: chain.String(), what: "expansion"},
		{name: "exponential loops", src: nest("for i in 1 2 3 4; do ", "x=$((x+1)); y=$x", "; done", 20), what: "expansion"},
		{name: "arithmetic depth", src: "echo $((" + nest("(", "1", ")", 70) + "))", what: "depth"},
		{name: "arithmetic depth hiding a command", src: "echo $((" + nest("(", "$(rm -rf /)", ")", 10_000) + "))", what: "depth"},
		{name: "arithmetic value depth", src: arithChain(20), what: "depth"},
		// A value that doubles at every step is a terabyte after forty.
		{name: "doubling variable", src: "x=aaaaaaaa; " + strings.Repeat("x=$x$x; ", 40) + "rm -rf $x", what: "expanded"},
		{name: "doubling append", src: "x=aaaaaaaa; " + strings.Repeat("x+=$x; ", 40) + "echo $x", what: "expanded"},
		{name: "doubling array", src: "a=(a b); " + strings.Repeat(`a=("${a[@]}" "${a[@]}"); `, 40) + `"${a[@]}"`, what: "expanded"},
		{name: "doubling replacement", src: "x=aaaaaaaa; " + strings.Repeat("x=${x//a/aa}; ", 40) + "echo $x", what: "expanded"},
		{name: "doubling here-string", src: "x=aaaaaaaa; " + strings.Repeat(`read x <<< "$x$x"; `, 40) + "echo $x", what: "expanded"},
		{name: "doubling substitution", src: "x=aaaaaaaa; " + strings.Repeat("x=$(echo $x$x); ", 40) + "echo $x", what: "expanded"},
		{name: "doubling positional", src: "set -- aaaaaaaa; " + strings.Repeat(`set -- "$1$1"; `, 40) + "echo $1", what: "expanded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s *Script
			var err error
			if tc.argv != nil {
				s, err = ParseArgvLimits(tc.argv, testEnv(), tc.lim)
			} else {
				s, err = ParseScriptLimits(tc.src, testEnv(), tc.lim)
			}
			var le *LimitError
			if !errors.As(err, &le) {
				t.Fatalf("got %v, %v; want a *LimitError", s, err)
			}
			if le.What != tc.what || s != nil {
				t.Errorf("got %v (%s), want %s and no script", le, le.What, tc.what)
			}
		})
	}

	// Within the limits, long flat inputs are fine.
	if s, err := ParseScript("echo $(("+strings.Repeat("1+", 5000)+"1))", testEnv()); err != nil || len(s.Commands) != 1 {
		t.Errorf("long sum: %v", err)
	}
	s, err := ParseScript("echo $(("+nest("(", "$(id)", ")", 30)+"))", testEnv())
	// id runs; its output is evaluated as arithmetic, and echo.
	if err != nil || len(s.Commands) != 3 || s.Commands[0].Name() != "id" || !s.Commands[1].Dynamic {
		t.Errorf("substitution under 30 parentheses: %v %v", s, err)
	}
	long := strings.Repeat("a && ", 5000) + "b"
	s, err = ParseScript(long, testEnv())
	if err != nil || len(s.Commands) != 5001 {
		t.Errorf("long && chain: %v", err)
	}
	if _, err := ParseScriptLimits("ls", testEnv(), Limits{}); err != nil {
		t.Errorf("zero limits mean defaults: %v", err)
	}
}

// arithChain is a script whose arithmetic evaluates variable values n
// levels deep: v0 holds "v1", v1 holds "v2", ..., the last a substitution.
func arithChain(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString("v" + itoa(i) + "='v" + itoa(i+1) + "+a[$(id)]'; ")
	}
	b.WriteString("echo $((v0))")
	return b.String()
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestDeterministic(t *testing.T) {
	srcs := []string{benchScript50()}
	for _, tc := range parseCases {
		if tc.argv == nil {
			srcs = append(srcs, tc.src)
		}
	}
	for _, src := range srcs {
		first, err := ParseScript(src, testEnv())
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			again, _ := ParseScript(src, testEnv())
			if !reflect.DeepEqual(first, again) {
				t.Fatalf("%q: output differs between runs", src)
			}
		}
	}
}

func TestCommandHelpers(t *testing.T) {
	s := parseEither(t, "sudo /usr/bin/rm -rf /tmp/x; $X y", nil)
	c := s.Commands[0]
	if c.Name() != "rm" || !slices.Equal(c.Args(), []string{"-rf", "/tmp/x"}) || !c.HasWrapper("sudo") {
		t.Errorf("helpers: %q %q %v", c.Name(), c.Args(), c.HasWrapper("sudo"))
	}
	if got := c.String(); got != "sudo /usr/bin/rm -rf /tmp/x" {
		t.Errorf("String() = %q", got)
	}
	if d := s.Commands[1]; d.Name() != "" || !d.Dynamic {
		t.Errorf("dynamic command: %+v", d)
	}
}

// TestSecurityNoForbiddenImports keeps the parser pure: no process
// execution, network or database, not even through a dependency.
func TestSecurityNoForbiddenImports(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case dep == "os/exec", dep == "net", strings.HasPrefix(dep, "net/"), strings.HasPrefix(dep, "database/sql"):
			t.Errorf("shellparse depends on %s", dep)
		}
	}
}

// TestRunTimeNames: the names xargs and find supply, where the script
// shows them: find's name tests of the branch that runs or prints, the
// words echo writes into xargs; none (nil) where they may be any name.
func TestRunTimeNames(t *testing.T) {
	tests := []struct {
		src     string
		program string
		names   []string
	}{
		{`find . -name '*.go' | xargs wc -l`, "wc", []string{"*.go"}},
		{`find src -type f -name "*.ts" -o -name "*.js" | xargs wc -l`, "wc", []string{"*.ts", "*.js"}},
		{`find . -path ./.specstory -prune -o -name "*.go" -print | xargs grep -ln x`, "grep", []string{"*.go"}},
		{`find . -iname 'README*' -print0 | xargs -0 cat`, "cat", []string{"README*"}},
		{`echo a.txt b.txt | xargs cat`, "cat", []string{"a.txt", "b.txt"}},
		{`find . -name '*.go' -exec grep -l TODO {} +`, "grep", []string{"*.go"}},
		{`find . -name x -o -name '*.md' -exec cat {} \;`, "cat", []string{"*.md"}},
		{`find . -type f | xargs cat`, "cat", nil},
		{`find . -name '*.go' -o -type f | xargs cat`, "cat", nil},
		{`find . ! -name '*.go' | xargs cat`, "cat", nil},
		{`find . -name '*.go' ! -path '*/vendor/*' -not -name '*_test.go' | xargs cat`, "cat", []string{"*.go"}},
		{`find . \( -name '*.go' -o -name '*.md' \) | xargs cat`, "cat", nil},
		{`find . -name "$P" | xargs cat`, "cat", nil},
		{`git ls-files | xargs cat`, "cat", nil},
		{`xargs cat < list`, "cat", nil},
		{`xargs -a list cat`, "cat", nil},
		{`echo "$X" | xargs cat`, "cat", nil},
		{`find . -type f -exec cat {} +`, "cat", nil},
		{`find . -name '*.md' -o -type f -exec cat {} +`, "cat", nil},
	}
	for _, tc := range tests {
		s := parseEither(t, tc.src, nil)
		var got *Command
		for i := range s.Commands {
			if s.Commands[i].Name() == tc.program {
				got = &s.Commands[i]
			}
		}
		if got == nil {
			t.Errorf("%q: no %s command", tc.src, tc.program)
			continue
		}
		if got.RunTimeArgs == "" {
			t.Errorf("%q: %s has no RunTimeArgs", tc.src, tc.program)
		}
		if !slices.Equal(got.RunTimeNames, tc.names) {
			t.Errorf("%q: RunTimeNames = %q, want %q", tc.src, got.RunTimeNames, tc.names)
		}
	}
}
