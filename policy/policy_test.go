package policy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/shellparse"
)

func TestRegistryHasThirteenCanonicalCapabilities(t *testing.T) {
	reg := Registry()
	if len(reg) != 13 {
		t.Fatalf("registry has %d entries, want 13", len(reg))
	}
	seen := map[classify.Capability]bool{}
	for _, s := range reg {
		if s.Name == "" || s.DefaultApproval == "" || s.TargetKind == "" || s.Description == "" {
			t.Errorf("%q lacks an attribute: %+v", s.Name, s)
		}
		if seen[s.Name] {
			t.Errorf("%q twice", s.Name)
		}
		seen[s.Name] = true
	}
	if _, err := Lookup("fs:delete"); !errors.Is(err, ErrUnknownCapability) {
		t.Errorf("Lookup(fs:delete) = %v, want ErrUnknownCapability", err)
	}
}

// TestTableAllCells pins every one of the 39 cells of seed 000's table.
func TestTableAllCells(t *testing.T) {
	const a, p, d = Allowed, ApprovalRequired, Denied
	want := map[classify.Capability][3]Cell{ // ReadOnly, Supervised, Full
		classify.FSRead:       {p, p, a},
		classify.FSWrite:      {d, p, a},
		classify.CodeExec:     {d, p, p},
		classify.NetworkHTTP:  {d, p, a},
		classify.LLMLocal:     {a, a, a},
		classify.LLMOnline:    {d, p, a},
		classify.MailRead:     {p, p, a},
		classify.MailSend:     {d, p, p},
		classify.ChannelIn:    {a, a, a},
		classify.ChannelOut:   {d, p, a},
		classify.TimeRead:     {a, a, a},
		classify.ParseLocal:   {a, a, a},
		classify.CalendarRead: {p, p, a},
	}
	n := 0
	for _, s := range Registry() {
		for i, l := range Levels() {
			n++
			if got := TableCell(l, s); got != want[s.Name][i] {
				t.Errorf("%s × %s = %s, want %s", l.Title(), s.Name, got, want[s.Name][i])
			}
		}
	}
	if n != 39 {
		t.Fatalf("checked %d cells, want 39", n)
	}
}

func TestSecurityReadOnlyDeniesWriteExecSend(t *testing.T) {
	for _, c := range []classify.Capability{classify.FSWrite, classify.CodeExec, classify.MailSend} {
		if got := Table(ReadOnly, c); got != Denied {
			t.Errorf("ReadOnly × %s = %s, want denied", c, got)
		}
	}
}

func TestSecurityFullKeepsAlwaysCapabilitiesUnderApproval(t *testing.T) {
	for _, c := range []classify.Capability{classify.CodeExec, classify.MailSend} {
		if got := Table(Full, c); got != ApprovalRequired {
			t.Errorf("Full × %s = %s, want approval_required", c, got)
		}
	}
	if Table(Full, classify.FSWrite) != Allowed {
		t.Error("Full × fs:write should be allowed")
	}
	if Table(Full, "no:such") != Denied {
		t.Error("an unknown capability must be denied")
	}
}

// fakeGrants covers every (capability, target) it holds, counting calls.
type fakeGrants struct {
	keys  map[GrantKey]bool
	calls int
	err   error
}

func (f *fakeGrants) CoveringGrant(_ context.Context, ch, snd string, c classify.Capability, target, _ string, _ time.Time) (Grant, bool, error) {
	f.calls++
	if f.err != nil {
		return Grant{}, false, f.err
	}
	for k := range f.keys {
		if k.Channel == ch && k.Sender == snd && k.Capability == c && MatchTarget(k.Target, target) {
			return Grant{ID: 7, GrantKey: k}, true, nil
		}
	}
	return Grant{}, false, nil
}

func words(ws ...string) []shellparse.Word {
	out := make([]shellparse.Word, len(ws))
	for i, w := range ws {
		out[i] = shellparse.Word{Value: w}
	}
	return out
}

func cmd(ws ...string) shellparse.Command { return shellparse.Command{Argv: words(ws...)} }

// input is the command as mnemos run decides it: in /w, with the
// programs' secure modes on (classify.TerminalEnv).
func input(c shellparse.Command, l Level) Input {
	return Input{Command: c, Level: l, Workspace: "/w", Place: classify.Place{Dirs: []string{"/w"}, Home: "/home/u", TerminalEnv: true},
		Channel: "telegram", Sender: "roberto", Now: time.Unix(1e9, 0)}
}

func noRules() *Policy {
	return &Policy{Source: "test", Level: Supervised, Shell: Ask, JudgeThreshold: DefaultJudgeThreshold, ApprovalTTL: DefaultApprovalTTL}
}

// TestEffectiveOutcomeSeedRows is seed 000 chapter 5: the four rows of the
// combination table, plus the examples of 5.1.
func TestEffectiveOutcomeSeedRows(t *testing.T) {
	invoice := "/home/u/Documents/invoices-2026/04-Acme.pdf"
	granted := &fakeGrants{keys: map[GrantKey]bool{
		{Channel: "telegram", Sender: "roberto", Capability: classify.FSWrite, Target: "/home/u/Documents/invoices-2026/**"}: true,
		{Channel: "telegram", Sender: "roberto", Capability: classify.FSRead, Target: "/srv/data/**"}:                        true,
	}}
	cases := []struct {
		name      string
		c         shellparse.Command
		level     Level
		grants    *fakeGrants
		want      Outcome
		by        Decided
		dbQueried bool
	}{
		{"allowed: DB not queried", cmd("cat", "/srv/data/x"), Full, granted, Allow, ByTable, false},
		{"denied: DB not queried", cmd("touch", invoice), ReadOnly, granted, Deny, ByTable, false},
		{"approval_required with grant: allowed", cmd("touch", invoice), Supervised, granted, Allow, ByGrant, true},
		{"approval_required without grant: ask", cmd("touch", "/home/u/other.txt"), Supervised, granted, Ask, ByTable, true},
		{"approval_required, no checker: ask", cmd("touch", invoice), Supervised, nil, Ask, ByTable, false},
		{"example 3: full mail:send stays ask", cmd("mail", "ceo@example.com"), Full, granted, Ask, ByTable, false},
		{"read outside workspace with grant", cmd("cat", "/srv/data/report.csv"), Supervised, granted, Allow, ByGrant, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var gc GrantChecker
			if tc.grants != nil {
				tc.grants.calls = 0
				gc = tc.grants
			}
			res, err := noRules().Evaluate(context.Background(), input(tc.c, tc.level), gc)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tc.want || res.DecidedBy != tc.by {
				t.Fatalf("got %s by %s (%s), want %s by %s", res.Outcome, res.DecidedBy, res.Reason, tc.want, tc.by)
			}
			if tc.grants != nil && (tc.grants.calls > 0) != tc.dbQueried {
				t.Fatalf("grant store queried %d times, want queried=%v", tc.grants.calls, tc.dbQueried)
			}
		})
	}
}

func TestSecurityGrantNeverLiftsDenied(t *testing.T) {
	all := &fakeGrants{keys: map[GrantKey]bool{}}
	for _, s := range Registry() {
		all.keys[GrantKey{Channel: "telegram", Sender: "roberto", Capability: s.Name, Target: "/**/x"}] = true
		all.keys[GrantKey{Channel: "telegram", Sender: "roberto", Capability: s.Name, Target: "/w/**"}] = true
	}
	for _, c := range []shellparse.Command{cmd("touch", "/w/a"), cmd("rm", "/w/a"), cmd("make"), cmd("curl", "https://example.com"), cmd("mail", "a@b.c")} {
		res, err := noRules().Evaluate(context.Background(), input(c, ReadOnly), all)
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != Deny {
			t.Errorf("%v at readonly with grants = %s, want deny", c.Strings(), res.Outcome)
		}
	}
}

func TestSecurityAllowRuleNeverLiftsDenied(t *testing.T) {
	p, err := Parse("p.yaml", []byte("level: readonly\nallow:\n  - command: {argv_prefix: [touch]}\n  - command: {argv_prefix: [make]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []shellparse.Command{cmd("touch", "/w/a"), cmd("make", "all")} {
		res, _ := p.Evaluate(context.Background(), input(c, p.Level), nil)
		if res.Outcome != Deny || res.DecidedBy != ByTable {
			t.Errorf("%v = %s by %s, want deny by table", c.Strings(), res.Outcome, res.DecidedBy)
		}
	}
}

func TestSecurityAlwaysCapabilitiesNeverCoveredByGrant(t *testing.T) {
	g := &fakeGrants{keys: map[GrantKey]bool{
		{Channel: "telegram", Sender: "roberto", Capability: classify.CodeExec, Target: "make test"}: true,
		{Channel: "telegram", Sender: "roberto", Capability: classify.MailSend, Target: "a@b.c"}:     true,
	}}
	for _, l := range []Level{Supervised, Full} {
		for _, c := range []shellparse.Command{cmd("make", "test"), cmd("mail", "a@b.c")} {
			res, _ := noRules().Evaluate(context.Background(), input(c, l), g)
			if res.Outcome != Ask {
				t.Errorf("%s %v = %s, want ask", l, c.Strings(), res.Outcome)
			}
		}
	}
}

func TestGrantErrorIsDenyWithError(t *testing.T) {
	g := &fakeGrants{err: errors.New("database is locked")}
	res, err := noRules().Evaluate(context.Background(), input(cmd("touch", "/w/x"), Supervised), g)
	if err == nil || res.Outcome != Deny {
		t.Fatalf("got %s, %v; want deny and an error", res.Outcome, err)
	}
}

func TestCombineOrder(t *testing.T) {
	src := `level: supervised
rules:
  - {name: deny push force, action: deny, command: {argv_prefix: [git, push, --force]}}
  - {name: ask rm, action: ask, command: {argv_prefix: [rm]}}
  - {name: allow make test, action: allow, command: {argv_prefix: [make, test]}}
  - {name: allow mail, action: allow, command: {argv_prefix: [mail]}}
  - {name: read ws, action: allow, capability: fs:read, targets: workspace}
`
	p, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	grant := &fakeGrants{keys: map[GrantKey]bool{{Channel: "telegram", Sender: "roberto", Capability: classify.FSWrite, Target: "/w/**"}: true}}
	cases := []struct {
		c     shellparse.Command
		level Level
		g     GrantChecker
		want  Outcome
		by    Decided
		rule  string
	}{
		{cmd("git", "push", "--force"), Full, nil, Deny, ByRule, "deny push force"},
		{cmd("/usr/bin/git", "push", "--force", "origin"), Full, nil, Deny, ByRule, "deny push force"},
		{cmd("rm", "/w/a"), Full, nil, Ask, ByRule, "ask rm"},
		{cmd("rm", "/w/a"), Supervised, grant, Allow, ByGrant, "ask rm"},
		{cmd("rm", "/w/a"), ReadOnly, grant, Deny, ByTable, "ask rm"},
		{cmd("make", "test"), Supervised, nil, Allow, ByRule, "allow make test"},
		{cmd("make", "install"), Supervised, nil, Ask, ByTable, ""},
		{cmd("make", "test"), ReadOnly, nil, Deny, ByTable, "allow make test"},
		{cmd("mail", "x@y.z"), Full, nil, Allow, ByRule, "allow mail"},
		{cmd("cat", "/w/README.md"), Supervised, nil, Allow, ByRule, "read ws"},
		{cmd("cat", "README.md"), Supervised, nil, Allow, ByRule, "read ws"},
		{cmd("cat", "/etc/hosts"), Supervised, nil, Ask, ByTable, ""},
		{cmd("ls"), ReadOnly, nil, Allow, ByRule, "read ws"},
		{cmd("cat", "../other/x"), Supervised, nil, Ask, ByTable, ""},
		{cmd("echo", "hi"), ReadOnly, nil, Allow, ByTable, ""},
	}
	for _, tc := range cases {
		res, err := p.Evaluate(context.Background(), input(tc.c, tc.level), tc.g)
		if err != nil {
			t.Fatal(err)
		}
		rule := ""
		if res.Rule != nil {
			rule = res.Rule.Name
		}
		if res.Outcome != tc.want || res.DecidedBy != tc.by || rule != tc.rule {
			t.Errorf("%s %v = %s by %s rule %q (%s); want %s by %s rule %q", tc.level, tc.c.Strings(), res.Outcome, res.DecidedBy, rule, res.Reason, tc.want, tc.by, tc.rule)
		}
	}
}

func TestFloors(t *testing.T) {
	p := Default()
	cases := []struct {
		c    shellparse.Command
		want Outcome
	}{
		{shellparse.Command{Argv: []shellparse.Word{{Value: "$CMD", Dynamic: true}, {Value: "x"}}, Dynamic: true}, Ask},
		{shellparse.Command{Argv: words("cat", "/w/a"), Wrappers: []shellparse.Wrapper{{Name: "sudo"}}}, Ask},
		{shellparse.Command{Argv: words("git", "log"), Assigns: []string{"PAGER=sh -c id"}}, Ask},
		{shellparse.Command{Argv: []shellparse.Word{{Value: "rm"}, {Value: "-rf"}, {Value: "$X/", Dynamic: true}}}, Ask},
		{cmd("git", "log"), Allow},
	}
	for _, tc := range cases {
		res, _ := p.Evaluate(context.Background(), input(tc.c, Full), nil)
		if res.Outcome != tc.want {
			t.Errorf("%v at full = %s (%s), want %s", tc.c.String(), res.Outcome, res.Reason, tc.want)
		}
	}
}

func TestDefaultPolicy(t *testing.T) {
	p := Default()
	if p.Level != Supervised || p.Source != DefaultName {
		t.Fatalf("default level %s source %q", p.Level, p.Source)
	}
	cases := []struct {
		c    shellparse.Command
		want Outcome
	}{
		{cmd("git", "status"), Allow},
		{cmd("git", "log", "--oneline"), Allow},
		{cmd("git", "diff", "HEAD~1"), Allow},
		{cmd("ls", "-la"), Allow},
		{cmd("cat", "main.go"), Allow},
		{cmd("grep", "-rn", "TODO", "."), Allow},
		{cmd("git", "push", "--force"), Deny},
		{cmd("git", "push", "-f", "origin", "main"), Deny},
		{cmd("git", "reset", "--hard"), Deny},
		{cmd("git", "push", "--force-with-lease"), Ask},
		{cmd("touch", "notes.txt"), Ask},
		{cmd("make", "test"), Ask},
		{cmd("cat", "/etc/hosts"), Ask},
		{cmd("curl", "https://example.com"), Ask},
		{cmd("git", "-c", "core.pager=sh", "log"), Ask},
		{cmd("git", "log", "--output=/tmp/x"), Ask},
	}
	for _, tc := range cases {
		res, err := p.Evaluate(context.Background(), input(tc.c, p.Level), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != tc.want {
			t.Errorf("%v = %s (%s), want %s", tc.c.Strings(), res.Outcome, res.Reason, tc.want)
		}
	}
}

func TestParseErrorsCarryPositions(t *testing.T) {
	cases := []struct{ src, want string }{
		{"level: sometimes\n", "p.yaml:1:8: unknown level"},
		{"levle: full\n", "p.yaml:1:1: unknown key \"levle\""},
		{"allow:\n  - command: {argv_prefix: []}\n", "p.yaml:2:28: argv_prefix must be a non-empty list"},
		{"allow:\n  - command: {argv: [git]}\n", "p.yaml:2:15: unknown key \"argv\" in command"},
		{"rules:\n  - {name: x, action: maybe, command: {argv_prefix: [a]}}\n", "p.yaml:2:23: unknown action \"maybe\""},
		{"rules:\n  - {name: x, command: {argv_prefix: [a]}}\n", "p.yaml:2:5: rule has no action"},
		{"allow:\n  - name: x\n", "p.yaml:2:5: rule matches nothing"},
		{"allow:\n  - {capability: fs:delete}\n", "p.yaml:2:18: capability \"fs:delete\" is not in the registry"},
		{"allow:\n  - {name: a, command: {argv_prefix: [x]}}\n  - {name: a, command: {argv_prefix: [y]}}\n", "p.yaml:3:5: duplicate rule name \"a\""},
		{"deny:\n  - {priority: 0x10, command: {argv_prefix: [x]}}\n", "p.yaml:2:16: expected a decimal integer, found \"0x10\""},
		{"deny:\n  - {priority: 4294967295, command: {argv_prefix: [x]}}\n", "p.yaml:2:16: integer 4294967295 out of range"},
		{"judge: {threshold: .nan}\n", "p.yaml:1:20: expected a finite decimal number"},
		{"judge: {threshold: 2}\n", "p.yaml:1:20: threshold 2 must be within [0, 1]"},
		{"x: &a 1\n", "p.yaml:1:1: unknown key \"x\""},
		{"level: &l full\n", "p.yaml:1:8: YAML anchors and aliases are not allowed"},
		{"allow:\n\t- {command: {argv_prefix: [x]}}\n", "p.yaml:2:1: invalid YAML"},
		{"\xEF\xBB\xBFlevel: full\n", "p.yaml:1:1: byte order mark"},
		{"level: full\x00\n", "p.yaml:1:12: NUL byte"},
		{"", "p.yaml:1:1: policy file is empty"},
		{"- a\n", "p.yaml:1:1: expected a mapping"},
		{"approvals: {ttl: forever}\n", "p.yaml:1:18: ttl \"forever\" must be a duration"},
		{"defaults: {shell: 1}\n", "p.yaml:1:19: expected a string, found int"},
	}
	for _, tc := range cases {
		_, err := Parse("p.yaml", []byte(tc.src))
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%q: err = %v, want *Error", tc.src, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %s\nwant prefix %s", tc.src, err, tc.want)
		}
	}
}

func TestRulePriorityOrder(t *testing.T) {
	src := "rules:\n  - {name: a, action: allow, priority: 5, command: {argv_prefix: [x]}}\n  - {name: b, action: deny, priority: 5, command: {argv_prefix: [x]}}\n  - {name: c, action: ask, priority: 9, command: {argv_prefix: [x, y]}}\n"
	p, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range p.Rules {
		names = append(names, r.Name)
	}
	if strings.Join(names, ",") != "c,a,b" {
		t.Fatalf("order %v, want c,a,b", names)
	}
	res, _ := p.Evaluate(context.Background(), input(cmd("x", "z"), Full), nil)
	if res.Rule == nil || res.Rule.Name != "a" {
		t.Fatalf("equal priorities must keep file order, got %+v", res.Rule)
	}
}

func TestAddAllowRule(t *testing.T) {
	out, err := AddAllowRule("p.yaml", DefaultSource(), "allow make test", []string{"make", "test"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse("p.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := p.Evaluate(context.Background(), input(cmd("make", "test", "-v"), Supervised), nil)
	if res.Outcome != Allow || res.Rule == nil || res.Rule.Name != "allow make test" {
		t.Fatalf("after adding the rule: %s by %+v", res.Outcome, res.Rule)
	}
	if !strings.Contains(string(out), "# mnemos policy") {
		t.Error("comments were lost")
	}
	// A second rule goes into the same list.
	out2, err := AddAllowRule("p.yaml", out, "allow go test", []string{"go", "test", "./..."})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(out2), "\nrules:") != 1 {
		t.Fatalf("rules: appears more than once:\n%s", out2)
	}
}

func TestMatchTarget(t *testing.T) {
	cases := []struct {
		pat, target string
		want        bool
	}{
		{"/p/a.txt", "/p/a.txt", true},
		{"/p/**", "/p", true},
		{"/p/**", "/p/a/b/c", true},
		{"/p/**", "/pq/a", false},
		{"/p/*.pdf", "/p/a.pdf", true},
		{"/p/*.pdf", "/p/x/a.pdf", false},
		{"/**", "/etc/passwd", false},
		{"", "/x", false},
		{"example.com", "example.com", true},
		{"*.example.com", "api.example.com", true},
	}
	for _, tc := range cases {
		if got := MatchTarget(tc.pat, tc.target); got != tc.want {
			t.Errorf("MatchTarget(%q, %q) = %v, want %v", tc.pat, tc.target, got, tc.want)
		}
	}
}

// The built-in default skips its match/not_match examples at load (they
// cannot change); here they are checked, so a default rule whose examples
// do not hold fails the build.
func TestDefaultExamplesHold(t *testing.T) {
	d := &decoder{file: DefaultName}
	p, errs := parse(DefaultName, defaultSource)
	if len(errs) > 0 || p == nil {
		t.Fatalf("default: %v", errs)
	}
	d.checkAllExamples(p)
	if len(d.errs) > 0 {
		t.Fatalf("default examples: %v", d.errs)
	}
	n := 0
	for _, r := range p.Rules {
		n += len(r.Match) + len(r.NotMatch)
	}
	if n < 10 {
		t.Fatalf("only %d examples checked", n)
	}
}
