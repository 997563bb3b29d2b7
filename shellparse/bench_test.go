package shellparse

import (
	"strings"
	"testing"
)

// benchScript50 is a 50-command script of the kind agents send: lists,
// pipelines, substitutions, a loop and a function.
func benchScript50() string {
	var b strings.Builder
	b.WriteString("set -euo pipefail\nroot=$(git rev-parse --show-toplevel)\ncd \"$root\"\n")
	for i := 0; i < 9; i++ {
		b.WriteString("go vet ./pkg/... && go test -run TestX ./pkg/... 2>&1 | tee -a /tmp/out.txt\n")
		b.WriteString("grep -rn 'TODO' --include='*.go' . | wc -l > /tmp/count\n")
	}
	b.WriteString("for f in a b c; do gofmt -l \"$f\"; done\n")
	b.WriteString("build() { go build -o \"bin/$1\" \"./cmd/$1\"; }\nbuild mnemos\n")
	b.WriteString("if [ -f go.sum ]; then sha256sum go.sum; else echo none; fi\n")
	b.WriteString("find . -name '*.orig' -exec rm {} \\;\n")
	return b.String()
}

func BenchmarkParseScript3(b *testing.B) {
	src := "cd /tmp/x && go test ./... | tee out.txt"
	env := testEnv()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseScript(src, env); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseScript50(b *testing.B) {
	src := benchScript50()
	env := testEnv()
	s, err := ParseScript(src, env)
	if err != nil {
		b.Fatal(err)
	}
	if n := len(s.Commands); n < 45 {
		b.Fatalf("benchmark script has %d commands, want about 50", n)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseScript(src, env); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseArgv(b *testing.B) {
	argv := []string{"sudo", "-u", "root", "env", "A=1", "bash", "-c", "rm -rf /tmp/x && ls -la"}
	env := testEnv()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseArgv(argv, env); err != nil {
			b.Fatal(err)
		}
	}
}
