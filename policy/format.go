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

// Format writes a policy in canonical form: every setting the file wrote
// or that differs from its default, every rule under rules: in evaluation
// order with its action and priority, strings quoted. A setting the file
// did not write stays unwritten, because in a stack (Merge) a setting a
// system or project file does not write is no constraint. Parse(Format(p))
// yields the same policy (positions aside), and formatting that again
// yields the same bytes. Comments and list forms are not kept;
// AddAllowRule edits a file in place instead. Format writes one file: for
// a stack built by Merge, format each of its Layers.
func Format(p *Policy) []byte {
	str := func(s string) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
	}
	plain := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	mapping := func(kv ...*yaml.Node) *yaml.Node {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: kv}
	}

	root := mapping()
	if p.has(setLevel) || p.Level != Supervised {
		root.Content = append(root.Content, plain("level"), plain(p.Level.String()))
	}
	if p.has(setShell) || p.Shell != Ask {
		root.Content = append(root.Content, plain("defaults"), mapping(plain("shell"), plain(p.Shell.String())))
	}
	if p.has(setTTL) || p.ApprovalTTL != DefaultApprovalTTL {
		root.Content = append(root.Content, plain("approvals"), mapping(plain("ttl"), plain(formatDuration(p.ApprovalTTL))))
	}
	if wt := p.has(setThreshold) || p.JudgeThreshold != DefaultJudgeThreshold; wt || !p.Judge.IsZero() {
		root.Content = append(root.Content, plain("judge"), judgeNode(p.JudgeThreshold, wt, p.Judge))
	}
	if p.HookHold > 0 {
		root.Content = append(root.Content, plain("hook"), mapping(plain("hold"), plain(formatDuration(p.HookHold))))
	}
	if !p.State.IsZero() {
		root.Content = append(root.Content, plain("state"), stateNode(p.State))
	}
	if p.Journal.set != 0 {
		root.Content = append(root.Content, plain("journal"), journalNode(p.Journal))
	}
	if !p.Sandbox.IsZero() {
		root.Content = append(root.Content, plain("sandbox"), sandboxNode(p.Sandbox, false))
	}
	if len(p.Costs) > 0 {
		root.Content = append(root.Content, plain("costs"), costsNode(p.Costs))
	}
	if len(p.RateLimits) > 0 {
		root.Content = append(root.Content, plain("rate_limits"), rateLimitsNode(p.RateLimits))
	}
	if len(p.Channels) > 0 {
		root.Content = append(root.Content, plain("channels"), channelsNode(p.Channels))
	}
	ruleList := func(list []Rule) *yaml.Node {
		rules := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, r := range list {
			rules.Content = append(rules.Content, ruleNode(r))
		}
		return rules
	}
	if len(p.Profiles) > 0 {
		profiles := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, pr := range p.Profiles {
			n := mapping(plain("name"), str(pr.Name), plain("channel"), str(pr.Channel), plain("sender"), str(pr.Sender))
			if pr.Level != nil {
				n.Content = append(n.Content, plain("level"), plain(pr.Level.String()))
			}
			if len(pr.RateLimits) > 0 {
				n.Content = append(n.Content, plain("rate_limits"), rateLimitsNode(pr.RateLimits))
			}
			if len(pr.Rules) > 0 || pr.Level == nil && len(pr.RateLimits) == 0 {
				// A profile that sets nothing else keeps its empty rules:
				// list, without which it would not load.
				n.Content = append(n.Content, plain("rules"), ruleList(pr.Rules))
			}
			profiles.Content = append(profiles.Content, n)
		}
		root.Content = append(root.Content, plain("profiles"), profiles)
	}
	if len(p.Rules) > 0 {
		root.Content = append(root.Content, plain("rules"), ruleList(p.Rules))
	}
	if len(root.Content) == 0 {
		// An empty mapping would read as an empty file.
		root.Content = append(root.Content, plain("level"), plain(p.Level.String()))
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

// ruleNode writes one rule in canonical form.
func ruleNode(r Rule) *yaml.Node {
	str := func(s string) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
	}
	plain := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	mapping := func(kv ...*yaml.Node) *yaml.Node {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: kv}
	}
	flowSeq := func(items ...*yaml.Node) *yaml.Node {
		return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Content: items}
	}
	value := func(v Value) *yaml.Node {
		if v.Number != nil {
			return numNode(formatNumber(*v.Number))
		}
		return str(v.Text)
	}
	n := mapping(
		plain("name"), str(r.Name),
		plain("action"), plain(r.Action.String()),
		plain("priority"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(r.Priority)},
	)
	add := func(k string, v *yaml.Node) { n.Content = append(n.Content, plain(k), v) }
	if r.Description != "" {
		add("description", str(r.Description))
	}
	if r.Undoable {
		add("undoable", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	}
	if len(r.ArgvPrefix) > 0 {
		words := flowSeq()
		for _, w := range r.ArgvPrefix {
			words.Content = append(words.Content, str(w))
		}
		cmd := mapping(plain("argv_prefix"), words)
		if r.Pin != "" {
			cmd.Content = append(cmd.Content, plain("pin"), str(r.Pin))
		}
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
	if r.Sandbox != nil {
		add("sandbox", sandboxNode(*r.Sandbox, true))
	}
	return n
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
