package gate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
)

// git runs git in dir with a configuration of its own, failing the test
// when it fails.
func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "PATH=" + os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// writeTree writes n files under dir/sub (n files named f0..).
func writeTree(t *testing.T, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", i)), []byte(fmt.Sprintf("package x // %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// repoFixture is a fixture whose workspace is a git repository with one
// commit of the files given.
func repoFixture(t *testing.T, level policy.Level, files map[string]string) *fixture {
	t.Helper()
	src := strings.Replace(string(policy.DefaultSource()), "\nlevel: supervised\n", "\nlevel: "+level.String()+"\n", 1)
	f := newFixture(t, src)
	if err := os.RemoveAll(filepath.Join(f.ws, ".git")); err != nil {
		t.Fatal(err)
	}
	gitRun(t, f.ws, "init", "-q")
	for name, content := range files {
		p := filepath.Join(f.ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitRun(t, f.ws, "add", "-A")
	gitRun(t, f.ws, "commit", "-qm", "init", "--allow-empty")
	return f
}

func requireJournalSandbox(t *testing.T) {
	t.Helper()
	if !keepsPromises(sandbox.Probe()) {
		t.Skip("the sandbox does not keep all its promises here: nothing counts as contained")
	}
}

// TestSecurityRememberedContainedNeedsTheJournal is issue 21's case:
// after one --remember contained approval on a harmless command, sh -c
// 'rm -rf *' deleted the whole project without asking. Without the
// journal, contained work is not remembered, and the deletion asks; with
// it, a deletion of more than big_deletion files still asks at
// supervised, its card saying how to undo it.
func TestSecurityRememberedContainedNeedsTheJournal(t *testing.T) {
	requireJournalSandbox(t)
	f := repoFixture(t, policy.Supervised, map[string]string{"main.go": "package main\n"})
	writeTree(t, filepath.Join(f.ws, "src"), 60)
	if err := os.WriteFile(filepath.Join(f.ws, "notes.txt"), []byte("untracked, mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dev := approvals.Identity{Channel: "cli", Sender: "dev"}
	req := func(argv ...string) Request {
		r := f.req(argv...)
		r.Session = "s1"
		return r
	}
	ctx := context.Background()

	// Without the journal nothing is contained work: no concession.
	f.journal(false)
	d, err := f.g.Decide(ctx, req("gofmt", "-l", "."), Mode{})
	if err != nil || d.Outcome != policy.Ask {
		t.Fatalf("gofmt -l . at supervised: %s, %v", d.Outcome, err)
	}
	if card := strings.Join(d.Card, "\n"); strings.Contains(card, "--remember contained") {
		t.Errorf("the card offers contained work without the journal:\n%s", card)
	}
	if _, err := f.g.Approve(ctx, d.Approval.Token, dev, ApproveOptions{Remember: "contained"}); err == nil {
		t.Error("--remember contained accepted without the journal")
	}

	// With it, the concession is offered and says changes can be undone.
	f.journal(true)
	d, err = f.g.Decide(ctx, req("go", "vet", "./..."), Mode{})
	if err != nil || d.Outcome != policy.Ask {
		t.Fatalf("go vet at supervised: %s, %v", d.Outcome, err)
	}
	if card := strings.Join(d.Card, "\n"); !strings.Contains(card, "changes can be undone with `mnemos undo`") || !strings.Contains(card, "--remember contained") {
		t.Errorf("the card does not offer contained work as undoable:\n%s", card)
	}
	if _, err := f.g.Approve(ctx, d.Approval.Token, dev, ApproveOptions{Remember: "contained"}); err != nil {
		t.Fatal(err)
	}
	decide := func(argv ...string) Decision {
		t.Helper()
		d, err := f.g.Decide(ctx, req(argv...), Mode{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := decide("go", "test", "./..."); d.Outcome != policy.Allow {
		t.Fatalf("go test after --remember contained: %s (%s)", d.Outcome, d.Reason)
	}
	// The project holds more files than big_deletion: it asks, and the
	// card says how to undo it.
	d = decide("sh", "-c", "rm -rf *")
	if d.Outcome != policy.Ask || !strings.Contains(d.Reason, "deletes more than 50 files") || !strings.Contains(d.Reason, "mnemos undo --last") {
		t.Errorf("sh -c 'rm -rf *' at supervised with the journal: %s (%s), want ask saying how to undo it", d.Outcome, d.Reason)
	}
	parked, err := f.g.Decide(ctx, req("sh", "-c", "rm -rf *"), Mode{})
	if err != nil {
		t.Fatal(err)
	}
	if card := strings.Join(parked.Card, "\n"); !strings.Contains(card, "drops work: sh -c rm -rf *: deletes more than 50 files; the journal keeps it: after it runs, `mnemos undo --last` brings it back") {
		t.Errorf("the card does not say how to undo the deletion:\n%s", card)
	}
	// Small and clean, it is contained work.
	if d := decide("rm", "-rf", "main.go"); d.Outcome != policy.Allow {
		t.Errorf("rm -rf main.go (committed): %s (%s), want allowed as contained work", d.Outcome, d.Reason)
	}

	// The journal off again (a kernel that cannot trap the changes): the
	// remembered concession covers nothing, and the deletion asks as the
	// level says.
	f.journal(false)
	for _, argv := range [][]string{{"sh", "-c", "rm -rf *"}, {"rm", "-rf", "main.go"}, {"go", "test", "./..."}} {
		if d := decide(argv...); d.Outcome == policy.Allow {
			t.Errorf("%v after --remember contained, without the journal: allowed (%s)", argv, d.Reason)
		}
	}
}

// TestSecurityBigDeletionAtFull: at level full, a deletion of more than
// big_deletion files, or of a file with uncommitted changes, runs only
// while the journal keeps it, saying how to undo it; without the journal
// it asks. A small deletion of committed files runs either way.
func TestSecurityBigDeletionAtFull(t *testing.T) {
	requireJournalSandbox(t)
	f := repoFixture(t, policy.Full, map[string]string{"main.go": "package main\n", "lib/a.go": "package lib\n", "lib/b.go": "package lib\n"})
	writeTree(t, filepath.Join(f.ws, "gen"), 60)
	writeTree(t, filepath.Join(f.ws, "node_modules", "left-pad"), 200)
	if err := os.WriteFile(filepath.Join(f.ws, "lib", "b.go"), []byte("package lib // edited, not committed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd       string
		off, on   policy.Outcome
		whyOff    string
		undoneOn  bool
		onAllowed string
	}{
		{"rm -rf gen", policy.Ask, policy.Allow, "deletes more than 50 files, and no journal keeps it", true, ""},
		{"sh -c 'rm -rf *'", policy.Ask, policy.Allow, "deletes more than 50 files", true, ""},
		{"find gen -name '*.go' -delete", policy.Ask, policy.Allow, "deletes more than 50 files", true, ""},
		{"rm lib/b.go", policy.Ask, policy.Allow, "deletes lib/b.go, which has uncommitted changes", true, ""},
		{"rm -r lib", policy.Ask, policy.Allow, "deletes lib/b.go, which has uncommitted changes", true, ""},
		{"rm main.go lib/a.go", policy.Allow, policy.Allow, "", false, ""},
		// What their tools make again is not counted.
		{"rm -rf node_modules", policy.Allow, policy.Allow, "", false, ""},
		// rm without -r removes no directory's contents.
		{"rm -f gen", policy.Allow, policy.Allow, "", false, ""},
	} {
		for _, on := range []bool{false, true} {
			f.journal(on)
			d := f.decide(t, Mode{DryRun: true}, "bash", "-c", tc.cmd)
			want := tc.off
			if on {
				want = tc.on
			}
			if d.Outcome != want {
				t.Errorf("%s at full, journal %v: %s (%s), want %s", tc.cmd, on, d.Outcome, d.Reason, want)
				continue
			}
			if !on && tc.whyOff != "" && !strings.Contains(d.Reason, tc.whyOff) {
				t.Errorf("%s at full without the journal: the reason does not say %q: %s", tc.cmd, tc.whyOff, d.Reason)
			}
			if on && tc.undoneOn && !strings.Contains(d.Reason, "`mnemos undo --last` brings it back") {
				t.Errorf("%s at full with the journal: the reason does not say how to undo it: %s", tc.cmd, d.Reason)
			}
			if on != d.Journaled {
				t.Errorf("%s: Decision.Journaled %v with the journal %v", tc.cmd, d.Journaled, on)
			}
		}
	}
	// A hook's command runs outside the sandbox: nothing keeps it.
	f.journal(true)
	r := f.req("rm", "-rf", "gen")
	r.Unsandboxed = true
	d, err := f.g.Decide(context.Background(), r, Mode{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome == policy.Allow || d.Journaled {
		t.Errorf("rm -rf gen outside the sandbox, journal on: %s (%s), journaled %v", d.Outcome, d.Reason, d.Journaled)
	}
}

// TestSecurityJournalLoosensNoGuard: with the journal on at full, what
// the guard denies (the workspace itself, home, /, .git) stays denied,
// and a deletion outside the workspace still asks.
func TestSecurityJournalLoosensNoGuard(t *testing.T) {
	requireJournalSandbox(t)
	f := repoFixture(t, policy.Full, map[string]string{"main.go": "package main\n"})
	f.journal(true)
	for _, cmd := range []string{"rm -rf .", "rm -rf ~", "rm -rf /", "find . -delete", "rm -rf .git", "rm -rf @HOME@/*"} {
		d := corpusDecide(t, f, cmd)
		if d.Outcome != policy.Deny || d.BlockedBy != "guard" {
			t.Errorf("%s at full with the journal: %s", cmd, describe(d))
		}
	}
	for _, cmd := range []string{"rm -rf /srv/data", "rm -rf /etc/x", "git -C ../other reset --hard", "rm -rf $DIR"} {
		if d := corpusDecide(t, f, cmd); d.Outcome == policy.Allow {
			t.Errorf("%s at full with the journal: allowed (%s)", cmd, d.Reason)
		}
	}
}

// TestJournaledPredicate: the journal is on for a request only when the
// policy enables it, the kernel can trap changes, the command runs under
// the sandbox, and the workspace is not the home directory.
func TestJournaledPredicate(t *testing.T) {
	requireJournalSandbox(t)
	f := newFixture(t, "")
	if !f.g.journaled(f.ws) {
		t.Fatal("the journal is off with the defaults")
	}
	f.journal(false)
	if f.g.journaled(f.ws) {
		t.Error("the journal is on where the kernel cannot trap changes")
	}
	f.g.cfg.Watch = nil
	if f.g.journaled(f.ws) {
		t.Error("the journal is on with no Watch")
	}
	f.journal(true)
	for _, ws := range []string{f.home, filepath.Dir(f.home), "/", "", "rel"} {
		if f.g.journaled(ws) {
			t.Errorf("the journal is on for workspace %q", ws)
		}
	}
	off := newFixture(t, "journal:\n  enabled: false\n")
	if off.g.journaled(off.ws) {
		t.Error("the journal is on where the policy turns it off")
	}
	// The --policy file can turn it off, never on.
	cfg := f.g.Config()
	cfg.Extra, _ = policy.Parse("extra.yaml", []byte("journal:\n  enabled: false\n  big_deletion: 5\n"))
	g := New(cfg)
	if g.journaled(f.ws) || g.Journal().BigDeletion != 5 {
		t.Errorf("--policy's journal: on %v, big_deletion %d", g.journaled(f.ws), g.Journal().BigDeletion)
	}
	cfg = off.g.Config()
	cfg.Extra, _ = policy.Parse("extra.yaml", []byte("journal:\n  enabled: true\n"))
	if New(cfg).journaled(off.ws) {
		t.Error("--policy turned on the journal the policy turns off")
	}
}

// TestGitIndexChanged: the index is read as git writes it (versions 2,
// 3 and 4, SHA-256 repositories), and a file is changed exactly when its
// content differs from what the index holds.
func TestGitIndexChanged(t *testing.T) {
	for _, tc := range []struct {
		name string
		init []string
		post [][]string
	}{
		{"v2", []string{"init", "-q"}, nil},
		{"v3 intent to add", []string{"init", "-q"}, [][]string{{"add", "-N", "new.txt"}}},
		{"v4", []string{"init", "-q"}, [][]string{{"update-index", "--index-version", "4"}}},
		{"sha256", []string{"init", "-q", "--object-format=sha256"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			gitRun(t, dir, tc.init...)
			files := map[string]string{"a.txt": "a\n", "dir/b.txt": "b\n", "dir-x/c.txt": "c\n", "dir.go": "d\n", "same.txt": "same\n"}
			for name, content := range files {
				p := filepath.Join(dir, name)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			gitRun(t, dir, "add", "-A")
			gitRun(t, dir, "commit", "-qm", "x")
			if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range tc.post {
				gitRun(t, dir, args...)
			}
			// Changed content; the same content written again (its stat
			// data differs).
			os.WriteFile(filepath.Join(dir, "dir", "b.txt"), []byte("B\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "same.txt"), []byte("same\n"), 0o644)
			ix, err := readGitIndex(dir)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, e := range ix.entries {
				got[e.path] = ix.changed(e) != ""
			}
			want := map[string]bool{"a.txt": false, "dir/b.txt": true, "dir-x/c.txt": false, "dir.go": false, "same.txt": false}
			if tc.name == "v3 intent to add" {
				want["new.txt"] = true
			}
			if len(got) != len(want) {
				t.Errorf("entries %v, want %v", got, want)
			}
			for p, w := range want {
				if got[p] != w {
					t.Errorf("%s changed %v, want %v", p, got[p], w)
				}
			}
			var under []string
			for _, e := range ix.under("dir") {
				under = append(under, e.path)
			}
			if strings.Join(under, " ") != "dir/b.txt" {
				t.Errorf("under(dir) = %v", under)
			}
		})
	}
}

// journalCorpusFixture is repoFixture at level with journal.txt's
// workspace: gen/ (60 files), lib/a.go, lib/b.go (changed since its
// commit), main.go, .gitignore (node_modules/ and *.log), notes.txt
// (untracked), build.log (ignored), node_modules/ (200 files, ignored).
func journalCorpusFixture(t *testing.T, level policy.Level) *fixture {
	t.Helper()
	f := repoFixture(t, level, map[string]string{"main.go": "package main\n", "lib/a.go": "package lib\n", "lib/b.go": "package lib\n",
		".gitignore": "node_modules/\n*.log\n"})
	writeTree(t, filepath.Join(f.ws, "gen"), 60)
	writeTree(t, filepath.Join(f.ws, "node_modules", "lib"), 200)
	for name, content := range map[string]string{"lib/b.go": "package lib // edited\n", "notes.txt": "mine\n", "build.log": "ok\n"} {
		if err := os.WriteFile(filepath.Join(f.ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// TestSecurityCorpusJournal judges testdata/corpus/journal.txt: what the
// journal lets run, it lets run only with the journal, saying how to undo
// it, and what it does not make undoable (the guard's denials, paths
// outside the workspace, rules not marked undoable) stays as it was.
func TestSecurityCorpusJournal(t *testing.T) {
	requireJournalSandbox(t)
	words := []string{"allow", "ask", "deny", "guard", "notallow"}
	var valid []string
	for _, a := range words {
		for _, b := range words {
			for _, c := range words {
				valid = append(valid, a+" "+b+" "+c)
			}
		}
	}
	cases := loadCorpus(t, "journal.txt", valid...)
	full := journalCorpusFixture(t, policy.Full)
	supervised := journalCorpusFixture(t, policy.Supervised)
	supervised.journal(true)
	runs := []struct {
		name    string
		f       *fixture
		journal bool
	}{{"full without the journal", full, false}, {"full with it", full, true}, {"supervised with it", supervised, true}}
	counts := make([][3]int, len(runs))
	for _, c := range cases {
		want := strings.Fields(c.expect)
		if len(want) != len(runs) {
			t.Errorf("journal.txt:%d: want %d expectations, found %q", c.line, len(runs), c.expect)
			continue
		}
		for i, r := range runs {
			r.f.journal(r.journal)
			d := corpusDecide(t, r.f, c.cmd)
			if traceCorpus() {
				t.Logf("journal.txt:%d: %s: %q: %s", c.line, r.name, c.cmd, describe(d))
			}
			ok := false
			switch want[i] {
			case "allow":
				ok = d.Outcome == policy.Allow
			case "ask":
				ok = d.Outcome == policy.Ask
			case "deny":
				ok = d.Outcome == policy.Deny
			case "guard":
				ok = d.Outcome == policy.Deny && d.BlockedBy == "guard"
			case "notallow":
				ok = d.Outcome != policy.Allow
			default:
				t.Errorf("journal.txt:%d: unknown expectation %q", c.line, want[i])
				continue
			}
			if !ok {
				t.Errorf("journal.txt:%d: %q %s: %s; want %s", c.line, c.cmd, r.name, describe(d), want[i])
				continue
			}
			switch d.Outcome {
			case policy.Allow:
				counts[i][0]++
			case policy.Ask:
				counts[i][1]++
			default:
				counts[i][2]++
			}
			// Work allowed because the journal keeps it: the reason says
			// how to undo it.
			drops := false
			for _, cd := range d.Commands {
				drops = drops || cd.Drops != "" || cd.Policy != nil && cd.Policy.Undoable != ""
			}
			if drops && d.Outcome == policy.Allow && !strings.Contains(d.Reason, "`mnemos undo --last` brings it back") {
				t.Errorf("journal.txt:%d: %q %s: allowed, but the reason does not say how to undo it: %s", c.line, c.cmd, r.name, d.Reason)
			}
		}
	}
	for i, r := range runs {
		t.Logf("journal.txt, %s: %d lines: %d allow, %d ask, %d deny", r.name, len(cases), counts[i][0], counts[i][1], counts[i][2])
	}
}
