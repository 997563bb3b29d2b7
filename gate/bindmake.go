package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// What a makefile includes. make runs the recipes of every file its
// makefiles include (include, -include, sinclude, several names a line,
// globs, variables), of the files MAKEFILES names, and loads the objects
// load names, so an approval of make binds them all, recursively, as
// make reads them: the files are read in order, the variables they set
// (VAR = value, :=, ::=, ?=, +=) and those of the command line and the
// environment are expanded as make would expand them at that point, with
// the functions that only compute on names ($(wildcard), $(patsubst),
// $(addprefix)... and $(VAR:.c=.d)). A relative name is looked for in
// make's directory, then in the -I directories and make's default ones.
//
// What cannot be resolved that way (a $(shell ...), a variable set in a
// conditional or by a define, a function not evaluated here) binds the
// listing of the directory the name would be found in (the name's
// directory as far as it is written plainly, else make's own), and of
// everything below it: every entry's name and, for files, identity
// (device, inode, size, modification and change times), which any write
// changes. That keeps what the approval covered to what it was without
// knowing which of those files make reads; refusing to bind (so that no
// approval could ever let the command run) would leave a person who
// approves make in such a project nothing to approve. What it does not
// cover is a name computed to point elsewhere ($(shell echo /tmp/x.mk)),
// outside the listed tree.
//
// The reading is bounded: maxMakeDepth nested includes, maxMakeFiles
// files, maxMakeSize bytes a file; beyond a bound, make's directory is
// bound by its listing as for a name that cannot be resolved.

const (
	maxMakeDepth   = 8
	maxMakeFiles   = 64
	maxMakeSize    = 1 << 20
	maxMakeExpand  = 32
	maxListEntries = 10000
)

// makeArgs is what make's command line says about the files it reads.
type makeArgs struct {
	files    []string          // -f FILE, as written
	dir      string            // -C DIR, joined, as written
	incDirs  []string          // -I DIR, as written
	vars     map[string]string // VAR=value on the command line
	envFirst bool              // -e: the environment overrides the makefiles
}

// parseMakeArgs reads make's options and assignments.
func parseMakeArgs(args []string) makeArgs {
	var m makeArgs
	for i := 0; i < len(args); i++ {
		v := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		if v == "--" {
			for _, a := range args[i+1:] {
				m.assign(a)
			}
			break
		}
		if strings.HasPrefix(v, "--") {
			opt, val, eq := strings.Cut(v, "=")
			switch {
			case len(opt) >= 4 && (strings.HasPrefix("--file", opt) || strings.HasPrefix("--makefile", opt)):
				if !eq {
					val = next()
				}
				m.files = append(m.files, val)
			case len(opt) >= 4 && strings.HasPrefix("--directory", opt):
				if !eq {
					val = next()
				}
				m.dir = filepath.Join(m.dir, val)
			case len(opt) >= 4 && strings.HasPrefix("--include-dir", opt):
				if !eq {
					val = next()
				}
				m.incDirs = append(m.incDirs, val)
			case len(opt) >= 4 && strings.HasPrefix("--environment-overrides", opt):
				m.envFirst = true
			}
			continue
		}
		if !strings.HasPrefix(v, "-") || len(v) < 2 {
			m.assign(v)
			continue
		}
		for k := 1; k < len(v); k++ {
			switch v[k] {
			case 'e':
				m.envFirst = true
			case 'f', 'C', 'I', 'o', 'W', 'E', 'l', 'j', 'O':
				val := v[k+1:]
				if val == "" && strings.IndexByte("fCIoWE", v[k]) >= 0 {
					val = next()
				}
				switch v[k] {
				case 'f':
					m.files = append(m.files, val)
				case 'C':
					m.dir = filepath.Join(m.dir, val)
				case 'I':
					m.incDirs = append(m.incDirs, val)
				}
				k = len(v)
			}
		}
	}
	return m
}

// assign records a VAR=value word of make's command line.
func (m *makeArgs) assign(w string) {
	name, op, value, ok := makeAssignment(w)
	if !ok || op == "!=" {
		return
	}
	if m.vars == nil {
		m.vars = map[string]string{}
	}
	m.vars[name] = value
}

// makefiles are the makefiles make reads: those named by -f, --file,
// --makefile (any unique abbreviation), else the first of GNUmakefile,
// makefile and Makefile that exists; all under -C DIR. Without -f, each
// default name is listed, so that creating one changes the binding.
func makefiles(args []string) []string {
	m := parseMakeArgs(args)
	files := m.files
	if len(files) == 0 {
		files = []string{"GNUmakefile", "makefile", "Makefile"}
	}
	if m.dir != "" {
		for i, f := range files {
			if !filepath.IsAbs(f) {
				files[i] = filepath.Join(m.dir, f)
			}
		}
	}
	return files
}

// makeIncludeFacts are the facts of what make, started in cwd with args
// and the command's own assignments (NAME=value make), reads beyond its
// makefiles (which scriptFiles binds): the files they include and load,
// the makefiles MAKEFILES names, and the options and variables MAKEFLAGS
// gives.
func makeIncludeFacts(args []string, cwd string, env envFacts, assigns []string) []string {
	return (&makeReader{}).facts(args, cwd, env, assigns)
}

// makeFacts are makeIncludeFacts and the facts of what the recipes run
// (makeRecipeFacts), for a make started depth scripts down.
func makeFacts(args []string, cwd string, place classify.Place, env envFacts, assigns []string, depth int) []string {
	if !env.spend(10) {
		return []string{"truncated"}
	}
	r := &makeReader{budget: env}
	if depth < 2 {
		// Recipes are followed two makes down: a recipe's $(MAKE) runs
		// the same makefiles again, and each level multiplies the work.
		r.recipes = []string{}
	}
	out := r.facts(args, cwd, env, assigns)
	return append(out, r.recipeFacts(place, env, depth)...)
}

// facts reads the makefiles; see makeIncludeFacts.
func (r *makeReader) facts(args []string, cwd string, env envFacts, assigns []string) []string {
	r.vars, r.env, r.envKnown = map[string]makeVar{}, map[string]string{}, env.known
	if env.known {
		for _, kv := range env.vars {
			if k, v, ok := strings.Cut(kv, "="); ok {
				r.env[k] = v
			}
		}
	}
	for _, a := range assigns {
		// "NAME=" is also how a value not known is written: such a
		// variable is not followed.
		if k, v, ok := strings.Cut(a, "="); ok && v != "" {
			r.env[k] = v
		} else if ok {
			delete(r.env, k)
			if r.unknownEnv == nil {
				r.unknownEnv = map[string]bool{}
			}
			r.unknownEnv[k] = true
		}
	}
	var flags makeArgs
	if mf := r.env["MAKEFLAGS"]; mf != "" || r.unknownEnv["MAKEFLAGS"] {
		words := strings.Fields(mf)
		if len(words) > 0 && !strings.HasPrefix(words[0], "-") && !strings.Contains(words[0], "=") {
			// The single-letter options, without their dash.
			if strings.Contains(words[0], "e") {
				flags.envFirst = true
			}
			words = words[1:]
		}
		f := parseMakeArgs(words)
		flags.files, flags.incDirs, flags.vars, flags.envFirst = f.files, f.incDirs, f.vars, flags.envFirst || f.envFirst
	}
	m := parseMakeArgs(args)
	dir := m.dir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(cwd, dir)
	}
	r.dir, r.envFirst = dir, m.envFirst || flags.envFirst
	r.cmdVars = flags.vars
	for k, v := range m.vars {
		if r.cmdVars == nil {
			r.cmdVars = map[string]string{}
		}
		r.cmdVars[k] = v
	}
	for _, d := range append(flags.incDirs, m.incDirs...) {
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		r.incDirs = append(r.incDirs, d)
	}
	if r.unknownEnv["MAKEFLAGS"] || r.unknownEnv["MAKEFILES"] {
		r.listing(dir)
	}
	// MAKEFILES: read first, each found like an include.
	if mf := r.env["MAKEFILES"]; mf != "" {
		r.include(mf, 0)
	}
	// MAKEFLAGS' makefiles, which the command line does not show.
	for _, f := range flags.files {
		if f == "" || f == "-" {
			continue
		}
		if !filepath.IsAbs(f) {
			f = filepath.Join(dir, f)
		}
		r.bind(f)
		r.read(f, 0)
	}
	files := m.files
	if len(files) == 0 {
		for _, n := range []string{"GNUmakefile", "makefile", "Makefile"} {
			if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && fi.Mode().IsRegular() {
				files = []string{n}
				break
			}
		}
	}
	for _, f := range files {
		if f == "" || f == "-" {
			continue // stdin: the words bound it, or nothing can
		}
		if !filepath.IsAbs(f) {
			f = filepath.Join(dir, f)
		}
		// The makefile itself is bound by scriptFiles; what it includes
		// is read here.
		r.read(f, 0)
	}
	return r.out
}

// makeVar is a variable as the reader knows it.
type makeVar struct {
	value   string
	simple  bool // := : value is expanded already
	unknown bool // set where the reader cannot follow (a conditional, define, !=)
}

type makeReader struct {
	dir     string
	incDirs []string
	cmdVars map[string]string
	env     map[string]string
	// envKnown says env holds the whole environment; unknownEnv are the
	// variables the command sets to values not known.
	envKnown   bool
	unknownEnv map[string]bool
	envFirst   bool
	vars       map[string]makeVar
	list       []string // MAKEFILE_LIST
	files      int
	// opaque: the makefiles evaluate code ($(eval), $(call)) that may
	// set any variable.
	opaque bool
	// budget is the work budget (envFacts.spend) of the command.
	budget envFacts
	// recipes, when not nil, collects the recipes' lines as written;
	// inRecipe says they are being expanded.
	recipes  []string
	inRecipe bool
	// cond is the depth of conditionals around the line being read: an
	// assignment there may or may not happen, so its variable becomes
	// unknown; an include there is bound all the same.
	cond   int
	out    []string
	listed map[string]bool
}

// bind adds the fact of one file make may read.
func (r *makeReader) bind(p string) {
	r.out = append(r.out, "file "+p+" "+fileDigest(p))
}

// read binds nothing itself (its caller did) and follows what the
// makefile p includes.
func (r *makeReader) read(p string, depth int) {
	if depth > maxMakeDepth || r.files >= maxMakeFiles {
		r.listing(r.dir)
		return
	}
	r.files++
	r.list = append(r.list, p)
	f, err := os.Open(p)
	if err != nil {
		return // absent or unreadable: its fact says so
	}
	data, err := io.ReadAll(io.LimitReader(f, maxMakeSize+1))
	f.Close()
	if err != nil || len(data) > maxMakeSize {
		r.listing(r.dir)
		return
	}
	cond := r.cond
	defer func() { r.cond = cond }()
	lines := makeLines(string(data))
	inRule := false
	for i := 0; i < len(lines); i++ {
		raw := lines[i]
		line := strings.TrimSpace(stripMakeComment(raw))
		if line == "" {
			continue
		}
		word, rest := makeFirstWord(line)
		switch word {
		case "include", "-include", "sinclude", "load", "-load":
			// Bound even where it may be a recipe's line: binding more
			// than make reads only asks more.
			r.include(rest, depth+1)
			inRule = false
			continue
		}
		if strings.HasPrefix(raw, "\t") && inRule {
			// A recipe's line: the shell's, not make's.
			r.recipe(strings.TrimPrefix(raw, "\t"))
			continue
		}
		if strings.Contains(line, "$(eval") || strings.Contains(line, "${eval") ||
			strings.Contains(line, "$(call") || strings.Contains(line, "${call") {
			// Code make evaluates may set any variable and include any
			// file: what follows is not followed by name.
			r.opaque = true
			r.listing(r.dir)
		}
		switch word {
		case "define":
			// A variable defined over several lines: its value is not
			// followed.
			name, _ := makeFirstWord(rest)
			if name == "override" || name == "export" || name == "private" {
				name, _ = makeFirstWord(strings.TrimSpace(rest[len(name):]))
			}
			r.set(strings.TrimRight(name, ":+?!="), makeVar{unknown: true})
			for nested := 1; nested > 0 && i+1 < len(lines); {
				i++
				switch w, _ := makeFirstWord(strings.TrimSpace(lines[i])); w {
				case "define":
					nested++
				case "endef":
					nested--
				}
			}
			inRule = false
			continue
		case "ifeq", "ifneq", "ifdef", "ifndef":
			r.cond++
			continue
		case "else":
			continue
		case "endif":
			if r.cond > cond {
				r.cond--
			}
			continue
		case "undefine":
			name, _ := makeFirstWord(rest)
			if r.cond > 0 {
				r.set(name, makeVar{unknown: true})
			} else {
				delete(r.vars, name)
			}
			continue
		case "vpath":
			continue
		}
		stmt := line
		override := false
		for {
			w, rest := makeFirstWord(stmt)
			if w != "export" && w != "override" && w != "private" && w != "unexport" {
				break
			}
			override = override || w == "override"
			stmt = rest
		}
		name, op, value, ok := makeAssignment(stmt)
		if !ok {
			if makeRuleLine(stmt) {
				inRule = true
				// targets: prerequisites ; recipe
				if i := outsideRefs(raw, ';'); i >= 0 {
					r.recipe(raw[i+1:])
				}
			}
			continue
		}
		inRule = false
		r.assign(name, op, value, override)
	}
}

// set records a variable, unknown within a conditional.
func (r *makeReader) set(name string, v makeVar) {
	if r.cond > 0 {
		v = makeVar{unknown: true}
	}
	r.vars[name] = v
}

// assign applies one assignment as make would.
func (r *makeReader) assign(name, op, value string, override bool) {
	if _, ok := r.cmdVars[name]; ok && !override {
		return // the command line wins
	}
	if r.envHas(name) && r.envFirst && !override {
		return
	}
	cur, defined := r.vars[name]
	switch op {
	case "=":
		r.set(name, makeVar{value: value})
	case ":=", "::=", ":::=":
		v, ok := r.expand(value, 0)
		r.set(name, makeVar{value: v, simple: true, unknown: !ok})
	case "?=":
		if defined || r.envHas(name) {
			if !defined && r.cond > 0 {
				r.set(name, makeVar{unknown: true})
			}
			return
		}
		r.set(name, makeVar{value: value})
	case "+=":
		if !defined {
			if ev, ok := r.env[name]; ok {
				cur, defined = makeVar{value: ev}, true
			}
		}
		switch {
		case !defined:
			r.set(name, makeVar{value: value})
		case cur.unknown:
			r.set(name, cur)
		case cur.simple:
			v, ok := r.expand(value, 0)
			r.set(name, makeVar{value: joinMake(cur.value, v), simple: true, unknown: !ok})
		default:
			r.set(name, makeVar{value: joinMake(cur.value, value)})
		}
	default: // != runs the shell
		r.set(name, makeVar{unknown: true})
	}
}

func (r *makeReader) envHas(name string) bool {
	_, ok := r.env[name]
	return ok || r.unknownEnv[name]
}

func joinMake(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// include binds each file an include (or load) line names and reads the
// makefiles among them.
func (r *makeReader) include(text string, depth int) {
	for _, w := range makeWords(text) {
		names, ok := r.expand(w, 0)
		if !ok {
			r.unresolved(w)
			continue
		}
		for _, n := range strings.Fields(names) {
			if strings.ContainsAny(n, "*?[") {
				pat := n
				if !filepath.IsAbs(pat) {
					pat = filepath.Join(r.dir, pat)
				}
				matches, err := filepath.Glob(pat)
				if err != nil {
					r.unresolved(w)
					continue
				}
				for _, p := range matches {
					r.bind(p)
					r.read(p, depth)
				}
				continue
			}
			p := r.find(n)
			r.bind(p)
			r.read(p, depth)
		}
	}
}

// makeWords splits a line at the blanks outside references.
func makeWords(s string) []string {
	var out []string
	depth, start := 0, -1
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '(' || c == '{':
			depth++
		case c == ')' || c == '}':
			depth--
		case (c == ' ' || c == '\t') && depth <= 0:
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// find is where make finds an included name: make's directory, then the
// -I directories and the default ones. Every candidate is bound, found
// or not, so that creating one changes the binding and the subjects
// bound stay the same.
func (r *makeReader) find(n string) string {
	if filepath.IsAbs(n) {
		return filepath.Clean(n)
	}
	found := ""
	dirs := append([]string{r.dir}, r.incDirs...)
	for i, d := range append(dirs, "/usr/local/include", "/usr/gnu/include", "/usr/include") {
		p := filepath.Join(d, n)
		_, err := os.Stat(p)
		if found == "" && err == nil {
			found = p
			continue
		}
		if err != nil && i >= len(dirs) && dirSystemOwned(d) {
			// Only root creates a file there.
			continue
		}
		r.bind(p)
	}
	if found == "" {
		return filepath.Join(r.dir, n)
	}
	return found
}

// dirSystemOwned reports a directory that only root may change, or one
// that does not exist under such a directory.
func dirSystemOwned(d string) bool {
	for ; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			return systemOwned(d, fi)
		}
		if d == "/" || d == "." {
			return false
		}
	}
}

// unresolved binds the listing of the directory a name that cannot be
// resolved would be found in: its directory as far as it is written
// plainly, else make's (and the -I directories).
func (r *makeReader) unresolved(word string) {
	static := word
	if i := strings.IndexByte(static, '$'); i >= 0 {
		static = static[:i]
	}
	if i := strings.LastIndexByte(static, '/'); i >= 0 {
		d := static[:i+1]
		if !filepath.IsAbs(d) {
			d = filepath.Join(r.dir, d)
		}
		r.listing(filepath.Clean(d))
		return
	}
	r.listing(r.dir)
	for _, d := range r.incDirs {
		r.listing(d)
	}
}

// listing binds a directory tree: every entry's name and, for a file,
// its identity.
func (r *makeReader) listing(dir string) {
	if r.listed[dir] {
		return
	}
	if r.listed == nil {
		r.listed = map[string]bool{}
	}
	r.listed[dir] = true
	if !r.budget.spend(20) {
		r.out = append(r.out, "truncated")
		return
	}
	r.out = append(r.out, "listing "+dir+" "+listingDigest(dir))
}

// listingDigest is "sha256:HEX" of the names and identities of what is
// below dir (at most maxListEntries entries, .git directories not
// entered), or "absent".
func listingDigest(dir string) string {
	if _, err := os.Stat(dir); err != nil {
		return "absent"
	}
	h := sha256.New()
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			io.WriteString(h, p+"\x00error\x00")
			return nil
		}
		if n++; n > maxListEntries {
			io.WriteString(h, "\x00truncated\x00")
			return filepath.SkipAll
		}
		if d.IsDir() && d.Name() == ".git" && p != dir {
			return filepath.SkipDir
		}
		io.WriteString(h, p+"\x00")
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				io.WriteString(h, fileIdentity(fi))
			}
		} else if d.Type()&fs.ModeSymlink != 0 {
			t, _ := os.Readlink(p)
			io.WriteString(h, "-> "+t)
		}
		h.Write([]byte{0})
		return nil
	})
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// makeLines splits a makefile into logical lines: a backslash at the end
// of a line joins the next, as make does outside recipes.
func makeLines(s string) []string {
	raw := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	var out []string
	var cur strings.Builder
	cont := false
	for _, l := range raw {
		if cont {
			cur.WriteByte(' ')
			l = strings.TrimLeft(l, " \t")
		}
		n := 0
		for n < len(l) && l[len(l)-1-n] == '\\' {
			n++
		}
		if n%2 == 1 {
			cur.WriteString(strings.TrimRight(l[:len(l)-1], " \t"))
			cont = true
			continue
		}
		cur.WriteString(l)
		out = append(out, cur.String())
		cur.Reset()
		cont = false
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// stripMakeComment cuts a line at its first # that is not escaped.
func stripMakeComment(l string) string {
	for i := 0; i < len(l); i++ {
		if l[i] == '\\' {
			i++
			continue
		}
		if l[i] == '#' {
			return l[:i]
		}
	}
	return l
}

// makeFirstWord splits a line at its first blank.
func makeFirstWord(l string) (string, string) {
	i := strings.IndexAny(l, " \t")
	if i < 0 {
		return l, ""
	}
	return l[:i], strings.TrimSpace(l[i+1:])
}

// makeAssignment reads NAME OP VALUE, OP one of = := ::= :::= ?= += !=,
// the name outside any $(...).
func makeAssignment(l string) (name, op, value string, ok bool) {
	depth := 0
	for i := 0; i < len(l); i++ {
		switch c := l[i]; c {
		case '(', '{':
			depth++
		case ')', '}':
			depth--
		case ':', '=', '?', '+', '!':
			if depth > 0 {
				continue
			}
			rest := l[i:]
			for _, o := range []string{":::=", "::=", ":=", "?=", "+=", "!=", "="} {
				if strings.HasPrefix(rest, o) {
					name = strings.TrimSpace(l[:i])
					if name == "" || strings.ContainsAny(name, " \t") && !strings.Contains(name, "$") {
						return "", "", "", false
					}
					return name, o, strings.TrimLeft(l[i+len(o):], " \t"), true
				}
			}
			if c == ':' {
				return "", "", "", false // a rule
			}
		}
	}
	return "", "", "", false
}

// outsideRefs is the index of the first c in l outside references, or -1.
func outsideRefs(l string, c byte) int {
	depth := 0
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case '(', '{':
			depth++
		case ')', '}':
			depth--
		case c:
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// makeRuleLine reports a line that starts a rule (targets: prerequisites).
func makeRuleLine(l string) bool {
	depth := 0
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case '(', '{':
			depth++
		case ')', '}':
			depth--
		case ':':
			if depth == 0 {
				return true
			}
		}
	}
	return false
}

// expand evaluates s as make would, as far as it computes on names only;
// ok is false when s holds what this cannot know.
func (r *makeReader) expand(s string, depth int) (string, bool) {
	if depth > maxMakeExpand {
		return "", false
	}
	if !strings.Contains(s, "$") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			break
		}
		i++
		switch c := s[i]; c {
		case '$':
			b.WriteByte('$')
		case '(', '{':
			end := matchParen(s, i)
			if end < 0 {
				return "", false
			}
			v, ok := r.reference(s[i+1:end], c, depth)
			if !ok {
				return "", false
			}
			b.WriteString(v)
			i = end
		default:
			v, ok := r.lookup(string(c), depth)
			if !ok {
				return "", false
			}
			b.WriteString(v)
		}
	}
	return b.String(), true
}

// matchParen finds the parenthesis closing the one at s[i].
func matchParen(s string, i int) int {
	open := s[i]
	close := byte(')')
	if open == '{' {
		close = '}'
	}
	depth := 0
	for k := i; k < len(s); k++ {
		switch s[k] {
		case open:
			depth++
		case close:
			if depth--; depth == 0 {
				return k
			}
		}
	}
	return -1
}

// reference evaluates the inside of $(...): a function call, a variable,
// or a substitution reference.
func (r *makeReader) reference(in string, open byte, depth int) (string, bool) {
	if fn, args, ok := strings.Cut(in, " "); ok && makeFunction(fn) {
		return r.call(fn, args, depth)
	}
	if fn, args, ok := strings.Cut(in, "\t"); ok && makeFunction(fn) {
		return r.call(fn, args, depth)
	}
	// $(NAME:from=to), the colon outside nested references.
	colon := -1
	for k, d := 0, 0; k < len(in); k++ {
		switch in[k] {
		case '(', '{':
			d++
		case ')', '}':
			d--
		case ':':
			if d == 0 && colon < 0 {
				colon = k
			}
		}
	}
	name := in
	subst := ""
	if colon >= 0 {
		name, subst = in[:colon], in[colon+1:]
	}
	name, ok := r.expand(name, depth+1)
	if !ok {
		return "", false
	}
	v, ok := r.lookup(name, depth)
	if !ok || colon < 0 {
		return v, ok
	}
	from, to, eq := strings.Cut(subst, "=")
	if !eq {
		return "", false
	}
	if from, ok = r.expand(from, depth+1); !ok {
		return "", false
	}
	if to, ok = r.expand(to, depth+1); !ok {
		return "", false
	}
	if !strings.Contains(from, "%") {
		from, to = "%"+from, "%"+to
	}
	return patsubst(from, to, v), true
}

// lookup is a variable's value.
func (r *makeReader) lookup(name string, depth int) (string, bool) {
	switch name {
	case "CURDIR":
		return r.dir, true
	case "MAKEFILE_LIST":
		return strings.Join(r.list, " "), true
	}
	if r.inRecipe {
		switch strings.TrimRight(name, "DF") {
		case "@", "<", "^", "*", "?", "+", "|", "%":
			// An automatic variable: a word that names no file.
			return "mnemos-automatic-variable", true
		}
		if name == "MAKE" {
			if _, ok := r.vars[name]; !ok {
				return "make", true
			}
		}
	}
	if mv, ok := r.vars[name]; ok {
		switch {
		case mv.unknown:
			return "", false
		case mv.simple:
			return mv.value, true
		}
		return r.expand(mv.value, depth+1)
	}
	if v, ok := r.cmdVars[name]; ok {
		return r.expand(v, depth+1)
	}
	if r.opaque || r.unknownEnv[name] {
		// Set by evaluated code, or to a value not known.
		return "", false
	}
	if ev, ok := r.env[name]; ok {
		return r.expand(ev, depth+1)
	}
	if !r.envKnown {
		return "", false // an environment variable, maybe
	}
	if len(name) == 1 || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "MAKE") {
		// Automatic and special variables: make sets them.
		return "", false
	}
	return "", true // undefined: empty
}

// makeFunction reports the functions call evaluates.
func makeFunction(fn string) bool {
	switch fn {
	case "wildcard", "patsubst", "subst", "addprefix", "addsuffix", "basename", "notdir", "dir", "suffix",
		"strip", "sort", "filter", "filter-out", "firstword", "lastword", "abspath", "join", "words", "word":
		return true
	case "shell", "eval", "call", "foreach", "if", "or", "and", "value", "origin", "flavor", "file",
		"error", "warning", "info", "let", "intcmp", "realpath", "guile", "wordlist":
		return true // known, and not evaluated: call says so
	}
	return false
}

// call evaluates a function that computes on names.
func (r *makeReader) call(fn, args string, depth int) (string, bool) {
	parts := splitMakeArgs(args)
	ev := make([]string, len(parts))
	for i, p := range parts {
		v, ok := r.expand(p, depth+1)
		if !ok {
			return "", false
		}
		ev[i] = v
	}
	arg := func(i int) string {
		if i < len(ev) {
			return ev[i]
		}
		return ""
	}
	each := func(f func(string) string) string {
		var out []string
		for _, w := range strings.Fields(arg(len(ev) - 1)) {
			out = append(out, f(w))
		}
		return strings.Join(out, " ")
	}
	switch fn {
	case "wildcard":
		var out []string
		for _, pat := range strings.Fields(arg(0)) {
			p := pat
			if !filepath.IsAbs(p) {
				p = filepath.Join(r.dir, p)
			}
			m, err := filepath.Glob(p)
			if err != nil {
				return "", false
			}
			for _, x := range m {
				if !filepath.IsAbs(pat) {
					x, _ = filepath.Rel(r.dir, x)
				}
				out = append(out, x)
			}
		}
		return strings.Join(out, " "), true
	case "patsubst":
		if len(ev) != 3 {
			return "", false
		}
		return patsubst(ev[0], ev[1], ev[2]), true
	case "subst":
		if len(ev) != 3 {
			return "", false
		}
		return strings.ReplaceAll(ev[2], ev[0], ev[1]), true
	case "addprefix":
		return each(func(w string) string { return arg(0) + w }), len(ev) == 2
	case "addsuffix":
		return each(func(w string) string { return w + arg(0) }), len(ev) == 2
	case "basename":
		return each(func(w string) string {
			if e := path.Ext(w); e != "" && !strings.Contains(e, "/") {
				return w[:len(w)-len(e)]
			}
			return w
		}), true
	case "notdir":
		return each(func(w string) string { return w[strings.LastIndexByte(w, '/')+1:] }), true
	case "dir":
		return each(func(w string) string {
			if i := strings.LastIndexByte(w, '/'); i >= 0 {
				return w[:i+1]
			}
			return "./"
		}), true
	case "suffix":
		var out []string
		for _, w := range strings.Fields(arg(0)) {
			if e := path.Ext(w); e != "" {
				out = append(out, e)
			}
		}
		return strings.Join(out, " "), true
	case "strip":
		return strings.Join(strings.Fields(arg(0)), " "), true
	case "sort":
		w := strings.Fields(arg(0))
		slices.Sort(w)
		return strings.Join(slices.Compact(w), " "), true
	case "filter", "filter-out":
		pats := strings.Fields(arg(0))
		var out []string
		for _, w := range strings.Fields(arg(1)) {
			hit := slices.ContainsFunc(pats, func(p string) bool { return patMatch(p, w) })
			if hit == (fn == "filter") {
				out = append(out, w)
			}
		}
		return strings.Join(out, " "), true
	case "firstword", "lastword":
		w := strings.Fields(arg(0))
		if len(w) == 0 {
			return "", true
		}
		if fn == "firstword" {
			return w[0], true
		}
		return w[len(w)-1], true
	case "words":
		return strconv.Itoa(len(strings.Fields(arg(0)))), true
	case "word":
		n, err := strconv.Atoi(strings.TrimSpace(arg(0)))
		w := strings.Fields(arg(1))
		if err != nil || n < 1 {
			return "", false
		}
		if n > len(w) {
			return "", true
		}
		return w[n-1], true
	case "abspath":
		return each(func(w string) string {
			if !filepath.IsAbs(w) {
				w = filepath.Join(r.dir, w)
			}
			return filepath.Clean(w)
		}), true
	case "join":
		a, b := strings.Fields(arg(0)), strings.Fields(arg(1))
		out := make([]string, max(len(a), len(b)))
		for i := range out {
			if i < len(a) {
				out[i] = a[i]
			}
			if i < len(b) {
				out[i] += b[i]
			}
		}
		return strings.Join(out, " "), true
	}
	return "", false
}

// splitMakeArgs splits a function's arguments at the commas outside
// nested references.
func splitMakeArgs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '{':
			depth++
		case ')', '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// patsubst replaces the words of text matching pattern (one %) with
// replacement.
func patsubst(pattern, replacement, text string) string {
	var out []string
	for _, w := range strings.Fields(text) {
		out = append(out, patReplace(pattern, replacement, w))
	}
	return strings.Join(out, " ")
}

func patReplace(pattern, replacement, w string) string {
	pre, suf, hasPct := strings.Cut(pattern, "%")
	if !hasPct {
		if w == pattern {
			return replacement
		}
		return w
	}
	if len(w) < len(pre)+len(suf) || !strings.HasPrefix(w, pre) || !strings.HasSuffix(w, suf) {
		return w
	}
	stem := w[len(pre) : len(w)-len(suf)]
	if rp, rs, ok := strings.Cut(replacement, "%"); ok {
		return rp + stem + rs
	}
	return replacement
}

func patMatch(pattern, w string) bool {
	pre, suf, hasPct := strings.Cut(pattern, "%")
	if !hasPct {
		return w == pattern
	}
	return len(w) >= len(pre)+len(suf) && strings.HasPrefix(w, pre) && strings.HasSuffix(w, suf)
}

// What the recipes run. make runs each recipe line with its shell: the
// scripts and programs those lines name are bound as the command line's
// own are (a recipe's ./gen.sh, python tools/x.py, $(MAKE) -C sub), as
// is the shell make runs them with when SHELL names a file. A recipe is
// expanded as make expands it when it runs it, once every makefile is
// read: the automatic variables ($@, $<...) stand for a word that names
// no file, and a line holding what cannot be expanded here is left out
// (its words are in the makefile, which is bound). At most
// maxRecipeLines lines are read.

const maxRecipeLines = 1000

// recipe collects one recipe line, without make's prefixes (@, -, +).
func (r *makeReader) recipe(l string) {
	if r.recipes == nil || len(r.recipes) >= maxRecipeLines {
		return
	}
	l = strings.TrimLeft(strings.TrimSpace(stripMakeComment(l)), "@-+ \t")
	if l != "" {
		r.recipes = append(r.recipes, l)
	}
}

// recipeFacts bind what the collected recipes run.
func (r *makeReader) recipeFacts(place classify.Place, env envFacts, depth int) []string {
	if depth >= maxScriptDepth {
		return nil
	}
	r.inRecipe = true
	var out []string
	_, inMake := r.vars["SHELL"]
	_, onLine := r.cmdVars["SHELL"]
	// make never takes SHELL from the environment.
	if sh, ok := r.lookup("SHELL", 0); (inMake || onLine) && ok && strings.Contains(sh, "/") {
		for _, p := range resolveIn(strings.Fields(sh)[0], []string{r.dir}) {
			out = append(out, "file "+p+" "+fileDigest(p))
		}
	}
	sp := place
	sp.Dirs, sp.UnknownDir = []string{r.dir}, false
	seen := map[string]bool{}
	for _, l := range r.recipes {
		text, ok := r.expand(l, 0)
		if !ok || seen[text] {
			continue
		}
		seen[text] = true
		if !env.spend(1) {
			return append(out, "truncated")
		}
		s, err := shellparse.ParseScript(text, shellparse.Env{Home: place.Home, Cwd: r.dir})
		if err != nil {
			continue
		}
		lp := classify.PlaceOf(s, r.dir, place.Home)
		lp.Workspace = place.Workspace
		for _, c := range s.Commands {
			out = append(out, commandFactsDepth(c, lp, env, depth+1)...)
		}
	}
	return out
}
