package hook

import (
	"encoding/json"
	"strings"
)

// Gemini CLI: a BeforeTool command hook in settings.json. The payload has
// session_id, cwd, hook_event_name, timestamp, tool_name and tool_input
// (run_shell_command's command, description and dir_path; the file tools'
// file_path, path, dir_path). The answer is JSON on stdout with exit 0:
// decision allow, deny or ask (ask since 2026-03-21; in the source, not yet
// in the reference page) and reason, which the model reads for a deny;
// hookSpecificOutput.tool_input is merged over the tool's arguments. Gemini
// reads plain text on exit 2 as a deny but exit 2 with nothing printed as
// an allow, and a timeout or crash as an allow, so every answer is JSON.
func gemini() *Agent {
	return &Agent{
		Name: "gemini", Title: "Gemini CLI", Rewrites: true, Asks: true,
		Events: []string{"BeforeTool"},
		parse:  parseGemini,
		answer: answerGemini,
		refuse: func(reason string) Answer { return geminiDeny(reason) },
		config: geminiConfig(),
	}
}

func parseGemini(p []byte, _ Env) (Call, error) {
	e, err := readEnvelope(p, "BeforeTool")
	if err != nil {
		return Call{}, err
	}
	c := Call{Event: e.event, Tool: e.tool, Cwd: e.cwd, Session: e.session, input: e.input, CanAsk: true}
	in := e.input
	switch e.tool {
	case "run_shell_command":
		var f []string
		if f, err = fields(in, "command", "description", "dir_path"); err != nil {
			return c, err
		}
		c.Kind, c.commandKey, c.Interpreter = Shell, "command", "bash"
		c.Command, c.Intent = f[0], f[1]
		c.CanRewrite = true
		if f[2] != "" {
			dir := absolute(f[2], c.Cwd)
			if within(dir, c.Cwd) {
				c.Cwd = dir
			} else {
				// The command runs in dir_path, outside the session's
				// project: judged as a cd there from the project, so that
				// it is judged as going elsewhere (dir_path would
				// otherwise become the workspace itself). Gemini runs it
				// in dir_path, where a rewrite's ticket would not be the
				// one issued: it is decided as it is, unsandboxed.
				c.Command = "cd " + Quote(dir) + " && " + c.Command
				c.CanRewrite = false
			}
		}
	case "read_file":
		err = fileCall(&c, in, Read, "file_path", "absolute_path", "path")
	case "write_file", "replace", "edit":
		err = fileCall(&c, in, Write, "file_path", "absolute_path", "path")
	case "list_directory":
		err = fileCall(&c, in, List, "dir_path", "path")
	case "glob":
		var f []string
		if f, err = fields(in, "pattern", "dir_path", "path"); err == nil {
			c.Kind, c.Files = Files, listing(f[0], first(f[1], f[2]), e.cwd)
		}
	case "grep_search", "search_file_content":
		var f []string
		if f, err = fields(in, "pattern", "dir_path", "path"); err == nil {
			c.Kind = Files
			c.Files = []FileAccess{{Op: Search, Path: first(f[1], f[2], e.cwd), Pattern: f[0]}}
		}
	case "read_many_files":
		// Gemini reads every file its paths and include globs match
		// (merged): each is judged as a read, a pattern by the directory
		// it expands below.
		var paths, include []string
		if paths, err = strs(in, "paths"); err == nil {
			include, err = strs(in, "include")
		}
		if err == nil {
			c.Kind = Files
			for _, p := range append(paths, include...) {
				if p != "" {
					c.Files = append(c.Files, FileAccess{Op: Read, Path: absolute(p, e.cwd)})
				}
			}
		}
	case "web_fetch":
		var prompt string
		if prompt, err = str(in, "prompt"); err == nil {
			c.Kind, c.URLs = Fetch, urlsIn(prompt)
		}
	default:
		c.Kind = Other
	}
	return c, err
}

type geminiOutput struct {
	Decision           string         `json:"decision"`
	Reason             string         `json:"reason,omitempty"`
	SystemMessage      string         `json:"systemMessage,omitempty"`
	HookSpecificOutput *geminiRewrite `json:"hookSpecificOutput,omitempty"`
}

type geminiRewrite struct {
	HookEventName string                     `json:"hookEventName"`
	ToolInput     map[string]json.RawMessage `json:"tool_input"`
}

func answerGemini(c Call, v Verdict) Answer {
	var rw *geminiRewrite
	if v.Rewrite != "" {
		// tool_input is merged over the arguments: the command alone is
		// replaced, dir_path and the description stay.
		rw = &geminiRewrite{HookEventName: "BeforeTool", ToolInput: map[string]json.RawMessage{c.commandKey: marshalRaw(v.Rewrite)}}
	}
	switch v.Outcome {
	case Allow:
		return Answer{Stdout: marshal(geminiOutput{Decision: "allow", HookSpecificOutput: rw})}
	case Ask:
		return Answer{Stdout: marshal(geminiOutput{Decision: "ask", Reason: askText(v), HookSpecificOutput: rw})}
	}
	return geminiDeny(message(v))
}

func geminiDeny(msg string) Answer {
	out := geminiOutput{Decision: "deny", Reason: msg, SystemMessage: "mnemos blocked a tool call"}
	return Answer{Stdout: marshal(out), Stderr: msg + "\n"}
}

// within reports whether the clean absolute path p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
