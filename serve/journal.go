package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/journal"
)

// Journal reads what runs changed in the workspace and puts it back;
// *journal.Journal is one.
type Journal interface {
	Runs(f journal.Filter) ([]journal.RunRecord, error)
	Changes(id string) ([]journal.Change, error)
	Undo(ids []string, o journal.UndoOptions) (journal.UndoReport, error)
}

// How many of a run's changes the page and the terminal list; the rest
// are counted (mnemos changes lists them all).
const (
	pageChanges     = 20
	terminalChanges = 10
)

// runsOf reads the journal once and returns, for each approval in
// approved (its token and its requester), the runs it let through: those
// that spent its one-shot ticket. The gate records a run's ticket as the
// approval's token (gate.Decision.Ticket, the tickets table's
// approval_token); a hook's own ticket ("hook:...") names no approval.
// A run is matched by its ticket exactly, and only when it ran as the
// approval's requester (the ticket is bound to that identity). Undos are
// never matched: they spend no ticket. Newest first.
func runsOf(j Journal, approved map[string]approvals.Identity) (map[string][]journal.RunRecord, error) {
	out := map[string][]journal.RunRecord{}
	if j == nil || len(approved) == 0 {
		return out, nil
	}
	tickets := make([]string, 0, len(approved))
	for t := range approved {
		tickets = append(tickets, t)
	}
	runs, err := j.Runs(journal.Filter{Tickets: tickets})
	if err != nil {
		return out, err
	}
	for _, r := range runs {
		if len(r.Undoes) > 0 {
			continue
		}
		id, ok := approved[r.Ticket]
		if !ok || !ranAs(r, id) {
			continue
		}
		out[r.Ticket] = append(out[r.Ticket], r)
	}
	return out, nil
}

// ranAs says whether run r ran as identity id (a run recorded without
// its identity is taken for its ticket's).
func ranAs(r journal.RunRecord, id approvals.Identity) bool {
	return r.Channel == "" && r.Sender == "" || r.Channel == id.Channel && r.Sender == id.Sender
}

// runView is a run an approval let through, as the page and the
// terminal show it. Every text in it is escaped (Printable).
type runView struct {
	ID        string
	Approval  string
	Workspace string
	Command   string
	When      string
	// State: finished, interrupted (the run died; what it left was
	// recorded when it was found) or running.
	State    string
	UndoneBy string
	Changes  []changeView
	// Total is how many net changes the run made ("3 changes" in
	// Summary); More how many are not listed.
	Total, More int
	Summary     string
	// Err says why the changes cannot be read.
	Err string
	// Undo: the run can be undone from here (it ended, was not undone,
	// and its approval is the identity's own).
	Undo bool
}

// changeView is one net change of a run.
type changeView struct {
	Op string
	// Path is relative to the workspace; From is a move's old name.
	Path, From string
	// Detail: the type (dir, symlink), the mode change, a note.
	Detail string
	// Since: the path changed again after the run; Lost says why undo
	// cannot put it back.
	Since bool
	Lost  string
}

// viewRun reads run r's changes, listing at most limit of them. own says
// whether the page's (or terminal's) identity may undo it.
func viewRun(j Journal, r journal.RunRecord, limit int, own bool) runView {
	v := runView{ID: r.ID, Approval: r.Ticket, Workspace: approvals.Printable(r.Workspace),
		Command: approvals.Printable(audit.RedactString(quoteArgv(r.Argv))), State: r.State,
		When:     r.Started.Local().Format("Jan 2 15:04:05"),
		UndoneBy: approvals.Printable(r.UndoneBy)}
	v.Undo = own && r.State != journal.StateRunning && r.UndoneBy == "" && len(r.Undoes) == 0
	changes, err := j.Changes(r.ID)
	if err != nil {
		v.Err, v.Summary, v.Undo = approvals.Printable(err.Error()), "changes unknown", false
		return v
	}
	v.Total, v.Summary = len(changes), plural(len(changes), "change")
	if len(changes) == 0 {
		v.Summary = "no net change"
	}
	for i, c := range changes {
		if limit > 0 && i >= limit {
			v.More = len(changes) - i
			break
		}
		v.Changes = append(v.Changes, viewChange(c, r.Workspace))
	}
	return v
}

func viewChange(c journal.Change, ws string) changeView {
	v := changeView{Op: c.Op, Path: relTo(ws, c.Path), Since: c.Since}
	var detail []string
	switch c.Op {
	case journal.OpMoved:
		v.From = relTo(ws, c.From)
	case journal.OpMode:
		detail = append(detail, fmt.Sprintf("%o -> %o", c.OldMode, c.NewMode))
	}
	if c.Type == journal.TypeDir || c.Type == journal.TypeSymlink {
		detail = append(detail, c.Type)
	}
	if c.Note != "" {
		detail = append(detail, approvals.Printable(c.Note))
	}
	v.Detail = strings.Join(detail, "; ")
	if !c.Restorable {
		v.Lost = approvals.Printable(c.Why)
	}
	return v
}

// relTo is p relative to the workspace ws when it lies below it,
// escaped.
func relTo(ws, p string) string {
	if rel, err := filepath.Rel(ws, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return approvals.Printable(rel)
	}
	return approvals.Printable(p)
}

// line is the change on one line of text (the terminal's).
func (c changeView) line() string {
	s := fmt.Sprintf("%-8s %s", c.Op, c.Path)
	if c.From != "" {
		s = fmt.Sprintf("%-8s %s -> %s", c.Op, c.From, c.Path)
	}
	if c.Detail != "" {
		s += " (" + c.Detail + ")"
	}
	if c.Since {
		s += " [changed since]"
	}
	if c.Lost != "" {
		s += " [cannot be restored: " + c.Lost + "]"
	}
	return s
}

// Why an undo asked from the page or the terminal is refused before the
// journal is asked.
var (
	errNoJournal = errors.New("this mnemos serve does not read the journal")
	errNotUndone = errors.New("no run that an approval of yours let through has this id")
)

// findUndo finds run id and the approval that let it through, and checks
// that as may undo it from here: the approval is as's own (only its
// requester answers a request; only its requester undoes what it let
// through), was approved, and the run spent its ticket as that identity.
func findUndo(ctx context.Context, j Journal, reg Registry, id string, as approvals.Identity, now time.Time) (journal.RunRecord, approvals.Pending, error) {
	if j == nil {
		return journal.RunRecord{}, approvals.Pending{}, errNoJournal
	}
	if !validRunID(id) {
		return journal.RunRecord{}, approvals.Pending{}, errNotUndone
	}
	runs, err := j.Runs(journal.Filter{})
	if err != nil {
		return journal.RunRecord{}, approvals.Pending{}, fmt.Errorf("cannot read the journal: %w", err)
	}
	var run *journal.RunRecord
	for i := range runs {
		if runs[i].ID == id {
			run = &runs[i]
			break
		}
	}
	if run == nil || !validRequestID(run.Ticket) || len(run.Undoes) > 0 {
		return journal.RunRecord{}, approvals.Pending{}, errNotUndone
	}
	p, err := reg.Get(ctx, run.Ticket)
	if errors.Is(err, approvals.ErrUnknownToken) {
		return journal.RunRecord{}, approvals.Pending{}, errNotUndone
	}
	if err != nil {
		return journal.RunRecord{}, approvals.Pending{}, fmt.Errorf("cannot read the approval: %w", err)
	}
	if p.Token != run.Ticket || p.StatusAt(now) != approvals.StatusApproved || p.Requester() != as || !ranAs(*run, as) {
		return journal.RunRecord{}, approvals.Pending{}, errNotUndone
	}
	switch {
	case run.State == journal.StateRunning:
		return *run, p, errors.New("the run is still running: wait for it to end")
	case run.UndoneBy != "":
		return *run, p, fmt.Errorf("run %s was undone already, by run %s", run.ID, approvals.Printable(run.UndoneBy))
	}
	return *run, p, nil
}

// validRunID accepts what the journal names runs with (and nothing that
// could climb out of its directory).
func validRunID(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '.' || id[0] == '-' {
		return false
	}
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// undoRun puts back what run changed, as via (page:NAME, terminal:NAME:
// the form answers are recorded with), forced or not, and records
// journal.undo in the audit log with who did it and the approval. A
// refusal (a *journal.ConflictError: paths changed since the run) changes
// nothing and records nothing. An undo whose record cannot be written is
// reported as failed: nothing is undone unaudited without saying so.
func undoRun(ctx context.Context, j Journal, rec Recorder, run journal.RunRecord, p approvals.Pending, via approvals.Identity, force bool) (journal.UndoReport, error) {
	if rec == nil {
		return journal.UndoReport{}, errors.New("undo needs the audit log, and this mnemos has none")
	}
	argv := []string{"mnemos", "undo", run.ID}
	if force {
		argv = append(argv, "--force")
	}
	rep, err := j.Undo([]string{run.ID}, journal.UndoOptions{Force: force,
		Info: journal.RunInfo{Argv: argv, Cwd: run.Workspace, Channel: via.Channel, Sender: via.Sender}})
	var ce *journal.ConflictError
	if errors.As(err, &ce) || err != nil && len(rep.Steps) == 0 {
		return rep, err
	}
	failed := make([]string, 0, len(rep.Failed))
	for _, f := range rep.Failed {
		failed = append(failed, f.Path+": "+f.Err)
	}
	attrs := []slog.Attr{slog.Any("runs", rep.Runs), slog.Any("restored", rep.Restored), slog.Bool("forced", force),
		slog.Any("undo_runs", rep.UndoRuns), slog.String("by", via.Channel+":"+via.Sender), slog.String("approval", p.Token)}
	if len(failed) > 0 {
		attrs = append(attrs, slog.Any("failed", failed))
	}
	if len(rep.Forced) > 0 {
		paths := make([]string, 0, len(rep.Forced))
		for _, f := range rep.Forced {
			paths = append(paths, f.Path)
		}
		attrs = append(attrs, slog.Any("changed_since", paths))
	}
	if aerr := rec.Append(context.WithoutCancel(ctx), audit.KindJournalUndo, attrs...); aerr != nil {
		return rep, fmt.Errorf("the undo was done but could not be recorded in the audit log: %w", aerr)
	}
	if err != nil {
		return rep, err
	}
	return rep, nil
}

// undoneLine says what an undo did, in one sentence.
func undoneLine(rep journal.UndoReport, run journal.RunRecord) string {
	s := fmt.Sprintf("undid run %s (%s): %s restored", run.ID, approvals.Printable(audit.RedactString(quoteArgv(run.Argv))), plural(len(rep.Restored), "path"))
	if len(rep.UndoRuns) > 0 {
		s += "; the undo is run " + strings.Join(rep.UndoRuns, ", ") + " (mnemos undo " + strings.Join(rep.UndoRuns, " ") + " takes it back)"
	}
	if len(rep.Failed) > 0 {
		s += fmt.Sprintf("; %d of %d steps could not be done (mnemos changes %s)", len(rep.Failed), len(rep.Steps), run.ID)
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
