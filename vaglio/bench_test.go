package vaglio

import (
	"testing"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// benchScript is a typical agent request: three commands, none of which is
// a hit, so every rule is consulted.
func benchScript() *shellparse.Script {
	return &shellparse.Script{Commands: []shellparse.Command{
		cmd("git status --short"),
		redir(cmd("go test -count=1 ./vaglio/ ./policy/"), ">", "/tmp/test.log"),
		within(cmd("grep -n TODO internal/gate/gate.go"), "|"),
	}}
}

func BenchmarkGuardCheck(b *testing.B) {
	g := testGuard()
	s := benchScript()
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range s.Commands {
			if _, hit := g.Check(c, "/home/u/proj"); hit {
				b.Fatal("hit")
			}
		}
	}
}

func BenchmarkGuardCheckScript(b *testing.B) {
	g := testGuard()
	s := benchScript()
	b.ReportAllocs()
	for b.Loop() {
		if hits := g.CheckScript(s, "/home/u/proj"); len(hits) != 0 {
			b.Fatal(hits)
		}
	}
}

func BenchmarkGuardCheckHit(b *testing.B) {
	g := testGuard()
	c := cmd("python3 -c 'import os; print(open(os.path.expanduser(\"~/.ssh/id_rsa\")).read())'")
	b.ReportAllocs()
	for b.Loop() {
		if _, hit := g.Check(c, "/home/u/proj"); !hit {
			b.Fatal("no hit")
		}
	}
}

func BenchmarkJudge(b *testing.B) {
	in := Input{Intent: "run the vaglio tests", Command: cmd("go test -count=1 ./vaglio/")}
	b.ReportAllocs()
	for b.Loop() {
		_ = Judge{}.Judge(in)
	}
}
