package policy

import (
	"context"
	"fmt"

	"github.com/mnemos-dev/mnemos/classify"
)

// RuleTrace is one rule Explain considered, in the order it considered
// them.
type RuleTrace struct {
	// Rule names the rule, with its layer and profile.
	Rule     RuleRef `json:"rule"`
	Priority int     `json:"priority"`
	Matched  bool    `json:"matched"`
	// Why says, for a rule that did not match, the first matcher that
	// failed ("argv_prefix [git push] does not match git status").
	Why string `json:"why,omitempty"`
	// Selected marks the rule the Result names.
	Selected bool `json:"selected,omitempty"`
	// Note says, for a rule that matched but is not selected, why not.
	Note string `json:"note,omitempty"`
}

// Explain evaluates like Evaluate and returns the same Result, with the
// rules it considered: for each layer (one for a single file), the rules
// of the view of the request's identity in evaluation order, up to and
// including the first that matches, each with why it did not match. The
// table cell of each access is in Result.Accesses and the grants looked
// up in Result.Consulted.
//
// Explain tries every rule in turn where Evaluate skips, through its
// index, rules keyed to other programs; both reach the same result.
func (p *Policy) Explain(ctx context.Context, in Input, grants GrantChecker) (Result, []RuleTrace, error) {
	return p.ExplainClassified(ctx, in, classify.Classify(in.Command, in.Place), grants)
}

// ExplainClassified is Explain for a command already classified: cl must
// be Classify(in.Command, in.Place).
func (p *Policy) ExplainClassified(ctx context.Context, in Input, cl classify.Classification, grants GrantChecker) (Result, []RuleTrace, error) {
	tr := &tracer{}
	res, err := p.evaluateClassified(ctx, in, cl, grants, tr)
	for i := range tr.out {
		t := &tr.out[i]
		if !t.Matched || t.Note != "" {
			continue
		}
		if r := res.Rule; r != nil && r.Name == t.Rule.Name && r.Layer == t.Rule.Layer && r.Pos == t.Rule.Pos {
			t.Selected = true
			continue
		}
		if r := res.Rule; r != nil {
			t.Note = fmt.Sprintf("the %s rule %q is stricter and is selected", layerName(r.Layer), r.Name)
		}
	}
	return res, tr.out, err
}

func layerName(l Layer) string {
	if l == "" {
		return "file's"
	}
	return string(l)
}

// tracer records the rules considered by one evaluation.
type tracer struct {
	out []RuleTrace
}

// scan tries rules in order until one matches, recording each.
func (t *tracer) scan(rules []Rule, layer Layer, in *Input, cl *classify.Classification) *Rule {
	for i := range rules {
		r := &rules[i]
		var why string
		ok := r.check(in, cl, &why)
		t.out = append(t.out, RuleTrace{Rule: *ruleRef(r, layer), Priority: r.Priority, Matched: ok, Why: why})
		if ok {
			return r
		}
	}
	return nil
}

// note annotates the last rule recorded.
func (t *tracer) note(s string) {
	if t != nil && len(t.out) > 0 {
		t.out[len(t.out)-1].Note = s
	}
}
