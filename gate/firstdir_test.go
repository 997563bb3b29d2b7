package gate

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityStartingDirectoryOnlyWhereItHolds: a command that runs once,
// before any cd, is judged where the script starts, so an agent's usual
// "cd tests && ls && cd .. && grep -rn TODO ." is judged in the
// workspace; but a command that may run again or later (a loop, a
// function, a trap, a background job) or after a cd the parser cannot
// follow keeps every directory the script may be in, so a loop that
// climbs out of the workspace is still caught.
func TestSecurityStartingDirectoryOnlyWhereItHolds(t *testing.T) {
	f := newFixture(t, "level: full\n")
	// The workspace's parent holds the home directory and its secrets.
	if err := os.MkdirAll(filepath.Join(f.home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.ws, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		script string
		deny   bool
	}{
		{"cd tests && ls && cd .. && grep -rn TODO .", false},
		// If cd tests fails, ; goes on and cd .. leaves the workspace.
		{"cd tests && go test ./... ; cd .. && grep -rn TODO .", true},
		{"grep -rn TODO . && cd tests && ls", false},
		// Runs again after the cd, or later, or elsewhere.
		{"for i in 1 2; do grep -rn x .; cd ..; done", true},
		{"f() { grep -rn x .; }; cd ..; f", true},
		{"trap 'grep -rn x .' EXIT; cd ..", true},
		{"cd .. && grep -rn x .", true},
		{"cd tests; cd ..; cd ..; grep -rn x .", true},
	} {
		d, err := f.g.Decide(context.Background(), f.req("bash", "-c", tc.script), Mode{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if (d.Outcome == policy.Deny) != tc.deny {
			t.Errorf("%s: %s (%s), want denied %v", tc.script, d.Outcome, d.Reason, tc.deny)
		}
	}
}
