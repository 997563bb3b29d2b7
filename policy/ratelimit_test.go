package policy

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/classify"
)

const rateLimitSrc = `rate_limits:
  - capability: network:http
    capacity: 20
    refill_per_minute: 10
  - {capability: mail:send, capacity: 3, refill_per_minute: 0.25, over: deny}
  - {capability: llm:online, capacity: 1000000, refill_per_minute: 1e3, over: ask}
profiles:
  - name: kids
    channel: telegram
    sender: bob
    rate_limits:
      - {capability: network:http, capacity: 2, refill_per_minute: 0.5, over: deny}
  - {channel: telegram, sender: "*", level: full}
`

func TestRateLimitsParse(t *testing.T) {
	p := mustParse(t, rateLimitSrc)
	want := []RateLimit{
		{Capability: classify.NetworkHTTP, Capacity: 20, RefillPerMinute: 10, Over: Ask, Pos: Pos{"p.yaml", 2, 5}},
		{Capability: classify.MailSend, Capacity: 3, RefillPerMinute: 0.25, Over: Deny, Pos: Pos{"p.yaml", 5, 5}},
		{Capability: classify.LLMOnline, Capacity: 1000000, RefillPerMinute: 1000, Over: Ask, Pos: Pos{"p.yaml", 6, 5}},
	}
	if len(p.RateLimits) != len(want) {
		t.Fatalf("rate limits %+v", p.RateLimits)
	}
	for i, w := range want {
		if got := canonicalLimits(p.RateLimits[i : i+1])[0]; got != canonicalLimits([]RateLimit{w})[0] || p.RateLimits[i].Pos != w.Pos {
			t.Errorf("limit %d = %+v, want %+v", i, p.RateLimits[i], w)
		}
	}
	if pr := p.Profiles[0]; len(pr.RateLimits) != 1 || pr.RateLimits[0].Profile != "kids" || pr.RateLimits[0].Capacity != 2 || pr.RateLimits[0].Pos.Line != 12 {
		t.Errorf("profile limits %+v", pr.RateLimits)
	}
	if s := p.RateLimits[1].String(); s != "mail:send: 3 tokens, 0.25 per minute, then deny" {
		t.Errorf("String = %q", s)
	}
	// A profile may set nothing but rate limits.
	q := mustParse(t, "profiles:\n  - {channel: ci, sender: \"*\", rate_limits: [{capability: fs:write, capacity: 50, refill_per_minute: 5}]}\n")
	if rl, ok := q.RateLimitFor(classify.FSWrite, "ci", "x"); !ok || rl.Capacity != 50 || rl.Profile != "ci/*" {
		t.Errorf("profile-only limit: %+v %v", rl, ok)
	}
}

// TestRateLimitFor: a profile's limit replaces the file's on its
// capability for its identities only; the file's other limits still apply.
func TestRateLimitFor(t *testing.T) {
	p := mustParse(t, rateLimitSrc)
	cases := []struct {
		c               classify.Capability
		channel, sender string
		ok              bool
		capacity        int
		refill          float64
		over            Outcome
		profile         string
	}{
		{classify.NetworkHTTP, "cli", "ann", true, 20, 10, Ask, ""},
		{classify.NetworkHTTP, "telegram", "bob", true, 2, 0.5, Deny, "kids"},
		{classify.NetworkHTTP, "telegram", "ann", true, 20, 10, Ask, ""}, // profile telegram/* sets no limit
		{classify.MailSend, "telegram", "bob", true, 3, 0.25, Deny, ""},  // the file's, under bob's profile
		{classify.LLMOnline, "cli", "ann", true, 1000000, 1000, Ask, ""},
		{classify.FSWrite, "cli", "ann", false, 0, 0, Deny, ""},
		{classify.FSWrite, "telegram", "bob", false, 0, 0, Deny, ""},
	}
	for _, tc := range cases {
		rl, ok := p.RateLimitFor(tc.c, tc.channel, tc.sender)
		if ok != tc.ok || ok && (rl.Capability != tc.c || rl.Capacity != tc.capacity || rl.RefillPerMinute != tc.refill || rl.Over != tc.over || rl.Profile != tc.profile) {
			t.Errorf("RateLimitFor(%s, %s, %s) = %+v, %v", tc.c, tc.channel, tc.sender, rl, ok)
		}
	}
	var got []string
	for _, rl := range p.RateLimitsFor("telegram", "bob") {
		got = append(got, rl.String())
	}
	want := "network:http: 2 tokens, 0.5 per minute, then deny; llm:online: 1000000 tokens, 1000 per minute, then ask; mail:send: 3 tokens, 0.25 per minute, then deny"
	if strings.Join(got, "; ") != want {
		t.Errorf("RateLimitsFor = %s", strings.Join(got, "; "))
	}
	// A limit built by hand never allows: over allow counts as ask.
	h := &Policy{RateLimits: []RateLimit{{Capability: classify.NetworkHTTP, Capacity: 1, RefillPerMinute: 1, Over: Allow}}}
	if rl, _ := h.RateLimitFor(classify.NetworkHTTP, "cli", "ann"); rl.Over != Ask {
		t.Errorf("over allow: %s", rl.Over)
	}
}

func TestRateLimitsFormat(t *testing.T) {
	p := mustParse(t, rateLimitSrc)
	roundTrip(t, p)
	want := `rate_limits:
  - capability: "network:http"
    capacity: 20
    refill_per_minute: 10
    over: ask
  - capability: "mail:send"
    capacity: 3
    refill_per_minute: 0.25
    over: deny
  - capability: "llm:online"
    capacity: 1000000
    refill_per_minute: 1000
    over: ask
profiles:
  - name: "kids"
    channel: "telegram"
    sender: "bob"
    rate_limits:
      - capability: "network:http"
        capacity: 2
        refill_per_minute: 0.5
        over: deny
  - name: "telegram/*"
    channel: "telegram"
    sender: "*"
    level: full
`
	if got := string(Format(p)); got != want {
		t.Errorf("Format:\n%s\nwant\n%s", got, want)
	}
	for _, src := range []string{
		"rate_limits: []\n",
		"rate_limits:\n",
		"rate_limits: [{capability: time:read, capacity: 1, refill_per_minute: 0.000001}]\n",
		"rate_limits: [{capability: time:read, capacity: 1, refill_per_minute: 1000000}]\n",
		"profiles:\n  - {channel: a, sender: b, rules: []}\n",
		"profiles:\n  - {channel: a, sender: b, rate_limits: []}\n",
	} {
		roundTrip(t, mustParse(t, src))
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		roundTrip(t, mustParse(t, randRateLimitPolicy(r)))
	}
}

func TestLintReportsEveryRateLimitError(t *testing.T) {
	src := `rate_limits:
  - {capability: network:http, capacity: 0, refill_per_minute: 10}
  - {capability: fs:write, capacity: 5, refill_per_minute: 1, over: allow}
  - {capability: network:http, capacity: 5, refill_per_minute: 1}
  - {capability: fs:write, capacity: 5, refill_per_minute: 1}
  - {capability: fs:write, capacity: 6, refill_per_minute: 1}
profiles:
  - channel: cli
    sender: ci
    rate_limits:
      - {capability: net, capacity: 5, refill_per_minute: 1}
`
	var got []string
	for _, d := range Lint("p.yaml", []byte(src)) {
		got = append(got, d.String())
	}
	want := []string{
		`p.yaml:2:42: capacity 0 must be at least 1; to refuse a capability outright, write a deny rule`,
		`p.yaml:3:69: over "allow" must be ask or deny: what a command gets once the limit is reached`,
		`p.yaml:6:18: duplicate rate limit for fs:write (first at line 5); one limit per capability`,
		`p.yaml:11:22: capability "net" is not in the registry (see ` + "`mnemos policy registry`" + `)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestMergeRateLimits: across layers each field of a limit is the
// strictest any layer gives the identity, and a limit one layer sets
// applies.
func TestMergeRateLimits(t *testing.T) {
	system := mustParseAs(t, "system.yaml", `rate_limits:
  - {capability: mail:send, capacity: 5, refill_per_minute: 1, over: deny}
`)
	user := mustParseAs(t, "user.yaml", `rate_limits:
  - {capability: network:http, capacity: 20, refill_per_minute: 10}
  - {capability: mail:send, capacity: 10, refill_per_minute: 0.5}
profiles:
  - name: bob
    channel: telegram
    sender: bob
    rate_limits:
      - {capability: network:http, capacity: 4, refill_per_minute: 30}
`)
	project := mustParseAs(t, "project.yaml", `rate_limits:
  - {capability: network:http, capacity: 50, refill_per_minute: 5, over: deny}
  - {capability: fs:write, capacity: 100, refill_per_minute: 60}
  - {capability: mail:send, capacity: 100, refill_per_minute: 100, over: ask}
`)
	m, _ := Merge(system, user, project)
	cases := []struct {
		c               classify.Capability
		channel, sender string
		ok              bool
		capacity        int
		refill          float64
		over            Outcome
		from            Pos
	}{
		{classify.NetworkHTTP, "cli", "ann", true, 20, 5, Deny, Pos{"user.yaml", 2, 5}},
		{classify.NetworkHTTP, "telegram", "bob", true, 4, 5, Deny, Pos{"user.yaml", 9, 9}},
		{classify.FSWrite, "cli", "ann", true, 100, 60, Ask, Pos{"project.yaml", 3, 5}},
		{classify.MailSend, "cli", "ann", true, 5, 0.5, Deny, Pos{"system.yaml", 2, 5}},
		{classify.CodeExec, "cli", "ann", false, 0, 0, Deny, Pos{}},
	}
	for _, tc := range cases {
		rl, ok := m.RateLimitFor(tc.c, tc.channel, tc.sender)
		if ok != tc.ok || ok && (rl.Capacity != tc.capacity || rl.RefillPerMinute != tc.refill || rl.Over != tc.over || rl.Pos != tc.from) {
			t.Errorf("RateLimitFor(%s, %s, %s) = %+v, %v", tc.c, tc.channel, tc.sender, rl, ok)
		}
	}
	if rl, _ := m.RateLimitFor(classify.MailSend, "cli", "ann"); rl.Layer != LayerSystem {
		t.Errorf("layer %q", rl.Layer)
	}
	// The stack's section, for display: the top-level limits combined.
	var got []string
	for _, rl := range m.RateLimits {
		got = append(got, fmt.Sprintf("%s (%s)", rl, rl.Layer))
	}
	want := "mail:send: 5 tokens, 0.5 per minute, then deny (system); network:http: 20 tokens, 5 per minute, then deny (user); fs:write: 100 tokens, 60 per minute, then ask (project)"
	if strings.Join(got, "; ") != want {
		t.Errorf("section %s", strings.Join(got, "; "))
	}
	if len(system.RateLimits) != 1 || system.RateLimits[0].Layer != "" || user.Profiles[0].RateLimits[0].RefillPerMinute != 30 {
		t.Error("Merge changed its inputs")
	}
}

// TestLintLayeredRateLimits pins the warnings for limits a user or
// project file tries to loosen, positioned at the value that loosens.
func TestLintLayeredRateLimits(t *testing.T) {
	system := mustParseAs(t, "system.yaml", `rate_limits:
  - {capability: mail:send, capacity: 5, refill_per_minute: 1, over: deny}
profiles:
  - channel: telegram
    sender: "*"
    rate_limits: [{capability: network:http, capacity: 3, refill_per_minute: 1}]
`)
	user := mustParseAs(t, "user.yaml", `rate_limits:
  - {capability: network:http, capacity: 20, refill_per_minute: 10, over: deny}
`)
	src := `rate_limits:
  - capability: network:http
    capacity: 50
    refill_per_minute: 30
    over: ask
  - {capability: mail:send, capacity: 1, refill_per_minute: 0.1}
  - {capability: fs:write, capacity: 500, refill_per_minute: 600}
profiles:
  - channel: telegram
    sender: bob
    rate_limits:
      - {capability: network:http, capacity: 10, refill_per_minute: 0.5, over: deny}
      - {capability: mail:send, capacity: 9, refill_per_minute: 2, over: ask}
`
	lint := func(layer Layer, system, user *Policy, name string) string {
		var got []string
		for _, d := range LintLayered(layer, system, user, name, []byte(src)) {
			got = append(got, d.String())
		}
		return strings.Join(got, "\n")
	}
	want := strings.Join([]string{
		`project.yaml:3:15: warning: rate limit for network:http: capacity 50 is larger than 20 in the layers above (system.yaml + user.yaml); the smaller applies`,
		`project.yaml:4:24: warning: rate limit for network:http: refill_per_minute 30 is faster than 10 in the layers above (system.yaml + user.yaml); the slower applies`,
		`project.yaml:5:11: warning: rate limit for network:http: over: ask is looser than over: deny in the layers above (system.yaml + user.yaml); deny applies`,
		`project.yaml:12:46: warning: profile "telegram/bob": rate limit for network:http: capacity 10 is larger than 3 in the layers above (system.yaml + user.yaml); the smaller applies`,
		`project.yaml:13:43: warning: profile "telegram/bob": rate limit for mail:send: capacity 9 is larger than 5 in the layers above (system.yaml + user.yaml); the smaller applies`,
		`project.yaml:13:65: warning: profile "telegram/bob": rate limit for mail:send: refill_per_minute 2 is faster than 1 in the layers above (system.yaml + user.yaml); the slower applies`,
		`project.yaml:13:74: warning: profile "telegram/bob": rate limit for mail:send: over: ask is looser than over: deny in the layers above (system.yaml + user.yaml); deny applies`,
	}, "\n")
	got := lint(LayerProject, system, user, "project.yaml")
	if got != want {
		t.Errorf("project:\ngot\n%s\nwant\n%s", got, want)
	}
	// As a user file under the system policy, only what the system writes
	// binds; with no system policy, a user file has nothing to loosen.
	want = strings.Join([]string{
		`user2.yaml:12:46: warning: profile "telegram/bob": rate limit for network:http: capacity 10 is larger than 3 in the system policy system.yaml; the smaller applies`,
		`user2.yaml:13:43: warning: profile "telegram/bob": rate limit for mail:send: capacity 9 is larger than 5 in the system policy system.yaml; the smaller applies`,
		`user2.yaml:13:65: warning: profile "telegram/bob": rate limit for mail:send: refill_per_minute 2 is faster than 1 in the system policy system.yaml; the slower applies`,
		`user2.yaml:13:74: warning: profile "telegram/bob": rate limit for mail:send: over: ask is looser than over: deny in the system policy system.yaml; deny applies`,
	}, "\n")
	if got := lint(LayerUser, system, nil, "user2.yaml"); got != want {
		t.Errorf("user:\ngot\n%s\nwant\n%s", got, want)
	}
	if got := lint(LayerUser, nil, nil, "user3.yaml"); got != "" {
		t.Errorf("user without system:\n%s", got)
	}
}

// TestSecurityRateLimitsNeverLoosen: on random stacks, adding a lower
// layer never removes a limit or loosens any field of one, for any
// identity and capability.
func TestSecurityRateLimitsNeverLoosen(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 2026))
	ids := [][2]string{{"cli", "ann"}, {"telegram", "bob"}, {"telegram", "ann"}, {"slack", "ci"}}
	looser := func(a, b RateLimit) bool { // b looser than a
		return b.Capacity > a.Capacity || b.RefillPerMinute > a.RefillPerMinute || b.Over.Restrictiveness() < a.Over.Restrictiveness()
	}
	n := 0
	for range 300 {
		system := mustParseAs(t, "system.yaml", randRateLimitPolicy(r))
		user := mustParseAs(t, "user.yaml", randRateLimitPolicy(r))
		project := mustParseAs(t, "project.yaml", randRateLimitPolicy(r))
		upper, _ := Merge(system, user, nil)
		full, _ := Merge(system, user, project)
		for _, id := range ids {
			for _, s := range Registry() {
				for _, pair := range [][2]*Policy{{system, upper}, {user, upper}, {upper, full}, {project, full}} {
					a, aok := pair[0].RateLimitFor(s.Name, id[0], id[1])
					b, bok := pair[1].RateLimitFor(s.Name, id[0], id[1])
					if aok && (!bok || looser(a, b)) {
						t.Fatalf("%s for %v: %+v (%v) loosened to %+v (%v)", s.Name, id, a, aok, b, bok)
					}
					if aok && b.Over != Ask && b.Over != Deny {
						t.Fatalf("over %s", b.Over)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d comparisons", n)
}

// randRateLimitPolicy is randPolicy with rate limits at the top and, when
// it has no profiles, in profiles of its own.
func randRateLimitPolicy(r *rand.Rand) string {
	caps := []classify.Capability{classify.NetworkHTTP, classify.FSWrite, classify.MailSend, classify.LLMOnline, classify.CodeExec}
	limits := func(indent string) string {
		var b strings.Builder
		seen := map[classify.Capability]bool{}
		for range r.IntN(4) {
			c := pick(r, caps)
			if seen[c] {
				continue
			}
			seen[c] = true
			fmt.Fprintf(&b, "%s- {capability: %s, capacity: %s, refill_per_minute: %s", indent, c,
				pick(r, []string{"1", "2", "5", "20", "1000000"}), pick(r, []string{"0.000001", "0.5", "1", "10", "1e2", "60.25"}))
			if o := pick(r, []string{"", "ask", "deny"}); o != "" {
				b.WriteString(", over: " + o)
			}
			b.WriteString("}\n")
		}
		return b.String()
	}
	src := randPolicy(r)
	if l := limits("  "); l != "" || r.IntN(4) == 0 {
		src += "rate_limits:\n" + l
	}
	if !strings.HasPrefix(src, "profiles:") && !strings.Contains(src, "\nprofiles:") && r.IntN(2) == 0 {
		src += "profiles:\n"
		for i, id := range [][2]string{{"telegram", "bob"}, {"telegram", "*"}, {"*", "ci"}} {
			if r.IntN(2) == 0 && i > 0 {
				continue
			}
			src += fmt.Sprintf("  - channel: %q\n    sender: %q\n    rate_limits:\n%s", id[0], id[1], limits("      "))
			if r.IntN(3) == 0 {
				src += "    level: " + pick(r, []string{"readonly", "supervised", "full"}) + "\n"
			}
		}
	}
	return src
}

func ExamplePolicy_RateLimitFor() {
	p, err := Parse("policy.yaml", []byte(`rate_limits:
  - {capability: network:http, capacity: 20, refill_per_minute: 10}
profiles:
  - channel: telegram
    sender: "*"
    rate_limits:
      - {capability: network:http, capacity: 5, refill_per_minute: 0.5, over: deny}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, id := range [][2]string{{"cli", "ann"}, {"telegram", "bob"}} {
		rl, _ := p.RateLimitFor(classify.NetworkHTTP, id[0], id[1])
		fmt.Printf("%s/%s: %s (line %d)\n", id[0], id[1], rl, rl.Pos.Line)
	}
	_, ok := p.RateLimitFor(classify.MailSend, "cli", "ann")
	fmt.Println("mail:send limited:", ok)
	// Output:
	// cli/ann: network:http: 20 tokens, 10 per minute, then ask (line 2)
	// telegram/bob: network:http: 5 tokens, 0.5 per minute, then deny (line 7)
	// mail:send limited: false
}
