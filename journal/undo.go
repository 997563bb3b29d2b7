package journal

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// UndoOptions say how to undo.
type UndoOptions struct {
	// DryRun lists what would be done and does nothing.
	DryRun bool
	// Force undoes even paths changed since the run (by a person or
	// another run): what they hold then is itself recorded by the undo.
	Force bool
	// Info describes the undo as a run of its own (argv, cwd, session,
	// sender): what it changes is recorded, so an undo can be undone.
	Info RunInfo
}

// Conflict is a path an undo would restore that changed since the run.
// Run is the run that changed it (the run undone, when what changed it
// is not known: a person's edit), or the run undone already.
type Conflict struct {
	Path string `json:"path"`
	Run  string `json:"run"`
	Why  string `json:"why"`
}

// ConflictError is an undo refused because paths changed since the run.
type ConflictError struct{ Conflicts []Conflict }

func (e *ConflictError) Error() string {
	var parts []string
	var paths []Conflict
	for _, c := range e.Conflicts {
		if c.Path == "" {
			parts = append(parts, "run "+c.Run+" "+c.Why)
		} else {
			paths = append(paths, c)
		}
	}
	switch {
	case len(paths) == 1:
		parts = append(parts, paths[0].Path+" "+paths[0].Why)
	case len(paths) > 1:
		parts = append(parts, fmt.Sprintf("%d paths changed since the run", len(paths)))
	}
	return strings.Join(parts, "; ")
}

// Step is one thing an undo does (or, on a dry run, would do).
type Step struct {
	Run string `json:"run"`
	// Op: "remove", "restore" (a file's content), "create" (an empty
	// file another step fills), "mkdir", "symlink", "mkfifo", "move",
	// "exchange", "mode", "link".
	Op   string `json:"op"`
	Path string `json:"path"`
	// From is where a move or a link comes from.
	From string `json:"from,omitempty"`
	// Err says why the step was not done.
	Err string `json:"error,omitempty"`
	// Lost says the step failed for good: the content was never kept
	// (too big, over the quota), so no later undo can do it.
	Lost bool `json:"lost,omitempty"`
}

// PathResult is what an undo does (or would do) to one path the runs
// changed: their net change taken back.
type PathResult struct {
	Run string `json:"run"`
	// Op: "restore" (a file, directory or link put back), "remove" (what
	// the run added), "move" (back from From to Path), "mode", or "not
	// kept" (an excluded directory the run changed: nothing to restore).
	Op   string `json:"op"`
	Path string `json:"path"`
	From string `json:"from,omitempty"`
	// Rel and FromRel are Path and From relative to the workspace.
	Rel     string `json:"rel"`
	FromRel string `json:"from_rel,omitempty"`
	// Err says why it was not (or would not be) done.
	Err  string `json:"error,omitempty"`
	Lost bool   `json:"lost,omitempty"`
}

// UndoReport is what an undo did.
type UndoReport struct {
	// Runs are the runs undone, newest first.
	Runs []string `json:"runs"`
	// UndoRuns are the undo's own runs (one per workspace).
	UndoRuns []string `json:"undo_runs,omitempty"`
	Steps    []Step   `json:"steps"`
	// Paths are the net paths the undo takes back, one a path, sorted:
	// what it prints. Steps are how (temp and lock files included).
	Paths []PathResult `json:"paths"`
	// Restored are the net paths the undo put back.
	Restored []string `json:"restored"`
	// Failed are the steps that could not be done.
	Failed []Step `json:"failed,omitempty"`
	// Refreshed are the git indexes that changed since the run (git
	// refreshes its index on git status) and were restored anyway: the
	// undo's own run keeps what they held.
	Refreshed []string `json:"refreshed,omitempty"`
	// Forced lists what Force overrode.
	Forced []Conflict `json:"forced,omitempty"`
	DryRun bool       `json:"dry_run,omitempty"`
}

// Undo takes back runs, newest first: each run's entries in reverse, each
// call's undone by putting back what it destroyed. A file's content is
// written to a temporary file in its directory and renamed over the name,
// so a crash leaves it old or new, never neither. It refuses, with a
// *ConflictError listing them, when paths the runs touched changed since
// (their state differs from what the run left, or another run touched
// them after), or when a run was undone already, unless o.Force. A run
// still running is never undone (ErrRunning).
func (j *Journal) Undo(ids []string, o UndoOptions) (UndoReport, error) {
	rep := UndoReport{DryRun: o.DryRun}
	var runs []undoTarget
	undoing := map[string]bool{}
	for _, id := range ids {
		rec, err := j.Find(id)
		if err != nil {
			return rep, err
		}
		if undoing[rec.ID] {
			continue
		}
		lg, running, err := j.loadLog(rec.ID)
		if err != nil {
			return rep, err
		}
		if running || rec.State == StateRunning {
			return rep, fmt.Errorf("%w: %s", ErrRunning, rec.ID)
		}
		undoing[rec.ID] = true
		runs = append(runs, undoTarget{rec, lg})
	}
	if len(runs) == 0 {
		return rep, fmt.Errorf("%w: none given", ErrUnknownRun)
	}
	sort.SliceStable(runs, func(a, b int) bool { return runs[a].lg.Head.Start > runs[b].lg.Head.Start })
	for _, t := range runs {
		rep.Runs = append(rep.Runs, t.rec.ID)
	}
	conflicts, refreshed, err := j.conflicts(runs, undoing)
	if err != nil {
		return rep, err
	}
	if len(conflicts) > 0 {
		if !o.Force {
			return rep, &ConflictError{Conflicts: conflicts}
		}
		rep.Forced = conflicts
	}
	rep.Refreshed = refreshed
	net := j.netResults(runs)
	u := &undoer{j: j, dry: o.DryRun, info: o.Info, undoes: rep.Runs, runs: map[string]*Run{}, rep: &rep}
	if o.DryRun {
		u.all(runs)
		rep.settle(net, runs)
		return rep, nil
	}
	// Objects are read while the store is held shared: the collector
	// waits until the undo is done.
	unlock, err := j.lockStore()
	if err != nil {
		return rep, err
	}
	err = u.all(runs)
	unlock()
	rep.settle(net, runs)
	if ferr := u.finish(); err == nil {
		err = ferr
	}
	if err != nil {
		return rep, err
	}
	if n := len(rep.Failed); n > 0 {
		return rep, &UndoFailedError{Paths: rep.failedPaths(), Retry: rep.retryable() > 0}
	}
	return rep, nil
}

// UndoFailedError is an undo some steps of which failed. When Retry, the
// runs are not marked undone: a later undo retries what failed.
type UndoFailedError struct {
	Paths []PathResult
	Retry bool
}

func (e *UndoFailedError) Error() string {
	s := fmt.Sprintf("%d %s could not be restored", len(e.Paths), pluralWord(len(e.Paths), "path"))
	if e.Retry {
		s += "; the run is not marked undone, and undoing it again retries them"
	}
	return s
}

func pluralWord(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

// netResults are the net changes of runs (newest first) as an undo takes
// them back: one a path, the oldest run's for a path several changed
// (what it held before that run is what the undo leaves).
func (j *Journal) netResults(runs []undoTarget) []PathResult {
	byPath := map[string]PathResult{}
	for _, t := range runs {
		ws := t.lg.Head.WS
		for _, c := range j.changes(t.lg) {
			r := PathResult{Run: t.rec.ID, Path: c.Path, Rel: relTo(ws, c.Path)}
			switch c.Op {
			case OpAdded:
				r.Op = "remove"
			case OpDeleted, OpChanged:
				r.Op = "restore"
			case OpMoved:
				r.Op, r.Path, r.Rel, r.From, r.FromRel = "move", c.From, relTo(ws, c.From), c.Path, relTo(ws, c.Path)
			case OpMode:
				r.Op = "mode"
			case OpNotKept:
				r.Op, r.Err, r.Lost = "not kept", c.Why, true
			}
			if !c.Restorable && r.Err == "" {
				r.Err, r.Lost = c.Why, true
			}
			key := r.Path
			if r.Op == "move" {
				// The new name is a path the run changed too.
				delete(byPath, r.From)
			}
			byPath[key] = r
		}
	}
	out := make([]PathResult, 0, len(byPath))
	for _, r := range byPath {
		out = append(out, r)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Path < out[b].Path })
	return out
}

func relTo(ws, p string) string {
	if rel, ok := within(ws, p); ok {
		return rel
	}
	return p
}

// settle gives each net path the error of a step on it that failed, adds
// the failed steps no net path accounts for, and lists what was restored.
func (rep *UndoReport) settle(net []PathResult, runs []undoTarget) {
	wsOf := map[string]string{}
	for _, t := range runs {
		wsOf[t.rec.ID] = t.lg.Head.WS
	}
	byPath := map[string]int{}
	for i, r := range net {
		byPath[r.Path] = i
		if r.From != "" {
			byPath[r.From] = i
		}
	}
	for _, f := range rep.Failed {
		if i, ok := byPath[f.Path]; ok {
			if net[i].Err == "" {
				net[i].Err, net[i].Lost = f.Err, f.Lost
			}
			continue
		}
		net = append(net, PathResult{Run: f.Run, Op: f.Op, Path: f.Path, From: f.From, Rel: relTo(wsOf[f.Run], f.Path),
			FromRel: relTo(wsOf[f.Run], f.From), Err: f.Err, Lost: f.Lost})
		byPath[f.Path] = len(net) - 1
	}
	rep.Paths = net
	rep.Restored = []string{}
	if rep.DryRun {
		return
	}
	for _, r := range net {
		if r.Err == "" {
			rep.Restored = append(rep.Restored, r.Path)
		}
	}
}

// failedPaths are the net paths not restored.
func (rep *UndoReport) failedPaths() []PathResult {
	var out []PathResult
	for _, r := range rep.Paths {
		if r.Err != "" && r.Op != "not kept" {
			out = append(out, r)
		}
	}
	return out
}

// retryable counts the failed steps a later undo may do.
func (rep *UndoReport) retryable() int {
	n := 0
	for _, f := range rep.Failed {
		if !f.Lost {
			n++
		}
	}
	return n
}

type undoTarget struct {
	rec RunRecord
	lg  *runLog
}

// conflicts lists what changed since the runs (newest first): a run
// undone already; a path that another run still running touched after
// this run; a path whose state differs from what its run left, unless a
// newer run being undone touched it too (undoing that one puts back what
// this one left), or what changed it since has been undone (see
// undoneSince). A git index that changed since is no conflict: it is
// returned in refreshed, to be restored anyway.
func (j *Journal) conflicts(runs []undoTarget, undoing map[string]bool) (out []Conflict, refreshed []string, err error) {
	seen := map[string]bool{}
	add := func(c Conflict) {
		if c.Path == "" || !seen[c.Path] {
			seen[c.Path] = true
			out = append(out, c)
		}
	}
	wss := map[string]bool{}
	for _, t := range runs {
		wss[t.lg.Head.WS] = true
	}
	others, err := j.otherRuns(undoing, wss)
	if err != nil {
		return nil, nil, err
	}
	for i, t := range runs {
		if t.rec.UndoneBy != "" && !undoing[t.rec.UndoneBy] {
			// Its paths changed since: by the undo.
			add(Conflict{Run: t.rec.ID, Why: "was undone already, by run " + t.rec.UndoneBy})
			continue
		}
		ws := t.lg.Head.WS
		first := map[string]int64{}
		for _, e := range t.lg.Entries {
			for _, p := range []string{e.P, e.P2} {
				if _, ok := first[p]; p != "" && !filepath.IsAbs(p) && !ok {
					first[p] = e.At
				}
			}
		}
		names := make([]string, 0, len(t.lg.After))
		for n := range t.lg.After {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if newerTouches(runs[:i], ws, n) {
				continue
			}
			path := filepath.Join(ws, n)
			touch := touchers(others, ws, n, first[n])
			if q, ok := overlapping(t, touch); ok && !IsGitIndex(n) {
				why := "changed by run " + q.id + " too"
				if q.running {
					why = "changed by run " + q.id + ", still running"
				}
				add(Conflict{Path: path, Run: q.id, Why: why})
				continue
			}
			after := t.lg.After[n]
			now, err := lstatBelow(ws, path)
			if err == nil && sameAfter(after, now) {
				continue
			}
			if err == nil && IsGitIndex(n) {
				refreshed = append(refreshed, path)
				continue
			}
			if err == nil && undoneSince(t, n, after, now, touch) {
				continue
			}
			by, why := t.rec.ID, "changed since run "+t.rec.ID+" ended"
			for k := len(touch) - 1; k >= 0; k-- {
				if q := touch[k].q; len(q.lg.Head.Undoes) == 0 && q.undoneBy == "" {
					by, why = q.id, "changed by run "+q.id+" since run "+t.rec.ID+" ended"
					break
				}
			}
			add(Conflict{Path: path, Run: by, Why: why})
		}
	}
	return out, refreshed, nil
}

// overlapping returns a run among touch still running, or one that ran
// while t did and was not undone: what it did to the path is mixed with
// what t did.
func overlapping(t undoTarget, touch []touch) (otherRun, bool) {
	end := int64(math.MaxInt64)
	if t.lg.End != nil && t.lg.End.At != 0 {
		end = t.lg.End.At
	}
	for k := len(touch) - 1; k >= 0; k-- {
		q := touch[k].q
		if q.running || q.lg.Head.Start < end && q.undoneBy == "" && len(q.lg.Head.Undoes) == 0 {
			return q, true
		}
	}
	return otherRun{}, false
}

// touch is a run that touched a path: when first and last, and what the
// path held before its first entry on it.
type touch struct {
	q           otherRun
	first, last int64
	pre         *State
}

// touchers are the runs of others that touched n in ws after at, in the
// order they first did.
func touchers(others []otherRun, ws, n string, at int64) []touch {
	var out []touch
	for _, q := range others {
		if q.lg.Head.WS != ws {
			continue
		}
		var t *touch
		for _, e := range q.lg.Entries {
			if e.At <= at || e.X == xExcluded || e.P != n && e.P2 != n {
				continue
			}
			if t == nil {
				t = &touch{q: q, first: e.At}
				if e.P == n {
					t.pre = e.A
				} else {
					t.pre = e.B
				}
			}
			t.last = e.At
		}
		if t != nil {
			out = append(out, *t)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].first < out[b].first })
	return out
}

// undoneSince says whether n, which differs from what run t left (after),
// is as t left it but for runs that have been undone since: every run
// that touched it after t was undone, the newest of them an undo that
// left it as it is now (now), and the first started from what t left.
// Undoing runs newest first thus needs no force. Runs that touched it
// only to undo t itself (an undo that failed in part) count as well.
func undoneSince(t undoTarget, n string, after, now State, touch []touch) bool {
	if len(touch) == 0 {
		return false
	}
	newest := touch[0]
	for _, x := range touch[1:] {
		if x.last > newest.last {
			newest = x
		}
	}
	if len(newest.q.lg.Head.Undoes) == 0 {
		return false
	}
	if left, ok := newest.q.lg.After[n]; !ok || !sameAfter(left, now) {
		return false
	}
	real := 0
	for _, x := range touch {
		if len(x.q.lg.Head.Undoes) > 0 {
			continue
		}
		real++
		if x.q.undoneBy == "" {
			return false
		}
	}
	if real == 0 {
		for _, x := range touch {
			if !slicesContains(x.q.lg.Head.Undoes, t.rec.ID) {
				return false
			}
		}
		return true
	}
	if len(touch[0].q.lg.Head.Undoes) > 0 && !slicesContains(touch[0].q.lg.Head.Undoes, t.rec.ID) {
		return false
	}
	for _, x := range touch {
		if len(x.q.lg.Head.Undoes) == 0 {
			return x.pre != nil && samePre(*x.pre, after)
		}
	}
	return false
}

// samePre says whether what a run found at a path (pre) is what another
// left there (after): the same type and, for a file, the same inode, size
// and modification time.
func samePre(pre, after State) bool {
	if pre.Type != after.Type {
		return false
	}
	switch pre.Type {
	case TypeAbsent:
		return true
	case TypeSymlink:
		return pre.Target == after.Target
	case TypeDir:
		return pre.Ino == after.Ino
	}
	return pre.Ino == after.Ino && pre.Dev == after.Dev && pre.Size == after.Size && pre.Mtime == after.Mtime
}

// newerTouches says whether one of the runs undone before (newer) named
// p in ws.
func newerTouches(newer []undoTarget, ws, p string) bool {
	for _, t := range newer {
		if _, ok := t.lg.After[p]; ok && t.lg.Head.WS == ws {
			return true
		}
	}
	return false
}

type otherRun struct {
	id      string
	lg      *runLog
	running bool
	// undoneBy is the undo that took the run back, if one did.
	undoneBy string
}

// otherRuns are the runs of the workspaces wss not being undone.
func (j *Journal) otherRuns(undoing, wss map[string]bool) ([]otherRun, error) {
	ids, err := j.runIDs()
	if err != nil {
		return nil, err
	}
	var out []otherRun
	for _, id := range ids {
		if undoing[id] {
			continue
		}
		p, err := j.peek(id)
		if err != nil || !wss[p.Head.WS] {
			continue
		}
		lg, running, err := j.loadLog(id)
		if err != nil {
			continue
		}
		out = append(out, otherRun{id: id, lg: lg, running: running})
	}
	undone := map[string]string{}
	for _, q := range out {
		if q.lg.End == nil || q.lg.End.Failed == 0 {
			for _, u := range q.lg.Head.Undoes {
				undone[u] = q.id
			}
		}
	}
	for i := range out {
		out[i].undoneBy = undoneBy(undone, out[i].id, 0)
	}
	return out, nil
}

// undoer carries out (or lists) the steps of an undo, recording what it
// changes as runs of its own.
type undoer struct {
	j      *Journal
	dry    bool
	info   RunInfo
	undoes []string
	runs   map[string]*Run // the undo's runs, by workspace
	rep    *UndoReport
	run    string // the run being undone
	ws     string
	u      *Run
	dirs   []dirTime
	links  map[[2]uint64][]string // names by (device, inode), once needed
	done   map[string]bool
	// dryMade are the paths a dry run's steps would make.
	dryMade map[string]bool
	// restored are the files put back, by what they were before the run.
	restored map[fileID]string
}

type dirTime struct {
	ws, path string
	mtime    int64
}

// errStop ends an undo: the undo's own journal cannot record.
type errStop struct{ err error }

func (e *errStop) Error() string { return "the undo cannot be recorded: " + e.err.Error() }
func (e *errStop) Unwrap() error { return e.err }

func (u *undoer) all(runs []undoTarget) error {
	u.done = map[string]bool{}
	u.dryMade = map[string]bool{}
	u.restored = map[fileID]string{}
	for _, t := range runs {
		u.run, u.ws = t.rec.ID, t.lg.Head.WS
		u.links = nil
		if !u.dry {
			r, ok := u.runs[u.ws]
			if !ok {
				info := u.info
				info.ID, info.Workspace, info.undoes = "", u.ws, u.undoes
				var err error
				if r, err = u.j.Begin(info); err != nil {
					return err
				}
				u.runs[u.ws] = r
			}
			u.u = r
		}
		for i := len(t.lg.Entries) - 1; i >= 0; i-- {
			if err := u.entry(t.lg.Entries[i]); err != nil {
				return err
			}
		}
	}
	// Directories get their times back last: putting their files back
	// moved them.
	for i := len(u.dirs) - 1; i >= 0; i-- {
		if a, err := openAt(u.dirs[i].ws, u.dirs[i].path); err == nil {
			_ = a.lutimes(u.dirs[i].mtime)
			a.close()
		}
	}
	return nil
}

func (u *undoer) finish() error {
	var first error
	wss := make([]string, 0, len(u.runs))
	for ws := range u.runs {
		wss = append(wss, ws)
	}
	sort.Strings(wss)
	for _, ws := range wss {
		// An undo some steps of which failed (and may be done later)
		// says so in its end: the runs it undoes stay to be undone.
		u.runs[ws].failed = u.rep.retryable()
		sum, err := u.runs[ws].Finish()
		if err != nil && first == nil {
			first = err
		}
		if sum.Changed {
			u.rep.UndoRuns = append(u.rep.UndoRuns, sum.ID)
		}
	}
	return first
}

func (u *undoer) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(u.ws, p)
}

// entry undoes one entry.
func (u *undoer) entry(e record) error {
	switch kindOf(e.K) {
	case Write, Unlink, Rmdir, Mkdir, Mknod, Symlink:
		if e.A != nil {
			return u.restore(u.abs(e.P), *e.A)
		}
	case Chmod, Chown:
		if e.A != nil {
			return u.meta(u.abs(e.P), *e.A)
		}
	case Link:
		if e.B != nil && !filepath.IsAbs(e.P2) {
			if err := u.restore(u.abs(e.P2), *e.B); err != nil {
				return err
			}
		}
		if e.A != nil && e.A.Object != "" {
			return u.restore(u.abs(e.P), *e.A)
		}
	case Rename:
		if e.X == "in" {
			ok, err := u.move(u.abs(e.P2), e.P)
			if err != nil || !ok || e.B == nil {
				return err
			}
			return u.restore(u.abs(e.P2), *e.B)
		}
		if e.A != nil && e.A.Type != TypeAbsent {
			ok, err := u.move(u.abs(e.P2), u.abs(e.P))
			if err != nil || !ok {
				return err
			}
		}
		if e.B != nil {
			return u.restore(u.abs(e.P2), *e.B)
		}
	case Exchange:
		return u.exchange(u.abs(e.P), u.abs(e.P2))
	}
	return nil
}

// lost records a step that cannot be done, ever: what it needs was not
// kept.
func (u *undoer) lost(op, path string, err error) {
	u.step(op, path, "", err)
	u.rep.Failed[len(u.rep.Failed)-1].Lost = true
	u.rep.Steps[len(u.rep.Steps)-1].Lost = true
}

// step records a step; err, when not nil, says why it was not done.
func (u *undoer) step(op, path, from string, err error) {
	if op != "remove" && op != "mode" {
		if err == nil && u.dry || errors.Is(err, fs.ErrNotExist) {
			// Say so when the directory it goes in is gone (moved or
			// removed since the run), a dry run too.
			if gone := u.parentGone(path); gone != nil {
				err = gone
			}
		}
		if err == nil && u.dry {
			u.dryMade[path] = true
		}
	}
	s := Step{Run: u.run, Op: op, Path: path, From: from}
	if err != nil {
		s.Err = err.Error()
		u.rep.Failed = append(u.rep.Failed, s)
	} else if !u.dry && !u.done[path] {
		u.done[path] = true
		u.rep.Restored = append(u.rep.Restored, path)
	}
	u.rep.Steps = append(u.rep.Steps, s)
}

// parentGone is the error of a step on path whose directory is not
// there (nor, on a dry run, made by an earlier step); nil otherwise.
func (u *undoer) parentGone(path string) error {
	dir := filepath.Dir(path)
	if _, below := within(u.ws, dir); !below || u.dryMade[dir] {
		return nil
	}
	if st, err := lstatBelow(u.ws, dir); err == nil && st.Type == TypeDir {
		return nil
	}
	return fmt.Errorf("the directory %s is not there (moved or removed since the run?)", relTo(u.ws, dir))
}

// before records, in the undo's own run, what a step is about to change.
func (u *undoer) before(k Kind, path, path2 string) error {
	if err := u.u.Before(k, path, path2); err != nil {
		return &errStop{fmt.Errorf("%s %s: %w", k, path, err)}
	}
	return nil
}

// open opens the directory of path (see openAt), from the workspace, or
// from / for a path outside it (a move's inverse puts a file back where
// it came from): reached through no link, so that a directory replaced
// by one since the run cannot lead undo elsewhere.
func (u *undoer) open(path string) (*at, error) {
	if _, ok := within(u.ws, path); ok {
		return openAt(u.ws, path)
	}
	return openAt("/", path)
}

// at opens the directory of path for a step op (see open); where it
// cannot, the step fails and ok is false.
func (u *undoer) at(op, path string) (a *at, ok bool) {
	a, err := u.open(path)
	if err != nil {
		u.step(op, path, "", err)
		return nil, false
	}
	return a, true
}

// lstat describes what is at path, reached without following a link
// (errLinkOnTheWay when a directory on the way is one now).
func (u *undoer) lstat(path string) (State, error) {
	if _, ok := within(u.ws, path); ok {
		return lstatBelow(u.ws, path)
	}
	return lstatBelow("/", path)
}

// lstatBelow describes what is at path below ws, reached one name at a
// time without following a link.
func lstatBelow(ws, path string) (State, error) {
	a, err := openAt(ws, path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return State{Type: TypeAbsent}, nil
	}
	if err != nil {
		return State{}, err
	}
	defer a.close()
	return a.lstat()
}

// restore puts back the state s at path.
func (u *undoer) restore(path string, s State) error {
	cur, err := u.lstat(path)
	if err != nil {
		u.step("restore", path, "", err)
		return nil
	}
	switch s.Type {
	case TypeAbsent:
		if cur.Type == TypeAbsent {
			return nil
		}
		return u.remove(path, cur)
	case TypeFile:
		return u.restoreFile(path, s, cur)
	case TypeDir:
		u.dirs = append(u.dirs, dirTime{u.ws, path, s.Mtime})
		if cur.Type == TypeDir {
			return u.meta(path, s)
		}
		if u.dry {
			u.step("mkdir", path, "", nil)
			return nil
		}
		if cur.Type != TypeAbsent {
			if err := u.remove(path, cur); err != nil {
				return err
			}
			if c, _ := u.lstat(path); c.Type != TypeAbsent {
				return nil
			}
		}
		a, ok := u.at("mkdir", path)
		if !ok {
			return nil
		}
		defer a.close()
		if err := u.before(Mkdir, path, ""); err != nil {
			return err
		}
		err := a.mkdir(s.Mode)
		if err == nil {
			err = a.chmod(s.Mode)
			u.owner(a, s)
		}
		u.step("mkdir", path, "", err)
	case TypeSymlink:
		if cur.Type == TypeSymlink && cur.Target == s.Target {
			return nil
		}
		if u.dry {
			u.step("symlink", path, s.Target, nil)
			return nil
		}
		if cur.Type == TypeDir {
			if err := u.remove(path, cur); err != nil {
				return err
			}
		}
		a, ok := u.at("symlink", path)
		if !ok {
			return nil
		}
		defer a.close()
		tmp := tempName(path)
		ta := a.sibling(filepath.Base(tmp))
		if err := u.before(Symlink, tmp, ""); err != nil {
			return err
		}
		err := ta.symlink(s.Target)
		if err == nil {
			if err = u.before(Rename, tmp, path); err != nil {
				_ = ta.unlink()
				return err
			}
			if err = renameAt(ta, a); err != nil {
				_ = ta.unlink()
			}
		}
		u.step("symlink", path, s.Target, err)
	case TypeFIFO:
		if cur.Type == TypeFIFO {
			return u.meta(path, s)
		}
		if u.dry {
			u.step("mkfifo", path, "", nil)
			return nil
		}
		if cur.Type != TypeAbsent {
			if err := u.remove(path, cur); err != nil {
				return err
			}
		}
		a, ok := u.at("mkfifo", path)
		if !ok {
			return nil
		}
		defer a.close()
		if err := u.before(Mknod, path, ""); err != nil {
			return err
		}
		err := a.mkfifo(s.Mode)
		if err == nil {
			err = a.chmod(s.Mode)
		}
		u.step("mkfifo", path, "", err)
	default:
		if cur.Type != s.Type {
			u.lost("restore", path, errors.New("a device or socket cannot be made again"))
		}
	}
	return nil
}

// remove takes away what is at path (a directory only when empty).
func (u *undoer) remove(path string, cur State) error {
	if u.dry {
		u.step("remove", path, "", nil)
		return nil
	}
	a, ok := u.at("remove", path)
	if !ok {
		return nil
	}
	defer a.close()
	var err error
	if cur.Type == TypeDir {
		if err = u.before(Rmdir, path, ""); err != nil {
			return err
		}
		err = a.rmdir()
		if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
			err = errors.New("the directory holds files the run did not make")
		}
	} else {
		if err = u.before(Unlink, path, ""); err != nil {
			return err
		}
		err = a.unlink()
	}
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	u.step("remove", path, "", err)
	return nil
}

// restoreFile puts a regular file's content and metadata back.
func (u *undoer) restoreFile(path string, s State, cur State) error {
	switch {
	case s.Object == "" && (s.Kept == keptEarlier || s.Kept == keptMeta):
		// An earlier entry holds the content: a name is all this
		// step needs.
		if cur.Type == TypeFile {
			return nil
		}
		if u.dry {
			u.step("create", path, "", nil)
			return nil
		}
		if cur.Type != TypeAbsent {
			if err := u.remove(path, cur); err != nil {
				return err
			}
		}
		a, ok := u.at("create", path)
		if !ok {
			return nil
		}
		defer a.close()
		if err := u.before(Write, path, ""); err != nil {
			return err
		}
		f, err := a.create(s.Mode)
		if err == nil {
			err = f.Close()
		}
		u.step("create", path, "", err)
		return nil
	case s.Object == "":
		// Not kept: only a file that still has the content can be
		// given its metadata back.
		if s.Digest != "" && cur.Type == TypeFile && cur.Size == s.Size && u.digest(path) == s.Digest {
			return u.meta(path, s)
		}
		why := "its content was not kept"
		switch s.Kept {
		case NotKeptTooBig:
			why = fmt.Sprintf("its content was not kept: too big (%d bytes)", s.Size)
		case NotKeptQuota:
			why = "its content was not kept: over the workspace's quota"
		}
		u.lost("restore", path, errors.New(why))
		return nil
	}
	if !u.j.hasObject(s.Object) {
		u.lost("restore", path, errors.New("its content was pruned from the journal"))
		return nil
	}
	if s.Nlink > 1 && u.links == nil {
		// Found before anything changes: the names that shared the
		// file's inode before the run, or share the one the run left.
		u.links = linkIndex(u.ws, u.j)
	}
	id := fileID{s.Dev, s.Ino, s.Object}
	if prev, ok := u.restored[id]; ok && prev != path && s.Ino != 0 {
		// Another name of the same file was put back already (a file
		// with several names before the run): this one is linked to it.
		if p, _ := u.lstat(prev); p.Type == TypeFile && !(cur.Type == TypeFile && cur.Ino == p.Ino) {
			return u.linkOver(prev, path, cur)
		}
	}
	if cur.Type == TypeFile && cur.Size == s.Size && u.digest(path) == s.Object {
		if err := u.meta(path, s); err != nil {
			return err
		}
		u.restored[id] = path
		return u.relink(path, s, cur)
	}
	if u.dry {
		u.step("restore", path, "", nil)
		return nil
	}
	if cur.Type == TypeDir {
		if err := u.remove(path, cur); err != nil {
			return err
		}
		if c, _ := u.lstat(path); c.Type != TypeAbsent {
			return nil
		}
	}
	a, ok := u.at("restore", path)
	if !ok {
		return nil
	}
	defer a.close()
	tmp := tempName(path)
	ta := a.sibling(filepath.Base(tmp))
	if err := u.before(Write, tmp, ""); err != nil {
		return err
	}
	err := u.writeObject(ta, s)
	if err == nil {
		if err := u.before(Rename, tmp, path); err != nil {
			_ = ta.unlink()
			return err
		}
		if err = renameAt(ta, a); err != nil {
			_ = ta.unlink()
		}
	}
	u.step("restore", path, "", err)
	if err != nil {
		return nil
	}
	u.restored[id] = path
	return u.relink(path, s, cur)
}

// fileID names a file as a run saw it: its inode and its content.
type fileID struct {
	dev, ino uint64
	object   string
}

// linkOver makes path a new name of the file at target: a link made
// beside path and renamed over it.
func (u *undoer) linkOver(target, path string, cur State) error {
	if u.dry {
		u.step("link", path, target, nil)
		return nil
	}
	if cur.Type == TypeDir {
		if err := u.remove(path, cur); err != nil {
			return err
		}
	}
	a, ok := u.at("link", path)
	if !ok {
		return nil
	}
	defer a.close()
	from, ok := u.at("link", target)
	if !ok {
		return nil
	}
	defer from.close()
	tmp := tempName(path)
	ta := a.sibling(filepath.Base(tmp))
	if err := u.before(Link, target, tmp); err != nil {
		return err
	}
	err := linkAt(from, ta)
	if err == nil {
		if err = u.before(Rename, tmp, path); err != nil {
			_ = ta.unlink()
			return err
		}
		if err = renameAt(ta, a); err != nil {
			_ = ta.unlink()
		}
	}
	u.step("link", path, target, err)
	return nil
}

// writeObject writes the object s names to a new file tmp, with s's mode,
// owner and modification time, checking the content's digest.
func (u *undoer) writeObject(tmp *at, s State) error {
	src, err := u.j.openObject(s.Object)
	if err != nil {
		return err
	}
	defer src.Close()
	f, err := tmp.create(0o600)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = copyHashing(f, src, h)
	if err == nil && hex.EncodeToString(h.Sum(nil)) != s.Object {
		err = errors.New("the kept content is damaged")
	}
	if err == nil {
		err = f.Chmod(goMode(s.Mode))
	}
	if err == nil && (s.UID != os.Getuid() || s.GID != os.Getgid()) {
		_ = f.Chown(s.UID, s.GID)
		if s.Mode&0o6000 != 0 {
			err = f.Chmod(goMode(s.Mode)) // chown clears set-id bits
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && s.Mtime != 0 {
		err = tmp.lutimes(s.Mtime)
	}
	if err != nil {
		_ = tmp.unlink()
	}
	return err
}

// meta puts back a path's mode, owner and (for a file) modification time,
// when the path holds the same type of thing.
func (u *undoer) meta(path string, s State) error {
	cur, err := u.lstat(path)
	if err != nil || cur.Type != s.Type || cur.Type == TypeAbsent || cur.Type == TypeSymlink {
		return nil
	}
	modeDiffers := cur.Mode != s.Mode
	ownerDiffers := cur.UID != s.UID || cur.GID != s.GID
	timeDiffers := s.Type == TypeFile && s.Mtime != 0 && cur.Mtime != s.Mtime
	if !modeDiffers && !ownerDiffers && !timeDiffers {
		return nil
	}
	if u.dry {
		u.step("mode", path, "", nil)
		return nil
	}
	a, ok := u.at("mode", path)
	if !ok {
		return nil
	}
	defer a.close()
	if err := u.before(Chmod, path, ""); err != nil {
		return err
	}
	if ownerDiffers {
		u.owner(a, s)
	}
	if modeDiffers || ownerDiffers {
		err = a.chmod(s.Mode)
	}
	if err == nil && timeDiffers {
		err = a.lutimes(s.Mtime)
	}
	u.step("mode", path, "", err)
	return nil
}

// owner gives a name back its owner, when mnemos may (root, or a group
// of its own); otherwise it stays the user's.
func (u *undoer) owner(a *at, s State) {
	_ = a.lchown(s.UID, s.GID)
}

// relink makes the other names a file had before the run (s.Nlink > 1)
// names of the restored file again: the names in the workspace with the
// inode it had before the run, or the one it had just before this step.
func (u *undoer) relink(path string, s State, cur State) error {
	if s.Nlink <= 1 || u.links == nil {
		return nil
	}
	now, err := u.lstat(path)
	if err != nil || now.Type != TypeFile {
		return nil
	}
	keys := [][2]uint64{{s.Dev, s.Ino}}
	if cur.Type == TypeFile {
		keys = append(keys, [2]uint64{cur.Dev, cur.Ino})
	}
	var names []string
	for _, key := range keys {
		for _, n := range u.links[key] {
			if n != path && !slicesContains(names, n) {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	for _, n := range names {
		other, err := u.lstat(n)
		if err != nil || other.Type != TypeFile || other.Ino == now.Ino {
			continue
		}
		if !slicesContains2(keys, [2]uint64{other.Dev, other.Ino}) {
			continue // the name holds another file now
		}
		if err := u.linkOver(path, n, other); err != nil {
			return err
		}
	}
	return nil
}

func slicesContains2(s [][2]uint64, v [2]uint64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// linkIndex maps the regular files in ws (excluded
// directories left out) by device and inode.
func linkIndex(ws string, j *Journal) map[[2]uint64][]string {
	idx := map[[2]uint64][]string{}
	_ = filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != ws && j.exclude[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		var s State
		sysStat(fi, &s)
		key := [2]uint64{s.Dev, s.Ino}
		idx[key] = append(idx[key], p)
		return nil
	})
	return idx
}

// move puts what is at from back at to (a rename's inverse; to may be
// outside the workspace, where the file came from), each reached through
// no link. What cannot go back is left where it is, and move returns
// false: what follows must not be done.
func (u *undoer) move(from, to string) (bool, error) {
	src, err := u.lstat(from)
	if err != nil {
		u.step("move", to, from, err)
		return false, nil
	}
	if src.Type == TypeAbsent {
		u.step("move", to, from, errors.New(from+" is gone"))
		return false, nil
	}
	dst, err := u.lstat(to)
	if err != nil {
		u.step("move", to, from, fmt.Errorf("%w; %s is left in place", err, from))
		return false, nil
	}
	if dst.Type != TypeAbsent {
		// The rename failed when it ran, or something took its place
		// since: leave both.
		u.step("move", to, from, errors.New(to+" exists; "+from+" is left in place"))
		return false, nil
	}
	if u.dry {
		u.step("move", to, from, nil)
		return true, nil
	}
	fa, err := u.open(from)
	if err != nil {
		u.step("move", to, from, err)
		return false, nil
	}
	defer fa.close()
	ta, err := u.open(to)
	if err != nil {
		u.step("move", to, from, err)
		return false, nil
	}
	defer ta.close()
	if err := u.before(Rename, from, to); err != nil {
		return false, err
	}
	err = renameAt(fa, ta)
	u.step("move", to, from, err)
	return err == nil, nil
}

// exchange swaps a and b back.
func (u *undoer) exchange(a, b string) error {
	sa, erra := u.lstat(a)
	sb, errb := u.lstat(b)
	if err := errors.Join(erra, errb); err != nil {
		u.step("exchange", a, b, err)
		return nil
	}
	if sa.Type == TypeAbsent || sb.Type == TypeAbsent {
		u.step("exchange", a, b, errors.New("both names must exist to be exchanged back"))
		return nil
	}
	if u.dry {
		u.step("exchange", a, b, nil)
		return nil
	}
	aa, ok := u.at("exchange", a)
	if !ok {
		return nil
	}
	defer aa.close()
	ba, ok := u.at("exchange", b)
	if !ok {
		return nil
	}
	defer ba.close()
	if err := u.before(Exchange, a, b); err != nil {
		return err
	}
	u.step("exchange", a, b, exchangeAt(aa, ba))
	return nil
}

// tempName is a new name beside path for what will be renamed over it.
func tempName(path string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return filepath.Join(filepath.Dir(path), ".mnemos-undo-"+hex.EncodeToString(b[:]))
}

// digest is the SHA-256 of the content of the file at path, reached
// through no link; "" when it cannot be read.
func (u *undoer) digest(path string) string {
	a, err := u.open(path)
	if err != nil {
		return ""
	}
	defer a.close()
	f, err := a.open()
	if err != nil {
		return ""
	}
	defer f.Close()
	d, err := hashOnly(f)
	if err != nil {
		return ""
	}
	return d
}
