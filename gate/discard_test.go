package gate

import (
	"context"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityGitCheckoutDiscardsAtFull: at level full, under the default
// policy, sandboxed or not, git checkout of paths over uncommitted work
// is not allowed (its equivalents, git restore, checkout -f and switch
// --discard-changes, are denied by the same rule), and switching or
// creating a branch is. With the journal on, what the rules deny runs
// under the sandbox, which the journal keeps (and is denied outside it),
// and its reason says how to undo it.
func TestSecurityGitCheckoutDiscardsAtFull(t *testing.T) {
	src := strings.Replace(string(policy.DefaultSource()), "\nlevel: supervised\n", "\nlevel: full\n", 1)
	f := newFixture(t, src)
	for _, journal := range []bool{false, true} {
		f.journal(journal)
		gitCheckoutDiscards(t, f, journal)
	}
}

func gitCheckoutDiscards(t *testing.T, f *fixture, journal bool) {
	cases := []struct {
		line string
		want policy.Outcome
	}{
		{"git checkout HEAD~3 README", policy.Deny},
		{"git checkout -- README", policy.Deny},
		{"git checkout .", policy.Deny},
		{"git checkout main src/app.go", policy.Deny},
		{"git checkout -p", policy.Deny},
		{"git restore README", policy.Deny},
		{"git restore --source=HEAD~3 .", policy.Deny},
		{"git checkout -f", policy.Deny},
		{"git switch --discard-changes main", policy.Deny},
		{"git switch -f main", policy.Deny},
		{"git checkout README.md", policy.Ask},
		{"git checkout -b x", policy.Allow},
		{"git checkout main", policy.Allow},
		{"git checkout -", policy.Allow},
		{"git switch x", policy.Allow},
		{"git restore --staged README", policy.Allow},
	}
	for _, tc := range cases {
		for _, unsandboxed := range []bool{false, true} {
			req := f.req("bash", "-c", tc.line)
			req.Unsandboxed = unsandboxed
			d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if journal && !unsandboxed && want == policy.Deny && tc.line != "git checkout -p" {
				want = policy.Allow
			}
			if d.Outcome != want {
				t.Errorf("%q (unsandboxed %v, journal %v): %s, want %s", tc.line, unsandboxed, journal, describe(d), want)
			}
			if journal && want == policy.Allow && tc.want == policy.Deny && !strings.Contains(d.Reason, "`mnemos undo --last` brings it back") {
				t.Errorf("%q: allowed by the journal, but the reason does not say how to undo it: %s", tc.line, d.Reason)
			}
		}
	}
}
