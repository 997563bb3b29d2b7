package policy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// firstRule evaluates c against the rules and returns the matched rule's
// name ("" when none) and the outcome.
func firstRule(t *testing.T, p *Policy, in Input) (string, Outcome) {
	t.Helper()
	res, err := p.Evaluate(context.Background(), in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rule == nil {
		return "", res.Outcome
	}
	return res.Rule.Name, res.Outcome
}

func mustParse(t *testing.T, src string) *Policy {
	t.Helper()
	p, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	return p
}

func dyn(v string) shellparse.Word { return shellparse.Word{Value: v, Dynamic: true} }

// TestConditionOperators pins each operator on each kind of field: one
// rule per case, evaluated at full so the table does not interfere.
func TestConditionOperators(t *testing.T) {
	type tc struct {
		cond string
		c    shellparse.Command
		ctx  map[string]any
		want bool
	}
	ctx := map[string]any{"ticket": "ABC-12", "amount": 250, "ratio": 0.5, "flag": true,
		"metadata": map[string]any{"priority": 7, "tags": []any{"x"}, "owner": map[string]any{"team": "infra"}}}
	cases := []tc{
		{`command: {equals: git}`, cmd("/usr/bin/git", "status"), nil, true},
		{`command: {equals: git}`, cmd("gitk"), nil, false},
		{`command: {not_equals: git}`, cmd("ls"), nil, true},
		{`command: {not_equals: git}`, cmd("git"), nil, false},
		{`argv: {equals: "git push origin main"}`, cmd("git", "push", "origin", "main"), nil, true},
		{`argv: {starts_with: "git push"}`, cmd("git", "push", "-f"), nil, true},
		{`argv: {starts_with: "git push"}`, cmd("git", "pull"), nil, false},
		{`argv: {ends_with: "--force"}`, cmd("git", "push", "--force"), nil, true},
		{`argv: {matches: "git (push|pull).*"}`, cmd("git", "pull", "--rebase"), nil, true},
		{`argv: {matches: "push"}`, cmd("git", "push"), nil, false}, // anchored: the whole value
		{`argv: {matches: ".*push.*"}`, cmd("git", "push"), nil, true},
		{`argv.0: {equals: /usr/bin/git}`, cmd("/usr/bin/git", "log"), nil, true},
		{`argv.1: {in: [status, log, diff]}`, cmd("git", "log"), nil, true},
		{`argv.1: {in: [status, log, diff]}`, cmd("git", "push"), nil, false},
		{`argv.1: {not_in: [push, fetch]}`, cmd("git", "log"), nil, true},
		{`argv.5: {not_in: [push]}`, cmd("git", "log"), nil, false}, // absent field
		{`argv.5: {not_equals: x}`, cmd("git"), nil, false},         // absent field
		{`args: {equals: "-la /tmp"}`, cmd("ls", "-la", "/tmp"), nil, true},
		{`args: {equals: ""}`, cmd("ls"), nil, true},
		{`argc: {less_than: 3}`, cmd("ls", "-la"), nil, true},
		{`argc: {less_than: 2}`, cmd("ls", "-la"), nil, false},
		{`argc: {greater_than: 1.5}`, cmd("ls", "-la"), nil, true},
		{`argc: {equals: 2}`, cmd("ls", "-la"), nil, true},
		{`argc: {equals: 2.0}`, cmd("ls", "-la"), nil, true},
		{`argc: {in: [1, 3]}`, cmd("ls", "-la"), nil, false},
		{`capability: {equals: fs:read}`, cmd("cat", "/w/a"), nil, true},
		{`action: {equals: fs:read}`, cmd("cat", "/w/a"), nil, true},
		{`action: {starts_with: "fs:"}`, cmd("touch", "/w/a"), nil, true},
		{`capability: {in: [network:http, mail:send]}`, cmd("curl", "https://example.com/x"), nil, true},
		{`target: {equals: example.com}`, cmd("curl", "https://example.com/x"), nil, true},
		{`resource: {ends_with: ".pdf"}`, cmd("cat", "/w/a.pdf"), nil, true},
		{`target: {starts_with: /w/}`, cmd("cat", "b"), nil, true}, // relative, resolved against the cwd
		{`cwd: {equals: /w}`, cmd("ls"), nil, true},
		{`workspace: {equals: /w}`, cmd("ls"), nil, true},
		{`level: {equals: Full}`, cmd("ls"), nil, true},
		{`level: {in: [readonly, supervised]}`, cmd("ls"), nil, false},
		{`channel: {equals: telegram}`, cmd("ls"), nil, true},
		{`sender: {matches: "rob.*"}`, cmd("ls"), nil, true},
		{`session: {equals: ""}`, cmd("ls"), nil, false}, // no session: absent
		{`verb: {equals: delete}`, cmd("rm", "/w/a"), nil, true},
		{`reversibility: {equals: irreversible}`, cmd("rm", "/w/a"), nil, true},
		{`context.reason: {matches: ".*invoice.*"}`, cmd("ls"), nil, true},
		{`context.ticket: {starts_with: ABC-}`, cmd("ls"), ctx, true},
		{`context.amount: {less_than: 1000}`, cmd("ls"), ctx, true},
		{`context.amount: {greater_than: 1000}`, cmd("ls"), ctx, false},
		{`context.amount: {equals: "250"}`, cmd("ls"), ctx, true},
		{`context.ratio: {less_than: 0.75}`, cmd("ls"), ctx, true},
		{`context.ticket: {less_than: 5}`, cmd("ls"), ctx, false}, // not a number: no match
		{`context.flag: {equals: true}`, cmd("ls"), ctx, true},
		{`context.metadata.priority: {greater_than: 5}`, cmd("ls"), ctx, true},
		{`context.metadata.owner.team: {equals: infra}`, cmd("ls"), ctx, true},
		{`context.metadata.tags: {equals: x}`, cmd("ls"), ctx, false}, // a list is no scalar
		{`context.metadata.nothing.deeper: {not_equals: x}`, cmd("ls"), ctx, false},
		{`scope.max_size: {less_than: 1048576}`, cmd("ls"), nil, true},
		{`scope.command: {matches: ".*(rm -rf|drop table).*"}`, cmd("ls"), nil, false},
	}
	for _, c := range cases {
		for _, action := range []string{"allow", "deny"} {
			src := "rules:\n  - name: r\n    action: " + action + "\n    conditions: {" + c.cond + "}\n"
			p := mustParse(t, src)
			in := input(c.c, Full)
			in.Reason = "pay the invoice for March"
			in.Context = c.ctx
			in.Scope = map[string]any{"max_size": 4096}
			name, _ := firstRule(t, p, in)
			if got := name == "r"; got != c.want {
				t.Errorf("%s %s on %v: matched=%v, want %v", action, c.cond, c.c.Strings(), got, c.want)
			}
		}
	}
}

// TestSecurityConditionQuantifiers: an allow rule on target holds only
// when every approval-bearing access satisfies it; a deny rule fires when
// any does. A condition never lets an allow rule cover an access it does
// not describe.
func TestSecurityConditionQuantifiers(t *testing.T) {
	src := `rules:
  - {name: deny etc, action: deny, priority: 10, conditions: {target: {starts_with: /etc/}}}
  - {name: allow ws write, action: allow, conditions: {capability: {equals: fs:write}, target: {starts_with: /w/}}}
  - {name: allow ws any, action: allow, priority: -1, conditions: {target: {starts_with: /w/}}}
`
	p := mustParse(t, src)
	cases := []struct {
		c    shellparse.Command
		rule string
		want Outcome
	}{
		{cmd("cp", "/w/a", "/etc/passwd"), "deny etc", Deny},
		{cmd("cp", "/etc/hosts", "/w/b"), "deny etc", Deny},
		{cmd("touch", "/w/a"), "allow ws write", Allow},
		{cmd("touch", "/w/a", "/tmp/b"), "", Ask},
		// cp reads /w/a and writes /w/b: not every access is fs:write.
		{cmd("cp", "/w/a", "/w/b"), "allow ws any", Allow},
		{cmd("cp", "/w/a", "/tmp/b"), "", Ask},
		// echo's only access is parse:local, whose target is empty.
		{cmd("echo", "hi"), "", Allow},
		// A redirect adds an approval-bearing access; the parse:local one is
		// approval-free and does not count.
		{shellparse.Command{Argv: words("echo", "hi"), Redirects: []shellparse.Redirect{{Op: ">", Target: shellparse.Word{Value: "/w/out"}}}}, "allow ws write", Allow},
		{shellparse.Command{Argv: words("echo", "hi"), Redirects: []shellparse.Redirect{{Op: ">", Target: shellparse.Word{Value: "/etc/x"}}}}, "deny etc", Deny},
	}
	for _, tc := range cases {
		name, out := firstRule(t, p, input(tc.c, Supervised))
		if name != tc.rule || out != tc.want {
			t.Errorf("%s: rule %q %s, want %q %s", tc.c.String(), name, out, tc.rule, tc.want)
		}
	}
}

// TestSecurityDynamicValuesNeverSatisfyAllowConditions: a word computed
// at run time is compared as its source text by deny and ask rules and
// satisfies nothing in an allow rule.
func TestSecurityDynamicValuesNeverSatisfyAllowConditions(t *testing.T) {
	src := `rules:
  - {name: allow git log, action: allow, conditions: {argv: {starts_with: "git log"}}}
  - {name: allow ws targets, action: allow, conditions: {target: {starts_with: /w/}}}
  - {name: ask x, action: ask, priority: 5, conditions: {argv.1: {equals: "$X"}}}
`
	p := mustParse(t, src)
	cases := []struct {
		c    shellparse.Command
		rule string
	}{
		{cmd("git", "log", "--oneline"), "allow git log"},
		{shellparse.Command{Argv: []shellparse.Word{{Value: "git"}, {Value: "log"}, dyn("$(evil)")}}, ""},
		{shellparse.Command{Argv: []shellparse.Word{{Value: "cat"}, dyn("/w/$(x)/../../etc/passwd")}}, ""},
		{shellparse.Command{Argv: []shellparse.Word{{Value: "cat"}, dyn("$X")}}, "ask x"},
		// A glob is contained in the workspace but is not a known target.
		{shellparse.Command{Argv: []shellparse.Word{{Value: "cat"}, dyn("*.go")}}, ""},
	}
	for _, tc := range cases {
		name, _ := firstRule(t, p, input(tc.c, Full))
		if name != tc.rule {
			t.Errorf("%s: rule %q, want %q", tc.c.String(), name, tc.rule)
		}
	}
}

// TestSeed004Examples loads seed 004's example policies, adapted to this
// request vocabulary, with its synonyms and priorities.
func TestSeed004Examples(t *testing.T) {
	src := `rules:
  - name: Auto-approve internal emails
    conditions:
      action: {equals: "mail:send"}
      target: {matches: '.*@mycompany\.com$'}
    action: auto_approve
    priority: 100
    scope_template: {max_emails: 5, ttl: 600}
  - name: Block dangerous commands
    conditions:
      action: {equals: "code:exec"}
      argv: {matches: ".*(rm -rf|drop table|truncate).*"}
    action: deny
    priority: 1000
  - name: Financial operations need approval
    conditions:
      context.reason: {matches: ".*(invoice|payment).*"}
    action: require_approval
    priority: 50
  - name: Auto-approve small file reads
    conditions:
      action: {equals: "fs:read"}
      scope.max_size: {less_than: 1048576}
    action: auto_approve
    priority: 40
`
	p := mustParse(t, src)
	var st *ScopeTemplate
	for _, r := range p.Rules {
		if r.Name == "Auto-approve internal emails" {
			st = r.Scope
		}
	}
	if st == nil || st.TTL != 600*time.Second || st.Extra["max_emails"] != 5.0 {
		t.Fatalf("scope_template = %+v", st)
	}
	cases := []struct {
		c      shellparse.Command
		reason string
		scope  map[string]any
		rule   string
		want   Outcome
	}{
		{cmd("mail", "ann@mycompany.com"), "", nil, "Auto-approve internal emails", Allow},
		{cmd("mail", "ann@mycompany.com", "bob@other.org"), "", nil, "", Ask},
		{cmd("psql", "-c", "drop table users"), "", nil, "Block dangerous commands", Deny},
		{cmd("cat", "/srv/invoice.pdf"), "file the invoice", nil, "Financial operations need approval", Ask},
		{cmd("cat", "/srv/a.txt"), "", map[string]any{"max_size": 10}, "Auto-approve small file reads", Allow},
		{cmd("cat", "/srv/a.txt"), "", map[string]any{"max_size": 1 << 30}, "", Ask},
	}
	for _, tc := range cases {
		in := input(tc.c, Supervised)
		in.Reason, in.Scope = tc.reason, tc.scope
		name, out := firstRule(t, p, in)
		if name != tc.rule || out != tc.want {
			t.Errorf("%s: rule %q %s, want %q %s", tc.c.String(), name, out, tc.rule, tc.want)
		}
	}
}

func TestConditionRulesShareTheListWithPrefixRules(t *testing.T) {
	src := `rules:
  - {name: a, action: allow, priority: 5, command: {argv_prefix: [git]}}
  - {name: b, action: deny, priority: 5, conditions: {command: {equals: git}}}
  - {name: c, action: ask, priority: 9, conditions: {argv.1: {equals: push}}}
  - {name: d, action: deny, priority: 5, conditions: {argc: {greater_than: 0}}}
`
	p := mustParse(t, src)
	for _, tc := range []struct {
		c    shellparse.Command
		rule string
	}{
		{cmd("git", "push"), "c"},
		{cmd("git", "log"), "a"},
		{cmd("ls"), "d"},
	} {
		if name, _ := firstRule(t, p, input(tc.c, Full)); name != tc.rule {
			t.Errorf("%v: rule %q, want %q", tc.c.Strings(), name, tc.rule)
		}
	}
}

func TestExamplesCheckedAtLoad(t *testing.T) {
	ok := `rules:
  - name: no force push
    action: deny
    conditions: {command: {equals: git}, argv: {matches: ".* (-f|--force)( .*)?"}}
    match: ["git push -f", "cd sub && git push --force origin main", {command: "git push -f", level: readonly}]
    not_match: ["git push", "git push --force-with-lease", "echo git push -f"]
`
	mustParse(t, ok)
	cases := []struct{ src, want string }{
		{`rules:
  - name: r
    action: deny
    command: {argv_prefix: [git, push]}
    match: ["git pull"]
`, `p.yaml:5:13: rule "r" does not match "git pull", which is listed under match`},
		{`rules:
  - name: r
    action: deny
    command: {argv_prefix: [git, push]}
    not_match:
      - git push origin
`, `p.yaml:6:9: rule "r" matches "git push origin", which is listed under not_match`},
		{`rules:
  - name: r
    action: deny
    command: {argv_prefix: [git]}
    match: ["git 'push"]
`, `p.yaml:5:13: example "git 'push": does not parse: `},
		{`rules:
  - name: r
    action: allow
    conditions: {sender: {equals: ann}}
    match: [{command: ls, sender: ann}]
    not_match: [{command: ls, channel: x}]
`, ``},
		{`rules:
  - name: r
    action: allow
    conditions: {level: {equals: full}}
    match: [ls]
`, `p.yaml:5:13: rule "r" does not match "ls"`},
	}
	for _, tc := range cases {
		_, err := Parse("p.yaml", []byte(tc.src))
		if tc.want == "" {
			if err != nil {
				t.Errorf("unexpected error %v", err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("got %v\nwant %s", err, tc.want)
		}
	}
}

func TestScopeTemplate(t *testing.T) {
	p := mustParse(t, `ask:
  - name: builds
    command: {argv_prefix: [make]}
    scope_template:
      ttl: 10m
      max_uses: 5
      note: builds only
      paths: [/w, /x]
`)
	st := p.Rules[0].Scope
	if st == nil || st.TTL != 10*time.Minute || st.MaxUses != 5 || st.Extra["note"] != "builds only" || len(st.Extra["paths"].([]any)) != 2 {
		t.Fatalf("scope template %+v", st)
	}
}

func TestDurations(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"600", 600 * time.Second, true},
		{"600s", 600 * time.Second, true},
		{"1h30m", 90 * time.Minute, true},
		{"7d", 7 * 24 * time.Hour, true},
		{"0d", 0, true},
		{"d", 0, false},
		{"-1d", 0, false},
		{"07d", 0, false},
		{"1.5d", 0, false},
		{"1d12h", 0, false},
		{"99999999999999d", 0, false},
	} {
		got, err := parseDuration(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
	p := mustParse(t, "approvals: {ttl: 7d}\nask:\n  - {name: b, command: {argv_prefix: [make]}, scope_template: {ttl: 30d}}\n")
	if p.ApprovalTTL != 7*24*time.Hour || p.Rules[0].Scope.TTL != 30*24*time.Hour {
		t.Fatalf("ttl %v, scope ttl %v", p.ApprovalTTL, p.Rules[0].Scope.TTL)
	}
	roundTrip(t, p)
	if _, err := Parse("p.yaml", []byte("approvals: {ttl: 8d}\n")); err == nil || err.Error() != `p.yaml:1:18: ttl "8d" must be a duration between 1s and 168h (e.g. 600s, 10m, 7d)` {
		t.Fatalf("8d: %v", err)
	}
}
