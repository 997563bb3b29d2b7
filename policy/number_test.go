package policy

import (
	"regexp"
	"testing"
)

// isDecimalInt and isDecimalNumber are the regular expressions they
// document, written out; every string of up to six characters over the
// characters that matter is judged as the regexp judges it.
func TestDecimalSyntaxMatchesRegexp(t *testing.T) {
	intRe := regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
	numRe := regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)
	alphabet := []byte("-+019.eEx\n")
	var walk func(b []byte)
	walk = func(b []byte) {
		s := string(b)
		if got, want := isDecimalInt(s), intRe.MatchString(s); got != want {
			t.Fatalf("isDecimalInt(%q) = %v, regexp says %v", s, got, want)
		}
		if got, want := isDecimalNumber(s), numRe.MatchString(s); got != want {
			t.Fatalf("isDecimalNumber(%q) = %v, regexp says %v", s, got, want)
		}
		if len(b) == 6 {
			return
		}
		for _, c := range alphabet {
			walk(append(b, c))
		}
	}
	walk(nil)
	for _, s := range []string{"600", "0.30", "-12", "1e9", "1.5E-3", "007", "1_000", "0x10", ".5", "5.", "١٢", "--1", "1e", "-"} {
		if isDecimalInt(s) != intRe.MatchString(s) || isDecimalNumber(s) != numRe.MatchString(s) {
			t.Errorf("%q judged differently from the regexps", s)
		}
	}
}
