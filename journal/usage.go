package journal

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
)

// What each run that ended keeps, for the quota.
//
// A run's first kept file weighs the workspace's other runs (Run.fits).
// Reading every run's log for that made each journaled command slower by
// every run the journal held (some 0.4 ms a run: 120 ms more a command
// after 300 runs). A run that ended never changes what it keeps, so the
// sums of those runs are cached in <dir>/usage: only a run not in it (new,
// still running, or interrupted) is read, a run gone from runs/ (pruned)
// drops out, and a cache that cannot be read is rebuilt from the logs.
// Runs running at once may each write it; the last one wins, and what it
// misses is read again next time.

const usageVersion = 1

type usageFile struct {
	V int `json:"v"`
	// WS lists the workspaces; a run names its own by index.
	WS   []string              `json:"ws"`
	Runs map[string]usageEntry `json:"runs"`
}

type usageEntry struct {
	WS   int   `json:"w"`
	Kept int64 `json:"k"`
}

// usage is a run that ended: its workspace and what it keeps.
type usage struct {
	ws   string
	kept int64
}

func (j *Journal) usagePath() string { return filepath.Join(j.o.Dir, "usage") }

// loadUsage reads the cache; nil when there is none or it does not read.
func (j *Journal) loadUsage() map[string]usage {
	f, err := os.OpenFile(j.usagePath(), os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return nil
	}
	var u usageFile
	if json.Unmarshal(data, &u) != nil || u.V != usageVersion {
		return nil
	}
	out := make(map[string]usage, len(u.Runs))
	for id, e := range u.Runs {
		if e.WS < 0 || e.WS >= len(u.WS) || e.Kept < 0 || !validID(id) {
			return nil
		}
		out[id] = usage{ws: u.WS[e.WS], kept: e.Kept}
	}
	return out
}

// saveUsage replaces the cache with runs, whole or not at all.
func (j *Journal) saveUsage(runs map[string]usage) {
	u := usageFile{V: usageVersion, Runs: make(map[string]usageEntry, len(runs))}
	idx := map[string]int{}
	for id, r := range runs {
		i, ok := idx[r.ws]
		if !ok {
			i = len(u.WS)
			idx[r.ws] = i
			u.WS = append(u.WS, r.ws)
		}
		u.Runs[id] = usageEntry{WS: i, Kept: r.kept}
	}
	data, err := json.Marshal(u)
	if err != nil || j.ensureDirs() != nil {
		return
	}
	var rb [8]byte
	_, _ = rand.Read(rb[:])
	tmp := filepath.Join(j.tmpDir(), "usage-"+hex.EncodeToString(rb[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(tmp, j.usagePath()) != nil {
		os.Remove(tmp)
	}
}

// workspaceUsage is what the runs of ws but except keep, in bytes.
func (j *Journal) workspaceUsage(ws, except string) int64 {
	ids, _ := j.runIDs()
	cached := j.loadUsage()
	ended := make(map[string]usage, len(ids))
	var n int64
	for _, id := range ids {
		if id == except {
			continue
		}
		if u, ok := cached[id]; ok {
			ended[id] = u
			if u.ws == ws {
				n += u.kept
			}
			continue
		}
		p, err := j.peek(id)
		if err != nil {
			continue
		}
		if p.End != nil {
			ended[id] = usage{ws: p.Head.WS, kept: p.End.Kept}
			if p.Head.WS == ws {
				n += p.End.Kept
			}
			continue
		}
		if p.Head.WS != ws {
			continue
		}
		if lg, err := j.readLog(id); err == nil {
			n += keptBytes(lg)
		}
	}
	if len(ended) != len(cached) || !sameKeys(ended, cached) {
		j.saveUsage(ended)
	}
	return n
}

func sameKeys(a, b map[string]usage) bool {
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}
