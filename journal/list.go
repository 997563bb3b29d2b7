package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"time"
)

// Run states.
const (
	StateRunning     = "running"
	StateFinished    = "finished"
	StateInterrupted = "interrupted"
)

// RunRecord describes a run as its log tells it.
type RunRecord struct {
	ID        string    `json:"id"`
	Workspace string    `json:"workspace"`
	Argv      []string  `json:"argv"`
	Cwd       string    `json:"cwd,omitempty"`
	Session   string    `json:"session,omitempty"`
	Ticket    string    `json:"ticket,omitempty"`
	Channel   string    `json:"channel,omitempty"`
	Sender    string    `json:"sender,omitempty"`
	Started   time.Time `json:"started"`
	// Ended is zero while the run runs.
	Ended time.Time `json:"ended,omitzero"`
	// State is StateRunning, StateFinished or StateInterrupted (the run
	// died; what it left was recorded when it was found).
	State   string `json:"state"`
	Entries int    `json:"entries"`
	Kept    int64  `json:"kept"`
	// Undoes are the runs this run undid (it is an undo).
	Undoes []string `json:"undoes,omitempty"`
	// UndoneBy is the undo that undid this run.
	UndoneBy string `json:"undone_by,omitempty"`
	// Failed counts, for an undo, the steps that could not be done: it
	// did not mark the runs it undoes undone.
	Failed int `json:"failed_steps,omitempty"`
}

// Filter selects runs; empty fields select all.
type Filter struct {
	Workspace string
	Session   string
	// Tickets, when not nil, selects the runs that spent one of these
	// tickets (RunInfo.Ticket): the runs approvals let through.
	Tickets []string
}

// Runs lists the runs that changed something, newest first. A run found
// dead is ended first (see Finish).
func (j *Journal) Runs(f Filter) ([]RunRecord, error) {
	if f.Workspace != "" {
		f.Workspace = resolved(f.Workspace)
	}
	ids, err := j.runIDs()
	if err != nil {
		return nil, err
	}
	var out []RunRecord
	undone := map[string]string{}
	for _, id := range ids {
		p, err := j.peek(id)
		if errors.Is(err, fs.ErrNotExist) {
			continue // pruned meanwhile
		}
		if err != nil {
			return nil, err
		}
		if p.End == nil || p.End.Failed == 0 {
			// An undo some steps of which failed undid nothing for
			// good: a later undo retries.
			for _, u := range p.Head.Undoes {
				undone[u] = id
			}
		}
		if f.Workspace != "" && p.Head.WS != f.Workspace || f.Session != "" && p.Head.Session != f.Session ||
			f.Tickets != nil && (p.Head.Ticket == "" || !slices.Contains(f.Tickets, p.Head.Ticket)) {
			continue
		}
		rec, err := j.record(p)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	for i := range out {
		out[i].UndoneBy = undoneBy(undone, out[i].ID, 0)
	}
	sort.SliceStable(out, func(a, b int) bool {
		if !out[a].Started.Equal(out[b].Started) {
			return out[a].Started.After(out[b].Started)
		}
		return out[a].ID > out[b].ID
	})
	return out, nil
}

// record turns a peeked log into a RunRecord, ending it if the run died.
func (j *Journal) record(p peeked) (RunRecord, error) {
	h := p.Head
	rec := RunRecord{ID: h.ID, Workspace: h.WS, Argv: h.Argv, Cwd: h.Cwd, Session: h.Session, Ticket: h.Ticket,
		Channel: h.Channel, Sender: h.Sender, Started: time.Unix(0, h.Start), Undoes: h.Undoes, State: StateFinished}
	end := p.End
	if end == nil {
		lg, running, err := j.loadLog(p.ID)
		if err != nil {
			return rec, err
		}
		if running {
			rec.State, rec.Entries, rec.Kept = StateRunning, len(lg.Entries), keptBytes(lg)
			return rec, nil
		}
		end = lg.End
	}
	if end.Interrupted {
		rec.State = StateInterrupted
	}
	rec.Ended, rec.Entries, rec.Kept, rec.Failed = time.Unix(0, end.At), end.Entries, end.Kept, end.Failed
	return rec, nil
}

// Find returns the run whose id is id or, failing that, the only one
// whose id starts with it or whose random end (the part after the time)
// starts with it. A run pruned from the journal is a *PrunedError.
func (j *Journal) Find(id string) (RunRecord, error) {
	if id == "" {
		return RunRecord{}, fmt.Errorf("%w: no id given", ErrUnknownRun)
	}
	runs, err := j.Runs(Filter{})
	if err != nil {
		return RunRecord{}, err
	}
	var match []RunRecord
	for _, r := range runs {
		if r.ID == id {
			return r, nil
		}
		if matchesID(r.ID, id) {
			match = append(match, r)
		}
	}
	switch len(match) {
	case 0:
		if p, ok := j.prunedRun(id); ok {
			return RunRecord{}, p
		}
		return RunRecord{}, fmt.Errorf("%w: %s", ErrUnknownRun, id)
	case 1:
		return match[0], nil
	}
	ids := make([]string, len(match))
	for i, m := range match {
		ids[i] = m.ID
	}
	return RunRecord{}, fmt.Errorf("run id %s is ambiguous: %s", id, strings.Join(ids, ", "))
}

// matchesID says whether typed names run id: its start, or the start of
// its random end (4 characters at least: 6b3a7a4b for
// 20260301-101500-6b3a7a4b).
func matchesID(id, typed string) bool {
	if strings.HasPrefix(id, typed) {
		return true
	}
	i := strings.LastIndexByte(id, '-')
	return i >= 0 && len(typed) >= 4 && strings.HasPrefix(id[i+1:], typed)
}

// Passed is a run newer than the one Last picked, and why Last passed
// over it.
type Passed struct {
	Run RunRecord `json:"run"`
	Why string    `json:"why"`
}

// Why Last passes over a run.
const (
	PassedUndo     = "an undo"
	PassedUndone   = "undone"
	PassedNoChange = "no net change"
	PassedGitIndex = "changed only git's index"
	PassedExcluded = "changed only excluded directories"
	PassedNotKept  = "kept nothing it changed"
)

// Last returns the run undo --last takes back, and changes --last shows:
// the newest run of the runs f selects that is neither an undo nor undone,
// and whose net changes hold more than a git index (see Undoable). As in
// an editor, undoing it makes the one before it the last. Passed are the
// newer runs it passed over, newest first.
func (j *Journal) Last(f Filter) (RunRecord, []Passed, error) {
	runs, err := j.Runs(f)
	if err != nil {
		return RunRecord{}, nil, err
	}
	var passed []Passed
	for _, r := range runs {
		why := ""
		switch {
		case r.Entries == 0:
			why = PassedNoChange
		case len(r.Undoes) > 0:
			why = PassedUndo
		case r.UndoneBy != "":
			why = PassedUndone
		case r.State != StateRunning:
			changes, err := j.Changes(r.ID)
			if err != nil {
				return RunRecord{}, nil, err
			}
			if !Undoable(changes) {
				why = PassedNoChange
				for _, c := range changes {
					switch {
					case IsGitIndex(c.Path):
						why = PassedGitIndex
					case c.Op == OpNotKept && why == PassedNoChange:
						why = PassedExcluded
					case c.Op != OpNotKept && !c.Restorable:
						why = PassedNotKept
					}
				}
			}
		}
		if why == "" {
			return r, passed, nil
		}
		passed = append(passed, Passed{Run: r, Why: why})
	}
	where := f.Workspace
	if f.Session != "" {
		where = "session " + f.Session
	}
	return RunRecord{}, passed, &NoLastError{Where: where, Passed: passed}
}

// NoLastError says no run is left for --last: none changed anything, or
// every one was undone (Passed says which runs there are). It is an
// ErrUnknownRun.
type NoLastError struct {
	Where  string
	Passed []Passed
}

func (e *NoLastError) Error() string {
	var undone, other int
	newestUndo := ""
	for _, p := range e.Passed {
		switch p.Why {
		case PassedUndone:
			undone++
		case PassedUndo:
			if newestUndo == "" {
				newestUndo = p.Run.ID
			}
		default:
			other++
		}
	}
	switch {
	case undone > 0:
		s := fmt.Sprintf("nothing left to undo in %s: every run that changed it was undone", e.Where)
		if newestUndo != "" {
			s += " (the newest undo is run " + newestUndo + ")"
		}
		return s
	case other > 0:
		return fmt.Sprintf("nothing to undo in %s: its runs changed nothing but git's index or excluded directories", e.Where)
	}
	return fmt.Sprintf("no run changed anything in %s", e.Where)
}

// Is makes it an ErrUnknownRun to errors.Is.
func (e *NoLastError) Is(target error) bool { return target == ErrUnknownRun }

// undoneBy is the undo that took id back, unless that undo was itself
// undone (which put the run's changes back).
func undoneBy(undone map[string]string, id string, depth int) string {
	u := undone[id]
	if u == "" || depth > 64 {
		return u
	}
	if undoneBy(undone, u, depth+1) != "" {
		return ""
	}
	return u
}
