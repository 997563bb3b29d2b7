package shellparse

import (
	"slices"
	"strings"
	"testing"
)

// TestSecurityEnvRefsFollowValues checks that the inherited variables
// whose values reach a command are named however the script moved them.
// want gives, for the last command, its EnvRefs joined by commas.
func TestSecurityEnvRefsFollowValues(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`echo $GITHUB_TOKEN`, "GITHUB_TOKEN"},
		{`echo $HOME`, "HOME"},
		{`x=$GITHUB_TOKEN; echo "$x"`, "GITHUB_TOKEN"},
		{`x="pre${GITHUB_TOKEN}"; echo "$x"`, "GITHUB_TOKEN"},
		{`x=$A; y=$x; z="$y $B"; cat <<< "$z"`, "A,B"},
		{`x=${T:-none}; echo $x`, "T"},
		{`x=a; x+=$T; echo $x`, "T"},
		{`x+=a; echo $x`, "x"},
		{`if c; then x=$T; fi; echo $x`, "T,x"},
		{`read x <<< "$T"; echo "$x"`, "T"},
		{`read -a arr <<< "$T"; echo "${arr[1]}"`, "T"},
		{`read <<< "$T"; echo "$REPLY"`, "T"},
		{`while read -r x; do echo "$x"; done <<< "$T"`, "T"},
		{`printf -v x %s "$T"; echo "$x"`, "T"},
		{`mapfile -t a <<< "$T"; echo "${a[0]}"`, "T"},
		{`export x=$T; bash -c 'echo $x'`, "T"},
		{`x=$T bash -c 'echo $x'`, "T"},
		{`declare x=$T; echo $x`, "T"},
		{`n=T; echo ${!n}`, "T"},
		{`n=T; m=n; echo ${!m}`, ""}, // prints "T",
		{`declare -n r=T; echo $r`, "T"},
		{`local -n r=T; echo $r`, "T"},
		{`typeset -n r=T; echo $r`, "T"},
		{`declare -n r=y; r=$T; echo $y`, "T,y"},
		{`for t in "$T"; do echo $t; done`, "T"},
		{`for t in a "$T" b; do echo $t; done`, "T"},
		{`x=$T; f() { echo $x; }; f`, "T"},
		{`x=$T; echo ok >"$x"`, "T"},
		{`x=$T; { cat; } <<< "$x"`, "T"},
		{`f() { echo "$1"; }; f "$T"`, "T"},
		{`f() { echo "$@"; }; x=$T; f a "$x"`, "T"},
		{`f() { for a; do echo "$a"; done; }; f "$T"`, "T"},
		{`set -- "$T"; echo "$1"`, "T"},
		{`bash -c 'echo "$1"' _ "$T"`, "T"},
		{`x=$T; read y <<< "$x"; read y <<< hello; echo $y`, ""},
		{`f() { echo "$1"; }; f hello`, ""},
		{`echo "$(echo $T)"`, "T"},
		// Values the script made itself name nothing.
		{`x=hello; echo $x`, ""},
		{`name=world; echo "hi $name"`, ""},
		{`x=$T; x=hello; echo "$x"`, ""},
		{`for t in a b; do echo $t; done`, ""},
		{`read x <<< hello; echo $x`, ""},
		{`echo hello`, ""},
		{`x=$T; echo hello`, ""},
		{`x=$T`, ""},
	} {
		s, err := ParseScript(tc.src, Env{Home: "/h", Cwd: "/w"})
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		if len(s.Commands) == 0 {
			if tc.want != "" {
				t.Errorf("%s: no command", tc.src)
			}
			continue
		}
		c := s.Commands[len(s.Commands)-1]
		if got := strings.Join(c.EnvRefs, ","); got != tc.want {
			t.Errorf("%s: %s: EnvRefs %q, want %q", tc.src, c, got, tc.want)
		}
		if !slices.IsSorted(c.EnvRefs) || len(slices.Compact(slices.Clone(c.EnvRefs))) != len(c.EnvRefs) {
			t.Errorf("%s: EnvRefs %q not sorted and unique", tc.src, c.EnvRefs)
		}
		if c.EnvRefs != nil && len(c.EnvRefs) == 0 {
			t.Errorf("%s: empty EnvRefs is not nil", tc.src)
		}
	}
}
