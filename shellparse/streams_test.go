package shellparse

import "testing"

// TestStreams: where each command's standard input comes from and whether
// its standard output goes into a pipe, which decides whether a pager or
// a REPL may be reading its commands from a terminal.
func TestStreams(t *testing.T) {
	type io struct {
		name  string
		stdin string
		piped bool
	}
	tests := []struct {
		src  string
		want []io
	}{
		{"less x", []io{{"less", "", false}}},
		{"cat x | less", []io{{"cat", "", true}, {"less", "pipe", false}}},
		{"less x | cat", []io{{"less", "", true}, {"cat", "pipe", false}}},
		{"echo 'print(1)' | python3", []io{{"echo", "", true}, {"python3", "text", false}}},
		{"cat <<EOF | python3\nprint(1)\nEOF", []io{{"cat", "text", true}, {"python3", "text", false}}},
		{"cat | python3", []io{{"cat", "", true}, {"python3", "pipe", false}}},
		{"a | b | c", []io{{"a", "", true}, {"b", "pipe", true}, {"c", "pipe", false}}},
		{"python3 < x.py", []io{{"python3", "file", false}}},
		{"python3 <<EOF\nprint(1)\nEOF", []io{{"python3", "text", false}}},
		{"sqlite3 db <<< '.tables'", []io{{"sqlite3", "text", false}}},
		{"{ less x; vi y; } | cat", []io{{"less", "", true}, {"vi", "", true}, {"cat", "pipe", false}}},
		{"{ a | less; } | cat", []io{{"a", "", true}, {"less", "pipe", true}, {"cat", "pipe", false}}},
		{"{ python3; } < in", []io{{"python3", "file", false}}},
		{"echo $(less x)", []io{{"less", "", true}, {"echo", "", false}}},
		{"cat <(less x)", []io{{"less", "", true}, {"cat", "", false}}},
		{"tee >(less) < f", []io{{"less", "", false}, {"tee", "file", false}}},
		{"git log | head; less x", []io{{"git", "", true}, {"head", "pipe", false}, {"less", "", false}}},
		{"bash -c 'less x' | cat", []io{{"less", "", true}, {"cat", "pipe", false}}},
		{"find . -exec less {} \\; | cat", []io{{"find", "", true}, {"less", "", true}, {"cat", "pipe", false}}},
		{"GIT_PAGER=more git log | cat", []io{{"git", "", true}, {"more", "", true}, {"cat", "pipe", false}}},
		{"GIT_PAGER=more git log", []io{{"git", "", false}, {"more", "", false}}},
	}
	for _, tc := range tests {
		s := parseEither(t, tc.src, nil)
		if len(s.Commands) != len(tc.want) {
			t.Errorf("%q: %d commands %v, want %d", tc.src, len(s.Commands), s.Commands, len(tc.want))
			continue
		}
		for i, c := range s.Commands {
			w := tc.want[i]
			if c.Name() != w.name || c.Stdin != w.stdin || c.StdoutPiped != w.piped {
				t.Errorf("%q: command %d is %s stdin %q piped %v, want %s stdin %q piped %v",
					tc.src, i, c.Name(), c.Stdin, c.StdoutPiped, w.name, w.stdin, w.piped)
			}
		}
	}
}
