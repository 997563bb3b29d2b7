package policy

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestDefaultPolicyCases runs the shipped cases for the default policy and
// checks that every default rule decides at least one of them.
func TestDefaultPolicyCases(t *testing.T) {
	src, err := os.ReadFile("testdata/default_cases.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := ParseCases("default_cases.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	p := Default()
	decided := map[string]bool{}
	for _, c := range cases {
		res, err := p.RunCase(context.Background(), c, time.Unix(1e9, 0))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Pass() {
			t.Errorf("%s (line %d): %s; got %s by %s: %s", c.Name, c.Pos.Line, strings.Join(res.Problems, ", "), res.Got.Outcome, res.Got.DecidedBy, res.Got.Reason)
		}
		if res.Got.Rule != nil && res.Got.DecidedBy == ByRule {
			decided[res.Got.Rule.Name] = true
		}
	}
	for _, r := range p.Rules {
		if !decided[r.Name] {
			t.Errorf("default rule %q decides no case", r.Name)
		}
	}
}

func TestRunCaseReportsEachProblem(t *testing.T) {
	p := mustParse(t, "ask:\n  - {name: make, command: {argv_prefix: [make]}}\n")
	cases, err := ParseCases("c.yaml", []byte(`cases:
  - {command: make test, want: ask, rule: make, decided_by: rule}
  - {command: make test, want: allow, rule: "", decided_by: table}
  - {command: make test, want: ask, level: full, channel: telegram, sender: ann, cwd: /srv, reason: build}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		nil,
		{"got ask, want allow", `rule "make", want none`, "decided by rule, want table"},
		nil,
	}
	for i, c := range cases {
		res, err := p.RunCase(context.Background(), c, time.Unix(1e9, 0))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(res.Problems, "|") != strings.Join(want[i], "|") {
			t.Errorf("case %d: problems %q, want %q", i, res.Problems, want[i])
		}
	}
}

func TestParseCasesErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"cases: []\n", "c.yaml:1:8: no test cases"},
		{"# nothing\n", "c.yaml:1:1: policy file is empty"},
		{"tests:\n  - {command: ls, want: allow}\n", `c.yaml:1:1: unknown key "tests" (want cases)`},
		{"cases:\n  - {command: ls}\n", "c.yaml:2:5: case has no want"},
		{"cases:\n  - {want: allow}\n", "c.yaml:2:5: case has no command"},
		{"cases:\n  - {command: ls, want: maybe}\n", `c.yaml:2:25: unknown action "maybe"`},
		{"cases:\n  - {command: ls, want: allow, levle: full}\n", `c.yaml:2:32: unknown key "levle" in case`},
		{"cases:\n  - {command: ls, want: allow, grants: [{capability: fs:delete, target: /x}]}\n", `c.yaml:2:54: capability "fs:delete" is not in the registry`},
		{"cases:\n  - {command: ls, want: allow, cwd: relative}\n", `c.yaml:2:37: cwd "relative" must be an absolute path`},
		{"cases:\n  - {command: ls, want: allow, decided_by: luck}\n", `c.yaml:2:44: unknown stage "luck"`},
		{"cases:\n  - {command: ls, want: allow, scope: [1]}\n", `c.yaml:2:39: scope must be a mapping`},
		{"cases:\n  - {command: ls, want: allow, context: x}\n", `c.yaml:2:41: context must be a mapping`},
	}
	for _, tc := range cases {
		_, err := ParseCases("c.yaml", []byte(tc.src))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %s", tc.src, err, tc.want)
		}
	}
}

// TestCasesCarryContextAndScope: a case's context and scope reach the
// fields context.* and scope.*, nested to any depth, so rules over them
// can be tested with `mnemos policy test`.
func TestCasesCarryContextAndScope(t *testing.T) {
	p := mustParse(t, `rules:
  - name: big amounts
    action: deny
    conditions:
      scope.payment.amount: {greater_than: 1000}
  - name: urgent tickets
    action: allow
    conditions:
      command: {equals: make}
      context.ticket.meta.priority: {greater_than: 5}
`)
	cases, err := ParseCases("c.yaml", []byte(`cases:
  - {command: ls, scope: {payment: {amount: 5000}}, want: deny, rule: big amounts}
  - {command: ls, scope: {payment: {amount: 50}}, want: ask, rule: ""}
  - {command: make, context: {ticket: {meta: {priority: 9}}}, want: allow, rule: urgent tickets}
  - {command: make, context: {ticket: {meta: {priority: "9"}}}, want: ask, rule: ""}
  - {command: make, want: ask, rule: ""}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		res, err := p.RunCase(context.Background(), c, time.Unix(1e9, 0))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Pass() {
			t.Errorf("line %d: %s", c.Pos.Line, strings.Join(res.Problems, ", "))
		}
	}
}
