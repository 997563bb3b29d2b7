package approvals

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mnemos-dev/mnemos/policy"
)

// hazards holds one character (or byte sequence) of each kind Printable
// escapes, and how it must be shown. Each is tested alone: mixed with a
// newline, a hazard would be escaped even by a check that misses it.
var hazards = []struct{ name, raw, shown string }{
	{"ESC", "\x1b", `\x1b`},
	{"NUL", "\x00", `\x00`},
	{"BEL", "\a", `\x07`},
	{"BS", "\b", `\x08`},
	{"TAB", "\t", `\t`},
	{"LF", "\n", `\n`},
	{"VT", "\v", `\x0b`},
	{"FF", "\f", `\x0c`},
	{"CR", "\r", `\r`},
	{"SO", "\x0e", `\x0e`},
	{"US", "\x1f", `\x1f`},
	{"DEL", "\x7f", `\x7f`},
	{"C1 PAD", "\u0080", `\u0080`},
	{"C1 NEL", "\u0085", `\u0085`},
	{"C1 CSI", "\u009b", `\u009b`},
	{"C1 OSC", "\u009d", `\u009d`},
	{"C1 APC", "\u009f", `\u009f`},
	{"LRE", "\u202a", `\u202a`},
	{"RLE", "\u202b", `\u202b`},
	{"PDF", "\u202c", `\u202c`},
	{"LRO", "\u202d", `\u202d`},
	{"RLO", "\u202e", `\u202e`},
	{"LRI", "\u2066", `\u2066`},
	{"RLI", "\u2067", `\u2067`},
	{"FSI", "\u2068", `\u2068`},
	{"PDI", "\u2069", `\u2069`},
	{"LRM", "\u200e", `\u200e`},
	{"RLM", "\u200f", `\u200f`},
	{"ALM", "\u061c", `\u061c`},
	{"ZWSP", "\u200b", `\u200b`},
	{"ZWNJ", "\u200c", `\u200c`},
	{"ZWJ", "\u200d", `\u200d`},
	{"WJ", "\u2060", `\u2060`},
	{"BOM", "\ufeff", `\ufeff`},
	{"soft hyphen", "\u00ad", `\u00ad`},
	{"line separator", "\u2028", `\u2028`},
	{"paragraph separator", "\u2029", `\u2029`},
	{"tag character", "\U000e0041", `\U000e0041`},
	{"invalid byte", "\xff", `\xff`},
	{"lone continuation byte", "\x80", `\x80`},
	{"truncated sequence", "\xe2\x80", `\xe2\x80`},
	{"overlong slash", "\xc0\xaf", `\xc0\xaf`},
	{"encoded surrogate", "\xed\xa0\x80", `\xed\xa0\x80`},
}

// rawHazard reports whether s still holds a hazard unescaped. It is
// written apart from the product's check, so that a fault in one is not
// copied into the other.
func rawHazard(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, h := range hazards {
		if utf8.ValidString(h.raw) && strings.Contains(s, h.raw) {
			return true
		}
	}
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r <= 0x9f) })
}

func TestSecurityPrintableEscapesEachHazardAlone(t *testing.T) {
	for _, h := range hazards {
		for _, tc := range []struct{ in, want string }{
			{h.raw, h.shown},
			{"ls" + h.raw, "ls" + h.shown},
			{h.raw + "ls", h.shown + "ls"},
			{"rm -rf /tmp/x" + h.raw + "txt.exe", "rm -rf /tmp/x" + h.shown + "txt.exe"},
			{"é" + h.raw + "日本", "é" + h.shown + "日本"},
		} {
			if got := Printable(tc.in); got != tc.want {
				t.Errorf("%s: Printable(%q) = %q, want %q", h.name, tc.in, got, tc.want)
			}
		}
	}
}

// Every C0 and C1 control and DEL is escaped; every other character below
// U+00A0 is kept.
func TestSecurityPrintableEscapesEveryControl(t *testing.T) {
	for r := rune(0); r < 0xa0; r++ {
		s := string(r)
		got := Printable(s)
		control := r < 0x20 || r >= 0x7f
		if control && (got == s || rawHazard(got)) {
			t.Errorf("U+%04X shown as %q", r, got)
		}
		if !control && got != s {
			t.Errorf("U+%04X (printable) shown as %q", r, got)
		}
	}
	for _, r := range []rune{0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e,
		0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x2066, 0x2067, 0x2068, 0x2069, 0x206a, 0x206f, 0x061c, 0xfeff, 0xfff9, 0xfffb, 0x180e} {
		if got, want := Printable(string(r)), fmt.Sprintf(`\u%04x`, r); got != want {
			t.Errorf("U+%04X shown as %q, want %q", r, got, want)
		}
	}
}

// What needs no escape is returned as it is, backslashes included.
func TestPrintableKeepsPlainText(t *testing.T) {
	for _, s := range []string{"", "git status", `grep 'a\.b' x`, `C:\new`, "naïve café 日本語 😀", "\ufffd", "a\u00a0b", "تجربة", "שלום"} {
		if got := Printable(s); got != s {
			t.Errorf("Printable(%q) = %q", s, got)
		}
	}
}

// cardFields names each field of a card a person reads and sets it.
var cardFields = []struct {
	name string
	set  func(*Card, string)
}{
	{"verb", func(c *Card, v string) { c.ActionVerb = v }},
	{"target", func(c *Card, v string) { c.TargetSummary = v }},
	{"class", func(c *Card, v string) { c.CapabilityClass = v }},
	{"reversibility", func(c *Card, v string) { c.Reversibility = v }},
	{"territory", func(c *Card, v string) { c.Territory = v }},
}

// TestSecurityCardEscapesEachHazardInEachField puts each hazard, alone,
// in each field of the card, in each form: the card keeps its number of
// lines, holds no raw hazard, and shows the hazard escaped.
func TestSecurityCardEscapesEachHazardInEachField(t *testing.T) {
	for _, f := range cardFields {
		for _, h := range hazards {
			for rec, lines := range map[int]int{0: 3, MediumFrom: 2, ShortFrom: 1} {
				c := Card{ActionVerb: "write", TargetSummary: "touch notes.txt", CapabilityClass: "fs:write:/w/notes.txt", Recurrence: rec, Token: "tok"}
				f.set(&c, "x"+h.raw+"y")
				got := RenderCard(c)
				if len(got) != lines {
					t.Errorf("%s in %s, recurrence %d: %d lines %q", h.name, f.name, rec, len(got), got)
				}
				joined := strings.Join(got, "|")
				if rawHazard(joined) {
					t.Errorf("%s in %s, recurrence %d: raw in %q", h.name, f.name, rec, joined)
				}
				if !strings.Contains(strings.ToLower(joined), "x"+strings.ToLower(h.shown)+"y") {
					t.Errorf("%s in %s, recurrence %d: %q not shown escaped in %q", h.name, f.name, rec, h.shown, joined)
				}
			}
		}
	}
}

// TestSecurityChannelMessageEscapesEachHazard: every text of the message
// a channel receives is escaped, each hazard alone, as the card is.
func TestSecurityChannelMessageEscapesEachHazard(t *testing.T) {
	bodies := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- b
	}))
	defer srv.Close()
	ch := policy.Channel{Name: "hook", Webhook: srv.URL, Timeout: 5 * time.Second}
	fields := []struct {
		name string
		set  func(*Message, string)
		get  func(Message) string
	}{
		{"card", func(m *Message, v string) { m.Card[1] = v }, func(m Message) string { return m.Card[1] }},
		{"argv", func(m *Message, v string) { m.Argv[1] = v }, func(m Message) string { return m.Argv[1] }},
		{"cwd", func(m *Message, v string) { m.Cwd = v }, func(m Message) string { return m.Cwd }},
		{"class", func(m *Message, v string) { m.CapabilityClass = v }, func(m Message) string { return m.CapabilityClass }},
		{"reversibility", func(m *Message, v string) { m.Reversibility = v }, func(m Message) string { return m.Reversibility }},
		{"channel", func(m *Message, v string) { m.Requester.Channel = v }, func(m Message) string { return m.Requester.Channel }},
		{"sender", func(m *Message, v string) { m.Requester.Sender = v }, func(m Message) string { return m.Requester.Sender }},
		{"answer", func(m *Message, v string) { m.Answer = v }, func(m Message) string { return m.Answer }},
	}
	for _, f := range fields {
		for _, h := range hazards {
			m := testMessage()
			f.set(&m, "x"+h.raw+"y")
			if d := (Deliverer{}).Deliver(context.Background(), []policy.Channel{ch}, m); !d[0].OK() {
				t.Fatalf("delivery: %s", d[0].Err)
			}
			var got Message
			if err := json.Unmarshal(<-bodies, &got); err != nil {
				t.Fatal(err)
			}
			if v := f.get(got); v != "x"+h.shown+"y" {
				t.Errorf("%s in %s: delivered %q, want %q", h.name, f.name, v, "x"+h.shown+"y")
			}
		}
	}
}
