package journal

import (
	"bufio"
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
	"time"
)

// peeked is a log's header and, when it has one, its end: read from the
// file's two ends without reading the entries.
type peeked struct {
	ID   string
	Head record
	End  *record
}

// time is when the run ended, or started when it has not.
func (p peeked) time() int64 {
	if p.End != nil && p.End.At != 0 {
		return p.End.At
	}
	return p.Head.Start
}

func (j *Journal) peek(id string) (peeked, error) {
	f, err := os.Open(j.logPath(id))
	if err != nil {
		return peeked{}, err
	}
	defer f.Close()
	first, err := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, bufio.ErrBufferFull) {
			// A header longer than the buffer: read it all.
			lg, err := j.readLog(id)
			if err != nil {
				return peeked{}, err
			}
			return peeked{ID: id, Head: lg.Head, End: lg.End}, nil
		}
		return peeked{}, err
	}
	p := peeked{ID: id}
	if err := json.Unmarshal(first, &p.Head); err != nil || p.Head.T != "run" || p.Head.ID != id {
		return peeked{}, errors.New("journal: run " + id + ": the log does not start with its header")
	}
	fi, err := f.Stat()
	if err != nil {
		return peeked{}, err
	}
	size := fi.Size()
	n := min(size, 4096)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-n); err != nil && !errors.Is(err, io.EOF) {
		return peeked{}, err
	}
	if len(buf) > 0 && buf[len(buf)-1] == '\n' {
		buf = buf[:len(buf)-1]
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			var end record
			if json.Unmarshal(buf[i+1:], &end) == nil && end.T == "end" {
				p.End = &end
			}
		}
	}
	return p, nil
}

// running says whether a run holds its log's lock.
func (j *Journal) running(id string) bool {
	f, err := os.Open(j.logPath(id))
	if err != nil {
		return false
	}
	defer f.Close()
	err = flock(f, lockShared|lockNB)
	return errors.Is(err, errWouldBlock)
}

// Why a run was pruned (Pruned.Why).
const (
	// PrunedQuota: to keep its workspace within the quota, when another
	// run (Pruned.By) needed the room.
	PrunedQuota = "quota"
	// PrunedAge: it was older than the journal keeps runs.
	PrunedAge = "age"
)

// Pruned is a run the journal dropped: what it changed can no longer be
// undone. Each leaves a note in dropped/, so that asking for the run says
// so, until the note is as old as the journal keeps runs.
type Pruned struct {
	ID        string   `json:"id"`
	Workspace string   `json:"ws"`
	Argv      []string `json:"argv,omitempty"`
	Start     int64    `json:"start,omitempty"`
	At        int64    `json:"at"`
	Why       string   `json:"why"`
	By        string   `json:"by,omitempty"`
}

func (j *Journal) prunedDir() string { return filepath.Join(j.o.Dir, "dropped") }

// Error says what became of the run.
func (p Pruned) Error() string {
	why := "because it was older than the journal keeps runs"
	if p.Why == PrunedQuota {
		why = "to make room for run " + p.By + " (the workspace's journal quota)"
	}
	cmd := strings.Join(p.Argv, " ")
	if len(cmd) > 80 {
		cmd = cmd[:77] + "..."
	}
	return fmt.Sprintf("run %s (%s) was dropped from the journal on %s %s: what it changed can no longer be undone",
		p.ID, cmd, time.Unix(0, p.At).Format("2006-01-02 15:04"), why)
}

// Is makes a pruned run an unknown one to errors.Is: what it changed is
// gone.
func (p Pruned) Is(target error) bool { return target == ErrUnknownRun }

// minKeep is how long a run is safe from the quota once it ended: a
// command that churns through big files cannot erase the recent history
// (what it cannot keep, it says it did not keep).
const minKeep = time.Hour

// note leaves the note that p was pruned.
func (j *Journal) note(p Pruned) {
	if err := os.MkdirAll(j.prunedDir(), 0o700); err != nil {
		return
	}
	b, err := json.Marshal(p)
	if err != nil {
		return
	}
	_ = os.WriteFile(filepath.Join(j.prunedDir(), p.ID), append(b, '\n'), 0o600)
}

// prunedRun is the note of the pruned run whose id is id or, failing
// that, the only one whose id or random end starts with it (matchesID).
func (j *Journal) prunedRun(id string) (Pruned, bool) {
	ents, err := os.ReadDir(j.prunedDir())
	if err != nil || !validID(id) {
		return Pruned{}, false
	}
	var match []string
	for _, e := range ents {
		if e.Name() == id {
			match = []string{id}
			break
		}
		if matchesID(e.Name(), id) {
			match = append(match, e.Name())
		}
	}
	if len(match) != 1 {
		return Pruned{}, false
	}
	b, err := os.ReadFile(filepath.Join(j.prunedDir(), match[0]))
	var p Pruned
	if err != nil || json.Unmarshal(b, &p) != nil || p.ID != match[0] {
		return Pruned{}, false
	}
	return p, true
}

// pruneWorkspace removes the runs of ws older than MaxAge, then, when
// need more bytes would take ws over its quota, its oldest runs that
// keep something and ended an hour ago or more (minKeep) until they fit;
// none for room when even removing all of those would not make need fit.
// It never removes except, nor a run that is still running. The objects
// are left to the collector.
func (j *Journal) pruneWorkspace(ws, except string, need int64) []Pruned {
	ids, _ := j.runIDs()
	var runs []peeked
	var usage int64
	for _, id := range ids {
		if id == except {
			continue
		}
		p, err := j.peek(id)
		if err != nil || p.Head.WS != ws {
			continue
		}
		if p.End == nil {
			if j.running(id) {
				continue
			}
			lg, _, err := j.loadLog(id)
			if err != nil || lg.End == nil {
				continue
			}
			p.End = lg.End
		}
		usage += p.End.Kept
		runs = append(runs, p)
	}
	sort.Slice(runs, func(a, b int) bool { return runs[a].time() < runs[b].time() })
	now := j.o.Now()
	var gone []Pruned
	remove := func(p peeked, why string) bool {
		if os.Remove(j.logPath(p.ID)) != nil {
			return false
		}
		pr := Pruned{ID: p.ID, Workspace: ws, Argv: p.Head.Argv, Start: p.Head.Start, At: now.UnixNano(), Why: why}
		if why == PrunedQuota {
			pr.By = except
		}
		j.note(pr)
		gone = append(gone, pr)
		usage -= p.End.Kept
		return true
	}
	var left []peeked
	recent := now.Add(-minKeep).UnixNano()
	for _, p := range runs {
		if j.o.MaxAge > 0 && p.time() < now.Add(-j.o.MaxAge).UnixNano() && remove(p, PrunedAge) {
			continue
		}
		if p.time() <= recent {
			// Only a run that ended an hour ago or more may go for
			// room; the newer ones count, and stay.
			left = append(left, p)
		}
	}
	if j.o.Quota <= 0 || usage+need <= j.o.Quota {
		return gone
	}
	var freeable int64
	for _, p := range left {
		freeable += p.End.Kept
	}
	if usage-freeable+need > j.o.Quota {
		// Dropping every run would not make room: drop none.
		return gone
	}
	for _, p := range left {
		if usage+need <= j.o.Quota {
			break
		}
		if p.End.Kept > 0 {
			// A run that keeps nothing frees nothing.
			remove(p, PrunedQuota)
		}
	}
	return gone
}

// PruneReport is what Prune removed.
type PruneReport struct {
	Runs    []string `json:"runs"`
	Objects int      `json:"objects"`
	Freed   int64    `json:"freed"`
}

// Prune removes the runs past MaxAge and, in each workspace over its
// quota, the oldest runs until it fits; then the objects no run names.
func (j *Journal) Prune() (PruneReport, error) {
	var rep PruneReport
	ids, err := j.runIDs()
	if err != nil {
		return rep, err
	}
	seen := map[string]bool{}
	for _, id := range ids {
		p, err := j.peek(id)
		if err != nil || seen[p.Head.WS] {
			continue
		}
		seen[p.Head.WS] = true
		for _, pr := range j.pruneWorkspace(p.Head.WS, "", 0) {
			rep.Runs = append(rep.Runs, pr.ID)
		}
	}
	j.clearNotes()
	if _, err := os.Stat(j.objectsDir()); errors.Is(err, fs.ErrNotExist) {
		return rep, nil
	}
	j.clearStaleLogs()
	rep.Objects, rep.Freed, err = j.collect()
	return rep, err
}

// maybePrune prunes at most once an hour (a marker file's time says when
// it last did), when runs have an age limit.
func (j *Journal) maybePrune() {
	if j.o.MaxAge <= 0 {
		return
	}
	marker := filepath.Join(j.o.Dir, "pruned")
	now := j.o.Now()
	if fi, err := os.Stat(marker); err == nil && now.Sub(fi.ModTime()) < time.Hour && fi.ModTime().Before(now.Add(time.Minute)) {
		return
	}
	if f, err := os.OpenFile(marker, os.O_WRONLY|os.O_CREATE|noFollow, 0o600); err == nil {
		f.Close()
		_ = os.Chtimes(marker, now, now)
	}
	_, _ = j.Prune()
}

// clearNotes removes the notes of pruned runs as old as the journal
// keeps runs.
func (j *Journal) clearNotes() {
	if j.o.MaxAge <= 0 {
		return
	}
	ents, err := os.ReadDir(j.prunedDir())
	if err != nil {
		return
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && j.o.Now().Sub(fi.ModTime()) > j.o.MaxAge {
			_ = os.Remove(filepath.Join(j.prunedDir(), e.Name()))
		}
	}
}

// clearStaleLogs removes the hidden files a run killed while making its
// log left behind.
func (j *Journal) clearStaleLogs() {
	ents, err := os.ReadDir(j.runsDir())
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Hour {
			_ = os.Remove(filepath.Join(j.runsDir(), e.Name()))
		}
	}
}
