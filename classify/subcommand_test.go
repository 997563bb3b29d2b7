package classify

import "testing"

func TestSubcommand(t *testing.T) {
	for _, c := range []struct {
		program, sub string
		ok, named    bool
	}{
		{"go", "test", true, false},
		{"go", "run", true, true},
		{"npm", "run", true, true},
		{"npm", "test", true, false},
		{"make", "test", true, false},
		{"git", "commit", true, false},
		{"cargo", "build", true, false},
		{"pytest", "tests", false, false}, // no subcommands
		{"bash", "-c", false, false},
		{"nosuchprogram", "x", false, false},
	} {
		ok, named := Subcommand(c.program, c.sub)
		if ok != c.ok || named != c.named {
			t.Errorf("Subcommand(%s, %s) = %v, %v; want %v, %v", c.program, c.sub, ok, named, c.ok, c.named)
		}
	}
	if _, err := parseCatalog("x exec sub=run,\n"); err == nil {
		t.Error("an empty name in sub= was accepted")
	}
	for _, c := range []struct {
		program, sub string
		want         bool
	}{{"bun", "test", true}, {"bun", "x", false}, {"bun", "run", false}, {"deno", "eval", false}, {"deno", "lint", true}, {"go", "test", false}} {
		if got := ProjectSubcommand(c.program, c.sub); got != c.want {
			t.Errorf("ProjectSubcommand(%s, %s) = %v", c.program, c.sub, got)
		}
	}
}
