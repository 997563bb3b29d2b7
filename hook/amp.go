package hook

import "strings"

// Amp: a rule in amp.permissions with action "delegate" runs the program
// named in "to" (a path, no arguments) with the tool's parameters as JSON
// on stdin and AGENT_TOOL_NAME, AMP_THREAD_ID and AGENT=amp in its
// environment. The exit status is the answer: 0 allow, 1 ask the person,
// 2 or more reject, with stderr shown to the model. Amp runs the tool
// itself, so what it runs is judged as running outside mnemos's sandbox.
func amp() *Agent {
	return &Agent{
		Name: "amp", Title: "Amp", Rewrites: false, Asks: true,
		Events: []string{"delegate"},
		parse:  parseAmp,
		answer: answerAmp,
		refuse: func(reason string) Answer { return Answer{Stderr: reason + "\n", Exit: 2} },
		config: ampConfig(),
	}
}

func parseAmp(p []byte, env Env) (Call, error) {
	m, err := object(p, "the tool's parameters")
	if err != nil {
		return Call{}, err
	}
	c := Call{Event: "delegate", Tool: env.getenv("AGENT_TOOL_NAME"), Session: env.getenv("AMP_THREAD_ID"), Cwd: env.Cwd, CanAsk: true, input: m}
	f, err := fields(m, "cmd", "cwd", "workdir", "path")
	if err != nil {
		return c, err
	}
	if d := first(f[1], f[2]); d != "" {
		c.Cwd = absolute(d, c.Cwd)
	}
	if c.Tool == "" {
		// Amp names the tool in the environment; without it the
		// parameters tell a shell command from a file.
		switch {
		case f[0] != "":
			c.Tool = "Bash"
		case f[3] != "":
			c.Tool = "Read"
		}
	}
	switch strings.ToLower(c.Tool) {
	case "bash", "shell":
		c.Kind, c.Interpreter, c.Command = Shell, "bash", f[0]
	case "read", "read_file":
		c.Kind, c.Files = Files, []FileAccess{{Op: Read, Path: f[3]}}
	case "edit_file", "create_file", "write", "edit":
		c.Kind, c.Files = Files, []FileAccess{{Op: Write, Path: f[3]}}
	case "glob", "list_directory":
		var pat string
		if pat, err = str(m, "filePattern"); err == nil {
			c.Kind, c.Files = Files, listing(pat, f[3], c.Cwd)
		}
	case "grep":
		var pat string
		if pat, err = str(m, "pattern"); err == nil {
			c.Kind, c.Files = Files, []FileAccess{{Op: Search, Path: first(f[3], c.Cwd), Pattern: pat}}
		}
	default:
		c.Kind = Other
	}
	if c.Tool == "" {
		c.Tool = "unknown"
	}
	return c, err
}

func answerAmp(_ Call, v Verdict) Answer {
	switch v.Outcome {
	case Allow:
		return Answer{}
	case Ask:
		return Answer{Stderr: askText(v) + "\n", Exit: 1}
	}
	return Answer{Stderr: message(v) + "\n", Exit: 2}
}
