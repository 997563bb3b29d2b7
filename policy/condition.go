package policy

import (
	"encoding/json"
	"fmt"
	"math"
	"path"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"sync"

	"github.com/mnemos-dev/mnemos/classify"
)

// Operator is one of seed 004's nine condition operators.
type Operator string

// The condition operators.
const (
	OpEquals      Operator = "equals"
	OpNotEquals   Operator = "not_equals"
	OpStartsWith  Operator = "starts_with"
	OpEndsWith    Operator = "ends_with"
	OpMatches     Operator = "matches"
	OpLessThan    Operator = "less_than"
	OpGreaterThan Operator = "greater_than"
	OpIn          Operator = "in"
	OpNotIn       Operator = "not_in"
)

// Operators lists the operators in the order the documentation gives them.
func Operators() []Operator {
	return []Operator{OpEquals, OpNotEquals, OpStartsWith, OpEndsWith, OpMatches, OpLessThan, OpGreaterThan, OpIn, OpNotIn}
}

func parseOperator(s string) (Operator, bool) {
	for _, op := range Operators() {
		if string(op) == s {
			return op, true
		}
	}
	return "", false
}

// MaxRegexLen bounds a matches pattern. Go's regular expressions run in
// linear time, but a pattern longer than this is a mistake, not a policy.
const MaxRegexLen = 1000

// Value is an operand written in the policy: a string, a number or a
// boolean, kept as its canonical text (numbers also as Number).
type Value struct {
	Text   string   `json:"text"`
	Number *float64 `json:"number,omitempty"`
}

// Condition is one test of a condition rule: a field of the request, an
// operator and its operand (one Value, or the list of an in/not_in).
type Condition struct {
	// Field is the dot path as written ("action", "context.reason").
	Field  string   `json:"field"`
	Op     Operator `json:"op"`
	Values []Value  `json:"values"`
	Pos    Pos      `json:"pos"`

	f  field
	re *pattern
}

// fieldKind names what a field path reads from the request.
type fieldKind uint8

const (
	fNone fieldKind = iota
	fCapability
	fTarget
	fCommand
	fArgv
	fArgvN
	fArgs
	fArgc
	fCwd
	fWorkspace
	fLevel
	fChannel
	fSender
	fSession
	fVerb
	fReversibility
	fContext
	fScope
	fCost
	fSandbox
)

// field is a parsed field path.
type field struct {
	kind fieldKind
	n    int      // word index for argv.N
	path []string // keys below context or scope
}

// perAccess reports whether the field differs from one access of the
// command to the next.
func (f field) perAccess() bool { return f.kind == fCapability || f.kind == fTarget || f.kind == fCost }

// numeric reports whether the field can ever hold a number.
func (f field) numeric() bool {
	return f.kind == fArgc || f.kind == fContext || f.kind == fScope || f.kind == fCost
}

const fieldList = "capability (or action), target (or resource), command, argv, argv.N, argc, args, cwd, workspace, level, channel, sender, session, verb, reversibility, cost, sandbox, scope.KEY or context.KEY"

// maxFieldDepth bounds a dot path below scope or context.
const maxFieldDepth = 32

func parseField(s string) (field, error) {
	parts := strings.Split(s, ".")
	for _, p := range parts {
		if p == "" {
			return field{}, fmt.Errorf("field %q has an empty part (write keys separated by single dots)", s)
		}
	}
	head, rest := parts[0], parts[1:]
	simple := map[string]fieldKind{
		"capability": fCapability, "action": fCapability,
		"target": fTarget, "resource": fTarget,
		"command": fCommand, "argv": fArgv, "args": fArgs, "argc": fArgc,
		"cwd": fCwd, "workspace": fWorkspace, "level": fLevel,
		"channel": fChannel, "sender": fSender, "session": fSession,
		"verb": fVerb, "reversibility": fReversibility, "cost": fCost,
		"sandbox": fSandbox,
	}
	switch head {
	case "context", "scope":
		if len(rest) == 0 {
			return field{}, fmt.Errorf("field %q needs a key, e.g. %s.reason", s, head)
		}
		if len(rest) > maxFieldDepth {
			return field{}, fmt.Errorf("field %q is nested deeper than %d keys", s, maxFieldDepth)
		}
		k := fContext
		if head == "scope" {
			k = fScope
		}
		return field{kind: k, path: rest}, nil
	case "argv":
		if len(rest) == 1 {
			if !isDecimalInt(rest[0]) || strings.HasPrefix(rest[0], "-") {
				return field{}, fmt.Errorf("field %q: the word index must be a number from 0, e.g. argv.1", s)
			}
			n, err := strconv.Atoi(rest[0])
			if err != nil || n > 100_000 {
				return field{}, fmt.Errorf("field %q: word index out of range", s)
			}
			return field{kind: fArgvN, n: n}, nil
		}
	}
	if k, ok := simple[head]; ok && len(rest) == 0 {
		return field{kind: k}, nil
	}
	if _, ok := simple[head]; ok {
		return field{}, fmt.Errorf("field %q: %s has no parts", s, head)
	}
	return field{}, fmt.Errorf("unknown field %q (want %s)", s, fieldList)
}

// fval is a field's value for one command (and one access).
type fval struct {
	ok      bool // present
	isNum   bool
	num     float64
	text    string
	dynamic bool // not known before the command runs
}

func strVal(s string, dynamic bool) fval { return fval{ok: true, text: s, dynamic: dynamic} }

func numVal(f float64) fval {
	return fval{ok: true, isNum: true, num: f, text: formatNumber(f)}
}

// formatNumber is the canonical text of a number: no exponent, no
// trailing zeros.
func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// anyVal converts a value from Input.Context or Input.Scope. Maps, lists,
// nil and non-finite numbers are absent for the operators.
func anyVal(v any) fval {
	switch x := v.(type) {
	case string:
		return strVal(x, false)
	case bool:
		return strVal(strconv.FormatBool(x), false)
	case int:
		return numVal(float64(x))
	case int8:
		return numVal(float64(x))
	case int16:
		return numVal(float64(x))
	case int32:
		return numVal(float64(x))
	case int64:
		return numVal(float64(x))
	case uint:
		return numVal(float64(x))
	case uint8:
		return numVal(float64(x))
	case uint16:
		return numVal(float64(x))
	case uint32:
		return numVal(float64(x))
	case uint64:
		return numVal(float64(x))
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fval{}
		}
		return numVal(float64(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fval{}
		}
		return numVal(x)
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fval{}
		}
		return numVal(f)
	}
	return fval{}
}

// lookupPath walks nested maps.
func lookupPath(m map[string]any, keys []string) (any, bool) {
	var cur any = m
	for _, k := range keys {
		switch mm := cur.(type) {
		case map[string]any:
			v, ok := mm[k]
			if !ok {
				return nil, false
			}
			cur = v
		case map[string]string:
			v, ok := mm[k]
			if !ok {
				return nil, false
			}
			cur = v
		default:
			return nil, false
		}
	}
	return cur, true
}

// resolve reads a field for one command and, for capability and target,
// one access (nil when the command has none).
func resolve(f field, in *Input, cl *classify.Classification, a *classify.Access) fval {
	str := func(s string) fval {
		if s == "" {
			return fval{}
		}
		return strVal(s, false)
	}
	cmd := &in.Command
	switch f.kind {
	case fCapability:
		if a == nil {
			return fval{}
		}
		return str(string(a.Capability))
	case fTarget:
		if a == nil || a.Target == "" {
			return fval{}
		}
		return strVal(a.Target, a.Dynamic || a.Glob)
	case fCommand:
		return str(cmd.Name())
	case fArgv, fArgs:
		start := 0
		if f.kind == fArgs {
			start = 1
		}
		if len(cmd.Argv) == 0 {
			return fval{}
		}
		j := &in.joined[start]
		if !j.set {
			var b strings.Builder
			dyn := f.kind == fArgv && cmd.Dynamic
			for i := start; i < len(cmd.Argv); i++ {
				if i > start {
					b.WriteByte(' ')
				}
				b.WriteString(cmd.Argv[i].Value)
				dyn = dyn || cmd.Argv[i].Dynamic
			}
			*j = joinedText{text: b.String(), dyn: dyn, set: true}
		}
		return strVal(j.text, j.dyn)
	case fArgvN:
		if f.n >= len(cmd.Argv) {
			return fval{}
		}
		w := cmd.Argv[f.n]
		return strVal(w.Value, w.Dynamic || (f.n == 0 && cmd.Dynamic))
	case fArgc:
		return numVal(float64(len(cmd.Argv)))
	case fCwd:
		return str(in.cwd())
	case fWorkspace:
		return str(in.Workspace)
	case fLevel:
		return str(in.Level.String())
	case fChannel:
		return str(in.Channel)
	case fSender:
		return str(in.Sender)
	case fSession:
		return str(in.Session)
	case fVerb:
		return str(cl.Verb)
	case fReversibility:
		return str(cl.Reversibility)
	case fContext:
		if len(f.path) == 1 && f.path[0] == "reason" && in.Reason != "" {
			return strVal(in.Reason, false)
		}
		v, ok := lookupPath(in.Context, f.path)
		if !ok {
			return fval{}
		}
		return anyVal(v)
	case fScope:
		v, ok := lookupPath(in.Scope, f.path)
		if !ok {
			return fval{}
		}
		return anyVal(v)
	case fSandbox:
		return str(in.sandboxState(cl))
	case fCost:
		// An llm:online access's estimate from the costs: section;
		// absent for other accesses and when no entry matches.
		if a == nil || in.costs == nil {
			return fval{}
		}
		if v, ok := in.costs.EstimateCost(*a); ok {
			return numVal(v)
		}
		return fval{}
	}
	return fval{}
}

// cwd is the working directory: Input.Cwd, else the first directory of
// the place.
func (in *Input) cwd() string {
	if in.Cwd != "" {
		return in.Cwd
	}
	if len(in.Place.Dirs) > 0 {
		return in.Place.Dirs[0]
	}
	return ""
}

func equalVal(v fval, x Value) bool {
	if v.isNum && x.Number != nil {
		return v.num == *x.Number
	}
	return v.text == x.Text
}

// holds evaluates the condition on a field value. Under an allow rule
// (static) a value not known before the command runs never holds.
func (c *Condition) holds(v fval, static bool) bool {
	if !v.ok || (static && v.dynamic) {
		return false
	}
	switch c.Op {
	case OpEquals:
		return equalVal(v, c.Values[0])
	case OpNotEquals:
		return !equalVal(v, c.Values[0])
	case OpStartsWith:
		return strings.HasPrefix(v.text, c.Values[0].Text)
	case OpEndsWith:
		return strings.HasSuffix(v.text, c.Values[0].Text)
	case OpMatches:
		re := c.re
		if re == nil {
			var err error
			if re, err = compilePattern(c.Values[0].Text); err != nil {
				return false
			}
		}
		return re.get().MatchString(v.text)
	case OpLessThan:
		return v.isNum && c.Values[0].Number != nil && v.num < *c.Values[0].Number
	case OpGreaterThan:
		return v.isNum && c.Values[0].Number != nil && v.num > *c.Values[0].Number
	case OpIn:
		for _, x := range c.Values {
			if equalVal(v, x) {
				return true
			}
		}
		return false
	case OpNotIn:
		for _, x := range c.Values {
			if equalVal(v, x) {
				return false
			}
		}
		return true
	}
	return false
}

// pattern is a matches operand, checked when the policy loads and compiled
// when a condition first needs it: most requests never reach most rules'
// patterns, and compiling them all costs a process start a good part of a
// millisecond.
type pattern struct {
	src  string // anchored
	once sync.Once
	re   *regexp.Regexp
}

func (p *pattern) get() *regexp.Regexp {
	p.once.Do(func() {
		// compilePattern parsed src already; compiling a parsed
		// expression does not fail.
		p.re = regexp.MustCompile(p.src)
	})
	return p.re
}

// compilePattern checks a matches pattern anchored at both ends: the
// whole value must match, as in seed 004's examples (".*@company\.com$").
func compilePattern(p string) (*pattern, error) {
	if len(p) > MaxRegexLen {
		return nil, fmt.Errorf("regular expression is %d characters long (at most %d)", len(p), MaxRegexLen)
	}
	anchored := `^(?:` + p + `)$`
	if _, err := syntax.Parse(anchored, syntax.Perl); err != nil {
		// Report the error of the pattern as written.
		if _, perr := syntax.Parse(p, syntax.Perl); perr != nil {
			return nil, perr
		}
		return nil, err
	}
	return &pattern{src: anchored}, nil
}

// validate checks an operand against the field at load time: the closed
// registry for capability, the three levels for level, numbers only where
// a field can hold one. It also normalises level names.
func (c *Condition) validate() error {
	switch c.Op {
	case OpLessThan, OpGreaterThan:
		if !c.f.numeric() {
			return fmt.Errorf("%s compares numbers, and field %q is never a number (numeric fields: argc, cost, scope.KEY, context.KEY)", c.Op, c.Field)
		}
		return nil
	}
	switch c.f.kind {
	case fCapability:
		switch c.Op {
		case OpEquals, OpNotEquals, OpIn, OpNotIn:
			for _, v := range c.Values {
				if _, err := Lookup(classify.Capability(v.Text)); err != nil {
					return fmt.Errorf("capability %q is not in the registry (see `mnemos policy registry`)", v.Text)
				}
			}
		default:
			n := 0
			for _, s := range Registry() {
				if c.holds(strVal(string(s.Name), false), true) {
					n++
				}
			}
			if n == 0 {
				return fmt.Errorf("%s %q matches no capability in the registry (see `mnemos policy registry`)", c.Op, c.Values[0].Text)
			}
		}
	case fLevel:
		switch c.Op {
		case OpEquals, OpNotEquals, OpIn, OpNotIn:
			for i, v := range c.Values {
				l, err := ParseLevel(v.Text)
				if err != nil {
					return err
				}
				c.Values[i] = Value{Text: l.String()}
			}
		}
	case fCommand:
		switch c.Op {
		case OpEquals, OpNotEquals, OpIn, OpNotIn:
			for _, v := range c.Values {
				if strings.Contains(v.Text, "/") {
					return fmt.Errorf("command is the program's base name, never a path: write %q, or test the path with argv.0", path.Base(v.Text))
				}
			}
		}
	}
	return nil
}

// commandKeys are the program names a command equals/in condition admits.
func (c *Condition) commandKeys() []string {
	if c.f.kind != fCommand {
		return nil
	}
	switch c.Op {
	case OpEquals, OpIn:
		keys := make([]string, 0, len(c.Values))
		for _, v := range c.Values {
			keys = append(keys, v.Text)
		}
		return keys
	}
	return nil
}

// prefixKey is the program name a prefix rule can match.
func prefixKey(prefix []string) string { return path.Base(prefix[0]) }
