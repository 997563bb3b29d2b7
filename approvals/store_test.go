package approvals

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 4, 27, 18, 0, 0, 0, time.UTC)

func openTest(t testing.TB, path string) *Store {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "state", "mnemos.db")
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestOpenModesAndReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "state")
	path := filepath.Join(dir, "mnemos.db")
	s := openTest(t, path)
	if _, err := s.CreatePending(context.Background(), newReq("k"), t0, 0); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{
		dir:           0o700 | os.ModeDir,
		path:          0o600,
		path + "-wal": 0o600,
	} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}
	var v int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
		t.Errorf("user_version = %d, %v; want %d", v, err, SchemaVersion)
	}
	var mode string
	if err := s.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v", mode, err)
	}
	var fk int
	if err := s.db.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys = %d, %v", fk, err)
	}
	// Reopening an existing database is idempotent and keeps the data.
	s2 := openTest(t, path)
	if l, err := s2.List(context.Background(), ListOptions{}, t0); err != nil || len(l) != 1 {
		t.Errorf("after reopen: %d requests, %v", len(l), err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()

	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database at all ", 400)), 0o600); err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(dir, "newer.db")
	s := openTest(t, newer)
	if _, err := s.db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	fileAsDir := filepath.Join(dir, "file")
	if err := os.WriteFile(fileAsDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	for name, tc := range map[string]struct{ path, want string }{
		"corrupt":      {garbage, "not a database"},
		"newer schema": {newer, "newer"},
		"parent file":  {filepath.Join(fileAsDir, "x.db"), "not a directory"},
		"empty path":   {"", "empty path"},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Open(ctx, tc.path)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "open state database") {
				t.Errorf("error %q, want it to mention %q", err, tc.want)
			}
		})
	}
}

// 32 handles (one connection each, as 32 processes would have) write at
// once; immediate transactions and the busy timeout lose none.
func TestConcurrentHandlesLoseNoWrites(t *testing.T) {
	const workers, each = 32, 4
	path := filepath.Join(t.TempDir(), "mnemos.db")
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, workers*each+workers)
	for w := range workers {
		wg.Go(func() {
			s, err := Open(ctx, path)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for i := range each {
				if _, err := s.CreatePending(ctx, newReq("k"), t0.Add(time.Duration(w*each+i)*time.Millisecond), 0); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("lost write: %v", err)
	}
	s := openTest(t, path)
	n, err := s.Recurrence(ctx, "cli", "alice", "fs:write:/proj/**")
	if err != nil || n != workers*each {
		t.Errorf("stored %d requests (%v), want %d", n, err, workers*each)
	}
}
