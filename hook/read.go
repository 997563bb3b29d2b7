package hook

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Failed is how an agent reads an answer it cannot use: as no decision,
// so the tool call runs.
const Failed Outcome = "failed"

// Read says what the agent makes of a hook's answer, following its
// documentation and source: Allow, Ask, Deny, or Failed (which every one
// of these agents treats as an allow). `mnemos doctor` reads the answers
// of the configured hook command with it; the tests hold mnemos's answers
// to it.
func (a *Agent) Read(ans Answer) Outcome {
	out := bytes.TrimSpace(ans.Stdout)
	isJSON := len(out) > 0 && out[0] == '{'
	var m map[string]json.RawMessage
	if isJSON && json.Unmarshal(out, &m) != nil {
		isJSON = false
	}
	get := func(obj map[string]json.RawMessage, k string) string {
		s, _ := str(obj, k)
		return s
	}
	hso := map[string]json.RawMessage{}
	if raw, ok := m["hookSpecificOutput"]; ok {
		_ = json.Unmarshal(raw, &hso)
	}
	stderr := strings.TrimSpace(ans.Stderr)
	switch a.Name {
	case "claude-code":
		if ans.Exit == 2 {
			return Deny
		}
		if isJSON {
			switch get(hso, "permissionDecision") {
			case "deny":
				return Deny
			case "ask":
				return Ask
			case "allow":
				return Allow
			}
			switch get(m, "decision") {
			case "block":
				return Deny
			case "approve":
				return Allow
			}
		}
		if ans.Exit == 0 {
			return Allow
		}
		return Failed
	case "codex":
		if ans.Exit == 2 {
			if stderr != "" {
				return Deny
			}
			return Failed
		}
		if ans.Exit != 0 {
			return Failed
		}
		if len(out) == 0 {
			return Allow
		}
		if !isJSON {
			if out[0] == '{' || out[0] == '[' {
				return Failed
			}
			return Allow
		}
		for k := range m {
			switch k {
			case "continue", "stopReason", "suppressOutput", "systemMessage", "decision", "reason", "hookSpecificOutput":
			default:
				return Failed
			}
		}
		switch get(hso, "permissionDecision") {
		case "deny":
			if get(hso, "permissionDecisionReason") == "" {
				return Failed
			}
			return Deny
		case "allow":
			if _, ok := hso["updatedInput"]; ok {
				return Allow
			}
			return Failed
		case "":
		default:
			return Failed
		}
		if get(m, "decision") == "block" && get(m, "reason") != "" {
			return Deny
		}
		if _, ok := m["decision"]; ok {
			return Failed
		}
		return Allow
	case "gemini":
		text := out
		if len(text) == 0 {
			text = []byte(stderr)
		}
		if isJSON || len(text) > 0 && text[0] == '{' && json.Unmarshal(text, &m) == nil {
			switch get(m, "decision") {
			case "deny", "block":
				return Deny
			case "ask":
				return Ask
			}
			return Allow
		}
		if len(text) > 0 && ans.Exit >= 2 {
			return Deny
		}
		return Allow
	case "cursor":
		if ans.Exit == 2 {
			return Deny
		}
		if isJSON {
			switch get(m, "permission") {
			case "deny":
				return Deny
			case "ask":
				return Ask
			}
			return Allow
		}
		if ans.Exit == 0 {
			return Allow
		}
		return Failed
	case "copilot":
		if isJSON {
			switch get(m, "permissionDecision") {
			case "deny":
				return Deny
			case "ask":
				return Ask
			}
		}
		if ans.Exit == 0 {
			return Allow
		}
		return Failed
	case "amp":
		switch {
		case ans.Exit == 0:
			return Allow
		case ans.Exit == 1:
			return Ask
		case ans.Exit >= 2:
			return Deny
		}
		return Failed
	}
	return Failed
}

// Rewrite returns the command line an answer tells the agent to run
// instead, or "".
func (a *Agent) Rewrite(ans Answer) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(ans.Stdout), &m) != nil {
		return ""
	}
	var in map[string]json.RawMessage
	switch a.Name {
	case "claude-code", "codex":
		var hso map[string]json.RawMessage
		_ = json.Unmarshal(m["hookSpecificOutput"], &hso)
		_ = json.Unmarshal(hso["updatedInput"], &in)
	case "gemini":
		var hso map[string]json.RawMessage
		_ = json.Unmarshal(m["hookSpecificOutput"], &hso)
		_ = json.Unmarshal(hso["tool_input"], &in)
	case "copilot":
		_ = json.Unmarshal(m["modifiedArgs"], &in)
	}
	s, _ := str(in, "command")
	return s
}

// Probe is a payload asking the agent's hook about a shell command run in
// dir, in the agent's shape (Amp's parameters; the tool name goes in
// AGENT_TOOL_NAME=Bash).
func (a *Agent) Probe(command, dir, session string) []byte {
	switch a.Name {
	case "claude-code":
		return marshal(map[string]any{"session_id": session, "transcript_path": "", "cwd": dir, "permission_mode": "default",
			"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": command, "description": "mnemos doctor probe"}, "tool_use_id": "probe"})
	case "codex":
		return marshal(map[string]any{"session_id": session, "turn_id": "probe", "cwd": dir, "hook_event_name": "PreToolUse", "model": "probe",
			"permission_mode": "default", "tool_name": "Bash", "tool_input": map[string]any{"command": command}, "tool_use_id": "probe"})
	case "gemini":
		return marshal(map[string]any{"session_id": session, "transcript_path": "", "cwd": dir, "hook_event_name": "BeforeTool",
			"timestamp": "2026-01-01T00:00:00Z", "tool_name": "run_shell_command", "tool_input": map[string]any{"command": command}})
	case "cursor":
		return marshal(map[string]any{"hook_event_name": "beforeShellExecution", "conversation_id": session, "generation_id": "probe",
			"workspace_roots": []string{dir}, "command": command, "cwd": dir})
	case "copilot":
		args, _ := json.Marshal(map[string]string{"command": command, "description": "mnemos doctor probe"})
		return marshal(map[string]any{"timestamp": 0, "cwd": dir, "toolName": "bash", "toolArgs": string(args)})
	case "amp":
		return marshal(map[string]any{"cmd": command, "cwd": dir})
	}
	return nil
}
