package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Written is what a file tool's write puts in place, as the agent sent
// it: a file's new content (Write, write_file, create), the strings an
// edit replaces (Edit, MultiEdit, replace, str_replace), a notebook
// cell's new source, or a patch (Codex's apply_patch). The card shows it
// and the approval is bound to it, so that what a person approved is
// what is written.
type Written struct {
	// Kind is "content", "edit", "patch", or "input" when the content is
	// in no field known here (Fields then holds all of it).
	Kind string `json:"kind"`
	// Path is the file written; empty for a patch, which names its own.
	Path string `json:"path,omitempty"`
	// Text is the whole change as a person reads it: the content or the
	// patch as sent; for an edit, each string replaced as lines starting
	// with "-", its replacement as lines starting with "+", and a line
	// starting with "@@" before each edit of several or one with
	// options.
	Text string `json:"text"`
	// Fields are the tool input's other fields ("name: value", sorted),
	// which may change what is written too.
	Fields []string `json:"fields,omitempty"`
}

// pathFields are the fields naming the file a tool writes, shown as its
// path rather than as part of the change.
var pathFields = []string{"file_path", "path", "absolute_path", "notebook_path", "target_file", "filePath"}

// changeOf reads what a write tool puts in place from its input.
func changeOf(tool string, in map[string]json.RawMessage, path string) (*Written, error) {
	ch := &Written{Path: path}
	used := map[string]bool{}
	for _, k := range pathFields {
		used[k] = true
	}
	text := func(k string) (string, bool, error) {
		raw, ok := in[k]
		if !ok || string(raw) == "null" {
			return "", false, nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false, fmt.Errorf("%s: field %q is not a string", tool, k)
		}
		used[k] = true
		return s, true, nil
	}
	var edits []edit
	// A patch: from the field Codex's payload is read from (parseCodex),
	// any other one kept in Fields.
	for _, k := range []string{"command", "patch", "input"} {
		s, ok, err := text(k)
		if err != nil {
			return nil, err
		}
		if ok && (tool == "apply_patch" || strings.HasPrefix(strings.TrimSpace(s), "*** Begin Patch")) {
			ch.Kind, ch.Text, ch.Path = "patch", s, ""
			break
		} else if ok {
			used[k] = false
		}
	}
	// New content.
	if ch.Kind == "" {
		for _, k := range []string{"content", "file_text", "contents", "new_content"} {
			s, ok, err := text(k)
			if err != nil {
				return nil, err
			}
			if ok {
				ch.Kind, ch.Text = "content", s
				break
			}
		}
	}
	// An edit: one pair of strings, a list of them, or a notebook cell.
	if ch.Kind == "" {
		for _, pair := range [][2]string{{"old_string", "new_string"}, {"old_str", "new_str"}} {
			o, okO, err := text(pair[0])
			if err != nil {
				return nil, err
			}
			n, okN, err := text(pair[1])
			if err != nil {
				return nil, err
			}
			if okO || okN {
				edits = append(edits, edit{old: o, new: n, hasOld: true, all: flag(in, used, "replace_all", "allow_multiple")})
				break
			}
		}
		if raw, ok := in["edits"]; ok && string(raw) != "null" {
			var list []struct {
				Old        *string `json:"old_string"`
				New        *string `json:"new_string"`
				ReplaceAll bool    `json:"replace_all"`
			}
			if err := json.Unmarshal(raw, &list); err != nil {
				return nil, fmt.Errorf("%s: field \"edits\" is not a list of edits", tool)
			}
			used["edits"] = true
			for _, e := range list {
				var x edit
				if e.Old != nil {
					x.old, x.hasOld = *e.Old, true
				}
				if e.New != nil {
					x.new = *e.New
				}
				x.all = e.ReplaceAll
				edits = append(edits, x)
			}
		}
		if s, ok, err := text("new_source"); err != nil {
			return nil, err
		} else if ok {
			var head []string
			for _, k := range []string{"cell_id", "cell_type", "edit_mode"} {
				if v, ok, err := text(k); err != nil {
					return nil, err
				} else if ok && v != "" {
					head = append(head, k+" "+v)
				}
			}
			edits = append(edits, edit{new: s, head: "cell " + strings.Join(head, ", ")})
		}
		if len(edits) > 0 {
			ch.Kind, ch.Text = "edit", renderEdits(edits)
		}
	}
	if ch.Kind == "" {
		// A write whose content is in no field known here: what it
		// sends (Fields) is all there is to show and to bind.
		ch.Kind = "input"
	}
	var keys []string
	for k := range in {
		if !used[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := in[k]
		var s string
		if json.Unmarshal(v, &s) != nil {
			var b bytes.Buffer
			if json.Compact(&b, v) == nil {
				s = b.String()
			} else {
				s = string(v)
			}
		}
		ch.Fields = append(ch.Fields, k+": "+s)
	}
	return ch, nil
}

// flag reads the first of the boolean fields present.
func flag(in map[string]json.RawMessage, used map[string]bool, keys ...string) bool {
	for _, k := range keys {
		if raw, ok := in[k]; ok {
			var b bool
			if json.Unmarshal(raw, &b) == nil {
				used[k] = true
				return b
			}
		}
	}
	return false
}

type edit struct {
	old, new string
	hasOld   bool
	all      bool
	head     string
}

// renderEdits writes edits as Written.Text says.
func renderEdits(edits []edit) string {
	var b strings.Builder
	for i, e := range edits {
		var head []string
		if len(edits) > 1 {
			head = append(head, fmt.Sprintf("edit %d of %d", i+1, len(edits)))
		}
		if e.head != "" {
			head = append(head, e.head)
		}
		if e.all {
			head = append(head, "every occurrence")
		}
		if len(head) > 0 {
			b.WriteString("@@ " + strings.Join(head, ", ") + "\n")
		}
		if e.hasOld {
			for _, l := range strings.Split(e.old, "\n") {
				b.WriteString("-" + l + "\n")
			}
		}
		for _, l := range strings.Split(e.new, "\n") {
			b.WriteString("+" + l + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// readWritten sets c.Written for a file call that writes.
func (c *Call) readWritten() error {
	if c.Kind != Files || c.input == nil {
		return nil
	}
	path := ""
	writes := false
	for _, f := range c.Files {
		if f.Op == Write {
			if !writes {
				path = f.Path
			}
			writes = true
		}
	}
	if !writes {
		return nil
	}
	ch, err := changeOf(c.Tool, c.input, path)
	if err != nil {
		return err
	}
	c.Written = ch
	return nil
}
