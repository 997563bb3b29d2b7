package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/journal"
)

// ChangesCmd is mnemos changes: what runs changed in the workspace.
type ChangesCmd struct {
	ID   string `arg:"" name:"run" optional:"" help:"The run's id (or its start, or the random part at its end); without one, the runs of this workspace are listed."`
	Last bool   `help:"The run undo --last takes back: the newest run in this workspace that changed something, was not undone and is not an undo (as an editor's undo goes back one step at a time). Runs that changed only git's index (git status) or nothing are passed over."`
	Diff bool   `help:"Show a unified diff of the text files changed."`
	JSON bool   `name:"json" help:"Print one JSON object (errors too)."`
}

// UndoCmd is mnemos undo: put back what runs changed.
type UndoCmd struct {
	ID     string `arg:"" name:"run" optional:"" help:"The run's id (or its start, or the random part at its end)."`
	Last   bool   `help:"The newest run in this workspace (or of --session) that changed something, was not undone and is not an undo: undoing again goes one run further back, as in an editor. Runs that changed only git's index (git status) or nothing are passed over."`
	DryRun bool   `name:"dry-run" help:"Say what would be done; change nothing."`
	Force  bool   `help:"Undo even the paths changed since the run (what they hold then is kept by the undo, itself undoable)."`
	JSON   bool   `name:"json" help:"Print one JSON object (errors too)."`
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

// sessionFlag returns the --session given on the command line, and
// whether it was given. The MNEMOS_SESSION an agent's shell exports fills
// the same flag (kong marks it resolved): it says who runs mnemos, and
// must not change what changes and undo select.
func sessionFlag(a *app, k *kong.Context) (string, bool) {
	for _, pe := range k.Path {
		if pe.Flag != nil && pe.Flag.Name == "session" && !pe.Resolved {
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

// selection is what a command names: runs, and for --last the newer runs
// it passed over.
type selection struct {
	runs   []journal.RunRecord
	passed []journal.Passed
	last   bool
}

// selectRuns finds the runs a command names: RUN, --last (with --session:
// the last of that session), or --session (newest first); no runs when
// none is named. --last is the same run for changes and undo. For undo,
// --session passes over undos and runs undone.
func selectRuns(a *app, k *kong.Context, j *journal.Journal, id string, last bool, undo bool) (selection, error) {
	session, bySession := sessionFlag(a, k)
	if id != "" && (last || bySession) {
		return selection{}, &exitError{code: exitUsage, msg: "give a run id, or --last, or --session (--last --session is the last run of the session)", hint: selectHint}
	}
	if bySession && session == "" {
		return selection{}, &exitError{code: exitUsage, msg: "--session needs the session's id", hint: "mnemos changes --session ID"}
	}
	switch {
	case id != "":
		r, err := j.Find(id)
		if err != nil {
			return selection{}, journalError(err)
		}
		return selection{runs: []journal.RunRecord{r}}, nil
	case last:
		f := journal.Filter{Session: session}
		if !bySession {
			ws, err := workspaceHere()
			if err != nil {
				return selection{}, err
			}
			f.Workspace = ws
		}
		r, passed, err := j.Last(f)
		if err != nil {
			return selection{}, journalError(err)
		}
		return selection{runs: []journal.RunRecord{r}, passed: passed, last: true}, nil
	case bySession:
		runs, err := j.Runs(journal.Filter{Session: session})
		if err != nil {
			return selection{}, journalError(err)
		}
		var out []journal.RunRecord
		for _, r := range runs {
			if undo && (len(r.Undoes) > 0 || r.UndoneBy != "" || r.Entries == 0) {
				continue
			}
			out = append(out, r)
		}
		if len(out) == 0 {
			return selection{}, journalError(fmt.Errorf("%w: no run of session %s left anything to undo", journal.ErrUnknownRun, oneLine(session)))
		}
		return selection{runs: out}, nil
	}
	return selection{}, nil
}

// journalError maps the journal's errors to exit codes and hints.
func journalError(err error) error {
	var pe journal.Pruned
	var nl *journal.NoLastError
	switch {
	case errors.As(err, &pe):
		return &exitError{code: exitFailure, msg: err.Error(), hint: "the journal keeps each workspace's runs within its quota and for its age (journal: in the policy); what it pruned cannot be undone"}
	case errors.As(err, &nl):
		hint := "`mnemos changes` lists the runs of this workspace"
		for _, p := range nl.Passed {
			if p.Why == journal.PassedUndo {
				hint = fmt.Sprintf("`mnemos undo %s` takes the newest undo back; `mnemos changes` lists the runs of this workspace", p.Run.ID)
				break
			}
		}
		if len(nl.Passed) == 0 {
			hint = elsewhereHint()
		}
		return &exitError{code: exitFailure, msg: err.Error(), hint: hint}
	case errors.Is(err, journal.ErrUnknownRun):
		return &exitError{code: exitFailure, msg: err.Error(), hint: "`mnemos changes` lists the runs of this workspace"}
	case errors.Is(err, journal.ErrRunning):
		return &exitError{code: exitFailure, msg: err.Error(), hint: "wait for it to end, then undo it"}
	}
	return err
}

// elsewhereHint says where runs were recorded, for a person asking in a
// directory where none were.
func elsewhereHint() string {
	return "runs are listed per workspace: run `mnemos changes` in the workspace (the directory holding .git) where the command ran"
}

// changesJSON is what changes --json prints.
type changesJSON struct {
	Runs []runChangesJSON `json:"runs"`
	// Passed are the newer runs --last passed over.
	Passed []journal.Passed `json:"passed_over,omitempty"`
}

type runChangesJSON struct {
	Run     journal.RunRecord `json:"run"`
	Changes []journal.Change  `json:"changes"`
	Diff    string            `json:"diff,omitempty"`
}

// jsonErrors prints err, when --json asked for JSON, as one JSON object
// on stdout ({"error": ..., "hint": ...}), and exits as err would.
func jsonErrors(a *app, asJSON bool, err error) error {
	if err == nil || !asJSON {
		return err
	}
	var xe *exitError
	msg, hint := err.Error(), ""
	if errors.As(err, &xe) {
		if xe.quiet {
			return err
		}
		msg, hint = xe.msg, xe.hint
	}
	code := exitCodeOf(io.Discard, err)
	out := map[string]any{"error": msg}
	if hint != "" {
		out["hint"] = hint
	}
	if werr := writeJSON(a.io.out, out); werr != nil {
		return werr
	}
	return quietExit(code)
}

// Run shows what runs changed.
func (c *ChangesCmd) Run(a *app, k *kong.Context) error {
	a.tolerant = "changes"
	return jsonErrors(a, c.JSON, c.run(a, k))
}

func (c *ChangesCmd) run(a *app, k *kong.Context) error {
	j, _, err := a.openJournal()
	if err != nil {
		return err
	}
	defer j.Close()
	sel, err := selectRuns(a, k, j, c.ID, c.Last, false)
	if err != nil {
		return noRunsHere(j, err)
	}
	if sel.runs == nil {
		return c.list(a, j)
	}
	out := changesJSON{Passed: sel.passed}
	if !c.JSON && sel.last {
		notePassed(a.io.err, sel.passed)
	}
	for i, r := range sel.runs {
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

// notePassed says which newer runs --last passed over, and why: the
// newest is an undo, or they changed only git's index or nothing.
func notePassed(w io.Writer, passed []journal.Passed) {
	if len(passed) == 0 {
		return
	}
	first := passed[0]
	switch first.Why {
	case journal.PassedUndo:
		fmt.Fprintf(w, "mnemos: note: the newest run, %s, is an undo of %s (`mnemos changes %s` shows it); --last is the newest run not undone, as an editor's undo steps back\n",
			first.Run.ID, strings.Join(first.Run.Undoes, ", "), first.Run.ID)
	case journal.PassedUndone:
		fmt.Fprintf(w, "mnemos: note: the newest run, %s, was undone by %s; --last is the newest run not undone, as an editor's undo steps back\n", first.Run.ID, first.Run.UndoneBy)
	}
	var other int
	for _, p := range passed {
		switch p.Why {
		case journal.PassedGitIndex, journal.PassedNoChange, journal.PassedExcluded, journal.PassedNotKept:
			other++
		}
	}
	if other > 0 {
		fmt.Fprintf(w, "mnemos: note: passed over %s that changed only git's index (git status refreshes it), excluded directories or nothing, or whose changes the journal could not keep\n", plural(other, "newer run"))
	}
}

// noRunsHere adds, to the error that no run is left for --last in a
// directory where no run ever changed anything, the workspaces where runs
// were recorded.
func noRunsHere(j *journal.Journal, err error) error {
	var xe *exitError
	if !errors.As(err, &xe) || xe.hint != elsewhereHint() {
		return err
	}
	runs, rerr := j.Runs(journal.Filter{})
	if rerr != nil || len(runs) == 0 {
		return err
	}
	var wss []string
	seen := map[string]bool{}
	for _, r := range runs {
		if !seen[r.Workspace] && len(wss) < 3 {
			seen[r.Workspace] = true
			wss = append(wss, oneLine(r.Workspace))
		}
	}
	xe.hint = "runs were recorded in " + strings.Join(wss, ", ") + ": run `mnemos changes` there, or name a run by its id"
	return xe
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
	type listed struct {
		journal.RunRecord
		Changes int    `json:"changes"`
		Note    string `json:"note,omitempty"`
	}
	out := []listed{}
	for _, r := range runs {
		changes, err := j.Changes(r.ID)
		if err != nil {
			continue // pruned meanwhile
		}
		l := listed{RunRecord: r, Changes: len(changes)}
		switch {
		case len(changes) == 0:
			l.Note = "no net change"
		case !journal.Undoable(changes):
			l.Note = "nothing undo can restore"
			for _, ch := range changes {
				if journal.IsGitIndex(ch.Path) {
					l.Note = "only git's index"
				}
			}
		}
		out = append(out, l)
	}
	if c.JSON {
		return writeJSON(a.io.out, map[string]any{"workspace": ws, "runs": out})
	}
	if len(out) == 0 {
		fmt.Fprintf(a.io.out, "no run changed anything in %s\n", oneLine(ws))
		return nil
	}
	fmt.Fprintf(a.io.out, "%-24s  %-16s  %-11s %7s  %s\n", "RUN", "STARTED", "STATE", "CHANGES", "COMMAND")
	for _, l := range out {
		note := runNote(l.RunRecord)
		if l.Note != "" {
			note += "  (" + l.Note + ")"
		}
		fmt.Fprintf(a.io.out, "%-24s  %s  %-11s %7d  %s%s\n", l.ID, l.Started.Local().Format("2006-01-02 15:04"),
			l.State, l.Changes, oneLine(shellQuote(l.Argv)), note)
	}
	return nil
}

// runNote says what a run undid or what undid it.
func runNote(r journal.RunRecord) string {
	switch {
	case len(r.Undoes) > 0 && r.Failed > 0:
		return fmt.Sprintf("  (undo of %s; %s failed: not undone)", strings.Join(r.Undoes, ", "), plural(r.Failed, "step"))
	case len(r.Undoes) > 0:
		return "  (undo of " + strings.Join(r.Undoes, ", ") + ")"
	case r.UndoneBy != "":
		return "  (undone by " + r.UndoneBy + ")"
	}
	return ""
}

func printRun(w io.Writer, r journal.RunRecord) {
	fmt.Fprintf(w, "run %s  %s  %s  %s\n", r.ID, r.Started.Local().Format("2006-01-02 15:04:05"), r.State, oneLine(shellQuote(r.Argv)))
	fmt.Fprintf(w, "workspace %s%s\n", oneLine(r.Workspace), runNote(r))
}

// printChanges prints one line a path changed, relative to the
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
		case journal.OpNotKept:
			line += "/ (" + oneLine(c.Why) + ")"
			fmt.Fprintln(w, line)
			continue
		}
		if c.Type == journal.TypeDir || c.Type == journal.TypeSymlink {
			line += " (" + c.Type + ")"
		}
		if c.Note != "" {
			line += " (" + oneLine(c.Note) + ")"
		}
		if c.Op != journal.OpMode && c.Op != journal.OpAdded && c.NewMode != 0 && c.NewMode != c.OldMode {
			line += fmt.Sprintf(" (mode %o -> %o)", c.OldMode, c.NewMode)
		}
		if c.Since && r.UndoneBy == "" && !journal.IsGitIndex(c.Path) {
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
	return jsonErrors(a, c.JSON, c.run(a, k))
}

func (c *UndoCmd) run(a *app, k *kong.Context) error {
	j, p, err := a.openJournal()
	if err != nil {
		return err
	}
	defer j.Close()
	sel, err := selectRuns(a, k, j, c.ID, c.Last, true)
	if err != nil {
		return noRunsHere(j, err)
	}
	if sel.runs == nil {
		return &exitError{code: exitUsage, msg: "which run? none was named", hint: selectHint}
	}
	ids := make([]string, len(sel.runs))
	for i, r := range sel.runs {
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
		return c.refused(a, sel, ids, ce)
	}
	var fe *journal.UndoFailedError
	if err != nil && !errors.As(err, &fe) {
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
	if fe != nil {
		hint := "the lines above say what stood in the way (a directory moved or removed?); put it right, then undo the run again: it does what is left"
		if !fe.Retry {
			hint = "what failed was never kept (too big, or over the quota): no undo can bring it back"
		}
		if c.JSON {
			return quietExit(exitFailure)
		}
		return &exitError{code: exitFailure, msg: oneLine(fe.Error()), hint: hint}
	}
	return nil
}

// refused reports an undo refused because paths changed since the runs:
// each path once, then the error.
func (c *UndoCmd) refused(a *app, sel selection, ids []string, ce *journal.ConflictError) error {
	rel := func(p string) string {
		for _, r := range sel.runs {
			if s, err := filepath.Rel(r.Workspace, p); err == nil && !strings.HasPrefix(s, "..") {
				return s
			}
		}
		return p
	}
	var paths, undone []journal.Conflict
	for _, cf := range ce.Conflicts {
		if cf.Path == "" {
			undone = append(undone, cf)
		} else {
			paths = append(paths, cf)
		}
	}
	var msg, hint string
	switch {
	case len(undone) > 0 && len(paths) == 0:
		msg = "nothing was undone: run " + undone[0].Run + " " + undone[0].Why
		u := strings.TrimPrefix(undone[0].Why, "was undone already, by run ")
		hint = fmt.Sprintf("its changes are undone; `mnemos undo %s` takes the undo back (the run's changes return)", u)
	default:
		msg = fmt.Sprintf("nothing was undone: %s changed since the run (listed above)", plural(len(paths), "path"))
		hint = fmt.Sprintf("`mnemos changes %s --diff` shows what the run did; `mnemos undo %s --force` overwrites those paths (what they hold now is kept: `mnemos undo` of the new undo run brings it back)", ids[0], strings.Join(ids, " "))
		// Newer runs that changed them: undoing those first needs no
		// force.
		var newer []string
		for _, cf := range paths {
			if !slices.Contains(ids, cf.Run) && !slices.Contains(newer, cf.Run) && strings.HasPrefix(cf.Why, "changed by run "+cf.Run+" since") {
				newer = append(newer, cf.Run)
			}
		}
		if len(newer) > 0 && len(newer) == countBy(paths, newer) {
			hint = fmt.Sprintf("undo the newer %s first (`mnemos undo %s`), then this one: undoing newest first needs no --force", pluralNoun(len(newer), "run"), strings.Join(newer, " "))
		}
	}
	if c.JSON {
		refused := ce.Conflicts
		_ = writeJSON(a.io.out, map[string]any{"runs": ids, "refused": refused, "error": msg, "hint": hint})
		return quietExit(exitFailure)
	}
	for _, cf := range paths {
		fmt.Fprintf(a.io.err, "mnemos: changed since: %s: %s\n", oneLine(rel(cf.Path)), oneLine(cf.Why))
	}
	return &exitError{code: exitFailure, msg: oneLine(msg), hint: hint}
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

// countBy counts the conflicts made by one of runs.
func countBy(cs []journal.Conflict, runs []string) int {
	n := 0
	for _, c := range cs {
		if slices.Contains(runs, c.Run) {
			n++
		}
	}
	return n
}

func pluralNoun(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

// undoVerbs say what an undo does to a path, done and to be done.
var undoVerbs = map[string][2]string{
	"remove":  {"removed", "remove"},
	"restore": {"restored", "restore"},
	"create":  {"created", "create"},
	"mkdir":   {"made directory", "make directory"},
	"symlink": {"made link", "make link"},
	"mkfifo":  {"made fifo", "make fifo"},
	"move":    {"moved back", "move back"},
	"mode":    {"restored mode of", "restore mode of"},
	"link":    {"linked", "link"},
}

// printUndo prints a line a path the runs changed (relative to its
// workspace): what the undo did, or would do, or could not; then the
// count, and how to take the undo back. A dry run prints the same lines.
func printUndo(w io.Writer, rep journal.UndoReport) {
	refreshed := map[string]bool{}
	for _, p := range rep.Refreshed {
		refreshed[p] = true
	}
	for _, r := range rep.Paths {
		if r.Op == "not kept" {
			fmt.Fprintf(w, "not restored %s/: %s\n", oneLine(r.Rel), oneLine(r.Err))
			continue
		}
		v := undoVerbs[r.Op]
		if v[0] == "" {
			v = [2]string{r.Op, r.Op}
		}
		verb := v[0]
		if rep.DryRun {
			verb = "would " + v[1]
		}
		if r.Err != "" {
			verb = "could not " + v[1]
			if rep.DryRun {
				verb = "cannot " + v[1]
			}
		}
		line := verb + " " + oneLine(r.Rel)
		if r.Op == "move" {
			line = verb + " " + oneLine(r.FromRel) + " -> " + oneLine(r.Rel)
		}
		if r.Err != "" {
			line += ": " + oneLine(r.Err)
		}
		fmt.Fprintln(w, line)
	}
	runs := "run " + strings.Join(rep.Runs, ", ")
	if len(rep.Runs) > 1 {
		runs = "runs " + strings.Join(rep.Runs, ", ")
	}
	for _, p := range rep.Refreshed {
		name := p
		for _, r := range rep.Paths {
			if r.Path == p {
				name = r.Rel
			}
		}
		what := "was restored all the same; the undo keeps what it held"
		if rep.DryRun {
			what = "would be restored all the same; the undo keeps what it holds"
		}
		fmt.Fprintf(w, "note: %s changed since the %s (git refreshes its index, as git status does): it %s\n", oneLine(name), runs, what)
	}
	if len(rep.Paths) == 0 {
		fmt.Fprintf(w, "nothing to undo: %s left no net change\n", runs)
		return
	}
	if rep.DryRun {
		n, cannot := 0, ""
		for _, r := range rep.Paths {
			if r.Err != "" && r.Op != "not kept" {
				n++
			}
		}
		if n > 0 {
			cannot = fmt.Sprintf(", %d of which cannot be restored", n)
		}
		fmt.Fprintf(w, "dry run: nothing was changed (%s: %s%s)\n", runs, plural(len(rep.Paths), "path"), cannot)
		return
	}
	if len(rep.Restored) == 0 {
		fmt.Fprintf(w, "nothing of %s was restored\n", runs)
	} else {
		fmt.Fprintf(w, "undid %s: %s restored\n", runs, plural(len(rep.Restored), "path"))
	}
	if len(rep.UndoRuns) > 0 {
		fmt.Fprintf(w, "the undo is run %s: `mnemos undo %s` takes it back\n", strings.Join(rep.UndoRuns, ", "), strings.Join(rep.UndoRuns, " "))
	}
}
