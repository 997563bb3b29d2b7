package hook

import (
	"encoding/json"
	"fmt"
)

// GitHub Copilot CLI: preToolUse command hooks in a hooks file
// ({"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash":
// ..., "timeoutSec": N}]}}). The payload has timestamp, cwd, toolName and
// toolArgs, which the CLI sends as a JSON string (an object is read too).
// The answer is top-level JSON: permissionDecision deny (with
// permissionDecisionReason), ask (CLI 1.0.24 and later), allow, and
// modifiedArgs, the tool's arguments to run instead. A rewritten allow
// still shows the person a confirmation on every call
// (github/copilot-cli#2643), so mnemos rewrites only what it asks about.
func copilot() *Agent {
	return &Agent{
		Name: "copilot", Title: "GitHub Copilot CLI", Rewrites: true, Asks: true,
		Events: []string{"preToolUse"},
		parse:  parseCopilot,
		answer: answerCopilot,
		refuse: func(reason string) Answer { return copilotDeny(reason) },
		config: copilotConfig(),
	}
}

// QuietRewrite says the agent runs a rewritten allow without asking its
// person: false for Copilot CLI.
func (a *Agent) QuietRewrite() bool { return a.Rewrites && a.Name != "copilot" }

func parseCopilot(p []byte, env Env) (Call, error) {
	m, err := object(p, "the payload")
	if err != nil {
		return Call{}, err
	}
	if _, ok := m["toolName"]; !ok {
		if _, claude := m["tool_name"]; claude {
			// A Claude-shaped payload, from a hooks file Copilot shares
			// with VS Code.
			c, err := parseClaude(p, env)
			c.CanRewrite, c.claudeShaped = false, true
			return c, err
		}
	}
	f, err := fields(m, "toolName", "cwd", "sessionId")
	if err != nil {
		return Call{}, err
	}
	c := Call{Event: "preToolUse", Tool: f[0], Cwd: f[1], Session: f[2], CanAsk: true}
	if c.Tool == "" {
		return c, fmt.Errorf("the payload names no tool (toolName)")
	}
	args := map[string]json.RawMessage{}
	if raw, ok := m["toolArgs"]; ok && string(raw) != "null" {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			raw = json.RawMessage(s)
			if s == "" {
				raw = json.RawMessage("{}")
			}
		}
		if args, err = object(raw, "toolArgs"); err != nil {
			return c, err
		}
	}
	c.input = args
	switch c.Tool {
	case "bash", "shell", "powershell":
		c.Kind, c.commandKey, c.Interpreter = Shell, "command", "bash"
		if c.Tool == "powershell" {
			c.Interpreter = "pwsh"
		}
		var f []string
		if f, err = fields(args, "command", "description"); err != nil {
			return c, err
		}
		c.Command, c.Intent = f[0], f[1]
		c.CanRewrite = c.Tool != "powershell"
	case "view", "read":
		err = fileCall(&c, args, Read, "path", "file_path")
	case "create", "edit", "str_replace", "str_replace_editor", "write":
		err = fileCall(&c, args, Write, "path", "file_path")
	default:
		c.Kind = Other
	}
	return c, err
}

type copilotOutput struct {
	PermissionDecision       string                     `json:"permissionDecision"`
	PermissionDecisionReason string                     `json:"permissionDecisionReason,omitempty"`
	ModifiedArgs             map[string]json.RawMessage `json:"modifiedArgs,omitempty"`
}

func answerCopilot(c Call, v Verdict) Answer {
	if c.claudeShaped {
		return answerPreToolUse(c, v, true)
	}
	var args map[string]json.RawMessage
	if v.Rewrite != "" {
		args = c.rewritten(v.Rewrite)
	}
	switch v.Outcome {
	case Allow:
		return Answer{Stdout: marshal(copilotOutput{PermissionDecision: "allow", ModifiedArgs: args})}
	case Ask:
		return Answer{Stdout: marshal(copilotOutput{PermissionDecision: "ask", PermissionDecisionReason: askText(v), ModifiedArgs: args})}
	}
	return copilotDeny(message(v))
}

func copilotDeny(msg string) Answer {
	return Answer{Stdout: marshal(copilotOutput{PermissionDecision: "deny", PermissionDecisionReason: msg}), Stderr: msg + "\n"}
}
