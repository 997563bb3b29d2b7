package journal_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mnemos-dev/mnemos/journal"
)

// A run as mnemos run records it: Before each call that changes the
// workspace, then Finish; then undo.
func Example() {
	base, _ := os.MkdirTemp("", "journal-example")
	defer os.RemoveAll(base)
	ws := filepath.Join(base, "work")
	os.Mkdir(ws, 0o755)
	notes := filepath.Join(ws, "notes.txt")
	os.WriteFile(notes, []byte("never committed\n"), 0o644)

	j, _ := journal.Open(journal.Options{Dir: filepath.Join(base, "journal"), Exclude: journal.DefaultExclude})
	defer j.Close()
	run, _ := j.Begin(journal.RunInfo{Workspace: ws, Argv: []string{"sh", "-c", "rm -rf *"}})
	// The seccomp loop, before letting unlink(notes.txt) through:
	if err := run.Before(journal.Unlink, notes, ""); err == nil {
		os.Remove(notes)
	}
	sum, _ := run.Finish()
	fmt.Println("entries:", sum.Entries)

	changes, _ := j.Changes(run.ID())
	for _, c := range changes {
		fmt.Println(c.Op, filepath.Base(c.Path), "restorable:", c.Restorable)
	}
	if _, err := j.Undo([]string{run.ID()}, journal.UndoOptions{}); err != nil {
		fmt.Println(err)
	}
	data, _ := os.ReadFile(notes)
	fmt.Print(string(data))
	// Output:
	// entries: 1
	// deleted notes.txt restorable: true
	// never committed
}
