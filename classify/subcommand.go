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

// ProjectSubcommand reports a subcommand of a program that otherwise runs
// any code it is given (bun, deno) that only works on the project: its
// tests, build or packages (bun test, deno lint; catalog flag projsub).
func ProjectSubcommand(program, sub string) bool {
	s, found := catalog()[program]
	return found && slices.Contains(s.proj, sub)
}
