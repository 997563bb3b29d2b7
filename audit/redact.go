package audit

import (
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Redacted replaces every secret value the redactor recognises.
const Redacted = "[REDACTED]"

// redactors are the patterns RedactString needs, compiled on first use:
// most text holds nothing that looks like a secret, and compiling them
// costs a short-lived process about 0.1 ms at start.
type redactors struct {
	// The BEGIN line of a PEM private key block, and its END line; what
	// lies between is found by redactPEM.
	pemBegin, pemEnd *regexp.Regexp
	// Well-known credential shapes. sk- needs 20 characters after the dash
	// so that ordinary names ("sk-learn") survive.
	token *regexp.Regexp
	// scheme://user:password@host: the password is masked, the user kept.
	// The password runs to the last '@' of the authority.
	url *regexp.Regexp
}

// compiled returns the redactors, compiling them once; regexp values are
// safe for concurrent use.
var compiled = sync.OnceValue(func() *redactors {
	return &redactors{
		pemBegin: regexp.MustCompile(`-----BEGIN[ A-Z0-9]*PRIVATE KEY-----`),
		pemEnd:   regexp.MustCompile(`^-----END[ A-Z0-9]*PRIVATE KEY-----`),
		token: regexp.MustCompile(`\b(?:` +
			`gh[pousr]_[A-Za-z0-9]{20,}` +
			`|github_pat_[A-Za-z0-9_]{20,}` +
			`|glpat-[A-Za-z0-9_-]{20,}` +
			`|sk-[A-Za-z0-9_-]{20,}` +
			`|xox[baprs]-[A-Za-z0-9-]{10,}` +
			`|(?:AKIA|ASIA)[0-9A-Z]{16}\b` +
			`|AIza[0-9A-Za-z_-]{35}` +
			`|npm_[A-Za-z0-9]{36}` +
			`|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+` +
			`)`),
		url: regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9+.-]*://)([^\s/?#:@"'<>]*):([^\s/?#"'<>]*)@`),
	}
})

// RedactString returns s with the secret values it recognises replaced by
// [Redacted]. It is meant for free text: a shell script, a command line, a
// header, an error message. It recognises:
//
//   - assignments and key/value pairs whose name names a secret:
//     NAME=value, NAME: value, "name": "value", ?token=value&…, where NAME
//     contains password, passwd, passphrase, secret, token, api key, access
//     key, private key (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, db_password,
//     keyStorePassword, X-Api-Key, client_secret, …);
//   - flags naming a secret, in both forms: --password=value and
//     --password value (also --token, --api-key, --client-secret,
//     --access-key, -password, -pass, …);
//   - Authorization and Proxy-Authorization header values, keeping the
//     scheme (Bearer, Basic, …);
//   - the password of a URL's user:password@ part;
//   - well-known credential shapes anywhere: ghp_…, gho_…, github_pat_…,
//     glpat-…, sk-…, xoxb-…, AKIA…/ASIA… key ids, AIza…, npm_…, JSON web
//     tokens, and PEM private key blocks.
//
// Only the secret is replaced, never the text after it: a PEM block from
// its BEGIN line to its END line, or, with no END line, through the run of
// base64 lines that follows BEGIN; a token through its last character; a
// value up to the end of its line. A value that is code or a reference
// rather than a secret ($(…), `…`, $NAME, ${NAME}) is shown as it is: the
// audit log, the card and the channels show what the command computes or
// sends.
//
// A name that refers to a secret rather than holding one keeps its value:
// --password-file=PATH, GITHUB_TOKEN_PATH=…, --token-stdin, --secret-name,
// max_tokens=100 and --no-password are left alone, so the audit still
// shows which file or setting was used. Short flags (-p, -u) are too
// ambiguous to redact. Words that merely contain a secret word
// (tokenizer, secretary, bypass) are not names of secrets.
//
// RedactString is idempotent: redacting its output changes nothing.
func RedactString(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	// One pass can leave text that another rule then recognises (a
	// redacted pair that now reads as a URL's user:password@). Repeat until
	// nothing changes, so that the result is stable.
	for range 8 {
		r := redactOnce(s)
		if r == s {
			break
		}
		s = r
	}
	return s
}

func redactOnce(s string) string {
	if strings.Contains(s, "PRIVATE KEY-----") {
		s = redactPEM(s)
	}
	if hasTokenPrefix(s) {
		s = compiled().token.ReplaceAllLiteralString(s, Redacted)
	}
	if strings.Contains(s, "://") && strings.Contains(s, "@") {
		re := compiled().url
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			sub := re.FindStringSubmatch(m)
			if notSecret(sub[3]) {
				return m
			}
			return sub[1] + sub[2] + ":" + Redacted + "@"
		})
	}
	s = redactPairs(s)
	s = redactFlagWords(s)
	return s
}

// RedactArgv returns a copy of argv with secret values replaced by
// [Redacted]. Each element is redacted as by [RedactString]; in addition
// the element after a flag naming a secret ("--password", "--token",
// "-pass", …) is replaced whole, the element after "Authorization:" (or the
// one after its scheme) likewise, and for curl the password part of
// -u/--user/-U/--proxy-user user:password.
func RedactArgv(argv []string) []string {
	if argv == nil {
		return nil
	}
	out := make([]string, len(argv))
	var st argvState
	if len(argv) > 0 {
		st.curl = filepath.Base(argv[0]) == "curl"
	}
	for i, a := range argv {
		out[i] = st.next(a)
	}
	return out
}

// argvState carries what an argv element says about the next one.
type argvState struct {
	curl       bool
	secretNext bool // the previous element was a flag naming a secret
	userNext   bool // curl: the previous element was -u/--user
	auth       int  // 1: after "Authorization:", 2: after its scheme
}

func (st *argvState) next(a string) string {
	secretNext, userNext, auth := st.secretNext, st.userNext, st.auth
	st.secretNext = isSecretFlag(a)
	st.userNext = st.curl && (a == "-u" || a == "--user" || a == "-U" || a == "--proxy-user")
	st.auth = 0
	if w, ok := strings.CutSuffix(a, ":"); ok && isAuthWord(w) {
		st.auth = 1
	}
	switch {
	case secretNext:
		return Redacted
	case auth == 1 && isAuthScheme(a):
		st.auth = 2
		return a
	case auth != 0:
		return Redacted
	case userNext:
		if user, _, ok := strings.Cut(a, ":"); ok {
			return user + ":" + Redacted
		}
	}
	return RedactString(a)
}

// isSecretFlag reports whether a is a flag without a value whose name
// names a secret, so the next argument is its value.
func isSecretFlag(a string) bool {
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	name := strings.TrimPrefix(a[1:], "-")
	if name == "" || !isLetter(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return false
		}
	}
	return isSecretName(name)
}

// hasTokenPrefix is a cheap filter for the token pattern: every shape it matches
// starts with one of these.
func hasTokenPrefix(s string) bool {
	for _, p := range [...]string{
		"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "sk-",
		"xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "AKIA", "ASIA", "AIza", "npm_", "eyJ",
	} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// mayHoldSecret is a cheap filter: every rule needs one of these.
func mayHoldSecret(s string) bool {
	return strings.ContainsAny(s, "=:-_@.") ||
		strings.Contains(s, "AKIA") || strings.Contains(s, "ASIA") || strings.Contains(s, "AIza")
}

// isSecretName reports whether a variable, key, header or flag name
// (leading dashes ignored) names a secret value.
func isSecretName(name string) bool {
	name = strings.TrimLeft(name, "-")
	segs := splitName(name)
	if len(segs) == 0 {
		return false
	}
	if segs[0] == "no" && len(segs) > 1 {
		return false // --no-password
	}
	if referenceSuffix(segs[len(segs)-1]) {
		return false // --password-file, TOKEN_PATH, --token-stdin
	}
	for i, s := range segs {
		if secretWord(s) {
			return true
		}
		if i+1 < len(segs) && secretWord(s+segs[i+1]) {
			return true
		}
	}
	return false
}

// secretWord reports whether one lower-case name segment (or two joined)
// names a secret. Suffixes catch dbpassword, mytoken, xapikey.
func secretWord(w string) bool {
	switch w {
	case "pass", "passwords", "secrets":
		return true
	}
	for _, suf := range [...]string{
		"password", "passwd", "passphrase", "secret", "token",
		"apikey", "accesskey", "secretkey", "privatekey", "accountkey",
		"masterkey", "signingkey", "encryptionkey",
	} {
		if strings.HasSuffix(w, suf) {
			return true
		}
	}
	return false
}

// referenceSuffix reports whether a name ending in segment w refers to a
// secret (where it lives, how it is read, what it is called) rather than
// holding one.
func referenceSuffix(w string) bool {
	switch w {
	case "file", "files", "path", "dir", "fd", "stdin", "env", "cmd", "command",
		"name", "type", "url", "uri", "endpoint", "header", "field",
		"length", "len", "prompt", "ttl", "expiry", "expires", "expiration",
		"limit", "count", "size", "hint", "format", "policy":
		return true
	}
	return false
}

// splitName splits a name into lower-case segments at non-alphanumeric
// bytes and at camelCase boundaries: "keyStorePassword" → key store
// password, "APIKey" → api key, "AWS_SECRET_ACCESS_KEY" → aws secret
// access key.
func splitName(name string) []string {
	var segs []string
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			segs = append(segs, strings.ToLower(name[start:end]))
		}
		start = -1
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		p := name[i-1]
		switch {
		case isUpper(c) && (isLower(p) || isDigit(p)):
			flush(i)
			start = i
		case isUpper(c) && isUpper(p) && i+1 < len(name) && isLower(name[i+1]):
			flush(i)
			start = i
		}
	}
	flush(len(name))
	return segs
}

// redactPairs redacts the value of NAME=value and NAME: value pairs whose
// name names a secret, and of Authorization headers. Names may be quoted
// (JSON, YAML) and may carry leading dashes (--password=x, -Dx.password=y).
func redactPairs(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '=' && c != ':' {
			continue
		}
		start, end := pairName(s, i)
		if start == end {
			continue
		}
		name := s[start:end]
		auth := isAuthWord(name)
		if !auth && !isSecretName(name) {
			continue
		}
		k := skipBlanks(s, i+1)
		if c == ':' && k == i+1 && k < len(s) && strings.IndexByte("-=?+", s[k]) >= 0 &&
			start >= 2 && s[start-2:start] == "${" {
			k++ // ${NAME:-default}
		}
		if auth {
			if w := skipWord(s, k); w > k && isAuthScheme(s[k:w]) {
				if v := skipBlanks(s, w); v > w && v < len(s) && !isValueStop(s[v], c == ':') {
					k = v
				}
			}
		}
		vend, open, close := scanValue(s, k, c == ':')
		if vend == k || s[k:vend] == open+Redacted+close || notSecret(s[k+len(open):vend-len(close)]) {
			i = max(i, vend-1)
			continue
		}
		b.WriteString(s[last:k])
		b.WriteString(open)
		b.WriteString(Redacted)
		b.WriteString(close)
		last = vend
		i = vend - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// pairName finds the name before the separator at sep: blanks, an optional
// (possibly backslash-escaped) closing quote, then name bytes. It returns
// start == end when there is none.
func pairName(s string, sep int) (start, end int) {
	j := sep
	for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
		j--
		if j > 0 && s[j-1] == '\\' {
			j--
		}
	}
	end = j
	for j > 0 && isNameByte(s[j-1]) {
		j--
	}
	start = j
	// The name proper starts with a letter or '_' after optional dashes.
	k := start
	for k < end && s[k] == '-' {
		k++
	}
	if k == end || !(isLetter(s[k]) || s[k] == '_') {
		return end, end
	}
	return start, end
}

// scanValue returns the end of the value starting at k and, for a quoted
// value, the quote written around the replacement. A value ends with its
// line: a quoted value with no closing quote on its line (a line break, or
// an escaped one, \n, comes first) is taken up to the first blank, quote,
// shell operator or backslash, and its replacement gets no closing quote.
func scanValue(s string, k int, colon bool) (end int, open, close string) {
	if k >= len(s) {
		return k, "", ""
	}
	q := s[k]
	esc := ""
	if q == '\\' && k+1 < len(s) && (s[k+1] == '"' || s[k+1] == '\'') {
		esc, q = `\`, s[k+1]
	}
	if q == '"' || q == '\'' {
		quote := esc + string(q)
		j := k + len(quote)
		for j < len(s) && s[j] != '\n' && s[j] != '\r' && !escapedBreak(s, j) {
			if esc != "" && strings.HasPrefix(s[j:], quote) {
				return j + len(quote), quote, quote
			}
			if esc == "" && s[j] == '\\' && q == '"' {
				j += 2
				continue
			}
			if esc == "" && s[j] == q {
				return j + 1, quote, quote
			}
			j++
		}
		j = k + len(quote)
		for j < len(s) && !isValueStop(s[j], colon) && s[j] != '\\' {
			j++
		}
		return j, quote, ""
	}
	j, depth := k, 0 // depth: inside ${…}, whose '}' ends no value
	for j < len(s) && !escapedBreak(s, j) {
		switch c := s[j]; {
		case c == '{' && j > k && s[j-1] == '$':
			depth++
		case c == '}' && depth > 0:
			depth--
		case isValueStop(c, colon):
			return j, "", ""
		}
		j++
	}
	return j, "", ""
}

// escapedBreak reports whether s holds an escaped line break (\n or \r,
// as in a JSON string or an escaped card line) at i.
func escapedBreak(s string, i int) bool {
	return s[i] == '\\' && i+1 < len(s) && (s[i+1] == 'n' || s[i+1] == 'r')
}

// notSecret reports whether a value is code or a reference rather than a
// secret: it runs a command ($(…) or `…`) or names a variable ($NAME,
// ${NAME}). Showing it gives nothing away, and hiding it would hide what
// the command does.
func notSecret(v string) bool {
	if strings.Contains(v, "$(") || strings.Contains(v, "`") {
		return true
	}
	name, ok := strings.CutPrefix(v, "$")
	if !ok {
		return false
	}
	if n, ok := strings.CutPrefix(name, "{"); ok {
		name, ok = strings.CutSuffix(n, "}")
		if !ok {
			return false
		}
	}
	if name == "" || !(isLetter(name[0]) || name[0] == '_') {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !isAlnum(name[i]) && name[i] != '_' {
			return false
		}
	}
	return true
}

// redactPEM replaces each PEM private key block in s, from its BEGIN line
// through its END line. A block with no END line right after its body is
// replaced through the run of base64 lines after BEGIN (pemBody), so that
// a key pasted into a script hides none of the code that follows it.
func redactPEM(s string) string {
	re := compiled().pemBegin
	var b strings.Builder
	last := 0
	for {
		loc := re.FindStringIndex(s[last:])
		if loc == nil {
			break
		}
		start, body := last+loc[0], last+loc[1]
		b.WriteString(s[last:start])
		b.WriteString(Redacted)
		last = pemBody(s, body)
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// pemBody returns the end of the block whose BEGIN line ends at i: after
// its END line when only encapsulated headers (Proc-Type, DEK-Info) and
// base64 lines come between; otherwise the end of the base64 lines that
// follow. Lines are separated by line breaks, escaped line breaks (\n) or
// blanks. Without an END line, a line counts as key data only when it ends
// at a separator, a quote or the end of the text; the first sets the line
// width (and is at least 16 characters long, unless nothing but quotes and
// separators follow it), the next ones have that width, and a shorter one
// ends the run when it completes the base64 quads.
func pemBody(s string, i int) int {
	end := i
	// Encapsulated headers of an encrypted key.
	for {
		k := skipPEMBreaks(s, end)
		if k == end || !(strings.HasPrefix(s[k:], "Proc-Type:") || strings.HasPrefix(s[k:], "DEK-Info:")) {
			break
		}
		j := k
		for j < len(s) && s[j] != '\n' && s[j] != '\r' && !escapedBreak(s, j) && s[j] != '"' && s[j] != '\'' {
			j++
		}
		end = j
	}
	width, total := -1, 0
	for {
		k := skipPEMBreaks(s, end)
		if m := compiled().pemEnd.FindStringIndex(s[k:]); m != nil {
			return k + m[1]
		}
		if k == end && end != i {
			return end // two lines with nothing between them
		}
		n := base64Line(s, k)
		if n == 0 {
			return end
		}
		// With an END line right after, any line is key data.
		after := skipPEMBreaks(s, k+n)
		if compiled().pemEnd.MatchString(s[after:]) {
			end = k + n
			continue
		}
		if !pemLineEnds(s, k+n) {
			return end
		}
		switch {
		case width < 0:
			if n < 16 && !onlyQuotesLeft(s, k+n) {
				return end
			}
			width = n
		case n == width:
		case n < width && (total+n)%4 == 0:
			return k + n
		default:
			return end
		}
		total += n
		end = k + n
	}
}

// base64Line returns the length of the base64 line at k: base64
// characters, then up to two '=' of padding.
func base64Line(s string, k int) int {
	j := k
	for j < len(s) && (isAlnum(s[j]) || s[j] == '+' || s[j] == '/') {
		j++
	}
	for p := 0; p < 2 && j < len(s) && s[j] == '='; p++ {
		j++
	}
	return j - k
}

// skipPEMBreaks skips the separators between PEM lines.
func skipPEMBreaks(s string, k int) int {
	for k < len(s) {
		switch {
		case s[k] == '\n' || s[k] == '\r' || s[k] == ' ' || s[k] == '\t':
			k++
		case escapedBreak(s, k):
			k += 2
		default:
			return k
		}
	}
	return k
}

// pemLineEnds reports whether a base64 line ending at k ends as key data
// does: at a separator, a quote, a backslash or the end of the text.
func pemLineEnds(s string, k int) bool {
	if k >= len(s) {
		return true
	}
	switch s[k] {
	case '\n', '\r', ' ', '\t', '"', '\'', '`', '\\':
		return true
	}
	return false
}

// onlyQuotesLeft reports whether nothing but separators and quotes follow k.
func onlyQuotesLeft(s string, k int) bool {
	for ; k < len(s); k++ {
		switch s[k] {
		case '\n', '\r', ' ', '\t', '"', '\'', '`', '\\':
		default:
			return false
		}
	}
	return true
}

func isValueStop(c byte, colon bool) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '`', ';', '&', '|', '<', '>', ')':
		return true
	case ',', '}':
		return colon
	}
	return false
}

func skipBlanks(s string, k int) int {
	for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
		k++
	}
	return k
}

func skipWord(s string, k int) int {
	for k < len(s) && (isAlnum(s[k]) || s[k] == '-') {
		k++
	}
	return k
}

func isAuthWord(w string) bool {
	return strings.EqualFold(w, "authorization") || strings.EqualFold(w, "proxy-authorization")
}

func isAuthScheme(w string) bool {
	switch strings.ToLower(w) {
	case "bearer", "basic", "digest", "token", "negotiate", "bot", "aws4-hmac-sha256":
		return true
	}
	return false
}

// redactFlagWords splits free text into shell-like words and replaces the
// word after a flag naming a secret (--password VALUE). The decision for
// each word looks at the original previous word, so "--token --password x"
// redacts both values.
func redactFlagWords(s string) string {
	if !strings.Contains(s, "-") {
		return s
	}
	var b strings.Builder
	last := 0
	secretNext := false
	for i := 0; i < len(s); {
		start, end := nextWord(s, i)
		if start == end {
			break
		}
		i = end
		word := s[start:end]
		if n := secretSpan(word); secretNext && n > 0 && word[:n] != Redacted {
			b.WriteString(s[last:start])
			b.WriteString(Redacted)
			last = start + n
		}
		secretNext = isSecretFlag(unquote(word))
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// secretSpan returns how much of the word after a flag naming a secret is
// the secret: the word up to the end of its line (a quoted word may run
// on), or nothing when the word is code or a reference (notSecret).
func secretSpan(word string) int {
	if notSecret(unquote(word)) {
		return 0
	}
	for i := 0; i < len(word); i++ {
		if word[i] == '\n' || word[i] == '\r' || escapedBreak(word, i) {
			if unquote(word[:i]) == "" {
				return 0
			}
			return i
		}
	}
	return len(word)
}

// nextWord returns the span of the next word at or after i. Words are
// separated by blanks and by unquoted ; | & ( ) < >; quotes and
// backslashes group as in the shell.
func nextWord(s string, i int) (start, end int) {
	for i < len(s) && isWordSep(s[i]) {
		i++
	}
	start = i
	for i < len(s) && !isWordSep(s[i]) {
		switch s[i] {
		case '\\':
			i += 2
			continue
		case '\'':
			if j := strings.IndexByte(s[i+1:], '\''); j >= 0 {
				i += j + 2
			} else {
				i = len(s)
			}
			continue
		case '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
			continue
		}
		i++
	}
	return start, min(i, len(s))
}

func isWordSep(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', ';', '|', '&', '(', ')', '<', '>':
		return true
	}
	return false
}

// unquote drops quote characters and backslashes; it is only used to
// recognise flag names.
func unquote(w string) string {
	if !strings.ContainsAny(w, `"'\`) {
		return w
	}
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '\'' || r == '\\' {
			return -1
		}
		return r
	}, w)
}

func isNameByte(c byte) bool { return isAlnum(c) || c == '_' || c == '-' || c == '.' }
func isAlnum(c byte) bool    { return isLetter(c) || isDigit(c) }
func isLetter(c byte) bool   { return isUpper(c) || isLower(c) }
func isUpper(c byte) bool    { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool    { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
