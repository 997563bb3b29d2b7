package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func fixedClock() func() time.Time {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	n := 0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		n++
		return t0.Add(time.Duration(n) * time.Millisecond)
	}
}

func attrN(i int) []slog.Attr {
	return []slog.Attr{slog.Int("n", i), slog.Any("argv", []string{"echo", fmt.Sprint(i)})}
}

// writeLog appends n events to a fresh log and returns its path and lines.
// The key is created beside it.
func writeLog(t testing.TB, dir string, n int, salt string) (string, [][]byte) {
	t.Helper()
	path := filepath.Join(dir, "audit.jsonl")
	l := Open(path, Options{Clock: fixedClock()})
	defer l.Close()
	for i := range n {
		if err := l.Append(t.Context(), KindPolicyDecision, append(attrN(i+1), slog.String("salt", salt))...); err != nil {
			t.Fatal(err)
		}
	}
	return path, readLines(t, path)
}

// writeLegacyLog writes n events as mnemos wrote them before the key
// existed: lines without a MAC, an anchor of count and last hash, no key.
func writeLegacyLog(t testing.TB, dir string, n int, salt string) (string, [][]byte) {
	t.Helper()
	path := filepath.Join(dir, "audit.jsonl")
	lines := legacyLines(t, 1, emptyHash, n, salt)
	writeLines(t, path, lines)
	if n > 0 {
		sum := hashLine(lines[n-1])
		if _, err := writeAnchor(path+".anchor", anchor{Count: n, LastHash: hex.EncodeToString(sum[:])}, false); err != nil {
			t.Fatal(err)
		}
	}
	return path, lines
}

// legacyLines makes n unkeyed lines from seq on, the first chaining from
// prev.
func legacyLines(t testing.TB, seq int, prev string, n int, salt string) [][]byte {
	t.Helper()
	clock := fixedClock()
	var lines [][]byte
	for i := range n {
		body, err := encodeBody(append(attrN(seq+i), slog.String("salt", salt)))
		if err != nil {
			t.Fatal(err)
		}
		line := appendHeader(nil, clock(), KindPolicyDecision, seq+i, prev)
		line = append(line, body[:len(body)-1]...)
		sum := hashLine(line)
		prev = hex.EncodeToString(sum[:])
		lines = append(lines, line)
	}
	return lines
}

func readLines(t testing.TB, path string) [][]byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
}

func writeLines(t testing.TB, path string, lines [][]byte) {
	t.Helper()
	var b []byte
	for _, l := range lines {
		b = append(append(b, l...), '\n')
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// forge builds a line that continues the chain after prevLine with seq.
func forge(seq int, prevLine []byte) []byte {
	sum := sha256.Sum256(prevLine)
	return fmt.Appendf(nil, `{"time":"2026-03-01T11:00:00Z","level":"INFO","msg":"policy.decision","seq":%d,"prev":"%s","decision":"allow"}`,
		seq, hex.EncodeToString(sum[:]))
}

func TestVerifyChain(t *testing.T) {
	const n = 10
	// write makes a fresh log of the kind under test (keyed or written
	// before the key) in a directory of its own.
	type writer func(t testing.TB, dir string, n int, salt string) (string, [][]byte)
	type edit func(t *testing.T, path string, lines [][]byte, write writer)
	rewrite := func(f func(lines [][]byte) [][]byte) edit {
		return func(t *testing.T, path string, lines [][]byte, _ writer) { writeLines(t, path, f(lines)) }
	}
	// keyed, when set, is what a keyed log reports instead: a MAC names a
	// changed line before its hash or the anchor does, and an unkeyed line
	// after keyed ones is a downgrade.
	type want struct {
		firstBad int
		problem  string
	}
	tests := []struct {
		name     string
		edit     edit
		firstBad int
		problem  string
		keyed    *want
	}{
		{"intact", nil, 0, "", nil},
		{"edited line", rewrite(func(l [][]byte) [][]byte {
			l[3] = bytes.Replace(l[3], []byte(`"n":4`), []byte(`"n":5`), 1)
			return l
		}), 4, "line 4 was edited", nil},
		{"edited first line", rewrite(func(l [][]byte) [][]byte {
			l[0] = bytes.Replace(l[0], []byte(`"echo"`), []byte(`"rm"`), 1)
			return l
		}), 1, "line 1 was edited", nil},
		{"edited seq", rewrite(func(l [][]byte) [][]byte {
			l[5] = bytes.Replace(l[5], []byte(`"seq":6`), []byte(`"seq":60`), 1)
			return l
		}), 6, "line 6 was edited", nil},
		{"edited last line", rewrite(func(l [][]byte) [][]byte {
			l[n-1] = bytes.Replace(l[n-1], []byte(`"n":10`), []byte(`"n":11`), 1)
			return l
		}), n, "does not match the hash its anchor records", &want{n, "line 10 was edited: its MAC does not match"}},
		{"deleted line", rewrite(func(l [][]byte) [][]byte { return slices.Delete(l, 3, 4) }), 4, "a line was deleted before line 4: seq 4 is missing", nil},
		{"deleted lines", rewrite(func(l [][]byte) [][]byte { return slices.Delete(l, 3, 6) }), 4, "seq 4 to 6 are missing", nil},
		{"deleted head", rewrite(func(l [][]byte) [][]byte { return l[1:] }), 1, "a line was deleted before line 1", nil},
		{"inserted copy", rewrite(func(l [][]byte) [][]byte { return slices.Insert(l, 6, l[2]) }), 7, "line 7 was inserted", nil},
		{"inserted duplicate", rewrite(func(l [][]byte) [][]byte { return slices.Insert(l, 5, l[4]) }), 6, "line 6 was inserted: it repeats line 5", nil},
		{"inserted forgery", rewrite(func(l [][]byte) [][]byte { return slices.Insert(l, 4, forge(5, l[3])) }), 5, "line 5 was inserted",
			&want{5, "line 5 is not keyed, but line 4 before it is"}},
		{"inserted forgery with bad prev", rewrite(func(l [][]byte) [][]byte { return slices.Insert(l, 4, forge(5, []byte("x"))) }), 5, "line 5 was inserted", nil},
		{"inserted forgery with high seq", rewrite(func(l [][]byte) [][]byte { return slices.Insert(l, 4, forge(99, []byte("x"))) }), 5, "line 5 was inserted", nil},
		{"reordered neighbours", rewrite(func(l [][]byte) [][]byte {
			l[3], l[4] = l[4], l[3]
			return l
		}), 4, "line 4 is out of order", nil},
		{"reordered far", rewrite(func(l [][]byte) [][]byte {
			l[1], l[7] = l[7], l[1]
			return l
		}), 2, "line 2 is out of order", nil},
		{"truncated tail", rewrite(func(l [][]byte) [][]byte { return l[:7] }), 8, "the tail was cut", nil},
		{"emptied", rewrite(func(l [][]byte) [][]byte { return nil }), 1, "the tail was cut", nil},
		{"deleted log", func(t *testing.T, path string, _ [][]byte, _ writer) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, 1, "the tail was cut", nil},
		{"rewritten with a consistent chain", func(t *testing.T, path string, _ [][]byte, write writer) {
			_, other := write(t, t.TempDir(), n, "forged")
			writeLines(t, path, other)
		}, n, "the log was rewritten", &want{1, "line 1 was changed without the key: its MAC does not match, nor does"}},
		{"rewritten shorter", func(t *testing.T, path string, _ [][]byte, write writer) {
			_, other := write(t, t.TempDir(), n-2, "forged")
			writeLines(t, path, other)
		}, n - 1, "the tail was cut", &want{1, "line 1 was changed without the key: its MAC does not match, nor does"}},
		{"lines added past the anchor", func(t *testing.T, path string, l [][]byte, _ writer) {
			writeLines(t, path, append(l, forge(n+1, l[n-1])))
		}, n + 1, "past the anchor", &want{n + 1, "line 11 is not keyed, but line 10 before it is"}},
		{"bad JSON", rewrite(func(l [][]byte) [][]byte {
			l[5] = l[5][:len(l[5])-1]
			return l
		}), 6, "line 6: bad JSON", nil},
		{"blank line", rewrite(func(l [][]byte) [][]byte { return slices.Insert(l, 2, []byte{}) }), 3, "line 3: bad JSON", nil},
		{"missing seq", rewrite(func(l [][]byte) [][]byte {
			l[2] = bytes.Replace(l[2], []byte(`"seq"`), []byte(`"Xeq"`), 1)
			return l
		}), 3, `line 3: missing "seq"`, nil},
		{"incomplete last line", func(t *testing.T, path string, l [][]byte, _ writer) {
			writeLines(t, path, l)
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Write(forge(n+1, l[n-1])); err != nil {
				t.Fatal(err)
			}
		}, n + 1, "incomplete", nil},
		{"missing anchor", func(t *testing.T, path string, _ [][]byte, _ writer) {
			if err := os.Remove(path + ".anchor"); err != nil {
				t.Fatal(err)
			}
		}, 0, "anchor", nil},
		{"garbled anchor", func(t *testing.T, path string, _ [][]byte, _ writer) {
			if err := os.WriteFile(path+".anchor", []byte("{"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, 0, "anchor", nil},
	}
	for _, mode := range []struct {
		name  string
		write writer
	}{{"keyed", writeLog}, {"unkeyed", writeLegacyLog}} {
		for _, tt := range tests {
			t.Run(mode.name+"/"+tt.name, func(t *testing.T) {
				path, lines := mode.write(t, t.TempDir(), n, "")
				if tt.edit != nil {
					tt.edit(t, path, lines, mode.write)
				}
				rep, err := Verify(path, "")
				if err != nil {
					t.Fatal(err)
				}
				w := want{tt.firstBad, tt.problem}
				if mode.name == "keyed" && tt.keyed != nil {
					w = *tt.keyed
				}
				if rep.OK != (w.problem == "") || rep.FirstBad != w.firstBad || !strings.Contains(rep.Problem, w.problem) {
					t.Errorf("Verify = %+v\nwant FirstBad %d, problem containing %q", rep, w.firstBad, w.problem)
				}
			})
		}
	}
}

func TestVerifyEmpty(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.jsonl")
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{missing, empty} {
		rep, err := Verify(p, "")
		if err != nil || !rep.OK || rep.Lines != 0 {
			t.Errorf("Verify(%s) = %+v, %v; want OK with 0 lines", filepath.Base(p), rep, err)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("Verify created the log: %v", err)
	}
}

func TestVerifyReportsLastHash(t *testing.T) {
	path, lines := writeLog(t, t.TempDir(), 3, "")
	rep, err := Verify(path, "")
	if err != nil || !rep.OK || rep.Lines != 3 {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
	sum := sha256.Sum256(lines[2])
	if rep.LastHash != hex.EncodeToString(sum[:]) {
		t.Errorf("LastHash = %s", rep.LastHash)
	}
}
