package policy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// The reference evaluator: doc.go's decision model written as the
// plainest loops, sharing nothing with Evaluate but Classify, the table
// and the registry. It reads rules in file order and looks for the
// highest-priority match itself, parses field paths and compiles patterns
// on every call, and never uses the index.

func refEvaluate(p *Policy, in Input, grants GrantChecker) (Outcome, string) {
	cl := Classify(in.Command, in.Place)
	fileOrder := slices.Clone(p.Rules)
	slices.SortStableFunc(fileOrder, func(a, b Rule) int {
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line - b.Pos.Line
		}
		return a.Pos.Col - b.Pos.Col
	})
	var rule *Rule
	for i := range fileOrder {
		r := &fileOrder[i]
		if refRuleMatches(r, in, cl) && (rule == nil || r.Priority > rule.Priority) {
			rule = r
		}
	}
	name := ""
	if rule != nil {
		name = rule.Name
	}

	worst := Allowed
	for _, a := range cl.Accesses {
		c := Table(in.Level, a.Capability)
		if c == Denied || (c == ApprovalRequired && worst == Allowed) {
			worst = c
		}
	}
	hasExec := false
	for _, a := range cl.Accesses {
		if a.Capability == CodeExec {
			hasExec = true
		}
	}
	var out Outcome
	switch {
	case rule != nil && rule.Action == Deny:
		out = Deny
	case worst == Denied:
		out = Deny
	case rule != nil && rule.Action == Ask:
		out = Ask
	case rule != nil && rule.Action == Allow:
		out = Allow
	case hasExec && p.Shell == Deny:
		out = Deny
	case hasExec && p.Shell == Allow:
		out = Allow
	case worst == Allowed:
		out = Allow
	default:
		out = Ask
	}
	if out == Ask && (rule == nil || rule.Action == Ask) && grants != nil && refCovered(in, cl, grants, rule != nil) {
		out = Allow
	}
	if cl.Floor.Restrictiveness() > out.Restrictiveness() {
		out = cl.Floor
	}
	return out, name
}

// refCovered: every access that needs approval has a grant, and at least
// one does.
func refCovered(in Input, cl Classification, grants GrantChecker, askRule bool) bool {
	covered := 0
	for _, a := range cl.Accesses {
		spec, err := Lookup(a.Capability)
		if err != nil {
			return false
		}
		cell := Table(in.Level, a.Capability)
		if spec.DefaultApproval == ApprovalNone {
			continue
		}
		if cell == Allowed && !askRule {
			continue
		}
		if spec.DefaultApproval == ApprovalAlways || a.Dynamic || a.Target == "" {
			return false
		}
		_, ok, _ := grants.CoveringGrant(context.Background(), in.Channel, in.Sender, a.Capability, a.Target, in.Session, in.Now)
		if !ok {
			return false
		}
		covered++
	}
	return covered > 0
}

func refRuleMatches(r *Rule, in Input, cl Classification) bool {
	if len(r.ArgvPrefix) > 0 {
		c := in.Command
		if c.Dynamic || len(c.Argv) < len(r.ArgvPrefix) {
			return false
		}
		for i, want := range r.ArgvPrefix {
			if c.Argv[i].Dynamic {
				return false
			}
			got := c.Argv[i].Value
			if i == 0 && !strings.Contains(want, "/") {
				got = path.Base(got)
			}
			if got != want {
				return false
			}
		}
	}
	if r.Capability != "" || r.InWorkspace {
		bearing := 0
		for _, a := range cl.Accesses {
			spec, err := Lookup(a.Capability)
			if err != nil {
				return false
			}
			if spec.DefaultApproval == ApprovalNone {
				continue
			}
			bearing++
			if r.Capability != "" && a.Capability != r.Capability {
				return false
			}
			if r.InWorkspace {
				ws, t := path.Clean(in.Workspace), path.Clean(a.Target)
				if a.Dynamic || in.Workspace == "" || !path.IsAbs(in.Workspace) || !path.IsAbs(a.Target) ||
					!(t == ws || ws == "/" || strings.HasPrefix(t, ws+"/")) {
					return false
				}
			}
		}
		if bearing == 0 {
			return false
		}
	}
	if len(r.Conditions) == 0 {
		return true
	}
	strict := r.Action == Allow
	// Evaluate every condition on one access (nil: none).
	all := func(a *Access) bool {
		for _, c := range r.Conditions {
			if !refCondition(c, refField(c.Field, in, cl, a), strict) {
				return false
			}
		}
		return true
	}
	perAccess := false
	for _, c := range r.Conditions {
		head := strings.Split(c.Field, ".")[0]
		if head == "capability" || head == "action" || head == "target" || head == "resource" {
			perAccess = true
		}
	}
	if !perAccess {
		return all(nil)
	}
	if !strict {
		for i := range cl.Accesses {
			if all(&cl.Accesses[i]) {
				return true
			}
		}
		return false
	}
	var set []Access
	for _, a := range cl.Accesses {
		if s, err := Lookup(a.Capability); err != nil || s.DefaultApproval != ApprovalNone {
			set = append(set, a)
		}
	}
	if len(set) == 0 {
		set = cl.Accesses
	}
	if len(set) == 0 {
		return false
	}
	for i := range set {
		if !all(&set[i]) {
			return false
		}
	}
	return true
}

// refValue is a field's value: missing, or text, maybe a number, maybe
// not known before the command runs.
type refValue struct {
	present, isNumber, dynamic bool
	text                       string
	number                     float64
}

func refField(name string, in Input, cl Classification, a *Access) refValue {
	text := func(s string, dyn bool) refValue {
		if s == "" {
			return refValue{}
		}
		return refValue{present: true, text: s, dynamic: dyn}
	}
	parts := strings.Split(name, ".")
	c := in.Command
	switch parts[0] {
	case "capability", "action":
		if a == nil {
			return refValue{}
		}
		return text(string(a.Capability), false)
	case "target", "resource":
		if a == nil {
			return refValue{}
		}
		return text(a.Target, a.Dynamic || a.Glob)
	case "command":
		if c.Dynamic || len(c.Argv) == 0 || c.Argv[0].Dynamic {
			return refValue{}
		}
		return text(path.Base(c.Argv[0].Value), false)
	case "argv":
		if len(parts) == 2 {
			n, _ := strconv.Atoi(parts[1])
			if n >= len(c.Argv) {
				return refValue{}
			}
			return refValue{present: true, text: c.Argv[n].Value, dynamic: c.Argv[n].Dynamic || (n == 0 && c.Dynamic)}
		}
		if len(c.Argv) == 0 {
			return refValue{}
		}
		v := refValue{present: true, text: strings.Join(c.Strings(), " "), dynamic: c.Dynamic}
		for _, w := range c.Argv {
			v.dynamic = v.dynamic || w.Dynamic
		}
		return v
	case "args":
		if len(c.Argv) == 0 {
			return refValue{}
		}
		v := refValue{present: true, text: strings.Join(c.Strings()[1:], " ")}
		for _, w := range c.Argv[1:] {
			v.dynamic = v.dynamic || w.Dynamic
		}
		return v
	case "argc":
		return refNumber(float64(len(c.Argv)))
	case "cwd":
		if in.Cwd != "" {
			return text(in.Cwd, false)
		}
		if len(in.Place.Dirs) > 0 {
			return text(in.Place.Dirs[0], false)
		}
		return refValue{}
	case "workspace":
		return text(in.Workspace, false)
	case "level":
		return text(in.Level.String(), false)
	case "channel":
		return text(in.Channel, false)
	case "sender":
		return text(in.Sender, false)
	case "session":
		return text(in.Session, false)
	case "verb":
		return text(cl.Verb, false)
	case "reversibility":
		return text(cl.Reversibility, false)
	case "context", "scope":
		m := in.Context
		if parts[0] == "scope" {
			m = in.Scope
		} else if len(parts) == 2 && parts[1] == "reason" && in.Reason != "" {
			return text(in.Reason, false)
		}
		var cur any = m
		for _, k := range parts[1:] {
			mm, ok := cur.(map[string]any)
			if !ok {
				return refValue{}
			}
			if cur, ok = mm[k]; !ok {
				return refValue{}
			}
		}
		switch x := cur.(type) {
		case string:
			return refValue{present: true, text: x}
		case bool:
			return refValue{present: true, text: strconv.FormatBool(x)}
		case int:
			return refNumber(float64(x))
		case float64:
			return refNumber(x)
		}
	}
	return refValue{}
}

func refNumber(f float64) refValue {
	return refValue{present: true, isNumber: true, number: f, text: strconv.FormatFloat(f, 'f', -1, 64)}
}

func refCondition(c Condition, v refValue, strict bool) bool {
	if !v.present || (strict && v.dynamic) {
		return false
	}
	eq := func(x Value) bool {
		if v.isNumber && x.Number != nil {
			return v.number == *x.Number
		}
		return v.text == x.Text
	}
	x := c.Values[0]
	switch c.Op {
	case OpEquals:
		return eq(x)
	case OpNotEquals:
		return !eq(x)
	case OpStartsWith:
		return strings.HasPrefix(v.text, x.Text)
	case OpEndsWith:
		return strings.HasSuffix(v.text, x.Text)
	case OpMatches:
		return regexp.MustCompile("^(?:" + x.Text + ")$").MatchString(v.text)
	case OpLessThan:
		return v.isNumber && v.number < *x.Number
	case OpGreaterThan:
		return v.isNumber && v.number > *x.Number
	case OpIn:
		return slices.ContainsFunc(c.Values, eq)
	case OpNotIn:
		return !slices.ContainsFunc(c.Values, eq)
	}
	panic("unknown operator " + c.Op)
}

// The random policies and requests draw from small vocabularies, so that
// rules and commands often meet.
var (
	refProgs   = []string{"git", "rm", "cat", "ls", "make", "curl", "echo", "touch", "cp", "mail", "date", "/usr/bin/git", "sed", "tee", "psql"}
	refArgs    = []string{"status", "push", "--force", "-f", "log", "/w/a", "/w/b.pdf", "/etc/passwd", "a.txt", "https://example.com/x", "x@y.z", "-rf", "-i", "clean", ".", "drop table"}
	refStrings = []string{"git", "push", "/w/a", "/w", "status", "git push", "-f", "ann", "telegram", "cli", "fs:read", "example.com", "", "a", "delete", "irreversible", "s1", "pay the invoice", "/w/b.pdf", "/etc/passwd"}
	refRegexps = []string{".*", "git.*", ".*push.*", "/w/.*", "[a-z]+", `.*\.pdf`, "(ann|bob)", ".*(rm -rf|drop table).*", "fs:.*"}
	refFields  = []string{"capability", "action", "target", "resource", "command", "argv", "argv.0", "argv.1", "argv.2", "args", "argc",
		"cwd", "workspace", "level", "channel", "sender", "session", "verb", "reversibility", "context.reason", "context.n", "context.tag",
		"context.nested.k", "scope.size"}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func quote(s string) string { return strconv.Quote(s) }

// randCondition writes one `field: {op: value}` line that loads.
func randCondition(r *rand.Rand) string {
	f := pick(r, refFields)
	numeric := f == "argc" || f == "context.n" || f == "scope.size"
	var ops []Operator
	switch {
	case numeric:
		ops = []Operator{OpLessThan, OpGreaterThan, OpEquals, OpNotEquals, OpIn, OpNotIn}
	case f == "context.nested.k":
		ops = Operators()
	default:
		ops = []Operator{OpEquals, OpNotEquals, OpStartsWith, OpEndsWith, OpMatches, OpIn, OpNotIn}
	}
	op := pick(r, ops)
	num := func() string { return strconv.Itoa(r.IntN(6)) + pick(r, []string{"", "", ".5"}) }
	val := func() string {
		switch {
		case numeric || (f == "context.nested.k" && r.IntN(2) == 0):
			return num()
		case f == "capability" || f == "action":
			return quote(string(pick(r, Registry()).Name))
		case f == "level":
			return pick(r, []string{"readonly", "supervised", "full", "Full"})
		case f == "command":
			return quote(pick(r, []string{"git", "rm", "cat", "make", "ls", "curl"}))
		}
		return quote(pick(r, refStrings))
	}
	var operand string
	switch op {
	case OpLessThan, OpGreaterThan:
		operand = num()
	case OpIn, OpNotIn:
		n := 1 + r.IntN(3)
		vals := make([]string, n)
		for i := range vals {
			vals[i] = val()
		}
		operand = "[" + strings.Join(vals, ", ") + "]"
	case OpMatches:
		switch f {
		case "capability", "action":
			operand = quote(pick(r, []string{"fs:.*", ".*:read", "network:http|mail:send"}))
		case "level":
			operand = quote(pick(r, []string{"full", "(readonly|supervised)"}))
		default:
			operand = quote(pick(r, refRegexps))
		}
	case OpStartsWith, OpEndsWith:
		switch {
		case (f == "capability" || f == "action") && op == OpStartsWith:
			operand = quote(pick(r, []string{"fs:", "code", "network"}))
		case f == "capability" || f == "action":
			operand = quote(pick(r, []string{":read", ":http", "exec"}))
		default:
			operand = val()
		}
	default:
		operand = val()
	}
	return fmt.Sprintf("%s: {%s: %s}", quote(f), op, operand)
}

// randPolicy writes a policy of up to 12 rules in the list forms and under
// rules:, with synonyms, default and explicit priorities.
func randPolicy(r *rand.Rand) string {
	var b strings.Builder
	fmt.Fprintf(&b, "level: %s\ndefaults: {shell: %s}\n", pick(r, []string{"readonly", "supervised", "full"}), pick(r, []string{"ask", "ask", "deny", "allow"}))
	lists := map[string][]string{}
	n := 1 + r.IntN(12)
	for i := range n {
		var parts []string
		parts = append(parts, fmt.Sprintf("name: r%d", i))
		list := pick(r, []string{"rules", "rules", "allow", "ask", "deny"})
		if list == "rules" {
			parts = append(parts, "action: "+pick(r, []string{"allow", "ask", "deny", "auto_approve", "require_approval"}))
		}
		if r.IntN(3) > 0 {
			parts = append(parts, fmt.Sprintf("priority: %d", r.IntN(5)-1))
		}
		matchers := 0
		if r.IntN(3) == 0 {
			words := []string{quote(pick(r, refProgs))}
			for range r.IntN(2) {
				words = append(words, quote(pick(r, refArgs)))
			}
			parts = append(parts, "command: {argv_prefix: ["+strings.Join(words, ", ")+"]}")
			matchers++
		}
		if r.IntN(6) == 0 {
			parts = append(parts, "capability: "+string(pick(r, []Capability{FSRead, FSWrite, NetworkHTTP, CodeExec})))
			matchers++
		}
		if r.IntN(8) == 0 {
			parts = append(parts, "targets: workspace")
			matchers++
		}
		if matchers == 0 || r.IntN(2) == 0 {
			seen := map[string]bool{}
			var conds []string
			for range 1 + r.IntN(3) {
				c := randCondition(r)
				key := c[:strings.Index(c, ":")]
				if !seen[key] {
					seen[key] = true
					conds = append(conds, c)
				}
			}
			parts = append(parts, "conditions: {"+strings.Join(conds, ", ")+"}")
		}
		lists[list] = append(lists[list], "  - {"+strings.Join(parts, ", ")+"}\n")
	}
	for _, l := range []string{"deny", "rules", "allow", "ask"} {
		if len(lists[l]) > 0 {
			b.WriteString(l + ":\n" + strings.Join(lists[l], ""))
		}
	}
	return b.String()
}

func randCommand(r *rand.Rand) shellparse.Command {
	word := func(v string) shellparse.Word {
		if r.IntN(12) == 0 {
			return shellparse.Word{Value: pick(r, []string{"$X", "/w/$(x)", "$HOME/a", "*.go"}), Dynamic: true}
		}
		return shellparse.Word{Value: v}
	}
	c := shellparse.Command{Argv: []shellparse.Word{word(pick(r, refProgs))}}
	for range r.IntN(4) {
		c.Argv = append(c.Argv, word(pick(r, refArgs)))
	}
	if r.IntN(20) == 0 {
		c.Dynamic = true
	}
	if r.IntN(8) == 0 {
		c.Redirects = append(c.Redirects, shellparse.Redirect{Op: pick(r, []string{">", "<"}), Target: word(pick(r, []string{"/w/out", "/etc/x", "out.txt"}))})
	}
	if r.IntN(15) == 0 {
		c.Wrappers = append(c.Wrappers, shellparse.Wrapper{Name: "sudo"})
	}
	if r.IntN(15) == 0 {
		c.Assigns = append(c.Assigns, "PAGER=x")
	}
	return c
}

func randInput(r *rand.Rand) (Input, GrantChecker) {
	in := Input{
		Command:   randCommand(r),
		Place:     Place{Dirs: []string{"/w"}, Home: "/home/u"},
		Workspace: pick(r, []string{"/w", "/w", ""}),
		Level:     pick(r, Levels()),
		Channel:   pick(r, []string{"cli", "telegram"}),
		Sender:    pick(r, []string{"ann", "bob"}),
		Session:   pick(r, []string{"", "s1"}),
		Now:       time.Unix(1e9, 0),
		Reason:    pick(r, []string{"", "pay the invoice", "cleanup"}),
	}
	if r.IntN(2) == 0 {
		in.Cwd = "/w"
	}
	if r.IntN(2) == 0 {
		in.Context = map[string]any{"n": r.IntN(6), "tag": pick(r, []string{"a", "git"}), "nested": map[string]any{"k": pick[any](r, []any{1, 2.5, "git", "x"})}}
	}
	if r.IntN(2) == 0 {
		in.Scope = map[string]any{"size": float64(r.IntN(6))}
	}
	if r.IntN(3) == 0 {
		return in, nil
	}
	var gl GrantList
	for range r.IntN(4) {
		gl = append(gl, Grant{ID: int64(len(gl) + 1), GrantKey: GrantKey{
			Channel: pick(r, []string{"cli", "telegram"}), Sender: pick(r, []string{"ann", "bob"}),
			Capability: pick(r, []Capability{FSRead, FSWrite, NetworkHTTP, CodeExec}),
			Target:     pick(r, []string{"/w/**", "/etc/**", "example.com", "/w/a", "/w/out"}),
		}})
	}
	return in, gl
}

// TestReferenceEvaluator compares Evaluate, with and without its rule
// index, with the reference on 100 000 random (policy, request) pairs.
func TestReferenceEvaluator(t *testing.T) {
	const policies, perPolicy = 2000, 50
	r := rand.New(rand.NewPCG(4, 2026))
	ctx := context.Background()
	mismatches, matched, byRule := 0, 0, 0
	for range policies {
		src := randPolicy(r)
		p, err := Parse("rand.yaml", []byte(src))
		if err != nil {
			t.Fatalf("generated policy does not load: %v\n%s", err, src)
		}
		linear := *p
		linear.index = nil
		for range perPolicy {
			in, g := randInput(r)
			want, wantRule := refEvaluate(p, in, g)
			for _, q := range []*Policy{p, &linear} {
				res, err := q.Evaluate(ctx, in, g)
				if err != nil {
					t.Fatal(err)
				}
				rule := ""
				if res.Rule != nil {
					rule = res.Rule.Name
				}
				if res.Outcome != want || rule != wantRule {
					mismatches++
					if mismatches <= 5 {
						t.Errorf("mismatch (index %v): %s %+v\n got %s rule %q (%s)\nwant %s rule %q\npolicy:\n%s",
							q.index != nil, in.Command.String(), in, res.Outcome, rule, res.Reason, want, wantRule, src)
					}
				}
			}
			if wantRule != "" {
				matched++
			}
			if want == Allow {
				byRule++
			}
		}
	}
	t.Logf("%d pairs, %d with a matching rule, %d allowed, %d mismatches", policies*perPolicy, matched, byRule, mismatches)
	if mismatches > 0 {
		t.Fatalf("%d mismatches", mismatches)
	}
	// The pairs must exercise rules, not only the table.
	if matched < policies*perPolicy/5 {
		t.Fatalf("only %d pairs matched a rule", matched)
	}
}
