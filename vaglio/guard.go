package vaglio

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

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
	// Index is the position of the command in the script (CheckScript);
	// 0 from Check.
	Index int `json:"index"`
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
	hit, found := g.checkIn(cmd, cwd)
	if found || len(cmd.Wrappers) == 0 {
		return hit, found
	}
	for _, dir := range commandDirs(g, cmd, cwd)[1:] {
		if hit, found = g.checkIn(cmd, dir); found {
			break
		}
	}
	return hit, found
}

// checkIn returns the first hit for cmd run in dir.
func (g Guard) checkIn(cmd shellparse.Command, dir string) (Hit, bool) {
	var hit Hit
	found := false
	g.newChecker(dir).check(cmd, func(h Hit) bool {
		hit, found = h, true
		return false
	})
	return hit, found
}

// commandDirs returns the directories a command runs in: cwd, and the
// directory a wrapper changes to (env -C DIR, sudo --chdir=DIR, nsenter
// --wd=DIR, unshare --wd=DIR), resolved against cwd. A directory computed
// at run time may be any: it is taken as "/".
func commandDirs(g Guard, cmd shellparse.Command, cwd string) []string {
	dirs := []string{cwd}
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
			if d := r.abs(r.expandHome(dir)); !contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// CheckScript returns every hit in a script, in command order. Commands
// after a static "cd DIR" are checked in DIR as well as in cwd (and in every
// earlier cd target), since the guard does not follow control flow.
func (g Guard) CheckScript(s *shellparse.Script, cwd string) []Hit {
	if s == nil {
		return nil
	}
	var hits []Hit
	dirs := []string{g.newChecker(cwd).r.cwd}
	for i, cmd := range s.Commands {
		seen := len(hits)
		here := dirs
		for _, dir := range dirs {
			if len(cmd.Wrappers) == 0 {
				break
			}
			for _, d := range commandDirs(g, cmd, dir)[1:] {
				if !contains(here, d) {
					here = append(slices.Clip(here), d)
				}
			}
		}
		for _, dir := range here {
			c := g.newChecker(dir)
			c.check(cmd, func(h Hit) bool {
				h.Index = i
				for _, old := range hits[seen:] {
					if old == h {
						return true
					}
				}
				hits = append(hits, h)
				return true
			})
		}
		dirs = appendCdTargets(g, cmd, dirs)
	}
	return hits
}

// maxDirs bounds the working directories CheckScript tracks.
const maxDirs = 16

// appendCdTargets adds the directory a static cd or pushd moves to, resolved
// against every directory known so far.
func appendCdTargets(g Guard, cmd shellparse.Command, dirs []string) []string {
	name := cmd.Name()
	if name != "cd" && name != "pushd" {
		return dirs
	}
	var target shellparse.Word
	for i, w := range cmd.Argv[1:] {
		if w.Value == "--" {
			if i+2 < len(cmd.Argv) {
				target = cmd.Argv[i+2]
			}
			break
		}
		if w.Dynamic || w.Value == "-" || !strings.HasPrefix(w.Value, "-") {
			target = w
			break
		}
	}
	if target.Dynamic || target.Value == "-" {
		return dirs // unknown, or the previous directory
	}
	n := len(dirs)
	for _, d := range dirs[:n] {
		r := newResolver(g.Home, d)
		next := r.home // a bare cd goes home
		if target.Value != "" {
			next = r.abs(r.expandHome(target.Value))
		}
		if len(dirs) < maxDirs && !contains(dirs, next) {
			dirs = append(dirs, next)
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

// checker is the guard prepared for one working directory.
type checker struct {
	r             resolver
	rootForbidden bool
	protected     []string // absolute, cleaned
	// protectedRules are the protected paths as rule patterns, built on
	// first use.
	protectedRules []string
	selfNames      []string // base names
	selfPaths      []string // cleaned absolute paths
	broad          []broad  // built on first use
	// args caches the candidates of the command's arguments, which the
	// self-tamper and forbidden-path checks both need. A checker judges
	// one command.
	args [][]candidate
}

// argCandidates returns the candidates of argument i (Argv[i+1]), whole and
// embedded, computing them once.
func (c *checker) argCandidates(i int, w shellparse.Word) []candidate {
	if i >= len(c.args) {
		return c.r.allCandidates(w, nil)
	}
	if c.args[i] == nil {
		c.args[i] = c.r.allCandidates(w, make([]candidate, 0, 1))
	}
	return c.args[i]
}

func (g Guard) newChecker(cwd string) *checker {
	c := &checker{r: newResolver(g.Home, cwd)}
	c.rootForbidden = c.r.home != "/root" && !strings.HasPrefix(c.r.home, "/root/")
	for _, p := range g.Protected {
		if strings.HasPrefix(p, "/") {
			p = path.Clean(p)
			c.protected = append(c.protected, p)
		}
	}
	c.selfNames = []string{"mnemos"}
	for _, s := range g.SelfNames {
		if s == "" {
			continue
		}
		if strings.HasPrefix(s, "/") {
			c.selfPaths = append(c.selfPaths, path.Clean(s))
		}
		if b := path.Base(s); b != "/" && b != "." && !contains(c.selfNames, b) {
			c.selfNames = append(c.selfNames, b)
		}
	}
	return c
}

// emitFunc receives hits; it returns false to stop.
type emitFunc func(Hit) bool

func (c *checker) check(cmd shellparse.Command, emit emitFunc) {
	if len(cmd.Argv) > 1 {
		c.args = make([][]candidate, len(cmd.Argv)-1)
	}
	_ = c.irrecoverable(cmd, emit) && c.selfTamper(cmd, emit) && c.forbiddenPaths(cmd, emit)
}

// subCommands returns the argv the command runs, and, when its program is a
// wrapper the parser did not peel (sudo, nice, timeout, ...), every argv its
// arguments could start with a program the guard has rules for: the guard
// judges all of them.
func (c *checker) subCommands(cmd shellparse.Command) [][]shellparse.Word {
	if len(cmd.Argv) == 0 {
		return nil
	}
	out := [][]shellparse.Word{cmd.Argv}
	if !isWrapperProgram(cmd.Name()) {
		return out
	}
	if cmd.Name() == "command" && len(cmd.Argv) > 1 && (cmd.Argv[1].Value == "-v" || cmd.Argv[1].Value == "-V") {
		return out // command -v NAME only looks NAME up
	}
	for i := 1; i < len(cmd.Argv) && len(out) <= maxSubCommands; i++ {
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
