package shellparse

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestZZGen(t *testing.T) {
	path := os.Getenv("GEN")
	if path == "" {
		t.Skip()
	}
	data, _ := os.ReadFile(path)
	type c struct{ kind, name, src string }
	var cases []c
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if strings.HasPrefix(line, "S|") || strings.HasPrefix(line, "A|") {
			parts := strings.SplitN(line, "|", 3)
			cases = append(cases, c{parts[0], parts[1], parts[2]})
			continue
		}
		cases[len(cases)-1].src += "\n" + line
	}
	env := testEnv()
	var b strings.Builder
	for _, cs := range cases {
		var s *Script
		var err error
		if cs.kind == "A" {
			s, err = ParseArgv(strings.Split(cs.src, "¦"), env)
		} else {
			s, err = ParseScript(cs.src, env)
		}
		if err != nil {
			fmt.Fprintf(&b, "// ERROR %q %q: %v\n", cs.name, cs.src, err)
			continue
		}
		if cs.kind == "A" {
			fmt.Fprintf(&b, "{name: %q, argv: %#v, want: []string{\n", cs.name, strings.Split(cs.src, "¦"))
		} else {
			fmt.Fprintf(&b, "{name: %q, src: %q, want: []string{\n", cs.name, cs.src)
		}
		for _, cmd := range s.Commands {
			fmt.Fprintf(&b, "\t%q,\n", render(cmd))
		}
		fmt.Fprintf(&b, "}},\n")
	}
	os.WriteFile(path+".out", []byte(b.String()), 0o644)
}
