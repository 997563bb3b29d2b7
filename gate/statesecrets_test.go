package gate

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityStateSecretsFollowThePaths: the state secrets a gate keeps
// from one decision to the next are those of its paths as they are now,
// not as they were when it first decided.
func TestSecurityStateSecretsFollowThePaths(t *testing.T) {
	f := newFixture(t, "level: full\ndefaults: {shell: allow}\nallow:\n  - {name: cat, command: {argv_prefix: [cat]}}\n")
	decide := func(cmd string) Decision {
		t.Helper()
		req := f.req("bash", "-c", cmd)
		req.Unsandboxed = true
		d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for round := range 2 {
		for _, p := range []string{f.g.cfg.Paths.DBFile, audit.KeyPath(f.g.cfg.Paths.AuditFile), f.g.hookTicketDir() + "/t"} {
			if d := decide("cat " + p); d.Outcome != policy.Deny || d.BlockedBy != "guard" {
				t.Errorf("round %d: cat %s = %s by %s (%s), want a guard deny", round, p, d.Outcome, d.BlockedBy, d.Reason)
			}
		}
		moved := filepath.Join(filepath.Dir(f.home), "mh")
		paths, err := Locate(moved, func(string) string { return "" }, f.home)
		if err != nil {
			t.Fatal(err)
		}
		f.g.cfg.Paths = paths
	}
}

// TestSecuritySecretsDirectoryWhole: outside the sandbox the guard refuses
// any command naming a path in the secrets directory, its socket
// included, and a pattern the shell expands that may reach into it, even
// through hidden names or brackets (which make the pattern known only
// when it runs), as it does the older layout's names.
func TestSecuritySecretsDirectoryWhole(t *testing.T) {
	f := newFixture(t, "level: full\ndefaults: {shell: allow}\nallow:\n  - {name: cat, command: {argv_prefix: [cat]}}\n")
	p := f.g.cfg.Paths
	state, secrets := p.StateDir, p.SecretsDir
	base := filepath.Base(state)
	for _, cmd := range []string{
		"cat " + p.AuditKey,
		"cat " + p.DBFile + "-wal",
		"cat " + p.ServeSocket(),
		"cat " + secrets + "/anything",
		"cat " + secrets + "/*",
		"cat " + state + "/*/audit.key",
		"cat " + filepath.Dir(state) + "/*/s*/a*",
		"cat " + filepath.Dir(state) + "/" + base[:1] + "[" + base[1:2] + "]" + base[2:] + "/secrets/audit.key",
		"cat " + state + "/[s]ecrets/state.db",
		"cat " + state + "/audit.key",
		"cat " + state + "/state.db",
		"cat " + state + "/serve.token",
		"cat " + state + "/hook-tickets/t",
	} {
		req := f.req("bash", "-c", cmd)
		req.Unsandboxed = true
		d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if d.Outcome != policy.Deny || d.BlockedBy != "guard" {
			t.Errorf("%s = %s by %s (%s), want a guard deny", cmd, d.Outcome, d.BlockedBy, d.Reason)
		}
	}
	// A redirection with no program, in a command substitution.
	for _, cmd := range []string{
		"k=$(<" + p.AuditKey + "); echo $k",
		`printf %s "$(< ` + p.DBFile + `)"`,
	} {
		req := f.req("bash", "-c", cmd)
		req.Unsandboxed = true
		d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if d.Outcome != policy.Deny {
			t.Errorf("%s = %s by %s (%s), want deny", cmd, d.Outcome, d.BlockedBy, d.Reason)
		}
	}
}
