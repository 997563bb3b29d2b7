package classify

import "slices"

// Subcommand says how a catalogued program names what it does, for a
// rule remembered on approval: ok when the program's first operand is a
// subcommand (go test, cargo build, make test; catalog flag sub), and
// named when, after subcommand sub, the next operand is named too (npm
// run lint, go get golang.org/x/tools; catalog flag sub=A,B).
func Subcommand(program, sub string) (ok, named bool) {
	s, found := catalog()[program]
	if !found || !s.sub {
		return false, false
	}
	return true, slices.Contains(s.named, sub)
}
