package journal

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestSecurityQuotaPruneIsNotSilent: a run deletes a file (the journal
// keeps it, which is why a big deletion may run at full); a later run
// rewrites enough to take the workspace over its quota. When that prunes
// the first run, the later run's summary says so, and undo of the first
// run says it was dropped and why, instead of "no such run". A run that
// keeps nothing frees nothing and is not pruned, and nothing is pruned
// for content that would not fit even then.
func TestSecurityQuotaPruneIsNotSilent(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	w := newWS(t, Options{Quota: 10000, MaxAge: 24 * time.Hour, Now: func() time.Time { return now }})
	w.file("precious", strings.Repeat("p", 3000), 0o644)
	w.file("a", strings.Repeat("a", 4000), 0o644)
	w.file("b", strings.Repeat("b", 4000), 0o644)
	w.file("huge", strings.Repeat("h", 20000), 0o644)
	deleted := w.begin()
	w.unlink("precious")
	w.finish()
	made := w.begin()
	w.write("new", "made, nothing kept")
	w.finish()
	big := w.begin()
	w.write("huge", "x") // 20000 > 10000: pruning all would not make it fit
	if sum := w.finish(); len(sum.Pruned) != 0 {
		t.Errorf("pruned %+v for content that fits in no quota", sum.Pruned)
	}
	if _, err := w.j.Find(deleted.ID()); err != nil {
		t.Fatalf("the deletion's run is gone: %v", err)
	}
	// Runs that ended less than an hour ago are never pruned for room;
	// two hours on, the first may go.
	now = now.Add(2 * time.Hour)
	rewrite := w.begin()
	w.write("a", "x")
	w.write("b", "y") // 3000 + 4000 + 4000 > 10000: the oldest run that keeps something goes
	sum := w.finish()
	var ids []string
	for _, p := range sum.Pruned {
		ids = append(ids, p.ID)
	}
	if len(ids) == 0 || ids[0] != deleted.ID() {
		t.Fatalf("summary lists pruned %v, want %s first", ids, deleted.ID())
	}
	for _, id := range ids {
		if id == made.ID() {
			t.Errorf("run %s, which keeps nothing, was pruned", id)
		}
	}
	if _, err := w.j.Find(made.ID()); err != nil {
		t.Errorf("the run that keeps nothing is gone: %v", err)
	}
	_, err := w.j.Undo([]string{deleted.ID()}, UndoOptions{})
	if !errors.Is(err, ErrUnknownRun) || !strings.Contains(err.Error(), "dropped") || !strings.Contains(err.Error(), rewrite.ID()) {
		t.Errorf("undo of the pruned run: %v; want it to say it was dropped for run %s", err, rewrite.ID())
	}
	_ = big
}
