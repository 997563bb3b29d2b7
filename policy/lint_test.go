package policy

import (
	"strings"
	"testing"
)

func TestLintReportsEveryError(t *testing.T) {
	src := `level: sometimes
allow:
  - {name: a, command: {argv_prefix: [ls]}, colour: red}
  - {name: b, command: {argv_prefix: [cat]}}
  - {name: c, conditions: {command: {is: x}}}
deny:
  - {name: b, command: {argv_prefix: [rm]}}
  - {name: a, command: {argv_prefix: [rm, -r]}}
judge: {threshold: 2}
`
	var got []string
	for _, d := range Lint("p.yaml", []byte(src)) {
		got = append(got, d.String())
	}
	want := []string{
		`p.yaml:1:8: unknown level "sometimes" (want readonly, supervised or full)`,
		`p.yaml:3:45: unknown key "colour" in rule (want ` + ruleKeys + `)`,
		`p.yaml:5:38: unknown operator "is" (want equals, not_equals, starts_with, ends_with, matches, less_than, greater_than, in or not_in)`,
		`p.yaml:7:5: duplicate rule name "b" (first at line 4)`,
		`p.yaml:8:5: duplicate rule name "a" (first at line 3)`,
		`p.yaml:9:20: threshold 2 must be within [0, 1]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLintUnreachableRules(t *testing.T) {
	cases := []struct {
		name, rules string
		want        []string // rule names reported unreachable
	}{
		{"shorter prefix first", `
  - {name: git, action: ask, priority: 10, command: {argv_prefix: [git]}}
  - {name: git push, action: deny, priority: 5, command: {argv_prefix: [git, push]}}`, []string{"git push"}},
		{"equal priority keeps file order", `
  - {name: git push, action: allow, priority: 7, command: {argv_prefix: [git, push]}}
  - {name: git push -f, action: deny, priority: 7, command: {argv_prefix: [git, push, -f]}}`, []string{"git push -f"}},
		{"higher priority later is fine", `
  - {name: git, action: ask, priority: 1, command: {argv_prefix: [git]}}
  - {name: git push, action: deny, priority: 5, command: {argv_prefix: [git, push]}}`, nil},
		{"base name covers a path", `
  - {name: rm, action: deny, command: {argv_prefix: [rm]}}
  - {name: bin rm, action: deny, command: {argv_prefix: [/bin/rm, -rf]}}`, []string{"bin rm"}},
		{"a path does not cover the base name", `
  - {name: bin rm, action: deny, command: {argv_prefix: [/bin/rm]}}
  - {name: rm, action: deny, command: {argv_prefix: [rm]}}`, nil},
		{"identical conditions", `
  - {name: a, action: deny, conditions: {command: {equals: curl}, args: {matches: ".*-k.*"}}}
  - {name: b, action: ask, conditions: {args: {matches: ".*-k.*"}, command: {equals: curl}}}`, []string{"b"}},
		{"subset of conditions", `
  - {name: a, action: deny, conditions: {command: {equals: curl}}}
  - {name: b, action: deny, conditions: {command: {equals: curl}, args: {equals: x}}}
  - {name: c, action: deny, command: {argv_prefix: [curl, -k]}}`, []string{"b"}},
		{"prefix covers command equals", `
  - {name: a, action: deny, command: {argv_prefix: [curl]}}
  - {name: b, action: allow, conditions: {command: {equals: curl}, target: {equals: example.com}}}`, []string{"b"}},
		{"allow conditions do not shadow a deny", `
  - {name: a, action: allow, priority: 1, conditions: {target: {starts_with: /w/}}}
  - {name: b, action: deny, priority: 1, conditions: {target: {starts_with: /w/}}}`, nil},
		{"deny conditions shadow an allow", `
  - {name: a, action: deny, conditions: {target: {starts_with: /w/}}}
  - {name: b, action: allow, conditions: {target: {starts_with: /w/}, capability: {equals: fs:write}}}`, []string{"b"}},
		{"different operand", `
  - {name: a, action: deny, conditions: {argc: {less_than: 3}}}
  - {name: b, action: deny, conditions: {argc: {less_than: 3.5}}}`, nil},
		{"aliases are the same field", `
  - {name: a, action: deny, conditions: {resource: {ends_with: .pem}}}
  - {name: b, action: deny, conditions: {target: {ends_with: .pem}}}`, []string{"b"}},
		{"shorthand", `
  - {name: a, action: allow, capability: fs:read}
  - {name: b, action: allow, capability: fs:read, targets: workspace}
  - {name: c, action: allow, capability: fs:write, targets: workspace}`, []string{"b"}},
	}
	for _, tc := range cases {
		diags := Lint("p.yaml", []byte("rules:"+tc.rules+"\n"))
		if HasErrors(diags) {
			t.Fatalf("%s: %v", tc.name, diags)
		}
		var got []string
		for _, d := range diags {
			if d.Severity != SeverityWarning || !strings.Contains(d.String(), ": warning: rule ") {
				t.Errorf("%s: %s", tc.name, d)
			}
			got = append(got, strings.Split(d.Msg, `"`)[1])
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: unreachable %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLintDefaultPolicyIsClean(t *testing.T) {
	if d := Lint(DefaultName, DefaultSource()); len(d) != 0 {
		t.Fatalf("default policy: %v", d)
	}
}
