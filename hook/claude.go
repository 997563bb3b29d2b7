package hook

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Claude Code: a PreToolUse command hook. The payload is one JSON object
// (session_id, cwd, permission_mode, hook_event_name, tool_name,
// tool_input, tool_use_id...). The answer is JSON on stdout with exit 0:
// hookSpecificOutput.permissionDecision allow, deny or ask, with
// permissionDecisionReason (shown to Claude for deny, to the person for
// ask) and updatedInput, which replaces the whole tool input. Exit 2
// blocks too, but any other non-zero status, a crash or a timeout lets
// the call run unless the handler says onFailure: block (Claude Code
// 2.1.295 and later), which mnemos's entry does.
func claudeCode() *Agent {
	return &Agent{
		Name: "claude-code", Title: "Claude Code", Rewrites: true, Asks: true,
		Events: []string{"PreToolUse"},
		parse:  parseClaude,
		answer: func(c Call, v Verdict) Answer { return answerPreToolUse(c, v, true) },
		refuse: func(reason string) Answer { return denyPreToolUse(reason) },
		config: claudeConfig(),
	}
}

// envelope is the part of a Claude-shaped payload every tool shares.
type envelope struct {
	m                                   map[string]json.RawMessage
	event, tool, cwd, session, mode, id string
	input                               map[string]json.RawMessage
}

func readEnvelope(p []byte, wantEvent string) (envelope, error) {
	m, err := object(p, "the payload")
	if err != nil {
		return envelope{}, err
	}
	f, err := fields(m, "hook_event_name", "tool_name", "cwd", "session_id", "permission_mode", "tool_use_id")
	if err != nil {
		return envelope{}, err
	}
	e := envelope{m: m, event: f[0], tool: f[1], cwd: f[2], session: f[3], mode: f[4], id: f[5]}
	if e.event != "" && e.event != wantEvent {
		return e, fmt.Errorf("mnemos answers %s, not %s: wire it to %s only", wantEvent, e.event, wantEvent)
	}
	if e.event == "" {
		e.event = wantEvent
	}
	if e.tool == "" {
		return e, fmt.Errorf("the payload names no tool (tool_name)")
	}
	raw, ok := m["tool_input"]
	if !ok || string(raw) == "null" {
		e.input = map[string]json.RawMessage{}
		return e, nil
	}
	if e.input, err = object(raw, "tool_input"); err != nil {
		return e, err
	}
	return e, nil
}

func parseClaude(p []byte, _ Env) (Call, error) {
	e, err := readEnvelope(p, "PreToolUse")
	if err != nil {
		return Call{}, err
	}
	c := Call{Event: e.event, Tool: e.tool, Cwd: e.cwd, Session: e.session, Mode: e.mode, input: e.input}
	// A prompt the person cannot see is no question: with permissions
	// bypassed, or in dontAsk mode (which denies whatever would prompt),
	// an ask is parked for an approval from outside instead.
	c.CanAsk = e.mode != "bypassPermissions" && e.mode != "dontAsk"
	in := e.input
	get := func(k string) (string, error) { return str(in, k) }
	switch e.tool {
	case "Bash", "PowerShell":
		c.Kind, c.commandKey, c.Interpreter = Shell, "command", "bash"
		if e.tool == "PowerShell" {
			c.Interpreter = "pwsh"
		}
		if c.Command, err = get("command"); err != nil {
			return c, err
		}
		if c.Intent, err = get("description"); err != nil {
			return c, err
		}
		c.CanRewrite = e.tool == "Bash"
	case "Read", "NotebookRead":
		err = fileCall(&c, in, Read, "file_path", "notebook_path")
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		err = fileCall(&c, in, Write, "file_path", "notebook_path")
	case "Glob":
		var f []string
		if f, err = fields(in, "pattern", "path"); err == nil {
			c.Kind, c.Files = Files, listing(f[0], f[1], e.cwd)
		}
	case "Grep":
		var f []string
		if f, err = fields(in, "pattern", "path"); err == nil {
			c.Kind = Files
			c.Files = []FileAccess{{Op: Search, Path: first(f[1], e.cwd), Pattern: f[0]}}
		}
	case "LS":
		err = fileCall(&c, in, List, "path")
	case "WebFetch":
		var u string
		if u, err = get("url"); err == nil {
			c.Kind, c.URLs = Fetch, nonEmpty(u)
		}
	default:
		c.Kind = Other
	}
	return c, err
}

// fileCall reads every present path field into a file call: the agent
// may use any of them (Gemini's read_file takes file_path or
// absolute_path), so each is judged.
func fileCall(c *Call, in map[string]json.RawMessage, op Op, keys ...string) error {
	f, err := fields(in, keys...)
	if err != nil {
		return err
	}
	c.Kind = Files
	for _, p := range f {
		if p != "" && !slices.ContainsFunc(c.Files, func(a FileAccess) bool { return a.Path == p }) {
			c.Files = append(c.Files, FileAccess{Op: op, Path: p})
		}
	}
	return nil
}

func nonEmpty(s ...string) []string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

// preToolUse is hookSpecificOutput for PreToolUse (Claude Code, Codex).
type preToolUse struct {
	HookEventName            string                     `json:"hookEventName"`
	PermissionDecision       string                     `json:"permissionDecision"`
	PermissionDecisionReason string                     `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             map[string]json.RawMessage `json:"updatedInput,omitempty"`
}

type hookOutput struct {
	HookSpecificOutput preToolUse `json:"hookSpecificOutput"`
}

// answerPreToolUse answers Claude Code (explicitAllow) and Codex, which
// rejects an allow without updatedInput and any field it does not know.
func answerPreToolUse(c Call, v Verdict, explicitAllow bool) Answer {
	switch v.Outcome {
	case Allow:
		out := preToolUse{HookEventName: "PreToolUse", PermissionDecision: "allow"}
		if v.Rewrite != "" {
			out.UpdatedInput = c.rewritten(v.Rewrite)
			if explicitAllow {
				out.PermissionDecisionReason = "mnemos allows it and runs it in its sandbox"
			}
		} else if !explicitAllow {
			return Answer{}
		}
		return Answer{Stdout: marshal(hookOutput{out})}
	case Ask:
		out := preToolUse{HookEventName: "PreToolUse", PermissionDecision: "ask", PermissionDecisionReason: askText(v)}
		if v.Rewrite != "" {
			out.UpdatedInput = c.rewritten(v.Rewrite)
		}
		return Answer{Stdout: marshal(hookOutput{out})}
	}
	return denyPreToolUse(message(v))
}

// denyPreToolUse blocks with the reason for the model. Codex treats a deny
// without a reason as a failed hook (and runs the command), so the reason
// is never empty.
func denyPreToolUse(msg string) Answer {
	if msg == "" {
		msg = "mnemos denied this tool call"
	}
	out := preToolUse{HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: msg}
	return Answer{Stdout: marshal(hookOutput{out}), Stderr: msg + "\n"}
}
