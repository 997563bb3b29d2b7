package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
)

func TestProposePrefix(t *testing.T) {
	for _, c := range []struct {
		argv   string
		static int // 0: every word
		want   string
		exact  bool
	}{
		{argv: "go test ./...", want: "go test"},
		{argv: "go test -run X ./...", want: "go test"},
		{argv: "go test $PKG", static: 2, want: "go test"},
		{argv: "go run .", want: "go run ."},
		{argv: "go get golang.org/x/tools@latest", want: "go get golang.org/x/tools@latest"},
		{argv: "go version", want: "go version"},
		{argv: "npm run lint -- --fix", want: "npm run lint"},
		{argv: "npm test", want: "npm test"},
		{argv: "npm install", want: "npm install", exact: true},
		{argv: "npm install left-pad", want: "npm install left-pad"},
		{argv: "make", want: "make", exact: true},
		{argv: "make test", want: "make test"},
		{argv: "make -j4 test", want: "make -j4 test"},
		{argv: "cargo build --release", want: "cargo build"},
		{argv: "git commit -m fix", want: "git commit"},
		{argv: "git --version --build-options", want: "git --version --build-options"},
		{argv: "pytest -x tests", want: "pytest -x tests"},
		{argv: "/usr/local/go/bin/go test ./...", want: "/usr/local/go/bin/go test"},
		{argv: "bun test src/a.test.ts", want: "bun test"},
		{argv: "deno lint", want: "deno lint"},
		{argv: "bun x eslint"},
		{argv: "bun run x.ts"},
		{argv: "bun x.ts"},
		{argv: "deno eval 1"},
		{argv: "go build -o bin/x ./cmd/x"},
		{argv: "make test -f other.mk"},
		{argv: "poetry run python x.py"},
		{argv: "npm exec node"},
		{argv: "make -f ci.mk test"},
		{argv: "make -C sub test"},
		{argv: "git -C /tmp commit"},
		{argv: "go -C /tmp test"},
		{argv: "npm --prefix /tmp run lint"},
		{argv: "bash -c x"},
		{argv: "python3 x.py"},
		{argv: "make $T", static: 1},
		{argv: "$CC x.c", static: 0 - 1},
	} {
		argv := strings.Fields(c.argv)
		static := len(argv)
		if c.static > 0 {
			static = c.static
		} else if c.static < 0 {
			static = 0
		}
		p, exact, err := proposePrefix(argv, static)
		got := strings.Join(p, " ")
		if c.want == "" {
			if err == nil {
				t.Errorf("%s: proposed %q", c.argv, got)
			}
			continue
		}
		if err != nil || got != c.want || exact != c.exact {
			t.Errorf("%s: %q exact %v, %v; want %q exact %v", c.argv, got, exact, err, c.want, c.exact)
		}
	}
}

// TestSecurityRememberNeverGeneralisesIntoEscapingOptionsOrBroadPrograms:
// whether proposed or chosen with --prefix, a remembered prefix never
// holds an option that runs other code, reads other files or works
// elsewhere, never names a broad program (shells, interpreters, env,
// xargs, ...), never stops at a bare program or at a subcommand that
// runs whatever it is given; and a remembered go test never covers go
// test -toolexec or -exec, nor a variable that runs other code.
func TestSecurityRememberNeverGeneralisesIntoEscapingOptionsOrBroadPrograms(t *testing.T) {
	item := func(argv string) approvals.RememberItem {
		w := strings.Fields(argv)
		return approvals.RememberItem{Argv: w, Static: len(w), Pin: "sha256:x"}
	}
	for _, c := range []struct{ argv, prefix string }{
		{"make -f evil.mk test", "make -f evil.mk"},
		{"make -f evil.mk test", "make -f evil.mk test"},
		{"make SHELL=/tmp/sh test", "make SHELL=/tmp/sh"},
		{"make --eval=x test", "make --eval=x"},
		{"npm --prefix /tmp run lint", "npm --prefix /tmp"},
		{"git -c core.pager=sh log", "git -c core.pager=sh"},
		{"git -C /tmp commit", "git -C /tmp commit"},
		{"go -toolexec=/tmp/x test", "go -toolexec=/tmp/x"},
		{"go test -exec /tmp/x ./...", "go test -exec"},
		{"cargo --config x build", "cargo --config x build"},
		{"bash -c make", "bash -c"},
		{"sh -c make", "sh"},
		{"python3 -m pytest", "python3 -m"},
		{"env make test", "env make"},
		{"xargs rm", "xargs rm"},
		{"npx eslint .", "npx eslint"},
		{"bun x eslint", "bun x"},
		{"bun test", "bun"},
		{"deno eval 1", "deno eval"},
		{"go build -o /usr/local/bin/x", "go build"},
		{"find . -delete", "find ."},
		{"make test", "make"},
		{"git commit -m x", "git"},
		{"npm run lint", "npm run"},
		{"go run /tmp/x.go", "go run"},
		{"poetry run python x.py", "poetry run python"},
		{"make test", "make tes"},
		{"go test ./...", "go vet"},
	} {
		if p, _, err := choosePrefix(item(c.argv), strings.Fields(c.prefix)); err == nil {
			t.Errorf("--prefix %q for %s accepted: %v", c.prefix, c.argv, p)
		}
		if p, _, err := proposePrefix(strings.Fields(c.argv), len(strings.Fields(c.argv))); err == nil && policy.PrefixEscape(p) != "" {
			t.Errorf("%s: proposed %v, which escapes", c.argv, p)
		}
	}
	for _, c := range []struct{ argv, prefix string }{
		{"go test -run X ./...", "go test"}, {"go test -run X ./...", "go test -run X"}, {"make", "make"},
		{"/usr/local/go/bin/go test ./...", "go test"}, {"npm run lint -- --fix", "npm run lint"},
	} {
		if _, _, err := choosePrefix(item(c.argv), strings.Fields(c.prefix)); err != nil {
			t.Errorf("--prefix %q for %s: %v", c.prefix, c.argv, err)
		}
	}

	// Remembered through the gate: the rule for go test runs its variants
	// and none that runs other code.
	f, env := bindFixture(t)
	d := f.decide(t, Mode{SpendTicket: true}, "go", "test", "./...")
	if d.Outcome != policy.Ask {
		t.Skipf("go test does not ask here (%s): nothing to remember", d.Reason)
	}
	a, err := f.g.Approve(context.Background(), d.Approval.Token, dev, ApproveOptions{Remember: "permanent"})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Rules) != 1 || strings.Join(a.Rules[0].ArgvPrefix, " ") != "go test" || a.Rules[0].Pin == "" {
		t.Fatalf("remembered %+v, want one pinned rule for go test", a.Rules)
	}
	f.reload(t)
	for _, argv := range [][]string{{"go", "test", "./..."}, {"go", "test", "-run", "X", "./..."}, {"go", "test", "-v", "./gate/"}} {
		if d := f.decide(t, Mode{DryRun: true}, argv...); d.Outcome != policy.Allow {
			t.Errorf("%v: %s (%s), want allow by the remembered rule", argv, d.Outcome, d.Reason)
		}
	}
	for _, argv := range [][]string{{"go", "test", "-toolexec=/tmp/x", "./..."}, {"go", "test", "-exec", "/tmp/x", "./..."},
		{"go", "test", "-o", "/tmp/x"}, {"go", "test", "-C", "/tmp", "./..."}, {"go", "vet", "./..."}, {"go", "run", "."},
		{"env", "GOFLAGS=-toolexec=/tmp/x", "go", "test", "./..."}} {
		if d := f.decide(t, Mode{DryRun: true}, argv...); d.Outcome == policy.Allow {
			t.Errorf("%v: allowed by the rule remembered for go test", argv)
		}
	}
	// Another go on PATH has another pin.
	bin := filepath.Join(f.ws, "bin")
	f.write(t, "bin/go", "#!/bin/sh\necho evil\n")
	(*env)[1] = "PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin"
	if d := f.decide(t, Mode{DryRun: true}, "go", "test", "./..."); d.Outcome == policy.Allow {
		t.Error("another go on PATH: allowed by the rule remembered for go test")
	}
}

// reload reads the policy file the gate writes rules to.
func (f *fixture) reload(t *testing.T) {
	t.Helper()
	p, err := policy.Load(f.g.cfg.Paths.PolicyFile)
	if err != nil {
		t.Fatal(err)
	}
	f.g.cfg.Policy = p
}

func (f *fixture) store(t *testing.T) approvals.Backend {
	t.Helper()
	st, err := f.g.Store(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRememberChosenPrefix: --prefix chooses another prefix, which must
// begin a command of the request.
func TestRememberChosenPrefix(t *testing.T) {
	f, _ := bindFixture(t)
	d := f.decide(t, Mode{SpendTicket: true}, "go", "test", "-run", "X", "./...")
	if _, err := f.g.Approve(context.Background(), d.Approval.Token, dev, ApproveOptions{Remember: "permanent", Prefixes: [][]string{{"go", "vet"}}}); err == nil {
		t.Error("--prefix go vet for go test accepted")
	}
	if _, err := f.g.Approve(context.Background(), d.Approval.Token, dev, ApproveOptions{Prefixes: [][]string{{"go", "test"}}}); err == nil {
		t.Error("--prefix without --remember accepted")
	}
	a, err := f.g.Approve(context.Background(), d.Approval.Token, dev, ApproveOptions{Remember: "permanent", Prefixes: [][]string{{"go", "test", "-run", "X"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Rules) != 1 || strings.Join(a.Rules[0].ArgvPrefix, " ") != "go test -run X" {
		t.Fatalf("rules %+v", a.Rules)
	}
	f.reload(t)
	if d := f.decide(t, Mode{DryRun: true}, "go", "test", "-run", "X", "./gate/"); d.Outcome != policy.Allow {
		t.Errorf("go test -run X ./gate/: %s", d.Outcome)
	}
	if d := f.decide(t, Mode{DryRun: true}, "go", "test", "./..."); d.Outcome == policy.Allow {
		t.Error("go test ./...: allowed by a rule for go test -run X")
	}
}

// TestSecuritySubtreeGrantNeverReachesOutsideIt: a grant approved with
// --under covers writing inside the directory, and deleting what lies
// below its top; never the directory itself, a sibling that shares its
// name's beginning, or anything around it. A directory no grant may
// cover is refused.
func TestSecuritySubtreeGrantNeverReachesOutsideIt(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	for _, d := range []string{"internal/util", "internal2", "other"} {
		if err := os.MkdirAll(filepath.Join(f.ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(f.home, filepath.Join(f.ws, "home")); err != nil {
		t.Fatal(err)
	}
	d := f.decide(t, Mode{SpendTicket: true}, "touch", "internal/util/a.go")
	if d.Outcome != policy.Ask {
		t.Fatalf("touch: %s (%s)", d.Outcome, d.Reason)
	}
	for _, under := range []string{"..", "/", f.home, filepath.Dir(f.home), "other", "internal/util/a.go/x", "internal/util/a.go", ".git", ".git/hooks",
		"home", "home/x", f.g.cfg.Paths.StateDir, filepath.Dir(f.g.cfg.Paths.StateDir), ""} {
		if _, err := f.g.Approve(ctx, d.Approval.Token, dev, ApproveOptions{Remember: "session", Under: under}); err == nil && under != "" {
			t.Errorf("--under %s accepted", under)
		}
	}
	d = f.decide(t, Mode{SpendTicket: true}, "touch", "internal/util/b.go")
	a, err := f.g.Approve(ctx, d.Approval.Token, dev, ApproveOptions{Remember: "session", Under: "internal"})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Grants) != 1 || a.Grants[0].Target != filepath.Join(f.ws, "internal")+"/**" || a.Pending.TerritoryUnder != filepath.Join(f.ws, "internal") {
		t.Errorf("grants %+v, under %q", a.Grants, a.Pending.TerritoryUnder)
	}
	for _, c := range []struct {
		argv  string
		allow bool
	}{
		{"touch internal/util/c.go", true},
		{"touch internal/new/deep/x.go", true},
		{"rm internal/util/a.go", true},
		{"rm -rf internal/util", true},
		{"mv internal/util/a.go internal/util/b.go", true},
		{"touch internal", true},
		{"rm -rf internal", false},
		{"mv internal elsewhere", false},
		{"mv internal/util/a.go other/a.go", false},
		{"touch internal2/x.go", false},
		{"touch x.go", false},
		{"touch internal/../x.go", false},
		{"touch other/x.go", false},
		{"touch /tmp/x", false},
	} {
		got := f.decide(t, Mode{DryRun: true}, strings.Fields(c.argv)...)
		if (got.Outcome == policy.Allow) != c.allow {
			t.Errorf("%s: %s (%s)", c.argv, got.Outcome, got.Reason)
		}
	}
	// Above a workspace (here one inside another directory that holds
	// no home) is refused too.
	inner := filepath.Join(f.ws, "other", "inner")
	if err := os.MkdirAll(filepath.Join(inner, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := f.req("touch", "x.go")
	r.Cwd = inner
	if d, err := f.g.Decide(ctx, r, Mode{SpendTicket: true}); err != nil || d.Approval == nil {
		t.Errorf("touch in the inner workspace: %s, %v", d.Outcome, err)
	} else if _, err := f.g.Approve(ctx, d.Approval.Token, dev, ApproveOptions{Remember: "session", Under: ".."}); err == nil {
		t.Error("--under .. above the inner workspace accepted")
	}
	// The workspace itself may be given.
	d = f.decide(t, Mode{SpendTicket: true}, "touch", "other/y.go")
	if d.Approval == nil {
		t.Fatalf("touch other/y.go: %s (%s)", d.Outcome, d.Reason)
	}
	if _, err := f.g.Approve(ctx, d.Approval.Token, dev, ApproveOptions{Remember: "session", Under: "."}); err != nil {
		t.Errorf("--under .: %v", err)
	}
}
