package journal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What git and sed do, call by call, as the sandbox's watch reports it.

// gitRefreshIndex is git status: the index written to index.lock and
// renamed over the index.
func gitRefreshIndex(w *ws) {
	w.t.Helper()
	data, err := os.ReadFile(w.p(".git/index"))
	w.must(err)
	w.write(".git/index.lock", string(data)+"+stat")
	w.rename(".git/index.lock", ".git/index")
}

// gitCheckout is git checkout -- FILE: the lock taken, the file unlinked
// and made again with the committed content, the index updated.
func gitCheckout(w *ws, file, committed string) {
	w.t.Helper()
	w.write(".git/index.lock", "idx-after-checkout")
	w.unlink(file)
	w.write(file, committed)
	w.rename(".git/index.lock", ".git/index")
}

// sedI is sed -i: a temp file beside the file, renamed over it.
func sedI(w *ws, file, content string) {
	w.t.Helper()
	tmp := filepath.Join(filepath.Dir(file), "sedX"+filepath.Base(file))
	w.write(tmp, content)
	w.rename(tmp, file)
}

func changeLines(cs []Change, ws string) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Op+" "+relTo(ws, c.Path))
	}
	return strings.Join(out, "|")
}

func pathLines(rs []PathResult) string {
	var out []string
	for _, r := range rs {
		s := r.Op + " " + r.Rel
		if r.FromRel != "" {
			s += " from " + r.FromRel
		}
		if r.Err != "" {
			s += " (" + r.Err + ")"
		}
		out = append(out, s)
	}
	return strings.Join(out, "|")
}

// TestLastPassesOverGitIndexAndNoChange: a git status (only the index
// rewritten) and an rm -f of nothing are not what undo --last takes
// back; the git checkout before them is. Once it is undone, --last says
// there is nothing left rather than pick a run with nothing to undo.
func TestLastPassesOverGitIndexAndNoChange(t *testing.T) {
	w := newWS(t, Options{})
	w.file(".git/index", "idx0", 0o644)
	w.file("main.go", "package main\n// uncommitted edit\n", 0o644)
	co := w.begin().ID()
	gitCheckout(w, "main.go", "package main\n")
	w.finish()
	st := w.begin().ID()
	gitRefreshIndex(w)
	w.finish()
	// rm -f nothere.txt: nothing recorded, no run listed.
	nothing := w.begin().ID()
	w.before(Unlink, "nothere.txt", "")
	w.finish()
	// A lock file made and removed: no net change.
	nop := w.begin().ID()
	w.write("tmp.lock", "x")
	w.unlink("tmp.lock")
	w.finish()
	if _, err := w.j.Find(nothing); !errors.Is(err, ErrUnknownRun) {
		t.Errorf("rm -f of nothing is a run: %v", err)
	}

	last, passed, err := w.j.Last(Filter{Workspace: w.dir})
	if err != nil || last.ID != co {
		t.Fatalf("Last = %s, %v; want the checkout %s", last.ID, err, co)
	}
	if len(passed) != 2 || passed[0].Run.ID != nop || passed[0].Why != PassedNoChange || passed[1].Run.ID != st || passed[1].Why != PassedGitIndex {
		t.Errorf("passed over %+v", passed)
	}
	rep, err := w.j.Undo([]string{last.ID}, UndoOptions{})
	if err != nil {
		t.Fatalf("undo --last: %v", err)
	}
	if data, _ := os.ReadFile(w.p("main.go")); string(data) != "package main\n// uncommitted edit\n" {
		t.Errorf("main.go = %q", data)
	}
	if _, _, err := w.j.Last(Filter{Workspace: w.dir}); !errors.Is(err, ErrUnknownRun) || !strings.Contains(err.Error(), "every run that changed it was undone") {
		t.Errorf("Last after the undo: %v", err)
	}
	// The undo's own run is not --last either: undoing again is refused,
	// never a loop on the same run.
	if len(rep.UndoRuns) != 1 {
		t.Fatalf("undo runs %v", rep.UndoRuns)
	}
}

// TestUndoRestoresRefreshedIndex: a git status the person ran after the
// run rewrote .git/index; the undo restores it anyway, says so, and its
// own run keeps the index it replaced.
func TestUndoRestoresRefreshedIndex(t *testing.T) {
	w := newWS(t, Options{})
	w.file(".git/index", "idx0", 0o644)
	w.file("main.go", "edited\n", 0o644)
	co := w.begin().ID()
	gitCheckout(w, "main.go", "committed\n")
	w.finish()
	// git status outside mnemos.
	w.must(os.WriteFile(w.p(".git/index"), []byte("refreshed"), 0o644))
	rep, err := w.j.Undo([]string{co}, UndoOptions{})
	if err != nil {
		t.Fatalf("undo after git status: %v", err)
	}
	if len(rep.Refreshed) != 1 || rep.Refreshed[0] != w.p(".git/index") || len(rep.Forced) != 0 {
		t.Errorf("refreshed %v, forced %v", rep.Refreshed, rep.Forced)
	}
	if data, _ := os.ReadFile(w.p(".git/index")); string(data) != "idx0" {
		t.Errorf(".git/index = %q, want it as before the run", data)
	}
	if data, _ := os.ReadFile(w.p("main.go")); string(data) != "edited\n" {
		t.Errorf("main.go = %q", data)
	}
	// The refreshed index is kept: undoing the undo brings it back.
	if _, err := w.j.Undo(rep.UndoRuns, UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(w.p(".git/index")); string(data) != "refreshed" {
		t.Errorf(".git/index after undoing the undo = %q", data)
	}
}

// TestGitCheckoutIsChanged: a file git replaced (unlink, then create) is
// one changed path, and its diff shows what was lost; once the run is
// undone, the diff says so and shows the run's result as the undo kept
// it, not the file now.
func TestGitCheckoutIsChanged(t *testing.T) {
	w := newWS(t, Options{})
	w.file(".git/index", "idx0", 0o644)
	w.file("main.go", "package main\n// uncommitted edit\n", 0o644)
	w.file("same.go", "package same\n", 0o644)
	co := w.begin().ID()
	gitCheckout(w, "main.go", "package main\n")
	w.unlink("same.go") // checked out again as it was
	w.write("same.go", "package same\n")
	w.finish()
	cs, err := w.j.Changes(co)
	w.must(err)
	if got, want := changeLines(cs, w.dir), "changed .git/index|changed main.go"; got != want {
		t.Errorf("changes %s, want %s", got, want)
	}
	d, err := w.j.Diff(co)
	w.must(err)
	if !strings.Contains(d, "-// uncommitted edit\n") || strings.Contains(d, "/dev/null") {
		t.Errorf("diff does not show the lost line against the new file:\n%s", d)
	}
	if _, err := w.j.Undo([]string{co}, UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	d, err = w.j.Diff(co)
	w.must(err)
	if !strings.Contains(d, "was undone by run") || !strings.Contains(d, "-// uncommitted edit\n") || strings.Contains(d, "changed again after the run") {
		t.Errorf("diff of the undone run:\n%s", d)
	}
}

// TestUndoNewestFirst: two runs edit one file; undoing the newer, then
// the older, needs no force. A person's edit in between is still refused.
func TestUndoNewestFirst(t *testing.T) {
	w := newWS(t, Options{})
	w.file("f.txt", "aaa\n", 0o644)
	a := w.begin().ID()
	sedI(w, "f.txt", "baa\n")
	w.finish()
	b := w.begin().ID()
	sedI(w, "f.txt", "caa\n")
	w.finish()
	// The older alone is refused, naming the run that changed it since.
	_, err := w.j.Undo([]string{a}, UndoOptions{DryRun: true})
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || !strings.Contains(ce.Conflicts[0].Why, "changed by run "+b) {
		t.Fatalf("undo of the older first: %v", err)
	}
	if _, err := w.j.Undo([]string{b}, UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.j.Undo([]string{a}, UndoOptions{}); err != nil {
		t.Fatalf("undo of the older after the newer: %v", err)
	}
	if data, _ := os.ReadFile(w.p("f.txt")); string(data) != "aaa\n" {
		t.Errorf("f.txt = %q", data)
	}

	// Again, with the person's edit after the newer was undone.
	w.file("g.txt", "aaa\n", 0o644)
	a = w.begin().ID()
	sedI(w, "g.txt", "baa\n")
	w.finish()
	b = w.begin().ID()
	sedI(w, "g.txt", "caa\n")
	w.finish()
	if _, err := w.j.Undo([]string{b}, UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	w.must(os.WriteFile(w.p("g.txt"), []byte("person\n"), 0o644))
	if _, err := w.j.Undo([]string{a}, UndoOptions{}); !errors.As(err, &ce) {
		t.Errorf("undo over the person's edit: %v", err)
	}
}

// TestFailedUndoIsRetried: an undo a step of which failed does not mark
// the run undone; once the cause is gone, undoing again does the rest.
func TestFailedUndoIsRetried(t *testing.T) {
	w := newWS(t, Options{})
	w.file("a.txt", "A\n", 0o644)
	w.file("sub/k.txt", "K\n", 0o644)
	r := w.begin().ID()
	w.unlink("a.txt")
	w.unlink("sub/k.txt")
	w.finish()
	w.must(os.Rename(w.p("sub"), w.p("moved")))
	// The dry run says what will fail, and why.
	dry, err := w.j.Undo([]string{r}, UndoOptions{DryRun: true})
	w.must(err)
	if got, want := pathLines(dry.Paths), "restore a.txt|restore sub/k.txt (the directory sub is not there (moved or removed since the run?))"; got != want {
		t.Errorf("dry run %s\nwant %s", got, want)
	}
	rep, err := w.j.Undo([]string{r}, UndoOptions{})
	var fe *UndoFailedError
	if !errors.As(err, &fe) || !fe.Retry || len(fe.Paths) != 1 || fe.Paths[0].Rel != "sub/k.txt" {
		t.Fatalf("undo with sub/ gone: %v %+v", err, rep.Paths)
	}
	if got := pathLines(rep.Paths); got != "restore a.txt|restore sub/k.txt (the directory sub is not there (moved or removed since the run?))" {
		t.Errorf("paths %s", got)
	}
	if rec, err := w.j.Find(r); err != nil || rec.UndoneBy != "" {
		t.Fatalf("the run is marked undone by a failed undo: %+v %v", rec, err)
	}
	if last, _, err := w.j.Last(Filter{Workspace: w.dir}); err != nil || last.ID != r {
		t.Errorf("Last after a failed undo = %s, %v; want %s", last.ID, err, r)
	}
	w.must(os.Rename(w.p("moved"), w.p("sub")))
	if _, err := w.j.Undo([]string{r}, UndoOptions{}); err != nil {
		t.Fatalf("retry: %v", err)
	}
	for f, want := range map[string]string{"a.txt": "A\n", "sub/k.txt": "K\n"} {
		if data, _ := os.ReadFile(w.p(f)); string(data) != want {
			t.Errorf("%s = %q", f, data)
		}
	}
	if rec, _ := w.j.Find(r); rec.UndoneBy == "" {
		t.Error("the run is not undone after the retry")
	}
}

// TestUndoReportsNetPaths: an undo reports the paths the run changed, one
// each, not the temp and lock files its steps go through; a dry run
// reports the same; the count agrees with Changes.
func TestUndoReportsNetPaths(t *testing.T) {
	w := newWS(t, Options{})
	w.file(".git/index", "idx0", 0o644)
	w.file("a.go", "a\n", 0o644)
	w.file("b.go", "b\n", 0o644)
	w.file("notes.txt", "n\n", 0o644)
	w.must(os.MkdirAll(w.p(".git/objects"), 0o755))
	r := w.begin().ID()
	sedI(w, "a.go", "A\n")
	sedI(w, "b.go", "b\n") // rewritten, the same content
	gitCheckout(w, "notes.txt", "N\n")
	w.write("new.txt", "new\n")
	w.mkdir(".git/objects/ab", 0o755)
	w.write(".git/objects/ab/tmp_obj_x", "obj")
	w.rename(".git/objects/ab/tmp_obj_x", ".git/objects/ab/cdef")
	w.finish()
	cs, err := w.j.Changes(r)
	w.must(err)
	if got := changeLines(cs, w.dir); got != "changed .git/index|added .git/objects/ab|added .git/objects/ab/cdef|changed a.go|added new.txt|changed notes.txt" {
		t.Errorf("changes %s", got)
	}
	dry, err := w.j.Undo([]string{r}, UndoOptions{DryRun: true})
	w.must(err)
	rep, err := w.j.Undo([]string{r}, UndoOptions{})
	w.must(err)
	wantPaths := "restore .git/index|remove .git/objects/ab|remove .git/objects/ab/cdef|restore a.go|remove new.txt|restore notes.txt"
	if got := pathLines(rep.Paths); got != wantPaths {
		t.Errorf("undo paths %s\nwant %s", got, wantPaths)
	}
	if got := pathLines(dry.Paths); got != wantPaths {
		t.Errorf("dry run paths %s\nwant %s", got, wantPaths)
	}
	if len(rep.Restored) != len(cs) {
		t.Errorf("restored %d paths, changes lists %d", len(rep.Restored), len(cs))
	}
}

// TestFailedCreateIsNoChange: git opens objects/0c/tmp_obj_X before the
// directory 0c exists; the open fails, git makes 0c and writes another
// temp file, links it to the object's name and removes it. Only the
// directory and the object were added.
func TestFailedCreateIsNoChange(t *testing.T) {
	w := newWS(t, Options{})
	w.must(os.MkdirAll(w.p(".git/objects"), 0o755))
	r := w.begin().ID()
	w.before(Write, ".git/objects/0c/tmp_obj_A", "") // ENOENT
	w.mkdir(".git/objects/0c", 0o755)
	w.write(".git/objects/0c/tmp_obj_B", "blob")
	w.link(".git/objects/0c/tmp_obj_B", ".git/objects/0c/f270")
	w.unlink(".git/objects/0c/tmp_obj_B")
	w.finish()
	cs, err := w.j.Changes(r)
	w.must(err)
	if got := changeLines(cs, w.dir); got != "added .git/objects/0c|added .git/objects/0c/f270" {
		t.Errorf("changes %s", got)
	}
}

// TestExcludedDirectoryNoted: deleting below an excluded directory keeps
// nothing of it, but the run records it once a directory: Changes lists
// it and the summary's NotKept carries it.
func TestExcludedDirectoryNoted(t *testing.T) {
	w := newWS(t, Options{Exclude: []string{"dist", "node_modules"}})
	w.file("dist/HOTFIX.md", "by hand\n", 0o644)
	w.file("dist/js/app.js", "built\n", 0o644)
	w.file("node_modules/x/index.js", "x\n", 0o644)
	w.file("src/a.js", "a\n", 0o644)
	r := w.begin().ID()
	w.rmrf("dist")
	w.rmrf("node_modules")
	w.rmrf("src")
	sum := w.finish()
	if len(sum.NotKept) != 2 || sum.NotKept[0].Path != w.p("dist") || sum.NotKept[0].Why != NotKeptExcluded || sum.NotKept[1].Path != w.p("node_modules") {
		t.Errorf("not kept %+v", sum.NotKept)
	}
	cs, err := w.j.Changes(r)
	w.must(err)
	if got := changeLines(cs, w.dir); got != "not kept dist|not kept node_modules|deleted src|deleted src/a.js" {
		t.Errorf("changes %s", got)
	}
	if _, err := os.Stat(filepath.Join(w.j.Dir(), "objects")); err == nil {
		ents, _ := os.ReadDir(filepath.Join(w.j.Dir(), "objects"))
		if len(ents) != 1 { // a.js only
			t.Errorf("the store holds %d object directories: the excluded content was copied", len(ents))
		}
	}
	rep, err := w.j.Undo([]string{r}, UndoOptions{})
	if err != nil {
		t.Fatalf("undo: %v", err)
	}
	if got := pathLines(rep.Paths); !strings.HasPrefix(got, "not kept dist (excluded directory") || !strings.HasSuffix(got, "restore src|restore src/a.js") {
		t.Errorf("undo paths %s", got)
	}
	// A run that changed only an excluded directory is nothing to undo.
	w.file("dist/b.js", "b\n", 0o644)
	only := w.begin().ID()
	w.unlink("dist/b.js")
	w.finish()
	if last, passed, _ := w.j.Last(Filter{Workspace: w.dir}); last.ID == only || len(passed) == 0 || passed[0].Why != PassedExcluded {
		t.Errorf("Last = %s, passed %+v", last.ID, passed)
	}
}

// TestLastPassesOverWhatWasNotKept: a run whose only change the journal
// could not keep (too big) gives undo nothing to do: --last passes over
// it rather than fail on it again and again.
func TestLastPassesOverWhatWasNotKept(t *testing.T) {
	w := newWS(t, Options{MaxFile: 100})
	w.file("small", "s", 0o644)
	w.file("big", strings.Repeat("b", 1000), 0o644)
	small := w.begin().ID()
	w.unlink("small")
	w.finish()
	w.begin()
	w.unlink("big")
	w.finish()
	last, passed, err := w.j.Last(Filter{Workspace: w.dir})
	if err != nil || last.ID != small || len(passed) != 1 || passed[0].Why != PassedNotKept {
		t.Errorf("Last = %s, %v, passed %+v", last.ID, err, passed)
	}
}

// TestFindByRandomEnd: a run is found by the random end of its id alone.
func TestFindByRandomEnd(t *testing.T) {
	w := newWS(t, Options{})
	r := w.begin().ID()
	w.write("a", "x")
	w.finish()
	end := r[strings.LastIndexByte(r, '-')+1:]
	for _, id := range []string{end, end[:4], r[:10]} {
		if got, err := w.j.Find(id); err != nil || got.ID != r {
			t.Errorf("Find(%s) = %s, %v", id, got.ID, err)
		}
	}
	if _, err := w.j.Find(end[:3]); err == nil && !strings.HasPrefix(r, end[:3]) {
		t.Errorf("Find(%s): three characters of the end matched", end[:3])
	}
}
