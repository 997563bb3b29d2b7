package gate

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"syscall"

	"github.com/mnemos-dev/mnemos/journal"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
)

// JournalDir is where the journal keeps what runs changed, inside
// mnemos's state directory, which no confined command can reach.
func (p Paths) JournalDir() string { return filepath.Join(p.StateDir, "journal") }

// watches says whether a sandboxed run in workspace ws has its changes
// watched and kept by the journal.
func (g *Gate) watches(ws string) bool {
	return g.cfg.Paths.StateDir != "" && g.journaled(ws)
}

// reliesOnJournal says whether dec allows what it allows only because the
// journal keeps what the run changes: contained work, or work dropped that
// the journal brings back (dropswork.go).
func reliesOnJournal(dec Decision) bool {
	if !dec.Journaled || dec.Outcome != policy.Allow {
		return false
	}
	for _, c := range dec.Commands {
		if c.dropsKept || c.Policy != nil && c.Policy.Contained && c.Policy.ReliesOnSandbox {
			return true
		}
	}
	return false
}

// DropsKept says the decision lets a command drop work (dropswork.go)
// because the journal keeps it: the run says how to undo it.
func (d Decision) DropsKept() bool {
	if !d.Journaled || d.Outcome != policy.Allow {
		return false
	}
	for _, c := range d.Commands {
		if c.dropsKept {
			return true
		}
	}
	return false
}

// concessionName matches the name of the rule a session concession
// becomes (sessionPolicy, containedPolicy), which ends with the approval
// that granted it.
var concessionName = regexp.MustCompile(`\(approval ([a-z2-7]+), until [0-9]{2}:[0-9]{2}\)$`)

// runApproval is the approval that let a run through, which its record in
// the journal carries so that the approval's page shows what it changed:
// the one it spends, or the approval behind the session concession
// (--remember contained, session) that allowed its commands.
func runApproval(dec Decision) string {
	if dec.Ticket != "" {
		return dec.Ticket
	}
	for _, c := range dec.Commands {
		if c.Outcome != policy.Allow || c.Policy == nil || c.Policy.Rule == nil {
			continue
		}
		if m := concessionName.FindStringSubmatch(c.Policy.Rule.Name); m != nil {
			return m[1]
		}
	}
	return ""
}

// runJournal is one run's record in the journal, fed by the sandbox's
// watch of the changes the command makes.
type runJournal struct {
	j   *journal.Journal
	run *journal.Run
}

// beginJournal starts recording the run of req when its sandbox watches
// changes; nil when it does not.
func (g *Gate) beginJournal(req Request, dec Decision, spec sandbox.Spec) (*runJournal, error) {
	if !spec.Watch || g.cfg.Paths.StateDir == "" {
		return nil, nil
	}
	j, err := journal.Open(g.JournalOptions())
	if err != nil {
		return nil, err
	}
	run, err := j.Begin(journal.RunInfo{Workspace: dec.Workspace, Argv: req.Argv, Cwd: req.Cwd,
		Session: req.Session, Ticket: runApproval(dec), Channel: req.Channel, Sender: req.Sender})
	if err != nil {
		j.Close()
		return nil, err
	}
	return &runJournal{j: j, run: run}, nil
}

// handler is the watch's handler for the run, nil when nothing is
// watched.
func (rj *runJournal) handler() func(sandbox.Change) error {
	if rj == nil {
		return nil
	}
	return rj.handle
}

// handle is the watch's handler: what a change is about to destroy is kept
// first; a change that cannot be recorded fails.
func (rj *runJournal) handle(c sandbox.Change) error {
	k, ok := journalKinds[c.Kind]
	if !ok {
		return syscall.EPERM
	}
	return rj.run.Before(k, c.Path, c.Path2)
}

var journalKinds = map[sandbox.ChangeKind]journal.Kind{
	sandbox.ChangeWrite: journal.Write, sandbox.ChangeUnlink: journal.Unlink, sandbox.ChangeRmdir: journal.Rmdir,
	sandbox.ChangeMkdir: journal.Mkdir, sandbox.ChangeMknod: journal.Mknod, sandbox.ChangeRename: journal.Rename,
	sandbox.ChangeExchange: journal.Exchange, sandbox.ChangeLink: journal.Link, sandbox.ChangeSymlink: journal.Symlink,
	sandbox.ChangeChmod: journal.Chmod, sandbox.ChangeChown: journal.Chown,
}

// finish ends the record; a nil runJournal finishes nothing.
func (rj *runJournal) finish() (*journal.Summary, error) {
	if rj == nil {
		return nil, nil
	}
	defer rj.j.Close()
	sum, err := rj.run.Finish()
	if err != nil {
		return &sum, fmt.Errorf("journal: %w", err)
	}
	return &sum, nil
}

// journalAttrsOf is run.finished's account of the journal: the run's id
// when it changed anything, what it could not keep, and how long the
// watch held the command's calls. Nil when nothing was watched.
func journalAttrsOf(rj *runJournal, sum *journal.Summary, w sandbox.WatchStats, err error) []any {
	if rj == nil {
		return nil
	}
	attrs := []any{slog.String("run", rj.run.ID()), slog.Bool("changed", sum != nil && sum.Changed)}
	if sum != nil {
		attrs = append(attrs, slog.Int("entries", sum.Entries), slog.Int64("kept_bytes", sum.Kept))
		if len(sum.NotKept) > 0 {
			nk := make([]string, 0, len(sum.NotKept))
			for _, n := range sum.NotKept {
				nk = append(nk, n.Path+" ("+n.Why+")")
			}
			attrs = append(attrs, slog.Any("not_kept", nk))
		}
		if len(sum.Pruned) > 0 {
			ids := make([]string, 0, len(sum.Pruned))
			for _, p := range sum.Pruned {
				ids = append(ids, p.ID)
			}
			attrs = append(attrs, slog.Any("pruned", ids))
		}
	}
	attrs = append(attrs, slog.Int("calls", w.Calls), slog.Int("refused", w.Refused),
		slog.Float64("watch_ms", float64(w.Busy.Microseconds())/1000))
	if w.Err != nil {
		attrs = append(attrs, slog.String("watch_error", w.Err.Error()))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	return attrs
}

// JournalOptions are the journal's place and the policy's bounds for it.
func (g *Gate) JournalOptions() journal.Options {
	p := g.Journal()
	return journal.Options{Dir: g.cfg.Paths.JournalDir(), Quota: p.Quota, MaxAge: p.Keep, MaxFile: p.MaxFile,
		Exclude: p.Exclude, Now: g.cfg.Now}
}
