package gate

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityTerminalProgramsAtFull: at level full, under the default
// policy, a program that reads commands from a terminal asks, with the
// reason on its card, wherever what is typed at it would run unjudged;
// under mnemos run (sandboxed) the programs mnemos starts in their secure
// mode (less, man, git's pager) stay the reads they are, and outside it
// (Request.Unsandboxed, a hook that runs the command itself) they ask.
func TestSecurityTerminalProgramsAtFull(t *testing.T) {
	src := strings.Replace(string(policy.DefaultSource()), "\nlevel: supervised\n", "\nlevel: full\n", 1)
	f := newFixture(t, src)
	cases := []struct {
		class, line string
		sandboxed   policy.Outcome
		unsandboxed policy.Outcome
		// plain: it asks outside the sandbox as any code:exec does, not
		// for its terminal.
		plain bool
	}{
		{"pager", "less calc.go", policy.Allow, policy.Ask, false},
		{"pager", "cat calc.go | less", policy.Allow, policy.Ask, false},
		{"pager", "less calc.go | head -5", policy.Allow, policy.Allow, false},
		{"pager", "LESSSECURE=0 less calc.go", policy.Ask, policy.Ask, false},
		{"pager", "env -u LESSSECURE less calc.go", policy.Ask, policy.Ask, false},
		{"pager", "unset LESSSECURE; less calc.go", policy.Ask, policy.Ask, false},
		{"pager", "more calc.go", policy.Ask, policy.Ask, false},
		{"pager", "man ls", policy.Allow, policy.Ask, false},
		{"pager", "man ls | cat", policy.Allow, policy.Allow, false},
		{"git pager", "git log", policy.Allow, policy.Ask, false},
		{"git pager", "git diff", policy.Allow, policy.Ask, false},
		{"git pager", "git show HEAD", policy.Allow, policy.Ask, false},
		{"git pager", "git --no-pager log", policy.Allow, policy.Allow, false},
		{"git pager", "git log --oneline | head", policy.Allow, policy.Allow, false},
		{"git pager", "GIT_PAGER=cat git diff", policy.Allow, policy.Allow, false},
		{"git pager", "git status", policy.Allow, policy.Allow, false},
		{"git editor", "git commit --allow-empty", policy.Ask, policy.Ask, false},
		{"git editor", "git rebase -i HEAD~2", policy.Ask, policy.Ask, false},
		{"git editor", "git add -p", policy.Ask, policy.Ask, false},
		{"git editor", "git commit -m x", policy.Allow, policy.Allow, false},
		{"git editor", "GIT_EDITOR=true git rebase --continue", policy.Allow, policy.Allow, false},
		{"git editor", "git merge feature", policy.Allow, policy.Ask, false},
		{"git editor", "git merge --no-edit feature", policy.Allow, policy.Allow, false},
		{"editor", "vim README.md", policy.Ask, policy.Ask, false},
		{"editor", "nano README.md", policy.Ask, policy.Ask, false},
		{"editor", "ed -s README.md <<'EOF'␤,p␤q␤EOF", policy.Allow, policy.Ask, true},
		{"repl", "python3", policy.Ask, policy.Ask, false},
		{"repl", "cat | python3", policy.Ask, policy.Ask, false},
		{"repl", "python3 tests/x.py", policy.Allow, policy.Ask, true},
		{"repl", "python3 -c 'print(1)'", policy.Allow, policy.Ask, true},
		{"repl", "node", policy.Ask, policy.Ask, false},
		{"client", "sqlite3 app.db", policy.Ask, policy.Ask, false},
		{"client", "sqlite3 app.db 'select 1'", policy.Allow, policy.Ask, true},
		{"debugger", "gdb ./prog", policy.Ask, policy.Ask, false},
		{"debugger", "gdb -batch -ex bt ./prog", policy.Allow, policy.Ask, true},
		{"multiplexer", "tmux new -d", policy.Ask, policy.Ask, false},
	}
	for _, tc := range cases {
		for _, unsandboxed := range []bool{false, true} {
			req := f.req("bash", "-c", strings.ReplaceAll(tc.line, "␤", "\n"))
			req.Unsandboxed = unsandboxed
			d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			want, where := tc.sandboxed, "sandboxed"
			if unsandboxed {
				want, where = tc.unsandboxed, "unsandboxed"
			}
			if d.Outcome != want {
				t.Errorf("%s: %q %s: %s, want %s", tc.class, tc.line, where, describe(d), want)
				continue
			}
			if d.Outcome == policy.Ask && !tc.plain && !strings.Contains(d.Reason, "reads commands from its terminal: ") {
				t.Errorf("%s: %q %s: the reason does not say it reads its terminal: %s", tc.class, tc.line, where, d.Reason)
			}
		}
	}
}

// TestSecurityRunStartsPagersSecure: what mnemos run starts has less's
// secure mode and git's, man's and the other pagers set to cat, whatever
// mnemos was given: the decision counts on it (Place.TerminalEnv).
func TestSecurityRunStartsPagersSecure(t *testing.T) {
	f := newFixture(t, "")
	t.Setenv("LESSSECURE", "")
	t.Setenv("LESSSECURE_ALLOW", "shell")
	t.Setenv("GIT_PAGER", "less")
	t.Setenv("PAGER", "more")
	var out, errb bytes.Buffer
	res, err := f.g.Run(context.Background(), f.req("printenv", "LESSSECURE", "GIT_PAGER", "MANPAGER", "PAGER", "LESSSECURE_ALLOW"),
		Stdio{Stdout: &out, Stderr: &errb}, RunOptions{})
	if err != nil {
		t.Fatalf("Run: %v (%s)", err, errb.String())
	}
	// printenv exits 1 for the name it does not find: LESSSECURE_ALLOW.
	if got := out.String(); got != "1\ncat\ncat\ncat\n" || res.ExitCode != 1 {
		t.Errorf("the command's environment: %q (exit %d), want LESSSECURE=1, GIT_PAGER, MANPAGER and PAGER cat, no LESSSECURE_ALLOW", got, res.ExitCode)
	}
}
