package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// dropsFixture is a repository at level like a new user's web project:
// committed main.go, README.md, docs/design.md, .gitignore (dist/,
// node_modules/, *.log) and gen/ (60 files); then main.go edited,
// notes.txt and internal/util/mul.go untracked, build.log ignored, and
// the ignored dist/ (a hand-written HOTFIX.md) and node_modules/.
func dropsFixture(t *testing.T, level policy.Level) *fixture {
	t.Helper()
	files := map[string]string{"main.go": "package main\n", "README.md": "# p\n", "docs/design.md": "d\n",
		".gitignore": "dist/\nnode_modules/\n*.log\n"}
	for i := range 60 {
		files[filepath.Join("gen", "f"+string(rune('a'+i/26))+string(rune('a'+i%26))+".txt")] = "x\n"
	}
	f := repoFixture(t, level, files)
	for name, content := range map[string]string{"main.go": "package main // edited\n", "notes.txt": "mine\n",
		"internal/util/mul.go": "package util\n", "build.log": "ok\n", "dist/HOTFIX.md": "hand-written\n",
		"node_modules/x/index.js": "m\n"} {
		p := filepath.Join(f.ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// dropsCase is a command and what it gets at full without the journal,
// at full with it, and at supervised with it, with a word its reason
// holds at full with the journal ("" for none).
type dropsCase struct {
	cmd             string
	off, on, superv policy.Outcome
	why             string
}

func judgeDrops(t *testing.T, full, supervised *fixture, cases []dropsCase) {
	t.Helper()
	supervised.journal(true)
	for _, tc := range cases {
		for i, r := range []struct {
			f    *fixture
			on   bool
			want policy.Outcome
		}{{full, false, tc.off}, {full, true, tc.on}, {supervised, true, tc.superv}} {
			r.f.journal(r.on)
			d := corpusDecide(t, r.f, tc.cmd)
			if d.Outcome != r.want {
				t.Errorf("%s (%d: journal %v): %s; want %s", tc.cmd, i, r.on, describe(d), r.want)
				continue
			}
			if i == 1 && tc.why != "" && !strings.Contains(d.Reason, tc.why) {
				t.Errorf("%s at full with the journal: the reason does not say %q: %s", tc.cmd, tc.why, d.Reason)
			}
			if i == 1 && d.Outcome == policy.Allow && strings.Contains(tc.why, "mnemos undo") && !strings.Contains(d.Reason, "`mnemos undo --last` brings it back") {
				t.Errorf("%s at full with the journal: allowed without saying how to undo it: %s", tc.cmd, d.Reason)
			}
		}
	}
}

// TestSecurityUntrackedFilesAreWorkGitCannotGiveBack: a file git does
// not track (and does not ignore) is work only the journal brings back.
// Without the journal, deleting one asks at full (the user's TODO.txt
// was gone for good); with it, it runs at full saying how to undo it.
// What git ignores (build.log) and what it holds as committed runs as
// the level says.
func TestSecurityUntrackedFilesAreWorkGitCannotGiveBack(t *testing.T) {
	requireJournalSandbox(t)
	judgeDrops(t, dropsFixture(t, policy.Full), dropsFixture(t, policy.Supervised), []dropsCase{
		{"rm -f notes.txt", policy.Ask, policy.Allow, policy.Ask, "deletes notes.txt, which git does not track (the journal keeps it: `mnemos undo --last` brings it back)"},
		{"rm -rf internal", policy.Ask, policy.Allow, policy.Ask, "deletes internal/util/mul.go, which git does not track"},
		{"rm -rf internal main.go notes.txt", policy.Ask, policy.Allow, policy.Ask, "deletes main.go, which has uncommitted changes, and 2 files git does not track (internal/util/mul.go, notes.txt)"},
		{"rm -f build.log", policy.Allow, policy.Allow, policy.Ask, ""},
		{"rm -f *.log", policy.Allow, policy.Allow, policy.Ask, ""},
		{"rm -f README.md", policy.Allow, policy.Allow, policy.Ask, ""},
		{"rm -f nothere.txt", policy.Allow, policy.Allow, policy.Ask, ""},
		// What the journal excludes counts for nothing, as before.
		{"rm -rf node_modules", policy.Allow, policy.Allow, policy.Ask, ""},
	})
	// With the journal below level full, a few untracked files are
	// covered as writing them is: the session's contained work.
	f := dropsFixture(t, policy.Supervised)
	f.journal(true)
	d := corpusDecide(t, f, "rm -f notes.txt")
	if !strings.Contains(strings.Join(dropLines(&d), "\n"), "deletes notes.txt, which git does not track; the journal keeps it") {
		t.Errorf("rm -f notes.txt at supervised: the card does not say what it drops: %q", dropLines(&d))
	}
}

// TestSecurityFindDeletesWhatItSelects: find -delete counts what its
// expression selects (find . -name '*.md' -delete removes two files, not
// "more than 50", and "." is not outside the workspace), and what it
// selects under .git, the repository's own files, asks at every level
// whatever the journal keeps, as does an expression mnemos cannot read.
func TestSecurityFindDeletesWhatItSelects(t *testing.T) {
	requireJournalSandbox(t)
	full, supervised := dropsFixture(t, policy.Full), dropsFixture(t, policy.Supervised)
	judgeDrops(t, full, supervised, []dropsCase{
		{"find . -name '*.md' -delete", policy.Allow, policy.Allow, policy.Ask, ""},
		{"find -name '*.md' -delete", policy.Allow, policy.Allow, policy.Ask, ""},
		{"find . -iname '*.MD' -type f -delete", policy.Allow, policy.Allow, policy.Ask, ""},
		{"find gen -name 'fa*' -delete", policy.Allow, policy.Allow, policy.Ask, ""},
		{"find gen -type f -delete", policy.Ask, policy.Allow, policy.Ask, "deletes more than 50 files"},
		{"find . -name '*.txt' -delete", policy.Ask, policy.Allow, policy.Ask, "deletes more than 50 files"},
		{"find . -name '*.go' -delete", policy.Ask, policy.Allow, policy.Ask, "deletes main.go, which has uncommitted changes, and internal/util/mul.go, which git does not track"},
		{"find . -path ./.git -prune -o -name '*.orig' -delete", policy.Allow, policy.Allow, policy.Ask, ""},
		{"find .git -name '*.lock' -delete", policy.Allow, policy.Allow, policy.Ask, ""},
		// The repository's own files.
		{"find . -type f -delete", policy.Ask, policy.Ask, policy.Ask, "the repository's own files under .git"},
		{"find -type f -delete", policy.Ask, policy.Ask, policy.Ask, "the repository's own files under .git"},
		{"find . -name index -delete", policy.Ask, policy.Ask, policy.Ask, "deletes .git/index, the repository's own files under .git"},
		{"find . -name HEAD -o -name '*.md' -delete", policy.Allow, policy.Allow, policy.Ask, ""},
		{"find . \\( -name HEAD -o -name '*.md' \\) -delete", policy.Ask, policy.Ask, policy.Ask, ".git/HEAD, the repository's own files"},
		{"find . ! -name '*.md' -delete", policy.Ask, policy.Ask, policy.Ask, ".git"},
		{"find . -mindepth 1 -maxdepth 1 -name '.g*' -delete", policy.Allow, policy.Allow, policy.Ask, ""},
		{"find . -type d -empty -delete", policy.Ask, policy.Ask, policy.Ask, ".git"},
		// An expression mnemos does not read, with .git below.
		{"find . -newer main.go -delete", policy.Ask, policy.Ask, policy.Ask, "deletes what find's expression selects below ., .git included"},
		{"find . -name '*.md' -size +1k -delete", policy.Ask, policy.Ask, policy.Ask, ".git included"},
		{"find gen -newer main.go -delete", policy.Ask, policy.Allow, policy.Ask, "deletes more than 50 files"},
	})
	for _, cmd := range []string{"find . -name '*.md' -delete", "find . -type f -delete"} {
		if d := corpusDecide(t, full, cmd); strings.Contains(d.Reason, "outside the workspace") || strings.Contains(d.Reason, "more than 50") {
			t.Errorf("%s: %s", cmd, d.Reason)
		}
	}
	// What it selects in a directory the journal excludes (the
	// hand-written dist/HOTFIX.md) runs as before, and the reason says
	// the journal does not keep it.
	full.journal(true)
	for _, tc := range []struct{ cmd, why string }{
		{"find . -name '*.md' -delete", "the journal does not keep what it removes in dist/ (journal: exclude)"},
		{"rm -rf *", "`mnemos undo --last` brings it back, but not what it removes in dist/, node_modules/, which the journal excludes"},
	} {
		if d := corpusDecide(t, full, tc.cmd); d.Outcome != policy.Allow || !strings.Contains(d.Reason, tc.why) {
			t.Errorf("%s at full with the journal: %s; want allowed, saying %q", tc.cmd, describe(d), tc.why)
		}
	}
}

// TestSecurityUndoableRuleStandsAsideOnlyForWhatTheJournalKeeps: an
// undoable rule lets its command run at full only while the journal
// keeps what it drops. git clean -x and -X remove what git ignores, the
// excluded directories the journal does not keep (dist/ holds a
// hand-written file): the rule asks at every level, saying so. git
// reset --hard and checkout discard uncommitted changes in an excluded
// directory the same way.
func TestSecurityUndoableRuleStandsAsideOnlyForWhatTheJournalKeeps(t *testing.T) {
	requireJournalSandbox(t)
	full, supervised := dropsFixture(t, policy.Full), dropsFixture(t, policy.Supervised)
	notKept := "which the journal does not keep"
	judgeDrops(t, full, supervised, []dropsCase{
		{"git clean -fdx", policy.Deny, policy.Ask, policy.Ask, "removes the ignored and untracked files in dist/, node_modules/, " + notKept},
		{"git clean -fX", policy.Deny, policy.Ask, policy.Ask, notKept},
		{"git clean -xdf", policy.Deny, policy.Ask, policy.Ask, notKept},
		{"git clean -f -d -x", policy.Deny, policy.Ask, policy.Ask, notKept},
		{"git clean -fdx dist", policy.Deny, policy.Ask, policy.Ask, notKept},
		// Without -x git leaves what it ignores.
		{"git clean -fd", policy.Deny, policy.Allow, policy.Ask, "`mnemos undo --last` brings it back"},
		{"git clean -ndx", policy.Ask, policy.Allow, policy.Ask, ""},
		{"git reset --hard", policy.Deny, policy.Allow, policy.Ask, "`mnemos undo --last` brings it back"},
		{"git checkout -- .", policy.Deny, policy.Allow, policy.Ask, "`mnemos undo --last` brings it back"},
		{"git stash drop", policy.Ask, policy.Allow, policy.Ask, ""},
	})
	// An excluded directory git does not ignore: git clean -d removes its
	// untracked files.
	for _, f := range []*fixture{full, supervised} {
		if err := os.MkdirAll(filepath.Join(f.ws, "target"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(f.ws, "target", "notes.md"), []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	judgeDrops(t, full, supervised, []dropsCase{
		{"git clean -fd", policy.Deny, policy.Ask, policy.Ask, "removes the untracked files in target/, " + notKept},
	})
	// A file git holds with uncommitted changes in an excluded directory.
	f := repoFixture(t, policy.Full, map[string]string{"main.go": "package main\n", "dist/index.js": "a\n"})
	if err := os.WriteFile(filepath.Join(f.ws, "dist", "index.js"), []byte("edited by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.journal(true)
	for _, cmd := range []string{"git reset --hard", "git checkout -- .", "git restore ."} {
		d := corpusDecide(t, f, cmd)
		if d.Outcome != policy.Ask || !strings.Contains(d.Reason, "discards the uncommitted changes of dist/index.js, "+notKept) {
			t.Errorf("%s with dist/index.js edited: %s", cmd, describe(d))
		}
	}
}

// TestCardsSayWhatTheJournalKeeps: a card whose command the journal
// keeps whole says it can be undone, not "irreversible"; a big deletion
// at supervised, which asks each time, offers nothing to remember and no
// contained work, saying why; the explanation of an undoable rule that
// stood aside says so.
func TestCardsSayWhatTheJournalKeeps(t *testing.T) {
	requireJournalSandbox(t)
	f := dropsFixture(t, policy.Supervised)
	f.journal(true)
	for _, tc := range []struct {
		cmd, rev string
		nothing  bool
	}{
		{"rm -rf gen", "undoable (`mnemos undo`)", true},
		{"rm -rf internal main.go", "undoable (`mnemos undo`)", true},
		{"git checkout -- .", "undoable (`mnemos undo`)", true},
		{"rm -f notes.txt", "undoable (`mnemos undo`)", false},
		{"git clean -fdx", "partial", true},
		// The journal keeps all but dist/ and node_modules/.
		{"rm -rf *", "partial", true},
		{"curl https://example.com -o x", "partial", false},
	} {
		d := f.decide(t, Mode{}, "bash", "-c", tc.cmd)
		if d.Approval == nil {
			t.Fatalf("%s: no approval parked (%s)", tc.cmd, describe(d))
		}
		card := strings.Join(d.Card, "\n")
		if !strings.Contains(card, tc.rev+" | class:") && !strings.Contains(card, "["+abbrevRev(tc.rev)+" | ") {
			t.Errorf("%s: the card does not say %q:\n%s", tc.cmd, tc.rev, card)
		}
		choices := RememberChoices(*d.Approval)
		nothing := len(choices) == 1 && strings.HasPrefix(choices[0], "nothing: ")
		if nothing != tc.nothing {
			t.Errorf("%s: remember choices %q, want nothing %v", tc.cmd, choices, tc.nothing)
		}
		if tc.nothing && (strings.Contains(card, "--remember contained") || !strings.Contains(choices[0], "approve it once")) {
			t.Errorf("%s: offers what would not stop it asking:\n%s\n%q", tc.cmd, card, choices)
		}
	}
}

func abbrevRev(r string) string {
	if r == "undoable (`mnemos undo`)" {
		return "undo"
	}
	return r
}
