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
// creating a branch is.
func TestSecurityGitCheckoutDiscardsAtFull(t *testing.T) {
	src := strings.Replace(string(policy.DefaultSource()), "\nlevel: supervised\n", "\nlevel: full\n", 1)
	f := newFixture(t, src)
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
			if d.Outcome != tc.want {
				t.Errorf("%q (unsandboxed %v): %s, want %s", tc.line, unsandboxed, describe(d), tc.want)
			}
		}
	}
}
