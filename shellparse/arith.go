package shellparse

import (
	"regexp"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// maxArithDepth bounds the recursive evaluation of variable values as
// arithmetic expressions.
const maxArithDepth = 16

// arith evaluates an arithmetic expression where every operand is known.
// Assignments are never evaluated: their result is reported unknown.
func (w *walker) arith(st *state, x syntax.ArithmExpr, depth int) (int64, bool) {
	if depth > maxArithDepth {
		return 0, false
	}
	switch x := x.(type) {
	case *syntax.Word:
		if s, ok := simpleLit(x); ok {
			return w.arithOperand(st, s, depth)
		}
		f := w.literal(st, x, false)
		if f.dyn {
			return 0, false
		}
		return w.arithString(st, f.val, depth+1)
	case *syntax.ParenArithm:
		return w.arith(st, x.X, depth+1)
	case *syntax.UnaryArithm:
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			return 0, false
		}
		n, ok := w.arith(st, x.X, depth+1)
		if !ok {
			return 0, false
		}
		switch x.Op {
		case syntax.Not:
			return int64(boolInt(n == 0)), true
		case syntax.BitNegation:
			return ^n, true
		case syntax.Plus:
			return n, true
		case syntax.Minus:
			return -n, true
		}
		return 0, false
	case *syntax.BinaryArithm:
		return w.binArith(st, x, depth)
	}
	return 0, false
}

func (w *walker) binArith(st *state, x *syntax.BinaryArithm, depth int) (int64, bool) {
	if isArithAssign(x.Op) {
		return 0, false
	}
	if x.Op == syntax.TernQuest {
		c, ok := w.arith(st, x.X, depth+1)
		colon, isColon := x.Y.(*syntax.BinaryArithm)
		if !ok || !isColon || colon.Op != syntax.TernColon {
			return 0, false
		}
		if c != 0 {
			return w.arith(st, colon.X, depth+1)
		}
		return w.arith(st, colon.Y, depth+1)
	}
	a, ok := w.arith(st, x.X, depth+1)
	if !ok {
		return 0, false
	}
	b, ok := w.arith(st, x.Y, depth+1)
	if !ok {
		return 0, false
	}
	switch x.Op {
	case syntax.Add:
		return a + b, true
	case syntax.Sub:
		return a - b, true
	case syntax.Mul:
		return a * b, true
	case syntax.Quo:
		if b == 0 {
			return 0, false
		}
		return a / b, true
	case syntax.Rem:
		if b == 0 {
			return 0, false
		}
		return a % b, true
	case syntax.Pow:
		if b < 0 || b > 64 {
			return 0, false
		}
		r := int64(1)
		for range b {
			r *= a
		}
		return r, true
	case syntax.Eql:
		return int64(boolInt(a == b)), true
	case syntax.Neq:
		return int64(boolInt(a != b)), true
	case syntax.Lss:
		return int64(boolInt(a < b)), true
	case syntax.Leq:
		return int64(boolInt(a <= b)), true
	case syntax.Gtr:
		return int64(boolInt(a > b)), true
	case syntax.Geq:
		return int64(boolInt(a >= b)), true
	case syntax.And:
		return a & b, true
	case syntax.Or:
		return a | b, true
	case syntax.Xor:
		return a ^ b, true
	case syntax.Shl:
		return a << (uint64(b) & 63), true
	case syntax.Shr:
		return a >> (uint64(b) & 63), true
	case syntax.AndArit:
		return int64(boolInt(a != 0 && b != 0)), true
	case syntax.OrArit:
		return int64(boolInt(a != 0 || b != 0)), true
	case syntax.Comma:
		return b, true
	}
	return 0, false
}

func isArithAssign(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn,
		syntax.QuoAssgn, syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn,
		syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn:
		return true
	}
	return false
}

// arithOperand evaluates a literal operand: a number or a variable name.
func (w *walker) arithOperand(st *state, s string, depth int) (int64, bool) {
	if n, ok := parseArithNumber(s); ok {
		return n, true
	}
	if !validName(s) {
		return 0, false
	}
	v := st.lookup(s)
	if !v.known {
		return 0, false
	}
	if !v.set || v.str == "" {
		return 0, true
	}
	return w.arithString(st, v.str, depth+1)
}

// arithString evaluates text as an arithmetic expression, as the shell
// does with variable values met in arithmetic.
func (w *walker) arithString(st *state, s string, depth int) (int64, bool) {
	if n, ok := parseArithNumber(strings.TrimSpace(s)); ok {
		return n, true
	}
	if depth > maxArithDepth {
		return 0, false
	}
	x, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Arithmetic(strings.NewReader(s))
	if err != nil || x == nil {
		return 0, false
	}
	return w.arith(st, x, depth+1)
}

// parseArithNumber parses a shell integer constant: decimal, 0x hex,
// leading-zero octal, or BASE#digits.
func parseArithNumber(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	if c := s[0]; c < '0' || c > '9' {
		return 0, false
	}
	if base, digits, ok := strings.Cut(s, "#"); ok {
		b, err := strconv.Atoi(base)
		if err != nil || b < 2 || b > 64 || digits == "" {
			return 0, false
		}
		var n int64
		for _, c := range digits {
			var d int
			switch {
			case c >= '0' && c <= '9':
				d = int(c - '0')
			case c >= 'a' && c <= 'z':
				d = int(c-'a') + 10
			case c >= 'A' && c <= 'Z':
				d = int(c - 'A')
				if b <= 36 {
					d += 10
				} else {
					d += 36
				}
			case c == '@':
				d = 62
			case c == '_':
				d = 63
			default:
				return 0, false
			}
			if d >= b {
				return 0, false
			}
			n = n*int64(b) + int64(d)
		}
		return n, true
	}
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		// ParseInt accepts 0o and 0b and underscores, which the shell
		// does not; anything else it refuses the shell refuses too.
		return 0, false
	}
	if strings.ContainsAny(s, "_oObB") {
		return 0, false
	}
	return n, true
}

// removePattern removes the shortest or longest match of a shell pattern
// at the start or the end of s.
func removePattern(s, pat string, suffix, shortest bool) (string, bool) {
	var mode pattern.Mode
	if shortest {
		mode |= pattern.Shortest
	}
	expr, err := pattern.Regexp(pat, mode)
	if err != nil {
		return "", false
	}
	switch {
	case suffix && shortest:
		expr = ".*(" + expr + ")$"
	case suffix:
		expr = "(" + expr + ")$"
	default:
		expr = "^(" + expr + ")"
	}
	rx, err := regexp.Compile(expr)
	if err != nil {
		return "", false
	}
	if loc := rx.FindStringSubmatchIndex(s); loc != nil {
		s = s[:loc[2]] + s[loc[3]:]
	}
	return s, true
}

// replacePattern implements ${x/pat/with} and ${x//pat/with}, with the
// # and % anchors.
func replacePattern(s, pat, with string, all bool) (string, bool) {
	anchor := ""
	if strings.HasPrefix(pat, "#") || strings.HasPrefix(pat, "%") {
		anchor, pat = pat[:1], pat[1:]
	}
	expr, err := pattern.Regexp(pat, 0)
	if err != nil {
		return "", false
	}
	switch anchor {
	case "#":
		expr = "^(?:" + expr + ")"
	case "%":
		expr = "(?:" + expr + ")$"
	}
	rx, err := regexp.Compile(expr)
	if err != nil {
		return "", false
	}
	n := 1
	if all && anchor == "" {
		n = -1
	}
	var b strings.Builder
	last := 0
	for _, loc := range rx.FindAllStringIndex(s, n) {
		b.WriteString(s[last:loc[0]])
		b.WriteString(with)
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// intText reports text that, evaluated as arithmetic, is an integer
// constant (or empty, which is 0): it names no variable.
func intText(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return true
	}
	if s[0] == '-' || s[0] == '+' {
		s = strings.TrimSpace(s[1:])
	}
	_, ok := parseArithNumber(s)
	return ok
}

// numericSpecial lists the variables bash itself keeps as integers.
func numericSpecial(name string) bool {
	switch name {
	case "RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "EPOCHSECONDS", "EPOCHREALTIME",
		"UID", "EUID", "PPID", "HISTCMD":
		return true
	}
	return false
}

// numericName reports a variable whose value, in arithmetic, is an
// integer: known to be one, or kept as one by bash.
func numericName(st *state, name string) bool {
	if numericValue(st.lookup(name)) {
		return true
	}
	return numericSpecial(name) && !st.assignedHere(name)
}

// numericParam reports a parameter expansion whose value is only known at
// run time but is an integer: $#, $?, $$, $!, ${#x}, a variable holding
// an integer, an element of an array of integers, ${x:-N} of those.
func (w *walker) numericParam(st *state, pe *syntax.ParamExp) bool {
	if pe.Param == nil || pe.NestedParam != nil || pe.Flags != nil || len(pe.Modifiers) > 0 {
		return false
	}
	if pe.Excl {
		// ${!a[@]}: the indexes of an indexed array are integers.
		idx, ok := pe.Index.(*syntax.Word)
		return ok && (idx.Lit() == "@" || idx.Lit() == "*") && pe.Exp == nil && pe.Slice == nil &&
			validName(pe.Param.Value) && !st.lookup(pe.Param.Value).assoc && !st.opaque && !st.namerefs
	}
	if pe.Length {
		return pe.Slice == nil && pe.Repl == nil && pe.Exp == nil
	}
	if pe.Slice != nil || pe.Repl != nil || pe.Width || pe.IsSet {
		return false
	}
	name := pe.Param.Value
	base := false
	switch {
	case name == "#" || name == "?" || name == "$" || name == "!":
		base = pe.Index == nil
	case name == "@" || name == "*":
		base = st.posKnown && allNum(st.pos)
	case positional(name):
		n, _ := strconv.Atoi(name)
		base = st.posKnown && (n > len(st.pos) || allNum(st.pos[n-1:n]))
	case validName(name):
		if pe.Index != nil && st.lookup(name).assoc {
			return false
		}
		base = numericName(st, name)
	}
	if !base || pe.Exp == nil {
		return base
	}
	switch pe.Exp.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
		// ${n:-0}; a default that is itself an expansion is not
		// followed (each would evaluate the rest again).
		if pe.Exp.Word == nil {
			return true
		}
		s, ok := simpleLit(pe.Exp.Word)
		return ok && intText(s)
	}
	return false
}

func allNum(fs []field) bool {
	for _, f := range fs {
		if f.dyn && !f.num || !f.dyn && !intText(f.val) {
			return false
		}
	}
	return true
}

// numericSubst reports a command substitution whose output is integers
// whatever it reads: $(wc -l < f), $(… | wc -l), $(seq 1 9), $(nproc),
// $(id -u), $(date +%s), $(grep -c x f), $(stat -c %s f), $(tput cols).
// A function or alias of the script by that name may print anything.
func (w *walker) numericSubst(st *state, cs *syntax.CmdSubst) bool {
	if len(cs.Stmts) != 1 {
		return false
	}
	stmt := cs.Stmts[0]
	for {
		b, ok := stmt.Cmd.(*syntax.BinaryCmd)
		if !ok || b.Op != syntax.Pipe {
			break
		}
		stmt = b.Y
	}
	call, ok := stmt.Cmd.(*syntax.CallExpr)
	if !ok || stmt.Background || stmt.Coprocess || len(call.Args) == 0 {
		return false
	}
	name, ok := simpleLit(call.Args[0])
	if !ok || st.opaque || !numericTool(name) {
		return false
	}
	if _, ok := st.funcs[name]; ok {
		return false
	}
	if _, ok := st.aliases[name]; ok {
		return false
	}
	args := make([]string, 0, len(call.Args)-1)
	for _, a := range call.Args[1:] {
		s, ok := simpleLit(a)
		if !ok {
			switch f := w.literal(st, a, false); {
			case !f.dyn:
				s = f.val
			case f.num:
				s = "0"
			case name == "stat":
				// stat -c %s prints no file name: any files will do.
				s = "<file>"
			default:
				return false
			}
		}
		args = append(args, s)
	}
	return numericOutput(name, args)
}

// numericTool reports the programs numericOutput knows.
func numericTool(name string) bool {
	switch name {
	case "wc", "seq", "nproc", "id", "date", "stat", "grep", "egrep", "fgrep", "tput", "getconf":
		return true
	}
	return false
}

// numericOutput reports a command line whose output is only integers.
func numericOutput(name string, args []string) bool {
	switch name {
	case "wc":
		// Counts of standard input: no file name is printed.
		for _, a := range args {
			switch {
			case a == "--lines" || a == "--bytes" || a == "--chars" || a == "--words" || a == "--max-line-length":
			case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Trim(a[1:], "lcmwL") == "":
			default:
				return false
			}
		}
		return true
	case "seq":
		for _, a := range args {
			if a != "-w" && a != "--equal-width" && !intText(a) {
				return false
			}
		}
		return len(args) > 0
	case "nproc":
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				return false
			}
		}
		return true
	case "id":
		ug := false
		for i, a := range args {
			switch {
			case a == "--user" || a == "--group" || a == "--real":
				ug = ug || a != "--real"
			case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Trim(a[1:], "ugr") == "":
				ug = ug || strings.ContainsAny(a, "ug")
			case i == len(args)-1 && !strings.HasPrefix(a, "-"):
				// The user asked about.
			default:
				return false
			}
		}
		return ug
	case "date":
		for _, a := range args {
			switch {
			case a == "-u" || a == "--utc":
			case strings.HasPrefix(a, "+"):
				if !numericFormat(a[1:], "sYmdHMSjNuwyCGgVUWeIklq") {
					return false
				}
			default:
				return false
			}
		}
		return len(args) > 0
	case "stat":
		format := false
		files := 0
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "-c" || a == "--format" || a == "--printf":
				if i+1 >= len(args) || !numericFormat(args[i+1], "sbBhiugXYZWoda") {
					return false
				}
				format = true
				i++
			case strings.HasPrefix(a, "--format=") || strings.HasPrefix(a, "--printf="):
				_, f, _ := strings.Cut(a, "=")
				if !numericFormat(f, "sbBhiugXYZWoda") {
					return false
				}
				format = true
			case a == "-L" || a == "--dereference":
			case strings.HasPrefix(a, "-"):
				return false
			default:
				files++
			}
		}
		return format && files > 0
	case "grep", "egrep", "fgrep":
		count, patternGiven, operands := false, false, 0
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "--":
				operands += len(args) - i - 1
				i = len(args)
			case a == "--count":
				count = true
			case a == "--with-filename" || a == "--recursive" || a == "--dereference-recursive" ||
				strings.HasPrefix(a, "--files-with") || strings.HasPrefix(a, "--files-without"):
				return false
			case strings.HasPrefix(a, "--regexp") || strings.HasPrefix(a, "--file"):
				patternGiven = true
				if !strings.Contains(a, "=") {
					i++
				}
			case strings.HasPrefix(a, "--"):
				if a == "--max-count" || a == "--context" || a == "--after-context" || a == "--before-context" ||
					a == "--devices" || a == "--directories" || a == "--label" || a == "--include" || a == "--exclude" {
					i++
				}
			case len(a) > 1 && a[0] == '-':
				for j := 1; j < len(a); j++ {
					c := a[j]
					if strings.IndexByte("HrRlLZ", c) >= 0 {
						return false
					}
					if c == 'c' {
						count = true
					}
					if strings.IndexByte("efmABCdD", c) >= 0 {
						patternGiven = patternGiven || c == 'e' || c == 'f'
						if j == len(a)-1 {
							i++
						}
						break
					}
				}
			default:
				operands++
			}
		}
		files := operands
		if !patternGiven {
			files--
		}
		return count && files <= 1
	case "tput":
		return len(args) == 1 && (args[0] == "cols" || args[0] == "lines" || args[0] == "colors")
	case "getconf":
		if len(args) != 1 {
			return false
		}
		switch args[0] {
		case "_NPROCESSORS_ONLN", "_NPROCESSORS_CONF", "PAGE_SIZE", "PAGESIZE", "LONG_BIT", "ARG_MAX",
			"CLK_TCK", "OPEN_MAX":
			return true
		}
	}
	return false
}

// numericFormat reports a date or stat format whose directives (from
// codes) all print digits and whose other characters name nothing.
func numericFormat(f, codes string) bool {
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c == '%' {
			i++
			if i >= len(f) || strings.IndexByte(codes, f[i]) < 0 && f[i] != '%' {
				return false
			}
			continue
		}
		if !strings.ContainsRune("0123456789 \t\n+-*/.:,", rune(c)) {
			return false
		}
	}
	return true
}
