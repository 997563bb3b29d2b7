package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// KeyFile is the name of the key file beside the log, unless
// Options.Key names another.
const KeyFile = "audit.key"

// KeySize is the key's length in bytes.
const KeySize = 32

// ErrKey reports a key that Verify needs and cannot use: missing while the
// log or its anchor is keyed, unreadable, or not a key.
var ErrKey = errors.New("audit key unavailable")

// KeyPath returns where the key of the log at logPath lives by default:
// KeyFile in the log's directory. Logs moved aside in that directory keep
// verifying with it.
func KeyPath(logPath string) string { return filepath.Join(filepath.Dir(logPath), KeyFile) }

// Domain labels keep a line's MAC from ever being taken for an anchor's,
// or for anything else made with the same key.
const (
	lineLabel   = "mnemos-audit-line v1\n"
	anchorLabel = "mnemos-audit-anchor v1\n"
)

// macSuffixLen is the length of a keyed line's last member and closing
// brace: ,"mac":"<64 hex>"}.
const macSuffixLen = len(`,"mac":"`) + 2*sha256.Size + len(`"}`)

// macer computes line and anchor MACs under one key. It keeps one HMAC
// state and resets it, so each MAC costs one HMAC and no allocation.
type macer struct {
	h         hash.Hash
	lineLabel []byte
	buf, sum  []byte
}

func newMacer(key []byte) *macer {
	return &macer{h: hmac.New(sha256.New, key), lineLabel: []byte(lineLabel)}
}

// line returns the MAC of a keyed line's signed part: its bytes up to,
// not including, the ,"mac": member.
func (m *macer) line(signed []byte) (sum [sha256.Size]byte) {
	m.h.Reset()
	m.h.Write(m.lineLabel)
	m.h.Write(signed)
	m.sum = m.h.Sum(m.sum[:0])
	copy(sum[:], m.sum)
	return sum
}

// checkLine reports whether a keyed line's MAC holds.
func (m *macer) checkLine(line []byte, h header) bool {
	sum := m.line(line[:h.signed])
	return hmac.Equal(sum[:], h.mac[:])
}

// anchor returns the MAC of an anchor's count, last hash and last MAC.
func (m *macer) anchor(a anchor) (sum [sha256.Size]byte) {
	b := append(m.buf[:0], anchorLabel...)
	b = strconv.AppendInt(b, int64(a.Count), 10)
	b = append(b, '\n')
	b = append(b, a.LastHash...)
	b = append(b, '\n')
	b = append(b, a.LastMAC...)
	m.buf = b
	m.h.Reset()
	m.h.Write(b)
	m.sum = m.h.Sum(m.sum[:0])
	copy(sum[:], m.sum)
	return sum
}

// checkAnchor reports whether a's MAC is right.
func (m *macer) checkAnchor(a anchor) bool {
	want := m.anchor(a)
	got, ok := decodeHex32(a.MAC)
	return ok && hmac.Equal(got[:], want[:])
}

// decodeHex32 decodes 64 lower-case hex digits. Upper case is refused, so
// that a flipped case bit is a different value, never the same one.
func decodeHex32[T string | []byte](s T) (out [32]byte, ok bool) {
	if len(s) != 64 {
		return out, false
	}
	for i := range out {
		hi, ok1 := nibble(s[2*i])
		lo, ok2 := nibble(s[2*i+1])
		if !ok1 || !ok2 {
			return [32]byte{}, false
		}
		out[i] = hi<<4 | lo
	}
	return out, true
}

func nibble(c byte) (byte, bool) {
	switch {
	case isDigit(c):
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// readKey reads the key at path. A missing key is an error wrapping
// fs.ErrNotExist; a file that is not a key is an error wrapping ErrKey.
func readKey(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrKey, path)
	}
	raw, err := io.ReadAll(io.LimitReader(f, 2*KeySize+2))
	if err != nil {
		return nil, err
	}
	k, ok := decodeHex32(bytes.TrimSuffix(raw, []byte{'\n'}))
	if !ok {
		return nil, fmt.Errorf("%w: %s does not hold a key (%d hex digits and a newline)", ErrKey, path, 2*KeySize)
	}
	return k[:], nil
}

// createKey makes a key at path unless one exists, and returns the key in
// use. The key is written to a new private file (O_EXCL, 0600), synced,
// and published with link(2), which fails if path exists: no reader ever
// sees a partial key, and of two racing creators the second finds the
// first one's key and uses it. created reports whether this call made it.
func createKey(path string, random io.Reader) (key []byte, created bool, err error) {
	var k [KeySize]byte
	if _, err := io.ReadFull(random, k[:]); err != nil {
		return nil, false, fmt.Errorf("key: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return nil, false, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".new-*") // 0600, O_EXCL
	if err != nil {
		return nil, false, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(append(hex.AppendEncode(nil, k[:]), '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, false, err
	}
	if err := os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
		key, err := readKey(path)
		return key, false, err
	} else if err != nil {
		return nil, false, err
	}
	// The key outlives a crash of the machine: without it, the lines
	// written with it could never be checked again.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return k[:], true, nil
}
