package journal

import (
	"os"
	"testing"
)

// TestSecurityNamesThatAreNotUTF8: names are bytes. Two names that differ
// only in bytes that are not UTF-8 are two files; each is put back under
// its own name.
func TestSecurityNamesThatAreNotUTF8(t *testing.T) {
	w := newWS(t, Options{})
	names := []string{"a\xff", "a\xfe", "d\x80/x", "nl\nname", "ok"}
	for _, n := range names {
		w.file(n, "precious "+n, 0o644)
	}
	w.must(os.Symlink("target\xff", w.p("lnk")))
	want := snapshot(t, w.dir)
	r := w.begin()
	w.rmrf("a\xff")
	w.rmrf("a\xfe")
	w.rmrf("d\x80")
	w.rmrf("nl\nname")
	w.rmrf("lnk")
	w.write("ok", "changed")
	w.finish()
	changes, err := w.j.Changes(r.ID())
	w.must(err)
	seen := map[string]bool{}
	for _, c := range changes {
		seen[c.Path] = true
	}
	for _, n := range []string{"a\xff", "a\xfe", "d\x80/x", "lnk"} {
		if !seen[w.p(n)] {
			t.Errorf("changes do not list %q: %v", n, seen)
		}
	}
	if _, err := w.j.Undo([]string{r.ID()}, UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffSnapshots(want, snapshot(t, w.dir)); d != "" {
		t.Errorf("after undo:\n%s", d)
	}
}
