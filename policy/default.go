package policy

import (
	_ "embed"
)

// defaultSource is the commented default policy: what `mnemos init` writes
// and what applies when no policy file exists.
//
//go:embed default.yaml
var defaultSource []byte

// DefaultSource returns the text of the default policy file.
func DefaultSource() []byte { return append([]byte(nil), defaultSource...) }

// DefaultName is the Source of the built-in default policy.
const DefaultName = "built-in default"

// Default returns the built-in default policy.
func Default() *Policy {
	p, err := Parse(DefaultName, defaultSource)
	if err != nil {
		// The embedded file is tested; failing here is a build defect.
		panic("policy: built-in default does not parse: " + err.Error())
	}
	return p
}
