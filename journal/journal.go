package journal

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Defaults the policy starts from (issue 21); Options' zero values mean no
// limit, not these.
const (
	DefaultQuota   = 300 << 20
	DefaultMaxAge  = 7 * 24 * time.Hour
	DefaultMaxFile = 64 << 20
)

// DefaultExclude are the directory names whose contents are rebuilt, not
// written by hand: build outputs and language caches.
var DefaultExclude = []string{"node_modules", "target", ".venv", "venv", "__pycache__", "dist",
	".next", ".nuxt", ".gradle", ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".cache",
	".parcel-cache", ".turbo"}

// Options configure a journal.
type Options struct {
	// Dir holds the store: objects/, runs/ and tmp/ (made 0700 when first
	// needed). It must be a directory no confined command can reach.
	Dir string
	// Quota bounds, per workspace, the bytes of content the runs of that
	// workspace keep (each run counting the objects it references once);
	// 0 means no bound.
	Quota int64
	// MaxAge is how long a finished run is kept; 0 means no bound.
	MaxAge time.Duration
	// MaxFile is the largest file whose content is kept; a larger one is
	// recorded by digest only and cannot be restored. 0 means no bound.
	MaxFile int64
	// Exclude are directory names (node_modules, target) below the
	// workspace whose contents are not journaled.
	Exclude []string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Journal is a store of runs. Its methods are safe for concurrent use, and
// several processes may use one directory at once.
type Journal struct {
	o       Options
	exclude map[string]bool

	// The store lock (see lockStore): writers hold it shared from storing
	// an object until the entry that names it is written, the collector
	// exclusive. users counts this process's shared holders: flock belongs
	// to the open file, so one descriptor serves them all.
	mu      sync.Mutex
	lockF   *os.File
	users   int
	madeDir bool
}

// Errors callers branch on.
var (
	// ErrUnknownRun: no run has the id given.
	ErrUnknownRun = errors.New("no such run in the journal")
	// ErrRunning: the run is still running (its log is locked).
	ErrRunning = errors.New("the run is still running")
)

// Open returns the journal kept in o.Dir. It does no I/O: directories are
// made when a run first records something.
func Open(o Options) (*Journal, error) {
	if o.Dir == "" || !filepath.IsAbs(o.Dir) {
		return nil, fmt.Errorf("journal: the directory must be an absolute path, not %q", o.Dir)
	}
	o.Dir = filepath.Clean(o.Dir)
	if o.Now == nil {
		o.Now = time.Now
	}
	ex := map[string]bool{}
	for _, e := range o.Exclude {
		e = strings.Trim(e, "/")
		if e != "" && !strings.Contains(e, "/") {
			ex[e] = true
		}
	}
	return &Journal{o: o, exclude: ex}, nil
}

// Close releases the journal's lock file.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.lockF != nil {
		err := j.lockF.Close()
		j.lockF = nil
		return err
	}
	return nil
}

// Dir is the journal's directory.
func (j *Journal) Dir() string { return j.o.Dir }

func (j *Journal) runsDir() string    { return filepath.Join(j.o.Dir, "runs") }
func (j *Journal) objectsDir() string { return filepath.Join(j.o.Dir, "objects") }
func (j *Journal) tmpDir() string     { return filepath.Join(j.o.Dir, "tmp") }
func (j *Journal) logPath(id string) string {
	return filepath.Join(j.runsDir(), id+".log")
}

// ensureDirs makes the journal's directories, private to the user.
func (j *Journal) ensureDirs() error {
	j.mu.Lock()
	done := j.madeDir
	j.mu.Unlock()
	if done {
		return nil
	}
	for _, d := range []string{j.o.Dir, j.runsDir(), j.objectsDir(), j.tmpDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
		fi, err := os.Lstat(d)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("journal: %s is not a directory", d)
		}
		if fi.Mode().Perm() != 0o700 {
			if err := os.Chmod(d, 0o700); err != nil {
				return err
			}
		}
	}
	j.mu.Lock()
	j.madeDir = true
	j.mu.Unlock()
	return nil
}

// lockStore takes the store lock shared (writers, readers of objects) and
// returns its release. The collector takes it exclusive (lockStoreExclusive)
// so that it never removes an object whose entry is being written.
func (j *Journal) lockStore() (func(), error) {
	if err := j.ensureDirs(); err != nil {
		return nil, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.lockF == nil {
		f, err := os.OpenFile(filepath.Join(j.o.Dir, "lock"), os.O_RDWR|os.O_CREATE|noFollow, 0o600)
		if err != nil {
			return nil, err
		}
		j.lockF = f
	}
	if j.users == 0 {
		if err := flock(j.lockF, lockShared); err != nil {
			return nil, err
		}
	}
	j.users++
	return func() {
		j.mu.Lock()
		defer j.mu.Unlock()
		j.users--
		if j.users == 0 && j.lockF != nil {
			_ = flock(j.lockF, lockUnlock)
		}
	}, nil
}

// lockStoreExclusive takes the store lock for the collector, on a
// descriptor of its own (so it waits for this process's writers too).
func (j *Journal) lockStoreExclusive() (func(), error) {
	if err := j.ensureDirs(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(j.o.Dir, "lock"), os.O_RDWR|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		return nil, err
	}
	if err := flock(f, lockExclusive); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// newID makes a run id: the time, then random hex, so that ids sort by
// start and two runs started in the same second differ.
func newID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// validID says whether id can name a run's log.
func validID(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '.' || id[0] == '-' {
		return false
	}
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// within returns path relative to ws and whether it lies strictly below it.
func within(ws, path string) (string, bool) {
	if path == "" || ws == "" {
		return "", false
	}
	rel, ok := strings.CutPrefix(path, ws)
	if !ok {
		return "", false
	}
	if ws == "/" {
		rel = "/" + rel
	}
	if !strings.HasPrefix(rel, "/") || len(rel) < 2 {
		return "", false
	}
	return rel[1:], true
}

// excludedDir says whether rel lies below a directory the options exclude
// (any component but the last); excludedName whether its last component
// bears such a name.
func (j *Journal) excludedDir(rel string) bool {
	if len(j.exclude) == 0 {
		return false
	}
	for {
		i := strings.IndexByte(rel, '/')
		if i < 0 {
			return false
		}
		if j.exclude[rel[:i]] {
			return true
		}
		rel = rel[i+1:]
	}
}

func (j *Journal) excludedName(rel string) bool {
	return len(j.exclude) > 0 && j.exclude[filepath.Base(rel)]
}
