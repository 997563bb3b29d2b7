package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/sandbox"
)

// mnemos killed with SIGKILL at random points of journaled runs leaves
// every file whole (what it held or what the command wrote), every run
// readable, and undoing them all, newest first, gives back the workspace
// as it was before the first.
func TestSecurityJournalSurvivesKill9(t *testing.T) {
	if st := sandbox.Probe(); !st.Enforced || !st.Watch {
		t.Skipf("changes cannot be watched here (landlock %v, watch %v: %s)", st.Enforced, st.Watch, st.WatchErr)
	}
	w := newWatchEnv(t)
	w.env["MNEMOS_SESSION"] = "kill9"
	pol := filepath.Join(w.env["MNEMOS_HOME"], "policy.yaml")
	b, err := os.ReadFile(pol)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pol, []byte(strings.Replace(string(b), "level: supervised", "level: full", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	const files = 40
	orig := map[string]string{}
	for i := range files {
		name := fmt.Sprintf("f%02d", i)
		orig[name] = strings.Repeat(fmt.Sprintf("old %d\n", i), 200)
		if err := os.WriteFile(filepath.Join(w.ws, name), []byte(orig[name]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Each run rewrites, renames, deletes and chmods; every one is killed
	// somewhere on the way.
	var sb strings.Builder
	// f01 to f04 are moved, deleted and chmod-ed, never written: only
	// those entries bring them back.
	for i := 5; i < files; i++ {
		fmt.Fprintf(&sb, "printf 'new f%02d\\n' > f%02d\n", i, i)
	}
	sb.WriteString("mv f01 moved 2>/dev/null; rm -f f02 f03 moved; chmod 600 f04; mkdir -p dir; echo x > dir/in; rm -rf dir\n")
	for i := 5; i < files; i++ {
		fmt.Fprintf(&sb, "printf 'again f%02d\\n' >> f%02d\n", i, i)
	}
	script := sb.String()
	// One run whole, to know how long a run takes; then runs killed at
	// random points of that span.
	start := time.Now()
	if out, code := w.run(nil, "run", "--", "sh", "-c", script); code != 0 {
		t.Fatalf("the first run exited %d: %s", code, out)
	}
	span := time.Since(start)
	rng := rand.New(rand.NewPCG(1, 2))
	for k := range 12 {
		cmd := w.command("run", "--", "sh", "-c", script)
		cmd.Stdout, cmd.Stderr = nil, nil
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(span))))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		waitNoneIn(t, w.ws)
		// Whatever the run reached, every file is whole.
		ents, _ := os.ReadDir(w.ws)
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), "f") {
				continue
			}
			got, _ := os.ReadFile(filepath.Join(w.ws, e.Name()))
			if !wholeContent(string(got), orig[e.Name()], e.Name()) {
				t.Fatalf("kill %d: %s holds %q, neither what it held nor what the command wrote", k, e.Name(), got)
			}
		}
	}
	if out, code := w.run(nil, "changes"); code != 0 {
		t.Fatalf("changes after the kills exited %d: %s", code, out)
	}
	out, code := w.run(nil, "undo", "--session", "kill9")
	if code != 0 {
		t.Fatalf("undo --session exited %d: %s", code, out)
	}
	ents, _ := os.ReadDir(w.ws)
	var names []string
	for _, e := range ents {
		if e.Name() != ".git" {
			names = append(names, e.Name())
		}
	}
	if len(names) != files {
		t.Errorf("after the undo the workspace holds %v, want f00..f%02d\n%s", names, files-1, out)
	}
	for name, want := range orig {
		p := filepath.Join(w.ws, name)
		got, err := os.ReadFile(p)
		fi, serr := os.Stat(p)
		if err != nil || serr != nil || string(got) != want || fi.Mode().Perm() != 0o644 {
			t.Errorf("after the undo %s: %v %v, mode %v, content %.20q", name, err, serr, fi, got)
		}
	}
}

// wholeContent says whether a file holds what it held before the runs or
// what a run's command wrote, whole: never a torn mix.
func wholeContent(got, orig, name string) bool {
	if got == "" {
		return false
	}
	rest, ok := strings.CutPrefix(got, orig)
	if !ok {
		rest, _ = strings.CutPrefix(got, "new "+name+"\n")
	}
	for rest != "" {
		if rest, ok = strings.CutPrefix(rest, "again "+name+"\n"); !ok {
			return false
		}
	}
	return true
}

// waitNoneIn waits until no process works in dir: the command mnemos
// started outlives it, its changes failing, until it ends.
func waitNoneIn(t *testing.T, dir string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		busy := false
		procs, _ := os.ReadDir("/proc")
		for _, p := range procs {
			if cwd, err := os.Readlink(filepath.Join("/proc", p.Name(), "cwd")); err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+"/")) {
				busy = true
				break
			}
		}
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a process still works in %s", dir)
		}
	}
}
