package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// The in-process decision: parse, guard, policy and judge over one request
// with the default policy, recording nothing (DryRun). Process start-up is
// timed separately (bench.sh).

func BenchmarkDecideThreeCommands(b *testing.B) {
	dir := b.TempDir()
	paths, _ := Locate(filepath.Join(dir, ".mnemos"), func(string) string { return "" }, dir)
	g := New(Config{Paths: paths, Policy: policy.Default(), UserHome: dir, SelfNames: []string{"mnemos"}, Audit: &memAudit{}})
	// The workspace is a git project in the home directory, not the home
	// directory itself (a recursive search there reads ~/.ssh).
	ws := benchWorkspace(b, dir)
	req := Request{Argv: []string{"bash", "-c", "cd src && grep -rn TODO . | head -20"}, Cwd: ws, Channel: "cli", Sender: "dev"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if d, err := g.Decide(ctx, req, Mode{DryRun: true}); err != nil || d.Outcome == policy.Deny {
			b.Fatal(d.Reason, err)
		}
	}
}

// agentScript is what an agent exploring a Go repository at ws sends in one
// request: 50 simple commands in lists, pipelines and && chains, moving
// into a subdirectory and back.
func agentScript(ws string) string {
	return strings.ReplaceAll(`cd @WS@
git status --short
git log --oneline -n 15
git diff --stat
ls -la
cat go.mod
head -n 40 README.md
grep -rn 'TODO' --include='*.go' . | head -40
find . -name '*.go' | wc -l
find . -name '*_test.go' | head -20
cd internal
ls -la api
grep -n 'func ' api/handler.go | head -30
sed -n '1,80p' api/handler.go
sed -n '/^import (/,/^)/p' api/routes.go
wc -l api/handler.go api/routes.go api/middleware.go
cat api/routes.go | grep -n 'HandleFunc' | sort | head -25
git log --oneline -n 5 -- api/handler.go
git diff HEAD~1 -- api/handler.go | head -60
grep -rn 'context.Context' api | wc -l
head -n 25 api/middleware.go && tail -n 25 api/middleware.go
cd @WS@
ls cmd && ls cmd/server
sed -n '1,50p' cmd/server/main.go
grep -n 'flag\.' cmd/server/main.go | head -20
cat Makefile | head -30
git log -n 3 --stat | head -40
git show --stat HEAD | head -20
find . -name 'go.sum' -o -name 'go.mod' | head
grep -rln 'sql.Open' --include='*.go' . | head
git ls-files '*.go' | wc -l
git branch --list
`, "@WS@", ws)
}

func BenchmarkDecideFiftyCommands(b *testing.B) { benchFifty(b, nil) }

// BenchmarkDecideFiftyCommandsExtra is the same request with an extra
// policy (--policy), which every command is evaluated under as well.
func BenchmarkDecideFiftyCommandsExtra(b *testing.B) { benchFifty(b, policy.Default()) }

func benchFifty(b *testing.B, extra *policy.Policy) {
	dir := b.TempDir()
	paths, _ := Locate(filepath.Join(dir, ".mnemos"), func(string) string { return "" }, dir)
	g := New(Config{Paths: paths, Policy: policy.Default(), Extra: extra, UserHome: dir, SelfNames: []string{"mnemos"}, Audit: &memAudit{}})
	ws := benchWorkspace(b, dir)
	req := Request{Argv: []string{"bash", "-c", agentScript(ws)}, Cwd: ws, Channel: "cli", Sender: "dev"}
	ctx := context.Background()
	if d, err := g.Decide(ctx, req, Mode{DryRun: true}); err != nil || len(d.Commands) != 50 || d.Outcome != policy.Allow {
		b.Fatalf("%d commands, %s: %s %v; want 50 commands, allow", len(d.Commands), d.Outcome, d.Reason, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if d, err := g.Decide(ctx, req, Mode{DryRun: true}); err != nil || d.Outcome == policy.Deny {
			b.Fatal(d.Reason, err)
		}
	}
}

// benchWorkspace makes a git project below home, as an agent's workspace
// is: its root holds .git.
func benchWorkspace(b *testing.B, home string) string {
	ws := filepath.Join(home, "proj")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	return ws
}
