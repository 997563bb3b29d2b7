package vaglio

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// LogRecord is one line of vaglio's own log (seed 003, ch. 7): which
// program was judged and how, with the names of its options but never their
// values, paths or arguments. Values often hold secrets, and a log that
// kept them would itself become something to protect.
type LogRecord struct {
	Approved  bool      `json:"approved"`
	Reason    string    `json:"reason"`
	TS        time.Time `json:"ts"`
	JudgeKind string    `json:"judge_kind"`
	Score     float64   `json:"score"`
	BlockedBy string    `json:"blocked_by"`
	// Intent is the agent's stated reason, redacted (argument values,
	// credentials and long opaque tokens replaced) and cut to
	// MaxLogIntent characters.
	Intent string `json:"intent,omitempty"`
	// Executor is the program's base name ("(dynamic)" when it is computed
	// at run time).
	Executor string `json:"executor"`
	// ArgsKeys are the option names in argv ("-r", "--force"), in order of
	// first appearance.
	ArgsKeys []string `json:"args_keys"`
	// ContextKeys are the names of the context the caller judged in
	// ("level", "capability").
	ContextKeys []string `json:"context_keys"`
}

// MaxLogIntent is the longest intent, in characters, the log keeps.
const MaxLogIntent = 200

// Bounds on what one record may carry.
const (
	maxLogKeys   = 32
	maxLogKeyLen = 40
)

// NewLogRecord builds the log line for one verdict on one command. For a
// guard block the reason is the check and the rule, never the matched word;
// the judge's reasons never quote arguments.
func NewLogRecord(cmd shellparse.Command, v Verdict, intent string, contextKeys []string) LogRecord {
	rec := LogRecord{
		Approved:    v.Approved,
		Reason:      v.Reason,
		JudgeKind:   v.JudgeKind,
		Score:       v.Score,
		BlockedBy:   v.BlockedBy,
		Intent:      RedactIntent(intent, cmd),
		Executor:    cmd.Name(),
		ArgsKeys:    optionKeys(cmd.Argv),
		ContextKeys: boundedKeys(contextKeys),
	}
	if v.BlockedBy == BlockedByGuard {
		rec.Reason = "guard: " + v.Rule
	}
	if rec.JudgeKind == "" {
		rec.JudgeKind = JudgeKindRuleBased
	}
	if rec.Executor == "" && len(cmd.Argv) > 0 {
		rec.Executor = "(dynamic)"
	}
	return rec
}

// AppendLog appends rec to dir/YYYY-MM.jsonl (the month of now, in UTC),
// creating dir (0700) and the file (0600) as needed. A record without a
// time gets now. Callers treat an error as a lost log line, never as a
// reason to change the decision.
func AppendLog(dir string, rec LogRecord, now time.Time) error {
	if rec.TS.IsZero() {
		rec.TS = now
	}
	rec.TS = rec.TS.UTC()
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode vaglio log record: %w", err)
	}
	line = append(line, '\n')
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create vaglio log dir: %w", err)
	}
	name := filepath.Join(dir, now.UTC().Format("2006-01")+".jsonl")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open vaglio log: %w", err)
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("append vaglio log: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close vaglio log: %w", err)
	}
	return nil
}

// optionKeys returns the option names in argv (after the program): long
// options up to any "=", short clusters of up to three letters split into
// single options, and only the first letter of a longer cluster, whose rest
// is usually a value glued on ("-pSECRET"). Words after "--" are operands.
func optionKeys(argv []shellparse.Word) []string {
	if len(argv) < 2 {
		return []string{}
	}
	keys := []string{}
	add := func(k string) {
		if len(keys) < maxLogKeys && !contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, w := range argv[1:] {
		v := w.Value
		if w.Dynamic || len(v) < 2 || v[0] != '-' {
			continue
		}
		if v == "--" {
			break
		}
		if long, ok := strings.CutPrefix(v, "--"); ok {
			name, _, _ := strings.Cut(long, "=")
			if name != "" && len(name) <= maxLogKeyLen && isOptionName(name) {
				add("--" + name)
			}
			continue
		}
		cluster := v[1:]
		if !onlyLetters(cluster[:1]) {
			continue // "-5", "-/x": a value, not an option name
		}
		if len(cluster) > 3 || !onlyLetters(cluster) {
			add("-" + cluster[:1])
			continue
		}
		for i := 0; i < len(cluster); i++ {
			add("-" + cluster[i:i+1])
		}
	}
	return keys
}

// isOptionName accepts the characters long option names are made of.
func isOptionName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func boundedKeys(keys []string) []string {
	out := []string{}
	for _, k := range keys {
		if len(out) == maxLogKeys {
			break
		}
		if len(k) > maxLogKeyLen {
			k = k[:maxLogKeyLen]
		}
		out = append(out, k)
	}
	return out
}

// RedactIntent prepares the agent's intent for the log. The intent is free
// text and may repeat anything, so: every piece of it (between blanks and
// punctuation) of four bytes or more that is also a piece of a word of the
// command (program, arguments, redirect targets, assignment values) becomes
// "[arg]"; values after credential-like keys ("password=", "token:",
// "Bearer") and long opaque tokens become "[redacted]"; control characters
// become spaces; the result is cut to MaxLogIntent characters. The work is
// linear in the sizes of the intent and the command.
func RedactIntent(intent string, cmd shellparse.Command) string {
	if intent == "" {
		return ""
	}
	// Only the start of a long intent can reach the log. The cut drops the
	// last, possibly partial, word.
	if limit := 4 * MaxLogIntent * utf8.UTFMax; len(intent) > limit {
		intent = intent[:limit]
		if i := strings.LastIndexAny(intent, " \t\n"); i > 0 {
			intent = intent[:i]
		}
	}
	s := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, intent)
	s = redactSecrets(s)
	s = replacePieces(s, commandPieces(cmd))
	if utf8.RuneCountInString(s) > MaxLogIntent {
		r := []rune(s)
		s = string(r[:MaxLogIntent]) + "…"
	}
	return s
}

// minPiece is the shortest piece of a command word the intent redaction
// looks for.
const minPiece = 4

// isPieceSep separates the pieces of intents and command words.
func isPieceSep(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\'', '"', '`', '=', ':', ',', ';', '(', ')', '[', ']', '{', '}', '<', '>', '|', '&':
		return true
	}
	return false
}

// trimPiece drops sentence punctuation around a piece.
func trimPiece(p string) string {
	return strings.Trim(p, ".!?")
}

// commandPieces is the set of pieces of the command's words; a short
// option's glued value counts as a piece too ("-pSECRET" gives "SECRET").
func commandPieces(cmd shellparse.Command) map[string]bool {
	set := map[string]bool{}
	add := func(v string) {
		for _, p := range strings.FieldsFunc(v, isPieceSep) {
			for _, q := range []string{p, trimPiece(p)} {
				if len(q) >= minPiece {
					set[q] = true
				}
			}
			if len(p) > 2 && p[0] == '-' && p[1] != '-' && len(p)-2 >= minPiece {
				set[p[2:]] = true
			}
		}
	}
	for _, w := range cmd.Argv {
		add(w.Value)
	}
	for _, r := range cmd.Redirects {
		add(r.Target.Value)
	}
	for _, a := range cmd.Assigns {
		add(a)
	}
	return set
}

// replacePieces replaces each piece of s found in set with "[arg]".
func replacePieces(s string, set map[string]bool) string {
	if len(set) == 0 {
		return s
	}
	var b strings.Builder
	start := -1
	flush := func(end int) {
		p := s[start:end]
		t := trimPiece(p)
		switch {
		case set[p]:
			b.WriteString("[arg]")
		case t != "" && set[t]:
			i := strings.Index(p, t)
			b.WriteString(p[:i] + "[arg]" + p[i+len(t):])
		default:
			b.WriteString(p)
		}
		start = -1
	}
	for i, r := range s {
		if isPieceSep(r) {
			if start >= 0 {
				flush(i)
			}
			b.WriteRune(r)
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		flush(len(s))
	}
	return b.String()
}

// redactSecrets replaces the value after a credential-like key and any
// long opaque token.
func redactSecrets(s string) string {
	fields := strings.Fields(s)
	changed := false
	redactNext := false
	for i, f := range fields {
		lower := strings.ToLower(f)
		if redactNext {
			if lower == "bearer" || lower == "basic" {
				continue // "Authorization: Bearer TOKEN"
			}
			fields[i], changed, redactNext = "[redacted]", true, false
			continue
		}
		if k := strings.IndexAny(f, "=:"); k > 0 && secretKey(lower[:k]) {
			if k+1 < len(f) {
				fields[i], changed = f[:k+1]+"[redacted]", true
			} else {
				redactNext = true
			}
			continue
		}
		if lower == "bearer" || lower == "basic" || secretKey(strings.TrimRight(lower, ":")) && strings.HasSuffix(lower, ":") {
			redactNext = true
			continue
		}
		if opaqueToken(f) {
			fields[i], changed = "[redacted]", true
		}
	}
	if !changed && !redactNext {
		return s
	}
	return strings.Join(fields, " ")
}

func secretKey(k string) bool {
	k = strings.Trim(k, `"'-_ `)
	for _, w := range []string{"password", "passwd", "pwd", "secret", "token", "apikey", "api_key", "api-key", "key", "auth", "credential", "cookie", "session"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// opaqueToken reports a word of twenty or more characters from a token
// alphabet holding both letters and digits, such as an API key.
func opaqueToken(f string) bool {
	f = strings.Trim(f, `"'.,;:()[]{}`)
	if len(f) < 20 {
		return false
	}
	letters, digits := false, false
	for i := 0; i < len(f); i++ {
		c := f[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			letters = true
		case '0' <= c && c <= '9':
			digits = true
		case c == '-' || c == '_' || c == '+' || c == '/' || c == '=' || c == '.':
		default:
			return false
		}
	}
	return letters && digits
}

// ReadLog returns the last n records of the log in dir (every record when
// n is 0), oldest first, reading the monthly files newest first until it
// has n. Lines that are not records (a write cut short) are skipped and
// counted in skipped. A missing dir is an empty log.
func ReadLog(dir string, n int) (recs []LogRecord, skipped int, err error) {
	names, err := filepath.Glob(filepath.Join(dir, "[0-9][0-9][0-9][0-9]-[0-9][0-9].jsonl"))
	if err != nil {
		return nil, 0, err
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	var months [][]LogRecord
	total := 0
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, 0, fmt.Errorf("read vaglio log: %w", err)
		}
		var month []LogRecord
		for line := range strings.Lines(string(data)) {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			var rec LogRecord
			if json.Unmarshal([]byte(line), &rec) != nil {
				skipped++
				continue
			}
			month = append(month, rec)
		}
		months = append(months, month)
		total += len(month)
		if n > 0 && total >= n {
			break
		}
	}
	for i := len(months) - 1; i >= 0; i-- {
		recs = append(recs, months[i]...)
	}
	if n > 0 && len(recs) > n {
		recs = recs[len(recs)-n:]
	}
	return recs, skipped, nil
}
