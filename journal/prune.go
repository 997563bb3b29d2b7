package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
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

// workspaceUsage is what the runs of ws but except keep, in bytes.
func (j *Journal) workspaceUsage(ws, except string) int64 {
	ids, _ := j.runIDs()
	var n int64
	for _, id := range ids {
		if id == except {
			continue
		}
		p, err := j.peek(id)
		if err != nil || p.Head.WS != ws {
			continue
		}
		if p.End != nil {
			n += p.End.Kept
			continue
		}
		if lg, err := j.readLog(id); err == nil {
			n += keptBytes(lg)
		}
	}
	return n
}

// pruneWorkspace removes the runs of ws older than MaxAge, then its
// oldest runs until need more bytes fit in the quota. It never removes
// except, nor a run that is still running. The objects are left to the
// collector.
func (j *Journal) pruneWorkspace(ws, except string, need int64) []string {
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
	var gone []string
	old := int64(0)
	if j.o.MaxAge > 0 {
		old = j.o.Now().Add(-j.o.MaxAge).UnixNano()
	}
	for _, p := range runs {
		over := j.o.Quota > 0 && usage+need > j.o.Quota
		if p.time() >= old && !over {
			continue
		}
		if os.Remove(j.logPath(p.ID)) == nil {
			gone = append(gone, p.ID)
			usage -= p.End.Kept
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
		rep.Runs = append(rep.Runs, j.pruneWorkspace(p.Head.WS, "", 0)...)
	}
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
