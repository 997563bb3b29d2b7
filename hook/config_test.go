package hook

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"
)

// fakeFS is a file system for installs.
type fakeFS map[string]string

func (f fakeFS) read(p string) ([]byte, error) {
	s, ok := f[p]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return []byte(s), nil
}

// apply writes a plan's changes.
func (f fakeFS) apply(p Plan) {
	for _, c := range p.Changes {
		if c.After == nil {
			delete(f, c.Path)
		} else {
			f[c.Path] = string(c.After)
		}
	}
}

var loc = Locations{Home: "/home/u", Project: "/w", MnemosConfig: "/home/u/.config/mnemos"}

const cmdLine = "'/usr/local/bin/mnemos' hook claude-code"

// A real-shaped settings file: permissions, a status line, another
// PreToolUse hook and a PostToolUse formatter, written the way Claude Code
// writes it.
const claudeSettings = `{
  "permissions": {
    "allow": [
      "Bash(npm run lint)",
      "Bash(npm test:*)"
    ],
    "deny": [
      "Read(./.env)"
    ]
  },
  "statusLine": {
    "type": "command",
    "command": "~/.claude/statusline.sh"
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "dcg"
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [
          {
            "type": "command",
            "command": "npx prettier --write \"$CLAUDE_FILE_PATHS\""
          }
        ]
      }
    ]
  },
  "model": "opus",
  "cleanupPeriodDays": 30
}
`

func TestInstallClaudeRoundTrip(t *testing.T) {
	a := mustAgent(t, "claude-code")
	f := fakeFS{"/home/u/.claude/settings.json": claudeSettings}
	e := Entry{Command: cmdLine, Timeout: 60 * time.Second}
	p, err := a.Install(loc, e, f.read)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 1 || p.Changes[0].Path != "/home/u/.claude/settings.json" {
		t.Fatalf("changes %+v", p.Changes)
	}
	f.apply(p)
	got := f["/home/u/.claude/settings.json"]
	for _, keep := range []string{`"Bash(npm test:*)"`, `"command": "dcg"`, `"command": "~/.claude/statusline.sh"`, `npx prettier --write \"$CLAUDE_FILE_PATHS\"`, `"model": "opus"`, `"cleanupPeriodDays": 30`} {
		if !strings.Contains(got, keep) {
			t.Errorf("lost %s:\n%s", keep, got)
		}
	}
	// Order kept: permissions first, model and cleanupPeriodDays last;
	// dcg's hook stays before mnemos's.
	if !(strings.Index(got, `"permissions"`) < strings.Index(got, `"statusLine"`) && strings.Index(got, `"statusLine"`) < strings.Index(got, `"hooks"`) &&
		strings.Index(got, `"dcg"`) < strings.Index(got, "mnemos") && strings.Index(got, "mnemos") < strings.Index(got, `"PostToolUse"`) &&
		strings.Index(got, `"cleanupPeriodDays"`) > strings.Index(got, `"model"`)) {
		t.Errorf("order changed:\n%s", got)
	}
	want := `      {
        "matcher": "Bash|PowerShell|Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep|LS|WebFetch",
        "hooks": [
          {
            "type": "command",
            "command": "'/usr/local/bin/mnemos' hook claude-code",
            "timeout": 60,
            "onFailure": "block"
          }
        ]
      }`
	if !strings.Contains(got, want) {
		t.Errorf("entry not as documented:\n%s", got)
	}

	// A second install changes nothing.
	p2, err := a.Install(loc, e, f.read)
	if err != nil {
		t.Fatal(err)
	}
	if len(p2.Changes) != 0 || len(p2.Unchanged) != 1 {
		t.Errorf("second install: %+v", p2)
	}
	// Find sees it.
	w, err := a.Find(loc, f.read)
	if err != nil || len(w) != 1 || w[0].Program != "/usr/local/bin/mnemos" || !w[0].FailClosed || w[0].Event != "PreToolUse" || len(w[0].Tools) != 11 {
		t.Errorf("find: %+v %v", w, err)
	}
	// Moving the binary replaces the entry, never adds a second one.
	e.Command = "/opt/mnemos hook claude-code"
	p3, _ := a.Install(loc, e, f.read)
	f.apply(p3)
	if n := strings.Count(f["/home/u/.claude/settings.json"], "hook claude-code"); n != 1 {
		t.Errorf("%d entries after a reinstall from elsewhere", n)
	}
	// Uninstall gives the file back as it was.
	p4, err := a.Uninstall(loc, false, f.read)
	if err != nil {
		t.Fatal(err)
	}
	f.apply(p4)
	if f["/home/u/.claude/settings.json"] != claudeSettings {
		t.Errorf("uninstall did not restore the file:\n%s", f["/home/u/.claude/settings.json"])
	}
	p5, _ := a.Uninstall(loc, false, f.read)
	if len(p5.Changes) != 0 {
		t.Errorf("second uninstall changes %+v", p5.Changes)
	}
}

func TestInstallNewFiles(t *testing.T) {
	e := Entry{Command: "/usr/local/bin/mnemos hook X", Timeout: 90 * time.Second}
	cases := []struct {
		agent   string
		project bool
		env     map[string]string
		path    string
		want    []string
	}{
		{"claude-code", true, nil, "/w/.claude/settings.json", []string{`"PreToolUse"`, `"onFailure": "block"`, `"timeout": 90`}},
		{"codex", false, map[string]string{"CODEX_HOME": "/srv/codex"}, "/srv/codex/hooks.json", []string{`"PreToolUse"`, `"matcher": "Bash|apply_patch"`, `"timeout": 90`}},
		{"codex", false, nil, "/home/u/.codex/hooks.json", []string{`"PreToolUse"`}},
		{"gemini", false, nil, "/home/u/.gemini/settings.json", []string{`"BeforeTool"`, `"timeout": 90000`, `"name": "mnemos"`, `^(run_shell_command|`}},
		{"cursor", false, nil, "/home/u/.cursor/hooks.json", []string{`"version": 1`, `"beforeShellExecution"`, `"beforeReadFile"`, `"failClosed": true`}},
		{"copilot", false, nil, "/home/u/.copilot/hooks/mnemos.json", []string{`"version": 1`, `"preToolUse"`, `"bash": "/usr/local/bin/mnemos hook X"`, `"timeoutSec": 90`}},
		{"copilot", true, nil, "/w/.github/hooks/mnemos.json", []string{`"preToolUse"`}},
		{"amp", false, nil, "/home/u/.config/amp/settings.json", []string{`"amp.permissions"`, `"action": "delegate"`, `"to": "/home/u/.config/mnemos/hooks/mnemos-hook-amp"`}},
	}
	for _, tc := range cases {
		t.Run(tc.agent+" "+tc.path, func(t *testing.T) {
			a := mustAgent(t, tc.agent)
			l := loc
			l.Getenv = func(k string) string { return tc.env[k] }
			e := e
			e.Project = tc.project
			e.Command = strings.Replace(e.Command, "X", tc.agent, 1)
			f := fakeFS{}
			p, err := a.Install(l, e, f.read)
			if err != nil {
				t.Fatal(err)
			}
			f.apply(p)
			got, ok := f[tc.path]
			if !ok {
				t.Fatalf("no %s in %+v", tc.path, p.Changes)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, strings.Replace(w, "X", tc.agent, 1)) {
					t.Errorf("lacks %s:\n%s", w, got)
				}
			}
			w, err := a.Find(l, f.read)
			if err != nil || len(w) == 0 || w[0].Program != "/usr/local/bin/mnemos" {
				t.Errorf("find: %+v %v", w, err)
			}
			// Uninstall leaves nothing of mnemos's.
			u, err := a.Uninstall(l, tc.project, f.read)
			if err != nil {
				t.Fatal(err)
			}
			f.apply(u)
			for path, s := range f {
				if strings.Contains(s, "mnemos") {
					t.Errorf("after uninstall %s still holds:\n%s", path, s)
				}
			}
		})
	}
}

func TestInstallAmpFirstRule(t *testing.T) {
	a := mustAgent(t, "amp")
	f := fakeFS{"/home/u/.config/amp/settings.json": `{
	"amp.permissions": [
		{"tool": "Bash", "matches": {"cmd": "git status"}, "action": "allow"}
	],
	"amp.notifications.enabled": false
}
`}
	p, err := a.Install(loc, Entry{Command: "'/usr/bin/mnemos' hook amp"}, f.read)
	if err != nil {
		t.Fatal(err)
	}
	f.apply(p)
	got := f["/home/u/.config/amp/settings.json"]
	if strings.Index(got, `"delegate"`) > strings.Index(got, `"git status"`) {
		t.Errorf("mnemos's rules do not come first:\n%s", got)
	}
	if !strings.Contains(got, "\n\t\"amp.permissions\"") {
		t.Errorf("the file's tab indentation was not kept:\n%s", got)
	}
	script := f["/home/u/.config/mnemos/hooks/mnemos-hook-amp"]
	if !strings.HasPrefix(script, "#!/bin/sh\n") || !strings.Contains(script, "exec '/usr/bin/mnemos' hook amp\n") {
		t.Errorf("script %q", script)
	}
	for _, c := range p.Changes {
		if strings.HasSuffix(c.Path, "mnemos-hook-amp") && c.Mode != 0o755 {
			t.Errorf("script mode %v", c.Mode)
		}
	}
	w, _ := a.Find(loc, f.read)
	if len(w) != 4 || w[0].Program != "/usr/bin/mnemos" {
		t.Errorf("find %+v", w)
	}
}

func TestInstallRefusesWhatItCannotRead(t *testing.T) {
	a := mustAgent(t, "claude-code")
	for name, content := range map[string]string{
		"syntax":        "{\n  \"hooks\": {\n    \"PreToolUse\": [,]\n  }\n}\n",
		"comments":      "{\n  // mine\n  \"model\": \"opus\"\n}\n",
		"hooks a list":  `{"hooks": []}`,
		"event a map":   `{"hooks": {"PreToolUse": {}}}`,
		"not an object": `[1, 2]`,
	} {
		f := fakeFS{"/home/u/.claude/settings.json": content}
		_, err := a.Install(loc, Entry{Command: cmdLine}, f.read)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.File != "/home/u/.claude/settings.json" {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if name == "syntax" && (ce.Line != 3 || ce.Col == 0) {
			t.Errorf("syntax error at %d:%d, want line 3", ce.Line, ce.Col)
		}
	}
	if _, err := mustAgent(t, "amp").Install(loc, Entry{Command: "x", Project: true}, fakeFS{}.read); err == nil {
		t.Error("amp --project installed somewhere")
	}
}
