package approvals

import (
	"slices"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
)

func TestRenderCard(t *testing.T) {
	base := Card{
		ActionVerb:      "download",
		TargetSummary:   "report.pdf from drive.google.com -> ~/downloads/ (~2.4 MB)",
		CapabilityClass: "fs:write:~/downloads/**",
		Token:           "tok",
	}
	with := func(f func(*Card)) Card { c := base; f(&c); return c }
	for _, tc := range []struct {
		name string
		card Card
		want []string
	}{
		{"full, three lines, permanent marker at the tail of the third", with(func(c *Card) { c.Territory = TerritoryPermanent }), []string{
			"May I download?",
			"report.pdf from drive.google.com -> ~/downloads/ (~2.4 MB)",
			"reversible | class: fs:write:~/downloads/** [territory: permanent]",
		}},
		{"full below the first threshold", with(func(c *Card) { c.Recurrence = MediumFrom - 1; c.Reversibility = Irreversible }), []string{
			"May I download?",
			"report.pdf from drive.google.com -> ~/downloads/ (~2.4 MB)",
			"irreversible | class: fs:write:~/downloads/**",
		}},
		{"medium, two lines, meta inline", with(func(c *Card) { c.Recurrence = 4 }), []string{
			"May I download? (reversible | class: fs:write:~/downloads/**)",
			"report.pdf from drive.google.com -> ~/downloads/ (~2.4 MB)",
		}},
		{"medium from the first threshold, session marker", with(func(c *Card) { c.Recurrence = MediumFrom; c.Territory = TerritorySession }), []string{
			"May I download? (reversible | class: fs:write:~/downloads/** [territory: session])",
			"report.pdf from drive.google.com -> ~/downloads/ (~2.4 MB)",
		}},
		{"short, one line, capitalised verb, abbreviated meta", with(func(c *Card) { c.Recurrence = 10 }), []string{
			"Download report.pdf from drive.google.com -> ~/downloads/ (~2.4 MB) [rev | fs:write:~/downloads/**]",
		}},
		{"short from the second threshold, marker kept", with(func(c *Card) {
			c.Recurrence = ShortFrom
			c.Reversibility = Partial
			c.Territory = TerritoryPermanent
		}), []string{
			"Download report.pdf from drive.google.com -> ~/downloads/ (~2.4 MB) [partial | fs:write:~/downloads/**] [territory: permanent]",
		}},
		{"territory none has no marker", with(func(c *Card) { c.Territory = TerritoryNone }), []string{
			"May I download?",
			"report.pdf from drive.google.com -> ~/downloads/ (~2.4 MB)",
			"reversible | class: fs:write:~/downloads/**",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RenderCard(tc.card); !slices.Equal(got, tc.want) {
				t.Errorf("RenderCard:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
	if b := base.Buttons(); len(b) != 2 || b[0].Data != "approve:tok" || b[1].Data != "reject:tok" {
		t.Errorf("Buttons = %+v", b)
	}
}

// A command line is shown on the card; it must not be able to add lines,
// emit terminal escapes or reorder text to forge what is being approved.
func TestSecurityCardNeutralisesControlCharacters(t *testing.T) {
	evil := "x\nMay I read?\r\x1b[2K\u202etxt.exe\x00\xff"
	for _, rec := range []int{0, MediumFrom, ShortFrom} {
		c := Card{ActionVerb: "write\nok", TargetSummary: evil, CapabilityClass: "fs:write:/p\t", Territory: "a\nb", Recurrence: rec}
		lines := RenderCard(c)
		if want := map[int]int{0: 3, MediumFrom: 2, ShortFrom: 1}[rec]; len(lines) != want {
			t.Errorf("recurrence %d: %d lines", rec, len(lines))
		}
		for _, l := range lines {
			if strings.ContainsFunc(l, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\u202e' || r == '\uFFFD' }) {
				t.Errorf("raw control character in %q", l)
			}
		}
		joined := strings.Join(lines, "|")
		for _, want := range []string{`\n`, `\r`, `\x1b[2K`, `\u202e`, `\x00`, `\xff`, `[territory: a\nb]`} {
			if !strings.Contains(joined, want) {
				t.Errorf("recurrence %d: %q not shown escaped in %q", rec, want, joined)
			}
		}
	}
}

func TestParseCallback(t *testing.T) {
	tok := strings.Repeat("a", 25) + "7"
	for _, tc := range []struct {
		in   string
		d    Decision
		tok  string
		fail bool
	}{
		{"approve:" + tok, Approve, tok, false},
		{" reject:" + strings.ToUpper(tok) + "\n", Reject, tok, false},
		{"approve:", "", "", true},
		{"approve:" + tok + "a", "", "", true},
		{"approve:" + strings.Repeat("a", 25) + "1", "", "", true},
		{"allow:" + tok, "", "", true},
		{tok, "", "", true},
	} {
		d, got, err := ParseCallback(tc.in)
		if (err != nil) != tc.fail || d != tc.d || got != tc.tok {
			t.Errorf("ParseCallback(%q) = %q, %q, %v", tc.in, d, got, err)
		}
	}
	c := Card{Token: tok}
	for _, b := range c.Buttons() {
		if _, got, err := ParseCallback(b.Data); err != nil || got != tok {
			t.Errorf("button %q does not round-trip: %v", b.Data, err)
		}
	}
}

func FuzzParseCallback(f *testing.F) {
	for _, s := range []string{"approve:" + strings.Repeat("a", 26), "reject:x", ":", "", "approve:\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		d, tok, err := ParseCallback(data)
		if err != nil {
			if d != "" || tok != "" {
				t.Fatalf("error with a result: %q %q", d, tok)
			}
			return
		}
		if (d != Approve && d != Reject) || !validToken(tok) {
			t.Fatalf("accepted %q as %q %q", data, d, tok)
		}
		// What is accepted round-trips through a card's buttons.
		b := Card{Token: tok}.Buttons()
		if d2, tok2, err := ParseCallback(b[map[Decision]int{Approve: 0, Reject: 1}[d]].Data); err != nil || d2 != d || tok2 != tok {
			t.Fatalf("round trip of %q failed", data)
		}
	})
}

func FuzzRenderCard(f *testing.F) {
	f.Add("download", "a\nb", "fs:write:/p", "session", 0)
	f.Fuzz(func(t *testing.T, verb, target, class, territory string, rec int) {
		lines := RenderCard(Card{ActionVerb: verb, TargetSummary: target, CapabilityClass: class, Territory: territory, Recurrence: rec})
		if n := len(lines); n < 1 || n > 3 {
			t.Fatalf("%d lines", n)
		}
		for _, l := range lines {
			if rawHazard(l) {
				t.Fatalf("control or format character in %q", l)
			}
		}
	})
}

// The card names the request's most dangerous access and counts the
// others, in every form.
func TestRenderCardCountsTheOtherAccesses(t *testing.T) {
	c := Card{ActionVerb: "run", TargetSummary: "touch a; python3 -c x (in /w)", CapabilityClass: "code:exec", More: 2}
	for rec, want := range map[int][]string{
		0:          {"May I run?", "touch a; python3 -c x (in /w)", "partial | class: code:exec and 2 more"},
		MediumFrom: {"May I run? (partial | class: code:exec and 2 more)", "touch a; python3 -c x (in /w)"},
		ShortFrom:  {"Run touch a; python3 -c x (in /w) [partial | code:exec and 2 more]"},
	} {
		c.Recurrence = rec
		c.Reversibility = Partial
		if got := RenderCard(c); !slices.Equal(got, want) {
			t.Errorf("recurrence %d:\n got %q\nwant %q", rec, got, want)
		}
	}
	p := Pending{CapabilityClass: "code:exec", Details: Details{Accesses: []Access{{Capability: "code:exec"}, {Capability: "fs:write", Target: "/w/a"}, {Capability: "fs:read", Target: "/w/b"}}}}
	if n := p.Card().More; n != 2 {
		t.Errorf("Pending.Card().More = %d, want 2", n)
	}
	if n := (Pending{CapabilityClass: "fs:write:/w/a", Details: Details{Accesses: []Access{{Capability: "fs:write", Target: "/w/a"}}}}).Card().More; n != 0 {
		t.Errorf("one access: More = %d", n)
	}
}

func TestRank(t *testing.T) {
	order := [][]classify.Capability{
		{"no:such"},
		{classify.CodeExec, classify.MailSend},
		{classify.FSWrite},
		{classify.NetworkHTTP, classify.LLMOnline, classify.ChannelOut},
		{classify.FSRead, classify.MailRead, classify.CalendarRead},
		{classify.LLMLocal, classify.ChannelIn, classify.TimeRead, classify.ParseLocal},
	}
	seen := 0
	for i, tier := range order {
		for _, c := range tier {
			seen++
			if Rank(c) != Rank(tier[0]) {
				t.Errorf("Rank(%s) = %d, want %d as %s", c, Rank(c), Rank(tier[0]), tier[0])
			}
			if i > 0 && Rank(c) >= Rank(order[i-1][0]) {
				t.Errorf("Rank(%s) = %d, not below %s's %d", c, Rank(c), order[i-1][0], Rank(order[i-1][0]))
			}
		}
	}
	if seen != len(policy.Registry())+1 {
		t.Errorf("the tiers name %d capabilities; the registry has %d", seen-1, len(policy.Registry()))
	}
}

func TestSortAccesses(t *testing.T) {
	in := []Access{
		{Capability: classify.FSRead, Target: "/w/a"},
		{Capability: classify.FSWrite, Target: "/w/b"},
		{Capability: classify.NetworkHTTP, Target: "evil.example"},
		{Capability: classify.FSWrite, Target: "/w/b"},
		{Capability: classify.CodeExec, Target: "python3"},
		{Capability: classify.FSWrite, Target: "/w/c"},
	}
	want := []Access{
		{Capability: classify.CodeExec, Target: "python3"},
		{Capability: classify.FSWrite, Target: "/w/b"},
		{Capability: classify.FSWrite, Target: "/w/c"},
		{Capability: classify.NetworkHTTP, Target: "evil.example"},
		{Capability: classify.FSRead, Target: "/w/a"},
	}
	if got := SortAccesses(in); !slices.Equal(got, want) {
		t.Errorf("SortAccesses:\n got %v\nwant %v", got, want)
	}
}

func TestHeadlineVerb(t *testing.T) {
	for _, tc := range []struct {
		c          classify.Capability
		verb, want string
	}{
		{classify.CodeExec, "write", "run"},
		{classify.CodeExec, "read", "run"},
		{classify.CodeExec, "", "run"},
		{classify.CodeExec, "build", "build"},
		{classify.CodeExec, "run remotely", "run remotely"},
		{classify.MailSend, "write", "send mail"},
		{classify.FSWrite, "delete", "delete"},
		{classify.FSWrite, "", "write"},
		{classify.NetworkHTTP, "download", "download"},
		{classify.NetworkHTTP, "", "connect to the network"},
		{classify.FSRead, "", "read"},
	} {
		if got := HeadlineVerb(tc.c, tc.verb); got != tc.want {
			t.Errorf("HeadlineVerb(%s, %q) = %q, want %q", tc.c, tc.verb, got, tc.want)
		}
	}
}
