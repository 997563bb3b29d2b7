package audit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// HeadWord starts a head's text form.
const HeadWord = "mnemos-audit-head"

// Head is a point of the log to keep outside it: the number of lines and
// the MAC of the last one. The MAC covers that line, whose prev covers the
// line before, and so on: a log that still holds that line with that MAC
// holds the same history up to it. Kept where the log's owner cannot
// write, it shows a log cut back, rewritten, or replaced by an older copy
// with its anchor, which the anchor beside the log cannot.
type Head struct {
	Count int
	MAC   string // 64 lower-case hex digits
}

// String is the head as one line a person can copy:
// "mnemos-audit-head 1234 <hex MAC>".
func (h Head) String() string { return HeadWord + " " + strconv.Itoa(h.Count) + " " + h.MAC }

// ParseHead reads a head written by Head.String; the leading word may be
// left out. Anything else is an error: a head is compared exactly.
func ParseHead(s string) (Head, error) {
	f := strings.Fields(s)
	if len(f) == 3 && f[0] == HeadWord {
		f = f[1:]
	}
	if len(f) != 2 {
		return Head{}, fmt.Errorf("bad head %q: want %s COUNT MAC", s, HeadWord)
	}
	n, err := parseCount(f[0])
	if err != nil {
		return Head{}, fmt.Errorf("bad head %q: %w", s, err)
	}
	if _, ok := decodeHex32(f[1]); !ok {
		return Head{}, fmt.Errorf("bad head %q: the MAC is not 64 lower-case hex digits", s)
	}
	return Head{Count: n, MAC: f[1]}, nil
}

// parseCount reads a line count: digits only, no leading zero, at least 1.
func parseCount(s string) (int, error) {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, errors.New("the count is not a number")
		}
	}
	if s == "" || s[0] == '0' {
		return 0, errors.New("the count is not a positive number")
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, errors.New("the count is too large")
	}
	return n, nil
}
