package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityBigDeletionTheJournalCannotKeepAsks: a big deletion runs
// at full because the journal keeps it. When it cannot (a file above
// max_file, more than the quota in all, a tree too big to check), the
// deletion asks at full, saying why, instead of running and warning
// afterwards that undo cannot bring it back.
func TestSecurityBigDeletionTheJournalCannotKeepAsks(t *testing.T) {
	requireJournalSandbox(t)
	f := repoFixture(t, policy.Full, map[string]string{"main.go": "package main\n"})
	f.journal(true)
	sparse := func(p string, size int64) {
		t.Helper()
		fh, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := fh.Truncate(size); err != nil {
			t.Fatal(err)
		}
		fh.Close()
	}
	writeTree(t, filepath.Join(f.ws, "assets"), 60)
	sparse(filepath.Join(f.ws, "assets", "model.bin"), 65<<20)
	writeTree(t, filepath.Join(f.ws, "media"), 60)
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		sparse(filepath.Join(f.ws, "media", n+".mov"), 60<<20)
	}
	writeTree(t, filepath.Join(f.ws, "gen"), 60)
	for _, tc := range []struct{ cmd, why string }{
		{"rm -rf assets", "assets/model.bin"},
		{"rm -rf media", "quota"},
	} {
		d := f.decide(t, Mode{DryRun: true}, "bash", "-c", tc.cmd)
		if d.Outcome != policy.Ask || !strings.Contains(d.Reason, tc.why) {
			t.Errorf("%s at full with the journal: %s (%s), want ask naming %s", tc.cmd, d.Outcome, d.Reason, tc.why)
		}
	}
	if d := f.decide(t, Mode{DryRun: true}, "bash", "-c", "rm -rf gen"); d.Outcome != policy.Allow {
		t.Errorf("rm -rf gen at full with the journal: %s (%s)", d.Outcome, d.Reason)
	}
}
