package journal

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// scanUsage is what the runs of ws but except keep, every log read.
func scanUsage(t *testing.T, j *Journal, ws, except string) int64 {
	t.Helper()
	ids, err := j.runIDs()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, id := range ids {
		if id == except {
			continue
		}
		lg, err := j.readLog(id)
		if err != nil || lg.Head.WS != ws {
			continue
		}
		if lg.End != nil {
			n += lg.End.Kept
		} else {
			n += keptBytes(lg)
		}
	}
	return n
}

// TestWorkspaceUsageReadsOnlyNewRuns: what a workspace's runs keep (the
// quota's weight) is what reading every log says, across workspaces,
// pruned runs and a run still running; a run that ended is read once,
// not again at every command (its log unreadable, the sum holds); a cache
// that does not read is rebuilt.
func TestWorkspaceUsageReadsOnlyNewRuns(t *testing.T) {
	a := newWS(t, Options{})
	b := newWS(t, Options{Dir: a.j.Dir()})
	var ids []string
	for i, w := range []*ws{a, b, a, a, b} {
		name := "f" + strings.Repeat("x", i) + ".txt"
		w.file(name, strings.Repeat("k", 100*(i+1)), 0o644)
		w.begin()
		w.write(name, "new")
		w.finish()
		ids = append(ids, w.r.ID())
	}
	// A run of a still running: read from its log.
	a.file("live.txt", strings.Repeat("l", 7000), 0o644)
	live := a.begin()
	a.write("live.txt", "x")
	check := func(what string) {
		t.Helper()
		for _, w := range []*ws{a, b} {
			if got, want := w.j.workspaceUsage(w.dir, "other"), scanUsage(t, w.j, w.dir, "other"); got != want || want == 0 {
				t.Errorf("%s: %s uses %d bytes, the logs say %d", what, w.dir, got, want)
			}
		}
	}
	check("no cache")
	if _, err := os.Stat(a.j.usagePath()); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	// A run that ended is not read again: what its log says now (its
	// end made to say more) is not what the sum holds.
	path := a.j.logPath(ids[0])
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := regexp.MustCompile(`"kept":(\d+)}\n$`).ReplaceAll(orig, []byte(`"kept":1${1}000000}`+"\n"))
	if string(edited) == string(orig) {
		t.Fatalf("no end to edit in %s", orig)
	}
	if err := os.WriteFile(path, edited, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, scanned := a.j.workspaceUsage(a.dir, "other"), scanUsage(t, a.j, a.dir, "other"); got >= scanned-1000000 {
		t.Errorf("the ended run was read again: %d bytes, the logs say %d", got, scanned)
	}
	if err := os.WriteFile(path, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	// A pruned run drops out; a new run comes in.
	if err := os.Remove(a.j.logPath(ids[2])); err != nil {
		t.Fatal(err)
	}
	if _, err := live.Finish(); err != nil {
		t.Fatal(err)
	}
	b.file("g.txt", strings.Repeat("g", 900), 0o644)
	b.begin()
	b.write("g.txt", "new")
	b.finish()
	check("after a prune and new runs")
	// A cache that does not read, or names a workspace it does not list.
	for _, bad := range []string{"{", `{"v":1,"ws":[],"runs":{"` + ids[0] + `":{"w":3,"k":5}}}`, `{"v":99}`} {
		if err := os.WriteFile(a.j.usagePath(), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		check("cache " + bad)
	}
	if got := a.j.loadUsage(); len(got) != 6 {
		t.Errorf("the cache holds %d runs, want the 6 that ended and are kept", len(got))
	}
	entries, _ := os.ReadDir(filepath.Join(a.j.Dir(), "tmp"))
	if len(entries) != 0 {
		t.Errorf("temp files left: %v", entries)
	}
}
