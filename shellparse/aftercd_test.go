package shellparse

import (
	"fmt"
	"strings"
	"testing"
)

// AfterCd marks the commands that run only once a cd joined to them by &&
// has succeeded.
func TestAfterCd(t *testing.T) {
	cases := []struct {
		script string
		want   string // each command as "text<AfterCd", joined by " | "
	}{
		{"cd build && rm -rf .", "cd build<0 | rm -rf .<1"},
		{"cd build; rm -rf .", "cd build<0 | rm -rf .<0"},
		{"cd build || rm -rf .", "cd build<0 | rm -rf .<0"},
		{"cd a && cd b && rm -rf .", "cd a<0 | cd b<1 | rm -rf .<2"},
		{"cd a && make && rm -rf .", "cd a<0 | make<1 | rm -rf .<1"},
		{"cd a && make || rm -rf .", "cd a<0 | make<1 | rm -rf .<0"},
		{"cd a && { cd b; rm -rf .; }", "cd a<0 | cd b<1 | rm -rf .<1"},
		{"(cd a) && rm -rf .", "cd a<0 | rm -rf .<0"},
		{"! cd a && rm -rf .", "cd a<0 | rm -rf .<0"},
		{"cd a | cat && rm -rf .", "cd a<0 | cat<0 | rm -rf .<0"},
		{`cd "$(pwd)/a" && rm -rf "$(ls)"`, `pwd<0 | cd "$(pwd)/a"<0 | ls<2 | rm -rf "$(ls)"<2`},
		{"f() { cd /; }; f && rm -rf .", "cd /<0 | rm -rf .<1"},
		{"true && cd a && rm -rf .", "true<0 | cd a<0 | rm -rf .<2"},
	}
	for _, c := range cases {
		s, err := ParseScript(c.script, Env{Home: "/home/u", Cwd: "/w"})
		if err != nil {
			t.Fatalf("%s: %v", c.script, err)
		}
		var got []string
		for _, cmd := range s.Commands {
			got = append(got, fmt.Sprintf("%s<%d", cmd.String(), cmd.AfterCd))
		}
		if g := strings.Join(got, " | "); g != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.script, g, c.want)
		}
	}
}
