package policy

import (
	"path"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// PrefixEscape returns why the words of an argv_prefix themselves make
// the program run other code, read another set of files or work
// elsewhere (make -f FILE, make SHELL=..., npm --prefix DIR, git -c ...,
// go -toolexec ...), or "". A rule an author writes by hand may name such
// words (prefixscope.go); a rule remembered on approval never does: it
// stands for the command a person saw, and what those options bring in
// is not on its card.
func PrefixEscape(prefix []string) string {
	if len(prefix) < 2 {
		return ""
	}
	args := make([]shellparse.Word, len(prefix)-1)
	for i, w := range prefix[1:] {
		args[i] = shellparse.Word{Value: w}
	}
	why := escapingOption(path.Base(prefix[0]), args, 0)
	if why == "" {
		return ""
	}
	// escapingOption says "after the prefix": here the words are in it.
	return whyInPrefix(why)
}

// whyInPrefix rewords escapingOption's reason for words inside a prefix.
func whyInPrefix(why string) string {
	return strings.Replace(why, " after the prefix", "", 1)
}

// TailEscape returns why the words of argv after its first n make the
// program run other code, read another set of files or work elsewhere
// (go build -o DIR, make test -f other.mk), so that an argv_prefix allow
// rule for argv[:n] does not cover argv itself (prefixscope.go); "" when
// none does.
func TailEscape(argv []string, n int) string {
	if len(argv) < 2 || n < 1 || n >= len(argv) {
		return ""
	}
	args := make([]shellparse.Word, len(argv)-1)
	for i, w := range argv[1:] {
		args[i] = shellparse.Word{Value: w}
	}
	return escapingOption(path.Base(argv[0]), args, n-1)
}
