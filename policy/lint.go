package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Severity says whether a diagnostic stops the policy from loading.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Diagnostic is one finding of Lint.
type Diagnostic struct {
	Pos      Pos      `json:"pos"`
	Severity Severity `json:"severity"`
	Msg      string   `json:"message"`
}

// String is FILE:LINE:COL: message for an error (the same text Parse
// returns) and FILE:LINE:COL: warning: message for a warning.
func (d Diagnostic) String() string {
	msg := d.Msg
	if d.Severity == SeverityWarning {
		msg = "warning: " + msg
	}
	return (&Error{File: d.Pos.File, Line: d.Pos.Line, Col: d.Pos.Col, Msg: msg}).Error()
}

// Lint validates policy source and reports every error, in file order;
// when there is none, it reports warnings: rules that can never decide
// because an earlier rule (in evaluation order) matches every command
// they match, profiles an earlier profile always takes first, and sandbox
// settings that can have no effect. The policy loads if and only if no
// diagnostic is an error. LintLayered adds what a file of a stack cannot
// loosen.
func Lint(name string, src []byte) []Diagnostic {
	p, errs := parse(name, src)
	if len(errs) > 0 {
		out := make([]Diagnostic, len(errs))
		for i, e := range errs {
			out[i] = Diagnostic{Pos: Pos{File: e.File, Line: e.Line, Col: e.Col}, Severity: SeverityError, Msg: e.Msg}
		}
		return out
	}
	var out []Diagnostic
	for j := range p.Rules {
		for i := 0; i < j; i++ {
			a, b := &p.Rules[i], &p.Rules[j]
			if shadows(a, b) {
				out = append(out, Diagnostic{Pos: b.Pos, Severity: SeverityWarning,
					Msg: fmt.Sprintf("rule %q is unreachable: rule %q (line %d, priority %d) is evaluated first and matches every command it matches", b.Name, a.Name, a.Pos.Line, a.Priority)})
				break
			}
		}
	}
	out = append(out, lintProfiles(p)...)
	out = append(out, lintSandbox(p)...)
	slices.SortStableFunc(out, func(x, y Diagnostic) int {
		if x.Pos.Line != y.Pos.Line {
			return x.Pos.Line - y.Pos.Line
		}
		return x.Pos.Col - y.Pos.Col
	})
	return out
}

// HasErrors reports whether any diagnostic is an error.
func HasErrors(diags []Diagnostic) bool {
	for _, d := range diags {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// shadows reports, conservatively, that rule a matches every command rule b
// matches: each matcher of a is implied by one of b. A false result proves
// nothing.
func shadows(a, b *Rule) bool {
	if len(a.ArgvPrefix) > 0 {
		switch {
		case len(b.ArgvPrefix) > 0:
			if !prefixCovers(a.ArgvPrefix, b.ArgvPrefix) {
				return false
			}
		case len(a.ArgvPrefix) == 1 && !strings.Contains(a.ArgvPrefix[0], "/"):
			if !hasCommandEquals(b, a.ArgvPrefix[0]) {
				return false
			}
		default:
			return false
		}
	}
	if a.Capability != "" && a.Capability != b.Capability {
		return false
	}
	if a.InWorkspace && !b.InWorkspace {
		return false
	}
	if len(a.Conditions) == 0 {
		return true
	}
	// An allow rule reads conditions more strictly (every access, static
	// values only) than ask and deny rules do.
	if a.Action == Allow && b.Action != Allow {
		return false
	}
	for i := range a.Conditions {
		if !slices.ContainsFunc(b.Conditions, func(c Condition) bool { return sameCondition(&a.Conditions[i], &c) }) {
			return false
		}
	}
	return true
}

// prefixCovers reports whether every command with prefix b also has
// prefix a.
func prefixCovers(a, b []string) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if i == 0 {
			if strings.Contains(a[0], "/") {
				if a[0] != b[0] {
					return false
				}
			} else if path.Base(b[0]) != a[0] {
				return false
			}
			continue
		}
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func hasCommandEquals(r *Rule, name string) bool {
	for i := range r.Conditions {
		c := &r.Conditions[i]
		if c.field().kind == fCommand && c.Op == OpEquals && c.Values[0].Text == name {
			return true
		}
	}
	return false
}

func sameCondition(x, y *Condition) bool {
	fx, fy := x.field(), y.field()
	if fx.kind != fy.kind || fx.n != fy.n || !slices.Equal(fx.path, fy.path) || x.Op != y.Op || len(x.Values) != len(y.Values) {
		return false
	}
	for i := range x.Values {
		a, b := x.Values[i], y.Values[i]
		if a.Text != b.Text || (a.Number == nil) != (b.Number == nil) || (a.Number != nil && *a.Number != *b.Number) {
			return false
		}
	}
	return true
}
