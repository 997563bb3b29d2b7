package shellparse

import (
	"errors"
	"testing"
)

// TestSecurityGluedHashIsNotAComment: inside substitutions the parser takes
// a "#" glued to an expansion for a comment while bash runs what follows;
// such scripts are refused, and real comments still parse.
func TestSecurityGluedHashIsNotAComment(t *testing.T) {
	refused := []string{
		"echo $( x=;$x#;rm -rf /\n)",
		"echo `a$x#;rm -rf /`",
		"echo $(a${x}#;b\n)",
		"cat <(a\"$x\"#;b\n)",
		"if true; then echo $(a$x#;b\n); fi",
		"echo ok \\\r\nrm -rf /",
		"echo a\rrm -rf /",
		"echo 'a\r'",
		"echo hi # note \\\nrm -rf ~",
		"ls #\\\nrm -rf ~",
		"# \\\nrm -rf ~",
		"echo $(ls # c \\\nrm -rf ~\n)",
		"f() { ls; # c \\\nrm -rf ~\n}; f",
	}
	for _, src := range refused {
		_, err := ParseScript(src, Env{})
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q: err = %v, want a parse error", src, err)
		}
	}
	accepted := map[string]int{ // script → commands found
		"ls # list\n":                         1,
		"echo a#b; ls":                        2,
		"echo $(ls # c\n)":                    2,
		"# only a comment\nls":                1,
		"{ ls;} # c":                          1,
		"for i in a; do echo $i; done # loop": 1,
		"ls # a \\ in a comment\nls":          2,
		"echo a \\\nb # c\nls":                2,
	}
	for src, n := range accepted {
		s, err := ParseScript(src, Env{})
		if err != nil {
			t.Errorf("%q: %v", src, err)
			continue
		}
		if len(s.Commands) != n {
			t.Errorf("%q: %d commands, want %d", src, len(s.Commands), n)
		}
	}
}
