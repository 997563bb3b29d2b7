package gate

import "strings"

// Shell patterns as find's tests (fnmatch(3)) and git's ignore files
// (wildmatch) read them, for deciding what a deletion removes: find
// -name '*.md' -delete removes the files whose names match, and git
// clean without -x leaves what .gitignore names.

// maxWildSteps bounds the work of one match: a pattern built to take
// exponential time ("*a*a*a*a*b" against a long name) gives up.
const maxWildSteps = 20000

// wildmatch reports whether text matches the pattern pat: * matches any
// run of characters, ? one, [...] one of a set ([!...] or [^...] one
// not in it, with ranges and the classes [:alpha:] ...), and \ takes the
// next character as it is. With slash, *, ? and [...] never match '/',
// and ** matches any run of directories where it stands between slashes
// or at either end (gitignore); otherwise * matches '/' too (find -path).
// With fold, letters match either case (find -iname). ok is false when
// the match took too long: the caller cannot tell, and decides what that
// means.
func wildmatch(pat, text string, slash, fold bool) (match, ok bool) {
	m := wildMatcher{pat: pat, slash: slash, fold: fold}
	r := m.match(0, text)
	return r, m.steps <= maxWildSteps
}

type wildMatcher struct {
	pat         string
	slash, fold bool
	steps       int
}

func (m *wildMatcher) lower(c byte) byte {
	if m.fold && 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// match reports whether pat[pi:] matches t.
func (m *wildMatcher) match(pi int, t string) bool {
	p := m.pat
	for pi < len(p) {
		m.steps++
		if m.steps > maxWildSteps {
			return false
		}
		c := p[pi]
		switch c {
		case '?':
			if t == "" || m.slash && t[0] == '/' {
				return false
			}
			pi++
			t = t[1:]
			continue
		case '*':
			j := pi
			for j < len(p) && p[j] == '*' {
				j++
			}
			if m.slash && j-pi >= 2 && (pi == 0 || p[pi-1] == '/') && (j == len(p) || p[j] == '/') {
				// ** as a whole path element: any run of directories.
				if j == len(p) {
					return true
				}
				// "**/" matches nothing, or everything up to a '/'.
				rest := j + 1
				if m.match(rest, t) {
					return true
				}
				for k := 0; k < len(t); k++ {
					if t[k] == '/' && m.match(rest, t[k+1:]) {
						return true
					}
					if m.steps > maxWildSteps {
						return false
					}
				}
				return false
			}
			if j == len(p) {
				return !m.slash || !strings.Contains(t, "/")
			}
			for k := 0; k <= len(t); k++ {
				if m.match(j, t[k:]) {
					return true
				}
				if k < len(t) && m.slash && t[k] == '/' || m.steps > maxWildSteps {
					return false
				}
			}
			return false
		case '[':
			if t == "" {
				return false
			}
			in, next, ok := m.class(pi, t[0])
			if !ok {
				// No closing bracket: '[' is itself.
				if t[0] != '[' {
					return false
				}
				pi++
				t = t[1:]
				continue
			}
			if !in || m.slash && t[0] == '/' {
				return false
			}
			pi = next
			t = t[1:]
			continue
		case '\\':
			if pi+1 < len(p) {
				pi++
				c = p[pi]
			}
		}
		if t == "" || m.lower(t[0]) != m.lower(c) {
			return false
		}
		pi++
		t = t[1:]
	}
	return t == ""
}

// class reads the bracket expression at pat[pi] ('['): whether c is in
// it, where the pattern goes on after it, and false when it has no
// closing bracket.
func (m *wildMatcher) class(pi int, c byte) (in bool, next int, ok bool) {
	p := m.pat
	i := pi + 1
	negate := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		negate = true
		i++
	}
	lc := m.lower(c)
	first := true
	for i < len(p) {
		if p[i] == ']' && !first {
			return in != negate, i + 1, true
		}
		first = false
		if p[i] == '[' && i+1 < len(p) && p[i+1] == ':' {
			if end := strings.Index(p[i+2:], ":]"); end >= 0 {
				if inClass(p[i+2:i+2+end], c) {
					in = true
				}
				i += end + 4
				continue
			}
		}
		lo := p[i]
		if lo == '\\' && i+1 < len(p) {
			i++
			lo = p[i]
		}
		i++
		hi := lo
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			hi = p[i+1]
			i += 2
			if hi == '\\' && i < len(p) {
				hi = p[i]
				i++
			}
		}
		if lo <= c && c <= hi || m.fold && m.lower(lo) <= lc && lc <= m.lower(hi) {
			in = true
		}
	}
	return false, 0, false
}

// inClass reports whether c is in the POSIX class name (alpha, digit ...).
func inClass(name string, c byte) bool {
	lower, upper, digit := 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9'
	switch name {
	case "alpha":
		return lower || upper
	case "digit":
		return digit
	case "alnum":
		return lower || upper || digit
	case "lower":
		return lower
	case "upper":
		return upper
	case "space":
		return c == ' ' || '\t' <= c && c <= '\r'
	case "blank":
		return c == ' ' || c == '\t'
	case "xdigit":
		return digit || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
	case "punct":
		return c > ' ' && c < 0x7f && !lower && !upper && !digit
	case "print":
		return c >= ' ' && c < 0x7f
	case "graph":
		return c > ' ' && c < 0x7f
	case "cntrl":
		return c < ' ' || c == 0x7f
	}
	return false
}
