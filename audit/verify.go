package audit

import (
	"context"
	"crypto/hmac"
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
	// OK is true when every line parses, the chain is unbroken, every
	// keyed line's MAC holds, no unkeyed line follows a keyed one, and the
	// log agrees with its anchor (and with the head, when one was given).
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
	// Keyed counts the lines that carry a MAC, each checked with the key.
	// Unkeyed counts the lines written before the key existed: lines 1
	// to Unkeyed, checked by their hash chain only. When the log is not
	// OK both count only the lines before the first bad one.
	Keyed, Unkeyed int
	// LastMAC is the hex MAC of the last line when it is keyed and the
	// chain is unbroken.
	LastMAC string
}

// Head returns the report's head (see Head): ok is false when the log is
// not OK or its last line is not keyed.
func (r Report) Head() (h Head, ok bool) {
	if !r.OK || r.LastMAC == "" {
		return Head{}, false
	}
	return Head{Count: r.Lines, MAC: r.LastMAC}, true
}

// VerifyOptions say where the anchor and the key are, and which head the
// log must extend. The zero value checks a log against the anchor and key
// beside it.
type VerifyOptions struct {
	// Anchor is the anchor file's path; empty means the log's path with
	// ".anchor" appended.
	Anchor string
	// Key is the key file's path; empty means KeyPath(path).
	Key string
	// Head, when set, is a head kept elsewhere: the line at Head.Count
	// must carry Head.MAC.
	Head *Head
}

// entry is what Verify keeps of a line.
type entry struct {
	n    int
	hash [32]byte
	header
	macOK bool
	bad   string
}

// Verify checks the log at path against itself, its key and the anchor at
// anchorPath (empty means path + ".anchor"); see VerifyWith.
func Verify(path, anchorPath string) (Report, error) {
	return VerifyWith(path, VerifyOptions{Anchor: anchorPath})
}

// VerifyWith checks the log at path. It checks that every line is a JSON
// event, that seq counts 1, 2, 3, … and that each prev is the hash of the
// line before; the first line that breaks this is named and the break
// explained (edited, deleted, inserted, reordered, bad JSON). It checks
// each keyed line's MAC with the key, so a line changed by anyone without
// the key is named even when every hash after it was recomputed, and it
// refuses an unkeyed line after a keyed one (a downgrade). Lines written
// before the key existed are counted in Report.Unkeyed: they are checked
// by hash only. Once the key exists mnemos writes every line with it, so
// a log with lines, a key and no keyed line was rewritten.
//
// The chain cannot see a cut tail or a log rewritten wholesale with a
// consistent chain; the anchor's count, last hash and MAC can, unless an
// older anchor was kept and put back. A head kept elsewhere (o.Head) sees
// that too: the log must still hold that line with that MAC. A missing
// anchor beside a non-empty log is a problem; a missing or empty log
// without an anchor is OK.
//
// Integrity problems are reported in the Report; the error is for logs
// that cannot be read, and for a key that is needed and missing or
// unreadable (wrapping ErrKey).
func VerifyWith(path string, o VerifyOptions) (Report, error) {
	anchorPath := o.Anchor
	if anchorPath == "" {
		anchorPath = path + ".anchor"
	}
	keyPath := o.Key
	if keyPath == "" {
		keyPath = KeyPath(path)
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
	a, _, haveAnchor, aerr := readAnchor(anchorPath)
	if aerr != nil && !errors.Is(aerr, ErrIntegrity) {
		return rep, fmt.Errorf("audit: %w", aerr)
	}
	key := loadVerifyKey(keyPath)

	var anchored entry // line a.Count
	headMatch := false // line Head.Count carries Head.MAC
	var headMAC [32]byte
	if o.Head != nil {
		var ok bool
		if headMAC, ok = decodeHex32(o.Head.MAC); !ok || o.Head.Count < 1 {
			return rep, fmt.Errorf("audit: bad head %q", o.Head)
		}
	}
	if f != nil {
		lr := newLineReader(f)
		var p1 *entry
		firstKeyed := 0
		for {
			e, line, err := readEntry(lr)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return rep, fmt.Errorf("audit: %s: %w", path, err)
			}
			rep.Lines = e.n
			if e.bad == "" && e.keyed {
				m, err := key.need(e.n)
				if err != nil {
					return rep, fmt.Errorf("audit: %w", err)
				}
				e.macOK = m.checkLine(line, e.header)
			}
			if e.n == a.Count {
				anchored = e
			}
			if o.Head != nil && e.n == o.Head.Count {
				headMatch = e.keyed && hmac.Equal(e.mac[:], headMAC[:])
			}
			exp := hashLine(nil)
			if p1 != nil {
				exp = p1.hash
			}
			chained := e.bad == "" && e.seq == e.n && e.prev == exp
			if chained && e.keyed && e.macOK {
				if firstKeyed == 0 {
					firstKeyed = e.n
					rep.Unkeyed = e.n - 1
				}
				rep.Keyed++
				p1 = &e
				continue
			}
			if chained && !e.keyed && firstKeyed == 0 {
				p1 = &e
				continue
			}
			var rest []entry
			for {
				r, line, err := readEntry(lr)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return rep, fmt.Errorf("audit: %s: %w", path, err)
				}
				if r.bad == "" && r.keyed && key.m != nil {
					r.macOK = key.m.checkLine(line, r.header)
				}
				rest = append(rest, r)
			}
			if firstKeyed == 0 {
				rep.Unkeyed = e.n - 1
			}
			rep.Lines = lr.n
			switch {
			case e.bad == "" && e.keyed && !e.macOK:
				// The line itself was changed, whatever else it broke.
				rep.FirstBad, rep.Problem = macProblem(e, rest, keyPath)
			case !chained:
				rep.FirstBad, rep.Problem = classify(e, p1, rest)
			default:
				rep.FirstBad = e.n
				rep.Problem = fmt.Sprintf("line %d is not keyed, but line %d before it is: a keyed log never returns to unkeyed lines, so it was added or rewritten without the key", e.n, p1.n)
			}
			return rep, nil
		}
		if firstKeyed == 0 {
			rep.Unkeyed = rep.Lines
		}
		if p1 != nil {
			rep.LastHash = hex.EncodeToString(p1.hash[:])
			if p1.keyed {
				rep.LastMAC = hex.EncodeToString(p1.mac[:])
			}
		}
	}

	var err2 error
	rep.FirstBad, rep.Problem, err2 = anchorProblem(rep, a, haveAnchor, aerr, anchorPath, anchored, key)
	if err2 != nil {
		return Report{}, fmt.Errorf("audit: %w", err2)
	}
	if rep.Problem == "" && o.Head != nil {
		switch {
		case o.Head.Count > rep.Lines:
			rep.FirstBad = rep.Lines + 1
			rep.Problem = fmt.Sprintf("the log ends at line %d but the head records %d lines: it was cut, or replaced by another log", rep.Lines, o.Head.Count)
		case !headMatch:
			rep.FirstBad = o.Head.Count
			rep.Problem = fmt.Sprintf("line %d does not carry the head's MAC: the log was rewritten, or replaced by another log, up to there", o.Head.Count)
		}
	}
	if rep.Problem == "" && rep.Lines > 0 && rep.Keyed == 0 && key.exists {
		rep.FirstBad = 1
		rep.Problem = fmt.Sprintf("no line is keyed, yet the key %s exists: once it exists every line is written with it, so the log was rewritten without the key", keyPath)
	}
	rep.OK = rep.Problem == ""
	if !rep.OK {
		rep.LastHash, rep.LastMAC = "", ""
	}
	return rep, nil
}

// anchorProblem compares the log, read whole and sound, with its anchor.
// anchored is line a.Count.
func anchorProblem(rep Report, a anchor, haveAnchor bool, aerr error, anchorPath string, anchored entry, key *verifyKey) (firstBad int, problem string, err error) {
	switch {
	case aerr != nil:
		return 0, aerr.Error(), nil
	case !haveAnchor:
		if rep.Lines > 0 {
			return 0, fmt.Sprintf("the anchor %s is missing: a cut tail or a rewritten log cannot be ruled out", anchorPath), nil
		}
		return 0, "", nil
	case rep.Keyed > 0 && !a.keyed():
		return 0, fmt.Sprintf("the anchor %s is not keyed, but the log is: the anchor was rewritten without the key", anchorPath), nil
	}
	if a.keyed() {
		m, err := key.need(0)
		if err != nil {
			return 0, "", err
		}
		if !m.checkAnchor(a) {
			return 0, fmt.Sprintf("the MAC of the anchor %s does not match: the anchor was rewritten without the key", anchorPath), nil
		}
	}
	switch {
	case a.Count > rep.Lines && rep.Lines == 0:
		return 1, fmt.Sprintf("the log is empty or missing but its anchor records %d lines: the tail was cut", a.Count), nil
	case a.Count > rep.Lines:
		return rep.Lines + 1, fmt.Sprintf("the log ends at line %d but its anchor records %d lines: the tail was cut", rep.Lines, a.Count), nil
	case a.Count == 0:
		if rep.Lines > 0 {
			return 1, fmt.Sprintf("all %d lines are past the anchor, which records none", rep.Lines), nil
		}
	case !strings.EqualFold(hex.EncodeToString(anchored.hash[:]), a.LastHash):
		return a.Count, fmt.Sprintf("line %d does not match the hash its anchor records: the log was rewritten up to there", a.Count), nil
	case a.keyed() && (!anchored.keyed || hex.EncodeToString(anchored.mac[:]) != a.LastMAC):
		return a.Count, fmt.Sprintf("line %d does not carry the MAC its anchor records: the log was rewritten up to there", a.Count), nil
	case a.Count == rep.Lines-1:
		return rep.Lines, fmt.Sprintf("line %d is past the anchor: added outside mnemos, or an append was interrupted", rep.Lines), nil
	case a.Count < rep.Lines:
		return a.Count + 1, fmt.Sprintf("lines %d to %d are past the anchor: added outside mnemos", a.Count+1, rep.Lines), nil
	}
	return 0, "", nil
}

// macProblem explains a keyed line whose chain holds and whose MAC does
// not: one edited line, or, when no keyed line after it holds either, a
// log rewritten (or a key replaced) from there on.
func macProblem(cur entry, rest []entry, keyPath string) (firstBad int, problem string) {
	keyed := 0
	for _, r := range rest {
		if r.bad == "" && r.keyed {
			if r.macOK {
				return cur.n, fmt.Sprintf("line %d was edited: its MAC does not match its content, so it was changed by someone without the key", cur.n)
			}
			keyed++
		}
	}
	if keyed == 0 {
		return cur.n, fmt.Sprintf("line %d was edited: its MAC does not match its content, so it was changed by someone without the key", cur.n)
	}
	return cur.n, fmt.Sprintf("line %d was changed without the key: its MAC does not match, nor does that of any keyed line after it: the log was rewritten from there, or the key %s was replaced", cur.n, keyPath)
}

// verifyKey is the key as Verify finds it: read once, needed only when a
// keyed line or anchor is met.
type verifyKey struct {
	path   string
	m      *macer
	exists bool
	err    error
}

func loadVerifyKey(path string) *verifyKey {
	k := &verifyKey{path: path}
	key, err := readKey(path)
	switch {
	case err == nil:
		k.m, k.exists = newMacer(key), true
	case errors.Is(err, fs.ErrNotExist):
	case errors.Is(err, ErrKey):
		k.exists, k.err = true, err
	default:
		k.exists, k.err = true, fmt.Errorf("%w: %w", ErrKey, err)
	}
	return k
}

// need returns the key's MAC state, for the keyed line numbered line (0
// for the anchor).
func (k *verifyKey) need(line int) (*macer, error) {
	switch {
	case k.m != nil:
		return k.m, nil
	case k.err != nil:
		return nil, k.err
	case line == 0:
		return nil, fmt.Errorf("%w: %s is missing, but the anchor is keyed", ErrKey, k.path)
	}
	return nil, fmt.Errorf("%w: %s is missing, but line %d is keyed", ErrKey, k.path, line)
}

// readEntry reads and parses the next line. line is valid until the next
// read.
func readEntry(lr *lineReader) (e entry, line []byte, err error) {
	line, complete, long, err := lr.next()
	if err != nil {
		return entry{}, nil, err
	}
	e = entry{n: lr.n, hash: hashLine(line)}
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
	return e, line, nil
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
