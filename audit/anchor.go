package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// anchor is kept outside the log: the number of lines and the hash of the
// last one. The chain alone cannot tell a cut tail or a rewritten log from
// an honest one; the anchor can.
type anchor struct {
	Count    int    `json:"count"`
	LastHash string `json:"last_hash"`
}

// readAnchor reads the anchor at path. ok is false when there is none; a
// file that is not an anchor is an error wrapping ErrIntegrity.
func readAnchor(path string) (a anchor, ok bool, err error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return anchor{}, false, nil
	}
	if err != nil {
		return anchor{}, false, err
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return anchor{}, false, fmt.Errorf("%w: anchor %s: %w", ErrIntegrity, path, err)
	}
	if a.Count < 0 || (a.Count > 0 && len(a.LastHash) != 64) {
		return anchor{}, false, fmt.Errorf("%w: anchor %s: bad count or hash", ErrIntegrity, path)
	}
	return a, true, nil
}

// writeAnchor replaces the anchor atomically: a temporary file in the same
// directory, then rename.
func writeAnchor(path string, a anchor, sync bool) (err error) {
	raw, err := json.Marshal(a)
	if err != nil {
		return err
	}
	raw = append(raw, '\n')
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, dirMode); err != nil {
			return err
		}
		tmp, err = os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	}
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(raw); err != nil {
		return err
	}
	if sync {
		if err := tmp.Sync(); err != nil {
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
