package policy

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// Error is a policy file that cannot be used. It carries the position so a
// person can fix it: FILE:LINE:COL: message.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Pos is where a rule was written.
type Pos struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// Rule is one allow, ask or deny rule. Every field that is set must match.
type Rule struct {
	Name     string  `json:"name"`
	Action   Outcome `json:"action"`
	Priority int     `json:"priority"`
	// ArgvPrefix matches a command whose static words start with these. The
	// first word matches the program's base name unless it holds a "/".
	ArgvPrefix []string `json:"argv_prefix,omitempty"`
	// Capability matches a command all of whose approval-bearing accesses
	// use this capability.
	Capability Capability `json:"capability,omitempty"`
	// InWorkspace matches a command all of whose targets are known and lie
	// inside the workspace.
	InWorkspace bool `json:"in_workspace,omitempty"`
	Pos         Pos  `json:"pos"`
}

// Policy is a loaded policy file.
type Policy struct {
	// Source is the file the policy came from, or "built-in default".
	Source string
	// Level is the autonomy level the policy sets.
	Level Level
	// Shell is defaults.shell: what a command classified code:exec gets when
	// no rule matches (ask by default; allow acts as an allow rule).
	Shell Outcome
	// Rules in evaluation order: priority descending, file order kept.
	Rules []Rule
	// ApprovalTTL is how long a pending approval waits (default 600 s).
	ApprovalTTL time.Duration
	// JudgeThreshold is vaglio's judge threshold (default 0.30).
	JudgeThreshold float64
}

// DefaultApprovalTTL is seed 002's ten minutes.
const DefaultApprovalTTL = 600 * time.Second

// DefaultJudgeThreshold is seed 003's rule-based threshold.
const DefaultJudgeThreshold = 0.30

// Default priorities of the list forms: denials first, then questions, then
// permissions, so a broad allow never shadows a narrower deny by accident.
const (
	denyPriority  = 200
	askPriority   = 100
	allowPriority = 0
)

// Load reads and validates a policy file. A missing or invalid file is an
// error; it never loads as permissive.
func Load(file string) (*Policy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, &Error{File: file, Msg: fmt.Sprintf("cannot read policy: %v", errors.Unwrap(err))}
	}
	return Parse(file, data)
}

// Parse validates policy source. name is used in error positions.
func Parse(name string, data []byte) (*Policy, error) {
	p := &Policy{Source: name, Level: Supervised, Shell: Ask, ApprovalTTL: DefaultApprovalTTL, JudgeThreshold: DefaultJudgeThreshold}
	if bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}) {
		return nil, &Error{File: name, Line: 1, Col: 1, Msg: "byte order mark at start of file; save the file as UTF-8 without BOM"}
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		line, col := lineCol(data, i)
		return nil, &Error{File: name, Line: line, Col: col, Msg: "NUL byte in policy file"}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(name, err)
	}
	if len(doc.Content) == 0 {
		return nil, &Error{File: name, Line: 1, Col: 1, Msg: "policy file is empty; run `mnemos init` to write the default"}
	}
	d := decoder{file: name}
	root := doc.Content[0]
	if err := d.mapping(root); err != nil {
		return nil, err
	}
	seen := map[string]Pos{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if err := d.plain(k); err != nil {
			return nil, err
		}
		switch k.Value {
		case "level":
			s, err := d.str(v)
			if err != nil {
				return nil, err
			}
			l, err := ParseLevel(s)
			if err != nil {
				return nil, d.errAt(v, err.Error())
			}
			p.Level = l
		case "defaults":
			if err := d.defaults(v, p); err != nil {
				return nil, err
			}
		case "approvals":
			if err := d.approvals(v, p); err != nil {
				return nil, err
			}
		case "judge":
			if err := d.judge(v, p); err != nil {
				return nil, err
			}
		case "allow", "ask", "deny":
			act, _ := ParseOutcome(k.Value)
			rules, err := d.ruleList(v, &act)
			if err != nil {
				return nil, err
			}
			p.Rules = append(p.Rules, rules...)
		case "rules":
			rules, err := d.ruleList(v, nil)
			if err != nil {
				return nil, err
			}
			p.Rules = append(p.Rules, rules...)
		default:
			return nil, d.errAt(k, fmt.Sprintf("unknown key %q (want level, defaults, approvals, judge, allow, ask, deny or rules)", k.Value))
		}
	}
	for _, r := range p.Rules {
		if prev, dup := seen[r.Name]; dup {
			return nil, &Error{File: name, Line: r.Pos.Line, Col: r.Pos.Col, Msg: fmt.Sprintf("duplicate rule name %q (first at line %d)", r.Name, prev.Line)}
		}
		seen[r.Name] = r.Pos
	}
	sort.SliceStable(p.Rules, func(i, j int) bool { return p.Rules[i].Priority > p.Rules[j].Priority })
	return p, nil
}

type decoder struct{ file string }

func (d decoder) errAt(n *yaml.Node, msg string) error {
	return &Error{File: d.file, Line: n.Line, Col: n.Column, Msg: msg}
}

func (d decoder) plain(n *yaml.Node) error {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return d.errAt(n, "YAML anchors and aliases are not allowed in a policy; write each value out")
	}
	if n.Tag != "" && n.Tag != "!!str" && n.Tag != "!!int" && n.Tag != "!!float" && n.Tag != "!!bool" && n.Tag != "!!map" && n.Tag != "!!seq" && n.Tag != "!!null" {
		return d.errAt(n, fmt.Sprintf("YAML tag %s is not allowed in a policy", n.Tag))
	}
	return nil
}

func (d decoder) mapping(n *yaml.Node) error {
	if err := d.plain(n); err != nil {
		return err
	}
	if n.Kind != yaml.MappingNode {
		return d.errAt(n, "expected a mapping (key: value lines)")
	}
	return nil
}

func (d decoder) str(n *yaml.Node) (string, error) {
	if err := d.plain(n); err != nil {
		return "", err
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", d.errAt(n, "expected a string")
	}
	return n.Value, nil
}

func (d decoder) strict(n *yaml.Node) (string, error) {
	s, err := d.str(n)
	if err != nil {
		return "", err
	}
	if n.Tag != "!!str" {
		return "", d.errAt(n, fmt.Sprintf("expected a string, found %s %q (quote it)", strings.TrimPrefix(n.Tag, "!!"), n.Value))
	}
	return s, nil
}

var decimalInt = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

func (d decoder) integer(n *yaml.Node, lo, hi int64) (int64, error) {
	s, err := d.str(n)
	if err != nil {
		return 0, err
	}
	if !decimalInt.MatchString(s) {
		return 0, d.errAt(n, fmt.Sprintf("expected a decimal integer, found %q", s))
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < lo || v > hi {
		return 0, d.errAt(n, fmt.Sprintf("integer %s out of range [%d, %d]", s, lo, hi))
	}
	return v, nil
}

func (d decoder) number(n *yaml.Node) (float64, error) {
	s, err := d.str(n)
	if err != nil {
		return 0, err
	}
	if n.Tag != "!!int" && n.Tag != "!!float" {
		return 0, d.errAt(n, fmt.Sprintf("expected a number, found %q", s))
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, d.errAt(n, fmt.Sprintf("expected a finite decimal number, found %q", s))
	}
	return v, nil
}

func (d decoder) defaults(n *yaml.Node, p *Policy) error {
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
			o, err := ParseOutcome(s)
			if err != nil {
				return d.errAt(v, err.Error())
			}
			p.Shell = o
		default:
			return d.errAt(k, fmt.Sprintf("unknown key %q in defaults (want shell)", k.Value))
		}
	}
	return nil
}

func (d decoder) approvals(n *yaml.Node, p *Policy) error {
	if err := d.mapping(n); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "ttl":
			s, err := d.str(v)
			if err != nil {
				return err
			}
			dur, err := parseDuration(s)
			if err != nil || dur < time.Second || dur > 7*24*time.Hour {
				return d.errAt(v, fmt.Sprintf("ttl %q must be a duration between 1s and 168h (e.g. 600s, 10m)", s))
			}
			p.ApprovalTTL = dur
		default:
			return d.errAt(k, fmt.Sprintf("unknown key %q in approvals (want ttl)", k.Value))
		}
	}
	return nil
}

func (d decoder) judge(n *yaml.Node, p *Policy) error {
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
		default:
			return d.errAt(k, fmt.Sprintf("unknown key %q in judge (want threshold)", k.Value))
		}
	}
	return nil
}

// parseDuration accepts Go durations and plain seconds.
func parseDuration(s string) (time.Duration, error) {
	if decimalInt.MatchString(s) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n > 1<<31 {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		return time.Duration(n) * time.Second, nil
	}
	return time.ParseDuration(s)
}

func (d decoder) ruleList(n *yaml.Node, action *Outcome) ([]Rule, error) {
	if err := d.plain(n); err != nil {
		return nil, err
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, d.errAt(n, "expected a list of rules (lines starting with \"- \")")
	}
	var out []Rule
	for _, item := range n.Content {
		r, err := d.rule(item, action)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (d decoder) rule(n *yaml.Node, action *Outcome) (Rule, error) {
	r := Rule{Pos: Pos{File: d.file, Line: n.Line, Col: n.Column}}
	if err := d.mapping(n); err != nil {
		return r, err
	}
	hasAction, hasPriority, hasMatcher := false, false, false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if err := d.plain(k); err != nil {
			return r, err
		}
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
		case "action":
			if action != nil {
				return r, d.errAt(k, "action is implied by the list this rule is in; remove it or move the rule under rules:")
			}
			s, err := d.strict(v)
			if err != nil {
				return r, err
			}
			o, err := ParseOutcome(s)
			if err != nil {
				return r, d.errAt(v, err.Error())
			}
			r.Action, hasAction = o, true
		case "priority":
			pr, err := d.integer(v, -1_000_000, 1_000_000)
			if err != nil {
				return r, err
			}
			r.Priority, hasPriority = int(pr), true
		case "command":
			if err := d.mapping(v); err != nil {
				return r, err
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				ck, cv := v.Content[j], v.Content[j+1]
				if ck.Value != "argv_prefix" {
					return r, d.errAt(ck, fmt.Sprintf("unknown key %q in command (want argv_prefix)", ck.Value))
				}
				if err := d.plain(cv); err != nil {
					return r, err
				}
				if cv.Kind != yaml.SequenceNode || len(cv.Content) == 0 {
					return r, d.errAt(cv, "argv_prefix must be a non-empty list of words, e.g. [git, status]")
				}
				for _, w := range cv.Content {
					s, err := d.str(w)
					if err != nil {
						return r, err
					}
					if s == "" {
						return r, d.errAt(w, "argv_prefix word is empty")
					}
					r.ArgvPrefix = append(r.ArgvPrefix, s)
				}
			}
			hasMatcher = len(r.ArgvPrefix) > 0
		case "capability":
			s, err := d.strict(v)
			if err != nil {
				return r, err
			}
			if _, err := Lookup(Capability(s)); err != nil {
				return r, d.errAt(v, fmt.Sprintf("capability %q is not in the registry (see `mnemos policy registry`)", s))
			}
			r.Capability, hasMatcher = Capability(s), true
		case "targets":
			s, err := d.strict(v)
			if err != nil {
				return r, err
			}
			if s != "workspace" {
				return r, d.errAt(v, fmt.Sprintf("targets %q is not supported (want workspace)", s))
			}
			r.InWorkspace, hasMatcher = true, true
		default:
			return r, d.errAt(k, fmt.Sprintf("unknown key %q in rule (want name, action, priority, command, capability or targets)", k.Value))
		}
	}
	if action != nil {
		r.Action, hasAction = *action, true
	}
	if !hasAction {
		return r, d.errAt(n, "rule has no action (want allow, ask or deny)")
	}
	if !hasMatcher {
		return r, d.errAt(n, "rule matches nothing: give command.argv_prefix, capability or targets")
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
		desc := strings.Join(r.ArgvPrefix, " ")
		if desc == "" {
			desc = string(r.Capability)
			if r.InWorkspace {
				desc = strings.TrimSpace(desc + " in workspace")
			}
		}
		r.Name = fmt.Sprintf("%s %s (line %d)", r.Action, desc, r.Pos.Line)
	}
	return r, nil
}

var yamlLine = regexp.MustCompile(`line (\d+)(?::(\d+))?: (.*)`)

// yamlError turns the YAML library's message into a positioned Error.
func yamlError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
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

func lineCol(data []byte, off int) (int, int) {
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}
