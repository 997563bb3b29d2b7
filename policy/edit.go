package policy

import (
	"bytes"
	"fmt"

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
	var rules *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "rules" {
			rules = root.Content[i+1]
		}
	}
	if rules == nil {
		rules = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		root.Content = append(root.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "rules", HeadComment: "Rules added by `mnemos approvals approve --remember`."},
			rules)
	}
	if rules.Kind == yaml.ScalarNode && rules.Tag == "!!null" {
		rules.Kind, rules.Tag, rules.Value = yaml.SequenceNode, "!!seq", ""
	}
	if rules.Kind != yaml.SequenceNode {
		return nil, &Error{File: name, Line: rules.Line, Col: rules.Column, Msg: "rules is not a list"}
	}
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
	words := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
	for _, w := range prefix {
		n := str(w)
		n.Style = yaml.DoubleQuotedStyle
		words.Content = append(words.Content, n)
	}
	command := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle, Content: []*yaml.Node{str("argv_prefix"), words}}
	if pin != "" {
		command.Content = append(command.Content, str("pin"), str(pin))
	}
	rule := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
		str("name"), str(ruleName),
		str("action"), str("allow"),
		str("command"), command,
	}}
	rules.Content = append(rules.Content, rule)
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
