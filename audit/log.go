package audit

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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
)

const (
	fileMode = 0o600
	dirMode  = 0o700
)

// ErrIntegrity reports a log that does not continue its own chain or does
// not match its anchor: an incomplete or unparseable last line, a missing
// or disagreeing anchor. Append refuses to write after such a log, so
// that a tampered history is never sealed by a new anchor; `audit verify`
// says what is wrong.
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
}

// Log appends events to one log file. It is safe for concurrent use by
// goroutines, and several processes (or several Logs) may append to the
// same file: each append holds an exclusive flock on the log.
type Log struct {
	path   string
	anchor string
	clock  func() time.Time
	sync   bool

	mu sync.Mutex
	f  *os.File // opened by the first Append
}

// Open returns a Log for path. Nothing is opened or created until the
// first Append.
func Open(path string, opts Options) *Log {
	l := &Log{path: path, anchor: opts.Anchor, clock: opts.Clock, sync: opts.Sync}
	if l.anchor == "" {
		l.anchor = path + ".anchor"
	}
	if l.clock == nil {
		l.clock = time.Now
	}
	return l
}

// Path returns the log's path.
func (l *Log) Path() string { return l.path }

// AnchorPath returns the anchor file's path.
func (l *Log) AnchorPath() string { return l.anchor }

// Append writes one event of the given kind. Every string in attrs (at
// any depth, in groups, slices, maps and structs) is redacted first with
// [RedactString], argv-like string slices with [RedactArgv], and a value
// whose key names a secret ("password", "api_key", "GITHUB_TOKEN") is
// replaced whole. The keys time, level, msg, seq and prev are reserved.
//
// Append creates the directory (0700) and the file (0600) if needed, takes
// an exclusive lock, reads the last line backwards from the end, checks it
// against the anchor, writes the new line with one O_APPEND write and
// replaces the anchor, all under the lock. Any failure is returned and
// nothing is left half written: callers must treat an error as "not
// recorded" and refuse the action it was recording.
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
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	seq, prev, err := l.continuation(f, size)
	if err != nil {
		return err
	}
	line := appendHeader(make([]byte, 0, 160+len(body)), l.clock(), kind, seq, prev)
	line = append(line, body...)
	if len(line) > MaxLine {
		return fmt.Errorf("event of %d bytes exceeds %d", len(line), MaxLine)
	}
	if _, err := f.Write(line); err != nil {
		return errors.Join(err, f.Truncate(size))
	}
	if l.sync {
		if err := f.Sync(); err != nil {
			return errors.Join(err, f.Truncate(size))
		}
	}
	sum := hashLine(line[:len(line)-1])
	if err := writeAnchor(l.anchor, anchor{Count: seq, LastHash: hex.EncodeToString(sum[:])}, l.sync); err != nil {
		return errors.Join(fmt.Errorf("anchor: %w", err), f.Truncate(size))
	}
	return nil
}

// continuation returns the seq and prev of the next line, after checking
// the log's end against the anchor.
func (l *Log) continuation(f *os.File, size int64) (seq int, prev string, err error) {
	last, err := lastLine(f, size)
	if err != nil {
		return 0, "", err
	}
	a, haveAnchor, err := readAnchor(l.anchor)
	if err != nil {
		return 0, "", err
	}
	if last == nil {
		if haveAnchor && a.Count > 0 {
			return 0, "", fmt.Errorf("%w: the log is empty but its anchor records %d lines", ErrIntegrity, a.Count)
		}
		return 1, emptyHash, nil
	}
	h, err := parseHeader(last)
	if err != nil {
		return 0, "", fmt.Errorf("%w: last line: %w", ErrIntegrity, err)
	}
	sum := hashLine(last)
	lastHash := hex.EncodeToString(sum[:])
	switch {
	case !haveAnchor:
		return 0, "", fmt.Errorf("%w: anchor %s is missing", ErrIntegrity, l.anchor)
	case a.Count == h.seq && a.LastHash == lastHash:
	case a.Count == h.seq-1 && a.LastHash == hex.EncodeToString(h.prev[:]):
		// The previous append wrote its line but not its anchor; this
		// append's anchor covers both.
	default:
		return 0, "", fmt.Errorf("%w: the log ends at seq %d but its anchor records %d lines", ErrIntegrity, h.seq, a.Count)
	}
	return h.seq + 1, lastHash, nil
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
	// seq and prev. Numbers are json.Number.
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
	r.Attrs = m
	return r, nil
}
