package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Locations say where agents keep their settings.
type Locations struct {
	// Home is the user's home directory.
	Home string
	// Project is the project directory: where --project installs, and
	// where Find looks for project settings ("" for none).
	Project string
	// Getenv reads variables that move an agent's files (CODEX_HOME,
	// COPILOT_HOME, XDG_CONFIG_HOME).
	Getenv func(string) string
	// MnemosConfig is mnemos's configuration directory: Amp's delegate
	// program is written there, where no gated command may change it.
	MnemosConfig string
}

func (l Locations) getenv(k string) string {
	if l.Getenv == nil {
		return ""
	}
	return l.Getenv(k)
}

// Entry is the hook mnemos writes into an agent's settings.
type Entry struct {
	// Command is the command line the agent runs: mnemos's absolute path,
	// "hook" and the agent's name.
	Command string
	// Timeout is how long the agent waits for the hook (at least the
	// time a hold may take, and some).
	Timeout time.Duration
	// Project installs into the project's settings instead of the user's.
	Project bool
}

// Change is one file an install or uninstall writes.
type Change struct {
	Path string
	// Before is the file as it was (nil: it did not exist).
	Before []byte
	// After is the file to write (nil: remove it).
	After []byte
	Mode  os.FileMode
}

// Plan is what an install or uninstall does.
type Plan struct {
	// Changes are the files that change.
	Changes []Change
	// Unchanged are the files that already say what is wanted.
	Unchanged []string
	// Notes say what a person must still do, or should know.
	Notes []string
}

// Wiring is one mnemos hook found in an agent's settings.
type Wiring struct {
	File    string `json:"file"`
	Event   string `json:"event"`
	Matcher string `json:"matcher,omitempty"`
	// Command is the command line the agent runs.
	Command string `json:"command"`
	// Program is the program the command runs (the mnemos binary, as
	// written; for Amp, the binary its delegate program runs).
	Program string `json:"program"`
	// FailClosed says the agent blocks the call when the hook fails (Claude
	// Code's onFailure: block, Cursor's failClosed).
	FailClosed bool `json:"fail_closed"`
	// Tools lists the tools the entry covers, when the agent matches by
	// tool (empty: every tool the event fires for).
	Tools []string `json:"tools,omitempty"`
}

// reader reads a file; a missing file is (nil, an error wrapping
// fs.ErrNotExist).
type reader func(path string) ([]byte, error)

// config is where and how an agent keeps its hooks.
type config struct {
	// file is the settings file install writes for a scope.
	file func(l Locations, project bool) (string, error)
	// files are every settings file Find reads.
	files func(l Locations) []string
	// install and uninstall edit one file's content.
	install   func(file string, before []byte, e Entry, agent string) ([]byte, error)
	uninstall func(file string, before []byte, agent string) ([]byte, error)
	find      func(file string, data []byte, agent string) ([]Wiring, error)
	// notes are said after an install.
	notes []string
	// dirs are where the agent keeps its own files: one that exists
	// says the agent is installed.
	dirs func(l Locations) []string
}

// Install plans the agent's hook entry: read reads the current files.
func (a *Agent) Install(l Locations, e Entry, read func(string) ([]byte, error)) (Plan, error) {
	file, err := a.config.file(l, e.Project)
	if err != nil {
		return Plan{}, err
	}
	before, err := readOpt(read, file)
	if err != nil {
		return Plan{}, err
	}
	inst := e
	if a.Name == "amp" {
		inst.Command = ampProgram(l)
	}
	after, err := a.config.install(file, before, inst, a.Name)
	if err != nil {
		return Plan{}, err
	}
	var p Plan
	p.add(file, before, after, 0o600)
	if a.Name == "amp" {
		prog := ampProgram(l)
		old, err := readOpt(read, prog)
		if err != nil {
			return Plan{}, err
		}
		p.add(prog, old, ampScript(e.Command), 0o755)
	}
	p.Notes = append(p.Notes, a.config.notes...)
	return p, nil
}

// Uninstall plans removing mnemos's entries from the scope's file.
func (a *Agent) Uninstall(l Locations, project bool, read func(string) ([]byte, error)) (Plan, error) {
	file, err := a.config.file(l, project)
	if err != nil {
		return Plan{}, err
	}
	before, err := readOpt(read, file)
	if err != nil {
		return Plan{}, err
	}
	var p Plan
	if before == nil {
		p.Unchanged = append(p.Unchanged, file)
		return p, nil
	}
	after, err := a.config.uninstall(file, before, a.Name)
	if err != nil {
		return Plan{}, err
	}
	p.add(file, before, after, 0o600)
	if a.Name == "amp" {
		prog := ampProgram(l)
		if old, err := readOpt(read, prog); err == nil && old != nil {
			p.Changes = append(p.Changes, Change{Path: prog, Before: old, After: nil})
		}
	}
	return p, nil
}

// Find lists mnemos's hooks in every settings file of the agent, user
// and project.
func (a *Agent) Find(l Locations, read func(string) ([]byte, error)) ([]Wiring, error) {
	var out []Wiring
	for _, f := range a.config.files(l) {
		data, err := readOpt(read, f)
		if err != nil {
			return out, err
		}
		if data == nil {
			continue
		}
		w, err := a.config.find(f, data, a.Name)
		if err != nil {
			return out, err
		}
		if a.Name == "amp" {
			for i := range w {
				if s, err := readOpt(read, w[i].Program); err == nil && s != nil {
					w[i].Program = ampTarget(s)
				}
			}
		}
		out = append(out, w...)
	}
	return out, nil
}

// Files lists the settings files Find reads.
func (a *Agent) Files(l Locations) []string { return a.config.files(l) }

// Present reports whether the agent seems installed for the user: one of
// its own directories exists.
func (a *Agent) Present(l Locations, exists func(string) bool) bool {
	for _, d := range a.config.dirs(l) {
		if exists(d) {
			return true
		}
	}
	return false
}

func (p *Plan) add(path string, before, after []byte, mode os.FileMode) {
	if before != nil && bytes.Equal(before, after) {
		p.Unchanged = append(p.Unchanged, path)
		return
	}
	p.Changes = append(p.Changes, Change{Path: path, Before: before, After: after, Mode: mode})
}

func readOpt(read func(string) ([]byte, error), path string) ([]byte, error) {
	b, err := read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// IsMnemosHook reports whether a hook command line runs `mnemos hook
// AGENT`: its program is named mnemos (or mnemos-something), its next
// words are hook and the agent's name.
func IsMnemosHook(command, agent string) bool {
	w := Words(command)
	return len(w) >= 3 && strings.HasPrefix(filepath.Base(w[0]), "mnemos") && w[1] == "hook" && w[2] == agent
}

// Words splits a command line as a POSIX shell splits plain words and
// quoted strings (no expansions: what mnemos writes needs none).
func Words(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			in = true
		case ch == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case ch == ' ' || ch == '\t' || ch == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// Quote quotes a word for a POSIX shell, leaving plain words bare.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	plain := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// QuoteLine quotes words into one command line.
func QuoteLine(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}

// canon is a document's content without its layout, to tell a real change
// from a new indentation.
func canon(n *jnode) string {
	var b bytes.Buffer
	if err := json.Compact(&b, n.encode("")); err != nil {
		return string(n.encode(""))
	}
	return b.String()
}

// edited encodes root after an edit, or returns before untouched when the
// edit changed nothing but the layout.
func edited(before []byte, orig string, root *jnode) []byte {
	if before != nil && canon(root) == orig {
		return before
	}
	return root.encode(indentOf(before))
}

// rootObject parses a settings file that must hold a JSON object.
func rootObject(file string, before []byte) (*jnode, string, error) {
	root, err := parseTree(file, before)
	if err != nil {
		return nil, "", err
	}
	if root.kind != '{' {
		return nil, "", &ConfigError{File: file, Line: 1, Col: 1, Msg: "the file does not hold a JSON object"}
	}
	return root, canon(root), nil
}

func seconds(d time.Duration) int {
	if d <= 0 {
		return 60
	}
	return int((d + time.Second - 1) / time.Second)
}

func userHomeFile(l Locations, parts ...string) (string, error) {
	if l.Home == "" {
		return "", errors.New("cannot find the home directory; set HOME")
	}
	return filepath.Join(append([]string{l.Home}, parts...)...), nil
}

func projectFile(l Locations, parts ...string) (string, error) {
	if l.Project == "" {
		return "", errors.New("no project directory")
	}
	return filepath.Join(append([]string{l.Project}, parts...)...), nil
}

// scoped picks the user's or the project's file.
func scoped(user, project []string) func(Locations, bool) (string, error) {
	return func(l Locations, p bool) (string, error) {
		if p {
			return projectFile(l, project...)
		}
		return userHomeFile(l, user...)
	}
}

// both lists the user's and the project's files that can be named.
func both(file func(Locations, bool) (string, error)) func(Locations) []string {
	return func(l Locations) []string {
		var out []string
		for _, p := range []bool{false, true} {
			if f, err := file(l, p); err == nil {
				out = append(out, f)
			}
		}
		return out
	}
}

func errorf(file, format string, a ...any) error {
	return &ConfigError{File: file, Msg: fmt.Sprintf(format, a...)}
}
