package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// A run's log is JSON lines, written with one write(2) each on an
// O_APPEND descriptor:
//
//	{"t":"run","v":1,"id":"20260301-101500-1a2b3c4d","ws":"/home/ada/calc","argv":["sh","-c","rm -rf *"],"start":1772360100000000000,...}
//	{"t":"e","at":1772360100001000000,"k":"unlink","p":"calc.go","a":{"t":"file","m":420,"sz":812,"o":"<sha256>",...}}
//	{"t":"after","p":"calc.go","s":{"t":"absent"}}
//	{"t":"end","at":1772360100002000000,"entries":1,"kept":812}
//
// The header comes first (the log is made under a hidden name, locked and
// given its header, then linked into place). Each entry records what one
// call is about to change: p (and p2) relative to the workspace, or
// absolute when outside it; a and b the states of p and p2 before the
// call, or, with x "excluded", that the run deleted something below the
// excluded directory p (nothing kept). Finish appends the state every
// name was left in, then the end (with the steps that failed, for an
// undo's own run).
// A line cut short by a kill is ignored; an object is whole before the
// entry that names it is written.

const logVersion = 1

// record is one line of a log; t says which fields it uses.
type record struct {
	T string `json:"t"`

	// "run": the header.
	V       int      `json:"v,omitempty"`
	ID      string   `json:"id,omitempty"`
	WS      string   `json:"ws,omitempty"`
	Argv    []string `json:"argv,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	Session string   `json:"session,omitempty"`
	Ticket  string   `json:"ticket,omitempty"`
	Channel string   `json:"channel,omitempty"`
	Sender  string   `json:"sender,omitempty"`
	Start   int64    `json:"start,omitempty"`
	Undoes  []string `json:"undoes,omitempty"`

	// "e": an entry.
	At int64  `json:"at,omitempty"`
	K  string `json:"k,omitempty"`
	P  string `json:"p,omitempty"`
	P2 string `json:"p2,omitempty"`
	A  *State `json:"a,omitempty"`
	B  *State `json:"b,omitempty"`
	// X: "out" for an entry made because a tree left the workspace (the
	// call moved it out), "in" when p is outside and the call brings it in.
	X string `json:"x,omitempty"`

	// "after": the state p was left in.
	S *State `json:"s,omitempty"`

	// "end".
	Interrupted bool  `json:"interrupted,omitempty"`
	Entries     int   `json:"entries,omitempty"`
	Kept        int64 `json:"kept,omitempty"`
	// Failed counts, for an undo's own run, the steps that could not be
	// done: such an undo does not make the runs it undid undone.
	Failed int `json:"failed,omitempty"`

	// The bytes of a name that is not UTF-8 (JSON would replace them):
	// written beside the name, read back over it.
	PX   []byte `json:"px,omitempty"`
	P2X  []byte `json:"p2x,omitempty"`
	WSX  []byte `json:"wsx,omitempty"`
	CwdX []byte `json:"cwdx,omitempty"`
}

// A name is bytes, and JSON strings are UTF-8: a name that is not is
// written again, whole, in base64 beside it, so that two names differing
// only in such bytes stay two names.

func (r record) MarshalJSON() ([]byte, error) {
	type plain record
	v := plain(r)
	v.PX, v.P2X, v.WSX, v.CwdX = rawName(r.P), rawName(r.P2), rawName(r.WS), rawName(r.Cwd)
	return json.Marshal(v)
}

func (r *record) UnmarshalJSON(b []byte) error {
	type plain record
	var v plain
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = record(v)
	r.P, r.P2, r.WS, r.Cwd = nameOf(r.P, r.PX), nameOf(r.P2, r.P2X), nameOf(r.WS, r.WSX), nameOf(r.Cwd, r.CwdX)
	r.PX, r.P2X, r.WSX, r.CwdX = nil, nil, nil, nil
	return nil
}

// rawName is s's bytes when JSON cannot carry s as it is, nil otherwise.
func rawName(s string) []byte {
	if utf8.ValidString(s) {
		return nil
	}
	return []byte(s)
}

// nameOf is the name written as s, or raw when it was written whole.
func nameOf(s string, raw []byte) string {
	if raw != nil {
		return string(raw)
	}
	return s
}

// runLog is a log as read.
type runLog struct {
	Head    record
	Entries []record
	After   map[string]State
	End     *record
	// Size is the length up to the end of the last whole line.
	Size int64
}

func (j *Journal) readLog(id string) (*runLog, error) {
	data, err := os.ReadFile(j.logPath(id))
	if err != nil {
		return nil, err
	}
	return parseLog(id, data)
}

// parseLog reads a log's whole lines; a last line cut short is left out.
func parseLog(id string, data []byte) (*runLog, error) {
	lg := &runLog{After: map[string]State{}}
	first := true
	for off := 0; off < len(data); {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			break // torn
		}
		line := data[off : off+nl]
		off += nl + 1
		var r record
		if err := json.Unmarshal(line, &r); err != nil {
			if first {
				return nil, fmt.Errorf("journal: run %s: the log's header does not parse: %v", id, err)
			}
			// A line cut short and then followed by the recovery's
			// lines reads as one bad line: skip it.
			lg.Size = int64(off)
			continue
		}
		lg.Size = int64(off)
		if first {
			if r.T != "run" || r.ID != id {
				return nil, fmt.Errorf("journal: run %s: the log does not start with its header", id)
			}
			if !filepath.IsAbs(r.WS) || filepath.Clean(r.WS) != r.WS {
				return nil, fmt.Errorf("journal: run %s: the workspace %q is not a clean absolute path", id, r.WS)
			}
			if r.V > logVersion {
				return nil, fmt.Errorf("journal: run %s: written by a newer mnemos (log version %d)", id, r.V)
			}
			lg.Head, first = r, false
			continue
		}
		switch r.T {
		case "e":
			for _, p := range []string{r.P, r.P2} {
				if p != "" && !filepath.IsLocal(p) && (!filepath.IsAbs(p) || filepath.Clean(p) != p) {
					return nil, fmt.Errorf("journal: run %s: an entry names %q, neither a path in the workspace nor a clean absolute one", id, p)
				}
			}
			lg.Entries = append(lg.Entries, r)
		case "after":
			if !filepath.IsLocal(r.P) {
				return nil, fmt.Errorf("journal: run %s: a state names %q, not a path in the workspace", id, r.P)
			}
			if r.S != nil {
				lg.After[r.P] = *r.S
			}
		case "end":
			rr := r
			lg.End = &rr
		}
	}
	if first {
		return nil, fmt.Errorf("journal: run %s: the log has no header", id)
	}
	return lg, nil
}

// appendLine writes rec as one line at the end of f, whose length is *off.
// A short or failed write is cut back, so the log never holds half an
// entry, and the error returned (ENOSPC when the disk is full).
func appendLine(f *os.File, off *int64, rec *record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	n, err := f.Write(b)
	if err == nil && n == len(b) {
		*off += int64(n)
		return nil
	}
	if n > 0 {
		if terr := f.Truncate(*off); terr != nil {
			return fmt.Errorf("%w (and the log could not be cut back: %v)", err, terr)
		}
	}
	if err == nil {
		err = io.ErrShortWrite
	}
	return err
}

// runIDs lists the ids of the logs in runs/.
func (j *Journal) runIDs() ([]string, error) {
	ents, err := os.ReadDir(j.runsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".log")
		if ok && e.Type().IsRegular() && validID(id) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// names are the paths in the workspace a run's entries name.
func (lg *runLog) names() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range lg.Entries {
		for _, p := range []string{e.P, e.P2} {
			if p != "" && !filepath.IsAbs(p) && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// recoverLog ends the log of a run that died: when its lock can be taken,
// the torn tail is cut, the state of every name it touched is taken now,
// and an end marked interrupted is written. It returns ErrRunning when
// the run still holds its log.
func (j *Journal) recoverLog(id string) (*runLog, error) {
	f, err := os.OpenFile(j.logPath(id), os.O_RDWR|noFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := flock(f, lockExclusive|lockNB); err != nil {
		if errors.Is(err, errWouldBlock) {
			return nil, ErrRunning
		}
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	lg, err := parseLog(id, data)
	if err != nil || lg.End != nil {
		return lg, err
	}
	if err := f.Truncate(lg.Size); err != nil {
		return nil, err
	}
	if _, err := f.Seek(lg.Size, io.SeekStart); err != nil {
		return nil, err
	}
	off := lg.Size
	ws := lg.Head.WS
	for _, n := range lg.names() {
		st, err := lstat(filepath.Join(ws, n))
		if err != nil {
			continue
		}
		rec := &record{T: "after", P: n, S: &st}
		if err := appendLine(f, &off, rec); err != nil {
			return nil, err
		}
		lg.After[n] = st
	}
	end := &record{T: "end", At: j.o.Now().UnixNano(), Interrupted: true, Entries: len(lg.Entries), Kept: keptBytes(lg)}
	if err := appendLine(f, &off, end); err != nil {
		return nil, err
	}
	lg.End = end
	return lg, nil
}

// keptBytes is what a run's kept objects weigh, each counted once.
func keptBytes(lg *runLog) int64 {
	seen := map[string]bool{}
	var n int64
	for _, e := range lg.Entries {
		for _, s := range []*State{e.A, e.B} {
			if s != nil && s.Object != "" && !seen[s.Object] {
				seen[s.Object] = true
				n += s.Size
			}
		}
	}
	return n
}

// loadLog reads a run's log, ending it first if the run died.
func (j *Journal) loadLog(id string) (lg *runLog, running bool, err error) {
	lg, err = j.readLog(id)
	if err != nil {
		return nil, false, err
	}
	if lg.End != nil {
		return lg, false, nil
	}
	rec, err := j.recoverLog(id)
	if errors.Is(err, ErrRunning) {
		return lg, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return rec, false, nil
}
