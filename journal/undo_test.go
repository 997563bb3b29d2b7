package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// undoCases: each kind of change, made through Before as the seccomp loop
// would, is undone byte for byte and mode for mode.
var undoCases = []struct {
	name  string
	setup func(w *ws)
	run   func(w *ws)
}{
	{"overwrite", func(w *ws) { w.file("a.txt", "old\n", 0o640) }, func(w *ws) { w.write("a.txt", "new\n") }},
	{"write a hundred times", func(w *ws) { w.file("a.txt", "old\n", 0o644) }, func(w *ws) {
		for i := 0; i < 100; i++ {
			w.appendTo("a.txt", "more\n")
		}
	}},
	{"create", func(w *ws) { w.file("keep", "k", 0o644) }, func(w *ws) { w.write("new.txt", "fresh") }},
	{"create in a new directory", nil, func(w *ws) { w.mkdir("d", 0o755); w.mkdir("d/e", 0o700); w.write("d/e/f", "x") }},
	{"truncate", func(w *ws) { w.file("a", "0123456789", 0o600) }, func(w *ws) { w.truncate("a", 3) }},
	{"delete", func(w *ws) { w.file("a", "gone?", 0o755) }, func(w *ws) { w.unlink("a") }},
	{"delete then create again", func(w *ws) { w.file("a", "first", 0o644) }, func(w *ws) {
		w.write("a", "second")
		w.unlink("a")
		w.write("a", "third")
	}},
	{"rename over", func(w *ws) { w.file("a", "A", 0o644); w.file("b", "B", 0o600) }, func(w *ws) { w.rename("a", "b") }},
	{"rename to a new name, then write", func(w *ws) { w.file("a", "A", 0o644) }, func(w *ws) { w.rename("a", "b"); w.write("b", "changed") }},
	{"write, then rename over another", func(w *ws) { w.file("a", "A", 0o644); w.file("b", "B", 0o644) }, func(w *ws) {
		w.write("a", "A2")
		w.rename("a", "b")
		w.write("b", "B3")
	}},
	{"editor's temp file renamed over", func(w *ws) { w.file("main.go", "package main\n", 0o644) }, func(w *ws) {
		w.write(".main.go.swp", "package main\n\nfunc main() {}\n")
		w.rename(".main.go.swp", "main.go")
	}},
	{"directory rename", func(w *ws) {
		w.file("src/a.go", "a", 0o644)
		w.file("src/sub/b.go", "b", 0o600)
	}, func(w *ws) {
		w.rename("src", "lib")
		w.write("lib/sub/b.go", "b2")
		w.write("lib/c.go", "c")
	}},
	{"directory rename over an empty directory", func(w *ws) {
		w.file("src/a.go", "a", 0o644)
		w.must(os.Mkdir(w.p("empty"), 0o711))
	}, func(w *ws) { w.rename("src", "empty") }},
	{"mkdir and rmdir", func(w *ws) { w.must(os.Mkdir(w.p("old"), 0o750)) }, func(w *ws) {
		w.rmdir("old")
		w.mkdir("new", 0o755)
	}},
	{"chmod", func(w *ws) {
		w.file("script.sh", "#!/bin/sh\n", 0o755)
		w.must(os.Mkdir(w.p("d"), 0o755))
	}, func(w *ws) {
		w.chmod("script.sh", 0o600)
		w.chmod("d", 0o700)
		w.chmod("script.sh", 0o777)
	}},
	{"chmod, then write", func(w *ws) { w.file("a", "A", 0o644) }, func(w *ws) {
		w.chmod("a", 0o600)
		w.write("a", "B")
	}},
	{"symlink replaced by a file", func(w *ws) {
		w.file("target", "T", 0o644)
		w.must(os.Symlink("target", w.p("link")))
	}, func(w *ws) {
		w.unlink("link")
		w.write("link", "now a file")
	}},
	{"file renamed over a symlink", func(w *ws) {
		w.file("f", "F", 0o644)
		w.must(os.Symlink("elsewhere", w.p("link")))
	}, func(w *ws) { w.rename("f", "link") }},
	{"symlink made", nil, func(w *ws) { w.symlink("../x", "l") }},
	{"hard links written in place", func(w *ws) {
		w.file("a", "shared", 0o644)
		w.must(os.Link(w.p("a"), w.p("b")))
	}, func(w *ws) { w.write("a", "changed through a") }},
	{"hard link renamed over", func(w *ws) {
		w.file("a", "shared", 0o644)
		w.must(os.Link(w.p("a"), w.p("b")))
		w.file("c", "other", 0o644)
	}, func(w *ws) { w.rename("c", "a") }},
	{"hard link made, then written", func(w *ws) { w.file("a", "one", 0o644) }, func(w *ws) {
		w.link("a", "b")
		w.write("b", "two")
	}},
	{"file made with O_TMPFILE and linked", nil, func(w *ws) {
		w.before(Write, ".", "")
		fd, err := unix.Open(w.dir, unix.O_TMPFILE|unix.O_WRONLY, 0o644)
		w.must(err)
		defer unix.Close(fd)
		_, err = unix.Write(fd, []byte("anonymous"))
		w.must(err)
		if err := w.r.Before(Link, "", w.p("named")); err != nil {
			w.t.Fatal(err)
		}
		w.must(unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), unix.AT_FDCWD, w.p("named"), unix.AT_SYMLINK_FOLLOW))
	}},
	{"exchange", func(w *ws) { w.file("a", "A", 0o644); w.file("d/x", "X", 0o600) }, func(w *ws) {
		w.exchange("a", "d")
		w.write("a/x", "X2")
	}},
	{"rm -r", func(w *ws) {
		w.file("t/a", "a", 0o644)
		w.file("t/b/c", "c", 0o600)
		w.must(os.Symlink("a", w.p("t/l")))
		w.must(os.Chmod(w.p("t/b"), 0o700))
	}, func(w *ws) { w.rmrf("t") }},
	{"moved out of the workspace", func(w *ws) {
		w.file("t/a", "a", 0o644)
		w.file("t/b/c", "c", 0o600)
	}, func(w *ws) {
		out := filepath.Join(filepath.Dir(w.dir), "outside")
		w.before(Rename, "t", out)
		w.must(os.Rename(w.p("t"), out))
	}},
	{"moved in from outside", func(w *ws) {
		w.file("b", "B", 0o644)
		w.must(os.MkdirAll(filepath.Join(filepath.Dir(w.dir), "outside"), 0o755))
		w.must(os.WriteFile(filepath.Join(filepath.Dir(w.dir), "outside", "in"), []byte("IN"), 0o644))
	}, func(w *ws) {
		out := filepath.Join(filepath.Dir(w.dir), "outside", "in")
		w.before(Rename, out, "b")
		w.must(os.Rename(out, w.p("b")))
		w.write("b", "changed after coming in")
	}},
	{"moved into an excluded directory", func(w *ws) {
		w.file("a", "A", 0o644)
		w.must(os.Mkdir(w.p("node_modules"), 0o755))
	}, func(w *ws) { w.rename("a", "node_modules/a") }},
}

func TestUndoEveryKind(t *testing.T) {
	for _, c := range undoCases {
		t.Run(c.name, func(t *testing.T) {
			w := newWS(t, Options{Exclude: DefaultExclude})
			if c.setup != nil {
				c.setup(w)
			}
			want := snapshot(t, w.dir)
			r := w.begin()
			c.run(w)
			sum := w.finish()
			if !sum.Changed {
				t.Fatal("the run recorded nothing")
			}
			rep, err := w.j.Undo([]string{r.ID()}, UndoOptions{})
			if err != nil {
				t.Fatalf("undo: %v\n%+v", err, rep)
			}
			if d := diffSnapshots(want, snapshot(t, w.dir)); d != "" {
				t.Errorf("after undo:\n%s\nsteps: %+v", d, rep.Steps)
			}
		})
	}
}

// TestUndoOfUndo: an undo is a run of its own; undoing it brings the
// run's changes back.
func TestUndoOfUndo(t *testing.T) {
	for _, c := range undoCases {
		if strings.Contains(c.name, "outside") {
			continue // the tree left moves back outside the workspace, where nothing records it
		}
		t.Run(c.name, func(t *testing.T) {
			w := newWS(t, Options{Exclude: DefaultExclude})
			if c.setup != nil {
				c.setup(w)
			}
			r := w.begin()
			c.run(w)
			w.finish()
			after := snapshot(t, w.dir)
			rep, err := w.j.Undo([]string{r.ID()}, UndoOptions{Info: RunInfo{Argv: []string{"mnemos", "undo"}}})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.UndoRuns) != 1 {
				t.Fatalf("the undo was not recorded as a run: %+v", rep)
			}
			if _, err := w.j.Undo(rep.UndoRuns, UndoOptions{}); err != nil {
				t.Fatal(err)
			}
			if d := diffSnapshots(without(after, ".mnemos-undo-"), without(snapshot(t, w.dir), ".mnemos-undo-")); d != "" {
				t.Errorf("after undoing the undo:\n%s", d)
			}
		})
	}
}

func without(m map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if !strings.HasPrefix(filepath.Base(k), prefix) {
			out[k] = v
		}
	}
	return out
}

// TestWriteKeptOnce: a file written a hundred times is copied once.
func TestWriteKeptOnce(t *testing.T) {
	w := newWS(t, Options{})
	w.file("a", strings.Repeat("x", 1000), 0o644)
	w.begin()
	for i := 0; i < 100; i++ {
		w.appendTo("a", "y")
	}
	sum := w.finish()
	if sum.Entries != 1 || sum.Kept != 1000 {
		t.Errorf("entries %d, kept %d; want 1 entry and 1000 bytes", sum.Entries, sum.Kept)
	}
}

// TestExcludedNotJournaled: writes below node_modules or outside the
// workspace are let through without a record.
func TestExcludedNotJournaled(t *testing.T) {
	w := newWS(t, Options{Exclude: DefaultExclude})
	w.must(os.MkdirAll(w.p("node_modules/x"), 0o755))
	w.begin()
	w.write("node_modules/x/index.js", "x")
	w.before(Write, filepath.Join(filepath.Dir(w.dir), "elsewhere"), "")
	w.before(Mkdir, "target", "")
	if sum := w.finish(); sum.Changed {
		t.Errorf("recorded %d entries", sum.Entries)
	}
	runs, err := w.j.Runs(Filter{})
	if err != nil || len(runs) != 0 {
		t.Errorf("runs %v, %v; want none", runs, err)
	}
}

// TestRmRfStar: sh -c 'rm -rf *' and then rm -rf .git (what less's !
// ran in the issue) delete tracked, untracked and .git files; undo puts
// every one back.
func TestRmRfStar(t *testing.T) {
	w := newWS(t, Options{Exclude: DefaultExclude})
	w.file(".git/HEAD", "ref: refs/heads/main\n", 0o644)
	w.file(".git/config", "[core]\n\tbare = false\n", 0o644)
	w.file(".git/objects/ab/cdef", "\x78\x01blob", 0o444)
	w.file(".git/refs/heads/main", "0123abcd\n", 0o644)
	w.file("calc.go", "package calc\n", 0o644)
	w.file("calc_test.go", "package calc\n", 0o644)
	w.file("notes.txt", "untracked, never committed\n", 0o600)
	w.file("cmd/calc/main.go", "package main\n", 0o644)
	w.file(".env", "TOKEN=1\n", 0o600)
	w.must(os.Symlink("calc.go", w.p("link.go")))
	w.must(os.MkdirAll(w.p("node_modules/left"), 0o755))
	want := snapshot(t, w.dir)
	r := w.begin()
	ents, err := os.ReadDir(w.dir)
	w.must(err)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") && e.Name() != "node_modules" {
			w.rmrf(e.Name())
		}
	}
	w.rmrf(".git")
	w.finish()
	if _, err := os.Stat(w.p("calc.go")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the files were not deleted")
	}
	changes, err := w.j.Changes(r.ID())
	w.must(err)
	deleted := 0
	for _, c := range changes {
		if c.Op == OpDeleted && c.Type == TypeFile {
			deleted++
			if !c.Restorable {
				t.Errorf("%s is not restorable: %s", c.Path, c.Why)
			}
		}
	}
	if deleted != 8 {
		t.Errorf("%d files listed deleted, want 8: %+v", deleted, changes)
	}
	if _, err := w.j.Undo([]string{r.ID()}, UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffSnapshots(want, snapshot(t, w.dir)); d != "" {
		t.Errorf("after undo:\n%s", d)
	}
}
