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

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// The reference evaluator: doc.go's decision model written as the
// plainest loops, sharing nothing with Evaluate but Classify, the table
// and the registry. It reads rules in file order and looks for the
// highest-priority match itself, parses field paths and compiles patterns
// on every call, and never uses the index.

func refEvaluate(p *Policy, in Input, grants GrantChecker) (Outcome, string) {
	cl := classify.Classify(in.Command, in.Place)
	rule := refFirst(p, in, cl)
	name := ""
	if rule != nil {
		name = rule.Name
	}
	out := refCombine(in, cl, rule, p.Shell)
	if out == Ask && (rule == nil || rule.Action == Ask) && grants != nil && refCovered(in, cl, grants, rule != nil) {
		out = Allow
	}
	if cl.Floor.Restrictiveness() > out.Restrictiveness() {
		out = cl.Floor
	}
	return out, name
}

// refFirst is the highest-priority matching rule among the file's rules
// and those of the first profile whose channel and sender match the
// request ("*" matches any); among equal priorities, a profile rule
// before a file rule, then the earliest in the file.
func refFirst(p *Policy, in Input, cl classify.Classification) *Rule {
	var candidates []Rule
	for _, pr := range p.Profiles {
		if (pr.Channel == "*" || pr.Channel == in.Channel) && (pr.Sender == "*" || pr.Sender == in.Sender) {
			candidates = append(candidates, pr.Rules...)
			break
		}
	}
	candidates = append(candidates, p.Rules...)
	slices.SortStableFunc(candidates, func(a, b Rule) int {
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line - b.Pos.Line
		}
		return a.Pos.Col - b.Pos.Col
	})
	var rule *Rule
	for i := range candidates {
		r := &candidates[i]
		if !refRuleMatches(r, in, cl) {
			continue
		}
		if rule == nil || r.Priority > rule.Priority || r.Priority == rule.Priority && r.profile != "" && rule.profile == "" {
			rule = r
		}
	}
	return rule
}

// refLevel is a stack's level for an identity: the user file's, or its
// matching profile's, lowered by any level the system or project file
// writes for the identity.
func refLevel(sys, user, proj *Policy, channel, sender string) Level {
	of := func(p *Policy) (Level, bool) {
		for _, pr := range p.Profiles {
			if (pr.Channel == "*" || pr.Channel == channel) && (pr.Sender == "*" || pr.Sender == sender) {
				if pr.Level != nil {
					return *pr.Level, true
				}
				break
			}
		}
		return p.Level, p.has(setLevel)
	}
	l, _ := of(user)
	for _, p := range []*Policy{sys, proj} {
		if p == nil {
			continue
		}
		if x, wrote := of(p); wrote && x < l {
			l = x
		}
	}
	return l
}

// refCombine is the decision without grants and floor.
func refCombine(in Input, cl classify.Classification, rule *Rule, shell Outcome) Outcome {
	worst := Allowed
	for _, a := range cl.Accesses {
		c := Table(in.Level, a.Capability)
		if c == Denied || (c == ApprovalRequired && worst == Allowed) {
			worst = c
		}
	}
	hasExec := refHasExec(cl)
	switch {
	case rule != nil && rule.Action == Deny:
		return Deny
	case worst == Denied:
		return Deny
	case rule != nil && rule.Action == Ask:
		return Ask
	case rule != nil && rule.Action == Allow:
		return Allow
	case hasExec && shell == Deny:
		return Deny
	case hasExec && shell == Allow:
		return Allow
	case worst == Allowed:
		return Allow
	}
	return Ask
}

func refHasExec(cl classify.Classification) bool {
	for _, a := range cl.Accesses {
		if a.Capability == classify.CodeExec {
			return true
		}
	}
	return false
}

// refStack is Merge's documented decision for a stack, as plain steps:
// the stricter of the system's and user's first matching rules, combined
// with the table and their defaults.shell; then the project's first
// matching deny or ask rule (or, when none of its rules matches, its
// written defaults.shell on code:exec) as a floor; then grants and the
// command's floor. It returns the outcome, the rule and its layer.
func refStack(sys, user, proj *Policy, in Input, grants GrantChecker) (Outcome, string, Layer) {
	cl := classify.Classify(in.Command, in.Place)
	var rule *Rule
	var layer Layer
	shell := user.Shell
	if sys != nil {
		if r := refFirst(sys, in, cl); r != nil {
			rule, layer = r, LayerSystem
		}
		if sys.has(setShell) && sys.Shell.Restrictiveness() > shell.Restrictiveness() {
			shell = sys.Shell
		}
	}
	if r := refFirst(user, in, cl); r != nil && (rule == nil || r.Action.Restrictiveness() > rule.Action.Restrictiveness()) {
		rule, layer = r, LayerUser
	}
	out := refCombine(in, cl, rule, shell)
	askRule := rule != nil
	name := ""
	if rule != nil {
		name = rule.Name
	}
	if proj != nil {
		f := Allow
		var fr *Rule
		pr := refFirst(proj, in, cl)
		switch {
		case pr != nil && pr.Action != Allow:
			f, fr = pr.Action, pr
		case pr == nil && proj.has(setShell) && refHasExec(cl) && proj.Shell != Allow:
			f = proj.Shell
		}
		if fr != nil {
			askRule = true
		}
		if f.Restrictiveness() > out.Restrictiveness() {
			out, name, layer = f, "", ""
			if fr != nil {
				name, layer = fr.Name, LayerProject
			}
		}
	}
	if out == Ask && grants != nil && refCovered(in, cl, grants, askRule) {
		out = Allow
	}
	if cl.Floor.Restrictiveness() > out.Restrictiveness() {
		out = cl.Floor
	}
	if name == "" {
		layer = ""
	}
	return out, name, layer
}

// refCovered: every access that needs approval has a grant, and at least
// one does.
func refCovered(in Input, cl classify.Classification, grants GrantChecker, askRule bool) bool {
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
		if a.Capability == classify.FSWrite && (cl.Verb == "delete" || cl.Verb == "move") {
			// Removing a path needs a grant on a tree that holds it below
			// its top: one covering the directory it is removed from.
			g, ok, _ := grants.CoveringGrant(context.Background(), in.Channel, in.Sender, a.Capability, path.Dir(a.Target), in.Session, in.Now)
			if !ok || !strings.HasSuffix(g.Target, "/**") {
				return false
			}
			covered++
			continue
		}
		_, ok, _ := grants.CoveringGrant(context.Background(), in.Channel, in.Sender, a.Capability, a.Target, in.Session, in.Now)
		if !ok {
			return false
		}
		covered++
	}
	return covered > 0
}

func refRuleMatches(r *Rule, in Input, cl classify.Classification) bool {
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
		// What follows the prefix, or the environment given, may make an
		// allowed prefix another command (prefixscope.go).
		if r.Action == Allow && prefixEscape(&in, &cl, r.ArgvPrefix) != "" {
			return false
		}
	} else if r.Action == Allow && !r.judgesAccesses() && envEscape(&in, r.ReliesOnSandbox()) != "" {
		// A rule on the command's words does not cover a command the
		// environment makes another.
		return false
	}
	if r.Pin != "" && (in.Pins == nil || in.Pins.Pin(in.Command) != r.Pin) {
		return false
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
	all := func(a *classify.Access) bool {
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
	var set []classify.Access
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

func refField(name string, in Input, cl classify.Classification, a *classify.Access) refValue {
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
	if r.IntN(4) > 0 {
		fmt.Fprintf(&b, "level: %s\n", pick(r, []string{"readonly", "supervised", "full"}))
	}
	if r.IntN(4) > 0 {
		fmt.Fprintf(&b, "defaults: {shell: %s}\n", pick(r, []string{"ask", "ask", "deny", "allow"}))
	}
	lists := map[string][]string{}
	n := 1 + r.IntN(12)
	for i := range n {
		list := pick(r, []string{"rules", "rules", "allow", "ask", "deny"})
		lists[list] = append(lists[list], "  - "+randRule(r, fmt.Sprintf("r%d", i), list == "rules")+"\n")
	}
	if r.IntN(4) == 0 {
		b.WriteString("sandbox: " + randSandbox(r) + "\n")
	}
	if r.IntN(3) == 0 {
		b.WriteString("profiles:\n")
		seen := map[string]bool{}
		for i := range 1 + r.IntN(3) {
			ch, snd := pick(r, []string{"cli", "telegram", "*"}), pick(r, []string{"ann", "bob", "*"})
			if seen[ch+"/"+snd] {
				continue
			}
			seen[ch+"/"+snd] = true
			parts := []string{"channel: " + quote(ch), "sender: " + quote(snd)}
			if r.IntN(2) == 0 {
				parts = append(parts, "level: "+pick(r, []string{"readonly", "supervised", "full"}))
			}
			if len(parts) == 2 || r.IntN(3) > 0 {
				var rules []string
				for j := range 1 + r.IntN(4) {
					rules = append(rules, randRule(r, fmt.Sprintf("p%d-%d", i, j), true))
				}
				parts = append(parts, "rules: ["+strings.Join(rules, ", ")+"]")
			}
			b.WriteString("  - {" + strings.Join(parts, ", ") + "}\n")
		}
	}
	for _, l := range []string{"deny", "rules", "allow", "ask"} {
		if len(lists[l]) > 0 {
			b.WriteString(l + ":\n" + strings.Join(lists[l], ""))
		}
	}
	return b.String()
}

// randRule writes one rule as a flow mapping, with an action when it is
// not in an allow, ask or deny list.
func randRule(r *rand.Rand, name string, withAction bool) string {
	var parts []string
	parts = append(parts, "name: "+name)
	if withAction {
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
		parts = append(parts, "capability: "+string(pick(r, []classify.Capability{classify.FSRead, classify.FSWrite, classify.NetworkHTTP, classify.CodeExec})))
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
	if r.IntN(8) == 0 {
		parts = append(parts, "sandbox: "+randSandbox(r))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// randSandbox writes a sandbox section that loads.
func randSandbox(r *rand.Rand) string {
	var kv []string
	paths := func() string {
		var ps []string
		for range r.IntN(3) {
			ps = append(ps, quote(pick(r, []string{"~/.m2", "/srv/data", "~/.cache/x/", "/opt/tools"})))
		}
		return "[" + strings.Join(ps, ", ") + "]"
	}
	ports := func() string {
		var ps []string
		for range r.IntN(3) {
			ps = append(ps, pick(r, []string{"22", "443", "5432", "8080"}))
		}
		return "[" + strings.Join(ps, ", ") + "]"
	}
	for _, k := range []string{"read", "write", "ports", "bind", "network", "required"} {
		if r.IntN(2) == 0 {
			continue
		}
		switch k {
		case "read", "write":
			kv = append(kv, k+": "+paths())
		case "ports", "bind":
			kv = append(kv, k+": "+ports())
		default:
			kv = append(kv, k+": "+pick(r, []string{"true", "false"}))
		}
	}
	return "{" + strings.Join(kv, ", ") + "}"
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
		Place:     classify.Place{Dirs: []string{"/w"}, Home: "/home/u"},
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
			Capability: pick(r, []classify.Capability{classify.FSRead, classify.FSWrite, classify.NetworkHTTP, classify.CodeExec}),
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
	mismatches, matched, byRule, byProfile := 0, 0, 0, 0
	for range policies {
		src := randPolicy(r)
		p, err := Parse("rand.yaml", []byte(src))
		if err != nil {
			t.Fatalf("generated policy does not load: %v\n%s", err, src)
		}
		linear := *p
		linear.index = nil
		linear.Profiles = slices.Clone(p.Profiles)
		for i := range linear.Profiles {
			linear.Profiles[i].index = nil
		}
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
				if strings.HasPrefix(wantRule, "p") {
					byProfile++
				}
			}
			if want == Allow {
				byRule++
			}
		}
	}
	t.Logf("%d pairs, %d with a matching rule (%d of a profile), %d allowed, %d mismatches", policies*perPolicy, matched, byProfile, byRule, mismatches)
	if byProfile < policies*perPolicy/100 {
		t.Fatalf("only %d pairs matched a profile rule", byProfile)
	}
	if mismatches > 0 {
		t.Fatalf("%d mismatches", mismatches)
	}
	// The pairs must exercise rules, not only the table.
	if matched < policies*perPolicy/5 {
		t.Fatalf("only %d pairs matched a rule", matched)
	}
}

// TestReferenceStack compares the evaluation of stacks built by Merge with
// refStack on random (system, user, project, request) quadruples.
func TestReferenceStack(t *testing.T) {
	const stacks, perStack = 1000, 30
	r := rand.New(rand.NewPCG(5, 2026))
	ctx := context.Background()
	mismatches, matched, filtered := 0, 0, 0
	for range stacks {
		srcs := [3]string{randPolicy(r), randPolicy(r), randPolicy(r)}
		var ps [3]*Policy
		for i, src := range srcs {
			ps[i] = mustParseAs(t, []string{"system.yaml", "user.yaml", "project.yaml"}[i], src)
		}
		if r.IntN(4) == 0 {
			ps[0] = nil
		}
		m, _ := Merge(ps[0], ps[1], ps[2])
		for range perStack {
			in, g := randInput(r)
			in.Level = m.LevelFor(in.Channel, in.Sender)
			if want := refLevel(ps[0], ps[1], ps[2], in.Channel, in.Sender); in.Level != want {
				t.Fatalf("LevelFor(%s, %s) = %s, want %s", in.Channel, in.Sender, in.Level, want)
			}
			want, wantRule, wantLayer := refStack(ps[0], ps[1], ps[2], in, g)
			res, err := m.Evaluate(ctx, in, g)
			if err != nil {
				t.Fatal(err)
			}
			rule, layer := "", Layer("")
			if res.Rule != nil {
				rule, layer = res.Rule.Name, res.Rule.Layer
			}
			if res.Outcome != want || rule != wantRule || layer != wantLayer {
				mismatches++
				if mismatches <= 5 {
					t.Errorf("mismatch: %s at %s\n got %s rule %q (%s) %s\nwant %s rule %q (%s)\nsystem:\n%s\nuser:\n%s\nproject:\n%s",
						in.Command.String(), in.Level, res.Outcome, rule, layer, res.Reason, want, wantRule, wantLayer, srcs[0], srcs[1], srcs[2])
				}
			}
			if wantRule != "" {
				matched++
			}
			if wantLayer == LayerProject {
				filtered++
			}
		}
	}
	t.Logf("%d pairs, %d with a rule, %d decided by a project rule, %d mismatches", stacks*perStack, matched, filtered, mismatches)
	if mismatches > 0 {
		t.Fatalf("%d mismatches", mismatches)
	}
	if filtered < stacks*perStack/50 {
		t.Fatalf("only %d pairs decided by a project rule", filtered)
	}
}
