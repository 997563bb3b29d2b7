package audit

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// Report is the outcome of Verify.
type Report struct {
	// OK is true when every line parses, the chain is unbroken and the
	// log agrees with its anchor.
	OK bool
	// Lines is the number of lines in the log, a last line without its
	// newline included.
	Lines int
	// FirstBad is the 1-based number of the first line found wrong; past
	// the end (Lines+1) when lines are missing at the end; 0 when the log
	// is OK or when no one line is to blame (a missing anchor).
	FirstBad int
	// Problem says what is wrong, in one sentence; empty when OK.
	Problem string
	// LastHash is the hex SHA-256 of the last line when the chain is
	// unbroken, for anchoring elsewhere.
	LastHash string
}

// entry is what Verify keeps of a line.
type entry struct {
	n    int
	hash [32]byte
	header
	bad string
}

// Verify checks the log at path against itself and against the anchor at
// anchorPath (empty means path + ".anchor"). It checks that every line is
// a JSON event, that seq counts 1, 2, 3, … and that each prev is the hash
// of the line before; the first line that breaks this is named and the
// break explained (edited, deleted, inserted, reordered, bad JSON). The
// chain cannot see a cut tail or a log rewritten wholesale with a
// consistent chain; the anchor's count and last hash can. A missing anchor
// beside a non-empty log is a problem; a missing or empty log without an
// anchor is OK.
//
// Integrity problems are reported in the Report; the error is for logs
// that cannot be read.
func Verify(path, anchorPath string) (Report, error) {
	if anchorPath == "" {
		anchorPath = path + ".anchor"
	}
	var rep Report
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f = nil
	case err != nil:
		return rep, fmt.Errorf("audit: %w", err)
	default:
		defer f.Close()
		// Shared: appends (which write the line, then the anchor) wait.
		if err := lockFile(context.Background(), f, false); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			return rep, fmt.Errorf("audit: %s: lock: %w", path, err)
		}
	}
	a, haveAnchor, aerr := readAnchor(anchorPath)
	if aerr != nil && !errors.Is(aerr, ErrIntegrity) {
		return rep, fmt.Errorf("audit: %w", aerr)
	}

	var anchored [32]byte // hash of line a.Count
	if f != nil {
		lr := newLineReader(f)
		var p1 *entry
		for {
			e, err := readEntry(lr)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return rep, fmt.Errorf("audit: %s: %w", path, err)
			}
			rep.Lines = e.n
			if e.n == a.Count {
				anchored = e.hash
			}
			exp := hashLine(nil)
			if p1 != nil {
				exp = p1.hash
			}
			if e.bad == "" && e.seq == e.n && e.prev == exp {
				p1 = &e
				continue
			}
			var rest []entry
			for {
				r, err := readEntry(lr)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return rep, fmt.Errorf("audit: %s: %w", path, err)
				}
				rest = append(rest, r)
			}
			rep.Lines = lr.n
			rep.FirstBad, rep.Problem = classify(e, p1, rest)
			return rep, nil
		}
		if p1 != nil {
			rep.LastHash = hex.EncodeToString(p1.hash[:])
		}
	}

	switch {
	case aerr != nil:
		rep.Problem = aerr.Error()
	case !haveAnchor:
		if rep.Lines > 0 {
			rep.Problem = fmt.Sprintf("the anchor %s is missing: a cut tail or a rewritten log cannot be ruled out", anchorPath)
		}
	case a.Count > rep.Lines && rep.Lines == 0:
		rep.FirstBad = 1
		rep.Problem = fmt.Sprintf("the log is empty or missing but its anchor records %d lines: the tail was cut", a.Count)
	case a.Count > rep.Lines:
		rep.FirstBad = rep.Lines + 1
		rep.Problem = fmt.Sprintf("the log ends at line %d but its anchor records %d lines: the tail was cut", rep.Lines, a.Count)
	case a.Count == 0:
		if rep.Lines > 0 {
			rep.FirstBad = 1
			rep.Problem = fmt.Sprintf("all %d lines are past the anchor, which records none", rep.Lines)
		}
	case !strings.EqualFold(hex.EncodeToString(anchored[:]), a.LastHash):
		rep.FirstBad = a.Count
		rep.Problem = fmt.Sprintf("line %d does not match the hash its anchor records: the log was rewritten up to there", a.Count)
	case a.Count == rep.Lines-1:
		rep.FirstBad = rep.Lines
		rep.Problem = fmt.Sprintf("line %d is past the anchor: added outside mnemos, or an append was interrupted", rep.Lines)
	case a.Count < rep.Lines:
		rep.FirstBad = a.Count + 1
		rep.Problem = fmt.Sprintf("lines %d to %d are past the anchor: added outside mnemos", a.Count+1, rep.Lines)
	}
	rep.OK = rep.Problem == ""
	return rep, nil
}

// readEntry reads and parses the next line.
func readEntry(lr *lineReader) (entry, error) {
	line, complete, long, err := lr.next()
	if err != nil {
		return entry{}, err
	}
	e := entry{n: lr.n, hash: hashLine(line)}
	switch {
	case long:
		e.bad = fmt.Sprintf("longer than %d bytes", MaxLine)
	case !complete:
		e.bad = "incomplete: no newline at the end of the file"
	default:
		h, err := parseHeader(line)
		if err != nil {
			e.bad = err.Error()
		}
		e.header = h
	}
	return e, nil
}

// classify explains the first break in the chain. cur is line i, the first
// line that does not continue the chain; p1 is line i-1 (nil when i is 1),
// which is sound; rest are the lines after cur.
func classify(cur entry, p1 *entry, rest []entry) (firstBad int, problem string) {
	i := cur.n
	if cur.bad != "" {
		return i, fmt.Sprintf("line %d: %s", i, cur.bad)
	}
	exp := hashLine(nil)
	if p1 != nil {
		exp = p1.hash
	}
	var next *entry
	if len(rest) > 0 && rest[0].bad == "" {
		next = &rest[0]
	}
	if cur.seq == i {
		// Right place, wrong link.
		if next != nil && next.seq == i && next.prev == exp {
			return i, fmt.Sprintf("line %d was inserted: line %d carries the same seq and continues the chain from the line before", i, i+1)
		}
		if p1 == nil {
			return 1, "line 1 was edited: its prev does not start a chain"
		}
		return i - 1, fmt.Sprintf("line %d was edited: its hash no longer matches the prev recorded by line %d", i-1, i)
	}
	if next != nil && next.seq == i+1 && next.prev != cur.hash && cur.prev == exp {
		return i, fmt.Sprintf("line %d was edited: its seq reads %d and line %d does not chain from it", i, cur.seq, i+1)
	}
	for _, r := range rest {
		if r.bad == "" && r.seq == cur.seq {
			return i, fmt.Sprintf("line %d was inserted: seq %d appears again at line %d", i, cur.seq, r.n)
		}
	}
	if cur.seq > i {
		found := false
		belongs := false
		for _, r := range rest {
			if r.bad == "" && r.seq == i {
				found = true
			}
			if r.hash == cur.prev {
				belongs = true
			}
		}
		switch {
		case found && belongs:
			return i, fmt.Sprintf("line %d is out of order: it carries seq %d where seq %d was expected (reordered)", i, cur.seq, i)
		case found:
			return i, fmt.Sprintf("line %d was inserted: it carries seq %d and chains from no line of the log", i, cur.seq)
		case cur.seq == i+1:
			return i, fmt.Sprintf("a line was deleted before line %d: seq %d is missing", i, i)
		default:
			return i, fmt.Sprintf("lines were deleted before line %d: seq %d to %d are missing", i, i, cur.seq-1)
		}
	}
	// cur.seq < i: a seq seen before.
	if p1 != nil && cur.seq == p1.seq && cur.prev == p1.prev {
		switch {
		case cur.hash == p1.hash:
			return i, fmt.Sprintf("line %d was inserted: it repeats line %d", i, i-1)
		case next != nil && next.prev == p1.hash:
			return i, fmt.Sprintf("line %d was inserted: it claims the place of line %d, and line %d chains from line %d", i, i-1, i+1, i-1)
		default:
			return i - 1, fmt.Sprintf("line %d was inserted: it claims the place of line %d, and line %d continues the chain without it", i-1, i, i)
		}
	}
	return i, fmt.Sprintf("line %d was inserted: it repeats seq %d", i, cur.seq)
}
