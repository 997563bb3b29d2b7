package gate

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// lockState takes an exclusive lock on the state directory itself, for
// moving the secrets: processes of a newer mnemos that meet an older
// layout at once move it once. It waits up to ten seconds.
func lockState(dir string) (unlock func(), err error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err = unix.Flock(int(d.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { _ = unix.Flock(int(d.Fd()), unix.LOCK_UN); _ = d.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			d.Close()
			return nil, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// olderServe reports whether a mnemos serve holds its lock in the state
// directory (serve.lock), and its pid when serve.json says. Called before
// the secrets directory exists, it can only be a serve of an older
// mnemos: a newer one moves the secrets before it takes the lock.
func olderServe(stateDir string) (int, bool) {
	f, err := os.Open(filepath.Join(stateDir, "serve.lock"))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return 0, false
		}
		var info struct {
			PID int `json:"pid"`
		}
		if b, err := os.ReadFile(filepath.Join(stateDir, "serve.json")); err == nil {
			_ = json.Unmarshal(b, &info)
		}
		return info.PID, true
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return 0, false
}

// isNoLinks reports a file system that refuses hard links.
func isNoLinks(err error) bool {
	return errors.Is(err, unix.EPERM) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EXDEV) || errors.Is(err, unix.EMLINK)
}
