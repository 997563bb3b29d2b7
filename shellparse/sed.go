package shellparse

import (
	"strings"
)

// sed scripts can run commands: the e command runs its argument (or, bare,
// the pattern space) with sh -c, and the s command's e flag runs the
// result of the substitution. runSed emits sed itself, with a note for
// what cannot be followed, and each static e command as a shell script of
// its own.

// sedProgram is what a sed script does beyond editing text.
type sedProgram struct {
	commands []string // arguments of e commands, to be run with sh -c
	// notes say what runs or is opened that the parser cannot follow.
	notes []string
}

// runSed handles sed and gsed.
func (w *walker) runSed(inv *invocation) {
	args := inv.args
	var scripts []field
	var prog sedProgram
	sandbox := false
	operands := 0
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a.dyn && !strings.HasPrefix(a.val, "-") {
			if len(scripts) == 0 && operands == 0 {
				scripts = append(scripts, a)
			}
			operands++
			continue
		}
		s := a.val
		switch {
		case s == "--":
			if len(scripts) == 0 && i+1 < len(args) {
				scripts = append(scripts, args[i+1])
			}
			i = len(args)
		case s == "--sandbox":
			sandbox = true
		case s == "-e" || s == "--expression" || s == "-f" || s == "--file" || s == "-l" || s == "--line-length":
			if i+1 < len(args) {
				i++
				w.sedOption(s, args[i], &scripts, &prog)
			}
		case strings.HasPrefix(s, "--expression="), strings.HasPrefix(s, "--file="):
			name, v, _ := strings.Cut(s, "=")
			w.sedOption(name, field{val: v, dyn: a.dyn, tmpl: strings.TrimPrefix(a.text(), name+"=")}, &scripts, &prog)
		case strings.HasPrefix(s, "--"):
		case len(s) > 1 && s[0] == '-':
			// A cluster of short flags; e, f and l take the rest or the
			// next word.
			for k := 1; k < len(s); k++ {
				c := s[k]
				if c == 'i' {
					break // -i[SUFFIX]
				}
				if c != 'e' && c != 'f' && c != 'l' {
					continue
				}
				var v field
				switch {
				case k+1 < len(s):
					v = lit(s[k+1:])
				case i+1 < len(args):
					i++
					v = args[i]
				default:
					continue
				}
				w.sedOption("-"+string(c), v, &scripts, &prog)
				break
			}
		default:
			if len(scripts) == 0 && operands == 0 {
				scripts = append(scripts, a)
			}
			operands++
		}
	}
	for _, sc := range scripts {
		text := sc.val
		if sc.dyn {
			var fromCommand bool
			text, fromCommand = w.sedTemplate(sc.tmpl)
			if fromCommand {
				prog.notes = append(prog.notes, "sed script holds the output of a command, which may add commands")
			}
		}
		scanSed(text, &prog)
	}
	if sandbox {
		prog = sedProgram{notes: prog.notes[:0:0]}
	}
	w.emitInv(inv, false, dedupeStrings(prog.notes)...)
	for _, c := range prog.commands {
		sub := inv.sub([]field{lit("sh"), lit("-c"), w.sedField(c)}, Wrapper{Name: "sed e", Argv: fieldValues(args)})
		n := w.pushCtx("sed e")
		w.run(sub)
		w.popCtx(n)
	}
}

// sedOption records the value of -e, -f or -l.
func (w *walker) sedOption(name string, v field, scripts *[]field, prog *sedProgram) {
	switch name {
	case "-e", "--expression":
		*scripts = append(*scripts, v)
	case "-f", "--file":
		what := v.val
		if what == "-" {
			what = "stdin"
		}
		prog.notes = append(prog.notes, "sed script from "+what+" is not followed")
	}
}

// sedTemplate turns the template of a partly dynamic sed script into text
// to scan, each run-time part standing as a plain word; it also reports
// whether a part is the output of a command.
func (w *walker) sedTemplate(tmpl string) (string, bool) {
	fromCommand := false
	var b strings.Builder
	s := tmpl
	for {
		i := strings.Index(s, markerPrefix)
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		rest := s[i+len(markerPrefix):]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if n, ok := atoiMarker(rest[:j]); ok && n < len(w.markers) && strings.HasPrefix(rest[j:], "__") {
			src := w.markers[n]
			fromCommand = fromCommand || strings.Contains(src, "$(") || strings.Contains(src, "`") ||
				strings.Contains(src, "<(") || strings.Contains(src, stdinArg)
			b.WriteString("X")
			s = rest[j+2:]
			continue
		}
		b.WriteString(markerPrefix)
		s = rest
	}
	return b.String(), fromCommand
}

func atoiMarker(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// sedField is the field for an e command's text: dynamic when it holds a
// marker of a run-time part.
func (w *walker) sedField(s string) field {
	if strings.Contains(s, markerPrefix) {
		v, _ := w.unmark(s)
		return field{val: v, dyn: true, tmpl: s}
	}
	return lit(s)
}

// scanSed reads a sed script (GNU syntax) and records its e commands and
// what it cannot follow. A script it does not understand is noted: sed
// may then be running anything.
func scanSed(s string, prog *sedProgram) {
	p := sedScanner{s: s}
	for {
		p.skip(" \t\n;")
		if p.eof() {
			return
		}
		if !p.address() {
			prog.notes = append(prog.notes, "sed script is not understood")
			return
		}
		p.skip(" \t")
		for p.peek() == '!' {
			p.i++
			p.skip(" \t")
		}
		if p.eof() {
			prog.notes = append(prog.notes, "sed script is not understood")
			return
		}
		c := p.next()
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'q', 'Q', 'L':
			p.skip(" \t")
			for !p.eof() && p.peek() >= '0' && p.peek() <= '9' {
				p.i++
			}
		case '#':
			p.toLineEnd()
		case ':':
			p.skip(" \t")
			p.until(";\n")
		case 'b', 't', 'T', 'v':
			p.skip(" \t")
			p.until(";\n")
		case 'a', 'i', 'c':
			p.text()
		case 'r', 'R', 'w', 'W':
			p.skip(" \t")
			p.toLineEnd()
		case 'e':
			p.skip(" \t")
			cmd := p.toLineEnd()
			if strings.TrimSpace(cmd) == "" {
				prog.notes = append(prog.notes, "sed runs lines of its input as commands (e)")
			} else {
				prog.commands = append(prog.commands, cmd)
			}
		case 's':
			if !p.substitute(prog) {
				prog.notes = append(prog.notes, "sed script is not understood")
				return
			}
		case 'y':
			if !p.delimited(2) {
				prog.notes = append(prog.notes, "sed script is not understood")
				return
			}
		default:
			prog.notes = append(prog.notes, "sed script is not understood")
			return
		}
	}
}

type sedScanner struct {
	s string
	i int
}

func (p *sedScanner) eof() bool { return p.i >= len(p.s) }

func (p *sedScanner) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}

func (p *sedScanner) next() byte {
	c := p.peek()
	p.i++
	return c
}

func (p *sedScanner) skip(set string) {
	for !p.eof() && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *sedScanner) until(set string) string {
	start := p.i
	for !p.eof() && strings.IndexByte(set, p.s[p.i]) < 0 {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *sedScanner) toLineEnd() string { return p.until("\n") }

// text skips the text of a, i and c: the rest of the line, with lines
// joined by a trailing backslash ("a\" starts the text on the next line).
func (p *sedScanner) text() {
	for !p.eof() {
		c := p.next()
		if c == '\\' {
			p.i++ // the escaped character, a newline included
			continue
		}
		if c == '\n' {
			return
		}
	}
}

// address skips an optional address or address range.
func (p *sedScanner) address() bool {
	if !p.oneAddress(false) {
		return false
	}
	p.skip(" \t")
	if p.peek() == ',' {
		p.i++
		p.skip(" \t")
		return p.oneAddress(true)
	}
	return true
}

func (p *sedScanner) oneAddress(second bool) bool {
	switch c := p.peek(); {
	case c >= '0' && c <= '9', second && (c == '+' || c == '~'):
		p.i++
		for !p.eof() && (p.peek() >= '0' && p.peek() <= '9' || p.peek() == '~') {
			p.i++
		}
	case c == '$':
		p.i++
	case c == '/' || c == '\\':
		if c == '\\' {
			p.i++
		}
		if p.eof() || p.peek() == '\n' {
			return false
		}
		if !p.delimited(1) {
			return false
		}
		for p.peek() == 'I' || p.peek() == 'M' {
			p.i++
		}
	}
	return true
}

// delimited reads a delimiter and n parts ending with it (backslash
// escapes the delimiter); it reports false when the script ends first.
func (p *sedScanner) delimited(n int) bool {
	if p.eof() {
		return false
	}
	d := p.next()
	if d == '\n' || d == '\\' {
		return false
	}
	for k := 0; k < n; k++ {
		for {
			if p.eof() {
				return false
			}
			c := p.next()
			if c == '\\' {
				p.i++
				continue
			}
			if c == '[' && d != '[' {
				// A bracket expression may hold the delimiter.
				p.bracket()
				continue
			}
			if c == d {
				break
			}
		}
	}
	return true
}

// bracket skips the rest of a bracket expression ("[/]" holds a slash);
// an unclosed one ends the scan at the end of the line.
func (p *sedScanner) bracket() {
	start := p.i
	if p.peek() == '^' {
		p.i++
	}
	if p.peek() == ']' {
		p.i++
	}
	for !p.eof() {
		c := p.next()
		switch c {
		case ']':
			return
		case '\n':
			p.i = start
			return
		case '[':
			if k := strings.IndexByte(":.=", p.peek()); k >= 0 {
				end := strings.Index(p.s[p.i+1:], string(":.="[k])+"]")
				if end >= 0 {
					p.i += end + 3
				}
			}
		}
	}
	p.i = start
}

// substitute reads the rest of an s command and its flags.
func (p *sedScanner) substitute(prog *sedProgram) bool {
	if !p.delimited(2) {
		return false
	}
	for !p.eof() {
		switch c := p.peek(); {
		case c == 'g' || c == 'p' || c == 'i' || c == 'I' || c == 'm' || c == 'M' || c >= '0' && c <= '9':
			p.i++
		case c == 'e':
			p.i++
			prog.notes = append(prog.notes, "sed runs the result of a substitution as a command (s///e)")
		case c == 'w':
			p.i++
			p.skip(" \t")
			p.toLineEnd()
			return true
		case c == ';' || c == '\n' || c == ' ' || c == '\t' || c == '}' || c == '#':
			return true
		default:
			return false
		}
	}
	return true
}

func dedupeStrings(in []string) []string {
	var out []string
	for _, s := range in {
		dup := false
		for _, o := range out {
			dup = dup || o == s
		}
		if !dup {
			out = append(out, s)
		}
	}
	return out
}
