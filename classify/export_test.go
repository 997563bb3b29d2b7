package classify

import "github.com/mnemos-dev/mnemos/shellparse"

// For the tests of package classify_test (abbrev_policy_test.go), which
// decide with package policy and so cannot live in this package.

// Grammar is how one program reads its options.
type Grammar = grammar

// OptionGrammar is optionGrammar: the grammar a command's options are
// read by and the index of the word they start at.
func OptionGrammar(c shellparse.Command) (*Grammar, int) { return optionGrammar(c) }

// GitGrammar is gitGrammar: the grammar of one git subcommand.
func GitGrammar(sub string) *Grammar { return gitGrammar(sub) }

// Abbreviations is abbreviations: every prefix of a long option the
// grammar reads as exactly that option.
func (g *grammar) Abbreviations(name string) []string { return g.abbreviations(name) }

// Exact reports a long option the grammar names exactly as written.
func (g *grammar) Exact(name string) bool {
	_, st, _ := g.resolve(name)
	return st == optExact
}
