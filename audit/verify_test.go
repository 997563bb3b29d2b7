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
	type edit func(t *testing.T, path string, lines [][]byte)
	rewrite := func(f func(lines [][]byte) [][]byte) edit {
		return func(t *testing.T, path string, lines [][]byte) { writeLines(t, path, f(lines)) }
	}
	tests := []struct {
		name     string
		edit     edit
		firstBad int
		problem  string
	}{
		{"intact", nil, 0, ""},
		{"edited line", rewrite(func(l [][]byte) [][]byte {
			l[3] = bytes.Replace(l[3], []byte(`"n":4`), []byte(`"n":5`), 1)
			return l
		}), 4, "line 4 was edited"},
		{"edited first line", rewrite(func(l [][]byte) [][]byte {
			l[0] = bytes.Replace(l[0], []byte(`"echo"`), []byte(`"rm"`), 1)
			return l
		}), 1, "line 1 was edited"},
		{"edited seq", rewrite(func(l [][]byte) [][]byte {
			l[5] = bytes.Replace(l[5], []byte(`"seq":6`), []byte(`"seq":60`), 1)
			return l
		}), 6, "line 6 was edited"},
		{"edited last line", rewrite(func(l [][]byte) [][]byte {
			l[n-1] = bytes.Replace(l[n-1], []byte(`"n":10`), []byte(`"n":11`), 1)
			return l
		}), n, "does not match the hash its anchor records"},
		{"deleted line", rewrite(func(l [][]byte) [][]byte { return slices.Delete(l, 3, 4) }), 4, "a line was deleted before line 4: seq 4 is missing"},
		{"deleted lines", rewrite(func(l [][]byte) [][]byte { return slices.Delete(l, 3, 6) }), 4, "seq 4 to 6 are missing"},
		{"deleted head", rewrite(func(l [][]byte) [][]byte { return l[1:] }), 1, "a line was deleted before line 1"},
		{"inserted copy", rewrite(func(l [][]byte) [][]byte { return slices.Insert(l, 6, l[2]) }), 7, "line 7 was inserted"},
		{"inserted duplicate", rewrite(func(l [][]byte) [][]byte { return slices.Insert(l, 5, l[4]) }), 6, "line 6 was inserted: it repeats line 5"},
		{"inserted forgery", rewrite(func(l [][]byte) [][]byte { return slices.Insert(l, 4, forge(5, l[3])) }), 5, "line 5 was inserted"},
		{"inserted forgery with bad prev", rewrite(func(l [][]byte) [][]byte { return slices.Insert(l, 4, forge(5, []byte("x"))) }), 5, "line 5 was inserted"},
		{"inserted forgery with high seq", rewrite(func(l [][]byte) [][]byte { return slices.Insert(l, 4, forge(99, []byte("x"))) }), 5, "line 5 was inserted"},
		{"reordered neighbours", rewrite(func(l [][]byte) [][]byte {
			l[3], l[4] = l[4], l[3]
			return l
		}), 4, "line 4 is out of order"},
		{"reordered far", rewrite(func(l [][]byte) [][]byte {
			l[1], l[7] = l[7], l[1]
			return l
		}), 2, "line 2 is out of order"},
		{"truncated tail", rewrite(func(l [][]byte) [][]byte { return l[:7] }), 8, "the tail was cut"},
		{"emptied", rewrite(func(l [][]byte) [][]byte { return nil }), 1, "the tail was cut"},
		{"deleted log", func(t *testing.T, path string, _ [][]byte) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, 1, "the tail was cut"},
		{"rewritten with a consistent chain", func(t *testing.T, path string, _ [][]byte) {
			_, other := writeLog(t, t.TempDir(), n, "forged")
			writeLines(t, path, other)
		}, n, "the log was rewritten"},
		{"rewritten shorter", func(t *testing.T, path string, _ [][]byte) {
			_, other := writeLog(t, t.TempDir(), n-2, "forged")
			writeLines(t, path, other)
		}, n - 1, "the tail was cut"},
		{"lines added past the anchor", func(t *testing.T, path string, l [][]byte) {
			writeLines(t, path, append(l, forge(n+1, l[n-1])))
		}, n + 1, "past the anchor"},
		{"bad JSON", rewrite(func(l [][]byte) [][]byte {
			l[5] = l[5][:len(l[5])-1]
			return l
		}), 6, "line 6: bad JSON"},
		{"blank line", rewrite(func(l [][]byte) [][]byte { return slices.Insert(l, 2, []byte{}) }), 3, "line 3: bad JSON"},
		{"missing seq", rewrite(func(l [][]byte) [][]byte {
			l[2] = bytes.Replace(l[2], []byte(`"seq"`), []byte(`"Xeq"`), 1)
			return l
		}), 3, `line 3: missing "seq"`},
		{"incomplete last line", func(t *testing.T, path string, l [][]byte) {
			writeLines(t, path, l)
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Write(forge(n+1, l[n-1])); err != nil {
				t.Fatal(err)
			}
		}, n + 1, "incomplete"},
		{"missing anchor", func(t *testing.T, path string, _ [][]byte) {
			if err := os.Remove(path + ".anchor"); err != nil {
				t.Fatal(err)
			}
		}, 0, "anchor"},
		{"garbled anchor", func(t *testing.T, path string, _ [][]byte) {
			if err := os.WriteFile(path+".anchor", []byte("{"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, 0, "anchor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, lines := writeLog(t, t.TempDir(), n, "")
			if tt.edit != nil {
				tt.edit(t, path, lines)
			}
			rep, err := Verify(path, "")
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK != (tt.problem == "") || rep.FirstBad != tt.firstBad || !strings.Contains(rep.Problem, tt.problem) {
				t.Errorf("Verify = %+v\nwant FirstBad %d, problem containing %q", rep, tt.firstBad, tt.problem)
			}
		})
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
