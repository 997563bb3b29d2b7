package policy

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mnemos-dev/mnemos/classify"
)

// Profile gives the requests of some identities their own level and extra
// rules (seed 000's per-user profiles):
//
//	profiles:
//	  - name: family                 # optional; default CHANNEL/SENDER
//	    channel: telegram            # a channel, or "*" for any
//	    sender: "*"                  # a sender, or "*" for any
//	    level: readonly              # optional: the level for these requests
//	    rate_limits:                 # optional: limits for these requests
//	      - {capability: network:http, capacity: 5, refill_per_minute: 1}
//	    rules:                       # optional: rules tried with the file's
//	      - {name: no mail, action: deny, command: {argv_prefix: [mail]}}
//
// The first profile, in file order, whose channel and sender match a
// request applies to it; the others do not. Its level replaces the file's
// level for the request, lower or higher: a profile is written by the
// same person as the file, with the same trust. Each of its rate limits
// likewise replaces the file's limit on the same capability (the file's
// other limits still apply). Its rules join the file's in one priority
// order (highest first); at equal priority a profile rule comes before
// the file's rules. Requests of other identities see none of these.
type Profile struct {
	Name    string `json:"name"`
	Channel string `json:"channel"`
	Sender  string `json:"sender"`
	// Level, when set, is the level of the profile's requests.
	Level *Level `json:"level,omitempty"`
	// RateLimits replace, for the profile's requests, the file's limits on
	// the same capabilities (see RateLimitFor).
	RateLimits []RateLimit `json:"rate_limits,omitempty"`
	// Rules are the profile's own rules, in evaluation order.
	Rules []Rule `json:"rules,omitempty"`
	Pos   Pos    `json:"pos"`

	// view is Rules and the file's rules in one evaluation order, and
	// index its rule index; built by Parse.
	view  []Rule
	index *ruleIndex
}

// Matches reports whether the profile applies to an identity.
func (pr *Profile) Matches(channel, sender string) bool {
	return (pr.Channel == "*" || pr.Channel == channel) && (pr.Sender == "*" || pr.Sender == sender)
}

// covers reports whether every identity b matches, a matches too.
func (pr *Profile) covers(b *Profile) bool {
	return (pr.Channel == "*" || pr.Channel == b.Channel) && (pr.Sender == "*" || pr.Sender == b.Sender)
}

// ProfileFor returns the profile that applies to an identity, or nil.
func (p *Policy) ProfileFor(channel, sender string) *Profile {
	for i := range p.Profiles {
		if p.Profiles[i].Matches(channel, sender) {
			return &p.Profiles[i]
		}
	}
	return nil
}

// LevelFor is the level of a request from this identity: the level of the
// profile that applies to it when that sets one, else the file's level.
// For a stack built by Merge it is the lowest of the layers' (see Merge).
// The gate lowers it further by the request's own --level.
func (p *Policy) LevelFor(channel, sender string) Level {
	if len(p.layers) > 0 {
		return p.stackLevel(channel, sender)
	}
	l, _ := p.levelFor(channel, sender)
	return l
}

// levelFor is LevelFor of one file, and whether the file wrote that level
// (in a profile or at the top).
func (p *Policy) levelFor(channel, sender string) (Level, bool) {
	if pr := p.ProfileFor(channel, sender); pr != nil && pr.Level != nil {
		return *pr.Level, true
	}
	return p.Level, p.has(setLevel)
}

// view is the rule list a request of this identity is matched against:
// the file's rules, or those of the profile that applies merged with them.
func (p *Policy) view(channel, sender string) ([]Rule, *ruleIndex, *Profile) {
	pr := p.ProfileFor(channel, sender)
	if pr == nil || len(pr.Rules) == 0 {
		return p.Rules, p.index, pr
	}
	if pr.view == nil {
		// A profile built by hand: merge now, without an index.
		return mergeRules(pr.Rules, p.Rules), nil, pr
	}
	return pr.view, pr.index, pr
}

// mergeRules merges two lists in evaluation order into one: priority
// descending, a's rules before b's at equal priority.
func mergeRules(a, b []Rule) []Rule {
	out := make([]Rule, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if j == len(b) || i < len(a) && a[i].Priority >= b[j].Priority {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	return out
}

const profileKeys = "name, channel, sender, level, rate_limits, rules, allow, ask or deny"

// profiles decodes the profiles: list.
func (d *decoder) profiles(n *yaml.Node, p *Policy) *Error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return d.errAt(n, "profiles must be a list of {channel, sender, level, rules}")
	}
	byIdentity := map[[2]string]int{}
	byName := map[string]int{}
	for _, item := range n.Content {
		pr, err := d.profile(item)
		if err != nil {
			d.errs = append(d.errs, err)
			continue
		}
		key := [2]string{pr.Channel, pr.Sender}
		if line, dup := byIdentity[key]; dup {
			d.errs = append(d.errs, d.errAt(item, fmt.Sprintf("a profile for channel %q and sender %q is already at line %d", pr.Channel, pr.Sender, line)))
			continue
		}
		if line, dup := byName[pr.Name]; dup {
			d.errs = append(d.errs, d.errAt(item, fmt.Sprintf("duplicate profile name %q (first at line %d)", pr.Name, line)))
			continue
		}
		byIdentity[key], byName[pr.Name] = item.Line, item.Line
		p.Profiles = append(p.Profiles, pr)
	}
	return nil
}

func (d *decoder) profile(n *yaml.Node) (Profile, *Error) {
	pr := Profile{Pos: d.pos(n)}
	if n.Kind != yaml.MappingNode {
		return pr, d.errAt(n, "expected a profile (a mapping with channel, sender, and level or rules)")
	}
	var channel, sender, rules, limits bool
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "name", "channel", "sender":
			s, err := d.strict(v)
			if err != nil {
				return pr, err
			}
			if strings.TrimSpace(s) == "" {
				return pr, d.errAt(v, fmt.Sprintf("profile %s is empty (write \"*\" for any)", k.Value))
			}
			switch k.Value {
			case "name":
				pr.Name = s
			case "channel":
				pr.Channel, channel = s, true
			default:
				pr.Sender, sender = s, true
			}
		case "level":
			s, err := d.str(v)
			if err != nil {
				return pr, err
			}
			l, perr := ParseLevel(s)
			if perr != nil {
				return pr, d.errAt(v, perr.Error())
			}
			pr.Level = &l
		case "rate_limits":
			pr.RateLimits, limits = d.rateLimits(v), true
		case "rules":
			pr.Rules, rules = append(pr.Rules, d.ruleList(v, nil)...), true
		case "allow", "ask", "deny":
			act, _ := classify.ParseOutcome(k.Value)
			pr.Rules, rules = append(pr.Rules, d.ruleList(v, &act)...), true
		default:
			return pr, d.errAt(k, fmt.Sprintf("unknown key %q in profile (want %s)", k.Value, profileKeys))
		}
	}
	switch {
	case !channel:
		return pr, d.errAt(n, "profile has no channel (write \"*\" for any)")
	case !sender:
		return pr, d.errAt(n, "profile has no sender (write \"*\" for any)")
	case pr.Level == nil && !rules && !limits:
		return pr, d.errAt(n, "profile sets nothing: give a level, rate_limits or rules")
	}
	if pr.Name == "" {
		pr.Name = pr.Channel + "/" + pr.Sender
	}
	for i := range pr.Rules {
		pr.Rules[i].profile = pr.Name
	}
	for i := range pr.RateLimits {
		pr.RateLimits[i].Profile = pr.Name
	}
	return pr, nil
}

// lintProfiles warns about profiles an earlier one always takes first,
// and profile rules an earlier rule of the same view always takes first.
func lintProfiles(p *Policy) []Diagnostic {
	var out []Diagnostic
	for j := range p.Profiles {
		b := &p.Profiles[j]
		for i := 0; i < j; i++ {
			a := &p.Profiles[i]
			if a.covers(b) {
				out = append(out, Diagnostic{Pos: b.Pos, Severity: SeverityWarning,
					Msg: fmt.Sprintf("profile %q is unreachable: profile %q (line %d) matches every identity it matches and comes first", b.Name, a.Name, a.Pos.Line)})
				break
			}
		}
		view, _, _ := p.view(b.Channel, b.Sender)
		if p.ProfileFor(b.Channel, b.Sender) != b {
			continue
		}
		for y := range view {
			if view[y].profile == "" {
				continue
			}
			for x := 0; x < y; x++ {
				if shadows(&view[x], &view[y]) {
					out = append(out, Diagnostic{Pos: view[y].Pos, Severity: SeverityWarning,
						Msg: fmt.Sprintf("rule %q is unreachable: rule %q (line %d, priority %d) is evaluated first and matches every command it matches", view[y].Name, view[x].Name, view[x].Pos.Line, view[x].Priority)})
					break
				}
			}
		}
	}
	return out
}
