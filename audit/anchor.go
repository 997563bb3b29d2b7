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
// an honest one; the anchor can. A keyed anchor also records the last
// line's MAC and a MAC of its own over count, last hash and last MAC, so
// that no one without the key can point it at another line. An anchor
// written before the key existed has neither.
type anchor struct {
	Count    int    `json:"count"`
	LastHash string `json:"last_hash"`
	LastMAC  string `json:"last_mac,omitempty"`
	MAC      string `json:"mac,omitempty"`
}

// keyed reports whether the anchor carries a MAC.
func (a anchor) keyed() bool { return a.MAC != "" }

// readAnchor reads the anchor at path and returns it with its bytes. ok is
// false when there is none; a file that is not an anchor is an error
// wrapping ErrIntegrity.
func readAnchor(path string) (a anchor, raw []byte, ok bool, err error) {
	raw, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return anchor{}, nil, false, nil
	}
	if err != nil {
		return anchor{}, nil, false, err
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return anchor{}, nil, false, fmt.Errorf("%w: anchor %s: %w", ErrIntegrity, path, err)
	}
	if a.Count < 0 || (a.Count > 0 && len(a.LastHash) != 64) {
		return anchor{}, nil, false, fmt.Errorf("%w: anchor %s: bad count or hash", ErrIntegrity, path)
	}
	if a.MAC != "" || a.LastMAC != "" {
		_, ok1 := decodeHex32(a.MAC)
		_, ok2 := decodeHex32(a.LastMAC)
		if !ok1 || !ok2 || a.Count < 1 {
			return anchor{}, nil, false, fmt.Errorf("%w: anchor %s: bad MAC", ErrIntegrity, path)
		}
	}
	return a, raw, true, nil
}

// writeAnchor rewrites the anchor in place: one write at offset 0, then a
// truncate to its length. It runs under the log's exclusive lock, so no
// reader sees it half-written. The record only grows (count and hash), and
// it is far smaller than a disk sector, so a machine crash mid-write
// leaves the old or the new record; a torn one would be reported by
// Verify as a garbled anchor, never accepted. A temporary file and a
// rename cost about 80 times more per append, on every command mnemos
// runs.
func writeAnchor(path string, a anchor, sync bool) (raw []byte, err error) {
	raw, err = json.Marshal(a)
	if err != nil {
		return nil, err
	}
	raw = append(raw, '\n')
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, fileMode)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
			return nil, err
		}
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, fileMode)
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	if _, err := f.WriteAt(raw, 0); err != nil {
		return nil, err
	}
	if err := f.Truncate(int64(len(raw))); err != nil {
		return nil, err
	}
	if sync {
		return raw, f.Sync()
	}
	return raw, nil
}
