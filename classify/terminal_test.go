package classify

import (
	"slices"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// TestSecurityTerminalPrograms: a program that runs what is typed at it
// (a pager, an editor, a REPL with no script, a client, a debugger, a
// multiplexer) is code:exec and asks, with the reason, where its terminal
// may be typed at and its secure mode is not known to be on: under
// mnemos run (TerminalEnv) and where the command runs as its hook runs it
// (no TerminalEnv). Its look-alikes that cannot read a terminal, or are
// given what to run, stay what they were.
func TestSecurityTerminalPrograms(t *testing.T) {
	cases := []struct {
		src        string
		run, unsbx bool // asks under mnemos run; asks outside it
	}{
		// Pagers: keys from the terminal while the output is one.
		{"less calc.go", false, true},
		{"zless x.gz", false, true},
		{"cat x | less", false, true},
		{"less calc.go | head", false, false},
		{"less calc.go > out.txt", false, false},
		{"less calc.go > /dev/null", false, false},
		{"less calc.go > /dev/tty", false, true},
		{"less calc.go >&2", false, true},
		{"less calc.go > \"$OUT\"", false, true},
		{"echo \"$(less calc.go)\"", false, false},
		{"LESSSECURE=1 less calc.go", false, false},
		{"LESSSECURE=0 less calc.go", true, true},
		{"LESSSECURE= less calc.go", true, true},
		{"LESSSECURE=$X less calc.go", true, true},
		{"LESSSECURE_ALLOW=shell less calc.go", true, true},
		{"env -u LESSSECURE less calc.go", true, true},
		{"env -i less calc.go", true, true},
		{"unset LESSSECURE; less calc.go", true, true},
		{"export -n LESSSECURE; less calc.go", true, true},
		{"declare +x LESSSECURE; less calc.go", true, true},
		{"unset \"$v\"; less calc.go", true, true},
		{"more calc.go", true, true},
		{"more calc.go | cat", false, false},
		{"most calc.go", true, true},
		{"pg calc.go", true, true},
		{"info coreutils", true, true},
		{"info coreutils | cat", false, false},
		{"info -o out.txt coreutils", false, false},
		{"man ls", false, true},
		{"man ls | col -b", false, false},
		{"man -k printf", false, false},
		{"MANPAGER=cat man ls", false, false},
		{"env -i man ls", true, true},
		// git through its pager.
		{"git log", false, true},
		{"git diff", false, true},
		{"git show HEAD", false, true},
		{"git -C sub log", false, true},
		{"git branch", false, true},
		{"git stash list", false, true},
		{"git -p status", false, true},
		{"git log | head", false, false},
		{"git log > log.txt", false, false},
		{"git --no-pager log", false, false},
		{"git -P diff", false, false},
		{"GIT_PAGER=cat git log", false, false},
		{"git status", false, false},
		{"git branch --show-current", false, false},
		{"git branch -D old", false, false},
		{"git commit -m x", false, false},
		{"env -u GIT_PAGER git log", true, true},
		{"GIT_PAGER=less LESSSECURE= git log", true, true},
		{"GIT_PAGER=less LESSSECURE_ALLOW=shell git log", true, true},
		{"GIT_PAGER=less git log", false, true},
		// git's editor and prompts.
		{"git commit", true, true},
		{"git commit -a", true, true},
		{"git commit --amend", true, true},
		{"git commit -e -m x", true, true},
		{"git commit -p -m x", true, true},
		{"git commit -m x", false, false},
		{"git commit -am x", false, false},
		{"git commit -F msg.txt", false, false},
		{"git commit --amend --no-edit", false, false},
		{"git commit --fixup HEAD~1", false, false},
		{"git commit --fixup amend:HEAD~1", true, true},
		{"GIT_EDITOR=true git commit", false, false},
		{"git commit < /dev/null", false, false},
		{"git rebase -i HEAD~3", true, true},
		{"git rebase --continue", true, true},
		{"GIT_EDITOR=true git rebase --continue", false, false},
		{"git rebase main", false, false},
		{"git merge feature", false, true},
		{"git merge --no-edit feature", false, false},
		{"git merge -m 'x' feature", false, false},
		{"git merge -e feature", true, true},
		{"GIT_MERGE_AUTOEDIT=yes git merge feature", true, true},
		{"git merge feature | cat", false, false},
		{"git pull", false, true},
		{"git pull --rebase", false, false},
		{"git pull --no-edit", false, false},
		{"git revert HEAD", true, true},
		{"git revert --no-edit HEAD", false, false},
		{"git tag -a v1", true, true},
		{"git tag -a v1 -m x", false, false},
		{"git tag v1", false, false},
		{"git add -p", true, true},
		{"git add -i", true, true},
		{"git add .", false, false},
		{"git stash -p", true, true},
		{"git clean -i", true, true},
		{"git notes add HEAD", true, true},
		{"git notes add -m x HEAD", false, false},
		{"git config -e", true, true},
		{"git branch --edit-description", true, true},
		{"git difftool", true, true},
		{"git cherry-pick abc123", false, false},
		// Editors.
		{"vim README.md", true, true},
		{"vi README.md", true, true},
		{"nvim README.md", true, true},
		{"nvim --headless -c 'qa' README.md", false, false},
		{"view README.md", true, true},
		{"nano README.md", true, true},
		{"emacs README.md", true, true},
		{"emacs --batch -l x.el", false, false},
		{"ed README.md", true, true},
		{"ed -s README.md <<EOF\n,p\nq\nEOF", false, false},
		{"echo x | vim -", true, true},
		{"vim README.md < /dev/null", false, false},
		// REPLs.
		{"python3", true, true},
		{"python3 -", true, true},
		{"python3 -i x.py", true, true},
		{"cat | python3", true, true},
		{"python3 < /dev/tty", true, true},
		{"python3 x.py", false, false},
		{"python3 -m pytest -q", false, false},
		{"python3 -c 'print(1)'", false, false},
		{"python3 -W ignore x.py", false, false},
		{"python3 -ic 'import os'", true, true},
		{"python3 -Bc 'print(1)'", false, false},
		{"python3 -c'print(1)'", false, false},
		{"node -e 'x' -i", true, true},
		{"node -p 1", false, false},
		{"deno", true, true},
		{"deno repl", true, true},
		{"deno run x.ts", false, false},
		{"deno test", false, false},
		{"bun repl", true, true},
		{"bun test", false, false},
		{"bun run build", false, false},
		{"python3 -c 'x' arg", false, false},
		{"python3 < x.py", false, false},
		{"echo 'print(1)' | python3", false, false},
		{"python3 - <<EOF\nprint(1)\nEOF", false, false},
		{"node", true, true},
		{"node -i", true, true},
		{"node x.js", false, false},
		{"node -e 'console.log(1)'", false, false},
		{"node -r ts-node/register x.ts", false, false},
		{"irb", true, true},
		{"ruby", true, true},
		{"ruby -e 'p 1'", false, false},
		{"perl -d x.pl", true, true},
		{"perl -e 'print 1'", false, false},
		{"php -a", true, true},
		{"php x.php", false, false},
		{"lua", true, true},
		{"lua x.lua", false, false},
		{"R", true, true},
		{"R -f x.R", false, false},
		{"R CMD check .", false, false},
		{"ghci", true, true},
		{"ghci -e main", false, false},
		// Clients, debuggers, remote shells, multiplexers.
		{"sqlite3 db.sqlite", true, true},
		{"sqlite3 db.sqlite 'select 1'", false, false},
		{"sqlite3 db.sqlite < schema.sql", false, false},
		{"psql -h db app", true, true},
		{"psql -c 'select 1' app", false, false},
		{"mysql -u root app", true, true},
		{"mysql -e 'select 1' app", false, false},
		{"gdb ./prog", true, true},
		{"gdb -batch -ex bt ./prog", false, false},
		{"lldb ./prog", true, true},
		{"lldb --batch -o run ./prog", false, false},
		{"ftp example.com", true, true},
		{"sftp host", true, true},
		{"sftp -b cmds host", false, false},
		{"sftp -b - host", true, true},
		{"psql -f - app", true, true},
		{"telnet host 25", true, true},
		{"tmux", true, true},
		{"tmux send-keys -t 0 'rm -rf .' Enter", true, true},
		{"screen -S x", true, true},
		// Under a version's or a package's name, and other programs of
		// the kind.
		{"python3.12", true, true},
		{"python3.12 x.py", false, false},
		{"pypy3.10", true, true},
		{"node18", true, true},
		{"vim.tiny README.md", true, true},
		{"ipython3", true, true},
		{"tclsh", true, true},
		{"hx README.md", true, true},
		{"tig", true, true},
		{"mc", true, true},
		{"lynx https://example.com", true, true},
		{"pager calc.go", true, true},
		{"sensible-pager calc.go", false, true},
		{"bat calc.go", false, true},
		{"bat calc.go | cat", false, false},
		{"bat --paging=never calc.go", false, false},
		{"bat -P calc.go", false, false},
		{"env -i bat calc.go", true, true},
		// Not terminal programs.
		{"top -b -n 1", false, false},
		{"cat calc.go", false, false},
		{"go test ./...", false, false},
	}
	for _, tc := range cases {
		s, err := shellparse.ParseScript(tc.src, shellparse.Env{Home: "/home/u", Cwd: "/w"})
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		for _, run := range []bool{true, false} {
			pl := PlaceOf(s, "/w", "/home/u")
			pl.Workspace = "/w"
			pl.TerminalEnv = run && TerminalEnvKept(s.Commands)
			asks, why := false, ""
			for _, c := range s.Commands {
				cl := Classify(c, pl)
				if strings.HasPrefix(cl.FloorReason, "reads commands from its terminal: ") {
					asks, why = true, cl.FloorReason
					if cl.Floor != Ask || !HasCap(&cl, CodeExec) {
						t.Errorf("%s: floor %s, accesses %s", tc.src, cl.Floor, accessList(cl))
					}
				}
			}
			want := tc.unsbx
			where := "outside mnemos run"
			if run {
				want, where = tc.run, "under mnemos run"
			}
			if asks != want {
				t.Errorf("%s %s: reads its terminal %v (%s), want %v", tc.src, where, asks, why, want)
			}
		}
	}
}

// TestTerminalEnv: what mnemos run gives a gated command: less's secure
// mode, every pager variable cat, and nothing that lifts either.
func TestTerminalEnv(t *testing.T) {
	got := TerminalEnv([]string{"HOME=/home/u", "PAGER=less", "LESSSECURE=0", "LESSSECURE_ALLOW=shell,pipe",
		"BAT_PAGER=less -R", "LESS=-R", "PATH=/usr/bin"})
	for _, kv := range []string{"HOME=/home/u", "PATH=/usr/bin", "LESS=-R", "LESSSECURE=1", "PAGER=cat", "BAT_PAGER=cat",
		"GIT_PAGER=cat", "MANPAGER=cat", "SYSTEMD_PAGER=cat", "GH_PAGER=cat", "GIT_MERGE_AUTOEDIT=no"} {
		if !slices.Contains(got, kv) {
			t.Errorf("TerminalEnv lacks %s: %q", kv, got)
		}
	}
	for _, kv := range got {
		name, _, _ := strings.Cut(kv, "=")
		if name == "LESSSECURE_ALLOW" || kv == "LESSSECURE=0" || kv == "PAGER=less" {
			t.Errorf("TerminalEnv keeps %s: %q", kv, got)
		}
		if n := countName(got, name); n != 1 {
			t.Errorf("TerminalEnv sets %s %d times: %q", name, n, got)
		}
	}
}

func countName(env []string, name string) int {
	n := 0
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			n++
		}
	}
	return n
}
