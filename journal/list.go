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
		for _, u := range p.Head.Undoes {
			undone[u] = id
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
	rec.Ended, rec.Entries, rec.Kept = time.Unix(0, end.At), end.Entries, end.Kept
	return rec, nil
}

// Find returns the run whose id is id or, failing that, the only one
// whose id starts with it.
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
		if strings.HasPrefix(r.ID, id) {
			match = append(match, r)
		}
	}
	switch len(match) {
	case 0:
		if p, ok := j.prunedRun(id); ok {
			return RunRecord{}, fmt.Errorf("%w: %w", ErrUnknownRun, p)
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

// Last returns the newest run of workspace ws that changed something and
// is neither an undo nor undone: what undo --last takes back.
func (j *Journal) Last(ws string) (RunRecord, error) {
	runs, err := j.Runs(Filter{Workspace: ws})
	if err != nil {
		return RunRecord{}, err
	}
	for _, r := range runs {
		if r.Entries > 0 && len(r.Undoes) == 0 && r.UndoneBy == "" {
			return r, nil
		}
	}
	return RunRecord{}, fmt.Errorf("%w: no run changed anything in %s", ErrUnknownRun, ws)
}

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
