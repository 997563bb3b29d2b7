package vaglio

import (
	"path"
	"strings"
	"unicode/utf8"
)

// This file holds the small amount of glob arithmetic the guard needs: does a
// shell glob written by the agent (one path element, such as "shad*" or
// ".e?v") possibly match a name one of the guard's rules names (a literal
// such as "shadow" or a pattern such as "sd*")? The answer is computed on the
// two patterns, without listing any directory.

// maxGlobTokens bounds the work on one path element. A file name has at
// most 255 bytes, so a longer glob element is unusual; it is taken to match
// anything: the guard errs towards a hit.
const maxGlobTokens = 256

// hasMeta reports whether s holds a shell glob character.
func hasMeta(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// hasPatternChar reports whether s holds a character that is special in a
// rule pattern: a glob character or a backslash.
func hasPatternChar(s string) bool {
	return strings.IndexByte(s, '*') >= 0 || strings.IndexByte(s, '?') >= 0 ||
		strings.IndexByte(s, '[') >= 0 || strings.IndexByte(s, '\\') >= 0
}

// gtok is one token of a glob element: a star, or a set of characters (a
// literal, "?" or a bracket class).
type gtok struct {
	star  bool
	any   bool   // "?"
	lit   rune   // a literal character, when neither star, any nor class
	class string // the class body between the brackets, when isSet
	neg   bool   // the class began with ! or ^
	isSet bool
}

// tokenize splits one glob element into tokens. An unclosed bracket is a
// literal "[" (as in the shell); a backslash makes the next character
// literal. Invalid UTF-8 bytes are characters of their own.
func tokenize(p string) []gtok {
	out := make([]gtok, 0, len(p))
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		switch r {
		case '*':
			if n := len(out); n == 0 || !out[n-1].star { // "**" is "*" within one element
				out = append(out, gtok{star: true})
			}
		case '?':
			out = append(out, gtok{any: true})
		case '\\':
			if i+size < len(p) {
				i += size
				r, size = utf8.DecodeRuneInString(p[i:])
			}
			out = append(out, gtok{lit: r})
		case '[':
			end, neg, body, ok := scanClass(p, i)
			if !ok {
				out = append(out, gtok{lit: '['})
				break
			}
			out = append(out, gtok{isSet: true, neg: neg, class: body})
			i, size = end, 1
		default:
			out = append(out, gtok{lit: r})
		}
		i += size
	}
	return out
}

// scanClass reads a bracket class starting at p[i] == '['. It returns the
// index of the closing bracket, whether the class is negated, and its body.
func scanClass(p string, i int) (end int, neg bool, body string, ok bool) {
	j := i + 1
	if j < len(p) && (p[j] == '!' || p[j] == '^') {
		neg = true
		j++
	}
	start := j
	if j < len(p) && p[j] == ']' { // a leading ] is a member
		j++
	}
	for j < len(p) {
		switch p[j] {
		case '\\':
			j += 2
			continue
		case ']':
			return j, neg, p[start:j], true
		}
		j++
	}
	return 0, false, "", false
}

// classRanges calls f for each range of a class body, until f returns true.
func classRanges(b string, f func(lo, hi rune) bool) bool {
	next := func(i int) (rune, int) {
		r, n := utf8.DecodeRuneInString(b[i:])
		if r == '\\' && i+n < len(b) {
			r2, n2 := utf8.DecodeRuneInString(b[i+n:])
			return r2, n + n2
		}
		return r, n
	}
	for i := 0; i < len(b); {
		lo, n := next(i)
		i += n
		hi := lo
		if i+1 < len(b) && b[i] == '-' {
			hi, n = next(i + 1)
			i += 1 + n
		}
		if f(lo, hi) {
			return true
		}
	}
	return false
}

// matches reports whether the character c is in the token's set. A star
// matches any character.
func (t gtok) matches(c rune) bool {
	switch {
	case t.star, t.any:
		return true
	case !t.isSet:
		return t.lit == c
	}
	in := classRanges(t.class, func(lo, hi rune) bool { return lo <= c && c <= hi })
	return in != t.neg
}

// tokensMeet reports whether two non-star tokens share a character. Both
// sets are unions of ranges (or their complements), so if they meet, they
// meet at a range end, just beside one, or at the extremes.
func tokensMeet(a, b gtok) bool {
	if !a.isSet && !a.any {
		return b.matches(a.lit)
	}
	if !b.isSet && !b.any {
		return a.matches(b.lit)
	}
	if a.any && b.any {
		return true
	}
	probe := func(c rune) bool { return c >= 0 && c <= utf8.MaxRune && a.matches(c) && b.matches(c) }
	if probe(0) || probe('a') || probe(utf8.MaxRune) {
		return true
	}
	ends := func(lo, hi rune) bool {
		return probe(lo) || probe(hi) || probe(lo-1) || probe(hi+1)
	}
	return a.isSet && classRanges(a.class, ends) || b.isSet && classRanges(b.class, ends)
}

// globsMeet reports whether some string matches both glob elements a and b.
// It walks the product of the two patterns (a dynamic programme over token
// positions), so its cost is bounded by len(a)*len(b).
func globsMeet(a, b string) bool {
	ta, tb := tokenize(a), tokenize(b)
	n, m := len(ta), len(tb)
	if n > maxGlobTokens || m > maxGlobTokens {
		return true
	}
	w := m + 1
	reach := make([]bool, (n+1)*w)
	reach[0] = true
	for i := 0; i <= n; i++ {
		for j := 0; j <= m; j++ {
			if !reach[i*w+j] {
				continue
			}
			if i == n && j == m {
				return true
			}
			if i < n && ta[i].star {
				reach[(i+1)*w+j] = true // the star matches nothing more
				if j < m {
					reach[i*w+j+1] = true // the star swallows b's token
				}
			}
			if j < m && tb[j].star {
				reach[i*w+j+1] = true
				if i < n {
					reach[(i+1)*w+j] = true
				}
			}
			if i < n && j < m && !ta[i].star && !tb[j].star && tokensMeet(ta[i], tb[j]) {
				reach[(i+1)*w+j+1] = true
			}
		}
	}
	return reach[n*w+m]
}

// elemMatch reports whether the path element written by the agent (name,
// a glob when glob is true) may name something the rule element pat (a Go
// path.Match pattern) matches. A shell glob does not match a leading dot
// unless it starts with one, so "*" never reaches ".ssh".
func elemMatch(name string, glob bool, pat string) bool {
	if !glob || !hasMeta(name) {
		if name == pat {
			return true
		}
		if name == "" || pat == "" {
			return false
		}
		switch c := pat[0]; c {
		case '*', '?', '[', '\\':
		default:
			if c != name[0] {
				return false // the common case, decided on one byte
			}
		}
		if !hasPatternChar(pat) {
			return false
		}
		ok, err := path.Match(pat, name)
		return err == nil && ok
	}
	literalPat := !hasPatternChar(pat)
	if len(pat) > 0 && pat[0] == '.' && name[0] != '.' {
		return false
	}
	name = simplifyClasses(name)
	if literalPat {
		return shellMatch(name, pat)
	}
	return globsMeet(name, pat)
}

// shellMatch matches a name against a shell glob. The shell's "[!...]" is
// Go's "[^...]"; a malformed glob is literal text, as in the shell.
func shellMatch(glob, name string) bool {
	if strings.Contains(glob, "[!") {
		glob = strings.ReplaceAll(glob, "[!", "[^")
	}
	ok, err := path.Match(glob, name)
	if err != nil {
		return glob == name
	}
	return ok
}

// simplifyClasses rewrites each bracket expression of a glob element that
// holds a character class, an equivalence class or a collating symbol
// ("[[:alpha:]]", "[[=e=]]", "[[.w.]]") as "?": the shell matches them,
// path.Match and tokenize do not, and any character is a superset of what
// they match. Other brackets are kept as written.
func simplifyClasses(p string) string {
	if !strings.Contains(p, "[:") && !strings.Contains(p, "[=") && !strings.Contains(p, "[.") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); {
		switch p[i] {
		case '\\':
			if i+1 < len(p) {
				b.WriteString(p[i : i+2])
				i += 2
				continue
			}
		case '[':
			if end, named := scanNamedClass(p, i); end > 0 {
				if named {
					b.WriteByte('?')
				} else {
					b.WriteString(p[i : end+1])
				}
				i = end + 1
				continue
			}
		}
		b.WriteByte(p[i])
		i++
	}
	return b.String()
}

// scanNamedClass reads a bracket expression starting at p[i] == '['. It
// returns the index of its closing bracket (0 when it has none) and
// whether it holds a [:name:], [=c=] or [.c.] element.
func scanNamedClass(p string, i int) (end int, named bool) {
	j := i + 1
	if j < len(p) && (p[j] == '!' || p[j] == '^') {
		j++
	}
	if j < len(p) && p[j] == ']' { // a leading ] is a member
		j++
	}
	for j < len(p) {
		switch {
		case p[j] == '\\':
			j += 2
			continue
		case p[j] == '[' && j+1 < len(p) && strings.IndexByte(":=.", p[j+1]) >= 0:
			if k := strings.Index(p[j+2:], string(p[j+1])+"]"); k >= 0 {
				named = true
				j += 2 + k + 2
				continue
			}
		case p[j] == ']':
			return j, named
		}
		j++
	}
	return 0, false
}
