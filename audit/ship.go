package audit

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// Line is one line of the log as another store keeps it: a central
// table that every host ships its log to. The chain holds there too:
// each line's Prev is the Hash of the line numbered one less (for line
// 1, of the empty string).
type Line struct {
	Seq  int
	Time time.Time
	Kind string
	// Prev is the hex SHA-256 of the line before, as the line says.
	Prev string
	// Hash is the hex SHA-256 of Raw.
	Hash string
	// Raw is the line as written, without its newline.
	Raw []byte
}

// EmptyHash is the Prev of a log's first line.
const EmptyHash = emptyHash

// ParseLine reads what the chain needs from a line of a log (without its
// newline): its number, the hash it carries of the line before, its own
// hash, its time and kind. It checks the line's shape, not its MAC,
// which needs the key of the log it came from.
func ParseLine(raw []byte) (Line, error) {
	h, err := parseHeader(raw)
	if err != nil {
		return Line{}, err
	}
	r, err := parseRecord(raw)
	if err != nil {
		return Line{}, err
	}
	sum := hashLine(raw)
	return Line{Seq: h.seq, Time: r.Time, Kind: r.Kind, Prev: hex.EncodeToString(h.prev[:]),
		Hash: hex.EncodeToString(sum[:]), Raw: r.Raw}, nil
}

// After returns the log's lines numbered after seq, oldest first, at
// most max of them (all when max <= 0). It reads backwards from the end
// under a shared lock, so its cost grows with what it returns, not with
// the log. The lines returned are numbered seq+1, seq+2, ... and each
// carries the hash of the one before it (the first, of the line at seq,
// which the caller already has); a log where they do not is an error
// wrapping ErrIntegrity. A missing log has no lines.
func (l *Log) After(seq, max int) ([]Line, error) {
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
	last, err := lastLine(f, fi.Size())
	if err != nil || last == nil {
		return nil, err
	}
	h, err := parseHeader(last)
	if err != nil {
		return nil, fmt.Errorf("audit: %s: %w: last line: %w", l.path, ErrIntegrity, err)
	}
	if h.seq <= seq {
		if h.seq < seq {
			return nil, fmt.Errorf("audit: %s: %w: the log ends at line %d, before line %d", l.path, ErrIntegrity, h.seq, seq)
		}
		return nil, nil
	}
	raws, err := lastLines(f, fi.Size(), h.seq-seq)
	if err != nil {
		return nil, fmt.Errorf("audit: %s: %w", l.path, err)
	}
	if max > 0 && len(raws) > max {
		raws = raws[:max]
	}
	out := make([]Line, 0, len(raws))
	for i, raw := range raws {
		ln, err := ParseLine(raw)
		if err != nil {
			return nil, fmt.Errorf("audit: %s: %w: line %d: %w", l.path, ErrIntegrity, seq+1+i, err)
		}
		if ln.Seq != seq+1+i {
			return nil, fmt.Errorf("audit: %s: %w: line %d is numbered %d", l.path, ErrIntegrity, seq+1+i, ln.Seq)
		}
		if i > 0 && ln.Prev != out[i-1].Hash {
			return nil, fmt.Errorf("audit: %s: %w: line %d does not carry the hash of line %d", l.path, ErrIntegrity, ln.Seq, ln.Seq-1)
		}
		out = append(out, ln)
	}
	return out, nil
}
