package gate

import (
	"context"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityOptionsKnownAtRunTime: at level full, under the default
// policy, sandboxed or not, a word computed when the command runs, where
// its program reads options, is judged as each option it may be: a
// reading a rule denies or asks about makes the command ask, naming the
// word; a reading the guard denies denies it. Words that are an option's
// value, or cannot begin with a dash, and ordinary work built from
// command substitutions stay as they were. The journal is off: with it,
// the default policy's undoable rules let git reset --hard, git clean -f
// and git checkout -- run at full, and so every reading of such a word.
func TestSecurityOptionsKnownAtRunTime(t *testing.T) {
	src := strings.Replace(string(policy.DefaultSource()), "\nlevel: supervised\n", "\nlevel: full\n", 1)
	f := newFixture(t, src)
	f.journal(false)
	cases := []struct {
		line                   string
		sandboxed, unsandboxed policy.Outcome
		why                    string // in the reason of an ask
	}{
		{"git push $(echo --force) origin main", policy.Ask, policy.Ask, "may be --mirror, --delete, --force or --prune (git push reads options there)"},
		{"git push origin \"$(cat ref)\"", policy.Ask, policy.Ask, "may be --mirror"},
		{"git push origin `echo +main`", policy.Deny, policy.Deny, ""},
		{"git push origin \"$BRANCH\"", policy.Ask, policy.Ask, "\"$BRANCH\" is known only when it runs"},
		{"git reset $(echo --hard) HEAD~1", policy.Ask, policy.Ask, "may be --hard"},
		{"git reset $ARGS", policy.Ask, policy.Ask, "may be --hard"},
		{"git branch $F old", policy.Ask, policy.Ask, "may be"},
		{"git clean $F", policy.Ask, policy.Ask, "which rule \"git clean -f (deletes untracked files)\" denies it"},
		{"git checkout $F main", policy.Deny, policy.Deny, ""},
		{"git push origin \"+$B\"", policy.Ask, policy.Ask, "reads as +…"},
		{"git push origin -- \":$B\"", policy.Ask, policy.Ask, "reads as :…"},
		{"git push origin HEAD:\"refs/heads/$B\"", policy.Allow, policy.Allow, ""},
		{"rm $(echo -rf) ~", policy.Deny, policy.Deny, ""},
		// Look-alikes.
		{"git commit -m \"$(cat msg)\"", policy.Allow, policy.Allow, ""},
		{"git push origin v$(cat VERSION)", policy.Allow, policy.Allow, ""},
		{"git push origin -- \"$B\"", policy.Allow, policy.Allow, ""},
		{"go test $(go list ./...)", policy.Ask, policy.Ask, ""}, // contained work only with the journal (below)
		{"ls $(dirname x)", policy.Allow, policy.Ask, ""},
		{"make check -j $(nproc)", policy.Ask, policy.Ask, ""},
		{"git diff $(git merge-base main HEAD) | cat", policy.Allow, policy.Ask, ""},
		{"git log --oneline \"$(git describe --tags --abbrev=0)\"..HEAD | cat", policy.Allow, policy.Ask, ""},
	}
	for _, tc := range cases {
		for _, unsandboxed := range []bool{false, true} {
			req := f.req("bash", "-c", tc.line)
			req.Unsandboxed = unsandboxed
			d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			want, where := tc.sandboxed, "sandboxed"
			if unsandboxed {
				want, where = tc.unsandboxed, "unsandboxed"
			}
			if d.Outcome != want {
				t.Errorf("%q %s: %s, want %s", tc.line, where, describe(d), want)
				continue
			}
			if tc.why != "" && d.Outcome == policy.Ask && !strings.Contains(d.Reason, tc.why) {
				t.Errorf("%q %s: the reason does not say %q: %s", tc.line, where, tc.why, d.Reason)
			}
		}
	}
	// With the journal, ordinary work built from command substitutions
	// is contained work under the sandbox.
	f.journal(true)
	for _, line := range []string{"go test $(go list ./...)", "make check -j $(nproc)"} {
		if d := f.decide(t, Mode{DryRun: true}, "bash", "-c", line); d.Outcome != policy.Allow {
			t.Errorf("%q with the journal: %s, want allow", line, describe(d))
		}
	}
}
