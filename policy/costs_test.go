package policy

import (
	"context"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/shellparse"
)

const costPolicy = `level: full
costs:
  - {host: api.anthropic.com, model: "*opus*", per_call: 0.10}
  - {host: api.anthropic.com, model: "*haiku*", per_call: 0.004}
rules:
  - name: dear calls ask
    action: ask
    conditions:
      capability: {equals: "llm:online"}
      cost: {greater_than: 0.05}
    match: ["llm -m claude-opus-4 'a prompt'"]
    not_match: ["llm -m claude-3-haiku 'a prompt'", "llm -m gpt-4o 'a prompt'", "ollama run x 'a prompt'"]
`

func decideCost(t *testing.T, p *Policy, src string) Result {
	t.Helper()
	sc, err := shellparse.ParseScript(src, shellparse.Env{Home: "/home/u", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	pl := classify.PlaceOf(sc, "/w", "/home/u")
	res, err := p.Evaluate(context.Background(), Input{Command: sc.Commands[0], Place: pl, Level: Full}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestCostField: a rule on cost reads the costs: section's estimate of an
// llm:online access; the estimate is reported with the access; a model
// the section does not price leaves the field absent.
func TestCostField(t *testing.T) {
	p, err := Parse("p.yaml", []byte(costPolicy))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		src  string
		want Outcome
		cost string
	}{
		{"llm -m claude-opus-4 'a prompt'", Ask, "0.1"},
		{"llm -m claude-3-haiku 'a prompt'", Allow, "0.004"},
		{"llm -m gpt-4o 'a prompt'", Allow, ""},
		{"llm -m claude-x 'a prompt'", Allow, ""},
		{"llm 'a prompt'", Allow, ""},
	} {
		res := decideCost(t, p, tc.src)
		cost := ""
		for _, a := range res.Accesses {
			if a.Cost != nil {
				cost = formatNumber(*a.Cost)
			}
		}
		if res.Outcome != tc.want || cost != tc.cost {
			t.Errorf("%s: %s with cost %q, want %s with %q (%s)", tc.src, res.Outcome, cost, tc.want, tc.cost, res.Reason)
		}
	}
	// Unknown model: the highest estimate for the host.
	if v, ok := p.EstimateCost(classify.Access{Capability: classify.LLMOnline, Target: "api.anthropic.com"}); !ok || v != 0.10 {
		t.Errorf("unknown model: %v %v, want 0.1", v, ok)
	}
}

// TestSecurityCostLayersOnlyRaise: a project policy's lower estimate
// never lowers the stack's; a higher one raises it.
func TestSecurityCostLayersOnlyRaise(t *testing.T) {
	user, err := Parse("user.yaml", []byte(costPolicy))
	if err != nil {
		t.Fatal(err)
	}
	a := classify.Access{Capability: classify.LLMOnline, Target: "api.anthropic.com", Model: "claude-opus-4"}
	for _, tc := range []struct {
		per  string
		want float64
	}{{"0.001", 0.10}, {"0.5", 0.5}} {
		proj, err := Parse("project.yaml", []byte("costs:\n  - {host: api.anthropic.com, per_call: "+tc.per+"}\n"))
		if err != nil {
			t.Fatal(err)
		}
		m, _ := Merge(nil, user, proj)
		if v, ok := m.EstimateCost(a); !ok || v != tc.want {
			t.Errorf("project per_call %s: estimate %v, want %v", tc.per, v, tc.want)
		}
	}
}

// TestCostsFormatRoundTrip: Format writes the costs: section back.
func TestCostsFormatRoundTrip(t *testing.T) {
	p, err := Parse("p.yaml", []byte(costPolicy))
	if err != nil {
		t.Fatal(err)
	}
	out := Format(p)
	q, err := Parse("q.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(q.Costs) != 2 || q.Costs[0].Model != "*opus*" || q.Costs[1].PerCall != 0.004 || !strings.Contains(string(out), "costs:") {
		t.Errorf("round trip lost costs: %+v\n%s", q.Costs, out)
	}
}
