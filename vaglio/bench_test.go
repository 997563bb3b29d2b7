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

// BenchmarkGuardCheckDirs: the script's commands as the gate checks them
// when a cd in the script adds a directory they may start in.
func BenchmarkGuardCheckDirs(b *testing.B) {
	p := testGuard().Prepare()
	s := benchScript()
	b.ReportAllocs()
	for b.Loop() {
		d := p.ForDirs([]string{"/home/u/proj", "/home/u/proj/build"})
		for _, c := range s.Commands {
			if h, hit := d.Check(c); hit {
				b.Fatal(h)
			}
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
