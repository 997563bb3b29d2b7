package audit

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"
)

// decisionAttrs is a typical policy.decision event.
func decisionAttrs() []slog.Attr {
	return []slog.Attr{
		slog.String("decision", "allow"),
		slog.String("reason", "capability fs:read allowed at level supervised"),
		slog.String("blocked_by", ""),
		slog.Any("argv", []string{"git", "log", "--oneline", "-n", "20", "--author=bob@example.com"}),
		slog.String("cwd", "/home/bob/src/project"),
		slog.String("autonomy", "supervised"),
		slog.String("channel", "cli"),
		slog.String("sender", "bob"),
		slog.Any("commands", []any{map[string]any{"name": "git", "capability": "fs:read", "outcome": "allow"}}),
	}
}

func benchmarkAppend(b *testing.B, opts Options) {
	l := Open(filepath.Join(b.TempDir(), "audit.jsonl"), opts)
	defer l.Close()
	attrs := decisionAttrs()
	for b.Loop() {
		if err := l.Append(b.Context(), KindPolicyDecision, attrs...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppend is one event on the hot path: encode and redact, lock,
// read the last line and the anchor, MAC the line, write, MAC and replace
// the anchor. The key is read by the first append only.
func BenchmarkAppend(b *testing.B) { benchmarkAppend(b, Options{}) }

// BenchmarkAppendSync adds the two fsyncs of Options.Sync.
func BenchmarkAppendSync(b *testing.B) { benchmarkAppend(b, Options{Sync: true}) }

// BenchmarkEncode is Append's work before it touches the file system.
func BenchmarkEncode(b *testing.B) {
	attrs := decisionAttrs()
	for b.Loop() {
		if _, err := encodeBody(attrs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnchor is the anchor replacement alone (one write in place).
func BenchmarkAnchor(b *testing.B) {
	path := filepath.Join(b.TempDir(), "a.anchor")
	for b.Loop() {
		if _, err := writeAnchor(path, anchor{Count: 1, LastHash: emptyHash}, false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRedactString(b *testing.B) {
	s := `curl -sS -H "Authorization: Bearer abc.def" "https://api.example.com/v1/items?page=2&access_token=xyz" -d '{"name":"x"}'`
	for b.Loop() {
		RedactString(s)
	}
}

func BenchmarkVerify1000(b *testing.B) {
	path, _ := writeLog(b, b.TempDir(), 1000, "")
	for b.Loop() {
		if rep, err := Verify(path, ""); err != nil || !rep.OK {
			b.Fatal(rep, err)
		}
	}
}

// BenchmarkMAC is what the key adds to an append: the line's MAC and the
// anchor's, with the key already read.
func BenchmarkMAC(b *testing.B) {
	body, err := encodeBody(decisionAttrs())
	if err != nil {
		b.Fatal(err)
	}
	line := appendHeader(nil, time.Now(), KindPolicyDecision, 1234, emptyHash)
	line = append(line, body[:len(body)-2]...)
	m := newMacer(make([]byte, KeySize))
	a := anchor{Count: 1234, LastHash: emptyHash, LastMAC: emptyHash}
	for b.Loop() {
		m.line(line)
		m.anchor(a)
	}
}
