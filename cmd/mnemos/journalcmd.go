package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/journal"
)

// ChangesCmd is mnemos changes: what runs changed in the workspace.
type ChangesCmd struct {
	ID   string `arg:"" name:"run" optional:"" help:"The run's id (or the start of it); without one, the runs of this workspace are listed."`
	Last bool   `help:"The newest run in this workspace that changed something."`
	Diff bool   `help:"Show a unified diff of the text files changed."`
	JSON bool   `name:"json" help:"Print one JSON object."`
}

// UndoCmd is mnemos undo: put back what runs changed.
type UndoCmd struct {
	ID     string `arg:"" name:"run" optional:"" help:"The run's id (or the start of it)."`
	Last   bool   `help:"The newest run in this workspace that changed something and was not undone."`
	DryRun bool   `name:"dry-run" help:"Say what would be done; change nothing."`
	Force  bool   `help:"Undo even the paths changed since the run (what they hold then is kept by the undo, itself undoable)."`
	JSON   bool   `name:"json" help:"Print one JSON object."`
}

const selectHint = "name a run (ids are listed by `mnemos changes`), or use --last, or --session ID"

// openJournal opens the journal in mnemos's state directory, after the
// checks every reader of the state makes.
func (a *app) openJournal() (*journal.Journal, gate.Paths, error) {
	p, err := a.paths()
	if err != nil {
		return nil, p, err
	}
	if err := a.trust(a.strictModes().CheckState(p)); err != nil {
		return nil, p, err
	}
	o := journalOptions(p)
	if g, err := a.gate(); err == nil {
		// The policy's bounds, for the undo's own record; a broken
		// policy never keeps anyone from putting their work back.
		o = g.JournalOptions()
	}
	j, err := journal.Open(o)
	if err != nil {
		return nil, p, &exitError{code: exitConfig, msg: err.Error()}
	}
	return j, p, nil
}

// journalOptions are the journal's settings: where it lives and its
// bounds (the defaults of issue 21).
func journalOptions(p gate.Paths) journal.Options {
	return journal.Options{Dir: p.JournalDir(), Quota: journal.DefaultQuota,
		MaxAge: journal.DefaultMaxAge, MaxFile: journal.DefaultMaxFile, Exclude: journal.DefaultExclude}
}

// sessionFlag returns the --session given on the command line (not the
// MNEMOS_SESSION an agent sets), and whether it was given.
func sessionFlag(a *app, k *kong.Context) (string, bool) {
	for _, pe := range k.Path {
		if pe.Flag != nil && pe.Flag.Name == "session" {
			return a.cli.Session, true
		}
	}
	return "", false
}

// workspaceHere is the workspace of the working directory, as the gate
// finds it: the nearest directory above holding .git.
func workspaceHere() (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("cannot read the working directory: %w", err)
	}
	return gate.Workspace(cwd), nil
}

// selectRuns finds the runs a command names: RUN, --last, or --session
// (newest first); nil when none is named. For undo, --last and --session
// pass over undos and runs undone.
func selectRuns(a *app, k *kong.Context, j *journal.Journal, id string, last bool, undo bool) ([]journal.RunRecord, error) {
	session, bySession := sessionFlag(a, k)
	n := 0
	for _, b := range []bool{id != "", last, bySession} {
		if b {
			n++
		}
	}
	if n > 1 {
		return nil, &exitError{code: exitUsage, msg: "give one of a run id, --last and --session", hint: selectHint}
	}
	switch {
	case id != "":
		r, err := j.Find(id)
		if err != nil {
			return nil, journalError(err)
		}
		return []journal.RunRecord{r}, nil
	case last:
		ws, err := workspaceHere()
		if err != nil {
			return nil, err
		}
		var r journal.RunRecord
		if undo {
			r, err = j.Last(ws)
		} else {
			r, err = lastChanged(j, ws)
		}
		if err != nil {
			return nil, journalError(err)
		}
		return []journal.RunRecord{r}, nil
	case bySession:
		if session == "" {
			return nil, &exitError{code: exitUsage, msg: "--session needs the session's id", hint: "mnemos changes --session ID"}
		}
		runs, err := j.Runs(journal.Filter{Session: session})
		if err != nil {
			return nil, journalError(err)
		}
		var out []journal.RunRecord
		for _, r := range runs {
			if undo && (len(r.Undoes) > 0 || r.UndoneBy != "") {
				continue
			}
			out = append(out, r)
		}
		if len(out) == 0 {
			return nil, journalError(fmt.Errorf("%w: no run of session %s changed anything", journal.ErrUnknownRun, oneLine(session)))
		}
		return out, nil
	}
	return nil, nil
}

// lastChanged is the newest run of ws that changed something (an undo
// included: changes --last after an undo shows the undo).
func lastChanged(j *journal.Journal, ws string) (journal.RunRecord, error) {
	runs, err := j.Runs(journal.Filter{Workspace: ws})
	if err != nil {
		return journal.RunRecord{}, err
	}
	for _, r := range runs {
		if r.Entries > 0 {
			return r, nil
		}
	}
	return journal.RunRecord{}, fmt.Errorf("%w: no run changed anything in %s", journal.ErrUnknownRun, ws)
}

// journalError maps the journal's errors to exit codes and hints.
func journalError(err error) error {
	switch {
	case errors.Is(err, journal.ErrUnknownRun):
		return &exitError{code: exitFailure, msg: err.Error(), hint: "`mnemos changes` lists the runs of this workspace"}
	case errors.Is(err, journal.ErrRunning):
		return &exitError{code: exitFailure, msg: err.Error(), hint: "wait for it to end, then undo it"}
	}
	return err
}

// changesJSON is what changes --json prints.
type changesJSON struct {
	Runs []runChangesJSON `json:"runs"`
}

type runChangesJSON struct {
	Run     journal.RunRecord `json:"run"`
	Changes []journal.Change  `json:"changes"`
	Diff    string            `json:"diff,omitempty"`
}

// Run shows what runs changed.
func (c *ChangesCmd) Run(a *app, k *kong.Context) error {
	a.tolerant = "changes"
	j, _, err := a.openJournal()
	if err != nil {
		return err
	}
	defer j.Close()
	runs, err := selectRuns(a, k, j, c.ID, c.Last, false)
	if err != nil {
		return err
	}
	if runs == nil {
		return c.list(a, j)
	}
	var out changesJSON
	for i, r := range runs {
		changes, err := j.Changes(r.ID)
		if err != nil {
			return journalError(err)
		}
		rc := runChangesJSON{Run: r, Changes: changes}
		if c.Diff {
			if rc.Diff, err = j.Diff(r.ID); err != nil {
				return journalError(err)
			}
		}
		out.Runs = append(out.Runs, rc)
		if c.JSON {
			continue
		}
		if i > 0 {
			fmt.Fprintln(a.io.out)
		}
		printRun(a.io.out, r)
		printChanges(a.io.out, r, changes)
		if c.Diff && rc.Diff != "" {
			fmt.Fprint(a.io.out, rc.Diff)
			if !strings.HasSuffix(rc.Diff, "\n") {
				fmt.Fprintln(a.io.out)
			}
		}
	}
	if c.JSON {
		return writeJSON(a.io.out, out)
	}
	return nil
}

// list prints the runs of this workspace that changed something.
func (c *ChangesCmd) list(a *app, j *journal.Journal) error {
	ws, err := workspaceHere()
	if err != nil {
		return err
	}
	runs, err := j.Runs(journal.Filter{Workspace: ws})
	if err != nil {
		return journalError(err)
	}
	if c.JSON {
		if runs == nil {
			runs = []journal.RunRecord{}
		}
		return writeJSON(a.io.out, map[string]any{"workspace": ws, "runs": runs})
	}
	if len(runs) == 0 {
		fmt.Fprintf(a.io.out, "no run changed anything in %s\n", oneLine(ws))
		return nil
	}
	for _, r := range runs {
		fmt.Fprintf(a.io.out, "%s  %s  %-11s %5d  %s%s\n", r.ID, r.Started.Local().Format("2006-01-02 15:04"),
			r.State, r.Entries, oneLine(strings.Join(r.Argv, " ")), runNote(r))
	}
	return nil
}

// runNote says what a run undid or what undid it.
func runNote(r journal.RunRecord) string {
	switch {
	case len(r.Undoes) > 0:
		return "  (undo of " + strings.Join(r.Undoes, ", ") + ")"
	case r.UndoneBy != "":
		return "  (undone by " + r.UndoneBy + ")"
	}
	return ""
}

func printRun(w io.Writer, r journal.RunRecord) {
	fmt.Fprintf(w, "run %s  %s  %s  %s\n", r.ID, r.Started.Local().Format("2006-01-02 15:04:05"), r.State, oneLine(strings.Join(r.Argv, " ")))
	fmt.Fprintf(w, "workspace %s%s\n", oneLine(r.Workspace), runNote(r))
}

// printChanges prints one line a change, its path relative to the
// workspace.
func printChanges(w io.Writer, r journal.RunRecord, changes []journal.Change) {
	if len(changes) == 0 {
		fmt.Fprintln(w, "no net change")
		return
	}
	rel := func(p string) string {
		if s, err := filepath.Rel(r.Workspace, p); err == nil && !strings.HasPrefix(s, "..") {
			return s
		}
		return p
	}
	for _, c := range changes {
		line := fmt.Sprintf("%-8s %s", c.Op, oneLine(rel(c.Path)))
		switch c.Op {
		case journal.OpMoved:
			line = fmt.Sprintf("%-8s %s -> %s", c.Op, oneLine(rel(c.From)), oneLine(rel(c.Path)))
		case journal.OpMode:
			line += fmt.Sprintf(" %o -> %o", c.OldMode, c.NewMode)
		}
		if c.Type == journal.TypeDir || c.Type == journal.TypeSymlink {
			line += " (" + c.Type + ")"
		}
		if c.Note != "" {
			line += " (" + oneLine(c.Note) + ")"
		}
		if c.Since {
			line += " [changed since]"
		}
		if !c.Restorable {
			line += " [cannot be restored: " + c.Why + "]"
		}
		fmt.Fprintln(w, line)
	}
}

// Run puts back what runs changed, and records it in the audit log.
func (c *UndoCmd) Run(a *app, k *kong.Context) error {
	j, p, err := a.openJournal()
	if err != nil {
		return err
	}
	defer j.Close()
	runs, err := selectRuns(a, k, j, c.ID, c.Last, true)
	if err != nil {
		return err
	}
	if runs == nil {
		return &exitError{code: exitUsage, msg: "which run? none was named", hint: selectHint}
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	cwd, _ := os.Getwd()
	id := a.identity()
	argv := append([]string{"mnemos", "undo"}, ids...)
	if c.Force {
		argv = append(argv, "--force")
	}
	rep, err := j.Undo(ids, journal.UndoOptions{DryRun: c.DryRun, Force: c.Force,
		Info: journal.RunInfo{Argv: argv, Cwd: cwd, Channel: id.Channel, Sender: id.Sender, Session: a.cli.Session}})
	var ce *journal.ConflictError
	if errors.As(err, &ce) {
		if c.JSON {
			_ = writeJSON(a.io.out, map[string]any{"runs": rep.Runs, "refused": ce.Conflicts})
		}
		for _, cf := range ce.Conflicts {
			if cf.Path != "" {
				fmt.Fprintf(a.io.err, "mnemos: changed since: %s: %s\n", oneLine(cf.Path), oneLine(cf.Why))
			}
		}
		return &exitError{code: exitFailure, msg: "nothing was undone: " + oneLine(ce.Error()),
			hint: fmt.Sprintf("`mnemos changes %s --diff` shows what the run did; `mnemos undo %s --force` puts it back anyway (what is there now is kept: the undo can be undone)", ids[0], strings.Join(ids, " "))}
	}
	if err != nil && len(rep.Steps) == 0 {
		return journalError(err)
	}
	if !c.DryRun {
		if aerr := auditUndo(a, p, rep, c.Force); aerr != nil {
			return aerr
		}
	}
	if c.JSON {
		if werr := writeJSON(a.io.out, rep); werr != nil {
			return werr
		}
	} else {
		printUndo(a.io.out, rep)
	}
	if err != nil {
		return &exitError{code: exitFailure, msg: oneLine(err.Error()), hint: "the steps that failed are listed above; the others were done"}
	}
	return nil
}

// auditUndo writes journal.undo: the runs undone, the paths restored,
// whether it was forced, and the undo's own run.
func auditUndo(a *app, p gate.Paths, rep journal.UndoReport, forced bool) error {
	log := openAudit(p)
	defer log.Close()
	failed := make([]string, 0, len(rep.Failed))
	for _, f := range rep.Failed {
		failed = append(failed, f.Path+": "+f.Err)
	}
	forcedPaths := make([]string, 0, len(rep.Forced))
	for _, f := range rep.Forced {
		forcedPaths = append(forcedPaths, f.Path)
	}
	// Who: as answers on a terminal are recorded (terminal:NAME); the
	// page and approvals watch record page:NAME and terminal:NAME.
	attrs := []slog.Attr{slog.Any("runs", rep.Runs), slog.Any("restored", rep.Restored), slog.Bool("forced", forced),
		slog.Any("undo_runs", rep.UndoRuns), slog.String("by", approvals.ViaTerminal+":"+a.identity().Sender)}
	if len(failed) > 0 {
		attrs = append(attrs, slog.Any("failed", failed))
	}
	if len(forcedPaths) > 0 {
		attrs = append(attrs, slog.Any("changed_since", forcedPaths))
	}
	return recorder{log}.Append(a.ctx, audit.KindJournalUndo, attrs...)
}

// undoVerbs say a step, done and to be done.
var undoVerbs = map[string][2]string{
	"remove":   {"removed", "remove"},
	"restore":  {"restored", "restore"},
	"create":   {"created", "create"},
	"mkdir":    {"made directory", "make directory"},
	"symlink":  {"made link", "make link"},
	"mkfifo":   {"made fifo", "make fifo"},
	"move":     {"moved back", "move back"},
	"exchange": {"exchanged", "exchange"},
	"mode":     {"restored mode of", "restore mode of"},
	"link":     {"linked", "link"},
}

func printUndo(w io.Writer, rep journal.UndoReport) {
	cwd, _ := os.Getwd()
	rel := func(p string) string {
		if s, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(s, "..") {
			return oneLine(s)
		}
		return oneLine(p)
	}
	for _, s := range rep.Steps {
		v := undoVerbs[s.Op]
		if v[0] == "" {
			v = [2]string{s.Op, s.Op}
		}
		verb := v[0]
		if rep.DryRun {
			verb = "would " + v[1]
		}
		if s.Err != "" {
			verb = "could not " + v[1]
		}
		line := verb + " " + rel(s.Path)
		switch s.Op {
		case "move":
			line = verb + " " + rel(s.From) + " -> " + rel(s.Path)
		case "link":
			line += " to " + rel(s.From)
		case "exchange":
			line += " and " + rel(s.From)
		case "symlink":
			line += " -> " + oneLine(s.From)
		}
		if s.Err != "" {
			line += ": " + oneLine(s.Err)
		}
		fmt.Fprintln(w, line)
	}
	if rep.DryRun {
		fmt.Fprintf(w, "dry run: nothing was changed (%d steps for run %s)\n", len(rep.Steps), strings.Join(rep.Runs, ", "))
		return
	}
	fmt.Fprintf(w, "undid run %s: %s restored\n", strings.Join(rep.Runs, ", "), plural(len(rep.Restored), "path"))
	if len(rep.UndoRuns) > 0 {
		fmt.Fprintf(w, "the undo is run %s: `mnemos undo %s` takes it back\n", strings.Join(rep.UndoRuns, ", "), strings.Join(rep.UndoRuns, " "))
	}
}
