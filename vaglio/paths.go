package vaglio

import (
	"path"
	"strings"
	"unicode/utf8"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// unknownHome stands for the home directory when the guard was not told it:
// "~" still names a home directory (an unknown one), so "rm -rf ~" is still
// a hit and "~/.ssh" still a .ssh directory.
const unknownHome = "/~"

// resolver turns words into absolute, cleaned paths.
type resolver struct {
	home string // absolute and cleaned, or unknownHome
	cwd  string // absolute and cleaned; "/" when the caller gave none
}

func newResolver(home, cwd string) resolver {
	r := resolver{home: unknownHome, cwd: resolverCwd(cwd)}
	if strings.HasPrefix(home, "/") {
		r.home = cleanPath(home)
	}
	return r
}

// resolverCwd is the working directory a resolver uses for cwd.
func resolverCwd(cwd string) string {
	if strings.HasPrefix(cwd, "/") {
		return cleanPath(cwd)
	}
	return "/"
}

// cleanPath is path.Clean, without the work when p is already clean (the
// common case: a directory or a word such as "src/main.go").
func cleanPath(p string) string {
	if isClean(p) {
		return p
	}
	return path.Clean(p)
}

// isClean reports whether p is "/" or non-empty elements separated by
// single slashes (after one leading slash when absolute), none of them "."
// or "..". For an absolute path that is path.Clean(p) == p; a relative one
// must also not climb ("..", "../a") or be ".", so that joined to a clean
// directory it stays clean.
func isClean(p string) bool {
	if p == "/" {
		return true
	}
	if p == "" || p[len(p)-1] == '/' || p[0] == '.' && dotElem(p) {
		return false
	}
	for off := 0; ; {
		// Every other element starts after a slash; the last byte is not
		// one.
		i := strings.IndexByte(p[off:], '/')
		if i < 0 {
			return true
		}
		off += i + 1
		if n := p[off]; n == '/' || n == '.' && dotElem(p[off:]) {
			return false
		}
	}
}

// dotElem reports whether the first element of s, which starts with a
// dot, is "." or "..".
func dotElem(s string) bool {
	return len(s) == 1 || s[1] == '/' || s[1] == '.' && (len(s) == 2 || s[2] == '/')
}

// expandHome replaces a leading "~", "~/", "~user", "$HOME" or "${HOME}",
// and a leading "$PWD" or "${PWD}" with the working directory.
// An argv may carry these unexpanded, and a dynamic word carries its source
// text; either way the guard reads them as the shell would. "~user" is taken
// to be a sibling of the home directory ("~root" is /root).
func (r resolver) expandHome(s string) string {
	switch {
	case s == "~" || strings.HasPrefix(s, "~/"):
		return r.home + s[1:]
	case strings.HasPrefix(s, "${HOME}"):
		return r.home + s[len("${HOME}"):]
	case strings.HasPrefix(s, "$HOME") && (len(s) == 5 || !isNameByte(s[5])):
		return r.home + s[len("$HOME"):]
	case strings.HasPrefix(s, "${PWD}"):
		return r.cwd + s[len("${PWD}"):]
	case strings.HasPrefix(s, "$PWD") && (len(s) == 4 || !isNameByte(s[4])):
		return r.cwd + s[len("$PWD"):]
	case strings.HasPrefix(s, "~"):
		user, rest, _ := strings.Cut(s[1:], "/")
		if user == "" || strings.ContainsAny(user, "$`*?[") {
			return s
		}
		if rest != "" || strings.HasSuffix(s, "/") {
			rest = "/" + rest
		}
		switch user {
		case "root":
			return "/root" + rest
		case "+":
			return r.cwd + rest
		case "-":
			return s
		}
		return path.Join(path.Dir(r.home), user) + rest
	}
	return s
}

func isNameByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// abs makes p absolute against the working directory and cleans it, so
// "/etc/../etc/shadow" and "//etc///shadow" are both "/etc/shadow".
func (r resolver) abs(p string) string {
	if strings.HasPrefix(p, "/") {
		return cleanPath(p)
	}
	// Leading "./" and trailing slashes are what cleaning the join would
	// drop ("./cmd/x/" is cmd/x).
	q := p
	for strings.HasPrefix(q, "./") {
		q = strings.TrimLeft(q[2:], "/")
	}
	q = strings.TrimRight(q, "/")
	switch {
	case q == "" || q == ".":
		return r.cwd
	case !isClean(q):
		return path.Clean(r.cwd + "/" + p)
	case r.cwd == "/":
		return "/" + q
	}
	// A clean relative path below a clean directory: the join is clean.
	return r.cwd + "/" + q
}

// wordCandidates returns the paths one whole word may name. A static word
// names exactly one path. A dynamic word names a glob (when its only dynamic
// part is a glob) or, when a variable or substitution computes part of it,
// only what its static prefix already fixes: the directory the result lies
// in and the prefix itself ("/etc/shadow$X" may be /etc/shadow).
func (r resolver) wordCandidates(w shellparse.Word, out []candidate) []candidate {
	if w.Value == "" {
		return out
	}
	if !w.Dynamic {
		raw := w.Value
		if !w.TildeLiteral {
			// A quoted or escaped "~" ('~', "~", \~) is a file of that
			// name in the working directory, as the shell leaves it. Words
			// built without the parser (argv, inline code's literals) do
			// not carry the mark and keep reading "~" as home.
			raw = r.expandHome(raw)
		}
		p := r.abs(raw)
		out = append(out, newCandidate(p, false, false, w.Value))
		if t, ok := r.traversed(raw); ok {
			// "/proc/self/cwd/../../etc/shadow" goes through
			// /proc/self/cwd, and a symbolic link there makes ".." lead
			// anywhere: the directory passed through counts too.
			c := newCandidate(t, false, false, w.Value)
			c.traversed = true
			out = append(out, c)
		}
		if hasMeta(w.Value) {
			// A literal word with glob characters (an argv passed without
			// a shell, or a quoted one) is also judged as the glob it
			// would be if a shell expanded it: "rm -rf '/*'" counts.
			out = append(out, newCandidate(p, true, false, w.Value))
		}
		return out
	}
	s := r.expandHome(stripQuotes(w.Value))
	return r.dynamicCandidates(s, true, w.Value, out)
}

// traversed returns the directory a path passes through before its first
// ".." element, when there is one ("a/b/../c" passes through a/b).
func (r resolver) traversed(p string) (string, bool) {
	if !strings.Contains(p, "..") {
		return "", false
	}
	i := strings.Index("/"+p+"/", "/../")
	if i <= 0 {
		return "", false
	}
	dir := p[:i-1]
	if dir == "" || dir == "." {
		return "", false
	}
	return r.abs(dir), true
}

// dynamicCandidates handles text that may hold a variable or substitution.
// glob says whether glob characters in it are live.
func (r resolver) dynamicCandidates(s string, glob bool, word string, out []candidate) []candidate {
	i := strings.IndexAny(s, "$`")
	if i < 0 {
		return append(out, newCandidate(r.abs(s), glob && hasMeta(s), false, word))
	}
	out = r.tailCandidate(s, glob, word, out)
	static := s[:i]
	if static == "" || strings.HasPrefix(static, "<(") || strings.HasPrefix(static, ">(") {
		return out
	}
	if j := strings.LastIndexByte(static, '/'); j >= 0 {
		dir := static[:j+1]
		out = append(out, newCandidate(r.abs(dir), glob && hasMeta(dir), true, word))
		if j == len(static)-1 {
			return out
		}
	}
	return append(out, newCandidate(r.abs(static), glob && hasMeta(static), false, word))
}

// tailCandidate handles the static tail of text computed at run time:
// "$D/.env" is a .env file and "$(pwd)/.ssh/id_rsa" a key in a .ssh
// directory, wherever the computed part points. The tail (from the first
// slash after the last "$" or "`", and after its last "..") is placed
// below an element no anchored rule names, so only the rules that hold at
// any depth can match it. A tail without an element starting with a dot
// cannot match such a rule.
func (r resolver) tailCandidate(s string, glob bool, word string, out []candidate) []candidate {
	k := strings.LastIndexAny(s, "$`")
	j := strings.IndexByte(s[k:], '/')
	if j < 0 {
		return out
	}
	tail := s[k+j:]
	if i := strings.LastIndex(tail, "/../"); i >= 0 {
		// Above the unknown directory is another unknown directory; the
		// directory passed through before ".." is touched too.
		if t := cleanPath("/$" + tail[:i]); strings.HasPrefix(t, "/$/") && strings.Contains(t, "/.") {
			c := newCandidate(t, glob && hasMeta(t), false, word)
			c.traversed = true
			out = append(out, c)
		}
		tail = tail[i+3:]
	}
	if !strings.Contains(tail, "/.") || strings.HasSuffix(tail, "/..") || strings.HasPrefix(s, "<(") || strings.HasPrefix(s, ">(") {
		return out
	}
	p := cleanPath("/$" + tail)
	if !strings.HasPrefix(p, "/$/") {
		return out
	}
	return append(out, newCandidate(p, glob && hasMeta(tail), false, word))
}

// stripQuotes removes the quote characters from a dynamic word's source
// text. Glob characters that were quoted then look live: the guard errs
// towards matching more, never less.
func stripQuotes(s string) string {
	if !strings.ContainsAny(s, `'"`) {
		return s
	}
	return strings.NewReplacer(`'`, "", `"`, "").Replace(s)
}

// isPathSep reports the bytes that cannot be inside a path written in a
// larger string: quotes, "=", parentheses, commas, blanks, ";", ":" and the
// shell's operators. "--key-file=/root/.ssh/id_rsa", "if=/dev/sda" and
// "open('/home/u/.ssh/id_rsa')" all yield their path.
func isPathSep(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\'', '"', '`', '=', '(', ')', ',', ';', ':', '<', '>', '|', '&':
		return true
	}
	return false
}

// embeddedCandidates returns the paths written inside a word: every piece
// between separators that looks like a path (it starts with "/", "~", "."
// or "$HOME", or holds a "/"). The whole word itself is left to
// wordCandidates. Embedded pieces are never globs.
func (r resolver) embeddedCandidates(value string, out []candidate) []candidate {
	if !strings.ContainsFunc(value, isPathSep) {
		return out
	}
	// The pieces strings.FieldsFunc(value, isPathSep) would return, read
	// in place: every separator is ASCII, and no byte of a multi-byte
	// character (nor of invalid UTF-8) is one.
	for i := 0; i < len(value); {
		for i < len(value) && isPathSep(rune(value[i])) {
			i++
		}
		start := i
		for i < len(value) && (value[i] >= utf8.RuneSelf || !isPathSep(rune(value[i]))) {
			i++
		}
		if start < i {
			out = r.embeddedPiece(value[start:i], out)
		}
	}
	return out
}

// embeddedPiece adds the candidates of one piece of a larger string.
func (r resolver) embeddedPiece(tok string, out []candidate) []candidate {
	// curl -F file=@/etc/shadow: "@" names a file to send.
	tok = strings.TrimLeft(tok, "@")
	if strings.HasPrefix(tok, "-") {
		// An option with its value glued on: "-o/etc/shadow".
		i := strings.IndexAny(tok, "/~")
		if i < 0 {
			return out
		}
		tok = tok[i:]
	}
	if !looksLikePath(tok) {
		return out
	}
	return r.dynamicCandidates(r.expandHome(tok), false, tok, out)
}

// looksLikePath is the filter for pieces of larger strings.
func looksLikePath(tok string) bool {
	if tok == "" {
		return false
	}
	switch tok[0] {
	case '/', '~', '.':
		return true
	}
	return strings.HasPrefix(tok, "$HOME") || strings.HasPrefix(tok, "${HOME}") || strings.Contains(tok, "/")
}

// allCandidates is wordCandidates plus embeddedCandidates. A word that
// starts with "@" also names the file after it ("curl -d @.env" sends
// .env).
func (r resolver) allCandidates(w shellparse.Word, out []candidate) []candidate {
	out = r.wordCandidates(w, out)
	if rest, ok := strings.CutPrefix(w.Value, "@"); ok && rest != "" {
		out = r.wordCandidates(shellparse.Word{Value: rest, Dynamic: w.Dynamic}, out)
	}
	return r.embeddedCandidates(w.Value, out)
}
