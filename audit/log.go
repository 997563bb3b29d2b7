package audit

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Event kinds written by mnemos. Extensions write "extension.<what>".
const (
	KindPolicyDecision    = "policy.decision"
	KindApprovalRequested = "approval.requested"
	KindApprovalApproved  = "approval.approved"
	KindApprovalDenied    = "approval.denied"
	KindApprovalExpired   = "approval.expired"
	KindApprovalCancelled = "approval.cancelled"
	KindGrantRecorded     = "grant.recorded"
	KindGrantRevoked      = "grant.revoked"
	KindRunStarted        = "run.started"
	KindRunFinished       = "run.finished"
	KindRateLimited       = "rate.limited"
	KindChannelDelivered  = "channel.delivered"
	KindChannelFailed     = "channel.failed"
	KindExtensionPrefix   = "extension."
	// KindJournalUndo: mnemos undo put back what runs changed.
	KindJournalUndo = "journal.undo"
	// KindAuditKeyed is written by EnsureKey when it makes the key for a
	// log that already holds lines: the keyed part starts there.
	KindAuditKeyed = "audit.keyed"
)

const (
	fileMode = 0o600
	dirMode  = 0o700
)

// ErrIntegrity reports a log that does not continue its own chain or does
// not match its anchor: an incomplete or unparseable last line, a missing
// or disagreeing anchor, an anchor whose MAC is wrong, a keyed log whose
// key is missing, an unkeyed last line once the key exists. Append refuses
// to write after such a log, so that a tampered history is never sealed by
// a new anchor; `audit verify` says what is wrong.
var ErrIntegrity = errors.New("audit log failed its integrity check")

// Options configure a Log. The zero value is ready to use.
type Options struct {
	// Clock gives event times; nil means time.Now.
	Clock func() time.Time
	// Anchor is the anchor file's path; empty means the log's path with
	// ".anchor" appended.
	Anchor string
	// Sync makes each Append fsync the log and the anchor before it
	// returns. Without it an append survives a crash of mnemos but not
	// necessarily a crash of the machine.
	Sync bool
	// Key is the key file's path; empty means KeyPath(path).
	Key string
	// Rand is the source of a new key; nil means crypto/rand.Reader.
	Rand io.Reader
}

// Log appends events to one log file. It is safe for concurrent use by
// goroutines, and several processes (or several Logs) may append to the
// same file: each append holds an exclusive flock on the log.
type Log struct {
	path    string
	anchor  string
	keyPath string
	clock   func() time.Time
	sync    bool
	rand    io.Reader

	mu sync.Mutex
	f  *os.File // opened by the first Append
	// mac holds the key once read: one HMAC per line, no file read.
	mac *macer
	// wrote is the anchor this Log last wrote. An anchor still holding
	// exactly these bytes needs no MAC check: this Log made its MAC.
	wrote []byte
}

// Open returns a Log for path. Nothing is opened or created until the
// first Append.
func Open(path string, opts Options) *Log {
	l := &Log{path: path, anchor: opts.Anchor, keyPath: opts.Key, clock: opts.Clock, sync: opts.Sync, rand: opts.Rand}
	if l.anchor == "" {
		l.anchor = path + ".anchor"
	}
	if l.keyPath == "" {
		l.keyPath = KeyPath(path)
	}
	if l.clock == nil {
		l.clock = time.Now
	}
	if l.rand == nil {
		l.rand = rand.Reader
	}
	return l
}

// KeyPath returns the key file's path.
func (l *Log) KeyPath() string { return l.keyPath }

// Path returns the log's path.
func (l *Log) Path() string { return l.path }

// AnchorPath returns the anchor file's path.
func (l *Log) AnchorPath() string { return l.anchor }

// Append writes one event of the given kind. Every string in attrs (at
// any depth, in groups, slices, maps and structs) is redacted first with
// [RedactString], argv-like string slices with [RedactArgv], and a value
// whose key names a secret ("password", "api_key", "GITHUB_TOKEN") is
// replaced whole. The keys time, level, msg, seq, prev and mac are
// reserved.
//
// Append creates the directory (0700) and the file (0600) if needed, takes
// an exclusive lock, reads the last line backwards from the end, checks it
// against the anchor, writes the new line, MACed with the key, with one
// O_APPEND write and replaces the anchor, all under the lock. It reads the
// key once per Log and keeps it. When there is no key yet and the log
// holds no keyed line (a new log, or one written before keys existed), it
// creates the key (see EnsureKey); when the log is keyed and the key is
// missing, it refuses. Any failure is returned and nothing is left half
// written: callers must treat an error as "not recorded" and refuse the
// action it was recording.
func (l *Log) Append(ctx context.Context, kind string, attrs ...slog.Attr) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := checkKind(kind); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	body, err := encodeBody(attrs)
	if err != nil {
		return fmt.Errorf("audit: %s: %w", kind, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.append(ctx, kind, body); err != nil {
		return fmt.Errorf("audit: %s: %w", l.path, err)
	}
	return nil
}

func (l *Log) append(ctx context.Context, kind string, body []byte) (err error) {
	f, err := l.lock(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if uerr := unlockFile(f); uerr != nil && err == nil {
			err = uerr
		}
	}()
	_, err = l.appendLocked(f, kind, body, false)
	return err
}

// appendLocked writes one line under the log's exclusive lock. body is
// the encoded attributes, from encodeBody. keyedEvent writes the
// KindAuditKeyed event instead, and only if the key was created for it.
func (l *Log) appendLocked(f *os.File, kind string, body []byte, keyedEvent bool) (logEnd, error) {
	fi, err := f.Stat()
	if err != nil {
		return logEnd{}, err
	}
	size := fi.Size()
	end, err := l.continuation(f, size)
	if err != nil {
		return end, err
	}
	if keyedEvent {
		if !end.created {
			return end, nil // someone else made the key, and wrote with it
		}
		if body, err = encodeBody([]slog.Attr{slog.Int("unkeyed_lines", end.seq-1)}); err != nil {
			return end, err
		}
	}
	line := appendHeader(make([]byte, 0, 160+len(body)+macSuffixLen), l.clock(), kind, end.seq, end.prev)
	line = append(line, body[:len(body)-len("}\n")]...)
	mac := l.mac.line(line)
	line = append(line, `,"mac":"`...)
	line = hex.AppendEncode(line, mac[:])
	line = append(line, '"', '}', '\n')
	if len(line) > MaxLine {
		return end, fmt.Errorf("event of %d bytes exceeds %d", len(line), MaxLine)
	}
	if _, err := f.Write(line); err != nil {
		return end, errors.Join(err, f.Truncate(size))
	}
	if l.sync {
		if err := f.Sync(); err != nil {
			return end, errors.Join(err, f.Truncate(size))
		}
	}
	sum := hashLine(line[:len(line)-1])
	a := anchor{Count: end.seq, LastHash: hex.EncodeToString(sum[:]), LastMAC: hex.EncodeToString(mac[:])}
	am := l.mac.anchor(a)
	a.MAC = hex.EncodeToString(am[:])
	raw, err := writeAnchor(l.anchor, a, l.sync)
	if err != nil {
		l.wrote = nil
		return end, errors.Join(fmt.Errorf("anchor: %w", err), f.Truncate(size))
	}
	l.wrote = raw
	return end, nil
}

// logEnd is where the next line goes.
type logEnd struct {
	seq     int
	prev    string
	created bool // the key was created for this line
}

// continuation returns the seq and prev of the next line, after checking
// the log's end against the anchor, and loads the key (creating it for a
// log that has no keyed line). The checks that need no key come first, so
// that a log refused for them does not get a key it will never use.
func (l *Log) continuation(f *os.File, size int64) (logEnd, error) {
	last, err := lastLine(f, size)
	if err != nil {
		return logEnd{}, err
	}
	a, rawAnchor, haveAnchor, err := readAnchor(l.anchor)
	if err != nil {
		return logEnd{}, err
	}
	var h header
	lastHash := emptyHash
	interrupted := false
	if last == nil {
		if haveAnchor && a.Count > 0 {
			return logEnd{}, fmt.Errorf("%w: the log is empty but its anchor records %d lines", ErrIntegrity, a.Count)
		}
	} else {
		if h, err = parseHeader(last); err != nil {
			return logEnd{}, fmt.Errorf("%w: last line: %w", ErrIntegrity, err)
		}
		sum := hashLine(last)
		lastHash = hex.EncodeToString(sum[:])
		switch {
		case !haveAnchor:
			return logEnd{}, fmt.Errorf("%w: anchor %s is missing", ErrIntegrity, l.anchor)
		case h.keyed && !a.keyed():
			return logEnd{}, fmt.Errorf("%w: the log is keyed but its anchor %s is not", ErrIntegrity, l.anchor)
		case a.Count == h.seq && a.LastHash == lastHash:
			if h.keyed && a.LastMAC != hex.EncodeToString(h.mac[:]) {
				return logEnd{}, fmt.Errorf("%w: the anchor %s records another MAC for the last line (seq %d)", ErrIntegrity, l.anchor, h.seq)
			}
		case a.Count == h.seq-1 && a.LastHash == hex.EncodeToString(h.prev[:]):
			// The previous append wrote its line but not its anchor; this
			// append's anchor covers both, once the line's MAC holds.
			interrupted = true
		default:
			return logEnd{}, fmt.Errorf("%w: the log ends at seq %d but its anchor records %d lines", ErrIntegrity, h.seq, a.Count)
		}
	}
	created, err := l.loadKey(h.keyed || a.keyed())
	if err != nil {
		return logEnd{}, err
	}
	switch {
	case last != nil && !h.keyed && !created:
		// Once the key exists every line is written with it.
		return logEnd{}, fmt.Errorf("%w: the last line (seq %d) is not keyed, but the key %s exists: the log was written without the key", ErrIntegrity, h.seq, l.keyPath)
	case a.keyed() && !bytes.Equal(rawAnchor, l.wrote) && !l.mac.checkAnchor(a):
		return logEnd{}, fmt.Errorf("%w: the MAC of the anchor %s does not match: it was written without the key", ErrIntegrity, l.anchor)
	case interrupted && h.keyed && l.mac.line(last[:h.signed]) != h.mac:
		return logEnd{}, fmt.Errorf("%w: the MAC of the last line (seq %d) does not match", ErrIntegrity, h.seq)
	}
	return logEnd{seq: h.seq + 1, prev: lastHash, created: created}, nil
}

// loadKey reads the key into l once. When it is missing it is created,
// unless keyed says the log already has lines MACed with it: then the log
// cannot be continued (nor its new lines checked) and Append refuses.
func (l *Log) loadKey(keyed bool) (created bool, err error) {
	if l.mac != nil {
		return false, nil
	}
	key, err := readKey(l.keyPath)
	if errors.Is(err, fs.ErrNotExist) {
		if keyed {
			return false, fmt.Errorf("%w: the key %s is missing, but the log is keyed: its lines can no longer be checked", ErrIntegrity, l.keyPath)
		}
		key, created, err = createKey(l.keyPath, l.rand)
	}
	if err != nil {
		return false, fmt.Errorf("key: %w", err)
	}
	l.mac = newMacer(key)
	return created, nil
}

// EnsureKey makes the log's key if there is none; created says whether it
// did. When the log already holds lines (written before keys existed), it
// also appends a KindAuditKeyed event under the same lock, so that the
// log is keyed from then on: once the key exists, a log with no keyed line
// can only have been rewritten without it, and Verify says so.
func (l *Log) EnsureKey(ctx context.Context) (created bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("audit: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := os.Lstat(l.keyPath); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("audit: %w", err)
	}
	if fi, err := os.Lstat(l.path); errors.Is(err, fs.ErrNotExist) || (err == nil && fi.Mode().IsRegular() && fi.Size() == 0) {
		// No line yet: the first one will be keyed.
		if _, created, err = createKey(l.keyPath, l.rand); err != nil {
			return false, fmt.Errorf("audit: %s: key: %w", l.keyPath, err)
		}
		return created, nil
	}
	f, err := l.lock(ctx)
	if err != nil {
		return false, fmt.Errorf("audit: %s: %w", l.path, err)
	}
	defer func() {
		if uerr := unlockFile(f); uerr != nil && err == nil {
			err = fmt.Errorf("audit: %s: %w", l.path, uerr)
		}
	}()
	end, err := l.appendLocked(f, KindAuditKeyed, nil, true)
	if err != nil {
		return false, fmt.Errorf("audit: %s: %w", l.path, err)
	}
	created = end.created
	return created, nil
}

// lock opens the log if needed and takes the exclusive lock, making sure
// the locked file is still the one at the path (not one renamed away or
// deleted while this process waited).
func (l *Log) lock(ctx context.Context) (*os.File, error) {
	for range 3 {
		if l.f == nil {
			f, err := openLog(l.path)
			if err != nil {
				return nil, err
			}
			l.f = f
		}
		if err := lockFile(ctx, l.f, true); err != nil {
			return nil, fmt.Errorf("lock: %w", err)
		}
		held, err1 := l.f.Stat()
		cur, err2 := os.Lstat(l.path)
		if err1 == nil && err2 == nil && os.SameFile(held, cur) {
			return l.f, nil
		}
		_ = unlockFile(l.f)
		_ = l.f.Close()
		l.f = nil
		if err1 != nil {
			return nil, err1
		}
		if err2 != nil && !errors.Is(err2, fs.ErrNotExist) {
			return nil, err2
		}
	}
	return nil, errors.New("the log file keeps being replaced")
}

func openLog(path string) (*os.File, error) {
	flags := os.O_RDWR | os.O_APPEND | os.O_CREATE | openFlags
	f, err := os.OpenFile(path, flags, fileMode)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
			return nil, err
		}
		f, err = os.OpenFile(path, flags, fileMode)
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, nil
}

// Close releases the log's file. A later Append opens it again.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// checkKind accepts dotted lower-case names: "policy.decision",
// "extension.admitted".
func checkKind(kind string) error {
	if kind == "" || len(kind) > 64 {
		return fmt.Errorf("bad event kind %q", kind)
	}
	dot := false
	for i := 0; i < len(kind); i++ {
		c := kind[i]
		switch {
		case isLower(c) || c == '_':
		case isDigit(c) || c == '-':
			if i == 0 {
				return fmt.Errorf("bad event kind %q", kind)
			}
		case c == '.':
			if i == 0 || i == len(kind)-1 || kind[i-1] == '.' {
				return fmt.Errorf("bad event kind %q", kind)
			}
			dot = true
		default:
			return fmt.Errorf("bad event kind %q", kind)
		}
	}
	if !dot {
		return fmt.Errorf("bad event kind %q: want area.event", kind)
	}
	return nil
}

// Record is one event read back from the log.
type Record struct {
	Seq  int
	Time time.Time
	Kind string
	// Attrs holds the event's attributes: everything but time, level, msg,
	// seq, prev and mac. Numbers are json.Number.
	Attrs map[string]any
	// Raw is the line as written, without its newline.
	Raw []byte
}

// Tail returns the last n records, oldest first; n <= 0 returns all. A
// missing log has no records. Tail reads under a shared lock and does not
// verify the chain (see Verify).
func (l *Log) Tail(n int) ([]Record, error) {
	f, err := os.Open(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer f.Close()
	if err := lockFile(context.Background(), f, false); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return nil, fmt.Errorf("audit: %s: lock: %w", l.path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	lines, err := lastLines(f, fi.Size(), n)
	if err != nil {
		return nil, fmt.Errorf("audit: %s: %w", l.path, err)
	}
	recs := make([]Record, 0, len(lines))
	for i, line := range lines {
		r, err := parseRecord(line)
		if err != nil {
			return nil, fmt.Errorf("audit: %s: record %d of the last %d: %w", l.path, i+1, len(lines), err)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// parseRecord parses one line of the log (without its newline).
func parseRecord(line []byte) (Record, error) {
	h, err := parseHeader(line)
	if err != nil {
		return Record{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return Record{}, fmt.Errorf("bad JSON: %w", err)
	}
	r := Record{Seq: h.seq, Raw: bytes.Clone(line)}
	r.Kind, _ = m["msg"].(string)
	ts, _ := m["time"].(string)
	r.Time, _ = time.Parse(time.RFC3339Nano, ts)
	for _, k := range [...]string{"time", "level", "msg", "seq", "prev"} {
		delete(m, k)
	}
	if h.keyed {
		delete(m, "mac")
	}
	r.Attrs = m
	return r, nil
}
