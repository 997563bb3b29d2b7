package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Git repositories a run leaves in its workspace. git reads the
// configuration and runs the hooks of every repository it finds: the
// workspace's own (kept read-only by the view), but also one nested at any
// depth below it (a submodule that git status enters, a directory a
// person's shell prompt or editor runs git in), a bare repository a person
// steps into, and one a .git file or link names elsewhere. A confined
// command can create all of these inside the workspace it may write, and
// no mount can keep read-only what does not exist yet.
//
// So when a run ends, WatchRepos's check finds the repositories that
// appeared or changed during it and makes them harmless rather than
// removing them (a build's checkout of a dependency, a test's fixture and
// a person's approved clone keep working): their configuration keeps only
// the settings that name no program (harmlessGitKeys; the file as it was
// is moved aside next to it), a hook the run wrote is moved aside unless
// it is the user's own template's, and a .git file or link that sends git
// to a directory outside the workspace, which the check cannot look
// after, is moved aside itself. What is moved aside is renamed
// NAME.quarantined-UNIXTIME, which git never reads, and reported.
//
// Finding them is cheap: a listing of the workspace's directories, kept
// between runs, tells which directories to read again. A directory's
// change time moves whenever an entry is added, removed or renamed in it,
// and no program can set it back, so after a run only the directories
// whose change time is past the listing's need reading; the others are
// one statx each. The first run in a workspace walks it once.

// reposMargin is how far before a moment a change time may read when the
// change came after it: file systems stamp times from a clock that ticks
// once per scheduler tick, and some keep whole seconds only. A change
// made within it before a run counts as the run's: it is only looked at
// again.
const reposMargin = int64(time.Second)

// Bounds of the check, which every run pays for: a listing holds at most
// maxRepoDirs directories (a statx each at every run), goes at most
// maxRepoDepth deep (a path git reads is shorter than PATH_MAX, 4096
// bytes: 2048 levels of one-letter names) and keeps at most
// maxRepoEntries repositories. Beyond, the report says, at every run,
// what was not looked at.
const (
	maxRepoDirs    = 200_000
	maxRepoDepth   = 2048
	maxRepoEntries = 100_000
)

// RepoWatch is the check of one run's workspace (WatchRepos).
type RepoWatch struct {
	ws, file string
	done     chan struct{}
	l        *repoListing
	fresh    bool // the listing was made by walking, not read
	problem  string
	start    int64
	// top is the workspace's own .git as it was when the run started.
	top     nodeInfo
	topSeen bool
}

// RepoOptions qualify Finish.
type RepoOptions struct {
	// Home is the user's home directory, whose git configuration names
	// the templates git init copies hooks from (init.templateDir).
	Home string
	// Protected are paths the run could not change (the view's read-only
	// later paths that existed): they are not looked at.
	Protected []string
	// Now names what is moved aside.
	Now time.Time
}

// RepoReport is what Finish found and did.
type RepoReport struct {
	// Repos are the repositories made harmless, one entry each.
	Repos []DefusedRepo `json:"repos,omitempty"`
	// Unchecked says what was not checked, and why; "" when all was.
	Unchecked string `json:"unchecked,omitempty"`
	// Dirs is the number of directories the listing holds, Read the number
	// read again (changed during or since the last run, or new).
	Dirs int `json:"dirs"`
	Read int `json:"read"`
}

// DefusedRepo is one repository the run left that would have run
// something outside the sandbox, and what was done about it.
type DefusedRepo struct {
	// Repo is its git directory, or the .git file or link that was moved
	// aside.
	Repo string `json:"repo"`
	// Would says what git would have run or obeyed: settings
	// (core.fsmonitor), hooks (hooks/post-checkout), a git directory
	// elsewhere.
	Would []string `json:"would"`
	// Moved are the paths moved aside and where each went.
	Moved [][2]string `json:"moved"`
	// Wrote is the configuration written in place of the one moved aside,
	// holding its harmless settings; "" when none was written.
	Wrote string `json:"wrote,omitempty"`
}

// WatchRepos starts the check of the git repositories a run leaves in the
// workspace ws: it reads the listing kept in file (written by the last
// check of the same workspace) or, without one, walks the workspace, in
// the background. Start marks when the command starts; Finish checks.
// A nil *RepoWatch checks nothing.
func WatchRepos(ws, file string) *RepoWatch {
	w := &RepoWatch{ws: filepath.Clean(ws), file: file, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		if !reposSupported {
			w.problem = "the check of git repositories left in the workspace runs on Linux only"
			return
		}
		wi, err := statFollow(w.ws)
		if err != nil || wi.typ != direntDir {
			w.problem = "cannot read the workspace " + w.ws
			return
		}
		if l, ok := loadListing(file, w.ws, wi); ok {
			w.l = l
			return
		}
		w.l, w.fresh = walkListing(w.ws, wi), true
	}()
	return w
}

// Start marks the moment the command starts: the repositories that appear
// or change from then on are the run's. It waits for the listing.
func (w *RepoWatch) Start() {
	if w == nil {
		return
	}
	<-w.done
	w.top, w.topSeen = nodeInfo{}, false
	if ni, err := statAt(atCwd, filepath.Join(w.ws, ".git")); err == nil {
		w.top, w.topSeen = ni, true
	}
	w.start = time.Now().UnixNano() - reposMargin
}

// Finish finds the repositories that appeared or changed in the workspace
// since Start, makes each harmless, and keeps the listing for the next
// run.
func (w *RepoWatch) Finish(o RepoOptions) RepoReport {
	if w == nil {
		return RepoReport{}
	}
	<-w.done
	if w.l == nil {
		return RepoReport{Unchecked: w.problem}
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	next, read, found := w.l.update(w.ws)
	rep := RepoReport{Dirs: len(next.dirs), Read: read, Unchecked: next.unchecked}
	if found.unchecked != "" {
		rep.Unchecked = found.unchecked
	}
	if w.file != "" && (w.fresh || read > 0 || len(next.dirs) != len(w.l.dirs)) {
		_ = next.save(w.file)
	}
	c := &repoChecker{w: w, o: o, rep: &rep, checked: map[string]bool{}, protected: map[string]bool{}, known: map[string]bool{}}
	for _, p := range o.Protected {
		c.protected[filepath.Clean(p)] = true
	}
	for _, r := range w.l.repos {
		c.known[w.abs(r.rel)] = true
	}
	c.realWS = w.ws
	if r, err := filepath.EvalSymlinks(w.ws); err == nil {
		c.realWS = r
	}
	for _, r := range next.repos {
		switch r.kind {
		case repoGitDir:
			c.gitDir(w.abs(r.rel), false)
		case repoGitLink:
			c.gitLink(w.abs(r.rel))
		}
	}
	for _, l := range found.links {
		c.link(w.abs(l))
	}
	return rep
}

func (w *RepoWatch) abs(rel string) string {
	if rel == "." {
		return w.ws
	}
	return w.ws + "/" + rel
}

// The listing.

const (
	repoGitDir  = 'g' // a git directory: HEAD, and objects and refs or commondir
	repoGitLink = 'f' // a .git that is a file or a link
)

type repoEntry struct {
	rel  string
	kind byte
}

// repoListing is the workspace's directories (relative, sorted) and the
// git directories and .git files among them, as they were at the moment
// at: a directory whose entries changed after it has a change time at or
// after at. A git directory's own subdirectories are left out but for
// modules and worktrees, which hold more.
type repoListing struct {
	ws       string
	dev, ino uint64
	at       int64
	dirs     []string
	repos    []repoEntry
	// unchecked says what the listing leaves out (a workspace beyond the
	// bounds), "" when nothing.
	unchecked string
}

// walkListing lists the workspace by walking all of it.
func walkListing(ws string, wi nodeInfo) *repoListing {
	l := &repoListing{ws: ws, dev: wi.dev, ino: wi.ino, at: time.Now().UnixNano() - reposMargin}
	wk := newRepoWalker(ws, maxRepoDirs)
	defer wk.close()
	wk.walk(".", 0)
	l.dirs, l.repos, l.unchecked = wk.dirs, wk.repos, wk.unchecked
	slices.Sort(l.dirs)
	return l
}

// repoWalker walks directories not listed yet. It opens each one by its
// path relative to the workspace, never through a link, and holds no
// directory open while it walks below it.
type repoWalker struct {
	wsfd   int
	dirs   []string
	repos  []repoEntry
	links  []string // links among the entries read (by update only)
	budget int      // directories it may still list
	// unchecked says what the walk did not look at.
	unchecked string
	buf       []byte
	// listed, when set, reports the directories listed already, which
	// are not walked again; update sets it.
	listed func(string) bool
}

func newRepoWalker(ws string, budget int) *repoWalker {
	wk := &repoWalker{wsfd: -1, budget: budget, buf: make([]byte, 32<<10)}
	// The workspace itself may be named through a link.
	if fd, err := openDir(atCwd, ws, false); err == nil {
		wk.wsfd = fd
	} else {
		wk.unchecked = "cannot read the workspace " + ws
	}
	return wk
}

func (wk *repoWalker) close() {
	if wk.wsfd >= 0 {
		closeFD(wk.wsfd)
		wk.wsfd = -1
	}
}

// walk lists the directory rel, and below it.
func (wk *repoWalker) walk(rel string, depth int) { wk.walkAt(wk.wsfd, rel, rel, depth) }

// heldDepth is how deep the walk holds each directory open while it walks
// below it (opening a subdirectory by its name in its parent is cheaper
// than by its path); deeper, it opens each by its path.
const heldDepth = 64

// walkAt lists the directory rel, opened as name relative to dirfd.
func (wk *repoWalker) walkAt(dirfd int, name, rel string, depth int) {
	if wk.wsfd < 0 {
		return
	}
	if depth > maxRepoDepth || wk.budget <= 0 || len(wk.repos) >= maxRepoEntries {
		if wk.unchecked == "" {
			wk.unchecked = fmt.Sprintf("the workspace holds more than %d directories, nests them deeper than %d or holds more than %d git repositories: git repositories in %s and beyond are not looked for",
				maxRepoDirs, maxRepoDepth, maxRepoEntries, rel)
		}
		return
	}
	fd, err := openDir(dirfd, name, rel != ".")
	if err != nil {
		return
	}
	ents, err := readDirents(fd, wk.buf)
	if depth >= heldDepth {
		closeFD(fd)
		fd = -1
	} else {
		defer closeFD(fd)
	}
	if err != nil {
		return
	}
	wk.budget--
	wk.dirs = append(wk.dirs, rel)
	wk.entries(fd, rel, ents, depth)
}

// entries records what the entries of the directory rel (open at fd, or
// -1) are, and walks the subdirectories not listed yet.
func (wk *repoWalker) entries(fd int, rel string, ents []dirent, depth int) {
	shaped := gitDirShape(ents)
	if shaped {
		wk.repos = append(wk.repos, repoEntry{rel, repoGitDir})
	}
	for _, e := range ents {
		t := e.typ
		child := joinRel(rel, e.name)
		if t == direntUnknown {
			ni, err := statAt(wk.wsfd, child)
			if err != nil {
				continue
			}
			t = ni.typ
		}
		if e.name == ".git" && t != direntDir {
			wk.repos = append(wk.repos, repoEntry{child, repoGitLink})
			continue
		}
		if t == direntLink && wk.listed != nil {
			wk.links = append(wk.links, child)
		}
		if t != direntDir || shaped && e.name != "modules" && e.name != "worktrees" {
			continue
		}
		if wk.listed != nil && wk.listed(child) {
			continue
		}
		if fd >= 0 {
			wk.walkAt(fd, e.name, child, depth+1)
		} else {
			wk.walk(child, depth+1)
		}
	}
}

func joinRel(rel, name string) string {
	if rel == "." {
		return name
	}
	return rel + "/" + name
}

// isGitDir reports whether the directory p has a git directory's shape
// (gitDirShape); without head, a common directory's (objects and refs).
func isGitDir(p string, head bool) bool {
	fd, err := openDir(atCwd, p, true)
	if err != nil {
		return false
	}
	ents, err := readDirents(fd, make([]byte, 8<<10))
	closeFD(fd)
	if err != nil {
		return false
	}
	if head {
		return gitDirShape(ents)
	}
	return gitDirShape(append(ents, dirent{name: "HEAD"}))
}

// gitDirShape reports entries git takes for a git directory's: HEAD, and
// objects and refs or commondir.
func gitDirShape(ents []dirent) bool {
	var head, objects, refs, common bool
	for _, e := range ents {
		switch e.name {
		case "HEAD":
			head = true
		case "objects":
			objects = true
		case "refs":
			refs = true
		case "commondir":
			common = true
		}
	}
	return head && (objects && refs || common)
}

// update brings the listing up to date: every listed directory is looked
// at (statx), those changed since the listing was made are read again,
// and the directories new below them walked. It returns the new listing,
// how many directories it read, and what it found in them (the links
// among their entries).
func (l *repoListing) update(ws string) (*repoListing, int, *repoWalker) {
	at := time.Now().UnixNano() - reposMargin
	n := len(l.dirs)
	const (
		same = iota
		changed
		gone
	)
	state := make([]byte, n)
	wk := newRepoWalker(ws, maxRepoDirs-n)
	defer wk.close()
	workers := min(max(runtime.GOMAXPROCS(0), 1), 4)
	var wg sync.WaitGroup
	for k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := k; i < n; i += workers {
				ni, err := statAt(wk.wsfd, l.dirs[i])
				switch {
				case err != nil || ni.typ != direntDir:
					state[i] = gone
				case ni.ctime >= l.at:
					state[i] = changed
				}
			}
		}()
	}
	wg.Wait()
	index := func(rel string) int {
		i, ok := slices.BinarySearch(l.dirs, rel)
		if !ok {
			return -1
		}
		return i
	}
	// Below a directory that is gone, or is now a link, nothing listed is
	// there any more: parents sort before their children.
	for i, d := range l.dirs {
		if d == "." {
			continue
		}
		if p := index(path.Dir(d)); p < 0 || state[p] == gone {
			state[i] = gone
		}
	}
	wk.listed = func(rel string) bool { return index(rel) >= 0 }
	read := 0
	for i, d := range l.dirs {
		if state[i] != changed || wk.wsfd < 0 {
			continue
		}
		fd, err := openDir(wk.wsfd, d, d != ".")
		if err != nil {
			state[i] = gone
			continue
		}
		ents, err := readDirents(fd, wk.buf)
		if err == nil {
			read++
			wk.entries(fd, d, ents, strings.Count(d, "/")+1)
		}
		closeFD(fd)
	}
	next := &repoListing{ws: l.ws, dev: l.dev, ino: l.ino, at: at, unchecked: l.unchecked}
	if wk.unchecked != "" {
		next.unchecked = wk.unchecked
	}
	next.dirs = make([]string, 0, n+len(wk.dirs))
	for i, d := range l.dirs {
		if state[i] != gone {
			next.dirs = append(next.dirs, d)
		}
	}
	next.dirs = append(next.dirs, wk.dirs...)
	slices.Sort(next.dirs)
	next.dirs = slices.Compact(next.dirs)
	read += len(wk.dirs)
	// A repository stays listed while the directory that says it is one
	// (itself, or the one holding the .git file) is unchanged; the
	// changed ones were read again above.
	for _, r := range l.repos {
		owner := r.rel
		if r.kind == repoGitLink {
			owner = path.Dir(r.rel)
		}
		if i := index(owner); i >= 0 && state[i] == same {
			next.repos = append(next.repos, r)
		}
	}
	next.repos = append(next.repos, wk.repos...)
	slices.SortFunc(next.repos, func(a, b repoEntry) int { return strings.Compare(a.rel, b.rel) })
	next.repos = slices.CompactFunc(next.repos, func(a, b repoEntry) bool { return a.rel == b.rel })
	return next, read, wk
}

func joinWS(ws, rel string) string {
	if rel == "." {
		return ws
	}
	return ws + "/" + rel
}

// The listing's file: a header of four lines (format, workspace quoted,
// its device, inode and the moment, what it leaves out quoted), then one
// record per directory or repository: a kind byte, the relative path, a
// NUL.
const listingMagic = "mnemos repos 1"

func loadListing(file, ws string, wi nodeInfo) (*repoListing, bool) {
	if file == "" {
		return nil, false
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, false
	}
	r := bufio.NewReader(bytes.NewReader(b))
	line := func() string {
		s, _ := r.ReadString('\n')
		return strings.TrimSuffix(s, "\n")
	}
	if line() != listingMagic {
		return nil, false
	}
	if q, err := strconv.Unquote(line()); err != nil || q != ws {
		return nil, false
	}
	l := &repoListing{ws: ws}
	f := strings.Fields(line())
	if len(f) != 3 {
		return nil, false
	}
	dev, err1 := strconv.ParseUint(f[0], 10, 64)
	ino, err2 := strconv.ParseUint(f[1], 10, 64)
	at, err3 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || dev != wi.dev || ino != wi.ino {
		return nil, false
	}
	l.dev, l.ino, l.at = dev, ino, at
	if l.unchecked, err = strconv.Unquote(line()); err != nil {
		return nil, false
	}
	rest, _ := io.ReadAll(r)
	for _, rec := range bytes.Split(rest, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		rel := string(rec[1:])
		switch rec[0] {
		case 'd':
			l.dirs = append(l.dirs, rel)
		case repoGitDir, repoGitLink:
			l.repos = append(l.repos, repoEntry{rel, rec[0]})
		default:
			return nil, false
		}
	}
	if _, root := slices.BinarySearch(l.dirs, "."); !root || !slices.IsSorted(l.dirs) {
		return nil, false
	}
	return l, true
}

// save writes the listing to file, replacing it whole.
func (l *repoListing) save(file string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n%s\n%d %d %d\n%s\n", listingMagic, strconv.Quote(l.ws), l.dev, l.ino, l.at, strconv.Quote(l.unchecked))
	for _, d := range l.dirs {
		b.WriteByte('d')
		b.WriteString(d)
		b.WriteByte(0)
	}
	for _, r := range l.repos {
		b.WriteByte(r.kind)
		b.WriteString(r.rel)
		b.WriteByte(0)
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".listing-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// The check.

type repoChecker struct {
	w         *RepoWatch
	o         RepoOptions
	rep       *RepoReport
	realWS    string
	checked   map[string]bool
	protected map[string]bool
	// known are the git directories listed before the run.
	known     map[string]bool
	templates []string
	tplRead   bool
}

// since reports a time at or after the run's start.
func (c *repoChecker) since(t int64) bool { return t >= c.w.start }

// inWS reports whether p lies in the workspace, as written and as it
// resolves.
func (c *repoChecker) inWS(p string) (string, bool) {
	p = filepath.Clean(p)
	if !within(p, c.w.ws) && !within(p, c.realWS) {
		return p, false
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return p, false
	}
	return real, within(real, c.realWS) || within(real, c.w.ws)
}

// ownGitDir reports the workspace's own git directory as it was when the
// run started (a directory at .git): the view kept what of it runs later
// read-only, and the decision judged what writes there.
func (c *repoChecker) ownGitDir(g string) bool {
	if !c.w.topSeen || c.w.top.typ != direntDir {
		return false
	}
	ni, err := statAt(atCwd, g)
	return err == nil && ni.dev == c.w.top.dev && ni.ino == c.w.top.ino
}

// newShaped reports whether the git directory g became one during the
// run, or came to where it is: then what it held before counts as the
// run's too (a configuration written earlier into a directory that was no
// repository yet). Birth times say so where the file system keeps them;
// HEAD and commondir are rewritten only when a branch is switched.
func (c *repoChecker) newShaped(g string) bool {
	gi, err := statAt(atCwd, g)
	if err != nil {
		return true
	}
	if gi.btime != 0 && c.since(gi.btime) || gi.btime == 0 && c.since(gi.ctime) {
		return true
	}
	for _, n := range []string{"objects", "refs"} {
		if ni, err := statAt(atCwd, g+"/"+n); err == nil && ni.btime != 0 && c.since(ni.btime) {
			return true
		}
	}
	for _, n := range []string{"HEAD", "commondir"} {
		if ni, err := statAt(atCwd, g+"/"+n); err == nil && c.since(ni.ctime) {
			return true
		}
	}
	if !c.known[g] {
		// Not a repository when the listing was made: a part of it
		// renamed into place during the run changed its time.
		for _, n := range []string{"", "/objects", "/refs"} {
			if ni, err := statAt(atCwd, g+n); err == nil && c.since(ni.ctime) {
				return true
			}
		}
	}
	return false
}

// gitDir makes the git directory g harmless if the run created it or
// changed what in it runs later. forced checks all of it.
func (c *repoChecker) gitDir(g string, forced bool) {
	if c.checked[g] || c.ownGitDir(g) {
		return
	}
	c.checked[g] = true
	d := &DefusedRepo{Repo: g}
	whole := forced || c.newShaped(g)
	for _, n := range []string{"config", "config.worktree"} {
		p := g + "/" + n
		if c.protected[p] {
			continue
		}
		if ni, err := statAt(atCwd, p); err == nil && (whole || c.since(ni.ctime)) {
			c.config(d, g, p, ni)
		}
	}
	if hp := g + "/hooks"; !c.protected[hp] {
		c.hooks(d, hp, whole)
	}
	if cp := g + "/commondir"; !c.protected[cp] {
		if ni, err := statAt(atCwd, cp); err == nil && (whole || c.since(ni.ctime)) {
			c.commondir(d, g, cp, ni)
		}
	}
	if len(d.Moved) > 0 {
		c.rep.Repos = append(c.rep.Repos, *d)
	}
}

// maxConfig bounds the configuration read; a larger one is moved aside.
const maxConfig = 1 << 20

// config keeps of the configuration p its harmless settings.
func (c *repoChecker) config(d *DefusedRepo, g, p string, ni nodeInfo) {
	name := filepath.Base(p)
	if ni.typ != direntFile {
		c.moveAside(d, p, name+" (not a plain file)")
		return
	}
	b, err := readNoFollow(p, maxConfig)
	if err != nil {
		c.moveAside(d, p, name+" (cannot be read: "+err.Error()+")")
		return
	}
	kept, dropped, changed := harmlessGitConfig(b, g, func(p string) bool { return within(p, c.w.ws) || within(p, c.realWS) })
	if !changed {
		return
	}
	if len(dropped) == 0 {
		dropped = []string{name + " in another form than git writes"}
	}
	if !c.moveAside(d, p, dropped...) {
		return
	}
	if len(kept) == 0 {
		return
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o644)
	if err != nil {
		return
	}
	_, err = f.Write(kept)
	if cerr := f.Close(); err == nil && cerr == nil {
		d.Wrote = p
	}
}

// hooks moves aside the hooks the run wrote (all of them with whole) but
// git's samples and the user's own templates' hooks.
func (c *repoChecker) hooks(d *DefusedRepo, hp string, whole bool) {
	hi, err := statAt(atCwd, hp)
	if err != nil {
		return
	}
	if hi.typ != direntDir {
		if whole || c.since(hi.ctime) {
			c.moveAside(d, hp, "hooks (not a directory)")
		}
		return
	}
	// A hooks directory made during the run holds only its hooks; where
	// the file system keeps no birth time, one whose entries changed.
	all := whole || hi.btime != 0 && c.since(hi.btime) || hi.btime == 0 && c.since(hi.ctime)
	fd, err := openDir(atCwd, hp, true)
	if err != nil {
		return
	}
	ents, err := readDirents(fd, make([]byte, 8<<10))
	closeFD(fd)
	if err != nil {
		return
	}
	for _, e := range ents {
		if strings.HasSuffix(e.name, ".sample") || strings.Contains(e.name, ".quarantined-") {
			continue
		}
		p := hp + "/" + e.name
		ni, err := statAt(atCwd, p)
		if err != nil || !all && !c.since(ni.ctime) || c.templateHook(e.name, p, ni) {
			continue
		}
		c.moveAside(d, p, "hooks/"+e.name)
	}
}

// commondir keeps a commondir that names the workspace's own git
// directory; one naming another in the workspace has that one checked
// whole; one naming a directory outside it is moved aside.
func (c *repoChecker) commondir(d *DefusedRepo, g, cp string, ni nodeInfo) {
	if ni.typ != direntFile {
		c.moveAside(d, cp, "commondir (not a plain file)")
		return
	}
	b, err := readNoFollow(cp, 4096)
	if err != nil {
		return
	}
	target, _, _ := strings.Cut(string(b), "\n")
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(g, target)
	}
	if real, ok := c.inWS(target); ok {
		if isGitDir(real, false) {
			c.gitDir(real, true)
		}
		return
	}
	c.moveAside(d, cp, "commondir naming a git directory outside the workspace ("+target+")")
}

// gitLink checks a .git file or link: the git directory it names is
// checked where it lies in the workspace; elsewhere, the check cannot
// look after it, so a link the run made, or one to a directory the run
// changed, is moved aside.
func (c *repoChecker) gitLink(p string) {
	ni, err := statAt(atCwd, p)
	if err != nil {
		return
	}
	if p == c.w.ws+"/.git" && c.w.topSeen && ni.ino == c.w.top.ino && ni.dev == c.w.top.dev && !c.since(ni.ctime) {
		return // the workspace's own, unchanged
	}
	var target string
	switch ni.typ {
	case direntLink:
		t, err := os.Readlink(p)
		if err != nil {
			return
		}
		target = t
	case direntFile:
		b, err := readNoFollow(p, 4096)
		if err != nil {
			return
		}
		line, _, _ := strings.Cut(string(b), "\n")
		t, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return // git refuses such a file
		}
		target = strings.TrimSpace(t)
	default:
		return
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(p), target)
	}
	touched := c.since(ni.ctime)
	if real, ok := c.inWS(target); ok {
		if isGitDir(real, true) && !c.ownGitDir(real) && (touched || !c.known[real]) {
			c.gitDir(real, touched && !c.known[real])
		}
		return
	}
	if touched || c.touchedAny(target) {
		d := &DefusedRepo{Repo: p}
		c.moveAside(d, p, "a git directory outside the workspace ("+target+")")
		c.rep.Repos = append(c.rep.Repos, *d)
	}
}

// touchedAny reports whether the run changed a git directory outside the
// workspace, or what in it runs later.
func (c *repoChecker) touchedAny(g string) bool {
	for _, n := range []string{"", "/HEAD", "/config", "/config.worktree", "/hooks", "/commondir"} {
		if ni, err := statAt(atCwd, g+n); err == nil && c.since(ni.ctime) {
			return true
		}
	}
	return false
}

// link checks a link the run made in the workspace to a directory outside
// it: a repository the run made there is reached through it (a person's
// cd, an editor's scan), so the link is moved aside.
func (c *repoChecker) link(p string) {
	ni, err := statAt(atCwd, p)
	if err != nil || ni.typ != direntLink || !c.since(ni.ctime) || filepath.Base(p) == ".git" {
		return
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return
	}
	if _, ok := c.inWS(real); ok {
		return
	}
	if ti, err := statAt(atCwd, real); err != nil || ti.typ != direntDir {
		return
	}
	budget := 256
	if where := c.reposBelow(real, 2, &budget); where != "" {
		d := &DefusedRepo{Repo: p}
		c.moveAside(d, p, "a link to "+real+", where the run made the git repository "+where)
		c.rep.Repos = append(c.rep.Repos, *d)
	}
}

// reposBelow finds, down to depth levels below dir, a git directory or
// .git the run made or changed.
func (c *repoChecker) reposBelow(dir string, depth int, budget *int) string {
	if *budget <= 0 {
		return ""
	}
	*budget--
	fd, err := openDir(atCwd, dir, true)
	if err != nil {
		return ""
	}
	ents, err := readDirents(fd, make([]byte, 8<<10))
	closeFD(fd)
	if err != nil {
		return ""
	}
	if gitDirShape(ents) && c.touchedAny(dir) {
		return dir
	}
	for _, e := range ents {
		p := dir + "/" + e.name
		if e.name == ".git" {
			if ni, err := statAt(atCwd, p); err == nil && (c.since(ni.ctime) || ni.typ == direntDir && c.touchedAny(p)) {
				return p
			}
			continue
		}
		if depth > 0 && e.typ == direntDir {
			if w := c.reposBelow(p, depth-1, budget); w != "" {
				return w
			}
		}
	}
	return ""
}

// templateHook reports a hook that is a copy of the same hook in a
// template directory the user's or the system's git configuration names
// (init.templateDir) or git's own: git init put it there.
func (c *repoChecker) templateHook(name, p string, ni nodeInfo) bool {
	if ni.typ != direntFile {
		return false
	}
	if !c.tplRead {
		c.tplRead = true
		c.templates = gitTemplateDirs(c.o.Home)
	}
	if len(c.templates) == 0 {
		return false
	}
	b, err := readNoFollow(p, maxConfig)
	if err != nil {
		return false
	}
	for _, t := range c.templates {
		if tb, err := os.ReadFile(filepath.Join(t, "hooks", name)); err == nil && bytes.Equal(tb, b) {
			return true
		}
	}
	return false
}

// gitTemplateDirs are the template directories git init may copy from:
// init.templateDir in the user's and the system's configuration, and
// git's own.
func gitTemplateDirs(home string) []string {
	var out []string
	configs := []string{"/etc/gitconfig"}
	if home != "" {
		configs = append(configs, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	for _, cf := range configs {
		b, err := os.ReadFile(cf)
		if err != nil {
			continue
		}
		settings, _ := parseGitConfig(b)
		for _, s := range settings {
			if strings.EqualFold(s.section, "init") && s.sub == "" && strings.EqualFold(s.key, "templatedir") && s.value != "" {
				v := s.value
				if rest, ok := strings.CutPrefix(v, "~/"); ok && home != "" {
					v = filepath.Join(home, rest)
				}
				if filepath.IsAbs(v) {
					out = append(out, filepath.Clean(v))
				}
			}
		}
	}
	for _, d := range []string{"/usr/share/git-core/templates", "/usr/local/share/git-core/templates"} {
		if _, err := os.Stat(d); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// moveAside renames p to p.quarantined-UNIXTIME and records it with what
// it would have done; false when it could not (recorded too).
func (c *repoChecker) moveAside(d *DefusedRepo, p string, would ...string) bool {
	d.Would = append(d.Would, would...)
	to, err := MoveAside(p, c.o.Now)
	if err != nil {
		d.Moved = append(d.Moved, [2]string{p, "not moved: " + err.Error()})
		return false
	}
	d.Moved = append(d.Moved, [2]string{p, to})
	return true
}

// MoveAside renames p, in its directory, to NAME.quarantined-UNIXTIME (with
// a number after it when that exists): no tool reads it under that name,
// and a person can look at it and move it back. A directory the command
// made read-only to keep p where it is is made writable for the rename,
// and its mode put back. When p cannot be moved, it is made unreadable
// (mode 000), which git and the other tools refuse, and the error says
// so.
func MoveAside(p string, now time.Time) (string, error) {
	to := fmt.Sprintf("%s.quarantined-%d", p, now.Unix())
	for i := 1; ; i++ {
		if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
			break
		}
		to = fmt.Sprintf("%s.quarantined-%d-%d", p, now.Unix(), i)
	}
	err := os.Rename(p, to)
	if errors.Is(err, fs.ErrPermission) {
		dir := filepath.Dir(p)
		if fi, serr := os.Lstat(dir); serr == nil && fi.IsDir() && fi.Mode().Perm()&0o300 != 0o300 {
			if os.Chmod(dir, fi.Mode().Perm()|0o700) == nil {
				err = os.Rename(p, to)
				os.Chmod(dir, fi.Mode().Perm())
			}
		}
	}
	if err != nil {
		if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink == 0 && os.Chmod(p, 0) == nil {
			return "", fmt.Errorf("%w; made it unreadable instead (mode 000)", err)
		}
		return "", err
	}
	return to, nil
}

// readNoFollow reads at most limit bytes of the file p, never through a
// link at its last component; a larger file is an error.
func readNoFollow(p string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return b, nil
}
