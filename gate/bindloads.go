package gate

import (
	"github.com/mnemos-dev/mnemos/shellparse"
)

// What a command loads beyond the script it names (binding.go's file
// facts): the files its makefiles include (bindmake.go).

// loadFacts are the facts of the files a command started in dir loads
// besides its script.
func loadFacts(c shellparse.Command, name, dir string, env envFacts) []string {
	args := c.Argv[1:]
	for _, a := range args {
		if a.Dynamic {
			return nil // the words are bound; what they name is not known
		}
	}
	switch name {
	case "make", "gmake":
		return makeIncludeFacts(values(args), dir, env)
	}
	return nil
}

// values are the words' values.
func values(words []shellparse.Word) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w.Value
	}
	return out
}
