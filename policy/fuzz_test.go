package policy

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// canonical is a policy as JSON with every position removed, for
// comparing a policy with its formatted and re-parsed self.
func canonical(t testing.TB, p *Policy) string {
	t.Helper()
	profiles := make([]Profile, len(p.Profiles))
	for i, pr := range p.Profiles {
		pr.Pos = Pos{}
		pr.Rules = canonicalRules(pr.Rules)
		pr.RateLimits = canonicalLimits(pr.RateLimits)
		profiles[i] = pr
	}
	sb := p.Sandbox
	sb.Pos = Pos{}
	b, err := json.Marshal(map[string]any{"level": p.Level, "shell": p.Shell, "ttl": p.ApprovalTTL,
		"threshold": p.JudgeThreshold, "rules": canonicalRules(p.Rules), "sandbox": sb, "rate_limits": canonicalLimits(p.RateLimits), "profiles": profiles})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// canonicalLimits are rate limits with every position removed.
func canonicalLimits(in []RateLimit) []RateLimit {
	if in == nil {
		return nil
	}
	out := make([]RateLimit, len(in))
	for i, l := range in {
		out[i] = RateLimit{Capability: l.Capability, Capacity: l.Capacity, RefillPerMinute: l.RefillPerMinute, Over: l.Over, Profile: l.Profile, Layer: l.Layer}
	}
	return out
}

// canonicalRules are rules with every position removed.
func canonicalRules(in []Rule) []Rule {
	rules := make([]Rule, len(in))
	for i, r := range in {
		r.Pos = Pos{}
		if r.Sandbox != nil {
			sb := *r.Sandbox
			sb.Pos = Pos{}
			r.Sandbox = &sb
		}
		r.Conditions = append([]Condition(nil), r.Conditions...)
		for j := range r.Conditions {
			r.Conditions[j].Pos = Pos{}
		}
		for _, ex := range []*[]Example{&r.Match, &r.NotMatch} {
			*ex = append([]Example(nil), (*ex)...)
			for j := range *ex {
				(*ex)[j].Pos = Pos{}
			}
		}
		rules[i] = r
	}
	return rules
}

// roundTrip checks that Format's output parses back to the same policy
// and formats to the same bytes.
func roundTrip(t testing.TB, p *Policy) {
	t.Helper()
	out := Format(p)
	q, err := Parse("formatted.yaml", out)
	if err != nil {
		t.Fatalf("formatted policy does not parse: %v\n%s", err, out)
	}
	if a, b := canonical(t, p), canonical(t, q); a != b {
		t.Fatalf("round trip changed the policy:\n%s\n%s\n%s", a, b, out)
	}
	if again := Format(q); string(again) != string(out) {
		t.Fatalf("Format is not stable:\n%s\n%s", out, again)
	}
}

func TestFormatRoundTrip(t *testing.T) {
	roundTrip(t, Default())
	p := mustParse(t, `level: full
defaults: {shell: deny}
approvals: {ttl: 90s}
judge: {threshold: 0.25}
rules:
  - name: "quotes \" and: colons"
    description: with a description
    action: auto_approve
    priority: -3
    command: {argv_prefix: ["/usr/bin/git", "log"]}
    conditions:
      argv.1: {in: [log, "007", 7, true]}
      level: {not_in: [ReadOnly]}
      target: {matches: '/home/.*', starts_with: /home}
    match: [{command: "/usr/bin/git log", level: full, sender: ann}, "/usr/bin/git log x"]
    not_match: ["git log", {command: "/usr/bin/git log", level: readonly, cwd: /tmp}]
    scope_template: {ttl: 1h30m, max_uses: 3, note: "x", nested: {a: [1, "b", null, false]}}
  - name: numbers
    action: deny
    conditions:
      context.metadata.priority: {greater_than: 5, less_than: 10.5}
      scope.x: {equals: -0.25}
`)
	roundTrip(t, p)
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		roundTrip(t, mustParse(t, randPolicy(r)))
	}
}

// FuzzParse: no input panics; a rejected input is a positioned *Error; an
// accepted one survives Format → Parse unchanged.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/bad/*.yaml")
	files = append(files, "default.yaml", "testdata/default_cases.yaml")
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err == nil {
			f.Add(src)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add([]byte(randPolicy(r)))
	}
	for range 10 {
		f.Add([]byte(randRateLimitPolicy(r)))
	}
	f.Add([]byte(rateLimitSrc))
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := Parse("f.yaml", src)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Col < 1 || p != nil {
				t.Fatalf("error %v (%T) without position", err, err)
			}
			return
		}
		roundTrip(t, p)
	})
}

// FuzzParseCases: the test-case reader never panics.
func FuzzParseCases(f *testing.F) {
	if src, err := os.ReadFile("testdata/default_cases.yaml"); err == nil {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		_, _ = ParseCases("c.yaml", src)
	})
}
