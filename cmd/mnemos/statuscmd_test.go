package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/journal"
	"github.com/mnemos-dev/mnemos/policy"
)

func TestLevelOrigin(t *testing.T) {
	parse := func(name, src string) *policy.Policy {
		t.Helper()
		if src == "" {
			return nil
		}
		p, err := policy.Parse(name, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	paths := gate.Paths{PolicyFile: "/home/me/.config/mnemos/policy.yaml"}
	id := approvals.Identity{Channel: "cli", Sender: "me"}
	for _, tc := range []struct {
		name                  string
		system, user, project string
		extra, flag           string
		level, from           string
	}{
		{name: "the user's file", user: "level: full\n", level: "full", from: "user policy /home/me/.config/mnemos/policy.yaml"},
		{name: "the default", level: "supervised", from: "the built-in default (no file at /home/me/.config/mnemos/policy.yaml)"},
		{name: "system lowers", system: "level: readonly\n", user: "level: full\n", level: "readonly",
			from: "system policy /etc/mnemos/policy.yaml (lowers full)"},
		// A system file that writes no level does not set it, even when
		// its unwritten default (supervised) is what the project writes.
		{name: "project lowers under a silent system file", system: "defaults: {shell: ask}\n", user: "level: full\n", project: "level: supervised\n",
			level: "supervised", from: "project policy /work/p/.mnemos/policy.yaml (lowers full)"},
		{name: "a project above the user does nothing", user: "level: readonly\n", project: "level: full\n",
			level: "readonly", from: "user policy /home/me/.config/mnemos/policy.yaml"},
		{name: "--policy lowers", user: "level: full\n", extra: "level: readonly\n", level: "readonly", from: "--policy /tmp/x.yaml (lowers full)"},
		{name: "--level lowers", user: "level: full\n", flag: "supervised", level: "supervised", from: "--level or MNEMOS_LEVEL (lowers full)"},
		{name: "--level never raises", user: "level: readonly\n", flag: "full", level: "readonly", from: "user policy /home/me/.config/mnemos/policy.yaml"},
		{name: "a profile", user: "level: supervised\nprofiles:\n  - {channel: cli, sender: me, level: full}\n", level: "full",
			from: "user policy /home/me/.config/mnemos/policy.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			system := parse("/etc/mnemos/policy.yaml", tc.system)
			user := policy.Default()
			if tc.user != "" {
				user = parse(paths.PolicyFile, tc.user)
			}
			project := parse("/work/p/.mnemos/policy.yaml", tc.project)
			extra := parse("/tmp/x.yaml", tc.extra)
			merged, _ := policy.Merge(system, user, project)
			got := levelOrigin(system, user, project, merged, extra, tc.flag, paths, id)
			if got.Level != tc.level || got.From != tc.from {
				t.Errorf("got %s from %q\nwant %s from %q", got.Level, got.From, tc.level, tc.from)
			}
		})
	}
}

func TestStatusDenials(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	log := audit.Open(file, audit.Options{})
	ctx := context.Background()
	add := func(kind, decision string, argv ...string) {
		t.Helper()
		if err := log.Append(ctx, kind, slog.String("decision", decision), slog.Any("argv", argv),
			slog.String("reason", "because "+strings.Join(argv, " ")), slog.String("channel", "codex")); err != nil {
			t.Fatal(err)
		}
	}
	got, err := statusDenialsOf(file, "")
	if err != nil || len(got) != 0 {
		t.Fatalf("no log: %v, %v", got, err)
	}
	add("policy.decision", "deny", "rm", "-rf", "/")
	add("policy.decision", "allow", "ls")
	add("run.finished", "deny", "not", "a", "decision")
	for i := range 6 {
		add("policy.decision", "deny", "cat", strings.Repeat("x", i+1))
	}
	got, err = statusDenialsOf(file, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != statusDenials {
		t.Fatalf("got %d denials, want %d: %+v", len(got), statusDenials, got)
	}
	if got[0].Command != "cat xxxxxx" || got[0].Reason != "because cat xxxxxx" || got[0].Channel != "codex" {
		t.Errorf("newest = %+v", got[0])
	}
	if got[4].Command != "cat xx" {
		t.Errorf("fifth = %+v", got[4])
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"0123456789abc", 10, "012345678…"},
		{"a\x1b[2Kb", 10, `a\x1b[2Kb`},
		// Cut first, escape after: an escape is never cut in half.
		{"abcdefgh\x1b[2K", 10, `abcdefgh\x1b…`},
		{"ééééééééééé", 5, "éééé…"},
	} {
		if got := cut(tc.in, tc.n); got != tc.want {
			t.Errorf("cut(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestStatusJournalLines: the runs that changed files, one line each,
// saying which died half-way (interrupted), run still, undid another or
// were undone; a command's control characters escaped; nothing at all
// when no run changed files.
func TestStatusJournalLines(t *testing.T) {
	at := time.Date(2025, 6, 11, 10, 15, 0, 0, time.Local)
	print := func(sj statusJournal) string {
		var b strings.Builder
		printStatus(&b, statusReport{Journal: sj})
		var out []string
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(l, "changes") || strings.HasPrefix(l, "          2025") {
				out = append(out, l)
			}
		}
		return strings.Join(out, "\n")
	}
	if got := print(statusJournal{Workspace: "/w", Runs: []statusRun{}}); got != "" {
		t.Errorf("no run: %q", got)
	}
	got := print(statusJournal{Workspace: "/w/calc", Runs: []statusRun{
		{ID: "20250611-101500-aaaaaaaa", Started: at, Command: "make", Changes: 1, State: journal.StateRunning},
		{ID: "20250611-101400-bbbbbbbb", Started: at, Command: "mnemos undo 20250611-101300-cccccccc", Changes: 2, State: journal.StateFinished, Undoes: []string{"20250611-101300-cccccccc"}},
		{ID: "20250611-101300-cccccccc", Started: at, Command: "sh -c 'rm -rf *'\x1b[2J", Changes: 2, State: journal.StateInterrupted, UndoneBy: "20250611-101400-bbbbbbbb"},
	}})
	want := `changes   the last 3 runs that changed files in /w/calc, newest first (mnemos changes ID shows one; mnemos undo ID puts it back):
          20250611-101500-aaaaaaaa  2025-06-11 10:15  1 change   make  (still running)
          20250611-101400-bbbbbbbb  2025-06-11 10:15  2 changes  mnemos undo 20250611-101300-cccccccc  (undo of 20250611-101300-cccccccc)
          20250611-101300-cccccccc  2025-06-11 10:15  2 changes  sh -c 'rm -rf *'\x1b[2J  (interrupted; undone by 20250611-101400-bbbbbbbb)`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	one := print(statusJournal{Workspace: "/w", Runs: []statusRun{{ID: "20250611-101500-aaaaaaaa", Started: at, Command: "make", Changes: 4, State: journal.StateFinished}}})
	if !strings.HasPrefix(one, "changes   the last run that changed files in /w (mnemos changes ID shows one; mnemos undo ID puts it back):\n") {
		t.Errorf("one run: %q", one)
	}
	if got := print(statusJournal{Workspace: "/w", Runs: []statusRun{}, Error: "permission denied"}); got != "changes   cannot read the journal: permission denied" {
		t.Errorf("an unreadable journal: %q", got)
	}
}
