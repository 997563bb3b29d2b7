package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mnemos-dev/mnemos/classify"
)

// SandboxConfig is a policy's sandbox: section, a rule's sandbox:
// override, or (from SandboxFor) the sandbox of one request.
//
//	sandbox:
//	  read: [~/.m2, /srv/data]    # extra trees the command may read and run programs from
//	  write: [~/.cache/bazel]     # extra trees the command may read and write
//	  caches:                     # the tool caches, replacing DefaultCaches ([]: none)
//	    - {path: ~/.cache, mode: write}
//	    - {path: ~/.rustup, mode: read}
//	  ports: [443, 22]            # the only TCP ports it may connect to (none listed: any)
//	  bind: [8080]                # the only TCP ports it may bind (none listed: none; 0: ephemeral)
//	  network: false              # TCP always (true) or never (false); unset: as decided
//	  required: true              # refuse to run where the sandbox cannot be enforced
//
// Paths are absolute or start with "~/" (the user's home; see ExpandHome).
// A read path, like a read cache, may also be executed: a command that may
// read a program could copy it and run the copy anyway. Ports are from 1
// to 65535; bind may also list 0, any ephemeral port. Ports and bind
// matter only when the command has network. Caches belong to the
// top-level section; a rule's override cannot change them.
type SandboxConfig struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// Sockets are unix socket files commands may connect to although they
	// lie outside the workspace and temp (an ssh agent, a docker socket):
	// each one gives commands what that service can do.
	Sockets []string `json:"sockets,omitempty"`
	// Caches, when CachesSet, replace the default tool caches
	// (DefaultCaches); an empty list grants none.
	Caches    []SandboxCache `json:"caches,omitempty"`
	CachesSet bool           `json:"caches_set,omitempty"`
	Ports     []uint16       `json:"ports,omitempty"`
	Bind      []uint16       `json:"bind,omitempty"`
	// Network, when set, overrides the decision: true lets every command
	// of the request open TCP connections, false lets none. When unset, a
	// request has network when one of its commands was classified
	// network:http. In a config returned by SandboxFor it is always set.
	Network  *bool `json:"network,omitempty"`
	Required bool  `json:"required,omitempty"`
	Pos      Pos   `json:"pos"`
}

// IsZero reports whether the section sets nothing.
func (c SandboxConfig) IsZero() bool {
	return len(c.Read) == 0 && len(c.Write) == 0 && len(c.Sockets) == 0 && !c.CachesSet && len(c.Ports) == 0 && len(c.Bind) == 0 && c.Network == nil && !c.Required
}

// SandboxCache is a tool cache a command may read and run programs from,
// or, with Write, also change.
type SandboxCache struct {
	Path  string `json:"path"`
	Write bool   `json:"write,omitempty"`
}

// Mode is "write" or "read".
func (c SandboxCache) Mode() string {
	if c.Write {
		return "write"
	}
	return "read"
}

// DefaultCaches are the tool caches a command gets when no policy lists
// caches: the same list as the sandbox package's DefaultCaches, written
// with "~/" (a gate test keeps the two equal). Write is granted on tools'
// data only, never on their programs or configuration (~/go/bin,
// ~/.cargo/bin, ~/.cargo/config.toml), which would run later outside the
// sandbox.
func DefaultCaches() []SandboxCache {
	return []SandboxCache{
		{"~/.cache", true}, {"~/go/pkg", true}, {"~/.cargo/registry", true}, {"~/.cargo/git", true},
		{"~/.npm/_cacache", true}, {"~/.npm/_logs", true}, {"~/.gradle/caches", true}, {"~/.m2/repository", true},
		{"~/.rustup", false}, {"~/.m2/wrapper/dists", false}, {"~/.gradle/wrapper/dists", false},
	}
}

// NarrowCaches returns the caches of by that base grants, each writable
// only when by says write and a cache of base holding it is writable. A
// cache of by may be base's or a directory inside one of base's; the rest
// of by is left out. So a lower layer can drop a cache or make it
// read-only, never add one or make it writable.
func NarrowCaches(base, by []SandboxCache) []SandboxCache {
	out := []SandboxCache{}
	for _, b := range by {
		granted, write := false, false
		for _, a := range base {
			if pathWithin(b.Path, a.Path) {
				granted, write = true, write || a.Write
			}
		}
		if granted {
			out = append(out, SandboxCache{Path: b.Path, Write: b.Write && write})
		}
	}
	return out
}

// pathWithin reports whether p is dir or lies beneath it (both clean).
func pathWithin(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// cachesOf is the caches a config grants: its own when set, else def.
func cachesOf(c SandboxConfig, def []SandboxCache) []SandboxCache {
	if c.CachesSet {
		return c.Caches
	}
	return def
}

// HasNetwork reports whether the config lets the command open TCP
// connections: Network is set and true.
func (c SandboxConfig) HasNetwork() bool { return c.Network != nil && *c.Network }

// ExpandHome returns the config with every "~/" path made absolute under
// home.
func (c SandboxConfig) ExpandHome(home string) SandboxConfig {
	exp := func(ps []string) []string {
		if ps == nil {
			return nil
		}
		out := make([]string, len(ps))
		for i, p := range ps {
			if rest, ok := strings.CutPrefix(p, "~/"); ok {
				p = path.Join(home, rest)
			}
			out[i] = p
		}
		return out
	}
	c.Read, c.Write, c.Sockets = exp(c.Read), exp(c.Write), exp(c.Sockets)
	if c.Caches != nil {
		cs := make([]SandboxCache, len(c.Caches))
		for i, e := range c.Caches {
			cs[i] = SandboxCache{Path: exp([]string{e.Path})[0], Write: e.Write}
		}
		c.Caches = cs
	}
	return c
}

// SandboxOverride is the sandbox: override of a rule that matched a
// command, as recorded in the command's Result.
type SandboxOverride struct {
	Rule    string        `json:"rule"`
	Layer   Layer         `json:"layer,omitempty"`
	Profile string        `json:"profile,omitempty"`
	Config  SandboxConfig `json:"config"`
}

// SandboxFor is the sandbox of one request, from the Results of its
// commands (as Evaluate returned them, from this policy) and the policy's
// sandbox: section. The request runs in one sandbox, so the commands'
// needs are combined:
//
//   - read and write: the section's paths and those of the override of
//     every rule that matched a command (the rule Result.Rule names, or,
//     for a stack, each layer's matching rule that counted);
//   - ports: an allow-list. An empty list is no limit; a rule's ports
//     add to the section's list and cannot open ports when the section
//     sets none (every port is then open already);
//   - bind: the ports a command may bind. An empty list is none; a rule's
//     bind adds to the section's;
//   - network: the overrides of the matching rules decide when they set
//     it (false when any says false, otherwise true); else the section's
//     value; else the decision: true when a command has a network:http
//     access;
//   - required: when the section or any override says so;
//   - caches: the section's (a rule's override cannot set them).
//
// For a stack built by Merge, each layer's section and overrides are
// combined as above and the layers then as Merge documents: extra paths
// come only from the system and user layers, port lists are intersected
// (no common port: no network), bind lists are intersected and bind
// nothing unless the system or user layer lists ports (the project
// layer can only narrow them), network is false when any layer says
// false and true only when the system or user layer says so,
// required holds when any layer requires it, and the caches are those of
// the highest layer that lists them (when the system or user layer,
// else DefaultCaches), narrowed (NarrowCaches) by every lower layer that
// lists them: a project layer can drop a cache or make it read-only, never
// add one or make it writable. CachesSet is false when no layer lists
// caches: the sandbox's defaults apply.
//
// The config returned has Network set; its paths keep "~/" (ExpandHome).
func (p *Policy) SandboxFor(results []Result) SandboxConfig {
	layers := p.layers
	if len(layers) == 0 {
		layers = []*Policy{p}
	}
	var out SandboxConfig
	decided := false
	for _, r := range results {
		for _, a := range r.Accesses {
			decided = decided || a.Capability == classify.NetworkHTTP
		}
	}
	var netFalse, netTrue, closed bool
	var ports, bind []uint16
	portsSet, bindSet, bindTrusted := false, false, false
	out.Caches, out.CachesSet = stackCaches(layers)
	for _, l := range layers {
		lc := l.layerSandbox(results)
		trusted := l.Layer != LayerProject
		if trusted {
			out.Read = appendNew(out.Read, lc.Read...)
			out.Write = appendNew(out.Write, lc.Write...)
			out.Sockets = appendNew(out.Sockets, lc.Sockets...)
		}
		out.Required = out.Required || lc.Required
		if lc.Network != nil {
			if !*lc.Network {
				netFalse = true
			} else if trusted {
				netTrue = true
			}
		}
		ports, portsSet, closed = intersectPorts(ports, portsSet, lc.Ports, closed)
		// No common bind port binds nothing; the network stays.
		bind, bindSet, _ = intersectPorts(bind, bindSet, lc.Bind, false)
		bindTrusted = bindTrusted || trusted && len(lc.Bind) > 0
	}
	if !bindTrusted {
		bind = nil
	}
	out.Ports, out.Bind = ports, bind
	net := decided
	switch {
	case netFalse || closed:
		net = false
	case netTrue:
		net = true
	}
	out.Network = &net
	return out
}

// stackCaches combines the caches of the layers (SandboxFor).
func stackCaches(layers []*Policy) ([]SandboxCache, bool) {
	var caches []SandboxCache
	set := false
	for _, l := range layers {
		c := l.Sandbox
		switch {
		case !c.CachesSet:
		case !set && l.Layer != LayerProject:
			caches = slices.Clone(c.Caches)
		default:
			caches = NarrowCaches(cachesOf(SandboxConfig{Caches: caches, CachesSet: set}, DefaultCaches()), c.Caches)
		}
		set = set || c.CachesSet
	}
	if set && caches == nil {
		caches = []SandboxCache{}
	}
	return caches, set
}

// layerSandbox combines one policy's section with the overrides, recorded
// in results, of its own rules. Network stays unset when neither sets it.
func (p *Policy) layerSandbox(results []Result) SandboxConfig {
	top := p.Sandbox
	out := SandboxConfig{Network: top.Network, Required: top.Required}
	out.Read = appendNew(nil, top.Read...)
	out.Write = appendNew(nil, top.Write...)
	out.Sockets = appendNew(nil, top.Sockets...)
	out.Ports = appendPorts(nil, top.Ports...)
	out.Bind = appendPorts(nil, top.Bind...)
	var ruleFalse, ruleTrue bool
	for _, r := range results {
		for _, o := range r.Sandbox {
			if o.Layer != p.Layer {
				continue
			}
			c := o.Config
			out.Read = appendNew(out.Read, c.Read...)
			out.Write = appendNew(out.Write, c.Write...)
			out.Sockets = appendNew(out.Sockets, c.Sockets...)
			if len(top.Ports) > 0 {
				out.Ports = appendPorts(out.Ports, c.Ports...)
			}
			out.Bind = appendPorts(out.Bind, c.Bind...)
			out.Required = out.Required || c.Required
			if c.Network != nil {
				if *c.Network {
					ruleTrue = true
				} else {
					ruleFalse = true
				}
			}
		}
	}
	switch {
	case ruleFalse:
		f := false
		out.Network = &f
	case ruleTrue:
		t := true
		out.Network = &t
	}
	return out
}

// intersectPorts narrows an allow-list (set: some layer gave one) by
// another; an empty list is no limit. closed becomes true when two lists
// have no port in common.
func intersectPorts(acc []uint16, set bool, next []uint16, closed bool) ([]uint16, bool, bool) {
	if len(next) == 0 {
		return acc, set, closed
	}
	if !set {
		return appendPorts(nil, next...), true, closed
	}
	var out []uint16
	for _, p := range acc {
		if slices.Contains(next, p) {
			out = append(out, p)
		}
	}
	return out, true, closed || len(out) == 0
}

func appendNew(dst []string, src ...string) []string {
	for _, s := range src {
		if !slices.Contains(dst, s) {
			dst = append(dst, s)
		}
	}
	return dst
}

// appendPorts adds ports not yet listed, keeping the list sorted.
func appendPorts(dst []uint16, src ...uint16) []uint16 {
	for _, p := range src {
		if i, found := slices.BinarySearch(dst, p); !found {
			dst = slices.Insert(dst, i, p)
		}
	}
	return dst
}

// sandboxKeys and ruleSandboxKeys name the keys of the sandbox section and
// of a rule's override, for the unknown-key message.
const (
	sandboxKeys     = "read, write, sockets, caches, ports, bind, network or required"
	ruleSandboxKeys = "read, write, sockets, ports, bind, network or required"
)

// sandbox decodes the sandbox: section, or a rule's override when rule is
// set (which cannot set the caches: they are the same for every command).
func (d *decoder) sandbox(n *yaml.Node, rule bool) (SandboxConfig, *Error) {
	sc := SandboxConfig{Pos: Pos{File: d.file, Line: n.Line, Col: n.Column}}
	if n.Kind != yaml.MappingNode {
		return sc, d.errAt(n, "sandbox must be a mapping, e.g. {write: [~/.cache/bazel], ports: [443]}")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "read", "write":
			ps, err := d.sandboxPaths(v, k.Value)
			if err != nil {
				return sc, err
			}
			if k.Value == "read" {
				sc.Read = ps
			} else {
				sc.Write = ps
			}
		case "sockets":
			ps, err := d.sandboxPaths(v, k.Value)
			if err != nil {
				return sc, err
			}
			sc.Sockets = ps
		case "caches":
			if rule {
				return sc, d.errAt(k, "a rule's sandbox cannot set caches: set them in the top-level sandbox section")
			}
			cs, err := d.caches(v)
			if err != nil {
				return sc, err
			}
			sc.Caches, sc.CachesSet = cs, true
		case "ports", "bind":
			ps, err := d.ports(v, k.Value, k.Value == "bind")
			if err != nil {
				return sc, err
			}
			if k.Value == "ports" {
				sc.Ports = ps
			} else {
				sc.Bind = ps
			}
		case "network":
			b, err := d.boolean(v)
			if err != nil {
				return sc, err
			}
			sc.Network = &b
		case "required":
			b, err := d.boolean(v)
			if err != nil {
				return sc, err
			}
			sc.Required = b
		default:
			keys := sandboxKeys
			if rule {
				keys = ruleSandboxKeys
			}
			return sc, d.errAt(k, fmt.Sprintf("unknown key %q in sandbox (want %s)", k.Value, keys))
		}
	}
	return sc, nil
}

// sandboxPaths reads a list of absolute or ~/ paths, cleaned.
func (d *decoder) sandboxPaths(n *yaml.Node, key string) ([]string, *Error) {
	if n.Kind != yaml.SequenceNode {
		return nil, d.errAt(n, fmt.Sprintf("sandbox %s must be a list of paths, e.g. [~/.m2, /srv/data]", key))
	}
	var out []string
	for _, e := range n.Content {
		c, err := d.sandboxPath(e)
		if err != nil {
			return nil, err
		}
		out = appendNew(out, c)
	}
	return out, nil
}

// sandboxPath reads one absolute or ~/ path, cleaned.
func (d *decoder) sandboxPath(e *yaml.Node) (string, *Error) {
	s, err := d.strict(e)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "~/") {
		return "", d.errAt(e, fmt.Sprintf("sandbox path %q must be absolute or start with ~/", s))
	}
	if slices.Contains(strings.Split(s, "/"), "..") {
		return "", d.errAt(e, fmt.Sprintf("sandbox path %q must not contain \"..\"; write the directory it means", s))
	}
	c := path.Clean(s)
	switch c {
	case "/":
		return "", d.errAt(e, fmt.Sprintf("sandbox path %q grants the whole filesystem; name the directories the commands need", s))
	case "~":
		return "", d.errAt(e, fmt.Sprintf("sandbox path %q grants the whole home directory, secrets included; name the directories the commands need", s))
	}
	return c, nil
}

// caches reads a list of {path, mode} entries; mode is read (the
// default) or write.
func (d *decoder) caches(n *yaml.Node) ([]SandboxCache, *Error) {
	if n.Kind != yaml.SequenceNode {
		return nil, d.errAt(n, "sandbox caches must be a list of {path, mode} entries, e.g. [{path: ~/.cache, mode: write}]")
	}
	out := []SandboxCache{}
	for _, e := range n.Content {
		if e.Kind != yaml.MappingNode {
			return nil, d.errAt(e, fmt.Sprintf("a sandbox cache must be a mapping such as {path: ~/.cache, mode: write}, found %q", e.Value))
		}
		var c SandboxCache
		var pathNode *yaml.Node
		for i := 0; i+1 < len(e.Content); i += 2 {
			k, v := e.Content[i], e.Content[i+1]
			switch k.Value {
			case "path":
				p, err := d.sandboxPath(v)
				if err != nil {
					return nil, err
				}
				c.Path, pathNode = p, v
			case "mode":
				m, err := d.strict(v)
				if err != nil {
					return nil, err
				}
				switch m {
				case "read":
				case "write":
					c.Write = true
				default:
					return nil, d.errAt(v, fmt.Sprintf("sandbox cache mode must be read or write, found %q", m))
				}
			default:
				return nil, d.errAt(k, fmt.Sprintf("unknown key %q in sandbox cache (want path or mode)", k.Value))
			}
		}
		if pathNode == nil {
			return nil, d.errAt(e, "a sandbox cache needs a path, e.g. {path: ~/.cache, mode: write}")
		}
		if slices.ContainsFunc(out, func(o SandboxCache) bool { return o.Path == c.Path }) {
			return nil, d.errAt(pathNode, fmt.Sprintf("sandbox cache %q is listed twice", c.Path))
		}
		out = append(out, c)
	}
	return out, nil
}

// ports reads a list of TCP ports; zero (any ephemeral port) only when
// zeroOK.
func (d *decoder) ports(n *yaml.Node, key string, zeroOK bool) ([]uint16, *Error) {
	if n.Kind != yaml.SequenceNode {
		return nil, d.errAt(n, fmt.Sprintf("sandbox %s must be a list of TCP ports, e.g. [443, 8080]", key))
	}
	var out []uint16
	for _, e := range n.Content {
		v, err := d.integer(e, -1<<31, 1<<31)
		if err != nil {
			return nil, err
		}
		switch {
		case v == 0 && zeroOK:
		case v < 1 || v > 65535:
			return nil, d.errAt(e, fmt.Sprintf("port %d is out of range (1 to 65535)", v))
		}
		out = appendPorts(out, uint16(v))
	}
	return out, nil
}

// boolean reads true or false.
func (d *decoder) boolean(n *yaml.Node) (bool, *Error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		return false, d.errAt(n, fmt.Sprintf("expected true or false, found %q", n.Value))
	}
	return strings.EqualFold(n.Value, "true"), nil
}

// sandboxNode writes a sandbox section in canonical form.
func sandboxNode(c SandboxConfig, flow bool) *yaml.Node {
	plain := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if flow {
		m.Style = yaml.FlowStyle
	}
	for _, kv := range []struct {
		k  string
		ps []string
	}{{"read", c.Read}, {"write", c.Write}, {"sockets", c.Sockets}} {
		if len(kv.ps) == 0 {
			continue
		}
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, p := range kv.ps {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p, Style: yaml.DoubleQuotedStyle})
		}
		m.Content = append(m.Content, plain(kv.k), seq)
	}
	if c.CachesSet {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, e := range c.Caches {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle, Content: []*yaml.Node{
				plain("path"), {Kind: yaml.ScalarNode, Tag: "!!str", Value: e.Path, Style: yaml.DoubleQuotedStyle},
				plain("mode"), plain(e.Mode()),
			}})
		}
		m.Content = append(m.Content, plain("caches"), seq)
	}
	for _, kv := range []struct {
		k  string
		ps []uint16
	}{{"ports", c.Ports}, {"bind", c.Bind}} {
		if len(kv.ps) == 0 {
			continue
		}
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, p := range kv.ps {
			seq.Content = append(seq.Content, numNode(fmt.Sprint(p)))
		}
		m.Content = append(m.Content, plain(kv.k), seq)
	}
	boolNode := func(b bool) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(b)} }
	if c.Network != nil {
		m.Content = append(m.Content, plain("network"), boolNode(*c.Network))
	}
	if c.Required {
		m.Content = append(m.Content, plain("required"), boolNode(true))
	}
	if len(m.Content) == 0 {
		m.Style = yaml.FlowStyle
	}
	return m
}

// lintSandbox warns about sandbox settings that can have no effect.
func lintSandbox(p *Policy) []Diagnostic {
	var out []Diagnostic
	warn := func(pos Pos, msg string) {
		out = append(out, Diagnostic{Pos: pos, Severity: SeverityWarning, Msg: msg})
	}
	top := p.Sandbox
	if top.Network != nil && !*top.Network && len(top.Bind) > 0 {
		warn(top.Pos, "sandbox bind has no effect with network: false")
	}
	each := func(r *Rule) {
		sc := r.Sandbox
		if sc == nil {
			return
		}
		switch {
		case r.Action == Deny:
			warn(sc.Pos, fmt.Sprintf("the sandbox of rule %q has no effect: a command it denies never runs", r.Name))
		case len(sc.Ports) > 0 && len(top.Ports) == 0:
			warn(sc.Pos, fmt.Sprintf("the ports of rule %q add to the top-level sandbox ports, which sets none: every port is already open when the command has network", r.Name))
		}
	}
	for i := range p.Rules {
		each(&p.Rules[i])
	}
	for i := range p.Profiles {
		for j := range p.Profiles[i].Rules {
			each(&p.Profiles[i].Rules[j])
		}
	}
	return out
}
