package journal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecurityUndoStaysInTheWorkspace: a later run replaces a directory
// with a link to somewhere else (the home directory); undoing an earlier
// run that deleted a file in that directory must not write through the
// link. Without --force it refuses; with it, the step fails and says why.
func TestSecurityUndoStaysInTheWorkspace(t *testing.T) {
	w := newWS(t, Options{})
	home := filepath.Join(filepath.Dir(w.dir), "home")
	w.must(os.Mkdir(home, 0o755))
	w.file("src/.bash_profile", "echo owned\n", 0o644)
	w.file("src/keep.go", "package keep\n", 0o644)
	first := w.begin()
	w.unlink("src/.bash_profile")
	w.write("src/keep.go", "changed\n")
	w.finish()
	w.begin()
	w.rename("src", "src.old")
	w.symlink(home, "src")
	w.finish()
	_, err := w.j.Undo([]string{first.ID()}, UndoOptions{})
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Errorf("undo through a link: %v, want a conflict", err)
	}
	rep, err := w.j.Undo([]string{first.ID()}, UndoOptions{Force: true})
	if err == nil || len(rep.Failed) == 0 {
		t.Errorf("forced undo through a link: %v, failed %+v; want failed steps", err, rep.Failed)
	}
	ents, _ := os.ReadDir(home)
	for _, e := range ents {
		t.Errorf("undo wrote %s outside the workspace", filepath.Join(home, e.Name()))
	}
}

// TestSecurityUndoDoesNotMoveOutOfTheWorkspace: a log may name a path
// outside the workspace that a file came in from; when a link has been
// put on the way there since, undo leaves the file in place rather than
// follow it, and says so.
func TestSecurityUndoDoesNotMoveOutOfTheWorkspace(t *testing.T) {
	w := newWS(t, Options{})
	out := filepath.Join(filepath.Dir(w.dir), "out")
	w.must(os.Mkdir(out, 0o755))
	w.must(os.WriteFile(filepath.Join(out, "payload"), []byte("x"), 0o644))
	r := w.begin()
	w.rename(filepath.Join(out, "payload"), "payload")
	w.finish()
	home := filepath.Join(filepath.Dir(w.dir), "home")
	w.must(os.Mkdir(home, 0o755))
	w.must(os.Remove(out))
	w.must(os.Symlink(home, out))
	rep, err := w.j.Undo([]string{r.ID()}, UndoOptions{})
	if err == nil || len(rep.Failed) != 1 || !strings.Contains(rep.Failed[0].Err, "does not follow it") {
		t.Errorf("undo: %v, failed %+v; want one step failed, a link on the way", err, rep.Failed)
	}
	if _, err := os.Lstat(filepath.Join(home, "payload")); err == nil {
		t.Error("undo moved the file into the home directory")
	}
	if _, err := os.Lstat(w.p("payload")); err != nil {
		t.Errorf("the file is not left in place: %v", err)
	}
}

// TestSecurityDiffDoesNotReadThroughALink: mnemos changes --diff shows
// what a run left in a file now; when a later run replaced a directory
// on the way with a link (to ~/.ssh, say), it does not show what the link
// leads to.
func TestSecurityDiffDoesNotReadThroughALink(t *testing.T) {
	w := newWS(t, Options{})
	secrets := filepath.Join(filepath.Dir(w.dir), "ssh")
	w.must(os.Mkdir(secrets, 0o700))
	w.must(os.WriteFile(filepath.Join(secrets, "id_rsa"), []byte("PRIVATE KEY\n"), 0o600))
	w.file("src/id_rsa", "old\n", 0o644)
	first := w.begin()
	w.write("src/id_rsa", "changed\n")
	w.finish()
	w.begin()
	w.rename("src", "src.old")
	w.symlink(secrets, "src")
	w.finish()
	d, err := w.j.Diff(first.ID())
	w.must(err)
	if strings.Contains(d, "PRIVATE KEY") {
		t.Errorf("the diff shows what the link leads to:\n%s", d)
	}
}
