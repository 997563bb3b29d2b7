package policy

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mnemos-dev/mnemos/classify"
)

// An extension manifest declares what an extension asks for: a name and,
// for each capability of the closed registry it needs, a target and a
// reason a person reads (seed 001: extension capability admission). It is
// YAML; JSON, being YAML, is read too. Parsing is pure: the caller reads
// the file and passes its bytes.

// Manifest is a parsed extension manifest.
type Manifest struct {
	// Source is the name the manifest was parsed under (its path).
	Source      string `json:"source"`
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
	// Replaces names what the extension declares it replaces; "mnemos" is
	// a Mnemos-replacement request.
	Replaces string `json:"replaces,omitempty"`
	// Provides lists the roles the extension says it plays ("gate",
	// "approvals", ...).
	Provides     []string            `json:"provides,omitempty"`
	Capabilities []CapabilityRequest `json:"capabilities"`
}

// CapabilityRequest is one capability a manifest asks for.
type CapabilityRequest struct {
	Capability classify.Capability `json:"capability"`
	// Target is as written ("~/notes/**", "api.example.com"); empty when
	// none was given.
	Target string `json:"target,omitempty"`
	Why    string `json:"why"`
	Pos    Pos    `json:"pos"`
}

// manifestName is what an extension may be called: it becomes the sender
// of its grants.
var manifestName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`) })

// maxManifestName bounds an extension's name.
const maxManifestName = 64

// ParseManifest parses an extension manifest. name is used in error
// positions. It returns every error found, in file order, each positioned
// FILE:LINE:COL; a manifest is returned only when there are none.
func ParseManifest(name string, data []byte) (*Manifest, []*Error) {
	d := &decoder{file: name}
	root, err := d.document(data, manifestDoc)
	if err != nil {
		return nil, []*Error{err}
	}
	d.check(root, 0, manifestDoc)
	if root.Kind != yaml.MappingNode {
		return nil, []*Error{d.errAt(root, "expected a mapping (key: value lines)")}
	}
	m := &Manifest{Source: name}
	haveCaps := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		var err *Error
		switch k.Value {
		case "name":
			if m.Name, err = d.str(v); err == nil {
				switch {
				case len(m.Name) > maxManifestName:
					err = d.errAt(v, fmt.Sprintf("name is longer than %d characters", maxManifestName))
				case !manifestName().MatchString(m.Name):
					err = d.errAt(v, fmt.Sprintf("name %q must be lowercase letters, digits, '.', '_' or '-', starting with a letter or digit", m.Name))
				}
			}
		case "version":
			m.Version, err = d.str(v)
		case "description":
			m.Description, err = d.str(v)
		case "replaces":
			m.Replaces, err = d.str(v)
		case "provides":
			m.Provides, err = d.manifestStrings(v)
		case "capabilities":
			haveCaps = true
			m.Capabilities = d.manifestRequests(v)
		default:
			err = d.errAt(k, fmt.Sprintf("unknown key %q (want name, version, description, replaces, provides or capabilities)", k.Value))
		}
		if err != nil {
			d.errs = append(d.errs, err)
		}
	}
	if !hasKey(root, "name") {
		d.errs = append(d.errs, d.errAt(root, "missing name: an extension needs a name (name: my-extension)"))
	}
	if !haveCaps {
		d.errs = append(d.errs, d.errAt(root, "missing capabilities: list what the extension asks for (capabilities: [{capability: fs:read, target: ~/notes/**, why: ...}])"))
	}
	if len(d.errs) > 0 {
		return nil, d.sorted()
	}
	return m, nil
}

// hasKey reports whether a mapping holds key.
func hasKey(root *yaml.Node, key string) bool {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			return true
		}
	}
	return false
}

// indentTab finds the first tab in a line's indentation.
func indentTab(data []byte) (line, col int, ok bool) {
	for i, l := range bytes.Split(data, []byte("\n")) {
		for j, c := range l {
			if c == '\t' {
				return i + 1, j + 1, true
			}
			if c != ' ' {
				break
			}
		}
	}
	return 0, 0, false
}

func (d *decoder) manifestStrings(n *yaml.Node) ([]string, *Error) {
	if n.Kind != yaml.SequenceNode {
		return nil, d.errAt(n, "expected a list")
	}
	var out []string
	for _, c := range n.Content {
		s, err := d.str(c)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// manifestRequests reads the capabilities list, recording every error.
func (d *decoder) manifestRequests(n *yaml.Node) []CapabilityRequest {
	if n.Kind != yaml.SequenceNode {
		d.errs = append(d.errs, d.errAt(n, "expected a list of {capability, target, why}"))
		return nil
	}
	if len(n.Content) == 0 {
		d.errs = append(d.errs, d.errAt(n, "capabilities is empty: list what the extension asks for"))
		return nil
	}
	var out []CapabilityRequest
	first := map[string]int{}
	for _, item := range n.Content {
		r, ok := d.manifestRequest(item)
		if !ok {
			continue
		}
		key := string(r.Capability) + "\x00" + r.Target
		if line, dup := first[key]; dup {
			d.errs = append(d.errs, d.errAt(item, fmt.Sprintf("%s on %q is asked twice (first at line %d)", r.Capability, r.Target, line)))
			continue
		}
		first[key] = item.Line
		out = append(out, r)
	}
	return out
}

// allPower reports a capability name that asks for every power, or every
// power of a family ("*", "all", "fs:*").
func allPower(s string) bool {
	switch strings.ToLower(s) {
	case "*", "**", "all", "any", "*:*", "everything", "root", "admin":
		return true
	}
	return strings.HasSuffix(s, ":*") || strings.HasPrefix(s, "*:")
}

func (d *decoder) manifestRequest(n *yaml.Node) (CapabilityRequest, bool) {
	if n.Kind != yaml.MappingNode {
		d.errs = append(d.errs, d.errAt(n, "expected a mapping {capability, target, why}"))
		return CapabilityRequest{}, false
	}
	r := CapabilityRequest{Pos: d.pos(n)}
	ok := true
	fail := func(e *Error) {
		d.errs = append(d.errs, e)
		ok = false
	}
	var capNode, targetNode, whyNode *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "capability":
			capNode = v
			s, err := d.strict(v)
			if err != nil {
				fail(err)
				continue
			}
			spec, lerr := Lookup(classify.Capability(s))
			switch {
			case allPower(s):
				fail(d.errAt(v, fmt.Sprintf("capability %q asks for every power: all-power requests are denied; name each capability it needs from the registry (mnemos policy registry)", s)))
			case lerr != nil:
				fail(d.errAt(v, fmt.Sprintf("capability %q is not in the registry (want one of %s)", s, registryNames())))
			default:
				r.Capability = spec.Name
			}
		case "target":
			targetNode = v
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				// "target: ~" or "target:" is no target (and "~" unquoted
				// is YAML's null): an ambient request where one is needed.
				continue
			}
			s, err := d.str(v)
			if err != nil {
				fail(err)
				continue
			}
			r.Target = strings.TrimSpace(s)
		case "why":
			whyNode = v
			s, err := d.str(v)
			if err != nil {
				fail(err)
				continue
			}
			if r.Why = strings.TrimSpace(s); r.Why == "" {
				fail(d.errAt(v, "why is empty: say what the extension needs it for; a person reads it before approving"))
			}
		default:
			fail(d.errAt(k, fmt.Sprintf("unknown key %q in a capability (want capability, target or why)", k.Value)))
		}
	}
	if capNode == nil {
		fail(d.errAt(n, "missing capability"))
	}
	if whyNode == nil {
		fail(d.errAt(n, "missing why: say what the extension needs this capability for"))
	}
	if r.Capability != "" && targetNode != nil && r.Target != "" {
		if msg := targetProblem(r.Capability, r.Target); msg != "" {
			fail(d.errAt(targetNode, msg))
		}
	}
	return r, ok
}

// registryNames lists the registry for messages.
func registryNames() string {
	var names []string
	for _, s := range Registry() {
		names = append(names, string(s.Name))
	}
	return strings.Join(names, ", ")
}

// targetProblem checks a target's shape for its capability's target kind.
func targetProblem(c classify.Capability, t string) string {
	spec, _ := lookupSpec(c)
	if strings.ContainsAny(t, "\n\r\x00") {
		return "a target is one line"
	}
	switch spec.TargetKind {
	case "path_glob":
		if !strings.HasPrefix(t, "/") && t != "~" && !strings.HasPrefix(t, "~/") {
			return fmt.Sprintf("path target %q must be absolute or start with ~/", t)
		}
		for _, e := range strings.Split(t, "/") {
			if e == ".." {
				return fmt.Sprintf("path target %q may not contain ..", t)
			}
		}
	case "host":
		if strings.Contains(t, "://") || strings.Contains(t, "/") {
			return fmt.Sprintf("host target %q must be a host name (api.example.com), not a URL or path", t)
		}
		for _, r := range t {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".-*:[]", r)) {
				return fmt.Sprintf("host target %q holds %q; a host is letters, digits, '.', '-', '*' and an optional :port", t, r)
			}
		}
	}
	return ""
}

// Admission classes: why a capability request was denied.
const (
	DeniedAmbient     = "ambient"
	DeniedSelfGrant   = "self-granting"
	DeniedReplacement = "mnemos-replacement"
	DeniedLevel       = "level"
	DeniedPerCommand  = "per-command"
)

// NoTarget is the target recorded for a capability whose target kind is
// none (time:read, parse:local, llm:local, llm:online) when the manifest
// gives none.
const NoTarget = "-"

// Admission is the verdict on one capability request.
type Admission struct {
	Request CapabilityRequest `json:"request"`
	// Target is the target a grant would carry: ~ expanded, NoTarget for a
	// capability without one.
	Target string `json:"target"`
	// Outcome is allow (granted now), ask (a person approves) or deny.
	Outcome Outcome `json:"outcome"`
	// Class is, for a deny, one of the Denied* classes.
	Class  string `json:"class,omitempty"`
	Reason string `json:"reason"`
}

// SelfGrantCheck reports whether a capability on a (~-expanded) target
// would reach mnemos's own files, the guard's forbidden paths or mnemos's
// approving subcommands, and why. The gate supplies it from the guard.
type SelfGrantCheck func(c classify.Capability, target string) (reason string, hit bool)

// lowRisk reports what seed 001 lets the core evaluator grant: the read
// and display capabilities, which are exactly those the ReadOnly level
// does not deny (default approval none, and non-critical per-target
// reads).
func lowRisk(s Spec) bool { return TableCell(ReadOnly, s) != Denied }

// replacementRoles are roles only mnemos plays.
func replacementRole(r string) bool {
	switch strings.ToLower(strings.TrimSpace(r)) {
	case "mnemos", "gate", "gatekeeper", "policy", "approvals", "approval", "grants", "audit", "guard", "vaglio", "sandbox":
		return true
	}
	return false
}

// replacement returns why a manifest asks to replace mnemos, or "".
func replacement(m *Manifest) string {
	switch {
	case m.Name == "mnemos":
		return "an extension may not call itself mnemos"
	case strings.EqualFold(strings.TrimSpace(m.Replaces), "mnemos"):
		return "the extension declares it replaces mnemos"
	}
	for _, p := range m.Provides {
		if replacementRole(p) {
			return fmt.Sprintf("the extension declares it provides %q, which only mnemos does", p)
		}
	}
	return ""
}

// AdmitManifest judges each capability a manifest asks for, in order
// (seed 001):
//
//  1. a manifest that would replace mnemos (named mnemos, replaces:
//     mnemos, provides a gate, policy, approvals, audit, guard or sandbox)
//     is denied whole;
//  2. an ambient request (no target, or one that covers everything or the
//     whole home directory) is denied;
//  3. a self-granting request (check says the target reaches mnemos's own
//     files, the guard's forbidden paths, or runs mnemos) is denied;
//  4. what the autonomy table denies at level is denied;
//  5. code:exec and mail:send are denied: they never take a standing
//     grant, each command needs its own approval;
//  6. low-risk read and display capabilities are granted now;
//  7. everything else (process, filesystem mutation, network, outgoing
//     messages, paid calls) waits for a person: ask.
//
// home expands ~ in path targets. A nil check finds nothing.
func AdmitManifest(m *Manifest, level Level, home string, check SelfGrantCheck) []Admission {
	out := make([]Admission, 0, len(m.Capabilities))
	whole := replacement(m)
	for _, r := range m.Capabilities {
		a := Admission{Request: r, Target: expandTarget(r.Capability, r.Target, home), Outcome: Deny}
		spec, err := Lookup(r.Capability)
		switch {
		case err != nil:
			// ParseManifest never lets one through; deny all the same.
			a.Class, a.Reason = DeniedAmbient, err.Error()
		case whole != "":
			a.Class, a.Reason = DeniedReplacement, "Mnemos-replacement: "+whole
		case ambient(spec, a.Target, home) != "":
			a.Class, a.Reason = DeniedAmbient, "ambient: "+ambient(spec, a.Target, home)
		default:
			if why, hit := selfGrant(check, spec, a.Target); hit {
				a.Class, a.Reason = DeniedSelfGrant, "self-granting: "+why
				break
			}
			switch cell := TableCell(level, spec); {
			case cell == Denied:
				a.Class, a.Reason = DeniedLevel, fmt.Sprintf("the autonomy level %s denies %s", level, spec.Name)
			case spec.DefaultApproval == ApprovalAlways:
				a.Class, a.Reason = DeniedPerCommand, fmt.Sprintf("%s is never a standing grant: each command needs a per-command approval", spec.Name)
			case lowRisk(spec):
				a.Outcome, a.Reason = Allow, fmt.Sprintf("%s is a low-risk read: granted by the core evaluator", spec.Name)
			default:
				a.Outcome, a.Reason = Ask, fmt.Sprintf("%s needs a person's approval", spec.Name)
			}
		}
		out = append(out, a)
	}
	return out
}

func selfGrant(check SelfGrantCheck, spec Spec, target string) (string, bool) {
	if check == nil || target == NoTarget {
		return "", false
	}
	return check(spec.Name, target)
}

// expandTarget resolves ~ in a path target, and names the missing target
// of a capability that has none.
func expandTarget(c classify.Capability, t, home string) string {
	spec, ok := lookupSpec(c)
	if !ok {
		return t
	}
	if t == "" && spec.TargetKind == "none" {
		return NoTarget
	}
	if spec.TargetKind == "path_glob" && home != "" {
		if t == "~" {
			return home
		}
		if rest, ok := strings.CutPrefix(t, "~/"); ok {
			return strings.TrimSuffix(home, "/") + "/" + rest
		}
	}
	return t
}

// ambientProbe is a name no specific target names: a target matching it
// inside a directory covers every entry of that directory.
const ambientProbe = ".mnemos-any-entry"

// ambient returns why a (~-expanded) target is ambient, or "".
func ambient(spec Spec, t, home string) string {
	if t == "" {
		return fmt.Sprintf("%s without a target would cover every %s", spec.Name, kindNoun(spec.TargetKind))
	}
	if t == NoTarget && spec.TargetKind == "none" {
		return ""
	}
	switch spec.TargetKind {
	case "path_glob":
		switch {
		case CoversEverything(t):
			return fmt.Sprintf("%q covers the whole filesystem", t)
		case home != "" && (MatchTarget(t, home) || MatchTarget(t, strings.TrimSuffix(home, "/")+"/"+ambientProbe)):
			return fmt.Sprintf("%q covers the whole home directory", t)
		}
	case "host":
		h := t
		if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h, "]") {
			h = h[:i]
		}
		rest, wild := strings.CutPrefix(h, "*.")
		if strings.Trim(h, "*.?") == "" || wild && !strings.Contains(rest, ".") {
			return fmt.Sprintf("%q is a bare host wildcard: it covers every host", t)
		}
	default:
		switch strings.ToLower(t) {
		case "all", "any", "everything":
			return fmt.Sprintf("%q covers every %s", t, kindNoun(spec.TargetKind))
		}
		if CoversEverything(t) {
			return fmt.Sprintf("%q covers every %s", t, kindNoun(spec.TargetKind))
		}
	}
	return ""
}

func kindNoun(kind string) string {
	switch kind {
	case "path_glob":
		return "path"
	case "host":
		return "host"
	}
	return "target"
}

// AdmissionOutcome is the strictest outcome of a set of admissions: deny
// when any is denied, else ask when any waits, else allow. No admissions
// is deny.
func AdmissionOutcome(as []Admission) Outcome {
	if len(as) == 0 {
		return Deny
	}
	o := Allow
	for _, a := range as {
		o = Stricter(o, a.Outcome)
	}
	return o
}
