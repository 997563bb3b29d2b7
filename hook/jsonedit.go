package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// An agent's settings file is edited as a tree that keeps its keys in the
// order the file has them, so that adding mnemos's hook leaves every other
// setting where the person put it. Values are kept as written (numbers are
// not turned into floats); only the whitespace is rewritten, with the
// file's own indentation.

// jnode is a JSON value: an object (keys and vals), an array (vals) or a
// scalar (raw).
type jnode struct {
	kind byte // '{', '[' or 0 for a scalar
	keys []string
	vals []*jnode
	raw  []byte
}

// ConfigError is a settings file mnemos cannot edit: it does not parse,
// or a setting mnemos must change has an unexpected type.
type ConfigError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *ConfigError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// parseTree reads a JSON document; an empty file is an empty object.
func parseTree(file string, b []byte) (*jnode, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return &jnode{kind: '{'}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := readValue(dec)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("text after the JSON document")
		}
	}
	if err != nil {
		off := int(dec.InputOffset())
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Offset counts the bytes read, the offending one included.
			off = int(se.Offset) - 1
		}
		line, col := position(b, off)
		msg := err.Error()
		if bytes.Contains(b, []byte("//")) || bytes.Contains(b, []byte("/*")) {
			msg += " (comments are not JSON; mnemos edits only plain JSON files)"
		}
		return nil, &ConfigError{File: file, Line: line, Col: col, Msg: msg}
	}
	return n, nil
}

func readValue(dec *json.Decoder) (*jnode, error) {
	t, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch v := t.(type) {
	case json.Delim:
		switch v {
		case '{':
			n := &jnode{kind: '{'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				val, err := readValue(dec)
				if err != nil {
					return nil, err
				}
				n.keys, n.vals = append(n.keys, k), append(n.vals, val)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		case '[':
			n := &jnode{kind: '['}
			for dec.More() {
				val, err := readValue(dec)
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, val)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		}
		return nil, fmt.Errorf("unexpected %v", v)
	case json.Number:
		return &jnode{raw: []byte(v.String())}, nil
	default:
		return scalar(v), nil
	}
}

// scalar builds a node from a Go value (string, bool, nil, number).
func scalar(v any) *jnode {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return &jnode{raw: bytes.TrimRight(b.Bytes(), "\n")}
}

// obj builds an object from key/value pairs (values are *jnode or Go
// scalars).
func obj(kv ...any) *jnode {
	n := &jnode{kind: '{'}
	for i := 0; i+1 < len(kv); i += 2 {
		n.set(kv[i].(string), toNode(kv[i+1]))
	}
	return n
}

func arr(vs ...any) *jnode {
	n := &jnode{kind: '['}
	for _, v := range vs {
		n.vals = append(n.vals, toNode(v))
	}
	return n
}

func toNode(v any) *jnode {
	if n, ok := v.(*jnode); ok {
		return n
	}
	return scalar(v)
}

// get returns the value of key in an object, or nil.
func (n *jnode) get(key string) *jnode {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == key {
			return n.vals[i]
		}
	}
	return nil
}

// set replaces key's value, or appends key.
func (n *jnode) set(key string, v *jnode) {
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == key {
			n.vals[i] = v
			return
		}
	}
	n.keys, n.vals = append(n.keys, key), append(n.vals, v)
}

// del removes key.
func (n *jnode) del(key string) {
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == key {
			n.keys = append(n.keys[:i], n.keys[i+1:]...)
			n.vals = append(n.vals[:i], n.vals[i+1:]...)
		}
	}
}

// text is a scalar string's value ("" for anything else).
func (n *jnode) text() string {
	if n == nil || n.kind != 0 {
		return ""
	}
	var s string
	if json.Unmarshal(n.raw, &s) != nil {
		return ""
	}
	return s
}

// child returns key's object or array, creating it; a value of another
// kind is an error naming the path.
func (n *jnode) child(file, path, key string, kind byte) (*jnode, error) {
	c := n.get(key)
	if c == nil {
		c = &jnode{kind: kind}
		n.set(key, c)
		return c, nil
	}
	if c.kind != kind {
		want := "an object"
		if kind == '[' {
			want = "a list"
		}
		return nil, &ConfigError{File: file, Msg: fmt.Sprintf("%s is not %s; mnemos leaves a file it does not understand alone", path, want)}
	}
	return c, nil
}

// encode writes the tree with indent per level and a final newline.
func (n *jnode) encode(indent string) []byte {
	var b bytes.Buffer
	n.write(&b, indent, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func (n *jnode) write(b *bytes.Buffer, indent string, depth int) {
	pad := func(d int) {
		b.WriteByte('\n')
		for range d {
			b.WriteString(indent)
		}
	}
	switch n.kind {
	case '{':
		if len(n.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			pad(depth + 1)
			b.Write(scalar(k).raw)
			b.WriteString(": ")
			n.vals[i].write(b, indent, depth+1)
		}
		pad(depth)
		b.WriteByte('}')
	case '[':
		if len(n.vals) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			pad(depth + 1)
			v.write(b, indent, depth+1)
		}
		pad(depth)
		b.WriteByte(']')
	default:
		b.Write(n.raw)
	}
}

// indentOf guesses the file's indentation from its first indented line;
// two spaces when it has none.
func indentOf(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		t := strings.TrimLeft(line, " \t")
		if t == "" || len(t) == len(line) {
			continue
		}
		ws := line[:len(line)-len(t)]
		if strings.HasPrefix(ws, "\t") {
			return "\t"
		}
		return ws
	}
	return "  "
}
