package policy

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// Format writes a policy in canonical form: every setting explicit, every
// rule under rules: in evaluation order with its action and priority,
// strings quoted. Parse(Format(p)) yields the same policy (positions
// aside), and formatting that again yields the same bytes. Comments and
// list forms are not kept; AddAllowRule edits a file in place instead.
func Format(p *Policy) []byte {
	str := func(s string) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
	}
	plain := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	num := numNode
	mapping := func(kv ...*yaml.Node) *yaml.Node {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: kv}
	}
	flowSeq := func(items ...*yaml.Node) *yaml.Node {
		return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Content: items}
	}
	value := func(v Value) *yaml.Node {
		if v.Number != nil {
			return num(formatNumber(*v.Number))
		}
		return str(v.Text)
	}

	root := mapping(
		plain("level"), plain(p.Level.String()),
		plain("defaults"), mapping(plain("shell"), plain(p.Shell.String())),
		plain("approvals"), mapping(plain("ttl"), plain(formatDuration(p.ApprovalTTL))),
		plain("judge"), mapping(plain("threshold"), num(formatNumber(p.JudgeThreshold))),
	)
	rules := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, r := range p.Rules {
		n := mapping(
			plain("name"), str(r.Name),
			plain("action"), plain(r.Action.String()),
			plain("priority"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(r.Priority)},
		)
		add := func(k string, v *yaml.Node) { n.Content = append(n.Content, plain(k), v) }
		if r.Description != "" {
			add("description", str(r.Description))
		}
		if len(r.ArgvPrefix) > 0 {
			words := flowSeq()
			for _, w := range r.ArgvPrefix {
				words.Content = append(words.Content, str(w))
			}
			cmd := mapping(plain("argv_prefix"), words)
			cmd.Style = yaml.FlowStyle
			add("command", cmd)
		}
		if r.Capability != "" {
			add("capability", str(string(r.Capability)))
		}
		if r.InWorkspace {
			add("targets", plain("workspace"))
		}
		if len(r.Conditions) > 0 {
			conds := mapping()
			for i := 0; i < len(r.Conditions); {
				field := r.Conditions[i].Field
				ops := mapping()
				ops.Style = yaml.FlowStyle
				for ; i < len(r.Conditions) && r.Conditions[i].Field == field; i++ {
					c := r.Conditions[i]
					var operand *yaml.Node
					if c.Op == OpIn || c.Op == OpNotIn {
						operand = flowSeq()
						for _, v := range c.Values {
							operand.Content = append(operand.Content, value(v))
						}
					} else {
						operand = value(c.Values[0])
					}
					ops.Content = append(ops.Content, plain(string(c.Op)), operand)
				}
				conds.Content = append(conds.Content, str(field), ops)
			}
			add("conditions", conds)
		}
		for _, set := range []struct {
			key string
			ex  []Example
		}{{"match", r.Match}, {"not_match", r.NotMatch}} {
			if len(set.ex) == 0 {
				continue
			}
			list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			for _, ex := range set.ex {
				if ex.Level == nil && ex.Channel == "" && ex.Sender == "" && ex.Cwd == "" && ex.Reason == "" {
					list.Content = append(list.Content, str(ex.Command))
					continue
				}
				m := mapping(plain("command"), str(ex.Command))
				m.Style = yaml.FlowStyle
				for _, kv := range [][2]string{{"channel", ex.Channel}, {"sender", ex.Sender}, {"cwd", ex.Cwd}, {"reason", ex.Reason}} {
					if kv[1] != "" {
						m.Content = append(m.Content, plain(kv[0]), str(kv[1]))
					}
				}
				if ex.Level != nil {
					m.Content = append(m.Content, plain("level"), plain(ex.Level.String()))
				}
				list.Content = append(list.Content, m)
			}
			add(set.key, list)
		}
		if st := r.Scope; st != nil {
			m := mapping()
			if st.TTL > 0 {
				m.Content = append(m.Content, plain("ttl"), plain(formatDuration(st.TTL)))
			}
			if st.MaxUses > 0 {
				m.Content = append(m.Content, plain("max_uses"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(st.MaxUses)})
			}
			keys := make([]string, 0, len(st.Extra))
			for k := range st.Extra {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				m.Content = append(m.Content, str(k), anyNode(st.Extra[k]))
			}
			if len(m.Content) == 0 {
				m.Style = yaml.FlowStyle
			}
			add("scope_template", m)
		}
		rules.Content = append(rules.Content, n)
	}
	if len(rules.Content) > 0 {
		root.Content = append(root.Content, plain("rules"), rules)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		// Every node above is built from validated values.
		panic("policy: format: " + err.Error())
	}
	_ = enc.Close()
	return buf.Bytes()
}

// anyNode writes a scope_template value read by plainValue.
func anyNode(v any) *yaml.Node {
	switch x := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(x)}
	case float64:
		return numNode(formatNumber(x))
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x, Style: yaml.DoubleQuotedStyle}
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, e := range x {
			n.Content = append(n.Content, anyNode(e))
		}
		return n
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k, Style: yaml.DoubleQuotedStyle}, anyNode(x[k]))
		}
		return n
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: fmt.Sprint(v), Style: yaml.DoubleQuotedStyle}
}

// numNode is a plain number in the policy's decimal syntax.
func numNode(s string) *yaml.Node {
	tag := "!!int"
	if strings.Contains(s, ".") {
		tag = "!!float"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: s}
}

// formatDuration writes whole seconds as "600s" and anything else in Go
// duration syntax.
func formatDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}
