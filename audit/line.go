package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// emptyHash is the prev of the first line: SHA-256 of the empty string.
const emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func hashLine(line []byte) [32]byte { return sha256.Sum256(line) }

// header is what the chain needs from a line.
type header struct {
	seq  int
	prev [32]byte
	// keyed lines end with a "mac" member: the MAC of the bytes before it
	// (signed of them).
	keyed  bool
	mac    [32]byte
	signed int
}

// macOf splits a keyed line: it ends with ,"mac":"<64 lower-case hex>"}
// and the MAC covers every byte before that member. ok is false for a
// line without one.
func macOf(line []byte) (signed []byte, mac [32]byte, ok bool) {
	n := len(line) - macSuffixLen
	if n < 1 || !bytes.HasPrefix(line[n:], []byte(`,"mac":"`)) || !bytes.HasSuffix(line, []byte(`"}`)) {
		return nil, mac, false
	}
	mac, ok = decodeHex32(line[n+len(`,"mac":"`) : len(line)-2])
	return line[:n], mac, ok
}

// parseHeader checks that line is one JSON object with the fixed keys and
// returns its seq and prev, and its MAC when it is keyed.
func parseHeader(line []byte) (header, error) {
	var h struct {
		Time  *string `json:"time"`
		Level *string `json:"level"`
		Msg   *string `json:"msg"`
		Seq   *int    `json:"seq"`
		Prev  *string `json:"prev"`
	}
	if len(line) == 0 || line[0] != '{' {
		return header{}, errors.New("bad JSON: not an object")
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return header{}, fmt.Errorf("bad JSON: %w", err)
	}
	switch {
	case h.Time == nil:
		return header{}, errors.New(`missing "time"`)
	case h.Level == nil:
		return header{}, errors.New(`missing "level"`)
	case h.Msg == nil || *h.Msg == "":
		return header{}, errors.New(`missing "msg"`)
	case h.Seq == nil:
		return header{}, errors.New(`missing "seq"`)
	case *h.Seq < 1:
		return header{}, fmt.Errorf(`"seq" %d is not positive`, *h.Seq)
	case h.Prev == nil:
		return header{}, errors.New(`missing "prev"`)
	}
	if _, err := time.Parse(time.RFC3339Nano, *h.Time); err != nil {
		return header{}, fmt.Errorf(`bad "time": %w`, err)
	}
	var hd header
	hd.seq = *h.Seq
	if n, err := hex.Decode(hd.prev[:], []byte(*h.Prev)); err != nil || n != 32 || len(*h.Prev) != 64 {
		return header{}, errors.New(`"prev" is not a hex SHA-256`)
	}
	if signed, mac, ok := macOf(line); ok {
		hd.keyed, hd.mac, hd.signed = true, mac, len(signed)
	}
	return hd, nil
}

// lineReader reads a log forward, line by line.
type lineReader struct {
	r   *bufio.Reader
	n   int
	buf []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line without its newline. complete is false for a
// last line with no newline. A line longer than MaxLine is returned cut,
// with long set.
func (lr *lineReader) next() (line []byte, complete, long bool, err error) {
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if len(lr.buf)+len(chunk) <= MaxLine {
			lr.buf = append(lr.buf, chunk...)
		} else {
			long = true
		}
		switch {
		case err == nil:
			lr.n++
			return bytes.TrimSuffix(lr.buf, []byte{'\n'}), true, long, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(lr.buf) == 0 && !long {
				return nil, false, false, io.EOF
			}
			lr.n++
			return lr.buf, false, long, nil
		default:
			return nil, false, false, err
		}
	}
}

// lastLine reads the last line of f, whose size is size, by reading
// backwards from the end. It returns the line without its newline, or nil
// for an empty file.
func lastLine(f *os.File, size int64) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	w := min(size, 4096)
	for {
		buf := make([]byte, w)
		if _, err := f.ReadAt(buf, size-w); err != nil {
			return nil, err
		}
		if buf[len(buf)-1] != '\n' {
			return nil, fmt.Errorf("%w: the last line is incomplete", ErrIntegrity)
		}
		body := buf[:len(buf)-1]
		if i := bytes.LastIndexByte(body, '\n'); i >= 0 {
			return body[i+1:], nil
		}
		if w == size {
			return body, nil
		}
		if w > MaxLine {
			return nil, fmt.Errorf("%w: the last line is longer than %d bytes", ErrIntegrity, MaxLine)
		}
		w = min(size, 2*w)
	}
}

// lastLines returns the last n complete lines of f (all when n <= 0),
// oldest first, reading backwards from the end.
func lastLines(f *os.File, size int64, n int) ([][]byte, error) {
	if size == 0 {
		return nil, nil
	}
	w := min(size, 64<<10)
	if n <= 0 {
		w = size
	}
	for {
		buf := make([]byte, w)
		if _, err := f.ReadAt(buf, size-w); err != nil {
			return nil, err
		}
		if buf[len(buf)-1] != '\n' {
			return nil, fmt.Errorf("%w: the last line is incomplete", ErrIntegrity)
		}
		lines := bytes.Split(buf[:len(buf)-1], []byte{'\n'})
		if w < size {
			lines = lines[1:] // the first piece may be a partial line
		}
		if (n > 0 && len(lines) >= n) || w == size {
			if n > 0 && len(lines) > n {
				lines = lines[len(lines)-n:]
			}
			return lines, nil
		}
		w = min(size, 2*w)
	}
}
