package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mnemos-dev/mnemos/approvals"
)

// What a file tool writes. An agent's file tool (Write, Edit, MultiEdit,
// NotebookEdit, Codex's apply_patch, Gemini's write_file and replace,
// Copilot's create and str_replace) is judged as the command that touches
// the same paths (tee -- PATH), whose words say nothing of what it
// writes. The request carries what it writes (Request.Written): the card
// shows it, escaped and cut to a readable size, with a digest of all of
// it, and the binding (binding.go) includes that digest, so that an
// approval given for one content is never spent on another: a different
// patch to the same file, sent after the approval, asks again, and its
// card says the patch changed.

// Written is what a file tool puts in place (hook.Written).
type Written struct {
	// Kind is "content" (a file's new content), "edit" (strings
	// replaced, as "-" and "+" lines), "patch", or "input" (the content
	// is in Fields).
	Kind string `json:"kind"`
	// Path is the file written; empty for a patch.
	Path string `json:"path,omitempty"`
	// Text is all of it.
	Text string `json:"text"`
	// Fields are the tool input's other fields, "name: value".
	Fields []string `json:"fields,omitempty"`
}

// Digest is the SHA-256 of all the write holds: its text, then each
// field after a NUL. For a file's new content without other fields it is
// the digest of the file as it will be written.
func (w *Written) Digest() string {
	h := sha256.New()
	h.Write([]byte(w.Text))
	for _, f := range w.Fields {
		h.Write([]byte{0})
		h.Write([]byte(f))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// writtenFacts are the binding's facts of a write: "write PATH
// KIND:DIGEST", or "patch KIND:DIGEST".
func writtenFacts(w *Written) []string {
	if w == nil {
		return nil
	}
	v := w.Kind + ":" + w.Digest()
	if w.Kind == "patch" || w.Path == "" {
		return []string{"patch " + v}
	}
	return []string{"write " + w.Path + " " + v}
}

// Bounds of what the card shows of a write.
const (
	writtenLinesShown = 12
	writtenBytesShown = 800
	writtenLineWidth  = 160
)

// metaWritten is the key of Details.Meta that keeps the card's lines
// showing what a file tool writes, so that every channel shows them.
const metaWritten = "written"

// writtenLines are the card's lines showing a write: a line saying what
// is written where, its size and the digest of all of it, then at most
// writtenLinesShown lines (writtenBytesShown bytes) of it, each after
// "| ", escaped (approvals.Printable), and how many lines are left out.
func writtenLines(w *Written) []string {
	if w == nil {
		return nil
	}
	body := strings.TrimSuffix(w.Text, "\n")
	var lines []string
	if w.Text != "" {
		lines = strings.Split(body, "\n")
	}
	for _, f := range w.Fields {
		lines = append(lines, "("+f+")")
	}
	size := fmt.Sprintf("%d %s, %d bytes, sha256 %s", len(lines), plural(len(lines), "line", "lines"), len(w.Text), strings.TrimPrefix(w.Digest(), "sha256:")[:12])
	var head string
	switch w.Kind {
	case "patch":
		head = "writes this patch (" + size + "):"
	case "edit":
		head = "edits " + w.Path + " (" + size + "):"
	case "content":
		head = "writes " + w.Path + " (" + size + "):"
	default:
		head = "writes " + w.Path + " with what the tool sent (" + size + "):"
	}
	out := []string{approvals.Printable(head)}
	used := 0
	shown := 0
	for _, l := range lines {
		if shown == writtenLinesShown {
			break
		}
		e := approvals.Printable(l)
		if utf8.RuneCountInString(e) > writtenLineWidth {
			e = string([]rune(e)[:writtenLineWidth]) + "…"
		}
		if used+len(e) > writtenBytesShown {
			if room := writtenBytesShown - used; room >= 40 {
				cut := e[:room]
				for !utf8.ValidString(cut) {
					cut = cut[:len(cut)-1]
				}
				out = append(out, "| "+cut+"…")
			}
			break
		}
		used += len(e)
		out = append(out, "| "+e)
		shown++
	}
	if left := len(lines) - shown; left > 0 {
		out = append(out, fmt.Sprintf("… %d more %s (the digest covers all of it)", left, plural(left, "line", "lines")))
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// noteWritten keeps in a new request's details the card's lines showing
// what it writes.
func noteWritten(np *approvals.NewPending, req Request) {
	lines := writtenLines(req.Written)
	if len(lines) == 0 {
		return
	}
	if np.Details.Meta == nil {
		np.Details.Meta = map[string]string{}
	}
	np.Details.Meta[metaWritten] = strings.Join(lines, "\n")
}
