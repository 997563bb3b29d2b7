package shellparse

import (
	"slices"
	"strconv"

	"mvdan.cc/sh/v3/syntax"
)

// Environment references: which variables of the environment the script
// was given flow into a command's words. A variable keeps, next to its
// value, the inherited names its value came from (value.refs), so that
// x=$TOKEN; echo "$x" still names TOKEN. The parser says nothing about
// which names matter; that is for its callers.

// envRefs appends to out the inherited names whose values the variable
// name may hold: the name itself when the script did not assign it, else
// the names its value came from.
func (st *state) envRefs(name string, out []string) []string {
	for s := st; s != nil; s = s.parent {
		out = append(out, s.pool...)
	}
	for s := st; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			if s != st && !v.exported {
				// A child shell sees what the environment had, if anything.
				return append(out, name)
			}
			return append(out, v.refs...)
		}
	}
	return append(out, name)
}

// setRefs records that the variable name now holds values of the
// inherited variables refs only, as after read or a for loop's step.
func (st *state) setRefs(name string, refs []string) {
	v, ok := st.vars[name]
	if !ok {
		v = st.lookup(name)
	}
	if slices.Equal(v.refs, refs) {
		return
	}
	v.refs = refs
	st.setVar(name, v)
}

// unionRefs returns the sorted union of a and b, without duplicates, in
// new storage (nil when both are empty).
func unionRefs(a, b []string) []string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := make([]string, 0, len(a)+len(b))
	out = append(append(out, a...), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// noteRefs adds to the walker's buffer the inherited names a parameter
// expansion reads: the variable's, and for ${!name} with a known name,
// those of the variable it names.
func (w *walker) noteRefs(st *state, pe *syntax.ParamExp) {
	if pe.Param == nil {
		return
	}
	if !validName(pe.Param.Value) {
		if positional(pe.Param.Value) {
			w.refBuf = append(w.refBuf, st.posRefs...)
		}
		return
	}
	name := pe.Param.Value
	w.refBuf = st.envRefs(name, w.refBuf)
	if pe.Excl && pe.Names == 0 {
		if ref := w.lookupParam(st, name); ref.known && ref.set {
			if target := arrayBase(ref.str); validName(target) {
				w.refBuf = st.envRefs(target, w.refBuf)
			}
		}
	}
}

// peekRefs returns, sorted and without duplicates, the names noted since
// mark (nil when none).
func (w *walker) peekRefs(mark int) []string {
	if len(w.refBuf) <= mark {
		return nil
	}
	return unionRefs(w.refBuf[mark:], nil)
}

// takeRefs is peekRefs, forgetting the names noted since mark.
func (w *walker) takeRefs(mark int) []string {
	refs := w.peekRefs(mark)
	w.refBuf = w.refBuf[:min(mark, len(w.refBuf))]
	return refs
}

// readTargets returns the variables read assigns:
// its name operands, -a's array, or the default.
func readTargets(inv *invocation) []string {
	i, opts := parseOpts(inv.args, optSpec{flags: "ers", args: "adinNptu"})
	var names []string
	if arr, ok := optVal(opts, "-a"); ok {
		names = append(names, arrayBase(arr.val))
	}
	for _, a := range inv.args[i:] {
		if !a.dyn {
			names = append(names, a.val)
		}
	}
	if len(names) == 0 {
		names = append(names, "REPLY")
	}
	return names
}

// inputRefs returns the inherited names flowing into a builtin that
// assigns variables: those of its words and of its standard input.
func inputRefs(inv *invocation) []string {
	refs := inv.refs
	if inv.stdin != nil && len(inv.stdin.refs) > 0 {
		refs = unionRefs(refs, inv.stdin.refs)
	}
	return refs
}

// trimmedRefs gathers the names the variables of vars hold, for a state
// that stops tracking them.
func trimmedRefs(pool []string, vars map[string]value) []string {
	var all []string
	for _, v := range vars {
		all = append(all, v.refs...)
	}
	if len(all) == 0 {
		return pool
	}
	return unionRefs(pool, all)
}

// assignmentRefs is assignment, with the inherited names the value came
// from recorded in it.
func (w *walker) assignmentRefs(st *state, a *syntax.Assign) (field, value, string) {
	mark := len(w.refBuf)
	text, v, name := w.assignment(st, a)
	refs := w.takeRefs(mark)
	if name == "" {
		return text, v, name
	}
	if a.Append || a.Index != nil {
		// NAME+=x and NAME[i]=x keep what NAME held.
		refs = unionRefs(st.envRefs(name, nil), refs)
	}
	v.refs = refs
	return text, v, name
}

// positional reports $@, $* and $1....
func positional(name string) bool {
	if name == "@" || name == "*" {
		return true
	}
	n, err := strconv.Atoi(name)
	return err == nil && n > 0
}
