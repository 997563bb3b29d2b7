package policy

// ruleIndex narrows the rules worth trying for a command to those that
// can match its program name, keeping evaluation order. A rule is keyed
// by the base name of its argv_prefix's first word, or by the names of a
// `command: {equals|in: ...}` condition; every other rule is tried for
// every command.
type ruleIndex struct {
	first  *Rule
	n      int
	byName map[string][]int32
	any    []int32
}

func buildIndex(rules []Rule) *ruleIndex {
	ix := &ruleIndex{n: len(rules), byName: map[string][]int32{}}
	if len(rules) > 0 {
		ix.first = &rules[0]
	}
	for i := range rules {
		keys := rules[i].indexKeys()
		if len(keys) == 0 {
			ix.any = append(ix.any, int32(i))
			continue
		}
		for _, k := range keys {
			l := ix.byName[k]
			if len(l) == 0 || l[len(l)-1] != int32(i) {
				ix.byName[k] = append(l, int32(i))
			}
		}
	}
	return ix
}

// indexKeys are the only program names the rule can match, or nil when
// it may match any.
func (r *Rule) indexKeys() []string {
	if len(r.ArgvPrefix) > 0 {
		return []string{prefixKey(r.ArgvPrefix)}
	}
	for i := range r.Conditions {
		var keys []string
		for _, k := range r.Conditions[i].commandKeys() {
			if k != "" {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			return keys
		}
	}
	return nil
}

// valid reports whether the index still describes these rules.
func (ix *ruleIndex) valid(rules []Rule) bool {
	return ix != nil && ix.n == len(rules) && (ix.n == 0 || ix.first == &rules[0])
}

// match returns the first rule, in priority order, that matches.
func (p *Policy) match(in *Input, cl *Classification) *Rule {
	if !p.index.valid(p.Rules) {
		for i := range p.Rules {
			if p.Rules[i].matches(in, cl) {
				return &p.Rules[i]
			}
		}
		return nil
	}
	var named []int32
	if name := in.Command.Name(); name != "" {
		named = p.index.byName[name]
	}
	anyl := p.index.any
	for len(named) > 0 || len(anyl) > 0 {
		var i int32
		if len(anyl) == 0 || (len(named) > 0 && named[0] < anyl[0]) {
			i, named = named[0], named[1:]
		} else {
			i, anyl = anyl[0], anyl[1:]
		}
		if p.Rules[i].matches(in, cl) {
			return &p.Rules[i]
		}
	}
	return nil
}

// Matches reports whether every matcher the rule sets holds for the
// command.
func (r *Rule) Matches(in Input, cl Classification) bool { return r.matches(&in, &cl) }

// matches implements the quantifiers of doc.go: command-level conditions
// hold once; capability and target conditions hold together on one
// access, for every approval-bearing access under an allow rule (all
// accesses when none bears approval) and for at least one access under an
// ask or deny rule. Under an allow rule a value not known before the
// command runs satisfies no condition.
func (r *Rule) matches(in *Input, cl *Classification) bool {
	if len(r.ArgvPrefix) > 0 && !argvHasPrefix(in.Command, r.ArgvPrefix) {
		return false
	}
	if (r.Capability != "" || r.InWorkspace) && !r.shorthandMatches(in, cl) {
		return false
	}
	if len(r.Conditions) == 0 {
		return true
	}
	static := r.Action == Allow
	perAccess := false
	for i := range r.Conditions {
		c := &r.Conditions[i]
		f := c.field()
		if f.perAccess() {
			perAccess = true
			continue
		}
		if !c.holds(resolve(f, in, cl, nil), static) {
			return false
		}
	}
	if !perAccess {
		return true
	}
	onAccess := func(a *Access) bool {
		for i := range r.Conditions {
			c := &r.Conditions[i]
			if f := c.field(); f.perAccess() && !c.holds(resolve(f, in, cl, a), static) {
				return false
			}
		}
		return true
	}
	if !static {
		for i := range cl.Accesses {
			if onAccess(&cl.Accesses[i]) {
				return true
			}
		}
		return false
	}
	bearing := 0
	for i := range cl.Accesses {
		if approvalBearing(cl.Accesses[i].Capability) {
			bearing++
			if !onAccess(&cl.Accesses[i]) {
				return false
			}
		}
	}
	if bearing > 0 {
		return true
	}
	for i := range cl.Accesses {
		if !onAccess(&cl.Accesses[i]) {
			return false
		}
	}
	return len(cl.Accesses) > 0
}

// approvalBearing reports whether a capability's default approval is not
// none; an unknown capability bears approval.
func approvalBearing(c Capability) bool {
	s, ok := lookupSpec(c)
	return !ok || s.DefaultApproval != ApprovalNone
}

// field returns the parsed field path (parsing it for a hand-built
// condition; a path that does not parse reads as absent).
func (c *Condition) field() field {
	if c.f.kind != fNone {
		return c.f
	}
	f, err := parseField(c.Field)
	if err != nil {
		return field{}
	}
	return f
}

// shorthandMatches is the capability: and targets: workspace shorthand:
// every approval-bearing access uses the capability and lies in the
// workspace, and there is at least one.
func (r *Rule) shorthandMatches(in *Input, cl *Classification) bool {
	n := 0
	for _, a := range cl.Accesses {
		spec, ok := lookupSpec(a.Capability)
		if !ok {
			return false
		}
		if spec.DefaultApproval == ApprovalNone {
			continue
		}
		n++
		if r.Capability != "" && a.Capability != r.Capability {
			return false
		}
		if r.InWorkspace && (a.Dynamic || !within(in.Workspace, a.Target)) {
			return false
		}
	}
	return n > 0
}
