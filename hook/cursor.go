package hook

import "fmt"

// Cursor: command hooks in hooks.json ({"version": 1, "hooks": {EVENT:
// [{"command": ...}]}}). beforeShellExecution sends command and cwd (with
// conversation_id, generation_id, workspace_roots); beforeReadFile sends
// file_path; the generic preToolUse sends tool_name (Shell, Read, Write,
// Grep, Delete...) and tool_input. The answer is JSON on stdout with exit
// 0: permission allow, deny or ask, user_message for the person,
// agent_message for the model. Only beforeShellExecution puts an ask to
// the person, and no event runs a rewritten command, so a command Cursor
// runs is judged as running outside mnemos's sandbox. An entry with
// failClosed: true turns a crash or a timeout into a block.
func cursor() *Agent {
	return &Agent{
		Name: "cursor", Title: "Cursor", Rewrites: false, Asks: true,
		Events: []string{"beforeShellExecution", "beforeReadFile", "preToolUse"},
		parse:  parseCursor,
		answer: answerCursor,
		refuse: func(reason string) Answer { return cursorDeny(reason) },
		config: cursorConfig(),
	}
}

func parseCursor(p []byte, _ Env) (Call, error) {
	m, err := object(p, "the payload")
	if err != nil {
		return Call{}, err
	}
	f, err := fields(m, "hook_event_name", "conversation_id", "cwd")
	if err != nil {
		return Call{}, err
	}
	c := Call{Event: f[0], Session: f[1], Cwd: f[2]}
	if c.Cwd == "" {
		roots, err := strs(m, "workspace_roots")
		if err != nil {
			return c, err
		}
		if len(roots) > 0 {
			c.Cwd = roots[0]
		}
	}
	switch c.Event {
	case "beforeShellExecution":
		c.Tool, c.Kind, c.Interpreter, c.CanAsk = "shell", Shell, "bash", true
		c.Command, err = str(m, "command")
	case "beforeReadFile":
		c.Tool = "read"
		err = fileCall(&c, m, Read, "file_path")
	case "preToolUse":
		raw, ok := m["tool_input"]
		in := map[string]any{}
		if ok {
			inm, err := object(raw, "tool_input")
			if err != nil {
				return c, err
			}
			c.input = inm
			tf, err := fields(inm, "command", "working_directory", "path", "file_path", "target_file", "pattern")
			if err != nil {
				return c, err
			}
			for i, k := range []string{"command", "working_directory", "path", "file_path", "target_file", "pattern"} {
				in[k] = tf[i]
			}
		}
		s := func(k string) string { v, _ := in[k].(string); return v }
		if c.Tool, err = str(m, "tool_name"); err != nil {
			return c, err
		}
		if wd := s("working_directory"); wd != "" {
			c.Cwd = absolute(wd, c.Cwd)
		}
		path := first(s("file_path"), s("path"), s("target_file"))
		switch c.Tool {
		case "Shell", "Terminal":
			c.Kind, c.Interpreter, c.Command = Shell, "bash", s("command")
		case "Read":
			c.Kind, c.Files = Files, []FileAccess{{Op: Read, Path: path}}
		case "Write", "Edit", "StrReplace", "TabWrite":
			c.Kind, c.Files = Files, []FileAccess{{Op: Write, Path: path}}
		case "Delete":
			c.Kind, c.Files = Files, []FileAccess{{Op: Delete, Path: path}}
		case "Grep":
			c.Kind, c.Files = Files, []FileAccess{{Op: Search, Path: first(path, c.Cwd), Pattern: s("pattern")}}
		case "":
			return c, fmt.Errorf("the payload names no tool (tool_name)")
		default:
			c.Kind = Other
		}
		if c.Kind == Files && path == "" && c.Tool != "Grep" {
			return c, fmt.Errorf("%s names no path", c.Tool)
		}
	case "":
		return c, fmt.Errorf("the payload names no hook event (hook_event_name)")
	default:
		return c, fmt.Errorf("mnemos answers beforeShellExecution, beforeReadFile and preToolUse, not %s", c.Event)
	}
	return c, err
}

type cursorOutput struct {
	Permission   string `json:"permission"`
	UserMessage  string `json:"user_message,omitempty"`
	AgentMessage string `json:"agent_message,omitempty"`
}

func answerCursor(c Call, v Verdict) Answer {
	switch v.Outcome {
	case Allow:
		return Answer{Stdout: marshal(cursorOutput{Permission: "allow"})}
	case Ask:
		return Answer{Stdout: marshal(cursorOutput{Permission: "ask", UserMessage: askText(v), AgentMessage: "mnemos asked the person: " + oneLine(v.Reason)})}
	}
	return cursorDeny(message(v))
}

func cursorDeny(msg string) Answer {
	return Answer{Stdout: marshal(cursorOutput{Permission: "deny", UserMessage: msg, AgentMessage: msg}), Stderr: msg + "\n"}
}
