package policy

import (
	"fmt"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
)

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

// matchIn returns the first rule of rules, in order, that matches, using
// the index when it describes them.
func matchIn(rules []Rule, ix *ruleIndex, in *Input, cl *classify.Classification) *Rule {
	if !ix.valid(rules) {
		for i := range rules {
			if rules[i].matches(in, cl) {
				return &rules[i]
			}
		}
		return nil
	}
	var named []int32
	if name := in.Command.Name(); name != "" {
		named = ix.byName[name]
	}
	anyl := ix.any
	for len(named) > 0 || len(anyl) > 0 {
		var i int32
		if len(anyl) == 0 || (len(named) > 0 && named[0] < anyl[0]) {
			i, named = named[0], named[1:]
		} else {
			i, anyl = anyl[0], anyl[1:]
		}
		if rules[i].matches(in, cl) {
			return &rules[i]
		}
	}
	return nil
}

// matches reports whether every matcher the rule sets holds for the
// command.
func (r *Rule) matches(in *Input, cl *classify.Classification) bool { return r.check(in, cl, nil) }

// check implements the quantifiers of doc.go: command-level conditions
// hold once; capability and target conditions hold together on one
// access, for every approval-bearing access under an allow rule (all
// accesses when none bears approval) and for at least one access under an
// ask or deny rule. Under an allow rule a value not known before the
// command runs satisfies no condition. When why is not nil and the rule
// does not match, *why says which matcher failed first.
func (r *Rule) check(in *Input, cl *classify.Classification, why *string) bool {
	if len(r.ArgvPrefix) > 0 && !argvHasPrefix(in.Command, r.ArgvPrefix) {
		if why != nil {
			*why = fmt.Sprintf("argv_prefix %v does not match %s", r.ArgvPrefix, strings.Join(in.Command.Strings(), " "))
		}
		return false
	}
	if r.Action == Allow && cl != nil {
		// The words after the prefix, or the environment given, may make
		// it another command (prefixscope.go).
		esc := ""
		switch {
		case len(r.ArgvPrefix) > 0:
			esc = prefixEscape(in, cl, r.ArgvPrefix)
		case len(in.Command.Assigns) > 0 && !r.judgesAccesses():
			esc = envEscape(in, r.ReliesOnSandbox())
		}
		if esc != "" {
			if why != nil {
				*why = "the rule names the command, but " + esc
			}
			return false
		}
	}
	if r.Pin != "" && (in.Pins == nil || in.Pins.Pin(in.Command) != r.Pin) {
		if why != nil {
			*why = "the program, the script it runs or the environment changed since the rule was remembered (pin " + r.Pin[:min(len(r.Pin), 19)] + "…)"
		}
		return false
	}
	if (r.Capability != "" || r.InWorkspace) && !r.shorthandMatches(in, cl, why) {
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
		if v := resolve(f, in, cl, nil); !c.holds(v, static) {
			if why != nil {
				*why = c.whyNot(v, static, nil)
			}
			return false
		}
	}
	if !perAccess {
		return true
	}
	// onAccess returns the first per-access condition that fails on a, or
	// -1 when all hold.
	onAccess := func(a *classify.Access) int {
		for i := range r.Conditions {
			c := &r.Conditions[i]
			if f := c.field(); f.perAccess() && !c.holds(resolve(f, in, cl, a), static) {
				return i
			}
		}
		return -1
	}
	if !static {
		for i := range cl.Accesses {
			if onAccess(&cl.Accesses[i]) < 0 {
				return true
			}
		}
		if why != nil {
			if len(cl.Accesses) == 0 {
				*why = "conditions on capability and target: the command has no access"
			} else {
				c := &r.Conditions[onAccess(&cl.Accesses[0])]
				*why = fmt.Sprintf("condition %s: no access of the command matches", c.text())
			}
		}
		return false
	}
	fails := func(a *classify.Access) bool {
		k := onAccess(a)
		if k < 0 {
			return false
		}
		if why != nil {
			c := &r.Conditions[k]
			*why = c.whyNot(resolve(c.field(), in, cl, a), static, a)
		}
		return true
	}
	bearing := 0
	for i := range cl.Accesses {
		if approvalBearing(cl.Accesses[i].Capability) {
			bearing++
			if fails(&cl.Accesses[i]) {
				return false
			}
		}
	}
	if bearing > 0 {
		return true
	}
	for i := range cl.Accesses {
		if fails(&cl.Accesses[i]) {
			return false
		}
	}
	if len(cl.Accesses) == 0 {
		if why != nil {
			*why = "conditions on capability and target: the command has no access (an allow rule needs one)"
		}
		return false
	}
	return true
}

// text is the condition as written: field, operator, operand.
func (c *Condition) text() string {
	vals := make([]string, len(c.Values))
	for i, v := range c.Values {
		vals[i] = v.Text
	}
	operand := strings.Join(vals, ", ")
	if c.Op == OpIn || c.Op == OpNotIn {
		operand = "[" + operand + "]"
	}
	return fmt.Sprintf("%s %s %s", c.Field, c.Op, operand)
}

// whyNot says why the condition does not hold on v (read from access a,
// when the field is per access).
func (c *Condition) whyNot(v fval, static bool, a *classify.Access) string {
	head := "condition " + c.text()
	name := c.Field
	if a != nil {
		name = fmt.Sprintf("the %s of access %s", c.Field, accessText(a))
	}
	switch {
	case !v.ok:
		if a != nil {
			return fmt.Sprintf("%s: access %s has no %s", head, accessText(a), c.Field)
		}
		return fmt.Sprintf("%s: the request has no %s", head, c.Field)
	case static && v.dynamic:
		return fmt.Sprintf("%s: %s (%q) is not known before the command runs, and an allow rule needs it known", head, name, v.text)
	}
	return fmt.Sprintf("%s: %s is %q", head, name, v.text)
}

func accessText(a *classify.Access) string {
	if a.Target == "" {
		return string(a.Capability)
	}
	return string(a.Capability) + " " + a.Target
}

// approvalBearing reports whether a capability's default approval is not
// none; an unknown capability bears approval.
func approvalBearing(c classify.Capability) bool {
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
func (r *Rule) shorthandMatches(in *Input, cl *classify.Classification, why *string) bool {
	n := 0
	for i := range cl.Accesses {
		a := &cl.Accesses[i]
		spec, ok := lookupSpec(a.Capability)
		if !ok {
			if why != nil {
				*why = fmt.Sprintf("capability %s of the command is not in the registry", a.Capability)
			}
			return false
		}
		if spec.DefaultApproval == ApprovalNone {
			continue
		}
		n++
		if r.Capability != "" && a.Capability != r.Capability {
			if why != nil {
				*why = fmt.Sprintf("capability %s: the command also does %s", r.Capability, accessText(a))
			}
			return false
		}
		if r.InWorkspace && (a.Dynamic || !classify.Within(in.Workspace, a.Target)) {
			if why != nil {
				if a.Dynamic {
					*why = fmt.Sprintf("targets workspace: the target of %s is not known before the command runs", accessText(a))
				} else {
					*why = fmt.Sprintf("targets workspace: %s is outside the workspace %q", accessText(a), in.Workspace)
				}
			}
			return false
		}
	}
	if n == 0 && why != nil {
		*why = "capability and targets: the command has no access that needs approval"
	}
	return n > 0
}
