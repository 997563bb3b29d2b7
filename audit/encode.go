package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

const (
	// MaxLine is the longest line Append writes, newline included. An event
	// that would not fit is refused.
	MaxLine = 1 << 20
	// MaxValue is the longest string value written. Longer values (after
	// redaction) are cut at a UTF-8 boundary and marked.
	MaxValue = 64 << 10

	maxDepth = 32
)

// isReserved reports whether k is one of the keys Append writes itself.
func isReserved(k string) bool {
	switch k {
	case "time", "level", "msg", "seq", "prev", "mac":
		return true
	}
	return false
}

// appendHeader writes the fixed head of a line: time, level, msg, seq and
// prev, without the closing brace.
func appendHeader(b []byte, t time.Time, kind string, seq int, prev string) []byte {
	b = append(b, `{"time":"`...)
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":`...)
	b = appendString(b, kind)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, `,"prev":"`...)
	b = append(b, prev...)
	return append(b, '"')
}

// encoder writes attributes as the members of a JSON object, redacting
// every string on the way.
type encoder struct {
	b   []byte
	top *[]string // the keys of the line's own object
}

// encodeBody returns the attributes as ,"k":v members followed by the
// closing brace and the newline.
func encodeBody(attrs []slog.Attr) ([]byte, error) {
	e := encoder{b: make([]byte, 0, 256)}
	keys := []string{"time", "level", "msg", "seq", "prev", "mac"}
	e.top = &keys
	if _, err := e.members(attrs, false, &keys, 0); err != nil {
		return nil, err
	}
	e.b = append(e.b, '}', '\n')
	return e.b, nil
}

// members writes attrs into the current object. first says whether no
// member has been written yet; keys holds the keys already used in this
// object, so that no key appears twice.
func (e *encoder) members(attrs []slog.Attr, first bool, keys *[]string, depth int) (bool, error) {
	if depth > maxDepth {
		return first, errors.New("attributes nested too deeply")
	}
	for _, a := range attrs {
		v := a.Value.Resolve()
		if a.Key == "" {
			if v.Kind() == slog.KindGroup {
				var err error
				if first, err = e.members(v.Group(), first, keys, depth+1); err != nil {
					return first, err
				}
				continue
			}
			if v.Equal(slog.Value{}) {
				continue
			}
			return first, errors.New("attribute with an empty key")
		}
		if v.Kind() == slog.KindGroup && len(v.Group()) == 0 {
			continue // slog drops empty groups
		}
		if slices.Contains(*keys, a.Key) {
			if keys == e.top && isReserved(a.Key) {
				return first, fmt.Errorf("attribute key %q is reserved", a.Key)
			}
			return first, fmt.Errorf("duplicate attribute key %q", a.Key)
		}
		*keys = append(*keys, a.Key)
		if !first {
			e.b = append(e.b, ',')
		}
		first = false
		e.b = appendString(e.b, a.Key)
		e.b = append(e.b, ':')
		if err := e.value(v, secretKey(a.Key), depth+1); err != nil {
			return first, fmt.Errorf("attribute %q: %w", a.Key, err)
		}
	}
	return first, nil
}

func (e *encoder) value(v slog.Value, secret bool, depth int) error {
	if depth > maxDepth {
		return errors.New("attributes nested too deeply")
	}
	switch v.Kind() {
	case slog.KindGroup:
		if secret {
			e.str(Redacted)
			return nil
		}
		e.b = append(e.b, '{')
		var keys []string
		if _, err := e.members(v.Group(), true, &keys, depth); err != nil {
			return err
		}
		e.b = append(e.b, '}')
		return nil
	case slog.KindBool:
		e.b = strconv.AppendBool(e.b, v.Bool())
		return nil
	}
	if secret {
		e.str(Redacted)
		return nil
	}
	switch v.Kind() {
	case slog.KindString:
		e.str(RedactString(v.String()))
	case slog.KindInt64:
		e.b = strconv.AppendInt(e.b, v.Int64(), 10)
	case slog.KindUint64:
		e.b = strconv.AppendUint(e.b, v.Uint64(), 10)
	case slog.KindFloat64:
		e.float(v.Float64())
	case slog.KindDuration:
		e.b = strconv.AppendInt(e.b, int64(v.Duration()), 10)
	case slog.KindTime:
		e.b = append(e.b, '"')
		e.b = v.Time().AppendFormat(e.b, time.RFC3339Nano)
		e.b = append(e.b, '"')
	default:
		return e.any(v.Any(), false, depth)
	}
	return nil
}

// any writes an arbitrary Go value. Common shapes are walked directly;
// anything else goes through encoding/json and is walked as generic JSON,
// so that every string inside it is redacted too.
func (e *encoder) any(x any, secret bool, depth int) error {
	if depth > maxDepth {
		return errors.New("attributes nested too deeply")
	}
	if secret {
		switch x.(type) {
		case nil, bool:
		default:
			e.str(Redacted)
			return nil
		}
	}
	switch t := x.(type) {
	case nil:
		e.b = append(e.b, "null"...)
	case string:
		e.str(RedactString(t))
	case bool:
		e.b = strconv.AppendBool(e.b, t)
	case json.Number:
		e.b = append(e.b, t...)
	case int:
		e.b = strconv.AppendInt(e.b, int64(t), 10)
	case int64:
		e.b = strconv.AppendInt(e.b, t, 10)
	case float64:
		e.float(t)
	case error:
		e.str(RedactString(t.Error()))
	case slog.Value:
		return e.value(t.Resolve(), false, depth)
	case []string:
		e.b = append(e.b, '[')
		for i, s := range RedactArgv(t) {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.str(s)
		}
		e.b = append(e.b, ']')
	case []any:
		e.b = append(e.b, '[')
		var st argvState
		for i, el := range t {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			if s, ok := el.(string); ok {
				e.str(st.next(s))
				continue
			}
			st = argvState{}
			if err := e.any(el, false, depth+1); err != nil {
				return err
			}
		}
		e.b = append(e.b, ']')
	case map[string]string:
		e.b = append(e.b, '{')
		for i, k := range slices.Sorted(maps.Keys(t)) {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = appendString(e.b, RedactString(k))
			e.b = append(e.b, ':')
			if secretKey(k) {
				e.str(Redacted)
			} else {
				e.str(RedactString(t[k]))
			}
		}
		e.b = append(e.b, '}')
	case map[string]any:
		e.b = append(e.b, '{')
		for i, k := range slices.Sorted(maps.Keys(t)) {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = appendString(e.b, RedactString(k))
			e.b = append(e.b, ':')
			if err := e.any(t[k], secretKey(k), depth+1); err != nil {
				return err
			}
		}
		e.b = append(e.b, '}')
	case []byte:
		// Bytes are text here: base64 would hide a secret from redaction.
		e.str(RedactString(string(t)))
	case json.RawMessage:
		return e.generic(t, depth)
	default:
		raw, err := json.Marshal(t)
		if err != nil {
			return err
		}
		return e.generic(raw, depth)
	}
	return nil
}

// generic decodes JSON text into maps, slices and scalars and writes it.
func (e *encoder) generic(raw []byte, depth int) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var g any
	if err := dec.Decode(&g); err != nil {
		return err
	}
	return e.any(g, false, depth+1)
}

// secretKey reports whether a value stored under key k is a secret as a
// whole: a key naming a secret, or an Authorization header.
func secretKey(k string) bool { return isSecretName(k) || isAuthWord(k) }

func (e *encoder) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		e.str(strconv.FormatFloat(f, 'g', -1, 64))
		return
	}
	raw, _ := json.Marshal(f) // cannot fail for a finite float
	e.b = append(e.b, raw...)
}

// str writes a string value, cut to MaxValue.
func (e *encoder) str(s string) {
	if len(s) > MaxValue {
		cut := MaxValue
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…[" + strconv.Itoa(len(s)-cut) + " bytes cut]"
	}
	e.b = appendString(e.b, s)
}

// appendString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD;
// HTML characters are not escaped (as in slog's JSON handler).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
