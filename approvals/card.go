package approvals

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Recurrence thresholds choosing the card's form: fewer than MediumFrom
// earlier requests get the full three lines, fewer than ShortFrom the
// medium two, and from ShortFrom on a single line.
const (
	MediumFrom = 3
	ShortFrom  = 8
)

// Reversibility values shown on the card.
const (
	Reversible   = "reversible"
	Irreversible = "irreversible"
	Partial      = "partial"
)

// Card is what a person is shown to decide a request.
type Card struct {
	ActionVerb      string // second-person verb: "write", "download"
	TargetSummary   string // object + source -> destination + (~size)
	CapabilityClass string // e.g. "fs:write:/home/u/proj/**"
	Reversibility   string // reversible (default), irreversible or partial
	Territory       string // none (default), session or permanent
	Recurrence      int    // earlier requests of the same class
	Token           string
}

// Button is one answer a channel can offer under the card.
type Button struct {
	Text string `json:"text"`
	Data string `json:"data"`
}

// Form names the card's shape for a recurrence count: "full", "medium" or
// "short".
func Form(recurrence int) string {
	switch {
	case recurrence >= ShortFrom:
		return "short"
	case recurrence >= MediumFrom:
		return "medium"
	}
	return "full"
}

// territoryMarker is appended at the tail of the meta classification.
func territoryMarker(t string) string {
	switch t {
	case "", TerritoryNone:
		return ""
	case TerritorySession, TerritoryPermanent:
		return " [territory: " + t + "]"
	}
	// An unknown concession is shown, never hidden.
	return " [territory: " + printable(t) + "]"
}

func abbreviate(reversibility string) string {
	switch reversibility {
	case Reversible:
		return "rev"
	case Irreversible:
		return "irrev"
	}
	return reversibility
}

// RenderCard returns the card's lines. Full form (recurrence below
// MediumFrom), three lines:
//
//	May I write?
//	report.pdf from drive.google.com -> ~/downloads/ (~2.4 MB)
//	reversible | class: fs:write:~/downloads/** [territory: permanent]
//
// Medium form, two lines, the meta inline in the first:
//
//	May I write? (reversible | class: fs:write:~/downloads/**)
//	report.pdf from drive.google.com -> ~/downloads/ (~2.4 MB)
//
// Short form (from ShortFrom on), one line:
//
//	Write report.pdf from drive.google.com -> ~/downloads/ (~2.4 MB) [rev | fs:write:~/downloads/**]
//
// Control and formatting characters in the fields are shown escaped
// (`\n`, `\x1b`, `\u202e`), so no field can add a line or restyle the card.
func RenderCard(c Card) []string {
	verb := printable(strings.TrimSpace(c.ActionVerb))
	if verb == "" {
		verb = "proceed"
	}
	target := printable(c.TargetSummary)
	class := printable(c.CapabilityClass)
	rev := printable(c.Reversibility)
	if rev == "" {
		rev = Reversible
	}
	marker := territoryMarker(c.Territory)
	question := "May I " + verb + "?"
	meta := rev + " | class: " + class + marker

	switch Form(c.Recurrence) {
	case "short":
		return []string{capitalise(verb) + " " + target + " [" + abbreviate(rev) + " | " + class + "]" + marker}
	case "medium":
		return []string{question + " (" + meta + ")", target}
	}
	return []string{question, target, meta}
}

// Buttons returns the two answers, whose data carries the token back.
func (c Card) Buttons() []Button {
	return []Button{
		{Text: "Approve", Data: "approve:" + c.Token},
		{Text: "Reject", Data: "reject:" + c.Token},
	}
}

// ParseCallback reads a button's data ("approve:TOKEN" or "reject:TOKEN")
// back into a decision and a token.
func ParseCallback(data string) (Decision, string, error) {
	verb, token, ok := strings.Cut(strings.TrimSpace(data), ":")
	if !ok {
		return "", "", errors.New("malformed callback: want approve:TOKEN or reject:TOKEN")
	}
	var d Decision
	switch verb {
	case "approve":
		d = Approve
	case "reject":
		d = Reject
	default:
		return "", "", fmt.Errorf("malformed callback: unknown answer %q", printable(verb))
	}
	token = normToken(token)
	if !validToken(token) {
		return "", "", errors.New("malformed callback: bad token")
	}
	return d, token, nil
}

// validToken reports whether t looks like a token this package issues.
func validToken(t string) bool {
	if len(t) != tokenEncoding.EncodedLen(tokenBytes) {
		return false
	}
	for _, r := range t {
		if (r < 'a' || r > 'z') && (r < '2' || r > '7') {
			return false
		}
	}
	return true
}

func capitalise(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// printable escapes control and format characters (newlines, escape
// sequences, bidirectional overrides) and invalid UTF-8.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}
