package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSecurityStoreIsPrivate: the journal's directories are 0700 and its
// files 0600, whatever the umask, and its contents are copies (a link in
// the workspace is never followed into the store).
func TestSecurityStoreIsPrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	w := newWS(t, Options{})
	w.file("a", "secret content", 0o644)
	w.begin()
	w.write("a", "x")
	w.finish()
	err := filepath.WalkDir(w.j.Dir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir() && fi.Mode().Perm() != 0o700:
			t.Errorf("%s is %v, want 0700", p, fi.Mode().Perm())
		case fi.Mode().IsRegular() && fi.Mode().Perm() != 0o600:
			t.Errorf("%s is %v, want 0600", p, fi.Mode().Perm())
		case !fi.IsDir() && !fi.Mode().IsRegular():
			t.Errorf("%s is a %v", p, fi.Mode().Type())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestInterruptedRun: a run whose mnemos died (no Finish, the last line
// cut short, the lock released with the process) is read as interrupted,
// its state taken when it is found, and undone.
func TestInterruptedRun(t *testing.T) {
	w := newWS(t, Options{})
	w.file("a", "A", 0o644)
	w.file("b", "B", 0o600)
	want := snapshot(t, w.dir)
	r := w.begin()
	w.write("a", "A2")
	w.unlink("b")
	w.write("c", "C")
	// The process dies while writing an entry.
	f, err := os.OpenFile(w.j.logPath(r.ID()), os.O_WRONLY|os.O_APPEND, 0)
	w.must(err)
	_, err = f.WriteString(`{"t":"e","at":17,"k":"write","p":"d","a":{"t":"torn`)
	w.must(err)
	f.Close()
	r.f.Close() // the kernel releases the lock with the process

	runs, err := w.j.Runs(Filter{Workspace: w.dir})
	w.must(err)
	if len(runs) != 1 || runs[0].State != StateInterrupted || runs[0].Entries != 3 {
		t.Fatalf("runs: %+v", runs)
	}
	data, err := os.ReadFile(w.j.logPath(r.ID()))
	w.must(err)
	if strings.Contains(string(data), `torn`) || !strings.HasSuffix(string(data), "\n") {
		t.Errorf("the torn line is still in the log:\n%s", data)
	}
	if _, err := w.j.Undo([]string{r.ID()}, UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffSnapshots(want, snapshot(t, w.dir)); d != "" {
		t.Errorf("after undo:\n%s", d)
	}
}

// TestKilledRun: mnemos killed with SIGKILL in the middle of a run (a
// child process records and changes files, then kills itself) leaves
// every file old or new and a journal that undoes the run.
func TestKilledRun(t *testing.T) {
	if os.Getenv("JOURNAL_KILLED_CHILD") != "" {
		killedChild()
		return
	}
	for _, at := range []int{0, 1, 7, 20} {
		t.Run(strconv.Itoa(at), func(t *testing.T) {
			w := newWS(t, Options{})
			for i := 0; i < 10; i++ {
				w.file(fmt.Sprintf("f%d", i), strings.Repeat(strconv.Itoa(i), 100), 0o644)
			}
			want := snapshot(t, w.dir)
			cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRun$")
			cmd.Env = append(os.Environ(), "JOURNAL_KILLED_CHILD="+w.dir+"|"+w.j.Dir()+"|"+strconv.Itoa(at))
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the child was not killed: %v\n%s", err, out)
			}
			runs, err := w.j.Runs(Filter{})
			w.must(err)
			if at == 0 {
				// Killed before its first entry: nothing to undo.
				if len(runs) != 0 {
					t.Fatalf("runs: %+v", runs)
				}
				return
			}
			if len(runs) != 1 || runs[0].State != StateInterrupted {
				t.Fatalf("runs: %+v", runs)
			}
			if _, err := w.j.Undo([]string{runs[0].ID}, UndoOptions{}); err != nil {
				t.Fatal(err)
			}
			if d := diffSnapshots(want, snapshot(t, w.dir)); d != "" {
				t.Errorf("after undo:\n%s", d)
			}
		})
	}
}

// killedChild does the child's part of TestKilledRun: at calls recorded
// and made (writes, deletes, renames), then SIGKILL.
func killedChild() {
	parts := strings.Split(os.Getenv("JOURNAL_KILLED_CHILD"), "|")
	dir, jdir := parts[0], parts[1]
	at, _ := strconv.Atoi(parts[2])
	j, _ := Open(Options{Dir: jdir})
	r, err := j.Begin(RunInfo{Workspace: dir})
	if err != nil {
		panic(err)
	}
	for i := 0; i < at; i++ {
		f := filepath.Join(dir, fmt.Sprintf("f%d", i%10))
		var err error
		switch i % 3 {
		case 0:
			if err = r.Before(Write, f, ""); err == nil {
				err = os.WriteFile(f, []byte("new"), 0o644)
			}
		case 1:
			if err = r.Before(Unlink, f, ""); err == nil {
				err = os.Remove(f)
			}
		case 2:
			g := filepath.Join(dir, fmt.Sprintf("g%d", i))
			if err = r.Before(Rename, f, g); err == nil {
				err = os.Rename(f, g)
			}
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			panic(err)
		}
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	time.Sleep(time.Minute)
}

// TestSecurityFullDiskFailsTheCall: when the store cannot be written (a
// 1 MiB tmpfs), Before returns ENOSPC, so the call fails and the file is
// as it was; the log keeps no half entry and no partial object; once
// there is room again, the run goes on.
func TestSecurityFullDiskFailsTheCall(t *testing.T) {
	small := filepath.Join(t.TempDir(), "small")
	w := newWS(t, Options{Dir: filepath.Join(small, "journal")})
	w.must(os.Mkdir(small, 0o700))
	if err := syscall.Mount("tmpfs", small, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a small tmpfs (needs root): %v", err)
	}
	defer syscall.Unmount(small, syscall.MNT_DETACH)
	big := strings.Repeat("0123456789abcdef", 128<<10) // 2 MiB
	w.file("big", big, 0o644)
	w.file("small", "s", 0o644)
	r := w.begin()
	w.write("small", "s2") // the log exists and has room
	if err := r.Before(Write, w.p("big"), ""); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Before = %v, want ENOSPC", err)
	}
	if data, _ := os.ReadFile(w.p("big")); string(data) != big {
		t.Fatal("the file changed")
	}
	if ents, _ := os.ReadDir(filepath.Join(w.j.Dir(), "tmp")); len(ents) != 0 {
		t.Errorf("a partial object was left: %v", ents)
	}
	// Fill what is left: the log itself soon cannot grow.
	filler := filepath.Join(small, "filler")
	fillUp(t, filler)
	refused := false
	for i := 0; i < 200 && !refused; i++ {
		err := r.Before(Write, w.p(fmt.Sprintf("new%d", i)), "")
		if errors.Is(err, syscall.ENOSPC) {
			refused = true
			break
		}
		w.must(err)
		w.must(os.WriteFile(w.p(fmt.Sprintf("new%d", i)), nil, 0o644))
	}
	if !refused {
		t.Fatal("Before never returned ENOSPC on a full disk")
	}
	if lg, err := w.j.readLog(r.ID()); err != nil || len(lg.Entries) != r.entries {
		t.Fatalf("the log holds a half entry: %v", err)
	}
	os.Remove(filler)
	w.write("new", "made once there was room")
	sum := w.finish()
	lg, err := w.j.readLog(r.ID())
	w.must(err)
	if len(lg.Entries) != sum.Entries || lg.End == nil {
		t.Errorf("log: %d entries, end %v", len(lg.Entries), lg.End)
	}
	if _, err := w.j.Undo([]string{r.ID()}, UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(w.p("small")); string(data) != "s" {
		t.Errorf("small = %q", data)
	}
}

func fillUp(t *testing.T, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for i := 0; i < 1<<12; i++ {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	for i := 0; i < 4096; i++ {
		if _, err := f.Write(buf[:1]); err != nil {
			return
		}
	}
}

// TestQuota: over the workspace's quota, the oldest runs that ended an
// hour ago or more are pruned first; what still does not fit is not kept,
// the call proceeds, and the run's summary and its changes say so.
func TestQuota(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	w := newWS(t, Options{Quota: 10000, MaxFile: 50000, Now: func() time.Time { return now }})
	w.file("old", strings.Repeat("o", 8000), 0o644)
	w.file("mid", strings.Repeat("m", 6000), 0o644)
	w.file("huge", strings.Repeat("h", 20000), 0o644)
	w.file("giant", strings.Repeat("g", 60000), 0o644)
	first := w.begin()
	w.write("old", "x")
	w.finish()
	now = now.Add(2 * time.Hour)
	second := w.begin()
	w.write("mid", "y") // 8000 + 6000 > 10000: the first run goes
	w.write("huge", "z")
	w.write("giant", "w")
	sum := w.finish()
	_, err := w.j.Find(first.ID())
	var pe Pruned
	if !errors.Is(err, ErrUnknownRun) || !errors.As(err, &pe) || pe.Why != PrunedQuota || pe.By != second.ID() {
		t.Errorf("the oldest run was not pruned: %v", err)
	} else if want := "run " + first.ID() + " (test) was dropped from the journal on "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Find of a pruned run: %q, want it to start %q", err, want)
	}
	if _, err := w.j.Changes(first.ID()); !errors.As(err, &pe) {
		t.Errorf("Changes of a pruned run: %v", err)
	}
	if sum.Kept != 6000 || len(sum.NotKept) != 2 || sum.NotKept[0].Why != NotKeptQuota || sum.NotKept[1].Why != NotKeptTooBig {
		t.Errorf("summary %+v", sum)
	}
	changes, err := w.j.Changes(second.ID())
	w.must(err)
	got := map[string]bool{}
	for _, c := range changes {
		got[filepath.Base(c.Path)] = c.Restorable
	}
	if !got["mid"] || got["huge"] || got["giant"] {
		t.Errorf("restorable: %v", got)
	}
	rep, err := w.j.Undo([]string{second.ID()}, UndoOptions{})
	if err == nil || len(rep.Failed) != 2 {
		t.Fatalf("undo: %v, failed %+v", err, rep.Failed)
	}
	if data, _ := os.ReadFile(w.p("mid")); string(data) != strings.Repeat("m", 6000) {
		t.Error("mid was not restored")
	}
	// What was never kept cannot be retried: the run is undone all the
	// same.
	if rec, err := w.j.Find(second.ID()); err != nil || rec.UndoneBy == "" {
		t.Errorf("a run whose unkept files could not be restored is not marked undone: %+v %v", rec, err)
	}
	// Objects of the pruned run are collected.
	if w.j.hasObject(digestOf(strings.Repeat("o", 8000))) {
		t.Error("the pruned run's object is still in the store")
	}
}

// TestQuotaKeepsRecentHistory: a file that cannot fit even if every older
// run were pruned prunes nothing; runs that ended less than an hour ago
// are never pruned (a churning command cannot erase the recent history);
// pruning stops as soon as the file fits.
func TestQuotaKeepsRecentHistory(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	w := newWS(t, Options{Quota: 10000, Now: func() time.Time { return now }})
	var ids []string
	for i := 0; i < 4; i++ {
		name := fmt.Sprintf("f%d", i)
		w.file(name, strings.Repeat("x", 2000+i), 0o644)
		ids = append(ids, w.begin().ID())
		w.write(name, "changed")
		w.finish()
		now = now.Add(time.Minute)
	}
	// 8006 bytes kept in four runs. A file bigger than the quota itself
	// prunes nothing.
	w.file("big", strings.Repeat("b", 12000), 0o644)
	w.begin()
	w.write("big", "")
	sum := w.finish()
	if len(sum.NotKept) != 1 || sum.NotKept[0].Why != NotKeptQuota {
		t.Errorf("a file over the quota: %+v", sum)
	}
	// One that would fit if the recent runs went: they are kept.
	now = now.Add(30 * time.Minute)
	w.file("mid", strings.Repeat("m", 5000), 0o644)
	w.begin()
	w.write("mid", "")
	sum = w.finish()
	if len(sum.NotKept) != 1 || sum.NotKept[0].Why != NotKeptQuota {
		t.Errorf("a file that needs runs of the last hour pruned: %+v", sum)
	}
	for _, id := range ids {
		if _, err := w.j.Find(id); err != nil {
			t.Fatalf("run %s pruned while it ended less than an hour ago: %v", id, err)
		}
	}
	// An hour later they may go, the oldest first, as many as needed:
	// 5000 more needs two of them.
	now = now.Add(time.Hour)
	w.file("mid2", strings.Repeat("n", 5000), 0o644)
	mid2 := w.begin().ID()
	w.write("mid2", "")
	sum = w.finish()
	if len(sum.NotKept) != 0 || sum.Kept != 5000 {
		t.Errorf("summary %+v", sum)
	}
	for i, id := range ids {
		_, err := w.j.Find(id)
		if pruned := errors.Is(err, ErrUnknownRun); pruned != (i < 2) {
			t.Errorf("run %d: pruned %v (%v), want only the two oldest pruned", i, pruned, err)
		}
	}
	// Two hours on, every run may go. A recent run keeps 3000 bytes (the
	// two oldest left go for it); then a file that would not fit even if
	// every run older than an hour went prunes none of them.
	now = now.Add(2 * time.Hour)
	w.file("r", strings.Repeat("r", 3000), 0o644)
	w.begin()
	w.write("r", "")
	w.finish()
	w.file("big2", strings.Repeat("B", 8000), 0o644)
	w.begin()
	w.write("big2", "")
	if sum = w.finish(); len(sum.NotKept) != 1 {
		t.Errorf("a file that cannot fit: %+v", sum)
	}
	if _, err := w.j.Find(mid2); err != nil {
		t.Errorf("a run was pruned for a file that still did not fit: %v", err)
	}
}

func digestOf(s string) string {
	d, _ := hashOnly(strings.NewReader(s))
	return d
}

// TestConcurrentRuns: two runs interleaving in one workspace each keep
// their own log; undoing one refuses the paths the other changed after
// it, unless forced; undoing both, newest first, puts everything back.
func TestConcurrentRuns(t *testing.T) {
	w := newWS(t, Options{})
	w.file("a", "A", 0o644)
	w.file("b", "B", 0o644)
	want := snapshot(t, w.dir)
	r1, err := w.j.Begin(RunInfo{Workspace: w.dir, Session: "s"})
	w.must(err)
	r2, err := w.j.Begin(RunInfo{Workspace: w.dir, Session: "s"})
	w.must(err)
	w.r = r1
	w.write("a", "A1")
	w.r = r2
	w.write("a", "A2")
	w.write("b", "B2")
	w.r = r1
	w.write("c", "C1")
	// r1 is still running: it cannot be undone.
	if _, err := w.j.Undo([]string{r1.ID()}, UndoOptions{}); !errors.Is(err, ErrRunning) {
		t.Fatalf("undo of a running run: %v", err)
	}
	_, err = r1.Finish()
	w.must(err)
	// r2 is still running and changed a after r1 did.
	_, err = w.j.Undo([]string{r1.ID()}, UndoOptions{})
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || filepath.Base(ce.Conflicts[0].Path) != "a" || !strings.Contains(ce.Conflicts[0].Why, "still running") {
		t.Fatalf("undo while r2 runs: %v %+v", err, ce)
	}
	_, err = r2.Finish()
	w.must(err)
	_, err = w.j.Undo([]string{r1.ID()}, UndoOptions{DryRun: true})
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Run != r2.ID() {
		t.Fatalf("undo of r1 alone: %v", err)
	}
	rep, err := w.j.Undo([]string{r1.ID(), r2.ID()}, UndoOptions{})
	if err != nil {
		t.Fatalf("undo of both: %v", err)
	}
	if rep.Runs[0] != r2.ID() {
		t.Errorf("undone in the order %v, want the newest first", rep.Runs)
	}
	if d := diffSnapshots(want, snapshot(t, w.dir)); d != "" {
		t.Errorf("after undo:\n%s", d)
	}
}

// TestConcurrentBefore: Before is safe for concurrent calls (go test
// -race), and each file is kept.
func TestConcurrentBefore(t *testing.T) {
	w := newWS(t, Options{})
	for i := 0; i < 40; i++ {
		w.file(fmt.Sprintf("f%d", i), strconv.Itoa(i), 0o644)
	}
	want := snapshot(t, w.dir)
	r := w.begin()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < 40; i += 4 {
				p := w.p(fmt.Sprintf("f%d", i))
				if err := r.Before(Write, p, ""); err != nil {
					t.Error(err)
					return
				}
				os.WriteFile(p, []byte("x"), 0o644)
			}
		}()
	}
	wg.Wait()
	if sum := w.finish(); sum.Entries != 40 {
		t.Errorf("entries %d", sum.Entries)
	}
	if _, err := w.j.Undo([]string{r.ID()}, UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffSnapshots(want, snapshot(t, w.dir)); d != "" {
		t.Errorf("after undo:\n%s", d)
	}
}

// TestChangedSince: a file changed after the run is listed and left
// alone; DryRun lists the steps and changes nothing; Force restores it
// and records what it replaced, so the undo itself can be undone.
func TestChangedSince(t *testing.T) {
	w := newWS(t, Options{})
	w.file("a", "A", 0o644)
	w.file("b", "B", 0o644)
	r := w.begin()
	w.write("a", "run")
	w.write("b", "run")
	w.finish()
	w.must(os.WriteFile(w.p("a"), []byte("person"), 0o644))
	_, err := w.j.Undo([]string{r.ID()}, UndoOptions{})
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Path != w.p("a") {
		t.Fatalf("undo: %v", err)
	}
	rep, err := w.j.Undo([]string{r.ID()}, UndoOptions{DryRun: true, Force: true})
	if err != nil || len(rep.Steps) != 2 || len(rep.Forced) != 1 {
		t.Fatalf("dry run: %v %+v", err, rep)
	}
	if data, _ := os.ReadFile(w.p("b")); string(data) != "run" {
		t.Fatal("the dry run changed b")
	}
	rep, err = w.j.Undo([]string{r.ID()}, UndoOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{"a": "A", "b": "B"} {
		if data, _ := os.ReadFile(w.p(f)); string(data) != want {
			t.Errorf("%s = %q, want %q", f, data, want)
		}
	}
	// Undone already.
	if _, err := w.j.Undo([]string{r.ID()}, UndoOptions{}); !errors.As(err, &ce) || !strings.HasPrefix(ce.Error(), "run "+r.ID()+" was undone already") {
		t.Errorf("second undo: %v", err)
	}
	if _, _, err := w.j.Last(Filter{Workspace: w.dir}); !errors.Is(err, ErrUnknownRun) {
		t.Errorf("Last after the undo: %v (the undo and the undone run are not --last)", err)
	}
	// The person's edit is not lost: undoing the undo brings it back.
	if _, err := w.j.Undo(rep.UndoRuns, UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(w.p("a")); string(data) != "person" {
		t.Errorf("a = %q, want the person's edit back", data)
	}
	// The run's changes are back: it is the last run again.
	if last, _, err := w.j.Last(Filter{Workspace: w.dir}); err != nil || last.ID != r.ID() {
		t.Errorf("Last after undoing the undo = %v, %v; want %s", last.ID, err, r.ID())
	}
}

// TestSessionUndo: the runs of a session, undone together newest first,
// need no force even when they changed the same file one after another.
func TestSessionUndo(t *testing.T) {
	w := newWS(t, Options{})
	w.file("a", "0", 0o644)
	want := snapshot(t, w.dir)
	var ids []string
	for i := 1; i <= 3; i++ {
		ids = append(ids, w.begin().ID())
		w.write("a", strconv.Itoa(i))
		w.write(fmt.Sprintf("new%d", i), "n")
		w.finish()
	}
	runs, err := w.j.Runs(Filter{Session: "s1"})
	w.must(err)
	if len(runs) != 3 || runs[0].ID != ids[2] {
		t.Fatalf("runs: %+v", runs)
	}
	if last, _, err := w.j.Last(Filter{Workspace: w.dir}); err != nil || last.ID != ids[2] {
		t.Errorf("Last = %v, %v", last.ID, err)
	}
	if _, err := w.j.Undo(ids, UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffSnapshots(want, snapshot(t, w.dir)); d != "" {
		t.Errorf("after undo:\n%s", d)
	}
}

// TestChangesAndDiff: the net changes of a run, and a unified diff of its
// text files.
func TestChangesAndDiff(t *testing.T) {
	w := newWS(t, Options{})
	w.file("edit.txt", "one\ntwo\nthree\n", 0o644)
	w.file("gone.txt", "bye\n", 0o644)
	w.file("old.txt", "moving\n", 0o644)
	w.file("run.sh", "#!/bin/sh\n", 0o644)
	w.file("bin.dat", "\x00\x01", 0o644)
	r := w.begin()
	w.write("edit.txt", "one\n2\nthree\n")
	w.unlink("gone.txt")
	w.rename("old.txt", "new.txt")
	w.chmod("run.sh", 0o755)
	w.write("added.txt", "hello\n")
	w.write("tmp", "x")
	w.unlink("tmp")
	w.write("bin.dat", "\x00\x02")
	w.finish()
	changes, err := w.j.Changes(r.ID())
	w.must(err)
	var got []string
	for _, c := range changes {
		s := c.Op + " " + filepath.Base(c.Path)
		if c.From != "" {
			s += " from " + filepath.Base(c.From)
		}
		if c.Op == OpMode {
			s += fmt.Sprintf(" %o->%o", c.OldMode, c.NewMode)
		}
		got = append(got, s)
	}
	want := "added added.txt|changed bin.dat|changed edit.txt|deleted gone.txt|moved new.txt from old.txt|mode run.sh 644->755"
	if strings.Join(got, "|") != want {
		t.Errorf("changes:\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	d, err := w.j.Diff(r.ID())
	w.must(err)
	for _, s := range []string{"-two\n+2\n", "-bye\n", "+hello\n", "Binary files"} {
		if !strings.Contains(d, s) {
			t.Errorf("diff lacks %q:\n%s", s, d)
		}
	}
	w.must(os.WriteFile(w.p("edit.txt"), []byte("later\n"), 0o644))
	d, _ = w.j.Diff(r.ID())
	if !strings.Contains(d, "changed again after the run") {
		t.Errorf("diff does not say edit.txt changed since:\n%s", d)
	}
}

// TestPruneByAge: runs older than MaxAge go, and the objects only they
// named with them; a newer run's objects stay.
func TestPruneByAge(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	w := newWS(t, Options{MaxAge: 24 * time.Hour, Now: clock})
	w.file("a", "old content", 0o644)
	w.file("b", "kept content", 0o644)
	old := w.begin()
	w.write("a", "x")
	w.finish()
	now = now.Add(48 * time.Hour)
	young := w.begin()
	w.write("b", "y")
	w.finish()
	// The young run's end pruned the old one (at most once an hour).
	if _, err := w.j.Find(old.ID()); !errors.Is(err, ErrUnknownRun) {
		t.Errorf("the old run is still there: %v", err)
	}
	if !w.j.hasObject(digestOf("kept content")) || w.j.hasObject(digestOf("old content")) {
		t.Error("the wrong objects were collected")
	}
	now = now.Add(48 * time.Hour)
	rep, err := w.j.Prune()
	w.must(err)
	if len(rep.Runs) != 1 || rep.Runs[0] != young.ID() || rep.Objects != 1 {
		t.Errorf("prune: %+v", rep)
	}
	if w.j.hasObject(digestOf("kept content")) {
		t.Error("the young run's object was not collected")
	}
}

// TestFindAndErrors: ids resolve by unique prefix; an unknown id is
// ErrUnknownRun.
func TestFindAndErrors(t *testing.T) {
	w := newWS(t, Options{})
	r, err := w.j.Begin(RunInfo{ID: "abc-1", Workspace: w.dir})
	w.must(err)
	w.r = r
	w.write("x", "x")
	w.finish()
	if rec, err := w.j.Find("abc"); err != nil || rec.ID != "abc-1" {
		t.Errorf("Find(abc) = %v, %v", rec.ID, err)
	}
	if _, err := w.j.Find("nope"); !errors.Is(err, ErrUnknownRun) {
		t.Errorf("Find(nope) = %v", err)
	}
	if _, err := w.j.Undo([]string{"nope"}, UndoOptions{}); !errors.Is(err, ErrUnknownRun) {
		t.Errorf("Undo(nope) = %v", err)
	}
	if _, err := w.j.Begin(RunInfo{ID: "abc-1", Workspace: w.dir}); err == nil {
		t.Error("a second run with the same id began")
	}
	if _, err := w.j.Begin(RunInfo{ID: "../x", Workspace: w.dir}); err == nil {
		t.Error("a run id with a slash began")
	}
	if err := r.Before(Write, "relative", ""); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Before(relative) = %v", err)
	}
}

// TestSecurityLogPathsStayInTheWorkspace: a log whose entries name a path
// climbing out of the workspace is refused whole, so undo never writes
// where the run could not have.
func TestSecurityLogPathsStayInTheWorkspace(t *testing.T) {
	w := newWS(t, Options{})
	w.file("a", "A", 0o644)
	r := w.begin()
	w.write("a", "B")
	w.finish()
	data, err := os.ReadFile(w.j.logPath(r.ID()))
	w.must(err)
	for _, bad := range []string{`"p":"../../escape"`, `"p":"/x/../y"`} {
		forged := strings.Replace(string(data), `"p":"a"`, bad, 1)
		w.must(os.WriteFile(w.j.logPath(r.ID()), []byte(forged), 0o600))
		if _, err := w.j.Undo([]string{r.ID()}, UndoOptions{Force: true}); err == nil {
			t.Errorf("a log naming %s was undone", bad)
		}
	}
	if data, _ := os.ReadFile(w.p("a")); string(data) != "B" {
		t.Errorf("a = %q: the forged log was acted on", data)
	}
}

// TestRunsByTicket: Filter.Tickets selects the runs that spent one of the
// tickets given, exactly; a run without a ticket, or with another, is
// left out, and a run undone still says so.
func TestRunsByTicket(t *testing.T) {
	w := newWS(t, Options{})
	run := func(ticket, name string) string {
		r, err := w.j.Begin(RunInfo{Workspace: w.dir, Argv: []string{"touch", name}, Ticket: ticket})
		w.must(err)
		w.r = r
		w.write(name, "x")
		w.finish()
		return r.ID()
	}
	a := run("aaaa", "a")
	run("", "none")
	run("aaaab", "b")
	c := run("cccc", "c")
	if _, err := w.j.Undo([]string{c}, UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	runs, err := w.j.Runs(Filter{Tickets: []string{"aaaa", "cccc"}})
	w.must(err)
	var got []string
	for _, r := range runs {
		got = append(got, r.ID+":"+r.Ticket)
	}
	if len(runs) != 2 || runs[0].ID != c || runs[1].ID != a {
		t.Fatalf("runs of tickets aaaa and cccc: %v", got)
	}
	if runs[0].UndoneBy == "" {
		t.Errorf("the run undone is not said to be: %+v", runs[0])
	}
	if runs, err := w.j.Runs(Filter{Tickets: []string{}}); err != nil || len(runs) != 0 {
		t.Errorf("no ticket given: %d runs, %v", len(runs), err)
	}
}

// A deletion the kernel refused (the call is recorded before it runs) is
// no change: the same file is still there when the run ends.
func TestRefusedDeletionIsNoChange(t *testing.T) {
	w := newWS(t, Options{})
	w.file("kept.txt", "still here\n", 0o644)
	w.file("gone.txt", "bye\n", 0o644)
	w.begin()
	w.before(Unlink, "kept.txt", "") // refused by the kernel: nothing happens
	w.unlink("gone.txt")
	w.finish()
	changes, err := w.j.Changes(w.r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Op != OpDeleted || changes[0].Path != w.p("gone.txt") {
		t.Fatalf("changes = %+v, want only gone.txt deleted", changes)
	}
}

// A file the run deleted and wrote again (git checkout -- ., which unlinks
// each file it puts back and makes it anew) is listed as changed, its
// diff from what it held, not as a new file: the work it held is what
// undo brings back. A link made again to another target is changed too,
// a directory removed and made again with the same mode is no change.
func TestRemadePathIsChanged(t *testing.T) {
	w := newWS(t, Options{})
	w.file("calc.py", "uncommitted work\n", 0o644)
	w.file("tool.sh", "#!/bin/sh\n", 0o755)
	w.must(os.Symlink("calc.py", w.p("link")))
	w.must(os.Mkdir(w.p("build"), 0o755))
	before := snapshot(t, w.dir)
	w.begin()
	w.unlink("calc.py")
	w.write("calc.py", "committed\n")
	w.unlink("tool.sh")
	w.write("tool.sh", "#!/bin/sh\necho made again\n")
	w.unlink("link")
	w.symlink("tool.sh", "link")
	w.rmdir("build")
	w.mkdir("build", 0o755)
	w.finish()
	changes, err := w.j.Changes(w.r.ID())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		rel, _ := filepath.Rel(w.dir, c.Path)
		s := c.Op + " " + rel
		if c.NewMode != c.OldMode && c.Type == TypeFile {
			s += fmt.Sprintf(" %o->%o", c.OldMode, c.NewMode)
		}
		got = append(got, s)
		if !c.Restorable {
			t.Errorf("%s %s: not restorable: %s", c.Op, rel, c.Why)
		}
	}
	// One line a path: tool.sh changed, its mode with it.
	want := []string{"changed calc.py", "changed link", "changed tool.sh 755->644"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("changes = %v, want %v", got, want)
	}
	d, err := w.j.Diff(w.r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d, "-uncommitted work\n+committed\n") {
		t.Errorf("diff does not show what calc.py held:\n%s", d)
	}
	if _, err := w.j.Undo([]string{w.r.ID()}, UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := diffSnapshots(before, snapshot(t, w.dir)); diff != "" {
		t.Errorf("undo left:\n%s", diff)
	}
}

// A new file that the kernel gave the inode number of the file the run
// deleted at that path (ext4 reuses a freed number at once) does not make
// the deletion look refused: the path is listed as changed.
func TestRemadeFileWithTheSameInodeIsChanged(t *testing.T) {
	w := newWS(t, Options{})
	w.file("README.md", "edited, not committed\n", 0o644)
	aside := filepath.Join(t.TempDir(), "aside")
	w.begin()
	w.before(Unlink, "README.md", "")
	// The deletion and the new file, as the kernel may leave them: a new
	// file at the path under the old inode number.
	w.must(os.Rename(w.p("README.md"), aside))
	w.before(Write, "README.md", "")
	w.must(os.Rename(aside, w.p("README.md")))
	w.must(os.WriteFile(w.p("README.md"), []byte("# project\n"), 0o644))
	w.finish()
	changes, err := w.j.Changes(w.r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Op != OpChanged || changes[0].Path != w.p("README.md") || !changes[0].Restorable {
		t.Fatalf("changes = %+v, want README.md changed", changes)
	}
}
