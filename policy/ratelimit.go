package policy

import (
	"fmt"
	"strconv"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mnemos-dev/mnemos/classify"
)

// RateLimit is one entry of a rate_limits: list (seed 000's per-capability
// token bucket), at the top of a policy file or in a profile:
//
//	rate_limits:
//	  - capability: network:http     # an entry of the registry
//	    capacity: 20                 # bucket size: at most 20 in a burst
//	    refill_per_minute: 10        # tokens added per minute (0.5: one every two minutes)
//	    over: ask                    # what a command gets once the bucket is empty: ask (default) or deny
//
// The bucket of an identity (channel, sender) and a capability starts
// full. Each command that uses the capability and is let through takes a
// token; with none left, the command gets Over instead, until tokens
// refill. The policy only describes limits: the gate keeps the buckets.
//
// Parse guarantees Capacity from 1 to MaxRateCapacity, RefillPerMinute
// from MinRefillPerMinute to MaxRefillPerMinute, and Over Ask or Deny.
type RateLimit struct {
	Capability      classify.Capability `json:"capability"`
	Capacity        int                 `json:"capacity"`
	RefillPerMinute float64             `json:"refill_per_minute"`
	Over            Outcome             `json:"over"`
	// Profile is the name of the profile that sets the limit ("" for the
	// file's own), and Layer the layer of its file in a stack built by
	// Merge ("" for a policy used alone).
	Profile string `json:"profile,omitempty"`
	Layer   Layer  `json:"layer,omitempty"`
	// Pos is where the limit was written. For a limit that RateLimitFor
	// combined from several layers, Profile, Layer and Pos are those of the
	// limit whose capacity applies (the most authoritative on a tie).
	Pos Pos `json:"pos"`

	// Where each field's value was written (zero when not written).
	capabilityAt, capacityAt, refillAt, overAt Pos
}

// Bounds of a rate limit's numbers.
const (
	MaxRateCapacity    = 1_000_000
	MinRefillPerMinute = 0.000001
	MaxRefillPerMinute = 1_000_000
)

// String describes the limit in one line, e.g. "network:http: 20 tokens,
// 10 per minute, then ask".
func (l RateLimit) String() string {
	return fmt.Sprintf("%s: %d tokens, %s per minute, then %s", l.Capability, l.Capacity, formatNumber(l.RefillPerMinute), l.over())
}

// over is Over, which is never allow: a limit only makes a decision
// stricter.
func (l RateLimit) over() Outcome {
	if l.Over == Allow {
		return Ask
	}
	return l.Over
}

// RateLimitFor is the rate limit on capability c for the requests of an
// identity, and whether there is one. In one file, the limit of the
// profile that applies to the identity (ProfileFor) when that profile
// sets one for c, else the file's own. In a stack built by Merge, the
// limits of all the layers that set one combine field by field, the
// strictest each time: the smallest capacity, the slowest refill, deny
// over ask. A layer may so only tighten the limits of the layers above it
// (including by setting a limit they do not), never loosen them.
func (p *Policy) RateLimitFor(c classify.Capability, channel, sender string) (RateLimit, bool) {
	if len(p.layers) == 0 {
		return p.fileRateLimit(c, channel, sender)
	}
	var out RateLimit
	found := false
	for _, l := range p.layers {
		rl, ok := l.fileRateLimit(c, channel, sender)
		switch {
		case !ok:
		case !found:
			out, found = rl, true
		default:
			out = tighter(out, rl)
		}
	}
	return out, found
}

// RateLimitsFor is every rate limit that applies to the requests of an
// identity, as RateLimitFor gives them, in registry order.
func (p *Policy) RateLimitsFor(channel, sender string) []RateLimit {
	var out []RateLimit
	for _, s := range Registry() {
		if rl, ok := p.RateLimitFor(s.Name, channel, sender); ok {
			out = append(out, rl)
		}
	}
	return out
}

// fileRateLimit is RateLimitFor of one file.
func (p *Policy) fileRateLimit(c classify.Capability, channel, sender string) (RateLimit, bool) {
	if pr := p.ProfileFor(channel, sender); pr != nil {
		if rl, ok := findRateLimit(pr.RateLimits, c); ok {
			rl.Layer = p.Layer
			return rl, true
		}
	}
	rl, ok := findRateLimit(p.RateLimits, c)
	rl.Layer = p.Layer
	return rl, ok
}

func findRateLimit(ls []RateLimit, c classify.Capability) (RateLimit, bool) {
	for _, l := range ls {
		if l.Capability == c {
			l.Over = l.over()
			return l, true
		}
	}
	return RateLimit{}, false
}

// tighter combines two limits of one capability, a from the more
// authoritative layer: the smaller capacity (with its position), the
// slower refill, the stricter over.
func tighter(a, b RateLimit) RateLimit {
	out := a
	if b.Capacity < a.Capacity {
		out.Capacity, out.Profile, out.Layer, out.Pos = b.Capacity, b.Profile, b.Layer, b.Pos
	}
	out.RefillPerMinute = min(a.RefillPerMinute, b.RefillPerMinute)
	out.Over = Stricter(a.over(), b.over())
	return out
}

// rateLimitSection is the stack's top-level rate limits, for display:
// those of every layer, combined per capability as RateLimitFor combines
// them, in the order the capabilities first appear.
func (p *Policy) rateLimitSection() []RateLimit {
	var out []RateLimit
	for _, l := range p.layers {
		for _, rl := range l.RateLimits {
			rl.Layer = l.Layer
			rl.Over = rl.over()
			i := 0
			for i < len(out) && out[i].Capability != rl.Capability {
				i++
			}
			if i == len(out) {
				out = append(out, rl)
			} else {
				out[i] = tighter(out[i], rl)
			}
		}
	}
	return out
}

// rateLimitLoosening reports the rate limits of lower that are looser
// than those upper sets for the same capability (for a profile's limit,
// than the one upper gives the profile's identity), positioned at the
// value that loosens. what names upper in messages.
func rateLimitLoosening(upper, lower *Policy, what string) []Diagnostic {
	var out []Diagnostic
	warn := func(at, fallback Pos, msg string) {
		if at.Line == 0 {
			at = fallback
		}
		out = append(out, Diagnostic{Pos: at, Severity: SeverityWarning, Msg: msg})
	}
	check := func(whose string, l, u RateLimit) {
		if l.Capacity > u.Capacity {
			warn(l.capacityAt, l.Pos, fmt.Sprintf("%srate limit for %s: capacity %d is larger than %d in the %s; the smaller applies", whose, l.Capability, l.Capacity, u.Capacity, what))
		}
		if l.RefillPerMinute > u.RefillPerMinute {
			warn(l.refillAt, l.Pos, fmt.Sprintf("%srate limit for %s: refill_per_minute %s is faster than %s in the %s; the slower applies", whose, l.Capability, formatNumber(l.RefillPerMinute), formatNumber(u.RefillPerMinute), what))
		}
		if l.overAt.Line != 0 && l.over() == Ask && u.over() == Deny {
			warn(l.overAt, l.Pos, fmt.Sprintf("%srate limit for %s: over: ask is looser than over: deny in the %s; deny applies", whose, l.Capability, what))
		}
	}
	for _, l := range lower.RateLimits {
		if u, ok := findRateLimit(upper.RateLimits, l.Capability); ok {
			check("", l, u)
		}
	}
	for i := range lower.Profiles {
		pr := &lower.Profiles[i]
		for _, l := range pr.RateLimits {
			if u, ok := upper.RateLimitFor(l.Capability, pr.Channel, pr.Sender); ok {
				check(fmt.Sprintf("profile %q: ", pr.Name), l, u)
			}
		}
	}
	return out
}

const rateLimitKeys = "capability, capacity, refill_per_minute or over"

// rateLimits decodes a rate_limits: list, at the top of a file or in a
// profile. An entry with an error is reported and skipped, so one pass
// finds the errors of every entry.
func (d *decoder) rateLimits(n *yaml.Node) []RateLimit {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errs = append(d.errs, d.errAt(n, "rate_limits must be a list of {capability, capacity, refill_per_minute, over}"))
		return nil
	}
	var out []RateLimit
	first := map[classify.Capability]int{}
	for _, item := range n.Content {
		rl, err := d.rateLimit(item)
		if err != nil {
			d.errs = append(d.errs, err)
			continue
		}
		if line, dup := first[rl.Capability]; dup {
			d.errs = append(d.errs, &Error{File: d.file, Line: rl.capabilityAt.Line, Col: rl.capabilityAt.Col,
				Msg: fmt.Sprintf("duplicate rate limit for %s (first at line %d); one limit per capability", rl.Capability, line)})
			continue
		}
		first[rl.Capability] = item.Line
		out = append(out, rl)
	}
	return out
}

// rateLimit decodes one entry of a rate_limits: list.
func (d *decoder) rateLimit(n *yaml.Node) (RateLimit, *Error) {
	rl := RateLimit{Over: Ask, Pos: d.pos(n)}
	if n.Kind != yaml.MappingNode {
		return rl, d.errAt(n, "expected a rate limit (a mapping with capability, capacity and refill_per_minute)")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "capability":
			s, err := d.strict(v)
			if err != nil {
				return rl, err
			}
			if _, ok := lookupSpec(classify.Capability(s)); !ok {
				return rl, d.errAt(v, fmt.Sprintf("capability %q is not in the registry (see `mnemos policy registry`)", s))
			}
			rl.Capability, rl.capabilityAt = classify.Capability(s), d.pos(v)
		case "capacity":
			c, err := d.capacity(v)
			if err != nil {
				return rl, err
			}
			rl.Capacity, rl.capacityAt = c, d.pos(v)
		case "refill_per_minute":
			f, err := d.number(v)
			if err != nil {
				return rl, err
			}
			switch {
			case f <= 0:
				return rl, d.errAt(v, fmt.Sprintf("refill_per_minute %s must be greater than 0; to refuse a capability outright, write a deny rule", v.Value))
			case f < MinRefillPerMinute || f > MaxRefillPerMinute:
				return rl, d.errAt(v, fmt.Sprintf("refill_per_minute %s is out of range (%s to %s)", v.Value, formatNumber(MinRefillPerMinute), formatNumber(MaxRefillPerMinute)))
			}
			rl.RefillPerMinute, rl.refillAt = f, d.pos(v)
		case "over":
			s, err := d.str(v)
			if err != nil {
				return rl, err
			}
			switch s {
			case "ask":
				rl.Over = Ask
			case "deny":
				rl.Over = Deny
			default:
				return rl, d.errAt(v, fmt.Sprintf("over %q must be ask or deny: what a command gets once the limit is reached", s))
			}
			rl.overAt = d.pos(v)
		default:
			return rl, d.errAt(k, fmt.Sprintf("unknown key %q in rate limit (want %s)", k.Value, rateLimitKeys))
		}
	}
	switch {
	case rl.Capability == "":
		return rl, d.errAt(n, "rate limit has no capability")
	case rl.Capacity == 0:
		return rl, d.errAt(n, fmt.Sprintf("rate limit for %s has no capacity (the bucket size, e.g. capacity: 20)", rl.Capability))
	case rl.RefillPerMinute == 0:
		return rl, d.errAt(n, fmt.Sprintf("rate limit for %s has no refill_per_minute (tokens added per minute, e.g. refill_per_minute: 10)", rl.Capability))
	}
	return rl, nil
}

// capacity reads a bucket size: a plain decimal integer from 1 to
// MaxRateCapacity.
func (d *decoder) capacity(n *yaml.Node) (int, *Error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return 0, d.errAt(n, "capacity must be a whole number of tokens, e.g. 20")
	}
	s := n.Value
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		return 0, d.errAt(n, fmt.Sprintf("expected a number, found the string %q (remove the quotes)", s))
	}
	if !isDecimalInt(s) {
		return 0, d.errAt(n, fmt.Sprintf("expected a decimal integer, found %q", s))
	}
	v, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err == nil && v < 1:
		return 0, d.errAt(n, fmt.Sprintf("capacity %s must be at least 1; to refuse a capability outright, write a deny rule", s))
	case err != nil || v > MaxRateCapacity:
		return 0, d.errAt(n, fmt.Sprintf("capacity %s is out of range (1 to %d)", s, MaxRateCapacity))
	}
	return int(v), nil
}

// rateLimitsNode writes a rate_limits: list in canonical form.
func rateLimitsNode(ls []RateLimit) *yaml.Node {
	plain := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, l := range ls {
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
			plain("capability"), {Kind: yaml.ScalarNode, Tag: "!!str", Value: string(l.Capability), Style: yaml.DoubleQuotedStyle},
			plain("capacity"), {Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(l.Capacity)},
			plain("refill_per_minute"), numNode(formatNumber(l.RefillPerMinute)),
			plain("over"), plain(l.over().String()),
		}})
	}
	return seq
}
