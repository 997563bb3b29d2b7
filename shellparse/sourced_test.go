package shellparse

import (
	"slices"
	"strings"
	"testing"
)

// TestSourcedFiles: source FILE of a file Env.Sourced knows sets what it
// says for the commands after it, the source command itself carries no
// note; any other file, a name only known at run time, or a relative
// name after a cd stays not followed.
func TestSourcedFiles(t *testing.T) {
	env := Env{Home: "/home/u", Cwd: "/work", Vars: map[string]string{"PATH": "/usr/bin:/bin"},
		Sourced: func(file string) (map[string]string, bool) {
			switch file {
			case ".venv/bin/activate", "/work/.venv/bin/activate":
				return map[string]string{"VIRTUAL_ENV": "/work/.venv", "PATH": "/work/.venv/bin:$PATH"}, true
			case "/home/u/.cargo/env":
				return map[string]string{"PATH": "/home/u/.cargo/bin:$PATH"}, true
			}
			return nil, false
		}}
	for _, tc := range []struct {
		src     string
		program string   // the command after the source
		assigns []string // its assigns that must be there
		noted   bool     // the source command carries a note
	}{
		{src: "source .venv/bin/activate && pytest -q", program: "pytest",
			assigns: []string{"PATH=/work/.venv/bin:/usr/bin:/bin", "VIRTUAL_ENV=/work/.venv"}},
		{src: ". .venv/bin/activate\npython -m pytest", program: "python",
			assigns: []string{"PATH=/work/.venv/bin:/usr/bin:/bin", "VIRTUAL_ENV=/work/.venv"}},
		{src: "source ~/.cargo/env && cargo build", program: "cargo", assigns: []string{"PATH=/home/u/.cargo/bin:/usr/bin:/bin"}},
		{src: `source "$HOME/.cargo/env"; cargo test`, program: "cargo", assigns: []string{"PATH=/home/u/.cargo/bin:/usr/bin:/bin"}},
		{src: `export PATH="$HOME/.cargo/bin:$PATH" && cargo test`, program: "cargo", assigns: []string{"PATH=/home/u/.cargo/bin:/usr/bin:/bin"}},
		{src: "cd sub && source .venv/bin/activate && pytest", program: "pytest", noted: true},
		{src: "source other/env && pytest", program: "pytest", noted: true},
		{src: `source "$F" && pytest`, program: "pytest", noted: true},
	} {
		s, err := ParseScript(tc.src, env)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		var src, prog *Command
		for i := range s.Commands {
			switch s.Commands[i].Name() {
			case "source", ".":
				src = &s.Commands[i]
			case tc.program:
				prog = &s.Commands[i]
			}
		}
		if prog == nil {
			t.Errorf("%q: no %s command", tc.src, tc.program)
			continue
		}
		if src != nil && (len(src.Notes) > 0) != tc.noted {
			t.Errorf("%q: source notes %v, want noted %v", tc.src, src.Notes, tc.noted)
		}
		for _, a := range tc.assigns {
			if !slices.Contains(prog.Assigns, a) {
				t.Errorf("%q: %s's assigns %v lack %q", tc.src, tc.program, prog.Assigns, a)
			}
		}
		if tc.noted {
			for _, a := range prog.Assigns {
				if strings.HasPrefix(a, "PATH=/") {
					t.Errorf("%q: %s given a known PATH %q after a file not followed", tc.src, tc.program, a)
				}
			}
		}
	}
}
