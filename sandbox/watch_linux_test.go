package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// requireWatch skips, visibly, where changes cannot be watched.
func requireWatch(t testing.TB) Status {
	t.Helper()
	st := Probe()
	if st.ABI == 0 {
		t.Skip("kernel has no Landlock")
	}
	if !st.Watch {
		t.Skipf("changes cannot be watched here: %s", st.WatchErr)
	}
	return st
}

// watchWay is one of the ways a watched command starts.
type watchWay struct {
	name string
	// view and helper: the spec's View, and ViewByHelper.
	view, helper bool
}

var watchWays = []watchWay{{"thread", false, false}, {"view-thread", true, false}, {"view-helper", true, true}}

// eachWay runs f for every way a watched command can start here.
func eachWay(t *testing.T, f func(t *testing.T, st Status, way watchWay)) {
	for _, way := range watchWays {
		t.Run(way.name, func(t *testing.T) {
			st := requireWatch(t)
			if way.view {
				st = requireView(t, way.helper)
			}
			f(t, st, way)
		})
	}
}

// watchSpec is w's default spec for way, watching changes.
func (w world) watchSpec(t testing.TB, way watchWay) Spec {
	s := w.spec(t, nil)
	s.Watch = true
	s.View, s.ViewByHelper = way.view, way.helper
	return s
}

// recorder is a handler that keeps each change and what its paths held
// when it was shown (a file's content, a directory, a link's target or
// "missing"), and fails the changes refuse returns an errno for.
type recorder struct {
	mu      sync.Mutex
	changes []Change
	before  []string
	refuse  func(Change) error
}

func (r *recorder) handle(c Change) error {
	state := func(p string) string {
		var st unix.Stat_t
		if p == "" {
			return ""
		}
		if err := unix.Lstat(p, &st); err != nil {
			return "missing"
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			b, _ := os.ReadFile(p)
			return fmt.Sprintf("%q %o", b, st.Mode&0o7777)
		case unix.S_IFDIR:
			return "dir"
		case unix.S_IFLNK:
			l, _ := os.Readlink(p)
			return "link " + l
		}
		return "other"
	}
	b := state(c.Path)
	if c.Path2 != "" {
		b += " | " + state(c.Path2)
	}
	r.mu.Lock()
	r.changes = append(r.changes, c)
	r.before = append(r.before, b)
	r.mu.Unlock()
	if r.refuse != nil {
		return r.refuse(c)
	}
	return nil
}

// seen lists the changes under dir, one line each, with what their paths
// held, dir shown as "WS".
func (r *recorder) seen(dir string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for i, c := range r.changes {
		if !within(c.Path, dir) && !within(c.Path2, dir) {
			continue
		}
		line := strings.ReplaceAll(fmt.Sprintf("%s: %s", c, r.before[i]), dir, "WS")
		out = append(out, line)
	}
	return out
}

type watchedOutcome struct {
	outcome
	stats WatchStats
}

// runWatched starts argv in w's workspace confined by spec, watched by h,
// waits for it and closes the watch.
func (w world) runWatched(t *testing.T, spec Spec, st Status, pre *Prepared, h func(Change) error, env []string, argv ...string) watchedOutcome {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = w.ws
	exe, _ := os.Executable()
	cmd.Env = append([]string{"HOME=" + w.home, "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "T=" + exe}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	a, watch, err := StartWatched(cmd, spec, st, pre, h)
	if err != nil {
		t.Fatalf("start %q: %v", argv, err)
	}
	if spec.Watch && (watch == nil || !a.Watched) {
		t.Fatalf("start %q: not watched: %q", argv, a.Notes)
	}
	code := 0
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("wait %q: %v", argv, err)
		}
		code = ee.ExitCode()
	}
	stats := watch.Close()
	// A thread start made this process undumpable, which keeps a later
	// helper (in another subtest) from having its user namespace mapped
	// by a user without privileges: the thread is gone, undo it.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	return watchedOutcome{outcome{stdout.String(), stderr.String(), code, a}, stats}
}

// fsHelper makes the calls a shell cannot for the watch's tests:
//
//	exchange A B    renameat2(A, B, RENAME_EXCHANGE)
//	openat DIR NAME openat(open(DIR), NAME, O_WRONLY|O_CREAT|O_TRUNC)
//	truncate PATH   truncate(PATH, 0)
//	tmpfile DIR N   an O_TMPFILE in DIR, linked as DIR/N
//	readonly PATH   opens PATH without writing, every way
//	reopen N PATH   opens PATH read-only N times
//	rewrite N PATH  opens PATH for writing N times
//	create N DIR    writes N small files in DIR
//	whiteout A B    renameat2(A, B, RENAME_WHITEOUT)
//	reopen-deleted P  O_PATH opens P, unlinks it, writes and chmods the
//	                file through /proc/self/fd
func fsHelper(op string, args []string) int {
	err := fsCall(op, args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", op, err)
		return 1
	}
	return 0
}

func fsCall(op string, args []string) error {
	count := func() int {
		n, _ := strconv.Atoi(args[0])
		return n
	}
	switch op {
	case "exchange":
		return unix.Renameat2(unix.AT_FDCWD, args[0], unix.AT_FDCWD, args[1], unix.RENAME_EXCHANGE)
	case "openat":
		dir, err := unix.Open(args[0], unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		fd, err := unix.Openat(dir, args[1], unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return err
		}
		_, err = unix.Write(fd, []byte("at\n"))
		return err
	case "truncate":
		return unix.Truncate(args[0], 0)
	case "tmpfile":
		fd, err := unix.Open(args[0], unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return err
		}
		if _, err := unix.Write(fd, []byte("tmp\n")); err != nil {
			return err
		}
		return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, filepath.Join(args[0], args[1]), unix.AT_SYMLINK_FOLLOW)
	case "readonly":
		for _, flags := range []int{unix.O_RDONLY, unix.O_RDONLY | unix.O_APPEND, unix.O_RDONLY | unix.O_NOFOLLOW, unix.O_PATH} {
			fd, err := unix.Open(args[0], flags|unix.O_CLOEXEC, 0)
			if err != nil {
				return err
			}
			unix.Close(fd)
		}
		dir, err := unix.Open(filepath.Dir(args[0]), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		fd, err := unix.Openat(dir, filepath.Base(args[0]), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		unix.Close(fd)
		return nil
	case "reopen", "rewrite":
		flags := unix.O_RDONLY
		if op == "rewrite" {
			flags = unix.O_WRONLY
		}
		for range count() {
			fd, err := unix.Open(args[1], flags|unix.O_CLOEXEC, 0)
			if err != nil {
				return err
			}
			unix.Close(fd)
		}
		return nil
	case "whiteout":
		return unix.Renameat2(unix.AT_FDCWD, args[0], unix.AT_FDCWD, args[1], unix.RENAME_WHITEOUT)
	case "reopen-deleted":
		// A descriptor to the file, its name removed, then the file
		// opened for writing and chmod-ed again through /proc.
		fd, err := unix.Open(args[0], unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		if err := unix.Unlink(args[0]); err != nil {
			return err
		}
		p := "/proc/self/fd/" + strconv.Itoa(fd)
		w, err := unix.Open(p, unix.O_WRONLY|unix.O_TRUNC|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open for writing: %w", err)
		}
		if _, err := unix.Write(w, []byte("through a removed name\n")); err != nil {
			return err
		}
		return unix.Fchmodat(unix.AT_FDCWD, p, 0o600, 0)
	case "create":
		for i := range count() {
			if err := os.WriteFile(filepath.Join(args[1], "f"+strconv.Itoa(i)), []byte("x\n"), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown op")
}

// writeFiles makes the files and directories of a test workspace:
// "dir/" is a directory, "link -> target" a symbolic link, anything else
// a file holding its own name.
func writeFiles(t testing.TB, root string, entries ...string) {
	t.Helper()
	for _, e := range entries {
		var err error
		switch name, target, isLink := strings.Cut(e, " -> "); {
		case isLink:
			err = os.Symlink(target, filepath.Join(root, name))
		case strings.HasSuffix(e, "/"):
			err = os.MkdirAll(filepath.Join(root, e), 0o755)
		default:
			err = os.WriteFile(filepath.Join(root, e), []byte("old "+e), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// The script makes one change of each kind, each way a program names a
// file; the handler sees each, with the path it changes, before it
// happens.
const everyChange = `set -e
echo new > write.txt
: > trunc.txt
echo more >> append.txt
rm unlink.txt
rmdir emptydir
mkdir newdir
mv a.txt b.txt
mv c.txt over.txt
SANDBOX_TEST_FS=exchange "$T" x.txt y.txt
chmod 600 mode.txt
chown "$(id -u):$(id -g)" own.txt
ln -s target.txt sym.lnk
ln hard.txt hard2.txt
mkfifo fifo
SANDBOX_TEST_FS=truncate "$T" size.txt
echo linked > linkdir/in.txt
echo followed > lnk.txt
rm lnk.txt
SANDBOX_TEST_FS=openat "$T" atdir made.txt
SANDBOX_TEST_FS=tmpfile "$T" . tmp.txt
exec 3<reopen.txt
echo reopened >/proc/self/fd/3
echo again >/dev/fd/3
exec 3<&-
cd sub
echo rel > rel.txt
rm ../sub/../write.txt
`

var everyChangeFiles = []string{"write.txt", "trunc.txt", "append.txt", "unlink.txt", "emptydir/", "a.txt", "c.txt",
	"over.txt", "x.txt", "y.txt", "mode.txt", "own.txt", "hard.txt", "size.txt", "realdir/", "linkdir -> realdir",
	"target.txt", "lnk.txt -> target.txt", "atdir/", "reopen.txt", "sub/"}

var everyChangeSeen = []string{
	`write WS/write.txt: "old write.txt" 644`,
	`write WS/trunc.txt: "old trunc.txt" 644`,
	`write WS/append.txt: "old append.txt" 644`,
	`unlink WS/unlink.txt: "old unlink.txt" 644`,
	`rmdir WS/emptydir: dir`,
	`mkdir WS/newdir: missing`,
	`rename WS/a.txt WS/b.txt: "old a.txt" 644 | missing`,
	`rename WS/c.txt WS/over.txt: "old c.txt" 644 | "old over.txt" 644`,
	`exchange WS/x.txt WS/y.txt: "old x.txt" 644 | "old y.txt" 644`,
	`chmod WS/mode.txt: "old mode.txt" 644`,
	`chown WS/own.txt: "old own.txt" 644`,
	`symlink WS/sym.lnk: missing`,
	`link WS/hard.txt WS/hard2.txt: "old hard.txt" 644 | missing`,
	`mknod WS/fifo: missing`,
	`write WS/size.txt: "old size.txt" 644`,
	`write WS/realdir/in.txt: missing`,
	`write WS/target.txt: "old target.txt" 644`,
	`unlink WS/lnk.txt: link target.txt`,
	`write WS/atdir/made.txt: missing`,
	`write WS/tmp.txt: missing`,
	`write WS/reopen.txt: "old reopen.txt" 644`,
	`write WS/reopen.txt: "reopened\n" 644`,
	`write WS/sub/rel.txt: missing`,
	`unlink WS/write.txt: "new\n" 644`,
}

func TestSecurityWatchSeesEveryChangeBeforeItHappens(t *testing.T) {
	eachWay(t, func(t *testing.T, st Status, way watchWay) {
		w := newWorld(t)
		writeFiles(t, w.ws, everyChangeFiles...)
		var r recorder
		// The handler runs in mnemos, unconfined: it reads what no grant
		// reaches.
		var confined []string
		handle := func(c Change) error {
			if _, err := os.ReadFile(filepath.Join(w.outside, "note")); err != nil {
				confined = append(confined, err.Error())
			}
			return r.handle(c)
		}
		o := w.runWatched(t, w.watchSpec(t, way), st, nil, handle, nil, "sh", "-c", everyChange)
		if len(confined) > 0 {
			t.Errorf("the handler ran confined: %s", confined[0])
		}
		if o.code != 0 {
			t.Fatalf("exit %d: %s", o.code, o.stderr)
		}
		got := dedupe(r.seen(w.ws))
		if !slices.Equal(got, everyChangeSeen) {
			t.Errorf("seen:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(everyChangeSeen, "\n"))
		}
		if b, _ := os.ReadFile(filepath.Join(w.ws, "over.txt")); string(b) != "old c.txt" {
			t.Errorf("over.txt holds %q after the run", b)
		}
		if o.stats.Changes < len(everyChangeSeen) || o.stats.Calls < o.stats.Changes || o.stats.Refused != 0 || o.stats.Err != nil {
			t.Errorf("stats %+v", o.stats)
		}
		if !strings.Contains(o.applied.Summary(), "changes watched") {
			t.Errorf("summary %q", o.applied.Summary())
		}
	})
}

// dedupe drops a line equal to the one before: a program that tries a
// call one way, then another (mv asks not to replace first), shows the
// same change twice.
func dedupe(lines []string) []string { return slices.Compact(slices.Clone(lines)) }

// A change the handler refuses fails with its errno, and nothing changes.
func TestSecurityWatchRefusedChangesFail(t *testing.T) {
	eachWay(t, func(t *testing.T, st Status, way watchWay) {
		w := newWorld(t)
		writeFiles(t, w.ws, "keep.txt", "protect.txt", "dir/", "dir/inner.txt")
		r := recorder{refuse: func(c Change) error {
			switch {
			case c.Kind == ChangeUnlink && filepath.Base(c.Path) == "keep.txt":
				return syscall.EPERM
			case c.Kind == ChangeWrite && filepath.Base(c.Path) == "protect.txt":
				return syscall.EROFS
			case c.Kind == ChangeRename:
				return errors.New("the journal is full") // not an errno: EPERM
			}
			return nil
		}}
		o := w.runWatched(t, w.watchSpec(t, way), st, nil, r.handle, nil, "sh", "-c",
			`rm keep.txt; echo new > protect.txt; mv dir moved; echo done > done.txt`)
		for _, want := range []string{"rm: cannot remove 'keep.txt': Operation not permitted",
			"protect.txt: Read-only file system", "mv: cannot move 'dir' to 'moved': Operation not permitted"} {
			if !strings.Contains(o.stderr, want) {
				t.Errorf("stderr %q, want %q", o.stderr, want)
			}
		}
		for p, want := range map[string]string{"keep.txt": "old keep.txt", "protect.txt": "old protect.txt",
			"dir/inner.txt": "old dir/inner.txt", "done.txt": "done\n"} {
			if b, err := os.ReadFile(filepath.Join(w.ws, p)); string(b) != want {
				t.Errorf("%s holds %q (%v), want %q", p, b, err, want)
			}
		}
		if exists(filepath.Join(w.ws, "moved")) {
			t.Error("the refused rename happened")
		}
		if o.stats.Refused < 3 {
			t.Errorf("stats %+v, want 3 refused", o.stats)
		}
	})
}

// TestSecurityWatchNamelessFileWithOtherNames: a descriptor whose name
// was removed (or is shown as "NAME (deleted)", a name a file of the
// workspace may bear) names nothing the journal can keep. Writing or
// chmod-ing through it is let through when the file has no other name
// (what O_TMPFILE and deleted files are), refused when it still has one:
// that name would change unseen. RENAME_WHITEOUT, which leaves a device
// where the file was, is refused.
func TestSecurityWatchNamelessFileWithOtherNames(t *testing.T) {
	eachWay(t, func(t *testing.T, st Status, way watchWay) {
		w := newWorld(t)
		writeFiles(t, w.ws, "notes.txt", "alone.txt", "x.txt", "y.txt")
		if err := os.Link(filepath.Join(w.ws, "notes.txt"), filepath.Join(w.ws, "hl")); err != nil {
			t.Fatal(err)
		}
		var r recorder
		o := w.runWatched(t, w.watchSpec(t, way), st, nil, r.handle, nil, "sh", "-c",
			`echo decoy > "hl (deleted)"
SANDBOX_TEST_FS=reopen-deleted "$T" hl && echo hl-written
SANDBOX_TEST_FS=reopen-deleted "$T" alone.txt && echo alone-written
SANDBOX_TEST_FS=whiteout "$T" x.txt y.txt && echo whiteout-done
exit 0`)
		if b, _ := os.ReadFile(filepath.Join(w.ws, "notes.txt")); string(b) != "old notes.txt" {
			t.Errorf("notes.txt holds %q: written through the removed name hl", b)
		}
		if fi, err := os.Stat(filepath.Join(w.ws, "notes.txt")); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("notes.txt: %v, %v", fi.Mode(), err)
		}
		if strings.Contains(o.stdout, "hl-written") || !strings.Contains(o.stderr, "operation not permitted") {
			t.Errorf("stdout %q, stderr %q: want the write through hl refused", o.stdout, o.stderr)
		}
		if !strings.Contains(o.stdout, "alone-written") {
			t.Errorf("stdout %q, stderr %q: a file with no name left is refused", o.stdout, o.stderr)
		}
		if strings.Contains(o.stdout, "whiteout-done") {
			t.Error("RENAME_WHITEOUT went through")
		}
		if b, _ := os.ReadFile(filepath.Join(w.ws, "y.txt")); string(b) != "old y.txt" {
			t.Errorf("y.txt holds %q after the whiteout", b)
		}
	})
}

// Reading never waits for mnemos: the filter traps no open that cannot
// write.
func TestWatchLetsReadingPass(t *testing.T) {
	eachWay(t, func(t *testing.T, st Status, way watchWay) {
		w := newWorld(t)
		writeFiles(t, w.ws, "ro.txt", "ro/")
		var r recorder
		o := w.runWatched(t, w.watchSpec(t, way), st, nil, r.handle, nil, "sh", "-c",
			`cat ro.txt; head -c 3 ro.txt; ls ro; SANDBOX_TEST_FS=readonly "$T" "$PWD/ro.txt"; wc -c < ro.txt; exec 3<ro.txt`)
		if o.code != 0 {
			t.Fatalf("exit %d: %s", o.code, o.stderr)
		}
		if o.stats.Calls != 0 || len(r.changes) != 0 {
			t.Errorf("reading trapped %d calls: %v", o.stats.Calls, r.changes)
		}
	})
}

// The prepared thread, confined before the handler is known, watches the
// command it starts with the handler StartWatched gives.
func TestWatchPrepared(t *testing.T) {
	st := requireWatch(t)
	w := newWorld(t)
	writeFiles(t, w.ws, "f.txt")
	spec := w.watchSpec(t, watchWay{})
	pre := Prepare(spec, st)
	pre.Wait()
	var r recorder
	o := w.runWatched(t, spec, st, pre, r.handle, nil, "sh", "-c", "echo new > f.txt; rm f.txt")
	want := []string{`write WS/f.txt: "old f.txt" 644`, `unlink WS/f.txt: "new\n" 644`}
	if got := r.seen(w.ws); o.code != 0 || !slices.Equal(got, want) {
		t.Errorf("exit %d %s, seen %q, want %q", o.code, o.stderr, got, want)
	}
	if !pre.ok {
		t.Error("the prepared thread was not used")
	}
}

// The thread that confines itself and starts the command is mnemos's:
// its own calls, made before the command starts, are served without the
// handler, and never wait.
func TestWatchServesTheConfinedThreadsOwnCalls(t *testing.T) {
	requireWatch(t)
	prog, err := watchProgramFor(runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "own")
	var r recorder
	var watch *Watch
	var note string
	var openErr error
	onDisposableThread(func() {
		if err = unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return
		}
		if watch, note, err = startWatch(prog, r.handle, unix.Gettid()); err != nil || watch == nil {
			return
		}
		var fd int
		if fd, openErr = unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644); openErr == nil {
			unix.Close(fd)
		}
		watch.selfDone()
	})
	if err != nil || watch == nil {
		t.Fatalf("watch: %v %s", err, note)
	}
	select {
	case <-watch.done:
	case <-time.After(10 * time.Second):
		t.Error("the watch did not end with the thread")
	}
	stats := watch.Close()
	if openErr != nil || !exists(p) {
		t.Errorf("open on the confined thread: %v", openErr)
	}
	if stats.Calls != 1 || len(r.changes) != 0 {
		t.Errorf("stats %+v, handler saw %v; want one call served without it", stats, r.changes)
	}
}

func TestWatchNeedsAHandler(t *testing.T) {
	st := requireWatch(t)
	w := newWorld(t)
	spec := w.watchSpec(t, watchWay{})
	cmd := exec.Command("sh", "-c", "echo x > made.txt")
	cmd.Dir = w.ws
	if _, err := StartPrepared(cmd, spec, st, Prepare(spec, st)); !errors.Is(err, errNoHandler) {
		t.Errorf("start without a handler: %v", err)
	}
	if cmd.Process != nil || exists(filepath.Join(w.ws, "made.txt")) {
		t.Error("the command ran")
	}
}

// Where the kernel cannot watch, the command runs unwatched and says so.
func TestWatchUnavailableIsNoted(t *testing.T) {
	st := requireLandlock(t)
	st.Watch, st.WatchErr = false, "no user notification (test)"
	w := newWorld(t)
	spec := w.watchSpec(t, watchWay{})
	var r recorder
	cmd := exec.Command("sh", "-c", "echo x > made.txt")
	cmd.Dir = w.ws
	a, watch, err := StartWatched(cmd, spec, st, nil, r.handle)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if watch != nil || a.Watched || !slices.Contains(a.Notes, "changes are not watched: no user notification (test)") {
		t.Errorf("watched %v, notes %q", a.Watched, a.Notes)
	}
	if !exists(filepath.Join(w.ws, "made.txt")) || len(r.changes) != 0 {
		t.Errorf("made.txt exists %v, seen %v", exists(filepath.Join(w.ws, "made.txt")), r.changes)
	}
}

// watchParent is a stand-in for mnemos, for the test that kills it: it
// starts the script in SANDBOX_TEST_WATCH_DIR, confined by the spec in
// SANDBOX_TEST_WATCH_PARENT (JSON) and watched, and waits.
func watchParent(specJSON string) int {
	var spec Spec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cmd := exec.Command("sh", "-c", os.Getenv("SANDBOX_TEST_SCRIPT"))
	cmd.Dir = os.Getenv("SANDBOX_TEST_WATCH_DIR")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	_, watch, err := StartWatched(cmd, spec, Probe(), nil, func(c Change) error {
		fmt.Fprintln(os.Stderr, "seen", c)
		return nil
	})
	if err != nil || watch == nil {
		fmt.Fprintln(os.Stderr, "not watched:", err)
		return 2
	}
	_ = cmd.Wait()
	watch.Close()
	return 0
}

// When mnemos dies, what is left of the command can change nothing more:
// each trapped call fails (ENOSYS) rather than run unseen.
func TestSecurityWatchKilledParentLeavesChangesFailing(t *testing.T) {
	eachWay(t, func(t *testing.T, st Status, way watchWay) {
		w := newWorld(t)
		writeFiles(t, w.ws, "victim.txt")
		spec, err := json.Marshal(w.watchSpec(t, way))
		if err != nil {
			t.Fatal(err)
		}
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		parent := exec.Command(exe)
		parent.Env = append(os.Environ(), "SANDBOX_TEST_WATCH_PARENT="+string(spec), "SANDBOX_TEST_WATCH_DIR="+w.ws,
			"SANDBOX_TEST_SCRIPT="+`echo first > first.txt; echo ready $$; read x
if echo new > victim.txt; then echo wrote; else echo refused; fi
if rm victim.txt; then echo removed; else echo kept; fi`)
		stdin, err := parent.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := parent.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		// A file, not a buffer: the command keeps the parent's stderr
		// after the parent is gone.
		errFile, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
		if err != nil {
			t.Fatal(err)
		}
		defer errFile.Close()
		parent.Stderr = errFile
		stderr := func() string {
			b, _ := os.ReadFile(errFile.Name())
			return string(b)
		}
		if err := parent.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		next := func() (string, bool) {
			select {
			case l, ok := <-lines:
				return l, ok
			case <-time.After(10 * time.Second):
				return "", false
			}
		}
		ready, ok := next()
		pid, err := strconv.Atoi(strings.TrimPrefix(ready, "ready "))
		if !ok || err != nil {
			_ = parent.Process.Kill()
			_, _ = parent.Process.Wait()
			t.Fatalf("no ready line (%q): %s", ready, stderr())
		}
		defer unix.Kill(pid, unix.SIGKILL)
		if err := parent.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_, _ = parent.Process.Wait()
		if _, err := io.WriteString(stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
		stdin.Close()
		var rest []string
		for {
			l, ok := next()
			if !ok {
				break
			}
			rest = append(rest, l)
		}
		if !slices.Equal(rest, []string{"refused", "kept"}) {
			t.Errorf("after mnemos was killed the command said %q, want refused and kept", rest)
		}
		if b, err := os.ReadFile(filepath.Join(w.ws, "victim.txt")); string(b) != "old victim.txt" {
			t.Errorf("victim.txt holds %q (%v)", b, err)
		}
		if !strings.Contains(stderr(), "seen write "+filepath.Join(w.ws, "first.txt")) {
			t.Errorf("the parent did not watch: %s", stderr())
		}
	})
}

// The second filter traps exactly the calls that change files, opens
// only when their flags may write, and leaves everything else (other
// architectures' calls included) to the first filter.
func TestWatchProgram(t *testing.T) {
	for _, goarch := range []string{"amd64", "arm64"} {
		arch, _ := archFor(goarch)
		calls, ok := watchCalls(goarch)
		if !ok {
			t.Fatalf("no watch table for %s", goarch)
		}
		prog, err := watchProgramFor(goarch)
		if err != nil {
			t.Fatal(err)
		}
		run := func(nr uint32, args [6]uint64) uint32 {
			return runBPF(t, prog, call{arch: arch.audit, nr: nr, args: args})
		}
		trapped := map[uint32]bool{}
		for _, c := range calls {
			if _, ok := callShapes[c.name]; !ok || trapped[c.nr] {
				t.Errorf("%s: %s (%d) has no shape or a number taken", goarch, c.name, c.nr)
			}
			trapped[c.nr] = true
			if c.shape.of != openFlags && c.shape.of != handleFlags {
				if got := run(c.nr, [6]uint64{}); got != unix.SECCOMP_RET_USER_NOTIF {
					t.Errorf("%s: %s = %#x, want notify", goarch, c.name, got)
				}
				continue
			}
			for _, f := range []struct {
				flags  uint64
				notify bool
			}{
				{unix.O_RDONLY, false}, {unix.O_RDONLY | unix.O_APPEND | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_DIRECTORY, false},
				{unix.O_PATH, false}, {1 << 40, false},
				{unix.O_WRONLY, true}, {unix.O_RDWR, true}, {unix.O_CREAT, true}, {unix.O_TRUNC, true},
				{unix.O_WRONLY | unix.O_APPEND, true}, {unix.O_RDONLY | unix.O_TRUNC, true}, {unix.O_TMPFILE | unix.O_RDWR, true},
			} {
				var args [6]uint64
				args[c.shape.flags] = f.flags
				want := uint32(retAllow)
				if f.notify {
					want = unix.SECCOMP_RET_USER_NOTIF
				}
				if got := run(c.nr, args); got != want {
					t.Errorf("%s: %s with flags %#o = %#x, want %#x", goarch, c.name, f.flags, got, want)
				}
			}
		}
		for nr := uint32(0); nr < 600; nr++ {
			if !trapped[nr] {
				if got := run(nr, [6]uint64{unix.O_WRONLY, unix.O_WRONLY, unix.O_WRONLY}); got != retAllow {
					t.Errorf("%s: call %d = %#x, want allow", goarch, nr, got)
				}
			}
		}
		for _, foreign := range []uint32{unix.AUDIT_ARCH_I386, unix.AUDIT_ARCH_ARM, unix.AUDIT_ARCH_X86_64, unix.AUDIT_ARCH_AARCH64} {
			if foreign != arch.audit {
				if got := runBPF(t, prog, call{arch: foreign, nr: calls[0].nr, args: [6]uint64{1, 1, 1}}); got != retAllow {
					t.Errorf("%s: a call from arch %#x = %#x, want allow (the first filter kills it)", goarch, foreign, got)
				}
			}
		}
		if arch.x32 {
			if got := run(x32Bit|calls[0].nr, [6]uint64{1, 1, 1}); got != retAllow {
				t.Errorf("%s: an x32 call = %#x, want allow (the first filter refuses it)", goarch, got)
			}
		}
	}
}

// The numbers agree with x/sys/unix where both architectures name the
// call (watch_linux_amd64_test.go checks amd64's own calls).
func TestWatchNumbersMatchHost(t *testing.T) {
	calls, ok := watchCalls(runtime.GOARCH)
	if !ok {
		t.Skipf("changes are not watched on %s", runtime.GOARCH)
	}
	host := map[string]uint32{
		"openat": unix.SYS_OPENAT, "openat2": unix.SYS_OPENAT2, "truncate": unix.SYS_TRUNCATE,
		"unlinkat": unix.SYS_UNLINKAT, "mkdirat": unix.SYS_MKDIRAT, "mknodat": unix.SYS_MKNODAT,
		"renameat": unix.SYS_RENAMEAT, "renameat2": unix.SYS_RENAMEAT2, "linkat": unix.SYS_LINKAT,
		"symlinkat": unix.SYS_SYMLINKAT, "fchmod": unix.SYS_FCHMOD, "fchmodat": unix.SYS_FCHMODAT,
		"fchmodat2": unix.SYS_FCHMODAT2, "fchown": unix.SYS_FCHOWN, "fchownat": unix.SYS_FCHOWNAT,
		"open_by_handle_at": unix.SYS_OPEN_BY_HANDLE_AT,
	}
	for _, c := range calls {
		if nr, ok := host[c.name]; ok && nr != c.nr {
			t.Errorf("%s is %d in the table, %d on %s", c.name, c.nr, nr, runtime.GOARCH)
		}
		delete(host, c.name)
	}
	if len(host) > 0 {
		t.Errorf("not trapped: %v", host)
	}
}

// walk resolves a path as the kernel does for the calling process: here
// the test process itself.
func TestWatchWalk(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, d, "real/", "real/f", "a/", "a/b/", "l -> real", "deep -> a/b", "abs -> "+d+"/real",
		"loop1 -> loop2", "loop2 -> loop1", "dangle -> new.txt", "up -> ..", "fl -> real/f", "selfdir -> /proc/self/fd")
	file, err := os.Open(filepath.Join(d, "real", "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	dir, err := os.Open(filepath.Join(d, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	ffd, dfd, pfd := strconv.Itoa(int(file.Fd())), int32(dir.Fd()), strconv.Itoa(int(pw.Fd()))
	c := caller{w: &Watch{}, tid: os.Getpid()}
	for _, tt := range []struct {
		dirfd  int32
		path   string
		follow bool
		empty  bool
		want   string // "": not a named file; "E...": that errno
	}{
		{atFDCWD, d + "/l/f", false, false, d + "/real/f"},
		{atFDCWD, d + "/l", false, false, d + "/l"},
		{atFDCWD, d + "/l", true, false, d + "/real"},
		{atFDCWD, d + "/fl", true, false, d + "/real/f"},
		{atFDCWD, d + "/abs/f", false, false, d + "/real/f"},
		{atFDCWD, d + "/deep/../x", false, false, d + "/a/x"},
		{atFDCWD, d + "/real/../x", false, false, d + "/x"},
		{atFDCWD, d + "/up/" + filepath.Base(d) + "/real/./f", false, false, d + "/real/f"},
		{atFDCWD, d + "//real///f", false, false, d + "/real/f"},
		{atFDCWD, d + "/dangle", true, false, d + "/new.txt"},
		{atFDCWD, d + "/dangle", false, false, d + "/dangle"},
		{atFDCWD, d + "/missing/../x/y", false, false, d + "/x/y"},
		{atFDCWD, d + "/newdir/", false, false, d + "/newdir"},
		{atFDCWD, d + "/loop1", true, false, "ELOOP"},
		{atFDCWD, d + "/loop1/x", false, false, "ELOOP"},
		{atFDCWD, d + "/real/f/x", false, false, "ENOTDIR"},
		{atFDCWD, "/proc/self/fd/" + ffd, true, false, d + "/real/f"},
		{atFDCWD, "/proc/thread-self/fd/" + ffd, true, false, d + "/real/f"},
		{atFDCWD, "/dev/fd/" + ffd, true, false, d + "/real/f"},
		{atFDCWD, d + "/selfdir/" + ffd, true, false, d + "/real/f"},
		{atFDCWD, "/proc/self/fd/" + ffd, false, false, "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/" + ffd},
		{atFDCWD, "/dev/fd/" + pfd, true, false, ""},
		{atFDCWD, "/proc/self/cwd/x", false, false, filepath.Join(mustGetwd(t), "x")},
		{atFDCWD, "rel", false, false, filepath.Join(mustGetwd(t), "rel")},
		{dfd, "b/c", false, false, d + "/a/b/c"},
		{dfd, "../l/f", false, false, d + "/real/f"},
		{dfd, "", false, true, d + "/a"},
		{dfd, "", false, false, "ENOENT"},
		{atFDCWD, "/", false, false, "/"},
		{atFDCWD, "/..", false, false, "/"},
	} {
		got, named, errno := c.walk(tt.dirfd, tt.path, tt.follow, tt.empty)
		switch {
		case errno != 0:
			got = unix.ErrnoName(errno)
		case !named:
			got = ""
		}
		if got != tt.want {
			t.Errorf("walk(%d, %q, follow %v) = %q, want %q", tt.dirfd, tt.path, tt.follow, got, tt.want)
		}
	}
}

func mustGetwd(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// runMode runs argv in the working directory confined by the default
// sandbox, watched when mode is "watch" by a handler that looks at each
// path as the journal must (lstat), and exits with its status: the
// command hyperfine times side by side.
func runMode(mode string, argv []string) int {
	wd, _ := os.Getwd()
	exe, _ := os.Executable()
	spec, err := DefaultSpec(Options{Workspace: wd, Home: os.Getenv("HOME"), TempDirs: []string{os.TempDir()}})
	if err != nil || len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "runMode:", err)
		return 2
	}
	spec.ReadExec = append(spec.ReadExec, filepath.Dir(exe))
	spec.Watch = mode == "watch"
	var handle func(Change) error
	if spec.Watch {
		handle = lstatHandler
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "SANDBOX_TEST_RUN=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	a, watch, err := StartWatched(cmd, spec, Probe(), nil, handle)
	if err != nil {
		fmt.Fprintln(os.Stderr, "runMode:", err)
		return 2
	}
	if spec.Watch && !a.Watched {
		fmt.Fprintln(os.Stderr, "runMode: not watched:", a.Notes)
		return 2
	}
	_ = cmd.Wait()
	stats := watch.Close()
	if os.Getenv("SANDBOX_TEST_STATS") != "" {
		fmt.Fprintf(os.Stderr, "%+v\n", stats)
	}
	return cmd.ProcessState.ExitCode()
}

// lstatHandler looks at the path as the least a journal does.
func lstatHandler(c Change) error {
	var st unix.Stat_t
	_ = unix.Lstat(c.Path, &st)
	return nil
}

// BenchmarkWatch times whole confined commands, unwatched and watched
// (by lstatHandler), side by side: 10 000 opens for writing of one file
// (ns/call is the cost of one trapped call), 10 000 opens for reading
// (never trapped), writing 10 000 small files (a Go program, and a shell
// loop), and a command that changes nothing.
func BenchmarkWatch(b *testing.B) {
	st := requireWatch(b)
	const n = 10000
	cases := []struct {
		name  string
		env   string
		argv  []string
		calls int
	}{
		{"open-write", "SANDBOX_TEST_FS=rewrite", []string{"10000", "f.txt"}, n},
		{"open-read", "SANDBOX_TEST_FS=reopen", []string{"10000", "f.txt"}, n},
		{"create-10000-go", "SANDBOX_TEST_FS=create", []string{"10000", "out"}, n},
		{"create-10000-sh", "", []string{"sh", "-c", `i=0; while [ $i -lt 10000 ]; do echo x > out/f$i; i=$((i+1)); done`}, n},
		{"no-change", "", []string{"true"}, 0},
	}
	for _, c := range cases {
		for _, watched := range []bool{false, true} {
			name := c.name + "/unwatched"
			if watched {
				name = c.name + "/watched"
			}
			b.Run(name, func(b *testing.B) {
				w := newWorld(b)
				writeFiles(b, w.ws, "f.txt", "out/")
				spec := w.watchSpec(b, watchWay{})
				spec.Watch = watched
				exe, _ := os.Executable()
				argv := c.argv
				if c.env != "" {
					argv = append([]string{exe}, argv...)
				}
				var calls, busy float64
				for b.Loop() {
					b.StopTimer()
					if err := os.RemoveAll(filepath.Join(w.ws, "out")); err != nil {
						b.Fatal(err)
					}
					if err := os.Mkdir(filepath.Join(w.ws, "out"), 0o755); err != nil {
						b.Fatal(err)
					}
					cmd := exec.Command(argv[0], argv[1:]...)
					cmd.Dir = w.ws
					cmd.Env = []string{"PATH=/usr/bin:/bin", c.env}
					var stderr bytes.Buffer
					cmd.Stderr = &stderr
					var handle func(Change) error
					if watched {
						handle = lstatHandler
					}
					b.StartTimer()
					_, watch, err := StartWatched(cmd, spec, st, nil, handle)
					if err != nil {
						b.Fatal(err)
					}
					if err := cmd.Wait(); err != nil {
						b.Fatalf("%v: %s", err, stderr.String())
					}
					stats := watch.Close()
					calls += float64(stats.Calls)
					busy += float64(stats.Busy.Nanoseconds())
				}
				_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
				if c.calls > 0 {
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*c.calls), "ns/call")
				}
				if calls > 0 {
					b.ReportMetric(calls/float64(b.N), "trapped/op")
					b.ReportMetric(busy/calls, "busy-ns/trapped")
				}
			})
		}
	}
}

// rm -r removes a tree through directory descriptors: each name is seen
// under the directory it is in.
func TestWatchRecursiveRemove(t *testing.T) {
	st := requireWatch(t)
	w := newWorld(t)
	writeFiles(t, w.ws, "tree/", "tree/t1.txt", "tree/sub/", "tree/sub/t2.txt", "tree/sub/l -> ../t1.txt")
	var r recorder
	o := w.runWatched(t, w.watchSpec(t, watchWay{}), st, nil, r.handle, nil, "rm", "-r", "tree")
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	got := r.seen(w.ws)
	slices.Sort(got)
	want := []string{`rmdir WS/tree/sub: dir`, `rmdir WS/tree: dir`, `unlink WS/tree/sub/l: link ../t1.txt`,
		`unlink WS/tree/sub/t2.txt: "old tree/sub/t2.txt" 644`, `unlink WS/tree/t1.txt: "old tree/t1.txt" 644`}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("seen:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// BenchmarkWatchSetup is the fixed cost of a watch: installing the
// filter on a thread that then ends, serving, and closing; beside a
// thread that ends unwatched.
func BenchmarkWatchSetup(b *testing.B) {
	requireWatch(b)
	prog, err := watchProgramFor(runtime.GOARCH)
	if err != nil {
		b.Fatal(err)
	}
	for _, watched := range []bool{false, true} {
		name := "unwatched"
		if watched {
			name = "watched"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				var watch *Watch
				onDisposableThread(func() {
					if err = unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err == nil && watched {
						watch, _, err = startWatch(prog, lstatHandler, unix.Gettid())
					}
				})
				if err != nil || watched && watch == nil {
					b.Fatal(err)
				}
				if watched {
					<-watch.done
					watch.Close()
				}
			}
		})
	}
}
