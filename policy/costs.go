package policy

import (
	"fmt"
	"path"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mnemos-dev/mnemos/classify"
)

// Cost is one entry of the costs: section (seed 000's cost tier): the
// estimated cost of one call to a hosted model, by the provider's API
// host and the model's name.
//
//	costs:
//	  - {host: api.anthropic.com, model: "*opus*", per_call: 0.10}
//	  - {host: "*", per_call: 0.10}
//
// Host and model are shell-style globs ("*" when omitted). The estimate
// of an llm:online access is the per_call of the first entry, in file
// order, whose globs match its host and model; when the command line does
// not name the model, the highest per_call among the entries for its host
// (any model may be called). A layered stack takes the highest estimate
// of its layers: a project policy can raise an estimate, never lower it,
// as it can only restrict. Condition rules read the estimate as the field
// cost (absent when no entry matches).
type Cost struct {
	Host    string  `json:"host"`
	Model   string  `json:"model,omitempty"`
	PerCall float64 `json:"per_call"`
	Pos     Pos     `json:"pos"`
}

// MaxPerCall bounds a per_call estimate: more is a mistake, not a price.
const MaxPerCall = 1000

// EstimateCost is the estimated cost of an llm:online access under the
// policy (a stack: its layers' highest), and whether any entry matched.
func (p *Policy) EstimateCost(a classify.Access) (float64, bool) {
	if a.Capability != classify.LLMOnline {
		return 0, false
	}
	if len(p.layers) > 0 {
		best, found := 0.0, false
		for _, l := range p.layers {
			if v, ok := estimate(l.Costs, a); ok && (!found || v > best) {
				best, found = v, true
			}
		}
		return best, found
	}
	return estimate(p.Costs, a)
}

func estimate(costs []Cost, a classify.Access) (float64, bool) {
	host := strings.ToLower(a.Target)
	if a.Dynamic {
		host = ""
	}
	best, found := 0.0, false
	for _, c := range costs {
		if !globMatch(c.Host, host) {
			continue
		}
		if a.Model != "" {
			if globMatch(c.Model, strings.ToLower(a.Model)) {
				return c.PerCall, true
			}
			continue
		}
		if !found || c.PerCall > best {
			best, found = c.PerCall, true
		}
	}
	return best, found
}

// globMatch matches a value against a glob; "" and "*" match anything,
// an unknown value included.
func globMatch(glob, v string) bool {
	if glob == "" || glob == "*" {
		return true
	}
	ok, err := path.Match(strings.ToLower(glob), v)
	return err == nil && ok && v != ""
}

// costs decodes the costs: section.
func (d *decoder) costs(n *yaml.Node) []Cost {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errs = append(d.errs, d.errAt(n, "costs must be a list of {host, model, per_call}"))
		return nil
	}
	var out []Cost
	for _, item := range n.Content {
		c, err := d.cost(item)
		if err != nil {
			d.errs = append(d.errs, err)
			continue
		}
		out = append(out, c)
	}
	return out
}

func (d *decoder) cost(n *yaml.Node) (Cost, *Error) {
	c := Cost{Pos: d.pos(n)}
	if n.Kind != yaml.MappingNode {
		return c, d.errAt(n, "expected a cost (a mapping with host, model and per_call)")
	}
	hasPrice := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "host", "model":
			s, err := d.strict(v)
			if err != nil {
				return c, err
			}
			if s == "" {
				return c, d.errAt(v, k.Value+" is empty (write \"*\" for any)")
			}
			if _, perr := path.Match(s, ""); perr != nil {
				return c, d.errAt(v, fmt.Sprintf("%s %q is not a valid glob: %v", k.Value, s, perr))
			}
			if k.Value == "host" {
				if strings.ContainsAny(s, "/:@ ") {
					return c, d.errAt(v, fmt.Sprintf("host %q is a host name, without scheme, port or path (e.g. api.anthropic.com)", s))
				}
				c.Host = s
			} else {
				c.Model = s
			}
		case "per_call":
			f, err := d.number(v)
			if err != nil {
				return c, err
			}
			if f < 0 || f > MaxPerCall {
				return c, d.errAt(v, fmt.Sprintf("per_call %s is out of range (0 to %d dollars)", v.Value, MaxPerCall))
			}
			c.PerCall, hasPrice = f, true
		default:
			return c, d.errAt(k, fmt.Sprintf("unknown key %q in a cost (want host, model, per_call)", k.Value))
		}
	}
	if c.Host == "" {
		return c, d.errAt(n, "a cost needs host (the provider's API host, or \"*\")")
	}
	if !hasPrice {
		return c, d.errAt(n, "a cost needs per_call (the estimated dollars a call)")
	}
	return c, nil
}

// costsNode is the costs: section for Format.
func costsNode(cs []Cost) *yaml.Node {
	plain := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	quoted := func(s string) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, c := range cs {
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{plain("host"), quoted(c.Host)}}
		if c.Model != "" {
			m.Content = append(m.Content, plain("model"), quoted(c.Model))
		}
		m.Content = append(m.Content, plain("per_call"), numNode(formatNumber(c.PerCall)))
		seq.Content = append(seq.Content, m)
	}
	return seq
}
