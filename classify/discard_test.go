package classify

import (
	"strings"
	"testing"
)

// TestSecurityGitCheckoutOfPathsDiscards: every form of git checkout that
// puts paths back over the work tree (from the index or a commit) throws
// away their uncommitted changes, as git restore does: its verb says so
// (the default policy denies it). One operand that may be a branch or a
// file asks when it looks like a file. Switching branches, creating one,
// detaching, and unstaging stay what they were.
func TestSecurityGitCheckoutOfPathsDiscards(t *testing.T) {
	cases := []struct {
		src  string
		verb string // VerbDiscard, or "" for a change of the repository
		asks bool   // a floor: the operand may be a file
	}{
		{"git checkout HEAD~3 README", VerbDiscard, false},
		{"git checkout main src/app.go", VerbDiscard, false},
		{"git checkout tests/a.py tests/b.py", VerbDiscard, false},
		{"git checkout -- README", VerbDiscard, false},
		{"git checkout HEAD -- .", VerbDiscard, false},
		{"git checkout .", VerbDiscard, false},
		{"git checkout -p", VerbDiscard, false},
		{"git checkout --patch HEAD~1", VerbDiscard, false},
		{"git checkout -qp", VerbDiscard, false},
		{"git checkout --pathspec-from-file=list.txt", VerbDiscard, false},
		{"git checkout --ours conflicted.c other.c", VerbDiscard, false},
		{"git checkout --theirs file.c", VerbDiscard, false},
		{"git checkout -f", VerbDiscard, false},
		{"git checkout --force main", VerbDiscard, false},
		{"git checkout $REF src", VerbDiscard, false},
		{"git restore README", VerbDiscard, false},
		{"git restore --source=HEAD~3 .", VerbDiscard, false},
		{"git restore -s HEAD~3 README", VerbDiscard, false},
		{"git switch --discard-changes main", VerbDiscard, false},
		{"git switch -f main", VerbDiscard, false},
		{"git checkout README.md", "", true},
		{"git checkout src/", VerbDiscard, false},
		{"git checkout ./README", VerbDiscard, false},
		{"git checkout '*.go'", VerbDiscard, false},
		{"git checkout :/docs", VerbDiscard, false},
		// Look-alikes.
		{"git checkout main", "", false},
		{"git checkout -", "", false},
		{"git checkout feature/login", "", false},
		{"git checkout v1.2.3", "", false},
		{"git checkout release-2.0", "", false},
		{"git checkout HEAD~2", "", false},
		{"git checkout -b feature", "", false},
		{"git checkout -b feature origin/main", "", false},
		{"git checkout -bfix origin/main", "", false},
		{"git checkout -B feature HEAD~1", "", false},
		{"git checkout --orphan gh-pages", "", false},
		{"git checkout --detach HEAD~2", "", false},
		{"git checkout -t origin/feature", "", false},
		{"git checkout -q main", "", false},
		{"git switch feature", "", false},
		{"git switch -c feature", "", false},
		{"git restore --staged README", "", false},
	}
	for _, tc := range cases {
		c := classifyFirst(t, tc.src)
		want := tc.verb
		if want == "" {
			want = "change the repository"
		}
		if c.Verb != want {
			t.Errorf("%s: verb %q, want %q", tc.src, c.Verb, want)
		}
		asks := c.Floor == Ask && strings.Contains(c.FloorReason, "restores")
		if asks != tc.asks {
			t.Errorf("%s: asks as a possible file %v (%s %s), want %v", tc.src, asks, c.Floor, c.FloorReason, tc.asks)
		}
	}
}
