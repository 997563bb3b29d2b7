package gate

import (
	"path"
	"strconv"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// What find -delete removes: its expression read when it uses only the
// tests that name what they select (-name, -iname, -path, -ipath,
// -wholename, -iwholename, -type, -empty, -true, -false), -prune, the
// options that bound the walk (-maxdepth, -mindepth, -depth, -xdev ...),
// the actions that print, and the operators (! -not, -a -and, -o -or,
// parentheses, the comma). find . -name '*.md' -delete removes the files
// named *.md, not everything below "."; an expression with anything else
// (-newer, -size, -regex, -exec ...) cannot be read here, and a deletion
// by it counts everything below its starting points.

// findExpr is a find command line read for what its -delete removes.
type findExpr struct {
	// roots are the starting points, as written ("." when none).
	roots []string
	root  *findNode
	// minDepth and maxDepth bound the entries tested (maxDepth < 0: no
	// bound).
	minDepth, maxDepth int
	// deletes says the expression holds -delete.
	deletes bool
}

// findNode is one node of a find expression.
type findNode struct {
	// op is 'a' (and), 'o' (or), ',' (both, the right's value), '!'
	// (not, of l) or 'p' (a primary).
	op   byte
	l, r *findNode
	// prim is the primary ("-name", "-delete" ...) and arg its argument.
	prim, arg string
}

// findEntry is what find tests of one path it meets.
type findEntry struct {
	// path is the path as find prints it (the starting point, then "/"
	// and the names below it); name its last element.
	path, name string
	// typ is find's letter for the file's type (f, d, l, p, s, b, c).
	typ byte
	// empty says an empty regular file or a directory with nothing in it.
	empty func() bool
}

// parseFind reads argv (find and its arguments) for what -delete removes;
// false when it holds anything not read here, or a word not known before
// it runs.
func parseFind(argv []shellparse.Word) (*findExpr, bool) {
	e := &findExpr{maxDepth: -1}
	args := argv[1:]
	for _, w := range args {
		if w.Dynamic {
			return nil, false
		}
	}
	i := 0
	for ; i < len(args); i++ {
		v := args[i].Value
		if v == "-H" || v == "-P" || strings.HasPrefix(v, "-O") {
			continue
		}
		if v == "-D" {
			i++
			continue
		}
		if v == "-L" {
			// Symbolic links followed: not counted here.
			return nil, false
		}
		break
	}
	for ; i < len(args); i++ {
		v := args[i].Value
		if strings.HasPrefix(v, "-") || v == "(" || v == "!" || v == "," {
			break
		}
		e.roots = append(e.roots, v)
	}
	if len(e.roots) == 0 {
		e.roots = []string{"."}
	}
	p := findParser{toks: make([]string, 0, len(args)-i), e: e}
	for _, w := range args[i:] {
		p.toks = append(p.toks, w.Value)
	}
	if len(p.toks) == 0 {
		e.root = &findNode{op: 'p', prim: "-print"}
		return e, true
	}
	n, ok := p.comma()
	if !ok || p.i != len(p.toks) {
		return nil, false
	}
	e.root = n
	return e, true
}

type findParser struct {
	toks []string
	i    int
	e    *findExpr
}

func (p *findParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *findParser) comma() (*findNode, bool) {
	l, ok := p.or()
	for ok && p.peek() == "," {
		p.i++
		var r *findNode
		if r, ok = p.or(); ok {
			l = &findNode{op: ',', l: l, r: r}
		}
	}
	return l, ok
}

func (p *findParser) or() (*findNode, bool) {
	l, ok := p.and()
	for ok && (p.peek() == "-o" || p.peek() == "-or") {
		p.i++
		var r *findNode
		if r, ok = p.and(); ok {
			l = &findNode{op: 'o', l: l, r: r}
		}
	}
	return l, ok
}

func (p *findParser) and() (*findNode, bool) {
	l, ok := p.not()
	for ok && p.i < len(p.toks) {
		switch p.peek() {
		case "-o", "-or", ",", ")":
			return l, true
		case "-a", "-and":
			p.i++
		}
		var r *findNode
		if r, ok = p.not(); ok {
			l = &findNode{op: 'a', l: l, r: r}
		}
	}
	return l, ok
}

func (p *findParser) not() (*findNode, bool) {
	switch p.peek() {
	case "!", "-not":
		p.i++
		n, ok := p.not()
		return &findNode{op: '!', l: n}, ok
	case "(":
		p.i++
		n, ok := p.comma()
		if !ok || p.peek() != ")" {
			return nil, false
		}
		p.i++
		return n, true
	}
	return p.primary()
}

func (p *findParser) primary() (*findNode, bool) {
	if p.i >= len(p.toks) {
		return nil, false
	}
	t := p.toks[p.i]
	p.i++
	arg := func() (string, bool) {
		if p.i >= len(p.toks) {
			return "", false
		}
		p.i++
		return p.toks[p.i-1], true
	}
	switch t {
	case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename":
		a, ok := arg()
		return &findNode{op: 'p', prim: t, arg: a}, ok
	case "-type", "-xtype":
		a, ok := arg()
		if !ok || t == "-xtype" {
			return nil, false
		}
		for _, c := range strings.Split(a, ",") {
			if len(c) != 1 || !strings.Contains("fdlpsbc", c) {
				return nil, false
			}
		}
		return &findNode{op: 'p', prim: t, arg: a}, true
	case "-maxdepth", "-mindepth":
		a, ok := arg()
		n, err := strconv.Atoi(a)
		if !ok || err != nil || n < 0 {
			return nil, false
		}
		if t == "-maxdepth" {
			p.e.maxDepth = n
		} else {
			p.e.minDepth = n
		}
		return &findNode{op: 'p', prim: "-true"}, true
	case "-fprint", "-fprint0", "-fls":
		_, ok := arg()
		return &findNode{op: 'p', prim: "-true"}, ok
	case "-fprintf":
		_, ok := arg()
		if ok {
			_, ok = arg()
		}
		return &findNode{op: 'p', prim: "-true"}, ok
	case "-printf":
		_, ok := arg()
		return &findNode{op: 'p', prim: "-true"}, ok
	case "-delete":
		p.e.deletes = true
		return &findNode{op: 'p', prim: t}, true
	case "-depth", "-d", "-xdev", "-mount", "-noleaf", "-ignore_readdir_race", "-noignore_readdir_race",
		"-nowarn", "-warn", "-print", "-print0", "-ls", "-true", "-prune":
		// -prune has no effect with -delete, which implies -depth.
		return &findNode{op: 'p', prim: "-true"}, true
	case "-false":
		return &findNode{op: 'p', prim: t}, true
	case "-empty":
		return &findNode{op: 'p', prim: t}, true
	}
	return nil, false
}

// eval evaluates the expression on en as find does, left to right with
// the operators' short cuts; deleted says whether -delete was reached,
// and ok false when a pattern took too long to match.
func (e *findExpr) eval(en *findEntry) (deleted, ok bool) {
	ev := findEval{en: en, ok: true}
	ev.node(e.root)
	return ev.deleted, ev.ok
}

type findEval struct {
	en      *findEntry
	deleted bool
	ok      bool
}

func (ev *findEval) node(n *findNode) bool {
	switch n.op {
	case 'a':
		return ev.node(n.l) && ev.node(n.r)
	case 'o':
		return ev.node(n.l) || ev.node(n.r)
	case ',':
		ev.node(n.l)
		return ev.node(n.r)
	case '!':
		return !ev.node(n.l)
	}
	en := ev.en
	match := func(text string, fold bool) bool {
		m, ok := wildmatch(n.arg, text, false, fold)
		if !ok {
			ev.ok = false
		}
		return m
	}
	switch n.prim {
	case "-name":
		return match(en.name, false)
	case "-iname":
		return match(en.name, true)
	case "-path", "-wholename":
		return match(en.path, false)
	case "-ipath", "-iwholename":
		return match(en.path, true)
	case "-type":
		return strings.IndexByte(n.arg, en.typ) >= 0
	case "-empty":
		return en.empty()
	case "-delete":
		ev.deleted = true
		return true
	case "-false":
		return false
	}
	return true
}

// findName is the name find tests with -name for a starting point as
// written: its last element, trailing slashes dropped.
func findName(root string) string {
	r := strings.TrimRight(root, "/")
	if r == "" {
		return "/"
	}
	return path.Base(r)
}

// findJoin is the path find prints for name below dir.
func findJoin(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}
