package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mnemos-dev/mnemos/classify"
)

// Parse validates policy source. name is used in error positions. It
// returns the first error in file order; Lint reports every one.
func Parse(name string, data []byte) (*Policy, error) {
	p, errs := parse(name, data)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return p, nil
}

// ParseExamplesChecked is Parse for source whose rules' examples the
// caller has seen hold, with this very program, before (a record of the
// source's digest): it skips checking them again, which costs a few
// milliseconds on every start for a policy with many examples.
func ParseExamplesChecked(name string, data []byte) (*Policy, error) {
	p, errs := parseWith(name, data, false)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return p, nil
}

// parse decodes a policy and collects its errors, sorted by position. A
// policy is returned only when there are none.
func parse(name string, data []byte) (*Policy, []*Error) {
	return parseWith(name, data, true)
}

// parseWith is parse, checking the rules' examples when examples is set.
func parseWith(name string, data []byte, examples bool) (*Policy, []*Error) {
	d := &decoder{file: name}
	root, err := d.document(data, policyDoc)
	if err != nil {
		return nil, []*Error{err}
	}
	// Structural errors (anchors, tags, duplicate keys) are collected with
	// the rest, so every error shows in file order.
	d.check(root, 0, policyDoc)
	if root.Kind != yaml.MappingNode {
		return nil, []*Error{d.errAt(root, "expected a mapping (key: value lines)")}
	}
	p := &Policy{Source: name, Level: Supervised, Shell: Ask, ApprovalTTL: DefaultApprovalTTL, JudgeThreshold: DefaultJudgeThreshold, Journal: DefaultJournal()}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if err := d.top(k, v, p); err != nil {
			d.errs = append(d.errs, err)
		}
	}
	seen := map[string]Pos{}
	dupName := func(r *Rule) {
		if prev, dup := seen[r.Name]; dup {
			d.errs = append(d.errs, &Error{File: name, Line: r.Pos.Line, Col: r.Pos.Col, Msg: fmt.Sprintf("duplicate rule name %q (first at line %d)", r.Name, prev.Line)})
			return
		}
		seen[r.Name] = r.Pos
	}
	// Rule names are unique in the file, profiles included, in file order.
	var all []*Rule
	for i := range p.Rules {
		all = append(all, &p.Rules[i])
	}
	for i := range p.Profiles {
		for j := range p.Profiles[i].Rules {
			all = append(all, &p.Profiles[i].Rules[j])
		}
	}
	for i := range d.failed {
		all = append(all, &d.failed[i])
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i].Pos, all[j].Pos
		return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
	})
	for _, r := range all {
		dupName(r)
	}
	// Examples are checked even when something else is wrong, so one lint
	// shows every problem. The built-in default's (also what `mnemos init`
	// writes, when the file is unchanged) are checked by the tests of this
	// package instead of at every start: they cannot change.
	if examples && !bytes.Equal(data, defaultSource) {
		d.checkAllExamples(p)
	}
	byPriority := func(rs []Rule) {
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].Priority > rs[j].Priority })
	}
	byPriority(p.Rules)
	if len(d.errs) > 0 {
		return nil, d.sorted()
	}
	for i := range p.Rules {
		p.Rules[i].reasons = newRuleReasons(&p.Rules[i])
	}
	p.index = buildIndex(p.Rules)
	for i := range p.Profiles {
		pr := &p.Profiles[i]
		byPriority(pr.Rules)
		for j := range pr.Rules {
			pr.Rules[j].reasons = newRuleReasons(&pr.Rules[j])
		}
		pr.view = mergeRules(pr.Rules, p.Rules)
		pr.index = buildIndex(pr.view)
	}
	return p, nil
}

// checkAllExamples checks the match and not_match examples of every rule,
// a profile's at that profile's level and identity.
func (d *decoder) checkAllExamples(p *Policy) {
	base := exampleDefaults{level: p.Level, channel: "cli", sender: "user", costs: p}
	for i := range p.Rules {
		d.errs = append(d.errs, checkExamples(&p.Rules[i], base)...)
	}
	for i := range p.Profiles {
		pr := &p.Profiles[i]
		def := base
		if pr.Level != nil {
			def.level = *pr.Level
		}
		if pr.Channel != "*" {
			def.channel = pr.Channel
		}
		if pr.Sender != "*" {
			def.sender = pr.Sender
		}
		for j := range pr.Rules {
			d.errs = append(d.errs, checkExamples(&pr.Rules[j], def)...)
		}
	}
}

type decoder struct {
	file string
	errs []*Error
	// failed are the rules rejected with an error that got as far as a
	// name, for the duplicate-name check.
	failed []Rule
}

// sorted returns the errors in file order, one per position (the first
// recorded wins, so a structural error is not repeated by its cascade).
func (d *decoder) sorted() []*Error {
	type at struct{ line, col int }
	seen := map[at]bool{}
	out := d.errs[:0]
	for _, e := range d.errs {
		if !seen[at{e.Line, e.Col}] {
			seen[at{e.Line, e.Col}] = true
			out = append(out, e)
		}
	}
	d.errs = out
	sort.SliceStable(d.errs, func(i, j int) bool {
		a, b := d.errs[i], d.errs[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return d.errs
}

func (d *decoder) pos(n *yaml.Node) Pos { return Pos{File: d.file, Line: n.Line, Col: n.Column} }

func (d *decoder) errAt(n *yaml.Node, msg string) *Error {
	return &Error{File: d.file, Line: n.Line, Col: n.Column, Msg: msg}
}

// docKind names, in the messages of document, what kind of file is read.
type docKind struct {
	noun  string // "policy", "manifest"
	what  string // "policy file", "manifest"
	empty string // the message for an empty file
	merge bool   // whether a second document may be merged into the first
}

var (
	policyDoc   = docKind{noun: "policy", what: "policy file", empty: "policy file is empty; run `mnemos init` to write the default", merge: true}
	manifestDoc = docKind{noun: "manifest", what: "manifest", empty: "manifest is empty"}
)

// document checks the raw bytes and decodes exactly one YAML document.
func (d *decoder) document(data []byte, k docKind) (*yaml.Node, *Error) {
	save := "file"
	if k != policyDoc {
		save = k.what
	}
	if bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}) {
		return nil, &Error{File: d.file, Line: 1, Col: 1, Msg: "byte order mark at start of file; save the " + save + " as UTF-8 without BOM"}
	}
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return nil, &Error{File: d.file, Line: 1, Col: 1, Msg: "the file is UTF-16 (it starts with a UTF-16 byte order mark); save it as UTF-8 without BOM"}
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		line, col := lineCol(data, i)
		return nil, &Error{File: d.file, Line: line, Col: col, Msg: "NUL byte in " + k.what + "; a " + strings.TrimSuffix(k.what, " file") + " is UTF-8 text: remove the byte (or save the file as UTF-8)"}
	}
	if !utf8.Valid(data) {
		i := 0
		for i < len(data) {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			i += size
		}
		line, col := lineCol(data, i)
		return nil, &Error{File: d.file, Line: line, Col: col, Msg: fmt.Sprintf("byte 0x%02x is not valid UTF-8; save the %s as UTF-8", data[i], save)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: d.file, Line: 1, Col: 1, Msg: k.empty}
		}
		e := yamlError(d.file, err)
		if strings.Contains(e.Msg, "tab") {
			// The YAML library names the line the block started on; point
			// at the tab itself.
			if line, col, ok := indentTab(data); ok {
				e.Line, e.Col = line, col
			}
		}
		return nil, e
	}
	if len(doc.Content) == 0 {
		return nil, &Error{File: d.file, Line: 1, Col: 1, Msg: k.empty}
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, yamlError(d.file, err)
	default:
		line := next.Line
		if len(next.Content) > 0 {
			line = next.Content[0].Line
		}
		// Point at the "---" that starts the second document.
		lines := bytes.Split(data, []byte("\n"))
		for l := line; l >= 1 && l <= len(lines); l-- {
			if bytes.HasPrefix(lines[l-1], []byte("---")) {
				line = l
				break
			}
		}
		msg := "a " + k.what + " holds one YAML document; remove the second \"---\" and what follows"
		if k.merge {
			msg += ", or merge it into the first"
		}
		return nil, &Error{File: d.file, Line: line, Col: 1, Msg: msg}
	}
	return doc.Content[0], nil
}

// maxNesting bounds how deep a policy's YAML may nest.
const maxNesting = 64

// check rejects, anywhere in the tree, what a policy (or a manifest)
// never needs and what would make it mean something other than it shows:
// anchors and aliases, merge keys, explicit tags, duplicate keys.
func (d *decoder) check(n *yaml.Node, depth int, k docKind) {
	if depth > maxNesting {
		d.errs = append(d.errs, d.errAt(n, fmt.Sprintf("%s nests deeper than %d levels", k.noun, maxNesting)))
		return
	}
	switch {
	case n.Kind == yaml.AliasNode || n.Anchor != "":
		d.errs = append(d.errs, d.errAt(n, "YAML anchors and aliases are not allowed in a "+k.noun+"; write each value out"))
		return
	case n.Tag == "!!merge":
		d.errs = append(d.errs, d.errAt(n, "YAML merge keys (<<) are not allowed in a "+k.noun+"; write each value out"))
		return
	case n.Style&yaml.TaggedStyle != 0:
		d.errs = append(d.errs, d.errAt(n, fmt.Sprintf("YAML tag %s is not allowed in a %s; remove it (quote the value if it must be a string)", n.Tag, k.noun)))
		return
	}
	if n.Kind == yaml.MappingNode {
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode {
				if line, dup := seen[k.Value]; dup {
					d.errs = append(d.errs, d.errAt(k, fmt.Sprintf("duplicate key %q (first at line %d)", k.Value, line)))
				} else {
					seen[k.Value] = k.Line
				}
			} else if k.Kind != yaml.AliasNode && k.Anchor == "" {
				d.errs = append(d.errs, d.errAt(k, "a key must be a plain word, not a list or mapping"))
				continue
			}
		}
	}
	for _, c := range n.Content {
		d.check(c, depth+1, k)
	}
}

func (d *decoder) mapping(n *yaml.Node) *Error {
	if n.Kind != yaml.MappingNode {
		return d.errAt(n, "expected a mapping (key: value lines)")
	}
	return nil
}

func (d *decoder) str(n *yaml.Node) (string, *Error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", d.errAt(n, "expected a string")
	}
	return n.Value, nil
}

func (d *decoder) strict(n *yaml.Node) (string, *Error) {
	s, err := d.str(n)
	if err != nil {
		return "", err
	}
	if n.Tag != "!!str" {
		return "", d.errAt(n, fmt.Sprintf("expected a string, found %s %q (quote it)", strings.TrimPrefix(n.Tag, "!!"), n.Value))
	}
	return s, nil
}

// isDecimalInt reports whether s is a decimal integer as a policy writes
// one: ^-?(0|[1-9][0-9]*)$ (no sign +, no leading zeros, no
// underscores). It is written out rather than a regexp so that reading a
// policy compiles none.
func isDecimalInt(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return decimalDigits(s) == len(s) && len(s) > 0
}

// decimalDigits is the length of the integer part at the start of s: "0",
// or a digit 1-9 followed by digits; 0 when s does not start with one.
func decimalDigits(s string) int {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0
	}
	if s[0] == '0' {
		return 1
	}
	i := 1
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// isDecimalNumber reports whether s is a decimal number as a policy writes
// one: ^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$.
func isDecimalNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	i := decimalDigits(s)
	if i == 0 {
		return false
	}
	digits := func() bool {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

func (d *decoder) integer(n *yaml.Node, lo, hi int64) (int64, *Error) {
	s, err := d.str(n)
	if err != nil {
		return 0, err
	}
	if !isDecimalInt(s) {
		return 0, d.errAt(n, fmt.Sprintf("expected a decimal integer, found %q", s))
	}
	v, perr := strconv.ParseInt(s, 10, 64)
	if perr != nil || v < lo || v > hi {
		return 0, d.errAt(n, fmt.Sprintf("integer %s out of range [%d, %d]", s, lo, hi))
	}
	return v, nil
}

// isDecimalNumber (above) is the only number syntax a policy accepts: no
// hex, no octal, no leading zeros, no .inf or .nan, no underscores.

// number reads a finite decimal number.
func (d *decoder) number(n *yaml.Node) (float64, *Error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return 0, d.errAt(n, "expected a number")
	}
	s := n.Value
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		return 0, d.errAt(n, fmt.Sprintf("expected a number, found the string %q (remove the quotes)", s))
	}
	if !isDecimalNumber(s) {
		return 0, d.errAt(n, fmt.Sprintf("expected a finite decimal number, found %q", s))
	}
	v, perr := strconv.ParseFloat(s, 64)
	if perr != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, d.errAt(n, fmt.Sprintf("number %s is out of range", s))
	}
	return v, nil
}

func (d *decoder) top(k, v *yaml.Node, p *Policy) *Error {
	switch k.Value {
	case "level":
		s, err := d.str(v)
		if err != nil {
			return err
		}
		l, perr := ParseLevel(s)
		if perr != nil {
			return d.errAt(v, perr.Error())
		}
		p.Level = l
		p.wrote(setLevel, d.pos(v))
	case "sandbox":
		sc, err := d.sandbox(v, false)
		if err != nil {
			return err
		}
		p.Sandbox = sc
	case "rate_limits":
		p.RateLimits = d.rateLimits(v)
	case "costs":
		p.Costs = d.costs(v)
	case "channels":
		p.Channels = d.channels(v)
	case "profiles":
		return d.profiles(v, p)
	case "defaults":
		return d.defaults(v, p)
	case "approvals":
		return d.approvals(v, p)
	case "judge":
		return d.judge(v, p)
	case "hook":
		return d.hook(v, p)
	case "state":
		return d.state(k, v, p)
	case "journal":
		return d.journal(k, v, p)
	case "allow", "ask", "deny":
		act, _ := classify.ParseOutcome(k.Value)
		p.Rules = append(p.Rules, d.ruleList(v, &act)...)
	case "rules":
		p.Rules = append(p.Rules, d.ruleList(v, nil)...)
	default:
		return d.errAt(k, fmt.Sprintf("unknown key %q (want level, defaults, approvals, judge, hook, state, journal, sandbox, rate_limits, costs, channels, profiles, allow, ask, deny or rules)", k.Value))
	}
	return nil
}

func (d *decoder) defaults(n *yaml.Node, p *Policy) *Error {
	if err := d.mapping(n); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "shell":
			s, err := d.strict(v)
			if err != nil {
				return err
			}
			o, perr := classify.ParseOutcome(s)
			if perr != nil {
				return d.errAt(v, perr.Error())
			}
			p.Shell = o
			p.wrote(setShell, d.pos(v))
		default:
			return d.errAt(k, fmt.Sprintf("unknown key %q in defaults (want shell)", k.Value))
		}
	}
	return nil
}

func (d *decoder) approvals(n *yaml.Node, p *Policy) *Error {
	if err := d.mapping(n); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "ttl":
			dur, err := d.duration(v, 7*24*time.Hour)
			if err != nil {
				return err
			}
			p.ApprovalTTL = dur
			p.wrote(setTTL, d.pos(v))
		default:
			return d.errAt(k, fmt.Sprintf("unknown key %q in approvals (want ttl)", k.Value))
		}
	}
	return nil
}

// hook reads hook: {hold: DURATION} (at most ten minutes, the longest an
// agent waits for its hook by default).
func (d *decoder) hook(n *yaml.Node, p *Policy) *Error {
	if err := d.mapping(n); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "hold":
			dur, err := d.duration(v, 10*time.Minute)
			if err != nil {
				return err
			}
			p.HookHold = dur
		default:
			return d.errAt(k, fmt.Sprintf("unknown key %q in hook (want hold)", k.Value))
		}
	}
	return nil
}

// duration reads a Go duration ("10m") or plain seconds, from 1s to max.
func (d *decoder) duration(v *yaml.Node, max time.Duration) (time.Duration, *Error) {
	s, err := d.str(v)
	if err != nil {
		return 0, err
	}
	dur, perr := parseDuration(s)
	if perr != nil || dur < time.Second || dur > max {
		return 0, d.errAt(v, fmt.Sprintf("ttl %q must be a duration between 1s and %dh (e.g. 600s, 10m, 7d)", s, int(max.Hours())))
	}
	return dur, nil
}

func (d *decoder) judge(n *yaml.Node, p *Policy) *Error {
	if err := d.mapping(n); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "threshold":
			f, err := d.number(v)
			if err != nil {
				return err
			}
			if f < 0 || f > 1 {
				return d.errAt(v, fmt.Sprintf("threshold %v must be within [0, 1]", f))
			}
			p.JudgeThreshold = f
			p.wrote(setThreshold, d.pos(v))
		default:
			ok, err := d.judgeKey(k, v, &p.Judge)
			if err != nil {
				return err
			}
			if !ok {
				return d.errAt(k, fmt.Sprintf("unknown key %q in judge (want threshold, kind, endpoint, model, timeout, api_key_env or max_calls_per_day)", k.Value))
			}
		}
	}
	return d.checkJudge(n, &p.Judge)
}

// parseDuration accepts Go durations, plain seconds and whole days
// ("7d", as `grants prune --unused-for` takes them).
func parseDuration(s string) (time.Duration, error) {
	unit := time.Second
	if days, ok := strings.CutSuffix(s, "d"); ok && isDecimalInt(days) && days[0] != '-' {
		s, unit = days, 24*time.Hour
	}
	if isDecimalInt(s) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n > 1<<31 || n > int64(math.MaxInt64/unit) {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		return time.Duration(n) * unit, nil
	}
	return time.ParseDuration(s)
}

// ruleList decodes a list of rules; a rule with an error is reported and
// skipped, so one pass finds the errors of every rule.
func (d *decoder) ruleList(n *yaml.Node, action *Outcome) []Rule {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errs = append(d.errs, d.errAt(n, "expected a list of rules (lines starting with \"- \")"))
		return nil
	}
	var out []Rule
	for _, item := range n.Content {
		r, err := d.rule(item, action)
		if err != nil {
			d.errs = append(d.errs, err)
			if r.Name != "" {
				// Its name still counts, so a duplicate is reported now
				// rather than once this error is fixed.
				d.failed = append(d.failed, r)
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

const ruleKeys = "name, description, action, priority, command, capability, targets, conditions, match, not_match, scope_template, sandbox or undoable"

func (d *decoder) rule(n *yaml.Node, action *Outcome) (Rule, *Error) {
	r := Rule{Pos: Pos{File: d.file, Line: n.Line, Col: n.Column}}
	if n.Kind != yaml.MappingNode {
		return r, d.errAt(n, "expected a rule (a mapping with name, action and what it matches)")
	}
	hasAction, hasPriority, hasMatcher := false, false, false
	var undoableAt *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "name":
			s, err := d.strict(v)
			if err != nil {
				return r, err
			}
			if strings.TrimSpace(s) == "" {
				return r, d.errAt(v, "rule name is empty")
			}
			r.Name = s
		case "description":
			s, err := d.strict(v)
			if err != nil {
				return r, err
			}
			r.Description = s
		case "action":
			if action != nil {
				return r, d.errAt(k, "action is implied by the list this rule is in; remove it or move the rule under rules:")
			}
			s, err := d.strict(v)
			if err != nil {
				return r, err
			}
			o, perr := classify.ParseOutcome(s)
			if perr != nil {
				return r, d.errAt(v, perr.Error())
			}
			r.Action, hasAction = o, true
		case "priority":
			pr, err := d.integer(v, -1_000_000, 1_000_000)
			if err != nil {
				return r, err
			}
			r.Priority, hasPriority = int(pr), true
		case "command":
			if err := d.command(v, &r); err != nil {
				return r, err
			}
			hasMatcher = hasMatcher || len(r.ArgvPrefix) > 0
		case "capability":
			s, err := d.strict(v)
			if err != nil {
				return r, err
			}
			if _, ok := lookupSpec(classify.Capability(s)); !ok {
				return r, d.errAt(v, fmt.Sprintf("capability %q is not in the registry (see `mnemos policy registry`)", s))
			}
			r.Capability, hasMatcher = classify.Capability(s), true
		case "targets":
			s, err := d.strict(v)
			if err != nil {
				return r, err
			}
			if s != "workspace" {
				return r, d.errAt(v, fmt.Sprintf("targets %q is not supported (want workspace)", s))
			}
			r.InWorkspace, hasMatcher = true, true
		case "conditions":
			conds, err := d.conditions(v)
			if err != nil {
				return r, err
			}
			r.Conditions, hasMatcher = conds, true
		case "match", "not_match":
			ex, err := d.examples(v, k.Value)
			if err != nil {
				return r, err
			}
			if k.Value == "match" {
				r.Match = ex
			} else {
				r.NotMatch = ex
			}
		case "scope_template":
			st, err := d.scopeTemplate(v)
			if err != nil {
				return r, err
			}
			r.Scope = st
		case "sandbox":
			sc, err := d.sandbox(v, true)
			if err != nil {
				return r, err
			}
			r.Sandbox = &sc
		case "undoable":
			b, err := d.boolean(v)
			if err != nil {
				return r, err
			}
			r.Undoable, undoableAt = b, v
		default:
			return r, d.errAt(k, fmt.Sprintf("unknown key %q in rule (want %s)", k.Value, ruleKeys))
		}
	}
	if action != nil {
		r.Action, hasAction = *action, true
	}
	if !hasAction {
		return r, d.errAt(n, "rule has no action (want allow, ask or deny)")
	}
	if !hasMatcher {
		return r, d.errAt(n, "rule matches nothing: give command.argv_prefix, capability, targets or conditions")
	}
	if r.Undoable && r.Action == Allow {
		return r, d.errAt(undoableAt, "undoable is for ask and deny rules: it lets what the journal can undo run at full and ask at supervised")
	}
	if !hasPriority {
		switch r.Action {
		case Deny:
			r.Priority = denyPriority
		case Ask:
			r.Priority = askPriority
		default:
			r.Priority = allowPriority
		}
	}
	if r.Name == "" {
		r.Name = fmt.Sprintf("%s %s (line %d)", r.Action, r.describe(), r.Pos.Line)
	}
	return r, nil
}

// describe summarises what a rule matches, for generated names.
func (r *Rule) describe() string {
	var parts []string
	if len(r.ArgvPrefix) > 0 {
		parts = append(parts, strings.Join(r.ArgvPrefix, " "))
	}
	if r.Capability != "" {
		parts = append(parts, string(r.Capability))
	}
	if r.InWorkspace {
		parts = append(parts, "in workspace")
	}
	for _, c := range r.Conditions {
		vals := make([]string, len(c.Values))
		for i, v := range c.Values {
			vals[i] = v.Text
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", c.Field, c.Op, strings.Join(vals, ",")))
	}
	return strings.Join(parts, " ")
}

func (d *decoder) command(v *yaml.Node, r *Rule) *Error {
	if v.Kind != yaml.MappingNode {
		return d.errAt(v, "expected a mapping (key: value lines)")
	}
	for j := 0; j+1 < len(v.Content); j += 2 {
		ck, cv := v.Content[j], v.Content[j+1]
		if ck.Value == "pin" {
			s, err := d.str(cv)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(s, "sha256:") || len(s) != len("sha256:")+64 {
				return d.errAt(cv, "pin must be sha256: and 64 hex digits, as approve --remember writes it")
			}
			r.Pin = s
			continue
		}
		if ck.Value != "argv_prefix" {
			return d.errAt(ck, fmt.Sprintf("unknown key %q in command (want argv_prefix, pin)", ck.Value))
		}
		if cv.Kind != yaml.SequenceNode || len(cv.Content) == 0 {
			return d.errAt(cv, "argv_prefix must be a non-empty list of words, e.g. [git, status]")
		}
		for _, w := range cv.Content {
			s, err := d.str(w)
			if err != nil {
				return err
			}
			if s == "" {
				return d.errAt(w, "argv_prefix word is empty")
			}
			r.ArgvPrefix = append(r.ArgvPrefix, s)
		}
	}
	return nil
}

// conditions decodes `field: {operator: operand, ...}` lines.
func (d *decoder) conditions(n *yaml.Node) ([]Condition, *Error) {
	if n.Kind != yaml.MappingNode {
		return nil, d.errAt(n, "conditions must be a mapping of field: {operator: value}, e.g. command: {equals: git}")
	}
	if len(n.Content) == 0 {
		return nil, d.errAt(n, "conditions is empty; give at least one field: {operator: value}")
	}
	var out []Condition
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f, err := parseField(k.Value)
		if err != nil {
			return nil, d.errAt(k, err.Error())
		}
		if v.Kind != yaml.MappingNode {
			return nil, d.errAt(v, fmt.Sprintf("condition on %s must be a mapping of operator: value, e.g. {equals: x}", k.Value))
		}
		if len(v.Content) == 0 {
			return nil, d.errAt(v, fmt.Sprintf("condition on %s has no operator", k.Value))
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			ok, ov := v.Content[j], v.Content[j+1]
			op, known := parseOperator(ok.Value)
			if !known {
				return nil, d.errAt(ok, fmt.Sprintf("unknown operator %q (want equals, not_equals, starts_with, ends_with, matches, less_than, greater_than, in or not_in)", ok.Value))
			}
			c := Condition{Field: k.Value, Op: op, f: f, Pos: Pos{File: d.file, Line: ok.Line, Col: ok.Column}}
			switch op {
			case OpLessThan, OpGreaterThan:
				x, err := d.number(ov)
				if err != nil {
					return nil, err
				}
				c.Values = []Value{{Text: formatNumber(x), Number: &x}}
			case OpIn, OpNotIn:
				if ov.Kind != yaml.SequenceNode || len(ov.Content) == 0 {
					return nil, d.errAt(ov, fmt.Sprintf("%s needs a non-empty list, e.g. [a, b]", op))
				}
				for _, e := range ov.Content {
					x, err := d.scalar(e)
					if err != nil {
						return nil, err
					}
					c.Values = append(c.Values, x)
				}
			default:
				x, err := d.scalar(ov)
				if err != nil {
					return nil, err
				}
				c.Values = []Value{x}
			}
			if op == OpMatches {
				re, err := compilePattern(c.Values[0].Text)
				if err != nil {
					msg := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
					if len(c.Values[0].Text) <= MaxRegexLen {
						msg = "invalid regular expression: " + msg
					}
					return nil, d.errAt(ov, msg)
				}
				c.re = re
			}
			if err := c.validate(); err != nil {
				return nil, d.errAt(ov, err.Error())
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// scalar reads an operand: a string, a decimal number or a boolean.
func (d *decoder) scalar(n *yaml.Node) (Value, *Error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return Value{}, d.errAt(n, "expected a string or a number")
	}
	switch n.Tag {
	case "!!int", "!!float":
		x, err := d.number(n)
		if err != nil {
			return Value{}, err
		}
		return Value{Text: formatNumber(x), Number: &x}, nil
	case "!!bool":
		b, err := strconv.ParseBool(strings.ToLower(n.Value))
		if err != nil {
			return Value{}, d.errAt(n, fmt.Sprintf("expected true or false, found %q", n.Value))
		}
		return Value{Text: strconv.FormatBool(b)}, nil
	case "!!str":
		return Value{Text: n.Value}, nil
	}
	return Value{}, d.errAt(n, fmt.Sprintf("expected a string or a number, found %s %q (quote it)", strings.TrimPrefix(n.Tag, "!!"), n.Value))
}

// examples decodes a match or not_match list: command strings, or
// mappings with command and the request's level, channel, sender, cwd
// and reason.
func (d *decoder) examples(n *yaml.Node, key string) ([]Example, *Error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, d.errAt(n, fmt.Sprintf("%s must be a non-empty list of example commands, e.g. [\"git push --force\"]", key))
	}
	var out []Example
	for _, e := range n.Content {
		ex := Example{Pos: Pos{File: d.file, Line: e.Line, Col: e.Column}}
		switch e.Kind {
		case yaml.ScalarNode:
			s, err := d.strict(e)
			if err != nil {
				return nil, err
			}
			ex.Command = s
		case yaml.MappingNode:
			for i := 0; i+1 < len(e.Content); i += 2 {
				k, v := e.Content[i], e.Content[i+1]
				s, err := d.strict(v)
				if err != nil {
					return nil, err
				}
				switch k.Value {
				case "command":
					ex.Command = s
				case "level":
					l, perr := ParseLevel(s)
					if perr != nil {
						return nil, d.errAt(v, perr.Error())
					}
					ex.Level = &l
				case "channel":
					ex.Channel = s
				case "sender":
					ex.Sender = s
				case "cwd":
					if !strings.HasPrefix(s, "/") {
						return nil, d.errAt(v, fmt.Sprintf("cwd %q must be an absolute path", s))
					}
					ex.Cwd = s
				case "reason":
					ex.Reason = s
				default:
					return nil, d.errAt(k, fmt.Sprintf("unknown key %q in example (want command, level, channel, sender, cwd or reason)", k.Value))
				}
			}
		default:
			return nil, d.errAt(e, "expected an example command (a string)")
		}
		if strings.TrimSpace(ex.Command) == "" {
			return nil, d.errAt(e, "example command is empty")
		}
		out = append(out, ex)
	}
	return out, nil
}

// maxUses bounds scope_template.max_uses.
const maxUses = 1_000_000

// scopeTemplate decodes seed 004's scope_template: ttl and max_uses are
// checked; other keys are kept as written.
func (d *decoder) scopeTemplate(n *yaml.Node) (*ScopeTemplate, *Error) {
	if n.Kind != yaml.MappingNode {
		return nil, d.errAt(n, "scope_template must be a mapping, e.g. {ttl: 10m, max_uses: 5}")
	}
	st := &ScopeTemplate{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "ttl":
			dur, err := d.duration(v, 365*24*time.Hour)
			if err != nil {
				return nil, err
			}
			st.TTL = dur
		case "max_uses":
			u, err := d.integer(v, 1, maxUses)
			if err != nil {
				return nil, err
			}
			st.MaxUses = int(u)
		default:
			x, err := d.plainValue(v)
			if err != nil {
				return nil, err
			}
			if st.Extra == nil {
				st.Extra = map[string]any{}
			}
			st.Extra[k.Value] = x
		}
	}
	return st, nil
}

// plainValue converts a YAML value to string, float64, bool, nil,
// []any or map[string]any.
func (d *decoder) plainValue(n *yaml.Node) (any, *Error) {
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil, nil
		case "!!int", "!!float":
			f, err := d.number(n)
			if err != nil {
				return nil, err
			}
			return f, nil
		case "!!bool":
			v, _ := d.scalar(n)
			return v.Text == "true", nil
		}
		return n.Value, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			x, err := d.plainValue(c)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	case yaml.MappingNode:
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			x, err := d.plainValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			out[n.Content[i].Value] = x
		}
		return out, nil
	}
	return nil, d.errAt(n, "unsupported value")
}

// yamlLine reads the position out of the YAML library's message, compiled
// on first use: only an invalid file needs it.
var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)(?::(\d+))?: (.*)`) })

// yamlError turns the YAML library's message into a positioned Error.
func yamlError(file string, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		col := 1
		if m[2] != "" {
			col, _ = strconv.Atoi(m[2])
		}
		text := m[3]
		if strings.Contains(text, "found character that cannot start any token") || strings.Contains(text, "tab") {
			text += " (tabs are not allowed for indentation; use spaces)"
		}
		return &Error{File: file, Line: line, Col: col, Msg: "invalid YAML: " + text}
	}
	return &Error{File: file, Line: 1, Col: 1, Msg: "invalid YAML: " + msg}
}

// lineCol is the line and column (in characters, as the YAML decoder
// counts them) of byte offset off.
func lineCol(data []byte, off int) (int, int) {
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := 1 + utf8.RuneCount(data[bytes.LastIndexByte(data[:off], '\n')+1:off])
	return line, col
}
