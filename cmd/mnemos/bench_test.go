package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

// BenchmarkMainCheck is the in-process cost of `mnemos policy check
// --dry-run -- git status`: flag parsing, loading the policy, parsing and
// deciding, without process start.
func BenchmarkMainCheck(b *testing.B) {
	home := b.TempDir()
	env := map[string]string{"HOME": home, "MNEMOS_HOME": home + "/.mnemos", "MNEMOS_SENDER": "dev"}
	getenv := func(k string) string { return env[k] }
	b.Chdir(home)
	args := []string{"policy", "check", "--dry-run", "--", "git", "status"}
	s := stdio{in: os.Stdin, out: io.Discard, err: io.Discard}
	b.ReportAllocs()
	for b.Loop() {
		if code := Main(context.Background(), args, s, getenv); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

// BenchmarkMainRunTrue is the in-process cost of `mnemos run -- /bin/true`
// allowed by a rule: decision, two audit events, sandbox, fork and wait.
func BenchmarkMainRunTrue(b *testing.B) {
	home, err := os.MkdirTemp("/var/tmp", "mnemos-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(home) })
	ws := home + "/ws"
	if err := os.MkdirAll(ws+"/.git", 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(home+"/.mnemos", 0o700); err != nil {
		b.Fatal(err)
	}
	pol := "level: supervised\nallow:\n  - {name: run true, command: {argv_prefix: [/bin/true]}}\n"
	if err := os.WriteFile(home+"/.mnemos/policy.yaml", []byte(pol), 0o600); err != nil {
		b.Fatal(err)
	}
	env := map[string]string{"HOME": home, "MNEMOS_HOME": home + "/.mnemos", "MNEMOS_SENDER": "dev"}
	getenv := func(k string) string { return env[k] }
	b.Chdir(ws)
	args := []string{"run", "--", "/bin/true"}
	var errBuf strings.Builder
	s := stdio{in: nil, out: io.Discard, err: &errBuf}
	b.ReportAllocs()
	for b.Loop() {
		if code := Main(context.Background(), args, s, getenv); code != 0 {
			b.Fatalf("exit %d: %s", code, errBuf.String())
		}
	}
}
