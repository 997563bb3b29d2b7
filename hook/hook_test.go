package hook

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The payloads below are those of the agents' documentation (see
// ../../shared/reference/agent-hooks.md for each source), with only what
// the documentation elides filled in.

const claudeBash = `{
  "session_id": "abc123",
  "prompt_id": "550e8400-e29b-41d4-a716-446655440000",
  "transcript_path": "/home/user/.claude/projects/.../transcript.jsonl",
  "cwd": "/home/user/my-project",
  "permission_mode": "default",
  "hook_event_name": "PreToolUse",
  "tool_name": "Bash",
  "tool_input": {
    "command": "npm test",
    "description": "Run test suite",
    "timeout": 120000,
    "run_in_background": false
  },
  "tool_use_id": "toolu_01ABC123..."
}`

const codexProbe = `{"session_id":"s","turn_id":"turn-1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git reset --hard HEAD~1"},"tool_use_id":"call-1"}`

const geminiShell = `{"session_id":"g1","transcript_path":"/tmp/t.json","cwd":"/home/user/proj","hook_event_name":"BeforeTool","timestamp":"2026-08-21T10:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"go test ./...","description":"run the tests","dir_path":"sub"}}`

const cursorShell = `{"hook_event_name":"beforeShellExecution","conversation_id":"c1","generation_id":"g1","workspace_roots":["/home/user/proj"],"command":"rm -rf ~","cwd":"/home/user/proj"}`

const copilotBash = `{"timestamp":1760000000000,"cwd":"/home/user/proj","toolName":"bash","toolArgs":"{\"command\":\"rm -rf /tmp/build\",\"description\":\"clean\"}"}`

func env(vars map[string]string) Env {
	return Env{Getenv: func(k string) string { return vars[k] }, Cwd: "/home/user/proj"}
}

func mustAgent(t *testing.T, name string) *Agent {
	t.Helper()
	a, ok := Lookup(name)
	if !ok {
		t.Fatalf("no agent %q", name)
	}
	return a
}

func TestParse(t *testing.T) {
	cases := []struct {
		name, agent, payload string
		env                  map[string]string
		check                func(t *testing.T, c Call)
	}{
		{"claude bash", "claude-code", claudeBash, nil, func(t *testing.T, c Call) {
			want := Call{Agent: "claude-code", Event: "PreToolUse", Tool: "Bash", Kind: Shell, Command: "npm test", Interpreter: "bash",
				Cwd: "/home/user/my-project", Session: "abc123", Intent: "Run test suite", Mode: "default", CanRewrite: true, CanAsk: true}
			same(t, c, want)
		}},
		{"claude bypass cannot ask", "claude-code", strings.Replace(claudeBash, `"default"`, `"bypassPermissions"`, 1), nil, func(t *testing.T, c Call) {
			if c.CanAsk {
				t.Error("CanAsk in bypassPermissions mode")
			}
		}},
		{"claude read", "claude-code", `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/home/u/.aws/credentials"}}`, nil, func(t *testing.T, c Call) {
			files(t, c, FileAccess{Op: Read, Path: "/home/u/.aws/credentials"})
		}},
		{"claude edit relative", "claude-code", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"a/b.go","old_string":"x","new_string":"y"}}`, nil, func(t *testing.T, c Call) {
			files(t, c, FileAccess{Op: Write, Path: "/w/a/b.go"})
		}},
		{"claude glob", "claude-code", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Glob","tool_input":{"pattern":"/home/u/.ssh/*"}}`, nil, func(t *testing.T, c Call) {
			files(t, c, FileAccess{Op: List, Path: "/w"}, FileAccess{Op: List, Path: "/home/u/.ssh"})
		}},
		{"claude grep", "claude-code", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Grep","tool_input":{"pattern":"TODO","path":"/w/src"}}`, nil, func(t *testing.T, c Call) {
			files(t, c, FileAccess{Op: Search, Path: "/w/src", Pattern: "TODO"})
		}},
		{"claude webfetch", "claude-code", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"WebFetch","tool_input":{"url":"https://example.com/x","prompt":"p"}}`, nil, func(t *testing.T, c Call) {
			if c.Kind != Fetch || !slices.Equal(c.URLs, []string{"https://example.com/x"}) {
				t.Errorf("got %+v", c)
			}
		}},
		{"claude mcp tool", "claude-code", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"mcp__github__create_issue","tool_input":{"repo":"x"}}`, nil, func(t *testing.T, c Call) {
			if c.Kind != Other || c.Tool != "mcp__github__create_issue" {
				t.Errorf("got %+v", c)
			}
		}},
		{"codex probe", "codex", codexProbe, nil, func(t *testing.T, c Call) {
			same(t, c, Call{Agent: "codex", Event: "PreToolUse", Tool: "Bash", Kind: Shell, Command: "git reset --hard HEAD~1", Interpreter: "bash", Session: "s", CanRewrite: true})
		}},
		{"codex write_stdin", "codex", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"write_stdin","tool_input":{"session_id":7,"chars":"!rm -rf .git\n"}}`, nil, func(t *testing.T, c Call) {
			same(t, c, Call{Agent: "codex", Event: "PreToolUse", Tool: "write_stdin", Kind: Shell, Command: "!rm -rf .git\n", Interpreter: "bash", Cwd: "/w"})
		}},
		{"codex write_stdin poll", "codex", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"write_stdin","tool_input":{"session_id":7,"chars":""}}`, nil, func(t *testing.T, c Call) {
			same(t, c, Call{Agent: "codex", Event: "PreToolUse", Tool: "write_stdin", Kind: Shell, Command: ":", Interpreter: "bash", Cwd: "/w"})
		}},
		{"codex words", "codex", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":["ls","-la"]}}`, nil, func(t *testing.T, c Call) {
			if !slices.Equal(c.Argv, []string{"ls", "-la"}) || c.Command != "" {
				t.Errorf("got %+v", c)
			}
		}},
		{"codex apply_patch", "codex", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: a.txt\n+hi\n*** Update File: b.go\n*** Move to: c.go\n@@\n-x\n+y\n*** Delete File: /w/d.txt\n*** End Patch"}}`, nil, func(t *testing.T, c Call) {
			files(t, c, FileAccess{Op: Write, Path: "/w/a.txt"}, FileAccess{Op: Write, Path: "/w/b.go"}, FileAccess{Op: Write, Path: "/w/c.go"}, FileAccess{Op: Delete, Path: "/w/d.txt"})
		}},
		{"gemini shell in dir_path", "gemini", geminiShell, nil, func(t *testing.T, c Call) {
			same(t, c, Call{Agent: "gemini", Event: "BeforeTool", Tool: "run_shell_command", Kind: Shell, Command: "go test ./...", Interpreter: "bash",
				Cwd: "/home/user/proj/sub", Session: "g1", Intent: "run the tests", CanRewrite: true, CanAsk: true})
		}},
		{"gemini shell in a dir_path outside the project", "gemini", strings.Replace(geminiShell, `"dir_path":"sub"`, `"dir_path":"/srv/victim"`, 1), nil, func(t *testing.T, c Call) {
			same(t, c, Call{Agent: "gemini", Event: "BeforeTool", Tool: "run_shell_command", Kind: Shell, Command: "cd /srv/victim && go test ./...", Interpreter: "bash",
				Cwd: "/home/user/proj", Session: "g1", Intent: "run the tests", CanAsk: true})
		}},
		{"gemini read_file", "gemini", `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"file_path":"/home/u/.ssh/id_rsa"}}`, nil, func(t *testing.T, c Call) {
			files(t, c, FileAccess{Op: Read, Path: "/home/u/.ssh/id_rsa"})
		}},
		{"gemini web_fetch", "gemini", `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"web_fetch","tool_input":{"prompt":"summarise https://example.com/a and https://example.org."}}`, nil, func(t *testing.T, c Call) {
			if !slices.Equal(c.URLs, []string{"https://example.com/a", "https://example.org"}) {
				t.Errorf("urls %q", c.URLs)
			}
		}},
		{"cursor shell", "cursor", cursorShell, nil, func(t *testing.T, c Call) {
			same(t, c, Call{Agent: "cursor", Event: "beforeShellExecution", Tool: "shell", Kind: Shell, Command: "rm -rf ~", Interpreter: "bash", Cwd: "/home/user/proj", Session: "c1", CanAsk: true})
		}},
		{"cursor read", "cursor", `{"hook_event_name":"beforeReadFile","file_path":"/home/u/.env","content":"A=1","workspace_roots":["/w"]}`, nil, func(t *testing.T, c Call) {
			files(t, c, FileAccess{Op: Read, Path: "/home/u/.env"})
			if c.CanAsk {
				t.Error("beforeReadFile cannot ask")
			}
		}},
		{"cursor preToolUse shell", "cursor", `{"hook_event_name":"preToolUse","tool_name":"Shell","tool_input":{"command":"ls","working_directory":"/w/sub"},"cwd":"/w"}`, nil, func(t *testing.T, c Call) {
			if c.Kind != Shell || c.Command != "ls" || c.Cwd != "/w/sub" || c.CanAsk {
				t.Errorf("got %+v", c)
			}
		}},
		{"copilot bash (toolArgs a string)", "copilot", copilotBash, nil, func(t *testing.T, c Call) {
			same(t, c, Call{Agent: "copilot", Event: "preToolUse", Tool: "bash", Kind: Shell, Command: "rm -rf /tmp/build", Interpreter: "bash", Cwd: "/home/user/proj", Intent: "clean", CanRewrite: true, CanAsk: true})
		}},
		{"copilot toolArgs an object", "copilot", `{"cwd":"/w","toolName":"bash","toolArgs":{"command":"ls"}}`, nil, func(t *testing.T, c Call) {
			if c.Command != "ls" {
				t.Errorf("got %+v", c)
			}
		}},
		{"amp bash", "amp", `{"cmd":"git push --force"}`, map[string]string{"AGENT_TOOL_NAME": "Bash", "AMP_THREAD_ID": "T-1", "AGENT": "amp"}, func(t *testing.T, c Call) {
			same(t, c, Call{Agent: "amp", Event: "delegate", Tool: "Bash", Kind: Shell, Command: "git push --force", Interpreter: "bash", Cwd: "/home/user/proj", Session: "T-1", CanAsk: true})
		}},
		{"amp read", "amp", `{"path":"/home/u/.netrc"}`, map[string]string{"AGENT_TOOL_NAME": "Read"}, func(t *testing.T, c Call) {
			files(t, c, FileAccess{Op: Read, Path: "/home/u/.netrc"})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := mustAgent(t, tc.agent).Parse([]byte(tc.payload), env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func same(t *testing.T, got, want Call) {
	t.Helper()
	got.input, got.commandKey = nil, ""
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("got  %s\nwant %s", g, w)
	}
}

func files(t *testing.T, c Call, want ...FileAccess) {
	t.Helper()
	if c.Kind != Files || !slices.Equal(c.Files, want) {
		t.Errorf("got kind %d files %+v, want %+v", c.Kind, c.Files, want)
	}
}

const rewrite = `'/usr/local/bin/mnemos' run --channel claude-code --hook-ticket t1 -- bash -c 'npm test'`

func TestAnswer(t *testing.T) {
	cases := []struct {
		name, agent, payload string
		v                    Verdict
		stdout               string
		stderr               string // a substring
		exit                 int
	}{
		{"claude allow rewrites", "claude-code", claudeBash, Verdict{Outcome: Allow, Rewrite: rewrite},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"mnemos allows it and runs it in its sandbox","updatedInput":{"command":"'/usr/local/bin/mnemos' run --channel claude-code --hook-ticket t1 -- bash -c 'npm test'","description":"Run test suite","run_in_background":false,"timeout":120000}}}`, "", 0},
		{"claude allow", "claude-code", claudeBash, Verdict{Outcome: Allow},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`, "", 0},
		{"claude deny", "claude-code", claudeBash, Verdict{Outcome: Deny, Reason: "guard: rm -r on \"/home/u\"", Hint: "never retry this"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"mnemos denied this: guard: rm -r on \"/home/u\". never retry this"}}`, "mnemos denied this", 0},
		{"claude ask shows the card", "claude-code", claudeBash, Verdict{Outcome: Ask, Reason: "needs approval", Card: []string{"run npm test", "in /home/user/my-project"}},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"mnemos: run npm test\nin /home/user/my-project"}}`, "", 0},
		{"claude pending names the approval", "claude-code", strings.Replace(claudeBash, `"default"`, `"dontAsk"`, 1), Verdict{Outcome: Pending, Reason: "level supervised needs approval for code:exec", Approval: "abc", Hint: "ask the user to run `mnemos approvals approve abc`, then retry"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"mnemos needs a person's approval for this (approval abc): level supervised needs approval for code:exec. ask the user to run ` + "`mnemos approvals approve abc`" + `, then retry"}}`, "approval abc", 0},
		{"claude ask without a person is a deny", "claude-code", strings.Replace(claudeBash, `"default"`, `"bypassPermissions"`, 1), Verdict{Outcome: Ask, Reason: "x"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"mnemos denied this: x"}}`, "", 0},
		// Codex: the deny of destructive_command_guard's Codex guide, an
		// allow only with a rewrite, nothing else.
		{"codex deny", "codex", codexProbe, Verdict{Outcome: Deny, Reason: "Destructive command blocked"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"mnemos denied this: Destructive command blocked"}}`, "", 0},
		{"codex allow is silent", "codex", codexProbe, Verdict{Outcome: Allow}, ``, "", 0},
		{"codex allow rewrites", "codex", codexProbe, Verdict{Outcome: Allow, Rewrite: "mnemos run -- ls"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"mnemos run -- ls"}}}`, "", 0},
		{"codex cannot ask", "codex", codexProbe, Verdict{Outcome: Ask, Reason: "x"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"mnemos denied this: x"}}`, "", 0},
		{"codex words rewrite to words", "codex", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":["ls","-la"]}}`, Verdict{Outcome: Allow, Rewrite: "mnemos run -- ls -la"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":["bash","-c","mnemos run -- ls -la"]}}}`, "", 0},
		{"gemini deny", "gemini", geminiShell, Verdict{Outcome: Deny, Reason: "x"},
			`{"decision":"deny","reason":"mnemos denied this: x","systemMessage":"mnemos blocked a tool call"}`, "", 0},
		{"gemini allow rewrites the command only", "gemini", geminiShell, Verdict{Outcome: Allow, Rewrite: "mnemos run -- x"},
			`{"decision":"allow","hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"command":"mnemos run -- x"}}}`, "", 0},
		{"gemini ask", "gemini", geminiShell, Verdict{Outcome: Ask, Reason: "r"},
			`{"decision":"ask","reason":"mnemos asks: r"}`, "", 0},
		{"cursor deny", "cursor", cursorShell, Verdict{Outcome: Deny, Reason: "x"},
			`{"permission":"deny","user_message":"mnemos denied this: x","agent_message":"mnemos denied this: x"}`, "", 0},
		{"cursor ask", "cursor", cursorShell, Verdict{Outcome: Ask, Reason: "r", Card: []string{"c"}},
			`{"permission":"ask","user_message":"mnemos: c","agent_message":"mnemos asked the person: r"}`, "", 0},
		{"cursor allow, no rewrite", "cursor", cursorShell, Verdict{Outcome: Allow, Rewrite: "ignored"},
			`{"permission":"allow"}`, "", 0},
		{"copilot deny", "copilot", copilotBash, Verdict{Outcome: Deny, Reason: "x"},
			`{"permissionDecision":"deny","permissionDecisionReason":"mnemos denied this: x"}`, "", 0},
		{"copilot ask rewrites and keeps the description", "copilot", copilotBash, Verdict{Outcome: Ask, Reason: "r", Rewrite: "mnemos run -- x"},
			`{"permissionDecision":"ask","permissionDecisionReason":"mnemos asks: r","modifiedArgs":{"command":"mnemos run -- x","description":"clean"}}`, "", 0},
		{"amp allow", "amp", `{"cmd":"ls"}`, Verdict{Outcome: Allow}, ``, "", 0},
		{"amp ask is exit 1", "amp", `{"cmd":"ls"}`, Verdict{Outcome: Ask, Reason: "r"}, ``, "mnemos asks: r", 1},
		{"amp deny is exit 2", "amp", `{"cmd":"ls"}`, Verdict{Outcome: Deny, Reason: "r"}, ``, "mnemos denied this: r", 2},
		{"amp pending is exit 2", "amp", `{"cmd":"ls"}`, Verdict{Outcome: Pending, Reason: "r", Approval: "id1"}, ``, "approval id1", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := mustAgent(t, tc.agent)
			c, err := a.Parse([]byte(tc.payload), env(map[string]string{"AGENT_TOOL_NAME": "Bash"}))
			if err != nil {
				t.Fatal(err)
			}
			ans := a.Answer(c, tc.v)
			if got := strings.TrimSuffix(string(ans.Stdout), "\n"); got != tc.stdout {
				t.Errorf("stdout\n got %s\nwant %s", got, tc.stdout)
			}
			if !strings.Contains(ans.Stderr, tc.stderr) {
				t.Errorf("stderr %q lacks %q", ans.Stderr, tc.stderr)
			}
			if ans.Exit != tc.exit {
				t.Errorf("exit %d, want %d", ans.Exit, tc.exit)
			}
		})
	}
}

// blocks reports whether an answer is one the agent reads as a block,
// following each agent's documentation: JSON naming deny on stdout with
// exit 0 (and, for Codex, a non-empty reason), or Amp's exit 2.
func blocks(t *testing.T, agent string, ans Answer) bool {
	t.Helper()
	if a, _ := Lookup(agent); a.Read(ans) != Deny {
		return false
	}
	if agent == "amp" {
		return ans.Exit >= 2 && ans.Stderr != ""
	}
	if ans.Exit != 0 {
		return false
	}
	var out struct {
		Decision           string `json:"decision"`
		Permission         string `json:"permission"`
		PermissionDecision string `json:"permissionDecision"`
		Reason             string `json:"reason"`
		HookSpecificOutput struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(ans.Stdout, &out); err != nil {
		return false
	}
	switch agent {
	case "claude-code", "codex":
		return out.HookSpecificOutput.PermissionDecision == "deny" && out.HookSpecificOutput.PermissionDecisionReason != ""
	case "gemini":
		return out.Decision == "deny" && out.Reason != ""
	case "cursor":
		return out.Permission == "deny"
	case "copilot":
		return out.PermissionDecision == "deny"
	}
	return false
}

// TestSecurityMalformedPayloadBlocks: every agent fails open on a hook
// that crashes or prints what it cannot read, so a payload mnemos cannot
// judge is answered with the agent's own block, with a reason.
func TestSecurityMalformedPayloadBlocks(t *testing.T) {
	payloads := map[string]string{
		"empty":              "",
		"blank":              " \n\t",
		"not json":           "rm -rf ~",
		"json array":         `["Bash"]`,
		"null":               "null",
		"truncated":          `{"tool_name":"Bash","tool_input":{"command":"ls"`,
		"tool_input a list":  `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":["rm -rf /"],"cwd":"/w","toolName":"bash","toolArgs":"[1]"}`,
		"command a number":   `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":5},"cwd":"/w","toolName":"bash","toolArgs":{"command":5},"cmd":5}`,
		"no command":         `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{},"cwd":"/w","toolName":"bash","toolArgs":"{}"}`,
		"relative cwd":       `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"cwd":"w","toolName":"bash","toolArgs":"{\"command\":\"ls\"}","cmd":"ls"}`,
		"wrong event":        `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"cwd":"/w"}`,
		"no path":            `{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{},"cwd":"/w","toolName":"view","toolArgs":"{}"}`,
		"patch without file": `{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** End Patch"},"cwd":"/w"}`,
		"oversized":          `{"cmd":"` + strings.Repeat("a", MaxPayload) + `"}`,
	}
	for _, a := range Agents() {
		for name, p := range payloads {
			c, err := a.Parse([]byte(p), env(map[string]string{"AGENT_TOOL_NAME": "Bash"}))
			if err == nil {
				// Some payloads are fine for an agent that reads other
				// fields (Amp reads only cmd); they must be judgeable.
				if c.Kind == 0 {
					t.Errorf("%s/%s: parsed to no kind: %+v", a.Name, name, c)
				}
				continue
			}
			ans := a.Refuse(err.Error())
			if !blocks(t, a.Name, ans) {
				t.Errorf("%s/%s: refusal does not block: %+v", a.Name, name, ans)
			}
			if !strings.Contains(string(ans.Stdout)+ans.Stderr, "mnemos blocked this tool call") {
				t.Errorf("%s/%s: refusal gives no reason: %+v", a.Name, name, ans)
			}
		}
	}
}

// TestSecurityEveryBlockIsRead: a deny and a pending approval are answered,
// for every agent, in the form its documentation reads as a block; an ask
// an agent cannot put is a block too.
func TestSecurityEveryBlockIsRead(t *testing.T) {
	payload := map[string]string{"claude-code": claudeBash, "codex": codexProbe, "gemini": geminiShell, "cursor": cursorShell, "copilot": copilotBash, "amp": `{"cmd":"ls"}`}
	for _, a := range Agents() {
		c, err := a.Parse([]byte(payload[a.Name]), env(map[string]string{"AGENT_TOOL_NAME": "Bash"}))
		if err != nil {
			t.Fatal(a.Name, err)
		}
		for _, v := range []Verdict{{Outcome: Deny, Reason: "r"}, {Outcome: Pending, Reason: "r", Approval: "x"}, {Outcome: "bogus"}, {}} {
			if ans := a.Answer(c, v); !blocks(t, a.Name, ans) {
				t.Errorf("%s %q: not a block: %+v", a.Name, v.Outcome, ans)
			}
		}
		c.CanAsk = false
		if ans := a.Answer(c, Verdict{Outcome: Ask, Reason: "r"}); !blocks(t, a.Name, ans) {
			t.Errorf("%s: an ask it cannot put is not a block: %+v", a.Name, ans)
		}
	}
}

// TestCodexSchema: Codex treats any field outside its output schema as a
// failed hook, which runs the command.
func TestCodexSchema(t *testing.T) {
	a := mustAgent(t, "codex")
	c, _ := a.Parse([]byte(codexProbe), Env{})
	allowedTop := []string{"continue", "stopReason", "suppressOutput", "systemMessage", "decision", "reason", "hookSpecificOutput"}
	allowedInner := []string{"hookEventName", "permissionDecision", "permissionDecisionReason", "updatedInput", "additionalContext"}
	for _, v := range []Verdict{{Outcome: Allow, Rewrite: "x"}, {Outcome: Deny, Reason: "r", Hint: "h"}, {Outcome: Pending, Approval: "a"}, {Outcome: Ask, Card: []string{"c"}}} {
		ans := a.Answer(c, v)
		var top map[string]json.RawMessage
		if err := json.Unmarshal(ans.Stdout, &top); err != nil {
			t.Fatalf("%q: %v", v.Outcome, err)
		}
		var inner map[string]json.RawMessage
		_ = json.Unmarshal(top["hookSpecificOutput"], &inner)
		for k := range top {
			if !slices.Contains(allowedTop, k) {
				t.Errorf("%q: field %q outside Codex's schema", v.Outcome, k)
			}
		}
		for k := range inner {
			if !slices.Contains(allowedInner, k) {
				t.Errorf("%q: field hookSpecificOutput.%q outside Codex's schema", v.Outcome, k)
			}
		}
		var d string
		_ = json.Unmarshal(inner["permissionDecision"], &d)
		if d == "ask" || d == "allow" && inner["updatedInput"] == nil {
			t.Errorf("%q: Codex fails a hook that answers %s without a rewrite", v.Outcome, d)
		}
	}
}

func TestWordsQuote(t *testing.T) {
	for _, w := range [][]string{
		{"/usr/bin/mnemos", "hook", "claude-code"},
		{"/opt/my tools/mnemos", "run", "--", "bash", "-c", "echo 'hi' && rm -f \"$X\""},
		{"", "a'b", "$(x)", "`y`", "\\n"},
	} {
		line := QuoteLine(w...)
		if got := Words(line); !slices.Equal(got, w) {
			t.Errorf("Words(QuoteLine(%q)) = %q (line %s)", w, got, line)
		}
	}
	if !IsMnemosHook(`'/home/u/go/bin/mnemos' hook codex`, "codex") || IsMnemosHook("/usr/bin/mnemos hook codex", "gemini") || IsMnemosHook("dcg hook codex", "codex") {
		t.Error("IsMnemosHook")
	}
}

// TestRead: how each agent reads answers, including the ones that fail
// open (a crash, a timeout, an allow Codex rejects).
func TestRead(t *testing.T) {
	cases := []struct {
		agent string
		ans   Answer
		want  Outcome
	}{
		{"claude-code", Answer{Exit: 1, Stderr: "boom"}, Failed},
		{"claude-code", Answer{Exit: 127}, Failed},
		{"claude-code", Answer{Exit: 2, Stderr: "no"}, Deny},
		{"claude-code", Answer{Stdout: []byte(`{"decision":"block","reason":"r"}`)}, Deny},
		{"claude-code", Answer{}, Allow},
		{"codex", Answer{Exit: 2}, Failed},
		{"codex", Answer{Exit: 2, Stderr: "no"}, Deny},
		{"codex", Answer{Stdout: []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`)}, Failed},
		{"codex", Answer{Stdout: []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}`)}, Failed},
		{"codex", Answer{Stdout: []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}`)}, Failed},
		{"codex", Answer{Stdout: []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r"},"ruleId":"x"}`)}, Failed},
		{"codex", Answer{Stdout: []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r"}}`)}, Deny},
		{"gemini", Answer{Exit: 2}, Allow},
		{"gemini", Answer{Exit: 2, Stderr: "no"}, Deny},
		{"gemini", Answer{Exit: 1, Stderr: "warning"}, Allow},
		{"gemini", Answer{Exit: 3, Stdout: []byte(`{"decision":"allow"}`)}, Allow},
		{"cursor", Answer{Exit: 2}, Deny},
		{"cursor", Answer{Exit: 1}, Failed},
		{"copilot", Answer{Stdout: []byte(`{"permissionDecision":"allow"}`)}, Allow},
		{"amp", Answer{Exit: 1}, Ask},
		{"amp", Answer{Exit: 3}, Deny},
	}
	for _, tc := range cases {
		if got := mustAgent(t, tc.agent).Read(tc.ans); got != tc.want {
			t.Errorf("%s %+v: read as %s, want %s", tc.agent, tc.ans, got, tc.want)
		}
	}
	// Every probe parses, as the shell command it names.
	for _, a := range Agents() {
		c, err := a.Parse(a.Probe("rm -rf ~", "/w", "s"), env(map[string]string{"AGENT_TOOL_NAME": "Bash"}))
		if err != nil || c.Kind != Shell || c.Command != "rm -rf ~" || c.Cwd != "/w" {
			t.Errorf("%s probe: %+v %v", a.Name, c, err)
		}
	}
}
