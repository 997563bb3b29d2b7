package policy

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// thousandRules is a policy of 1 000 rules: 700 prefix rules over 350
// programs, 250 condition rules keyed by program name, 50 condition rules
// every command must be tried against.
func thousandRules(tb testing.TB) *Policy {
	var b strings.Builder
	b.WriteString("level: supervised\nrules:\n")
	for i := range 350 {
		fmt.Fprintf(&b, "  - {name: p%d-a, action: ask, priority: %d, command: {argv_prefix: [tool%d, sub]}}\n", i, i%7, i)
		fmt.Fprintf(&b, "  - {name: p%d-b, action: allow, priority: %d, command: {argv_prefix: [tool%d, run, --fast]}}\n", i, i%5, i)
	}
	for i := range 250 {
		fmt.Fprintf(&b, "  - {name: c%d, action: deny, priority: %d, conditions: {command: {equals: tool%d}, argv: {matches: \".*--danger-%d.*\"}, level: {in: [supervised, full]}}}\n", i, i%9, i, i)
	}
	for i := range 50 {
		fmt.Fprintf(&b, "  - {name: u%d, action: deny, priority: %d, conditions: {target: {starts_with: /forbidden/%d/}, context.reason: {matches: \".*secret-%d.*\"}}}\n", i, i%3, i, i)
	}
	p, err := Parse("bench.yaml", []byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	if len(p.Rules) != 1000 {
		tb.Fatalf("%d rules", len(p.Rules))
	}
	return p
}

// BenchmarkEvaluate1000Rules decides one command against 1 000 rules, with
// the rule index (as Parse builds it) and with a plain scan.
func BenchmarkEvaluate1000Rules(b *testing.B) {
	p := thousandRules(b)
	linear := *p
	linear.index = nil
	for _, tc := range []struct {
		name string
		c    []string
		rule string
	}{
		{"prefix-match", []string{"tool349", "run", "--fast", "x"}, "p349-b"},
		{"condition-match", []string{"tool249", "--danger-249"}, "c249"},
		{"no-match", []string{"cat", "README.md"}, ""},
	} {
		in := input(cmd(tc.c...), Supervised)
		in.Reason = "routine"
		for _, q := range []struct {
			name string
			p    *Policy
		}{{"indexed", p}, {"scan", &linear}} {
			b.Run(tc.name+"/"+q.name, func(b *testing.B) {
				res, _ := q.p.Evaluate(context.Background(), in, nil)
				if got := ""; res.Rule != nil && res.Rule.Name != tc.rule || res.Rule == nil && tc.rule != got {
					b.Fatalf("rule %+v, want %q", res.Rule, tc.rule)
				}
				b.ReportAllocs()
				for b.Loop() {
					_, _ = q.p.Evaluate(context.Background(), in, nil)
				}
			})
		}
	}
}

func BenchmarkParse1000Rules(b *testing.B) {
	for b.Loop() {
		thousandRules(b)
	}
}
