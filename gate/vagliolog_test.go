package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/vaglio"
)

// TestVaglioLogOneLinePerVerdict: a decision that is not a dry run leaves
// one line per verdict (a guard's block, a judge's score) in the monthly
// file under the state directory; a dry run leaves none.
func TestVaglioLogOneLinePerVerdict(t *testing.T) {
	f := newFixture(t, "")
	dir := f.g.cfg.Paths.VaglioDir
	if want := filepath.Join(f.g.cfg.Paths.StateDir, "vaglio"); dir != want {
		t.Fatalf("VaglioDir %s, want %s", dir, want)
	}
	f.decide(t, Mode{DryRun: true}, "ls", "-la")
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a dry run wrote the log: %v", err)
	}
	f.decide(t, Mode{}, "bash", "-c", "ls -la secretdir; rm -rf /")
	f.decide(t, Mode{SpendTicket: true}, "ls", "--color=never")
	recs, skipped, err := vaglio.ReadLog(dir, 0)
	if err != nil || skipped != 0 {
		t.Fatal(err, skipped)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3: %+v", len(recs), recs)
	}
	if r := recs[0]; !r.Approved || r.Executor != "ls" || strings.Join(r.ArgsKeys, ",") != "-l,-a" || r.BlockedBy != "" {
		t.Errorf("first record %+v", r)
	}
	if r := recs[1]; r.Approved || r.BlockedBy != vaglio.BlockedByGuard || r.Executor != "rm" {
		t.Errorf("second record %+v", r)
	}
	if r := recs[2]; r.Executor != "ls" || strings.Join(r.ArgsKeys, ",") != "--color" {
		t.Errorf("third record %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "2026-11.jsonl")); err != nil {
		t.Fatal(err)
	}
}

// TestSecurityVaglioLogFailureNeverChangesTheDecision: with a log that
// cannot be written every decision is the one it would have been, and the
// failure is reported once per gate.
func TestSecurityVaglioLogFailureNeverChangesTheDecision(t *testing.T) {
	f := newFixture(t, "")
	var reports []error
	f.g.cfg.VaglioLogFailed = func(err error) { reports = append(reports, err) }
	dir := f.g.cfg.Paths.VaglioDir
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		argv []string
		want policy.Outcome
	}{
		{[]string{"ls"}, policy.Allow},
		{[]string{"rm", "-rf", "/"}, policy.Deny},
		{[]string{"touch", "x"}, policy.Ask},
	} {
		d, err := f.g.Decide(context.Background(), f.req(c.argv...), Mode{SpendTicket: true})
		if err != nil {
			t.Fatalf("%v: %v", c.argv, err)
		}
		if d.Outcome != c.want {
			t.Errorf("%v: %s, want %s", c.argv, d.Outcome, c.want)
		}
	}
	if len(reports) != 1 {
		t.Fatalf("%d reports, want 1: %v", len(reports), reports)
	}
	if f.audit.count("policy.decision") != 3 {
		t.Errorf("the audit log missed decisions")
	}
}

// TestSecurityVaglioLogIsProtected: the log lies under the state directory
// the guard protects: no gated command writes or removes it.
func TestSecurityVaglioLogIsProtected(t *testing.T) {
	f := newFixture(t, "level: full\ndefaults: {shell: allow}\n")
	// State apart from configuration, as without MNEMOS_HOME.
	paths, err := Locate("", func(string) string { return "" }, f.home)
	if err != nil {
		t.Fatal(err)
	}
	f.g.cfg.Paths = paths
	file := filepath.Join(f.g.cfg.Paths.VaglioDir, "2026-11.jsonl")
	for _, argv := range [][]string{
		{"touch", file},
		{"rm", "-f", file},
		{"bash", "-c", "echo '{}' >> " + file},
		{"rm", "-r", f.g.cfg.Paths.VaglioDir},
	} {
		d := f.decide(t, Mode{DryRun: true}, argv...)
		if d.Outcome != policy.Deny || d.BlockedBy != "guard" {
			t.Errorf("%v: %s by %s, want deny by the guard", argv, d.Outcome, d.BlockedBy)
		}
	}
}
