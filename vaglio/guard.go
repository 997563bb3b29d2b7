package vaglio

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// The three checks of the guard, as they appear in Hit.Check.
const (
	CheckForbiddenPath = "forbidden-path"
	CheckIrrecoverable = "irrecoverable"
	CheckSelfTamper    = "self-tamper"
)

// Guard is phase 1: the denials nothing overrides. Its fields only tell it
// where things are; none of them can make it allow something it would
// otherwise deny. The zero Guard is a working guard (home unknown, no
// protected paths, "mnemos" as the only self name).
type Guard struct {
	// Home is the user's home directory, for "~" and "$HOME".
	Home string
	// Protected are mnemos's own config dir, state dir, policy file and
	// audit log (absolute paths). Writing to them through the gate is
	// self-tampering.
	Protected []string
	// SelfNames are program names or paths that are mnemos itself. "mnemos"
	// is always one of them.
	SelfNames []string
	// Workspace is the directory the agent works in (absolute), when
	// known: a recursive delete of it, or of a directory that holds it,
	// is irrecoverable. Deleting inside it is not the guard's matter.
	Workspace string
}

// Hit is one guard denial.
type Hit struct {
	// Check is CheckForbiddenPath, CheckIrrecoverable or CheckSelfTamper.
	Check string `json:"check"`
	// Pattern is the rule that matched ("/etc/shadow", "**/.ssh/**",
	// "rm -r /", "mnemos approvals approve").
	Pattern string `json:"pattern"`
	// Word is the word (or the path inside a word) that matched, as written.
	Word string `json:"word,omitempty"`
	// Reason is one line for a person, naming what matched.
	Reason string `json:"reason"`
}

// LogReason is the hit without the matched word: the check and the rule.
// It is what vaglio's own log records.
func (h Hit) LogReason() string {
	return "guard: " + h.Check + " " + h.Pattern
}

// Verdict is the hit as a phase verdict: denied, score 0, blocked by the
// guard.
func (h Hit) Verdict() Verdict {
	return Verdict{
		Approved:  false,
		Score:     0,
		Reason:    "guard: " + h.Reason,
		BlockedBy: BlockedByGuard,
		JudgeKind: JudgeKindRuleBased,
		Rule:      h.Check + " " + h.Pattern,
	}
}

// Check returns the first hit for one simple command run in cwd (an
// absolute directory; an empty or relative cwd is taken as "/", which makes
// relative words as dangerous as they can be).
//
// The order is: irrecoverable, self-tamper, forbidden path.
func (g Guard) Check(cmd shellparse.Command, cwd string) (Hit, bool) {
	return g.check(nil, cmd, cwd)
}

// Prepared is a Guard made ready for many checks, as a gate judging every
// command of every request makes them: its home directory and protected
// paths are cleaned once rather than at every check. It judges exactly as
// the Guard it was made from, whose slices it copies. The zero Prepared
// is the zero Guard.
type Prepared struct {
	g     Guard
	ready bool
	// home and protected are what a checker derives from g, and
	// protectedLiteral whether the protected paths are free of pattern
	// characters.
	home             string
	protected        []string
	protectedLiteral bool
	ws               string
	// homeParent is path.Dir(home), which ordinaryDir asks about every
	// directory.
	homeParent string
}

// Prepare returns the guard made ready for many checks.
func (g Guard) Prepare() *Prepared {
	g.Protected, g.SelfNames = slices.Clone(g.Protected), slices.Clone(g.SelfNames)
	c := g.newChecker(nil, "/")
	p := &Prepared{g: g, ready: true, home: c.r.home, ws: c.ws, homeParent: path.Dir(c.r.home)}
	p.protected, p.protectedLiteral = c.protectedPaths(), c.protectedLiteral
	return p
}

// Check is Guard.Check.
func (p *Prepared) Check(cmd shellparse.Command, cwd string) (Hit, bool) {
	if !p.ready {
		return p.g.check(nil, cmd, cwd)
	}
	return p.g.check(p, cmd, cwd)
}

// check is Check, with the Guard's derived values from p when p is not
// nil.
func (g Guard) check(p *Prepared, cmd shellparse.Command, cwd string) (Hit, bool) {
	return g.checkFrom(p, cmd, cwd, resolverCwd(cwd))
}

// checkFrom is check, with dir the working directory a resolver uses for
// cwd (resolverCwd).
func (g Guard) checkFrom(p *Prepared, cmd shellparse.Command, cwd, dir string) (Hit, bool) {
	out := g.judgeFrom(p, cmd, cwd, dir)
	return out.hit, out.found
}

// judgeFrom is checkFrom, returning the sink: its hit, and whether a check
// looked at where a path lies towards the workspace.
func (g Guard) judgeFrom(p *Prepared, cmd shellparse.Command, cwd, dir string) sink {
	out := g.checkIn(p, cmd, dir)
	if out.found || len(cmd.Wrappers) == 0 {
		return out
	}
	for _, dir := range commandDirs(g, cmd, cwd) {
		placeRead := out.placeRead
		out = g.checkIn(p, cmd, dir)
		out.placeRead = out.placeRead || placeRead
		if out.found {
			break
		}
	}
	return out
}

// checkIn judges cmd run in dir, which is absolute and clean (resolverCwd
// leaves it as it is), stopping at the first hit.
func (g Guard) checkIn(p *Prepared, cmd shellparse.Command, dir string) sink {
	c := g.newChecker(p, dir)
	buf := slabs.Get().(*[]candidate)
	c.pooled = (*buf)[:0]
	c.check(cmd)
	if cap(c.slab) > cap(*buf) {
		*buf = c.slab
	}
	clear((*buf)[:cap(*buf)])
	slabs.Put(buf)
	return c.out
}

// slabs holds candidate slabs between checks: a hit keeps no candidate.
var slabs = sync.Pool{New: func() any {
	s := make([]candidate, 0, maxCached+2)
	return &s
}}

// commandDirs returns the directories a command runs in besides cwd: those
// a wrapper changes to (env -C DIR, sudo --chdir=DIR, nsenter --wd=DIR,
// unshare --wd=DIR), resolved against cwd. A directory computed at run
// time may be any: it is taken as "/".
func commandDirs(g Guard, cmd shellparse.Command, cwd string) []string {
	var dirs []string
	for _, wr := range cmd.Wrappers {
		if len(wr.Argv) == 0 {
			continue
		}
		var short, long string
		switch baseName(wr.Argv[0]) {
		case "env":
			short, long = "-C", "--chdir"
		case "sudo":
			short, long = "-D", "--chdir"
		case "nsenter", "unshare":
			short, long = "-w", "--wd"
		default:
			continue
		}
		for i := 1; i < len(wr.Argv); i++ {
			v := wr.Argv[i]
			var dir string
			switch {
			case v == short || v == long:
				if i+1 >= len(wr.Argv) {
					continue
				}
				i++
				dir = wr.Argv[i]
			case strings.HasPrefix(v, long+"="):
				dir = v[len(long)+1:]
			case strings.HasPrefix(v, short) && len(v) > len(short) && !strings.HasPrefix(v, "--"):
				dir = v[len(short):]
			default:
				continue
			}
			if strings.ContainsAny(dir, "$`") {
				dir = "/"
			}
			r := newResolver(g.Home, cwd)
			if d := r.abs(r.expandHome(dir)); d != cwd && !contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checker is the guard prepared for one working directory. It is built for
// every command and directory, so it does no work up front: what it needs
// of the Guard's fields is derived on first use, without allocating when
// the fields are already clean (as a Guard built from real paths is).
type checker struct {
	r   resolver
	out sink // where hits go
	// prefix starts the reason of every hit: the checks of the commands
	// an interpreter's inline code stands for say so.
	prefix string
	self   []string // Guard.SelfNames, as given
	// protectedIn is Guard.Protected as given; protected is its absolute
	// entries, cleaned, once protectedPaths has run.
	protectedIn   []string
	protected     []string
	protectedDone bool
	// protectedLiteral says no protected path holds a pattern character,
	// once protectedPaths has run.
	protectedLiteral bool
	broad            []broad // built on first use
	// ws is Guard.Workspace, cleaned; "" when unknown.
	ws string
	// The candidates of the command's arguments (nArgs of them), which
	// the self-tamper and forbidden-path checks both need, then those of
	// its redirect targets (nRedirs), which all three checks need, are
	// computed once into slab; spans[k] is where word k's are, plus one
	// (zero: not yet computed). A checker judges one command.
	nArgs, nRedirs int
	spans          [maxCached]struct{ start, end int32 }
	slab           []candidate
	pooled         []candidate // an empty slab to start from, when not nil
}

// maxCached bounds the words whose candidates a checker keeps; those of
// the words after are computed at each use.
const maxCached = 16

// argCandidates returns the candidates of argument i (Argv[i+1]), whole and
// embedded, computing them once.
func (c *checker) argCandidates(i int, w shellparse.Word) []candidate {
	if i >= c.nArgs || i >= maxCached {
		return c.r.allCandidates(w, nil)
	}
	if c.spans[i].end == 0 {
		start := c.ready()
		c.slab = c.r.allCandidates(w, c.slab)
		c.spans[i].start, c.spans[i].end = int32(start), int32(len(c.slab)+1)
	}
	return c.cached(i)
}

// redirectCandidates returns the candidates of the target of redirect i
// of the command, computing them once.
func (c *checker) redirectCandidates(i int, rd shellparse.Redirect) []candidate {
	k := c.nArgs + i
	if i >= c.nRedirs || k >= maxCached {
		return c.r.wordCandidates(rd.Target, nil)
	}
	if c.spans[k].end == 0 {
		start := c.ready()
		c.slab = c.r.wordCandidates(rd.Target, c.slab)
		c.spans[k].start, c.spans[k].end = int32(start), int32(len(c.slab)+1)
	}
	return c.cached(k)
}

// ready makes the slab and returns where the next candidates go.
func (c *checker) ready() int {
	if c.slab == nil {
		c.slab = make([]candidate, 0, min(c.nArgs+c.nRedirs, maxCached)+2)
	}
	return len(c.slab)
}

// cached returns the candidates of word k, capped: whoever appends to them
// gets a copy.
func (c *checker) cached(k int) []candidate {
	sp := c.spans[k]
	return c.slab[sp.start : sp.end-1 : sp.end-1]
}

// newChecker returns a checker for cwd that stops at the first hit, with
// what p already derived from g when p is not nil. With p, cwd is what
// resolverCwd makes of the working directory.
func (g Guard) newChecker(p *Prepared, cwd string) checker {
	if p == nil {
		return checker{r: newResolver(g.Home, cwd), self: g.SelfNames, protectedIn: g.Protected, ws: workspaceDir(g.Workspace)}
	}
	return checker{r: resolver{home: p.home, cwd: cwd}, self: g.SelfNames, protectedIn: g.Protected,
		protected: p.protected, protectedDone: true, protectedLiteral: p.protectedLiteral, ws: p.ws}
}

// workspaceDir is the workspace cleaned, "" when it is not absolute. The
// root directory is no workspace the check needs: deleting it is a hit
// already.
func workspaceDir(ws string) string {
	if !strings.HasPrefix(ws, "/") {
		return ""
	}
	if ws = cleanPath(ws); ws == "/" {
		return ""
	}
	return ws
}

// sink receives the hit of the checks: the first one stops them.
type sink struct {
	hit   Hit
	found bool
	// placeRead says fixtureStore was asked about a candidate: the one
	// check whose answer depends on where the working directory lies
	// towards the workspace (wsPlace) beyond what ordinaryDir settles.
	placeRead bool
}

// add records a hit; it returns false to stop.
func (s *sink) add(h Hit) bool {
	s.hit, s.found = h, true
	return false
}

// emit passes a hit on, its reason prefixed for the inline code it was
// found in; it returns false to stop.
func (c *checker) emit(h Hit) bool {
	if c.prefix != "" {
		h.Reason = c.prefix + h.Reason
	}
	return c.out.add(h)
}

// rootForbidden reports whether /root is forbidden: it is, unless it is
// the user's own home.
func (c *checker) rootForbidden() bool {
	return c.r.home != "/root" && !strings.HasPrefix(c.r.home, "/root/")
}

// hasProtected reports whether there is a protected path: an absolute one.
func (c *checker) hasProtected() bool {
	for _, p := range c.protectedIn {
		if strings.HasPrefix(p, "/") {
			return true
		}
	}
	return false
}

// protectedPaths returns the protected paths that are absolute, cleaned.
func (c *checker) protectedPaths() []string {
	if c.protectedDone {
		return c.protected
	}
	c.protectedDone = true
	clean, literal := true, true
	for _, p := range c.protectedIn {
		if !strings.HasPrefix(p, "/") {
			clean = false
			break
		}
		clean, literal = clean && isClean(p), literal && !hasPatternChar(p)
	}
	if clean {
		c.protected, c.protectedLiteral = c.protectedIn, literal
		return c.protected
	}
	literal = true
	for _, p := range c.protectedIn {
		if strings.HasPrefix(p, "/") {
			p = path.Clean(p)
			c.protected = append(c.protected, p)
			literal = literal && !hasPatternChar(p)
		}
	}
	c.protectedLiteral = literal
	return c.protected
}

// selfBase returns the base name a self name stands for, "" when none.
func selfBase(s string) string {
	if s == "" {
		return ""
	}
	if b := path.Base(s); b != "/" && b != "." {
		return b
	}
	return ""
}

func (c *checker) check(cmd shellparse.Command) {
	c.checkOne(cmd)
	if c.out.found {
		return
	}
	// A program written as a glob (/bin/r[m], /usr/bin/?hred) runs whatever
	// it matches: judge it as each program with rules that it may match.
	glob, ok := globbedProgram(cmd)
	if !ok {
		return
	}
	for _, name := range globbedCandidates(c.self) {
		if !shellMatch(glob, name) {
			continue
		}
		alt := cmd
		alt.Dynamic = false
		alt.Argv = append([]shellparse.Word{{Value: name}}, cmd.Argv[1:]...)
		c.checkOne(alt)
		if c.out.found {
			return
		}
	}
}

// globbedProgram returns the base name of a program word that is a glob
// and nothing else dynamic: no expansion, no substitution.
func globbedProgram(cmd shellparse.Command) (string, bool) {
	if len(cmd.Argv) == 0 || !cmd.Argv[0].Dynamic {
		return "", false
	}
	v := cmd.Argv[0].Value
	if strings.ContainsAny(v, "$`") || !strings.ContainsAny(v, "*?[") {
		return "", false
	}
	v = strings.NewReplacer(`"`, "", `'`, "", `\`, "").Replace(v)
	return path.Base(v), true
}

// globbedCandidates are the programs a glob program is judged as: those
// the irrecoverable check has rules for, and mnemos itself.
func globbedCandidates(self []string) []string {
	out := []string{"rm", "dd", "shred", "wipefs", "blkdiscard", "chmod", "chown", "chgrp", "mv", "find",
		"tee", "cp", "rsync", "mkfs", "mke2fs", "mkswap", "mkfs.ext4", "mkfs.xfs", "mkfs.vfat", "mnemos"}
	for _, s := range self {
		if b := selfBase(s); b != "" {
			out = append(out, b)
		}
	}
	return out
}

func (c *checker) checkOne(cmd shellparse.Command) {
	if cmd.Name() == "curl" {
		cmd = curlOutputs(cmd)
	}
	c.nArgs, c.nRedirs, c.slab = max(len(cmd.Argv)-1, 0), len(cmd.Redirects), c.pooled
	c.spans = [maxCached]struct{ start, end int32 }{}
	// The roles of the arguments, which the self-tamper and forbidden-path
	// checks both need.
	if noExec(cmd) {
		return
	}
	var rolesBuf [16]role
	roles := argRoles(cmd.Name(), cmd.Argv, rolesBuf[:])
	_ = c.irrecoverable(cmd) && c.selfTamper(cmd, roles) && c.forbiddenPaths(cmd, roles) && c.recursiveReads(cmd, roles)
}

// curlOutputs returns the command with the files curl's --write-out
// formats write (%output{FILE}, classify.CurlWriteOut) added as words of
// their own, so that each is judged like the file of -o.
func curlOutputs(cmd shellparse.Command) shellparse.Command {
	_, writes := classify.CurlWriteOut(cmd.Argv[1:])
	var extra []shellparse.Word
	for _, w := range writes {
		if !w.Dynamic {
			extra = append(extra, w)
		}
	}
	if len(extra) > 0 {
		cmd.Argv = slices.Concat(cmd.Argv, extra)
	}
	return cmd
}

// subCommands returns the argv the command runs, and, when its program is a
// wrapper the parser did not peel (sudo, nice, timeout, ...), every argv its
// arguments could start with a program the guard has rules for: the guard
// judges all of them. They are appended to out.
func (c *checker) subCommands(cmd shellparse.Command, out [][]shellparse.Word) [][]shellparse.Word {
	if len(cmd.Argv) == 0 {
		return out
	}
	first := len(out)
	out = append(out, cmd.Argv)
	if !isWrapperProgram(cmd.Name()) {
		return out
	}
	if cmd.Name() == "command" && len(cmd.Argv) > 1 && (cmd.Argv[1].Value == "-v" || cmd.Argv[1].Value == "-V") {
		return out // command -v NAME only looks NAME up
	}
	for i := 1; i < len(cmd.Argv) && len(out)-first <= maxSubCommands; i++ {
		w := cmd.Argv[i]
		if w.Dynamic || strings.HasPrefix(w.Value, "-") {
			continue
		}
		if name := path.Base(w.Value); hasRules(name) || c.isSelfName(name) {
			out = append(out, cmd.Argv[i:])
		}
	}
	return out
}

// maxSubCommands bounds the argv judged inside one unpeeled wrapper.
const maxSubCommands = 8

// argvName is the base name of argv's program, "" when dynamic.
func argvName(argv []shellparse.Word) string {
	if len(argv) == 0 || argv[0].Dynamic {
		return ""
	}
	return path.Base(argv[0].Value)
}

// quote shortens a word for a reason line.
func quote(s string) string {
	const max = 120
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return fmt.Sprintf("%q", s)
}
