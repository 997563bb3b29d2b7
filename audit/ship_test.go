package audit

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

func TestAfter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := Open(path, Options{})
	if got, err := l.After(0, 0); got != nil || err != nil {
		t.Fatalf("missing log: %v %v", got, err)
	}
	for i := range 10 {
		if err := l.Append(ctx, "policy.decision", slog.Int("i", i)); err != nil {
			t.Fatal(err)
		}
	}
	all, err := l.After(0, 0)
	if err != nil || len(all) != 10 {
		t.Fatalf("After(0) = %d lines, %v", len(all), err)
	}
	if all[0].Seq != 1 || all[0].Prev != EmptyHash || all[9].Seq != 10 || all[0].Kind != "policy.decision" || all[0].Time.IsZero() {
		t.Errorf("lines %+v ... %+v", all[0], all[9])
	}
	for i := 1; i < 10; i++ {
		if all[i].Prev != all[i-1].Hash {
			t.Errorf("line %d prev %s, line %d hash %s", i+1, all[i].Prev, i, all[i-1].Hash)
		}
	}
	if tail, _ := l.After(7, 0); len(tail) != 3 || tail[0].Seq != 8 || tail[0].Prev != all[6].Hash {
		t.Errorf("After(7) = %+v", tail)
	}
	if part, _ := l.After(3, 2); len(part) != 2 || part[0].Seq != 4 || part[1].Seq != 5 {
		t.Errorf("After(3, 2) = %+v", part)
	}
	if none, err := l.After(10, 0); none != nil || err != nil {
		t.Errorf("After(10) = %v %v", none, err)
	}
	if _, err := l.After(12, 0); !errors.Is(err, ErrIntegrity) {
		t.Errorf("After(12) on a log of 10: %v", err)
	}
	// A line taken out breaks the numbering.
	b, _ := os.ReadFile(path)
	lines := splitLines(b)
	cut := append(append([]byte{}, joinLines(lines[:5])...), joinLines(lines[6:])...)
	if err := os.WriteFile(path, cut, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := l.After(3, 0); !errors.Is(err, ErrIntegrity) {
		t.Errorf("After on a log with a line cut out: %v", err)
	}
	if ln, err := ParseLine(lines[0]); err != nil || ln.Hash != all[0].Hash || ln.Seq != 1 {
		t.Errorf("ParseLine = %+v, %v", ln, err)
	}
	if _, err := ParseLine([]byte(`{"msg":"x"}`)); err == nil {
		t.Error("ParseLine accepted a line without the chain's fields")
	}
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	start := 0
	for i, c := range b {
		if c == '\n' {
			out = append(out, b[start:i])
			start = i + 1
		}
	}
	return out
}

func joinLines(ls [][]byte) []byte {
	var out []byte
	for _, l := range ls {
		out = append(append(out, l...), '\n')
	}
	return out
}
