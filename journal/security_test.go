package journal

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestSecurityDirMovedToExcludedNameIsKept: `mv src target && rm -rf
// target` moves work below a name the journal does not keep, then
// deletes it there. The move must keep the tree as if deleted, so that
// undo brings it back.
func TestSecurityDirMovedToExcludedNameIsKept(t *testing.T) {
	for _, tc := range []struct {
		name string
		prep func(w *ws)
		move func(w *ws)
	}{
		{"rename to a new name", nil, func(w *ws) { w.rename("src", "target") }},
		{"rename over an empty directory of that name", func(w *ws) { w.must(os.Mkdir(w.p("target"), 0o755)) },
			func(w *ws) { w.rename("src", "target") }},
		{"rename below the workspace", func(w *ws) { w.must(os.Mkdir(w.p("lib"), 0o755)) },
			func(w *ws) { w.rename("src", "lib/node_modules") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWS(t, Options{Exclude: DefaultExclude})
			w.file("src/main.go", "package main // uncommitted\n", 0o644)
			w.file("src/sub/util.go", "package sub\n", 0o600)
			if tc.prep != nil {
				tc.prep(w)
			}
			want := snapshot(t, w.dir)
			r := w.begin()
			tc.move(w)
			// Below an excluded name: the watch hands these over, the
			// journal lets them through unrecorded.
			moved := "target"
			if _, err := os.Lstat(w.p("lib/node_modules")); err == nil {
				moved = "lib/node_modules"
			}
			w.rmrf(moved)
			w.finish()
			if _, err := w.j.Undo([]string{r.ID()}, UndoOptions{}); err != nil {
				t.Logf("undo: %v", err)
			}
			got := snapshot(t, w.dir)
			delete(want, "target") // an empty directory the journal does not keep
			if d := diffSnapshots(want, got); d != "" {
				t.Errorf("after undo:\n%s", d)
			}
		})
	}
}

// TestSecurityLinkToExcludedNameRefused: a hard link from a kept file to
// a name the journal does not keep (below node_modules, dist...) would
// let a later run change the file through that name unrecorded. The link
// fails as across devices, as it would to another file system.
func TestSecurityLinkToExcludedNameRefused(t *testing.T) {
	w := newWS(t, Options{Exclude: DefaultExclude})
	w.file("notes.txt", "mine\n", 0o644)
	w.must(os.Mkdir(w.p("dist"), 0o755))
	w.begin()
	err := w.r.Before(Link, w.p("notes.txt"), w.p("dist/n"))
	if !errors.Is(err, syscall.EXDEV) {
		t.Errorf("a link of a kept file into dist: %v, want EXDEV", err)
	}
	// The other way, and within what is kept, links are made as before.
	w.file("dist/app.js", "built", 0o644)
	w.link("dist/app.js", "app.js")
	w.link("notes.txt", "notes2.txt")
	w.finish()
}

// TestSecurityCallsThatChangeNothingAreNotLogged: the log is not counted
// in the quota, so a call that will change nothing (an unlink of a name
// that does not exist, a mkdir of one that does) must not add to it: a
// command making millions of them would fill the disk with the log and
// make every listing of the run slow.
func TestSecurityCallsThatChangeNothingAreNotLogged(t *testing.T) {
	w := newWS(t, Options{})
	w.must(os.Mkdir(w.p("d"), 0o755))
	w.file("f", "x", 0o644)
	w.begin()
	for i := 0; i < 1000; i++ {
		n := "missing" + strings.Repeat("x", i%7) + string(rune('a'+i%26))
		w.before(Unlink, n, "")
		w.before(Rmdir, n, "")
		w.before(Chmod, n, "")
		w.before(Mkdir, "d", "")
		w.before(Symlink, "f", "")
		w.before(Mknod, "d", "")
	}
	if sum := w.finish(); sum.Changed || sum.Entries != 0 {
		t.Errorf("%d entries recorded for calls that change nothing", sum.Entries)
	}
}
