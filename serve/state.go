package serve

import (
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Files serve keeps in the state directory, which the guard and the
// sandbox keep from every gated command.
const (
	lockName    = "serve.lock"
	infoName    = "serve.json"
	telegramDir = "telegram"
	// legacyTokenName is where an older serve kept the page's access
	// token; Start removes it.
	legacyTokenName = "serve.token"
)

// Errors callers branch on.
var (
	ErrRunning    = errors.New("mnemos serve is already running for this user")
	ErrNotRunning = errors.New("mnemos serve is not running")
	errLocked     = errors.New("locked")
)

// Info is where a running instance listens (serve.json).
type Info struct {
	Addr    string    `json:"addr"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
}

// tokenEncoding writes sign-in codes and session ids: lowercase base32,
// no padding.
var tokenEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// instance is the lock a running serve holds.
type instance struct {
	dir  string
	lock *os.File
}

// acquire takes the user's serve lock in dir, or returns ErrRunning.
func acquire(dir string) (*instance, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	// A probe by Running holds the lock for a moment: try a few times.
	for i := 0; ; i++ {
		err = tryLock(f)
		if err == nil {
			return &instance{dir: dir, lock: f}, nil
		}
		if !errors.Is(err, errLocked) || i == 10 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.Close()
	if errors.Is(err, errLocked) {
		if info, ierr := readInfo(dir); ierr == nil {
			return nil, fmt.Errorf("%w (pid %d, %s)", ErrRunning, info.PID, info.Addr)
		}
		return nil, ErrRunning
	}
	return nil, err
}

// publish writes serve.json.
func (in *instance) publish(info Info) error {
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(in.dir, infoName), append(b, '\n'))
}

// held reports whether the lock file is still the one locked: false once
// the state directory was removed or moved.
func (in *instance) held() bool {
	mine, err := in.lock.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(filepath.Join(in.dir, lockName))
	return err == nil && os.SameFile(mine, now)
}

// release removes serve.json and drops the lock.
func (in *instance) release() {
	_ = os.Remove(filepath.Join(in.dir, infoName))
	_ = in.lock.Close()
}

func readInfo(dir string) (Info, error) {
	var info Info
	b, err := os.ReadFile(filepath.Join(dir, infoName))
	if err != nil {
		return info, err
	}
	err = json.Unmarshal(b, &info)
	return info, err
}

// Running reports whether an instance holds the lock in dir, and where it
// listens.
func Running(dir string) (Info, bool) {
	f, err := os.Open(filepath.Join(dir, lockName))
	if err != nil {
		return Info{}, false
	}
	defer f.Close()
	if err := tryLock(f); !errors.Is(err, errLocked) {
		return Info{}, false
	}
	info, err := readInfo(dir)
	if err != nil {
		// Locked, but not yet listening.
		return Info{}, true
	}
	return info, true
}

// writeFileAtomic writes data to path (mode 0600) through a temporary
// file renamed over it.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// updateJSON reads the JSON file at path into v (left as it is when the
// file does not exist), calls fn, and writes v back when fn returns nil,
// all under an exclusive lock on path+".lock", so that serve and the
// commands that change the same file (channels pair) do not lose each
// other's writes.
func updateJSON(path string, v any, fn func() error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	lf, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := lockWait(lf); err != nil {
		return err
	}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(b, v); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := fn(); err != nil {
		return err
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(out, '\n'))
}
