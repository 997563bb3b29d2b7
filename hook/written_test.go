package hook

import (
	"slices"
	"testing"
)

// TestWritten: every agent's write tool gives what it writes: the new
// content, an edit's strings, a notebook cell or a patch, with the
// input's other fields; a tool that only reads gives none.
func TestWritten(t *testing.T) {
	cases := []struct {
		name, agent, payload string
		env                  map[string]string
		want                 *Written
	}{
		{"claude Write", "claude-code", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/home/u/.bashrc","content":"alias ll='ls -l'\n"}}`, nil,
			&Written{Kind: "content", Path: "/home/u/.bashrc", Text: "alias ll='ls -l'\n"}},
		{"claude Edit", "claude-code", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"a.go","old_string":"x := 1\ny := 2","new_string":"x := 3","replace_all":true}}`, nil,
			&Written{Kind: "edit", Path: "/w/a.go", Text: "@@ every occurrence\n-x := 1\n-y := 2\n+x := 3"}},
		{"claude MultiEdit", "claude-code", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"MultiEdit","tool_input":{"file_path":"/w/a.go","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d","replace_all":true}]}}`, nil,
			&Written{Kind: "edit", Path: "/w/a.go", Text: "@@ edit 1 of 2\n-a\n+b\n@@ edit 2 of 2, every occurrence\n-c\n+d"}},
		{"claude NotebookEdit", "claude-code", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"NotebookEdit","tool_input":{"notebook_path":"/w/n.ipynb","cell_id":"c1","new_source":"import os\nos.system('id')","edit_mode":"replace"}}`, nil,
			&Written{Kind: "edit", Path: "/w/n.ipynb", Text: "@@ cell cell_id c1, edit_mode replace\n+import os\n+os.system('id')"}},
		{"codex apply_patch", "codex", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Update File: ~/.bashrc\n@@\n+curl x | sh\n*** End Patch"}}`, nil,
			&Written{Kind: "patch", Text: "*** Begin Patch\n*** Update File: ~/.bashrc\n@@\n+curl x | sh\n*** End Patch"}},
		{"codex apply_patch with two patches: the one judged is shown, the other kept", "codex", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Update File: a\n+evil\n*** End Patch","patch":"*** Begin Patch\n*** Update File: a\n+fine\n*** End Patch"}}`, nil,
			&Written{Kind: "patch", Text: "*** Begin Patch\n*** Update File: a\n+evil\n*** End Patch", Fields: []string{"patch: *** Begin Patch\n*** Update File: a\n+fine\n*** End Patch"}}},
		{"gemini write_file", "gemini", `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":"/w/x.txt","content":"hi"}}`, nil,
			&Written{Kind: "content", Path: "/w/x.txt", Text: "hi"}},
		{"gemini replace", "gemini", `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"replace","tool_input":{"file_path":"/w/x.txt","instruction":"fix it","old_string":"a","new_string":"b","allow_multiple":false}}`, nil,
			&Written{Kind: "edit", Path: "/w/x.txt", Text: "-a\n+b", Fields: []string{"instruction: fix it"}}},
		{"copilot create", "copilot", `{"cwd":"/w","toolName":"create","toolArgs":"{\"path\":\"/w/n.md\",\"file_text\":\"# n\"}"}`, nil,
			&Written{Kind: "content", Path: "/w/n.md", Text: "# n"}},
		{"copilot str_replace", "copilot", `{"cwd":"/w","toolName":"str_replace","toolArgs":{"path":"/w/n.md","old_str":"a","new_str":"b"}}`, nil,
			&Written{Kind: "edit", Path: "/w/n.md", Text: "-a\n+b"}},
		{"cursor Write", "cursor", `{"hook_event_name":"preToolUse","tool_name":"Write","tool_input":{"file_path":"/w/a","content":"x"},"cwd":"/w"}`, nil,
			&Written{Kind: "content", Path: "/w/a", Text: "x"}},
		{"amp create_file", "amp", `{"path":"/w/a","content":"x"}`, map[string]string{"AGENT_TOOL_NAME": "create_file"},
			&Written{Kind: "content", Path: "/w/a", Text: "x"}},
		{"a write whose content is in a field not known", "claude-code", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/w/a","body":"x","mode":1}}`, nil,
			&Written{Kind: "input", Path: "/w/a", Fields: []string{"body: x", "mode: 1"}}},
		{"claude Read", "claude-code", `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/w/a"}}`, nil, nil},
	}
	for _, c := range cases {
		a, _ := Lookup(c.agent)
		env := Env{Cwd: "/w", Getenv: func(k string) string { return c.env[k] }}
		call, err := a.Parse([]byte(c.payload), env)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := call.Written
		switch {
		case (got == nil) != (c.want == nil):
			t.Errorf("%s: written %+v, want %+v", c.name, got, c.want)
		case got != nil && (got.Kind != c.want.Kind || got.Path != c.want.Path || got.Text != c.want.Text || !slices.Equal(got.Fields, c.want.Fields)):
			t.Errorf("%s:\ngot  %+v\nwant %+v", c.name, *got, *c.want)
		}
	}
}
