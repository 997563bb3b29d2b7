package shellparse

import (
	"maps"
	"reflect"
	"slices"

	"mvdan.cc/sh/v3/syntax"
)

// value is what the parser knows about one shell variable.
type value struct {
	known    bool     // the value is known statically
	set      bool     // the variable is set (meaningful when known)
	str      string   // scalar value, or element 0 of an indexed array
	arr      []string // elements of an indexed array (isArr)
	isArr    bool     // indexed array
	exported bool     // passed to child processes
	attr     bool     // declared with a transforming attribute (-i, -l, -u, -c, -A, -n)
	integer  bool     // declared -i: every value assigned is evaluated as arithmetic
	assoc    bool     // declared -A: subscripts are strings, not arithmetic
	// numeric marks a value not known exactly but known to be an integer
	// (or, for an array, integers): the result of arithmetic, of $#, of
	// $(wc -l), of an assignment to a variable declared -i. Evaluated as
	// arithmetic, it runs nothing.
	numeric bool
	// glob marks a value not known exactly but known to be one of the
	// names a glob matches (str is the pattern), as a for loop's
	// variable over a glob is. known is false: to everything but a plain
	// expansion the value is unknown.
	glob bool
	// refs are the inherited variables (sorted names) whose values may
	// have flowed into this one: x=$TOKEN gives x the refs [TOKEN].
	refs []string
}

func (v value) equal(o value) bool {
	return v.known == o.known && v.set == o.set && v.str == o.str &&
		v.isArr == o.isArr && slices.Equal(v.arr, o.arr) &&
		v.exported == o.exported && v.attr == o.attr && v.integer == o.integer && v.glob == o.glob &&
		v.assoc == o.assoc && v.numeric == o.numeric && slices.Equal(v.refs, o.refs)
}

// unknownValue keeps the flags of v but forgets its contents; it keeps
// what the contents may have come from.
func (v value) unknown() value {
	return value{exported: v.exported, attr: v.attr, integer: v.integer, assoc: v.assoc, refs: v.refs}
}

// numericValue reports a value that, evaluated as arithmetic, holds no
// text to evaluate in turn: an integer (known or not), or unset.
func numericValue(v value) bool {
	if v.numeric {
		return true
	}
	if !v.known {
		return false
	}
	if !v.set {
		return true
	}
	if v.isArr {
		for _, e := range v.arr {
			if !intText(e) {
				return false
			}
		}
		return true
	}
	return intText(v.str)
}

func knownString(s string) value { return value{known: true, set: true, str: s} }

// funcDef is a function definition met in a script.
type funcDef struct {
	name     string
	body     *syntax.Stmt
	exported bool // export -f: child shells may call it
}

// funcSet is what a name may refer to as a function: one of defs, or (none)
// no function at all, when the definition happened on some paths only.
type funcSet struct {
	defs []*funcDef
	none bool
}

func (f funcSet) equal(o funcSet) bool { return f.none == o.none && slices.Equal(f.defs, o.defs) }

// aliasSet is the same for aliases.
type aliasSet struct {
	vals []string
	none bool
}

func (a aliasSet) equal(o aliasSet) bool { return a.none == o.none && slices.Equal(a.vals, o.vals) }

// state is what the parser knows about one shell at one point of a script.
// States are values: branches work on clones which are merged afterwards.
// The maps are shared between clones and copied on the first write.
type state struct {
	env     *Env
	vars    map[string]value
	funcs   map[string]funcSet
	aliases map[string]aliasSet
	// shared marks maps that another state may reference.
	varsShared, funcsShared, aliasesShared bool

	opaque bool // something changed variables in a way not modelled: unset names are unknown
	// namerefs is set once a name reference exists: an assignment to one
	// variable may change another, so no variable is known any more.
	namerefs bool
	// allexport is set -a: every assignment is exported.
	allexport bool
	// pool are inherited names any variable may hold: those of variables
	// no longer tracked, or assigned through a name reference.
	pool []string
	// parent is the state of the shell that started this one.
	parent *state
	// Positional parameters $1..., known when posKnown; $0 when arg0Known.
	pos      []field
	posKnown bool
	// posRefs are the inherited names flowing into the positional
	// parameters (all of them together).
	posRefs   []string
	arg0      field
	arg0Known bool
}

func newState(env *Env) *state {
	return &state{env: env}
}

func (st *state) clone() *state {
	st.varsShared, st.funcsShared, st.aliasesShared = st.vars != nil, st.funcs != nil, st.aliases != nil
	c := *st
	return &c
}

// child is the state a new shell process starts with: exported variables
// only, no functions and no aliases.
func (st *state) child() *state {
	return &state{env: st.env, opaque: st.opaque || st.namerefs, parent: st.clone()}
}

// inherited returns what a child shell sees of a variable assigned in its
// parent; ok is false for names the script never assigned.
func (st *state) inherited(name string) (value, bool) {
	if st.namerefs {
		return value{}, true
	}
	if v, ok := st.vars[name]; ok {
		if v.exported {
			return v, true
		}
		// Assigned but not exported: the child sees either the new value
		// (the name came from the environment) or nothing. Either way it
		// is not known.
		return value{}, true
	}
	if st.opaque {
		return value{}, true
	}
	if st.parent != nil {
		return st.parent.inherited(name)
	}
	return value{}, false
}

// exportedEnv returns, as NAME=value words sorted by name, the variables
// the script exported (or a parent shell exported to this one): the
// environment every program started from this state receives on top of
// the user's. A value not known statically is written "NAME=". Arrays are
// never exported.
func (st *state) exportedEnv() []string {
	any := false
	for s := st; s != nil && !any; s = s.parent {
		for _, v := range s.vars {
			if v.exported {
				any = true
				break
			}
		}
	}
	if !any {
		return nil
	}
	var out []string
	var seen map[string]bool
	for s := st; s != nil; s = s.parent {
		for k, v := range s.vars {
			if seen[k] {
				continue
			}
			if seen == nil {
				seen = make(map[string]bool)
			}
			seen[k] = true
			if !v.exported || v.isArr || (v.known && !v.set) {
				continue
			}
			if v.known && !s.namerefs {
				out = append(out, k+"="+v.str)
			} else {
				out = append(out, k+"=")
			}
		}
	}
	slices.Sort(out)
	return out
}

// assignedHere reports whether the script (or a shell that started this
// one) assigned the variable, as opposed to it coming from the
// environment mnemos was given.
func (st *state) assignedHere(name string) bool {
	for s := st; s != nil; s = s.parent {
		if _, ok := s.vars[name]; ok {
			return true
		}
		if s.opaque || s.namerefs {
			return true
		}
	}
	return false
}

// maxTracked bounds the variables, functions and aliases a state tracks,
// so that copying and merging states stays cheap.
const maxTracked = 256

// trim forgets every variable when there are too many to follow,
// keeping the attributes that change how assignments behave.
func (st *state) trim(room int) {
	if len(st.vars)+room <= maxTracked {
		return
	}
	st.pool = trimmedRefs(st.pool, st.vars)
	kept := make(map[string]value)
	for k, old := range st.vars {
		if old.attr {
			kept[k] = old.unknown()
		}
	}
	if len(kept) > maxTracked/2 {
		// Even the attributes are too many: know nothing at all.
		kept = nil
		st.namerefs = true
	}
	st.vars, st.varsShared, st.opaque = kept, false, true
	st.posKnown, st.pos = false, nil
}

func (st *state) setVar(name string, v value) {
	if _, ok := st.vars[name]; !ok {
		st.trim(1)
	}
	switch {
	case st.vars == nil:
		st.vars = make(map[string]value)
	case st.varsShared:
		st.vars = maps.Clone(st.vars)
	}
	st.varsShared = false
	st.vars[name] = v
	if st.namerefs && len(v.refs) > 0 {
		// The name may refer to any other variable.
		st.pool = unionRefs(st.pool, v.refs)
	}
}

func (st *state) ownFuncs() map[string]funcSet {
	switch {
	case st.funcs == nil:
		st.funcs = make(map[string]funcSet)
	case st.funcsShared:
		st.funcs = maps.Clone(st.funcs)
	}
	st.funcsShared = false
	return st.funcs
}

func (st *state) ownAliases() map[string]aliasSet {
	switch {
	case st.aliases == nil:
		st.aliases = make(map[string]aliasSet)
	case st.aliasesShared:
		st.aliases = maps.Clone(st.aliases)
	}
	st.aliasesShared = false
	return st.aliases
}

// lookup returns what is known about a variable.
func (st *state) lookup(name string) value {
	if st.namerefs {
		return value{exported: st.vars[name].exported}
	}
	if v, ok := st.vars[name]; ok {
		return v
	}
	if st.opaque {
		return value{}
	}
	if st.parent != nil {
		if v, ok := st.parent.inherited(name); ok {
			return v
		}
	}
	switch name {
	case "HOME":
		if st.env.Home != "" {
			return value{known: true, set: true, str: st.env.Home, exported: true}
		}
		return value{}
	case "IFS":
		// Shells do not take IFS from the environment: they start with
		// space, tab and newline ("rm${IFS}-rf${IFS}/" is rm -rf /).
		return value{known: true, set: true, str: " \t\n"}
	}
	if s, ok := st.env.Vars[name]; ok {
		return value{known: true, set: true, str: s, exported: true}
	}
	if name == "PATH" || slices.Contains(st.env.Exported, name) {
		// In the environment: assigning it changes what every program
		// started afterwards is given (PATH=/tmp/x; ls), as export would.
		// Every shell is started with PATH.
		return value{exported: true}
	}
	return value{}
}

// dynamicSpecial lists variables the shell itself changes as it runs.
func dynamicSpecial(name string) bool {
	switch name {
	case "RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "EPOCHSECONDS",
		"EPOCHREALTIME", "PWD", "OLDPWD", "REPLY", "BASH_REMATCH", "PIPESTATUS",
		"OPTIND", "OPTARG", "BASH_COMMAND", "FUNCNAME", "BASH_SOURCE",
		"BASH_LINENO", "COLUMNS", "LINES", "HISTCMD", "UID", "EUID", "PPID",
		"BASHOPTS", "SHELLOPTS", "GROUPS", "HOSTNAME", "MAPFILE", "COPROC":
		return true
	}
	return false
}

// assign records NAME=v, honouring attributes that transform values.
func (st *state) assign(name string, v value) {
	old := st.lookup(name)
	v.exported = v.exported || old.exported || st.allexport
	if old.attr || dynamicSpecial(name) {
		// A variable declared -i holds the integer its value evaluates
		// to.
		v = value{exported: v.exported, attr: old.attr, integer: old.integer, assoc: old.assoc,
			numeric: old.integer || v.numeric, refs: v.refs}
	}
	st.setVar(name, v)
}

// setNumeric records that a variable now holds an integer not known
// statically (the target of an arithmetic assignment).
func (st *state) setNumeric(name string) {
	v := st.lookup(name).unknown()
	v.numeric = true
	st.setVar(name, v)
}

// forget makes a variable unknown.
func (st *state) forget(name string) {
	old := st.lookup(name)
	st.setVar(name, old.unknown())
}

// defineFunc records a function; it reports false when there are too many.
func (st *state) defineFunc(d *funcDef) bool {
	if _, ok := st.funcs[d.name]; !ok && len(st.funcs) >= maxTracked {
		return false
	}
	st.ownFuncs()[d.name] = funcSet{defs: []*funcDef{d}}
	return true
}

// defineAlias records an alias; it reports false when there are too many.
func (st *state) defineAlias(name, val string) bool {
	if _, ok := st.aliases[name]; !ok && len(st.aliases) >= maxTracked {
		return false
	}
	st.ownAliases()[name] = aliasSet{vals: []string{val}}
	return true
}

// makeOpaque forgets every variable.
func (st *state) makeOpaque() {
	if len(st.vars) > 0 {
		vars := make(map[string]value, len(st.vars))
		for k, v := range st.vars {
			vars[k] = v.unknown()
		}
		st.vars, st.varsShared = vars, false
	}
	st.opaque = true
	st.posKnown = false
	st.pos = nil
}

func (st *state) equal(o *state) bool {
	if st.opaque != o.opaque || st.namerefs != o.namerefs || st.allexport != o.allexport || st.posKnown != o.posKnown ||
		st.arg0Known != o.arg0Known || st.parent != o.parent || !slices.Equal(st.pool, o.pool) ||
		!slices.Equal(st.posRefs, o.posRefs) {
		return false
	}
	if st.posKnown && !samePos(st.pos, o.pos) {
		return false
	}
	if st.arg0Known && st.arg0 != o.arg0 {
		return false
	}
	if len(st.vars) != len(o.vars) || len(st.funcs) != len(o.funcs) || len(st.aliases) != len(o.aliases) {
		return false
	}
	if sameMap(st.vars, o.vars) && sameMap(st.funcs, o.funcs) && sameMap(st.aliases, o.aliases) {
		return true
	}
	for k, v := range st.vars {
		ov, ok := o.vars[k]
		if !ok || !v.equal(ov) {
			return false
		}
	}
	for k, v := range st.funcs {
		ov, ok := o.funcs[k]
		if !ok || !v.equal(ov) {
			return false
		}
	}
	for k, v := range st.aliases {
		ov, ok := o.aliases[k]
		if !ok || !v.equal(ov) {
			return false
		}
	}
	return true
}

// merge joins the states of alternative paths: what differs between them
// becomes unknown (variables) or a set of possibilities (functions, aliases).
func merge(outs ...*state) *state {
	res := mergeState(outs...)
	return &res
}

// mergeState is merge returning the joined state as a value, for callers
// that store it in place ("*st = mergeState(st, sub)").
func mergeState(outs ...*state) state {
	first := outs[0]
	res := state{env: first.env}
	for _, o := range outs {
		res.opaque = res.opaque || o.opaque
		res.namerefs = res.namerefs || o.namerefs
		res.allexport = res.allexport || o.allexport
		if len(o.pool) > 0 {
			res.pool = unionRefs(res.pool, o.pool)
		}
		if len(o.posRefs) > 0 {
			res.posRefs = unionRefs(res.posRefs, o.posRefs)
		}
	}
	res.parent = first.parent
	sameVars := func(o *state) bool { return sameMap(o.vars, first.vars) && o.opaque == first.opaque }
	if all(outs, sameVars) && !res.namerefs {
		// Same variables on every path (the common case).
		res.vars, res.varsShared = first.vars, true
		first.varsShared = first.vars != nil
	} else {
		vars := maps.Clone(first.vars)
		if vars == nil {
			vars = make(map[string]value)
		}
		differs := func(k string) {
			v := value{numeric: true, assoc: true}
			var refs []string
			for _, o := range outs {
				ov := o.lookup(k)
				v.exported = v.exported || ov.exported
				v.attr = v.attr || ov.attr
				v.integer = v.integer || ov.integer
				// An integer on every path stays one; subscripts are
				// strings only where every path declared -A.
				v.numeric = v.numeric && numericValue(ov)
				v.assoc = v.assoc && ov.assoc
				refs = o.envRefs(k, refs)
			}
			if len(refs) > 0 {
				v.refs = unionRefs(refs, nil)
			}
			vars[k] = v
		}
		for _, o := range outs[1:] {
			if sameVars(o) {
				continue
			}
			for k, ov := range o.vars {
				if !ov.equal(first.lookup(k)) {
					differs(k)
				}
			}
			for k, fv := range first.vars {
				if _, ok := o.vars[k]; !ok && !o.lookup(k).equal(fv) {
					differs(k)
				}
			}
		}
		res.vars = vars
		res.trim(0)
	}

	if all(outs, func(o *state) bool { return sameMap(o.funcs, first.funcs) }) {
		res.funcs, res.funcsShared = first.funcs, true
		first.funcsShared = first.funcs != nil
	} else {
		fnames := map[string]bool{}
		for _, o := range outs {
			for k := range o.funcs {
				fnames[k] = true
			}
		}
		for k := range fnames {
			var fs funcSet
			for _, o := range outs {
				f, ok := o.funcs[k]
				if !ok {
					fs.none = true
					continue
				}
				fs.none = fs.none || f.none
				for _, d := range f.defs {
					if !slices.Contains(fs.defs, d) {
						fs.defs = append(fs.defs, d)
					}
				}
			}
			res.ownFuncs()[k] = fs
		}
	}

	if all(outs, func(o *state) bool { return sameMap(o.aliases, first.aliases) }) {
		res.aliases, res.aliasesShared = first.aliases, true
		first.aliasesShared = first.aliases != nil
	} else {
		anames := map[string]bool{}
		for _, o := range outs {
			for k := range o.aliases {
				anames[k] = true
			}
		}
		for k := range anames {
			var as aliasSet
			for _, o := range outs {
				a, ok := o.aliases[k]
				if !ok {
					as.none = true
					continue
				}
				as.none = as.none || a.none
				for _, v := range a.vals {
					if !slices.Contains(as.vals, v) {
						as.vals = append(as.vals, v)
					}
				}
			}
			res.ownAliases()[k] = as
		}
	}

	res.posKnown = !res.opaque
	res.pos = first.pos
	res.arg0Known = true
	res.arg0 = first.arg0
	for _, o := range outs {
		if !o.posKnown || !samePos(o.pos, first.pos) {
			res.posKnown = false
		}
		if !o.arg0Known || o.arg0 != first.arg0 {
			res.arg0Known = false
		}
	}
	if !res.posKnown {
		res.pos = nil
	}
	if !res.arg0Known {
		res.arg0 = field{}
	}
	return res
}

func all(outs []*state, f func(*state) bool) bool {
	for _, o := range outs {
		if !f(o) {
			return false
		}
	}
	return true
}

// sameMap reports whether two maps are the same map (or both empty).
func sameMap[M ~map[K]V, K comparable, V any](a, b M) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// samePos compares positional parameters, quickly when they share storage.
func samePos(a, b []field) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	return slices.Equal(a, b)
}
