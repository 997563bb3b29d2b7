package shellparse

import (
	"strings"
	"testing"
)

// arithFlags returns the sources of the commands a script reports for
// text that arithmetic evaluates without its value being known.
func arithFlags(s *Script) []string {
	var out []string
	for _, c := range s.Commands {
		if !c.Dynamic || len(c.Argv) != 1 {
			continue
		}
		for _, n := range c.Notes {
			if strings.Contains(n, "arithmetic") {
				out = append(out, c.Argv[0].Value)
				break
			}
		}
	}
	return out
}

// TestSecurityUnknownValuesInArithmeticAreCode: bash evaluates the
// values it meets in arithmetic as expressions in turn, and an array
// subscript there runs its command substitutions (n='a[$(cmd)]'; $((n))
// runs cmd). A value not known statically (read from input or a file, a
// command's output, the environment, a function's argument) reaching an
// arithmetic context is reported as a dynamic command; a known value is
// walked as today, and an integer not known exactly runs nothing.
func TestSecurityUnknownValuesInArithmeticAreCode(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // the flagged sources, in order; nil: none
	}{
		// Each arithmetic context, with a value read from input.
		{name: "$((n))", src: "read n; echo $((n))", want: []string{"n"}},
		{name: "$(($n))", src: "read n; echo $(( $n + 1 ))", want: []string{"$n"}},
		{name: "((n))", src: "read n; (( n > 1 ))", want: []string{"n"}},
		{name: "[[ -gt ]]", src: "read n; [[ $n -gt 3 ]]", want: []string{"$n"}},
		{name: "[[ name -gt ]]", src: "read n; [[ n -gt 3 ]]", want: []string{"n"}},
		{name: "let", src: "read n; let x=n+1", want: []string{"n"}},
		{name: "let quoted", src: "read n; let 'x = n + 1'", want: []string{"n"}},
		{name: "for (( ))", src: "read n; for ((i=0; i<n; i++)); do :; done", want: []string{"n"}},
		{name: "declare -i", src: "read n; declare -i v=$n", want: []string{"v"}},
		{name: "typeset -i", src: "read n; typeset -i v; v=$n", want: []string{"$n"}},
		{name: "local -i", src: "f() { local -i v=$1; }; f \"$(cat n)\"", want: []string{"v"}},
		{name: "declare -i read", src: "declare -i v; read v", want: []string{"v"}},
		{name: "declare -i mapfile", src: "declare -ai v; mapfile v < f", want: []string{"v"}},
		{name: "declare -i loop", src: "declare -i v; for v in $(cat f); do :; done", want: []string{"v"}},
		{name: "subscript assigned", src: "read n; a[$n]=1", want: []string{"$n"}},
		{name: "subscript named", src: "read n; a[n]=1", want: []string{"n"}},
		{name: "subscript expanded", src: "read n; echo ${a[$n]}", want: []string{"$n"}},
		{name: "subscript name expanded", src: "read n; echo ${a[n]}", want: []string{"n"}},
		{name: "substring offset", src: "read n; s=abc; echo ${s:$n:1}", want: []string{"$n"}},
		{name: "substring length", src: "read n; s=abc; echo ${s:0:n}", want: []string{"n"}},
		{name: "unset subscript", src: "read i; unset \"a[$i]\"", want: []string{"\"a[$i]\""}},
		{name: "printf -v subscript", src: "read i; printf -v \"a[$i]\" x", want: []string{"\"a[$i]\""}},
		{name: "test -v subscript", src: "read i; [[ -v a[$i] ]]", want: []string{"a[$i]"}},
		// A variable name only known at run time may itself be a[$(cmd)].
		{name: "printf -v unknown name", src: "read n; printf -v \"$n\" x", want: []string{"\"$n\""}},
		{name: "read into unknown name", src: "read n; read \"$n\"", want: []string{"\"$n\""}},
		{name: "declare unknown name", src: "n=$(cat f); declare \"$n\"=1", want: []string{"\"$n\"=1"}},
		{name: "test -v unknown name", src: "read n; [[ -v $n ]]", want: []string{"$n"}},
		{name: "indirect expansion of unknown name", src: "read n; echo \"${!n}\"", want: []string{"${!n}"}},
		{name: "indirect expansion of a known name", src: "x=HOME; echo ${!x}"},
		{name: "printf -v a known name", src: "n=x; printf -v \"$n\" %s hi"},
		{name: "indirect expansion in a loop over names", src: "for v in A B; do echo ${!v}; done"},
		// Each source of an unknown value.
		{name: "command output", src: "x=$(cat f); (( x ))", want: []string{"x"}},
		{name: "substitution in place", src: "echo $(( $(cat f) + 1 ))", want: []string{"$(cat f)"}},
		{name: "environment", src: "echo $((PORT + 1))", want: []string{"PORT"}},
		{name: "never assigned", src: "for f in *; do ((count++)); done", want: []string{"count"}},
		{name: "argument", src: "f() { echo $(( $1 * 2 )); }; f \"$(cat n)\"", want: []string{"$1"}},
		{name: "glob", src: "for f in *; do echo $((f)); done", want: []string{"f"}},
		{name: "through a known name", src: "read m; n=m; echo $((n))", want: []string{"m"}},
		{name: "sourced", src: ". ./env.sh; echo $((N))", want: []string{"N"}},
		{name: "name built from an integer", src: "i=$(nproc); echo $(( x$i ))", want: []string{"x$i"}},
		// Known values are walked; integers run nothing.
		{name: "known number", src: "n=5; echo $((n * 2))"},
		{name: "known chain", src: "a=b; b=3; echo $((a))"},
		{name: "known substitution", src: "n='a[$(id)]'; echo $((n))", want: []string{"$(id)", "a[$(id)]"}},
		{name: "loop counter", src: "i=0; while read l; do i=$((i+1)); done < f; echo $((i))"},
		{name: "arith counter", src: "i=0; while [ $i -lt 5 ]; do ((i++)); done; echo $((i * 2))"},
		{name: "c style loop", src: "for ((i=0; i<10; i++)); do echo $((i*2)); done"},
		{name: "wc", src: "n=$(wc -l < f); echo $((n + 1))"},
		{name: "pipe to wc", src: "if [[ $(git status --porcelain | wc -l) -gt 0 ]]; then echo dirty; fi"},
		{name: "seq", src: "for i in $(seq 1 10); do echo $((i * 2)); done"},
		{name: "date +%s", src: "s=$(date +%s); e=$(date +%s); echo $((e - s))"},
		{name: "nproc", src: "echo $(( $(nproc) * 2 ))"},
		{name: "grep -c", src: "n=$(grep -c ERROR log); (( n > 0 ))"},
		{name: "stat -c %s", src: "s=$(stat -c %s \"$f\"); echo $((s / 1024))"},
		{name: "status", src: "make; rc=$?; if (( rc != 0 )); then exit $rc; fi"},
		{name: "argument count", src: "(( $# > 0 )) && echo yes"},
		{name: "length", src: "read s; echo $(( ${#s} + 1 ))"},
		{name: "RANDOM", src: "echo $((RANDOM % 10))"},
		{name: "declare -i holds integers", src: "declare -i n; n=5; read x; n=n+1; echo $((n))"},
		{name: "integer argument", src: "f() { echo $(( $1 * 2 )); }; f $((3 + 4))"},
		{name: "integer array", src: "a=(1 2 3); for i in 0 1 2; do echo $(( a[i] * 2 )); done"},
		{name: "indexes of an array", src: "mapfile -t l < f; for i in \"${!l[@]}\"; do echo \"${l[$i]}\" $((i + 1)); done"},
		{name: "keys of an associative array", src: "declare -A m; mapfile -t l < f; for k in \"${!m[@]}\"; do echo $((k)); done", want: []string{"k"}},
		{name: "associative key", src: "declare -A m; read k; m[$k]=1; echo ${m[$k]}"},
		{name: "associative declared with values", src: "read k; declare -A m=([$k]=1)"},
		// [ and test do not evaluate arithmetic.
		{name: "[ -gt ]", src: "read n; [ \"$n\" -gt 3 ]"},
		{name: "test -eq", src: "read n; test \"$n\" -eq 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := parseEither(t, tc.src, nil)
			got := arithFlags(s)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				var all []string
				for _, c := range s.Commands {
					all = append(all, render(c))
				}
				t.Errorf("%q: flagged %q, want %q\n\t%s", tc.src, got, tc.want, strings.Join(all, "\n\t"))
			}
		})
	}
}

// TestSecurityArithmeticValueChainsAreBounded: a value naming itself, or
// a long chain of names, is followed once per name; beyond the depth the
// parser follows, an unknown end is still reported, and a substitution
// is refused, never skipped.
func TestSecurityArithmeticValueChainsAreBounded(t *testing.T) {
	s := parseEither(t, "a=a; echo $((a))", nil)
	if got := arithFlags(s); len(got) != 0 {
		t.Errorf("self reference: %q", got)
	}
	// A wide tree of names is walked once per name, not once per path.
	var b strings.Builder
	for i := 0; i < 40; i++ {
		b.WriteString("v" + itoa(i) + "='v" + itoa(i+1) + "+v" + itoa(i+1) + "'; ")
	}
	b.WriteString("echo $((v0))")
	s, err := ParseScript(b.String(), testEnv())
	if err != nil {
		t.Fatal(err)
	}
	if got := arithFlags(s); len(got) != 1 {
		t.Errorf("deep tree: flagged %q, want the one text nested beyond the depth followed", got)
	}
}
