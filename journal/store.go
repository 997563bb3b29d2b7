package journal

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// The content store: objects/<first two hex digits>/<the rest> of each
// content's SHA-256. An object is written to tmp/ while it is hashed, then
// renamed into place, so an object that exists is whole; one that exists
// already is not written again.

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

func (j *Journal) objectPath(digest string) string {
	return filepath.Join(j.objectsDir(), digest[:2], digest[2:])
}

// validDigest says whether d can name an object.
func validDigest(d string) bool {
	if len(d) != 64 {
		return false
	}
	_, err := hex.DecodeString(d)
	return err == nil
}

// hashOnly returns the digest of r's content.
func hashOnly(r io.Reader) (string, error) {
	h := sha256.New()
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	if _, err := io.CopyBuffer(h, r, *bp); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// put copies r's content into the store and returns its digest and size.
// An error writing the store comes back as it is (ENOSPC, EDQUOT), so the
// caller can fail the call it guards.
func (j *Journal) put(r io.Reader) (digest string, size int64, err error) {
	var rb [8]byte
	_, _ = rand.Read(rb[:])
	tmp := filepath.Join(j.tmpDir(), "obj-"+hex.EncodeToString(rb[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return "", 0, err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	h := sha256.New()
	size, err = copyHashing(f, r, h)
	if err != nil {
		return "", 0, err
	}
	if err := f.Close(); err != nil {
		return "", 0, err
	}
	digest = hex.EncodeToString(h.Sum(nil))
	final := j.objectPath(digest)
	if _, err := os.Lstat(final); err == nil {
		os.Remove(tmp)
		done = true
		return digest, size, nil
	}
	if err := os.Mkdir(filepath.Dir(final), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", 0, err
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", 0, err
	}
	done = true
	return digest, size, nil
}

// copyHashing copies r to w, hashing what it copies.
func copyHashing(w io.Writer, r io.Reader, h hash.Hash) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	var n int64
	for {
		k, rerr := r.Read(buf)
		if k > 0 {
			h.Write(buf[:k])
			if _, err := w.Write(buf[:k]); err != nil {
				return n, err
			}
			n += int64(k)
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, &readError{rerr}
		}
	}
}

// readError is a failure to read the file being kept (not the store's).
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// openObject opens a kept content, checking that it is whole.
func (j *Journal) openObject(digest string) (*os.File, error) {
	if !validDigest(digest) {
		return nil, fmt.Errorf("journal: bad object name %q", digest)
	}
	return os.Open(j.objectPath(digest))
}

// hasObject says whether the store holds digest.
func (j *Journal) hasObject(digest string) bool {
	if !validDigest(digest) {
		return false
	}
	_, err := os.Lstat(j.objectPath(digest))
	return err == nil
}

// readObject returns a kept content whole, up to limit bytes (else an
// error).
func (j *Journal) readObject(digest string, limit int64) ([]byte, error) {
	f, err := j.openObject(digest)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errTooLarge
	}
	return data, nil
}

var errTooLarge = errors.New("too large")

// collect removes the objects no run's log names, and temp files left by
// a killed writer. It holds the store lock exclusive, so no writer is
// between storing an object and naming it.
func (j *Journal) collect() (removed int, freed int64, err error) {
	unlock, err := j.lockStoreExclusive()
	if err != nil {
		return 0, 0, err
	}
	defer unlock()
	live := map[string]bool{}
	ids, err := j.runIDs()
	if err != nil {
		return 0, 0, err
	}
	for _, id := range ids {
		lg, err := j.readLog(id)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			// A log that cannot be read may name anything: keep all.
			return 0, 0, err
		}
		for _, e := range lg.Entries {
			for _, s := range []*State{e.A, e.B} {
				if s != nil && s.Object != "" {
					live[s.Object] = true
				}
			}
		}
	}
	tops, err := os.ReadDir(j.objectsDir())
	if err != nil {
		return 0, 0, err
	}
	for _, top := range tops {
		if !top.IsDir() || len(top.Name()) != 2 {
			continue
		}
		dir := filepath.Join(j.objectsDir(), top.Name())
		objs, err := os.ReadDir(dir)
		if err != nil {
			return removed, freed, err
		}
		left := 0
		for _, o := range objs {
			if live[top.Name()+o.Name()] {
				left++
				continue
			}
			var size int64
			if fi, err := o.Info(); err == nil {
				size = fi.Size()
			}
			if err := os.Remove(filepath.Join(dir, o.Name())); err == nil {
				removed++
				freed += size
			} else {
				left++
			}
		}
		if left == 0 {
			_ = os.Remove(dir)
		}
	}
	// Temp files: only a writer holding the lock shared writes there.
	if tmps, err := os.ReadDir(j.tmpDir()); err == nil {
		for _, t := range tmps {
			_ = os.Remove(filepath.Join(j.tmpDir(), t.Name()))
		}
	}
	return removed, freed, nil
}
