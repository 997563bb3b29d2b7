package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/sandbox"
)

// TestWatchUndo: approvals watch, on a real terminal, approves an agent's
// waiting sh -c 'rm -rf *' with a; when the run ends it shows what the run
// deleted; u asks, y puts every file back, and the audit log says the
// terminal's person did it.
func TestWatchUndo(t *testing.T) {
	if st := sandbox.Probe(); st.ABI == 0 || !st.Watch {
		t.Skipf("the sandbox cannot watch changes here, so nothing is journaled: %s", st.WatchErr)
	}
	w := newWatchEnv(t)
	files := map[string]string{"calc.go": "package calc\n", "notes.txt": "untracked notes\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(w.ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	master, tty := openPTY(t)
	sc := newScreen(t, master)
	_, out, done := w.watch(tty)
	sc.wait("u undo what a run you approved changed (asks first), q quit")
	sc.wait("waiting for new requests")

	ran, errw := w.background("run", "--wait", "--", "sh", "-c", "rm -rf *")
	sc.wait("command:   sh -c 'rm -rf *'")
	sc.wait("[q] quit? ")
	master.WriteString("a")
	if code := within(t, ran, 30*time.Second, "the approved run"); code != 0 {
		t.Fatalf("the approved run exited %d: %s", code, errw.String())
	}
	for name := range files {
		if _, err := os.Lstat(filepath.Join(w.ws, name)); err == nil {
			t.Fatalf("the approved rm -rf * left %s", name)
		}
	}
	sc.wait("u undoes it (asks first)")
	shown := sc.buf.String()
	for _, want := range []string{"through: 2 changes in " + w.ws, "deleted  calc.go", "deleted  notes.txt"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the run's account lacks %q:\n%s", want, shown)
		}
	}
	master.WriteString("u")
	sc.wait("[y/N] ")
	master.WriteString("y")
	sc.wait("2 paths restored")
	for name, want := range files {
		if got, err := os.ReadFile(filepath.Join(w.ws, name)); err != nil || string(got) != want {
			t.Errorf("%s after the undo: %q, %v", name, got, err)
		}
	}
	master.WriteString("q")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("watch: %v (%s)", err, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("q did not quit")
	}
	tail, _ := w.run(nil, "audit", "tail", "-n", "1")
	if !strings.Contains(tail, "journal.undo") || !strings.Contains(tail, "by=terminal:dev") {
		t.Fatalf("the undo's audit event: %s", tail)
	}
	t.Logf("the terminal showed:\n%s", strings.ReplaceAll(sc.buf.String(), "\r\n", "\n"))
}
