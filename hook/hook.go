package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// MaxPayload bounds what a hook reads from stdin. A Write tool's payload
// carries the whole file, so the bound is generous; beyond it the call is
// refused, not guessed at.
const MaxPayload = 32 << 20

// Kind says what a tool call does, as far as mnemos judges it.
type Kind int

// Kinds of tool calls.
const (
	// Shell runs a command line (Call.Command, or Call.Argv).
	Shell Kind = iota + 1
	// Files reads, writes, lists or deletes the paths in Call.Files.
	Files
	// Fetch sends a request to each URL in Call.URLs.
	Fetch
	// Other is any other tool: judged as code the agent runs.
	Other
)

// Op is what a file tool does to one path.
type Op string

// File operations.
const (
	Read   Op = "read"
	Write  Op = "write"
	Delete Op = "delete"
	// List names what is in a directory (a glob, a directory listing).
	List Op = "list"
	// Search reads every file below a directory (grep).
	Search Op = "search"
)

// FileAccess is one path a file tool touches.
type FileAccess struct {
	Op   Op     `json:"op"`
	Path string `json:"path"`
	// Pattern is what Search looks for.
	Pattern string `json:"pattern,omitempty"`
}

// Call is one tool call an agent asks its hook about.
type Call struct {
	Agent string `json:"agent"`
	Event string `json:"event"`
	// Tool is the agent's name for the tool (Bash, run_shell_command...).
	Tool string `json:"tool"`
	Kind Kind   `json:"kind"`
	// Command is a Shell call's command line, run by Shell.
	Command string `json:"command,omitempty"`
	// Argv is a Shell call given as words instead of a line.
	Argv []string `json:"argv,omitempty"`
	// Interpreter runs Command: "bash", or "pwsh" for PowerShell.
	Interpreter string       `json:"interpreter,omitempty"`
	Files       []FileAccess `json:"files,omitempty"`
	// Written, for a file tool that writes, is what it puts in place.
	Written *Written `json:"written,omitempty"`
	URLs    []string `json:"urls,omitempty"`
	// Cwd is where the call runs: absolute, or "" when the payload does
	// not say.
	Cwd string `json:"cwd,omitempty"`
	// Session is the agent's session (or conversation, thread) id.
	Session string `json:"session,omitempty"`
	// Intent is the description the agent gave the tool call.
	Intent string `json:"intent,omitempty"`
	// Mode is the agent's permission mode, where it sends one.
	Mode string `json:"mode,omitempty"`
	// CanRewrite says the agent runs another command line in place of
	// this one when told to (Verdict.Rewrite).
	CanRewrite bool `json:"can_rewrite"`
	// CanAsk says the agent can put this call to its person.
	CanAsk bool `json:"can_ask"`

	// input is the tool's input as the agent sent it; a rewrite sends it
	// back with only the command replaced.
	input map[string]json.RawMessage
	// commandKey names the field of input holding the command.
	commandKey string
	// claudeShaped is a payload in Claude Code's shape, answered in it.
	claudeShaped bool
}

// Outcome is what mnemos answers.
type Outcome string

// Outcomes of a Verdict.
const (
	Allow Outcome = "allow"
	// Ask puts the call to the agent's person (only when Call.CanAsk).
	Ask  Outcome = "ask"
	Deny Outcome = "deny"
	// Pending blocks the call because a person must approve it first:
	// Verdict.Approval names the pending approval.
	Pending Outcome = "pending"
)

// Verdict is mnemos's answer to a Call, before it is put in the agent's
// words.
type Verdict struct {
	Outcome Outcome
	// Reason says why, in one line.
	Reason string
	// Hint tells the model what to do instead (Deny, Pending).
	Hint string
	// Rewrite, for Allow or Ask, is the command line the agent runs in
	// place of the call's (only when Call.CanRewrite).
	Rewrite string
	// Approval is the pending approval's id (Pending).
	Approval string
	// Card is the approval card's lines (Ask), shown to the person.
	Card []string
}

// Answer is what the hook process prints and how it exits.
type Answer struct {
	Stdout []byte
	Stderr string
	Exit   int
}

// Env is what a payload may need besides itself.
type Env struct {
	// Getenv reads the hook's environment (Amp passes the tool's name
	// and thread there).
	Getenv func(string) string
	// Cwd is the hook process's working directory, for agents whose
	// payload names none.
	Cwd string
}

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

// Agent is one agent's hook protocol.
type Agent struct {
	// Name is what `mnemos hook NAME` takes.
	Name string
	// Title is the product's name.
	Title string
	// Rewrites says the agent runs a rewritten command line; Asks that it
	// can put a question to its person.
	Rewrites, Asks bool
	// Events are the hook events mnemos answers.
	Events []string

	parse  func(p []byte, env Env) (Call, error)
	answer func(c Call, v Verdict) Answer
	refuse func(reason string) Answer
	config config
}

// Agents lists the supported agents, by name.
func Agents() []*Agent {
	return []*Agent{claudeCode(), codex(), gemini(), cursor(), copilot(), amp()}
}

// Names lists the supported agents' names.
func Names() []string {
	var n []string
	for _, a := range Agents() {
		n = append(n, a.Name)
	}
	return n
}

// Lookup returns the agent called name.
func Lookup(name string) (*Agent, bool) {
	for _, a := range Agents() {
		if a.Name == name {
			return a, true
		}
	}
	return nil, false
}

// Parse reads a payload. An error means the payload cannot be judged; the
// caller answers it with Refuse.
func (a *Agent) Parse(payload []byte, env Env) (Call, error) {
	if len(bytes.TrimSpace(payload)) == 0 {
		return Call{}, errors.New("the hook was given no payload on stdin")
	}
	if len(payload) > MaxPayload {
		return Call{}, fmt.Errorf("the payload is larger than %d MiB", MaxPayload>>20)
	}
	c, err := a.parse(payload, env)
	if err != nil {
		return Call{}, err
	}
	c.Agent = a.Name
	if c.Cwd != "" && !filepath.IsAbs(c.Cwd) {
		return Call{}, fmt.Errorf("the payload's working directory %q is not absolute", c.Cwd)
	}
	if c.Cwd != "" {
		c.Cwd = filepath.Clean(c.Cwd)
	}
	for i, f := range c.Files {
		if f.Path == "" {
			return Call{}, fmt.Errorf("%s names an empty path", c.Tool)
		}
		c.Files[i].Path = absolute(f.Path, c.Cwd)
	}
	if err := c.readWritten(); err != nil {
		return Call{}, err
	}
	switch c.Kind {
	case Shell:
		if strings.TrimSpace(c.Command) == "" && len(c.Argv) == 0 {
			return Call{}, fmt.Errorf("%s carries no command", c.Tool)
		}
	case Files:
		if len(c.Files) == 0 {
			return Call{}, fmt.Errorf("%s names no path", c.Tool)
		}
	case Fetch:
		if len(c.URLs) == 0 {
			return Call{}, fmt.Errorf("%s names no URL", c.Tool)
		}
	}
	return c, nil
}

// Answer puts v in the agent's words. A verdict the call cannot carry is
// made stricter, never looser: an Ask the agent cannot put becomes Deny, a
// Rewrite it cannot run is dropped only from an Ask (an Allow that needed
// it is the caller's to decide).
func (a *Agent) Answer(c Call, v Verdict) Answer {
	if v.Outcome == Ask && !c.CanAsk {
		v.Outcome = Deny
	}
	if !c.CanRewrite {
		v.Rewrite = ""
	}
	switch v.Outcome {
	case Allow, Ask, Deny, Pending:
	default:
		v = Verdict{Outcome: Deny, Reason: fmt.Sprintf("mnemos gave no decision (%q)", v.Outcome)}
	}
	return a.answer(c, v)
}

// Refuse is the agent's block for a call mnemos could not judge: a
// malformed payload, a policy that does not load, a state that cannot be
// read. It never depends on the payload.
func (a *Agent) Refuse(reason string) Answer {
	return a.refuse("mnemos blocked this tool call: " + oneLine(reason))
}

// message is the text the model reads for a block.
func message(v Verdict) string {
	var b strings.Builder
	switch v.Outcome {
	case Pending:
		b.WriteString("mnemos needs a person's approval for this")
		if v.Approval != "" {
			b.WriteString(" (approval " + v.Approval + ")")
		}
		b.WriteString(": " + oneLine(v.Reason))
	default:
		b.WriteString("mnemos denied this: " + oneLine(v.Reason))
	}
	if v.Hint != "" {
		b.WriteString(". " + oneLine(v.Hint))
	}
	return b.String()
}

// askText is the question shown to the person.
func askText(v Verdict) string {
	if len(v.Card) > 0 {
		lines := make([]string, len(v.Card))
		for i, l := range v.Card {
			lines[i] = oneLine(l)
		}
		return "mnemos: " + strings.Join(lines, "\n")
	}
	return "mnemos asks: " + oneLine(v.Reason)
}

// oneLine keeps text on one line without control characters: it is read
// by a model and shown in a terminal.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			return -1
		case r == '\u2028' || r == '\u2029' || r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069':
			return -1
		}
		return r
	}, s)
}

// marshal encodes v compactly, without HTML escaping, with a final newline.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only values this package builds are encoded; they always encode.
		panic(err)
	}
	return b.Bytes()
}

// rewritten returns the tool input with its command replaced by cmd: the
// other fields (a description, a timeout) are kept, because an agent may
// replace the whole input with what it is given.
func (c Call) rewritten(line string) map[string]json.RawMessage {
	in := make(map[string]json.RawMessage, len(c.input)+1)
	for k, v := range c.input {
		in[k] = v
	}
	var cmd any = line
	if c.Argv != nil {
		// A call given as words gets words back: the shell that reads
		// the line gives mnemos the same words.
		cmd = []string{"bash", "-c", line}
	}
	in[c.commandKey] = marshalRaw(cmd)
	return in
}

// marshalRaw encodes v without HTML escaping and without a newline.
func marshalRaw(v any) json.RawMessage {
	return bytes.TrimRight(marshal(v), "\n")
}

// object decodes a JSON object, naming what it is in the error.
func object(raw []byte, what string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s is not a JSON object: %s", what, jsonError(raw, err))
	}
	if m == nil {
		return nil, fmt.Errorf("%s is null, not a JSON object", what)
	}
	return m, nil
}

// jsonError says where a JSON document stops making sense.
func jsonError(raw []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset counts the bytes read, the offending one included.
		line, col := position(raw, int(se.Offset)-1)
		return fmt.Sprintf("%d:%d: %v", line, col, err)
	}
	return err.Error()
}

// position turns a byte offset into a line and column, both from 1.
func position(b []byte, off int) (line, col int) {
	off = min(max(off, 0), len(b))
	line = 1 + bytes.Count(b[:off], []byte("\n"))
	col = off - bytes.LastIndexByte(b[:off], '\n')
	return line, col
}

// str reads an optional string field; a field of another type is an
// error, not an empty string.
func str(m map[string]json.RawMessage, key string) (string, error) {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("field %q is not a string", key)
	}
	return s, nil
}

// strs reads an optional list of strings.
func strs(m map[string]json.RawMessage, key string) ([]string, error) {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var s []string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("field %q is not a list of strings", key)
	}
	return s, nil
}

// fields reads several string fields at once, stopping at the first error.
func fields(m map[string]json.RawMessage, keys ...string) ([]string, error) {
	out := make([]string, len(keys))
	for i, k := range keys {
		v, err := str(m, k)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// first returns the first non-empty string.
func first(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// absolute makes p absolute against dir (a ~ is left for the guard, which
// knows the home directory).
func absolute(p, dir string) string {
	if filepath.IsAbs(p) || p == "~" || strings.HasPrefix(p, "~/") || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}

// globBase is the directory a glob pattern reads below: its leading words
// that hold no pattern characters.
func globBase(pattern string) string {
	parts := strings.Split(filepath.ToSlash(pattern), "/")
	var keep []string
	for _, p := range parts {
		if strings.ContainsAny(p, "*?[{") {
			break
		}
		keep = append(keep, p)
	}
	if len(keep) == len(parts) && len(keep) > 0 {
		// No pattern character: the pattern names a file; its directory
		// is what a listing reads.
		keep = keep[:len(keep)-1]
	}
	base := strings.Join(keep, "/")
	if base == "" && strings.HasPrefix(pattern, "/") {
		return "/"
	}
	return base
}

// listing is a glob's accesses: the directory searched and the base of the
// pattern when the pattern leaves it.
func listing(pattern, dir, cwd string) []FileAccess {
	root := absolute(first(dir, cwd), cwd)
	var out []FileAccess
	if root != "" {
		out = append(out, FileAccess{Op: List, Path: root})
	}
	if b := globBase(pattern); b != "" {
		p := absolute(b, root)
		if !slices.ContainsFunc(out, func(f FileAccess) bool { return f.Path == p }) {
			out = append(out, FileAccess{Op: List, Path: p})
		}
	}
	return out
}

// urlsIn finds the URLs written in free text (Gemini's web_fetch prompt).
func urlsIn(s string) []string {
	var out []string
	for _, u := range regexp.MustCompile(`https?://[^\s"'<>()\[\]{}]+`).FindAllString(s, 16) {
		u = strings.TrimRight(u, ".,;:!?")
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}

// sortedKeys returns m's keys in order (for messages that list them).
func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// Input is the tool's input as the agent sent it (nil when the payload
// had none), for policy conditions on a tool's fields.
func (c Call) Input() map[string]any {
	if c.input == nil {
		return nil
	}
	out := make(map[string]any, len(c.input))
	for k, v := range c.input {
		var x any
		if json.Unmarshal(v, &x) == nil {
			out[k] = x
		}
	}
	return out
}
