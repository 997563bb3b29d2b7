package policy

import (
	"bytes"
	"fmt"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// AddAllowRule returns the policy source with an allow rule for argv
// prefix appended to its top-level rules: list (created when missing). The
// result is validated before it is returned; comments are kept.
func AddAllowRule(name string, src []byte, ruleName string, prefix []string) ([]byte, error) {
	return AddPinnedAllowRule(name, src, ruleName, prefix, "")
}

// AddPinnedAllowRule is AddAllowRule for a rule remembered on approval:
// pin (Rule.Pin), when not empty, binds it to the program, script and
// environment the approved command ran with.
func AddPinnedAllowRule(name string, src []byte, ruleName string, prefix []string, pin string) ([]byte, error) {
	return AddRememberedRules(name, src, []RememberedRule{{Name: ruleName, ArgvPrefix: prefix, Pin: pin}})
}

// RememberedRule is an allow rule written on approval (AddRememberedRules).
type RememberedRule struct {
	Name       string
	ArgvPrefix []string
	// Pin (Rule.Pin), when not empty, binds the rule to the program,
	// script and environment the approved command ran with.
	Pin string
	// Exact limits the rule to the prefix's words and no more (a
	// condition argc equals their number): a bare `make`, not every
	// make command.
	Exact bool
}

// AddRememberedRules returns the policy source with an allow rule for each
// of rules appended to its top-level rules: list (created when missing),
// in one edit. The result is validated before it is returned; comments
// are kept.
func AddRememberedRules(name string, src []byte, rules []RememberedRule) ([]byte, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		src = DefaultSource()
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, yamlError(name, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &Error{File: name, Line: 1, Col: 1, Msg: "policy is not a mapping"}
	}
	root := doc.Content[0]
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "rules" {
			list = root.Content[i+1]
		}
	}
	if list == nil {
		list = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		root.Content = append(root.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "rules", HeadComment: "Rules added by `mnemos approvals approve --remember`."},
			list)
	}
	if list.Kind == yaml.ScalarNode && list.Tag == "!!null" {
		list.Kind, list.Tag, list.Value = yaml.SequenceNode, "!!seq", ""
	}
	if list.Kind != yaml.SequenceNode {
		return nil, &Error{File: name, Line: list.Line, Col: list.Column, Msg: "rules is not a list"}
	}
	for _, r := range rules {
		list.Content = append(list.Content, rememberedNode(r))
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("encode policy: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode policy: %w", err)
	}
	if _, err := Parse(name, buf.Bytes()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// rememberedNode is the YAML of one remembered rule.
func rememberedNode(r RememberedRule) *yaml.Node {
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
	flow := func(kind yaml.Kind, tag string, content ...*yaml.Node) *yaml.Node {
		return &yaml.Node{Kind: kind, Tag: tag, Style: yaml.FlowStyle, Content: content}
	}
	words := flow(yaml.SequenceNode, "!!seq")
	for _, w := range r.ArgvPrefix {
		n := str(w)
		n.Style = yaml.DoubleQuotedStyle
		words.Content = append(words.Content, n)
	}
	command := flow(yaml.MappingNode, "!!map", str("argv_prefix"), words)
	if r.Pin != "" {
		command.Content = append(command.Content, str("pin"), str(r.Pin))
	}
	rule := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
		str("name"), str(r.Name),
		str("action"), str("allow"),
		str("command"), command,
	}}
	if r.Exact {
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(len(r.ArgvPrefix))}
		rule.Content = append(rule.Content, str("conditions"),
			flow(yaml.MappingNode, "!!map", str("argc"), flow(yaml.MappingNode, "!!map", str("equals"), n)))
	}
	return rule
}
