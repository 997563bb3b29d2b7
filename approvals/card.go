package approvals

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
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
	// Undoable: what the command destroys, mnemos's journal keeps, and
	// `mnemos undo` brings back (shown so).
	Undoable = "undoable"
)

// Card is what a person is shown to decide a request.
type Card struct {
	ActionVerb      string // second-person verb: "write", "download"
	TargetSummary   string // object + source -> destination + (~size)
	CapabilityClass string // e.g. "fs:write:/home/u/proj/**"
	Reversibility   string // reversible (default), irreversible or partial
	Territory       string // none (default), session or permanent
	// Under is the directory whose subtree the concession's fs:write
	// grant covers, shown in the territory marker.
	Under      string
	Recurrence int // earlier requests of the same class
	// More counts the request's other accesses, shown as "and N more"
	// after the class; `mnemos approvals show` lists them all.
	More int
	// Estimate is the request's estimated cost ("$0.1 a call"), shown in
	// the meta line; empty when no access has one.
	Estimate string
	Token    string
}

// estimate sums the estimated cost of a request's accesses.
func estimate(acc []Access) string {
	sum, any := 0.0, false
	for _, a := range acc {
		if a.Cost != nil {
			sum, any = sum+*a.Cost, true
		}
	}
	if !any {
		return ""
	}
	return "est. $" + strconv.FormatFloat(sum, 'f', -1, 64) + " a call"
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

// territoryMarker is appended at the tail of the meta classification:
// the concession, and the subtree its fs:write grant covers.
func territoryMarker(t, under string) string {
	in := ""
	if under != "" {
		in = ", under " + Printable(under) + "/"
	}
	switch t {
	case "", TerritoryNone:
		return ""
	case TerritorySession, TerritoryPermanent:
		return " [territory: " + t + in + "]"
	}
	// An unknown concession is shown, never hidden.
	return " [territory: " + Printable(t) + in + "]"
}

func abbreviate(reversibility string) string {
	switch reversibility {
	case Reversible:
		return "rev"
	case Irreversible:
		return "irrev"
	case "undoable (`mnemos undo`)":
		return "undo"
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
// The class is the most dangerous access of the request (see Rank);
// when it has others, "and N more" follows the class in every form.
// Control and formatting characters in the fields are shown escaped
// (`\n`, `\x1b`, `\u202e`; see Printable), so no field can add a line,
// restyle the card or reorder what it says.
func RenderCard(c Card) []string {
	verb := Printable(strings.TrimSpace(c.ActionVerb))
	if verb == "" {
		verb = "proceed"
	}
	target := Printable(c.TargetSummary)
	class := Printable(c.CapabilityClass)
	if c.More > 0 {
		class += fmt.Sprintf(" and %d more", c.More)
	}
	rev := Printable(c.Reversibility)
	switch rev {
	case "":
		rev = Reversible
	case Undoable:
		rev = "undoable (`mnemos undo`)"
	}
	marker := territoryMarker(c.Territory, c.Under)
	question := "May I " + verb + "?"
	if e := Printable(c.Estimate); e != "" {
		class += " | " + e
	}
	meta := rev + " | class: " + class + marker

	switch Form(c.Recurrence) {
	case "short":
		return []string{capitalise(verb) + " " + target + " [" + abbreviate(rev) + " | " + class + "]" + marker}
	case "medium":
		return []string{question + " (" + meta + ")", target}
	}
	return []string{question, target, meta}
}

// Rank orders capabilities by how much an approval of them gives away, for
// the card's headline: code:exec and mail:send (approved one request at a
// time, never by a standing grant) rank highest, then fs:write (the other
// critical capability), then what sends data off the machine
// (network:http, llm:online, channel:out), then the other reads, then the
// capabilities that need no approval. A capability outside the registry
// ranks above them all: what is not known is never hidden behind what is.
func Rank(c classify.Capability) int {
	s, err := policy.Lookup(c)
	switch {
	case err != nil:
		return 5
	case s.DefaultApproval == policy.ApprovalAlways:
		return 4
	case s.Critical:
		return 3
	case c == classify.NetworkHTTP || c == classify.LLMOnline || c == classify.ChannelOut:
		return 2
	case s.DefaultApproval == policy.ApprovalPerTarget:
		return 1
	}
	return 0
}

// HeadlineVerb is the card's verb for a request whose most dangerous
// access is of capability c, held by a command whose own verb (as its
// classification names its operation) is verb; empty when that command's
// operation is of another capability. The command's verb is kept when it
// names an operation of c ("delete", "download", "build"); for code:exec
// and mail:send only a verb that says code runs or mail is sent is kept,
// so that "May I write?" never heads a card whose class is code:exec.
//
// argv, when given, are that command's words, the program first. A
// program's verb names what the program does when it works ("install" for
// pip, "build" for make); an invocation that only asks it about itself
// (AsksOnly: pip --version, make --help, pip list) does not do that, and
// reads "run", the verb that says no more than that code runs. "run
// remotely" is kept whatever the words: it never reads milder.
func HeadlineVerb(c classify.Capability, verb string, argv ...string) string {
	switch c {
	case classify.CodeExec:
		switch verb {
		case "build", "compile", "install", "test":
			if AsksOnly(argv) {
				return "run"
			}
			return verb
		case "run", "run remotely":
			return verb
		}
		return Verb(c)
	case classify.MailSend:
		return Verb(c)
	}
	if verb == "" {
		return Verb(c)
	}
	return verb
}

// helpFlag reports whether w asks a program for its help when it is the
// program's only word or follows a subcommand.
func helpFlag(w string) bool {
	switch w {
	case "--help", "-h", "-help", "-?":
		return true
	}
	return false
}

// versionFlag reports whether w asks a program for its version when it is
// the program's only word.
func versionFlag(w string) bool {
	switch w {
	case "--version", "-V", "-version":
		return true
	}
	return false
}

// listing reports whether sub is a subcommand (or option) of a program
// whose verb is "install" that shows what is installed or available and
// installs nothing: pip list, apt show, brew info.
func listing(prog, sub string) bool {
	switch prog {
	case "pip", "pip3":
		switch sub {
		case "list", "show", "freeze", "check", "inspect", "help":
			return true
		}
	case "apt":
		switch sub {
		case "list", "show", "search", "policy", "showsrc", "depends", "rdepends":
			return true
		}
	case "brew":
		switch sub {
		case "list", "ls", "info", "search", "config", "deps", "leaves", "commands", "help",
			"--prefix", "--cellar", "--repository", "--cache":
			return true
		}
	}
	return false
}

// AsksOnly reports whether argv, a command's words with the program first,
// only asks the program about itself: its help or its version (PROG
// --version, PROG -h, PROG SUBCOMMAND --help), or, for a package manager, a
// listing (pip list, pip show requests, apt list --installed, brew info
// wget). Anything else is a command that does what its program does. The
// words are static words as written; a word the shell computes at run
// time never equals one of these.
func AsksOnly(argv []string) bool {
	if len(argv) < 2 {
		return false
	}
	args := argv[1:]
	switch {
	case len(args) == 1 && (helpFlag(args[0]) || versionFlag(args[0])):
		return true
	case len(args) == 2 && subcommandWord(args[0]) && helpFlag(args[1]):
		return true
	}
	name := argv[0]
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return listing(name, args[0])
}

// subcommandWord reports whether w reads as a subcommand: a lowercase
// word of letters, digits, '-' and '_', starting with a letter.
func subcommandWord(w string) bool {
	if w == "" || len(w) > 40 || w[0] < 'a' || w[0] > 'z' {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// Verb is the card's plain verb for a capability.
func Verb(c classify.Capability) string {
	switch c {
	case classify.MailSend:
		return "send mail"
	case classify.FSWrite:
		return "write"
	case classify.NetworkHTTP:
		return "connect to the network"
	case classify.LLMOnline:
		return "ask an online model"
	case classify.LLMLocal:
		return "ask a local model"
	case classify.ChannelOut:
		return "send a message"
	case classify.ChannelIn:
		return "receive messages"
	case classify.FSRead:
		return "read"
	case classify.MailRead:
		return "read mail"
	case classify.CalendarRead:
		return "read the calendar"
	case classify.TimeRead:
		return "read the clock"
	case classify.ParseLocal:
		return "parse"
	}
	return "run"
}

// SortAccesses returns accesses ordered for the card, the most dangerous
// first (Rank), equals in their order, without repeats.
func SortAccesses(acc []Access) []Access {
	out := make([]Access, 0, len(acc))
	for _, a := range acc {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b Access) int { return Rank(b.Capability) - Rank(a.Capability) })
	return out
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
		return "", "", fmt.Errorf("malformed callback: unknown answer %q", Printable(verb))
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

// Printable returns s as it may be shown to a person: every character
// that could move the cursor, restyle or clear a terminal, reorder or hide
// text, or break a line is replaced by a visible escape, so that what is
// shown is what the text holds. It is the one escape of mnemos's human
// output: the approval card, the listings of approvals and of the audit
// log, policy check and explain, and the text sent to channels.
//
// Escaped are the C0 controls and DEL (newline as \n, carriage return as
// \r, tab as \t, the others as \x1b), the C1 controls U+0080–U+009F,
// format characters (bidirectional embeddings, overrides and isolates
// U+202A–U+202E and U+2066–U+2069, the marks U+200E, U+200F and U+061C,
// the zero-width characters U+200B–U+200D, U+2060 and U+FEFF, and the rest
// of Unicode's Cf category) and the line and paragraph separators U+2028
// and U+2029 (all as \u202e, or \U000e0001 beyond the Basic Multilingual
// Plane), and each byte of invalid UTF-8 (as \xff). Everything else,
// backslashes included, is kept as it is.
func Printable(s string) string {
	i := firstHazard(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !hazard(r):
			b.WriteString(s[i : i+n])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// firstHazard returns the index of the first byte of s that Printable
// escapes, or -1 when there is none.
func firstHazard(s string) int {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if hazard(rune(c)) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n <= 1) || hazard(r) {
			return i
		}
		i += n
	}
	return -1
}

// hazard reports whether Printable escapes the character r.
func hazard(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true // C0 controls and DEL
	case r < 0x80:
		return false
	case r <= 0x9f:
		return true // C1 controls
	case r == '\u2028' || r == '\u2029':
		return true // line and paragraph separators
	}
	return unicode.Is(unicode.Cf, r)
}
