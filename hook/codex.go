package hook

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Codex CLI: a PreToolUse command hook, configured like Claude Code's in
// hooks.json. The payload adds turn_id and model; the shell tool is Bash
// with tool_input.command, apply_patch carries the raw patch in
// tool_input.command. Codex honours only a deny with a non-empty reason,
// and an allow that comes with updatedInput (a rewrite); an ask, a bare
// allow or any field outside its schema makes the hook "failed", and a
// failed hook lets the command run. So an allow without a rewrite is an
// empty stdout, and nothing but the schema's fields is ever printed.
func codex() *Agent {
	return &Agent{
		Name: "codex", Title: "Codex CLI", Rewrites: true, Asks: false,
		Events: []string{"PreToolUse"},
		parse:  parseCodex,
		answer: func(c Call, v Verdict) Answer { return answerPreToolUse(c, v, false) },
		refuse: func(reason string) Answer { return denyPreToolUse(reason) },
		config: codexConfig(),
	}
}

func parseCodex(p []byte, _ Env) (Call, error) {
	e, err := readEnvelope(p, "PreToolUse")
	if err != nil {
		return Call{}, err
	}
	c := Call{Event: e.event, Tool: e.tool, Cwd: e.cwd, Session: e.session, Mode: e.mode, input: e.input}
	switch e.tool {
	case "Bash", "shell", "local_shell", "exec_command", "unified_exec":
		c.Kind, c.commandKey, c.Interpreter = Shell, "command", "bash"
		raw := e.input["command"]
		var words []string
		if json.Unmarshal(raw, &words) == nil && len(words) > 0 {
			// The words of an exec call: judged as they are, rewritten
			// as words.
			c.Argv = words
		} else if c.Command, err = str(e.input, "command"); err != nil {
			return c, err
		}
		c.CanRewrite = true
		if c.Intent, err = str(e.input, "description"); err != nil {
			return c, err
		}
		if wd, err := str(e.input, "workdir"); err == nil && wd != "" {
			c.Cwd = absolute(wd, c.Cwd)
		}
	case "write_stdin":
		// Typing into a running session of unified exec. Codex sends no
		// PreToolUse for it: what is typed goes to the command
		// exec_command started, which was judged then (as a shell when
		// it reads its terminal: a pager, an editor, a REPL). Should a
		// version send one, what is typed is judged as a shell would
		// run it, where it runs: outside mnemos run, which cannot take
		// it. A write of nothing is a poll.
		chars, err := str(e.input, "chars")
		if err != nil {
			return c, err
		}
		c.Kind, c.Interpreter, c.Command = Shell, "bash", chars
		if chars == "" {
			c.Command = ":"
		}
	case "apply_patch", "Edit", "Write":
		text, err := str(e.input, "command")
		if err != nil {
			return c, err
		}
		if text == "" {
			if text, err = str(e.input, "patch"); err != nil {
				return c, err
			}
		}
		c.Kind = Files
		if c.Files, err = patchTargets(text); err != nil {
			return c, err
		}
	default:
		c.Kind = Other
	}
	return c, nil
}

// patchTargets lists the files an apply_patch patch adds, changes, moves
// or deletes. A patch that names none is not judged as harmless: it is an
// error.
func patchTargets(patch string) ([]FileAccess, error) {
	var out []FileAccess
	for _, line := range strings.Split(patch, "\n") {
		// Codex trims a hunk header before reading it: an indented
		// "*** Add File:" is one too.
		line = strings.TrimSpace(line)
		for _, h := range []struct {
			prefix string
			op     Op
		}{
			{"*** Add File: ", Write}, {"*** Update File: ", Write}, {"*** Move to: ", Write}, {"*** Delete File: ", Delete},
		} {
			if p, ok := strings.CutPrefix(line, h.prefix); ok {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, FileAccess{Op: h.op, Path: p})
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the patch names no file (want *** Add File:, *** Update File: or *** Delete File: lines)")
	}
	return out, nil
}
