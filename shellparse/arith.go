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
