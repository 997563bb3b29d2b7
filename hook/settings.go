package hook

import (
	"path/filepath"
	"strings"
)

// The tools each agent's entry is matched to: the shell, the file tools
// and web fetches, which mnemos judges as their commands, paths and hosts.
const (
	claudeTools = "Bash|PowerShell|Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep|LS|WebFetch"
	codexTools  = "Bash|apply_patch"
	geminiTools = "run_shell_command|read_file|read_many_files|write_file|replace|glob|grep_search|search_file_content|list_directory|web_fetch"
	ampTools    = "Bash|Read|edit_file|create_file"
)

func claudeConfig() config {
	file := scoped([]string{".claude", "settings.json"}, []string{".claude", "settings.json"})
	return config{
		file:  file,
		files: both(file),
		install: groupInstall("PreToolUse", claudeTools, func(e Entry) *jnode {
			// onFailure: block (Claude Code 2.1.295) makes a hook that
			// cannot start, times out or exits oddly block the call.
			return obj("type", "command", "command", e.Command, "timeout", seconds(e.Timeout), "onFailure", "block")
		}),
		uninstall: groupUninstall,
		find:      groupFind,
		notes: []string{
			"Claude Code reads the change without a restart; `/hooks` in Claude Code lists the entry",
			"onFailure: block needs Claude Code 2.1.295 or later: an older one runs the tool when the hook fails, so keep it current",
		},
		dirs: func(l Locations) []string { return []string{filepath.Join(l.Home, ".claude")} },
	}
}

func codexHome(l Locations) string {
	if h := l.getenv("CODEX_HOME"); filepath.IsAbs(h) {
		return h
	}
	return filepath.Join(l.Home, ".codex")
}

func codexConfig() config {
	file := func(l Locations, p bool) (string, error) {
		if p {
			return projectFile(l, ".codex", "hooks.json")
		}
		if l.Home == "" && l.getenv("CODEX_HOME") == "" {
			return userHomeFile(l)
		}
		return filepath.Join(codexHome(l), "hooks.json"), nil
	}
	return config{
		file:  file,
		files: both(file),
		install: groupInstall("PreToolUse", codexTools, func(e Entry) *jnode {
			return obj("type", "command", "command", e.Command, "timeout", seconds(e.Timeout))
		}),
		uninstall: groupUninstall,
		find:      groupFind,
		notes: []string{
			"Codex runs a new or changed hook only once you trust it: start codex, type /hooks and trust the mnemos entry (every change to hooks.json needs trusting again; until then Codex runs without mnemos and says nothing)",
			"Codex runs the command when a hook fails (it has no fail-closed setting yet): run `mnemos doctor` after upgrading either",
			"an allowed command runs as `mnemos run ...`; under Codex's own workspace-write sandbox it cannot write mnemos's audit log and is refused: let mnemos be the sandbox (sandbox_mode = \"danger-full-access\"), or install with --no-rewrite",
		},
		dirs: func(l Locations) []string { return []string{codexHome(l)} },
	}
}

func geminiConfig() config {
	file := scoped([]string{".gemini", "settings.json"}, []string{".gemini", "settings.json"})
	return config{
		file:  file,
		files: both(file),
		install: groupInstall("BeforeTool", "^("+geminiTools+")$", func(e Entry) *jnode {
			// Gemini's timeout is in milliseconds.
			return obj("name", "mnemos", "type", "command", "command", e.Command, "timeout", seconds(e.Timeout)*1000)
		}),
		uninstall: groupUninstall,
		find:      groupFind,
		notes: []string{
			"Gemini CLI runs project hooks only in trusted folders, and asks again when a project hook changes; `/hooks panel` lists the entry",
		},
		dirs: func(l Locations) []string { return []string{filepath.Join(l.Home, ".gemini")} },
	}
}

func cursorConfig() config {
	file := scoped([]string{".cursor", "hooks.json"}, []string{".cursor", "hooks.json"})
	return config{
		file:  file,
		files: both(file),
		install: flatInstall([]string{"beforeShellExecution", "beforeReadFile"}, "command", func(e Entry) *jnode {
			return obj("command", e.Command, "timeout", seconds(e.Timeout), "failClosed", true)
		}),
		uninstall: flatUninstall("command"),
		find:      flatFind("command"),
		notes: []string{
			"Cursor reloads hooks.json by itself; a project's .cursor/hooks.json runs only in a trusted workspace",
		},
		dirs: func(l Locations) []string { return []string{filepath.Join(l.Home, ".cursor")} },
	}
}

func copilotHome(l Locations) string {
	if h := l.getenv("COPILOT_HOME"); filepath.IsAbs(h) {
		return h
	}
	return filepath.Join(l.Home, ".copilot")
}

func copilotConfig() config {
	file := func(l Locations, p bool) (string, error) {
		if p {
			return projectFile(l, ".github", "hooks", "mnemos.json")
		}
		if l.Home == "" && l.getenv("COPILOT_HOME") == "" {
			return userHomeFile(l)
		}
		return filepath.Join(copilotHome(l), "hooks", "mnemos.json"), nil
	}
	return config{
		file:  file,
		files: both(file),
		install: flatInstall([]string{"preToolUse"}, "bash", func(e Entry) *jnode {
			return obj("type", "command", "bash", e.Command, "timeoutSec", seconds(e.Timeout))
		}),
		uninstall: flatUninstall("bash"),
		find:      flatFind("bash"),
		notes: []string{
			"hooks in ~/.copilot/hooks need Copilot CLI 0.0.422 or later; an ask needs 1.0.24 or later",
		},
		dirs: func(l Locations) []string { return []string{copilotHome(l)} },
	}
}

func ampDir(l Locations) string {
	if x := l.getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "amp")
	}
	return filepath.Join(l.Home, ".config", "amp")
}

// ampProgram is the program Amp's delegate rules run: Amp runs a program
// by path, without arguments, so a two-line script names mnemos's hook.
func ampProgram(l Locations) string { return filepath.Join(l.MnemosConfig, "hooks", "mnemos-hook-amp") }

func ampScript(command string) []byte {
	return []byte("#!/bin/sh\n# Written by mnemos hook install amp: Amp's delegate permission rules run it.\nexec " + command + "\n")
}

// ampTarget reads the program the delegate script runs ("" when the
// script does not run mnemos's hook).
func ampTarget(script []byte) string {
	for _, line := range strings.Split(string(script), "\n") {
		if cmd, ok := strings.CutPrefix(line, "exec "); ok && IsMnemosHook(cmd, "amp") {
			return Words(cmd)[0]
		}
	}
	return ""
}

func ampConfig() config {
	const key = "amp.permissions"
	file := func(l Locations, p bool) (string, error) {
		if p {
			return "", errorf("amp", "Amp's project settings are not documented; install for the user (without --project)")
		}
		if l.Home == "" && l.getenv("XDG_CONFIG_HOME") == "" {
			return userHomeFile(l)
		}
		return filepath.Join(ampDir(l), "settings.json"), nil
	}
	ours := func(rule *jnode) bool {
		return rule.kind == '{' && rule.get("action").text() == "delegate" && strings.HasPrefix(filepath.Base(rule.get("to").text()), "mnemos-hook-amp")
	}
	strip := func(file string, root *jnode) (*jnode, bool, error) {
		list, err := root.child(file, key, key, '[')
		if err != nil {
			return nil, false, err
		}
		kept := list.vals[:0:0]
		for _, r := range list.vals {
			if !ours(r) {
				kept = append(kept, r)
			}
		}
		removed := len(kept) != len(list.vals)
		list.vals = kept
		return list, removed, nil
	}
	return config{
		file:  file,
		files: both(file),
		install: func(file string, before []byte, e Entry, agent string) ([]byte, error) {
			root, orig, err := rootObject(file, before)
			if err != nil {
				return nil, err
			}
			list, _, err := strip(file, root)
			if err != nil {
				return nil, err
			}
			// The first matching rule wins: mnemos's come first. Amp
			// runs a program by path: the delegate script (Agent.Install
			// passes its path as the command).
			prog := e.Command
			var rules []*jnode
			for _, t := range strings.Split(ampTools, "|") {
				rules = append(rules, obj("tool", t, "action", "delegate", "to", prog))
			}
			list.vals = append(rules, list.vals...)
			return edited(before, orig, root), nil
		},
		uninstall: func(file string, before []byte, agent string) ([]byte, error) {
			root, orig, err := rootObject(file, before)
			if err != nil {
				return nil, err
			}
			list, removed, err := strip(file, root)
			if err != nil {
				return nil, err
			}
			if removed && len(list.vals) == 0 {
				root.del(key)
			}
			return edited(before, orig, root), nil
		},
		find: func(file string, data []byte, agent string) ([]Wiring, error) {
			root, _, err := rootObject(file, data)
			if err != nil {
				return nil, err
			}
			list := root.get(key)
			if list == nil || list.kind != '[' {
				return nil, nil
			}
			var out []Wiring
			for _, r := range list.vals {
				if ours(r) {
					to := r.get("to").text()
					out = append(out, Wiring{File: file, Event: "delegate", Matcher: r.get("tool").text(), Command: to, Program: to, FailClosed: true, Tools: []string{r.get("tool").text()}})
				}
			}
			return out, nil
		},
		notes: []string{
			"Amp runs the first permission rule that matches: mnemos's delegate rules were put first; `amp permissions list` shows them",
		},
		dirs: func(l Locations) []string { return []string{ampDir(l)} },
	}
}

// groupInstall writes a Claude-shaped entry: hooks.EVENT is a list of
// groups, each a matcher and its handlers. mnemos's handlers are removed
// wherever they are, then one group is appended.
func groupInstall(event, matcher string, handler func(Entry) *jnode) func(string, []byte, Entry, string) ([]byte, error) {
	return func(file string, before []byte, e Entry, agent string) ([]byte, error) {
		root, orig, err := rootObject(file, before)
		if err != nil {
			return nil, err
		}
		hooks, err := root.child(file, "hooks", "hooks", '{')
		if err != nil {
			return nil, err
		}
		list, err := hooks.child(file, "hooks."+event, event, '[')
		if err != nil {
			return nil, err
		}
		if err := stripGroups(file, list, agent); err != nil {
			return nil, err
		}
		list.vals = append(list.vals, obj("matcher", matcher, "hooks", arr(handler(e))))
		return edited(before, orig, root), nil
	}
}

func groupUninstall(file string, before []byte, agent string) ([]byte, error) {
	root, orig, err := rootObject(file, before)
	if err != nil {
		return nil, err
	}
	hooks := root.get("hooks")
	if hooks == nil || hooks.kind != '{' {
		return before, nil
	}
	for i := 0; i < len(hooks.keys); i++ {
		list := hooks.vals[i]
		if list.kind != '[' {
			continue
		}
		n := len(list.vals)
		if err := stripGroups(file, list, agent); err != nil {
			return nil, err
		}
		if len(list.vals) == 0 && n > 0 {
			hooks.del(hooks.keys[i])
			i--
		}
	}
	if len(hooks.keys) == 0 && canon(root) != orig {
		root.del("hooks")
	}
	return edited(before, orig, root), nil
}

// stripGroups removes mnemos's handlers from a list of groups, and the
// groups they leave empty.
func stripGroups(file string, list *jnode, agent string) error {
	kept := list.vals[:0:0]
	for _, g := range list.vals {
		hs := g.get("hooks")
		if g.kind != '{' || hs == nil || hs.kind != '[' {
			kept = append(kept, g)
			continue
		}
		n := len(hs.vals)
		hs.vals = withoutOurs(hs.vals, "command", agent)
		if len(hs.vals) == 0 && n > 0 {
			continue
		}
		kept = append(kept, g)
	}
	list.vals = kept
	return nil
}

func withoutOurs(handlers []*jnode, key, agent string) []*jnode {
	kept := handlers[:0:0]
	for _, h := range handlers {
		if h.kind == '{' && IsMnemosHook(h.get(key).text(), agent) {
			continue
		}
		kept = append(kept, h)
	}
	return kept
}

func groupFind(file string, data []byte, agent string) ([]Wiring, error) {
	root, _, err := rootObject(file, data)
	if err != nil {
		return nil, err
	}
	hooks := root.get("hooks")
	if hooks == nil || hooks.kind != '{' {
		return nil, nil
	}
	var out []Wiring
	for i, event := range hooks.keys {
		list := hooks.vals[i]
		if list.kind != '[' {
			continue
		}
		for _, g := range list.vals {
			hs := g.get("hooks")
			if hs == nil || hs.kind != '[' {
				continue
			}
			m := g.get("matcher").text()
			for _, h := range hs.vals {
				cmd := h.get("command").text()
				if !IsMnemosHook(cmd, agent) {
					continue
				}
				out = append(out, Wiring{File: file, Event: event, Matcher: m, Command: cmd, Program: Words(cmd)[0],
					FailClosed: h.get("onFailure").text() == "block", Tools: matcherTools(m)})
			}
		}
	}
	return out, nil
}

// matcherTools lists the tool names of a matcher written as a plain list
// (a|b, ^(a|b)$); nil for any other matcher (all tools, or a pattern).
func matcherTools(m string) []string {
	m = strings.TrimSuffix(strings.TrimPrefix(m, "^("), ")$")
	if m == "" || m == "*" {
		return nil
	}
	var out []string
	for _, t := range strings.FieldsFunc(m, func(r rune) bool { return r == '|' || r == ',' }) {
		t = strings.TrimSpace(t)
		for _, r := range t {
			if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return nil
			}
		}
		out = append(out, t)
	}
	return out
}

// flatInstall writes entries that are handlers listed directly under
// hooks.EVENT (Cursor, Copilot CLI), with "version": 1.
func flatInstall(events []string, key string, handler func(Entry) *jnode) func(string, []byte, Entry, string) ([]byte, error) {
	return func(file string, before []byte, e Entry, agent string) ([]byte, error) {
		root, orig, err := rootObject(file, before)
		if err != nil {
			return nil, err
		}
		if root.get("version") == nil {
			root.keys = append([]string{"version"}, root.keys...)
			root.vals = append([]*jnode{scalar(1)}, root.vals...)
		}
		hooks, err := root.child(file, "hooks", "hooks", '{')
		if err != nil {
			return nil, err
		}
		for i := range hooks.keys {
			if l := hooks.vals[i]; l.kind == '[' {
				l.vals = withoutOurs(l.vals, key, agent)
			}
		}
		for _, ev := range events {
			list, err := hooks.child(file, "hooks."+ev, ev, '[')
			if err != nil {
				return nil, err
			}
			list.vals = append(list.vals, handler(e))
		}
		return edited(before, orig, root), nil
	}
}

func flatUninstall(key string) func(string, []byte, string) ([]byte, error) {
	return func(file string, before []byte, agent string) ([]byte, error) {
		root, orig, err := rootObject(file, before)
		if err != nil {
			return nil, err
		}
		hooks := root.get("hooks")
		if hooks == nil || hooks.kind != '{' {
			return before, nil
		}
		for i := 0; i < len(hooks.keys); i++ {
			l := hooks.vals[i]
			if l.kind != '[' {
				continue
			}
			n := len(l.vals)
			l.vals = withoutOurs(l.vals, key, agent)
			if len(l.vals) == 0 && n > 0 {
				hooks.del(hooks.keys[i])
				i--
			}
		}
		if canon(root) == orig {
			return before, nil
		}
		if len(hooks.keys) == 0 {
			root.del("hooks")
			if len(root.keys) == 1 && root.keys[0] == "version" {
				// Nothing but what mnemos wrote: the file goes.
				return nil, nil
			}
		}
		return edited(before, orig, root), nil
	}
}

func flatFind(key string) func(string, []byte, string) ([]Wiring, error) {
	return func(file string, data []byte, agent string) ([]Wiring, error) {
		root, _, err := rootObject(file, data)
		if err != nil {
			return nil, err
		}
		hooks := root.get("hooks")
		if hooks == nil || hooks.kind != '{' {
			return nil, nil
		}
		var out []Wiring
		for i, ev := range hooks.keys {
			l := hooks.vals[i]
			if l.kind != '[' {
				continue
			}
			for _, h := range l.vals {
				cmd := h.get(key).text()
				if h.kind != '{' || !IsMnemosHook(cmd, agent) {
					continue
				}
				fc := h.get("failClosed")
				out = append(out, Wiring{File: file, Event: ev, Command: cmd, Program: Words(cmd)[0],
					FailClosed: fc != nil && string(fc.raw) == "true"})
			}
		}
		return out, nil
	}
}
