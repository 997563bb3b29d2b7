package gate

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
	"github.com/mnemos-dev/mnemos/shellparse"
	"github.com/mnemos-dev/mnemos/vaglio"
)

// Links. The guard, the rules and the gate's own checks read the names a
// command writes; the file system follows the symbolic links in them. A
// contained run (or a cloned repository) can leave in the workspace
// l_key -> ~/.ssh/id_rsa, l_home -> ~ or l_cc -> ~/.claude/settings.json,
// and `cat l_key`, the Read tool on l_home/.aws/credentials or a write
// to l_cc then names only the workspace. Under mnemos run the sandbox
// resolves the links as the kernel does and refuses what lies behind
// them; a command an agent runs itself (Request.Unsandboxed), or one where
// the kernel confines nothing, has only this.
//
// So, for a command that runs outside the sandbox or where the kernel
// does not keep the sandbox's promises, every fs access with a static
// absolute path that exists (or, for a write, whose directory does) is
// resolved, one lstat per path element
// not seen before in the decision; where it resolves elsewhere than its
// name says, the command is judged again on the resolved paths: the
// guard on the command with each linked word replaced by where it leads,
// and on `cat PATH` / `tee PATH` of each, the gate's own checks (mnemos's
// state secrets, the agents' hook settings), and, for a write, what runs
// later. A hit denies, naming the link and its target. A command that
// runs outside the sandbox is also decided again by the policy on the
// resolved paths, and the stricter outcome stands (cat l_out -> /srv/x
// is a read outside the workspace).
//
// Recursive reads that follow links met inside the tree (grep -R, rg
// --follow, cp -rL, tar -h, rsync -L, zip -r) are checked, outside the
// sandbox only, by walking the tree without following, at most
// maxFollowWalk entries: each link that leads out of the tree is judged
// as a recursive read of where it leads. A larger tree asks.

// maxFollowWalk bounds the entries walked for one request's recursive
// reads that follow links.
const maxFollowWalk = 50_000

// linkCheck is what judgeLinks needs of the request's judgement.
type linkCheck struct {
	prepared *vaglio.Prepared
	all      vaglio.DirChecker
	// dirs is a copy of the request's: its checker's memo is its own.
	dirs   cmdDirs
	in     policy.Input
	grants policy.GrantChecker
	// stateFiles and stateDirs are namesStateSecret's lists.
	stateFiles, stateDirs []string
}

// A link is an access whose path resolves elsewhere than it names.
type link struct {
	name, real string
	write      bool
}

// linkState is what linkProbe found.
type linkState int

const (
	linkNone linkState = iota
	linkMissing
	linkMaybe
)

// linkResolver resolves paths for one decision: a path that holds no
// link costs one fstatat, and its directory one openat2 the first time
// (linkProbe); one that may is resolved element by element, and the workspace and home directory with it, so that a
// workspace reached through a link of its own (/home/u/proj ->
// /data/proj) names its files as before.
type linkResolver struct {
	ws, home string
	probe    linkProbe
	res      sandbox.Resolver
	aliases  [][2]string // name, real
	aliased  bool
	seen     []resolvedPath
}

type resolvedPath struct {
	p, real string
	write   bool
	ok      bool
}

func newLinkResolver(ws, home string) *linkResolver { return &linkResolver{ws: ws, home: home} }

// resolve returns what the clean absolute path p resolves to, named
// through the workspace or home directory where it lies in either, and
// whether p (or, for a write, its directory) exists.
func (r *linkResolver) resolve(p string, write bool) (string, bool) {
	for _, s := range r.seen {
		if s.p == p && s.write == write {
			return s.real, s.ok
		}
	}
	real, ok := p, true
	switch r.probe.links(p) {
	case linkMissing:
		ok = false
	case linkMaybe:
		real, ok = r.slow(p, write)
	}
	r.seen = append(r.seen, resolvedPath{p: p, real: real, write: write, ok: ok})
	return real, ok
}

func (r *linkResolver) slow(p string, write bool) (string, bool) {
	if !r.aliased {
		r.aliased = true
		for _, d := range []string{r.ws, r.home} {
			if !filepath.IsAbs(d) {
				continue
			}
			d = filepath.Clean(d)
			if real, ok := r.res.Real(d); ok && real != d {
				r.aliases = append(r.aliases, [2]string{d, real})
			}
		}
	}
	real, ok := r.res.Real(p)
	// A write creates what does not exist, through a link to a directory
	// (mkdir -p l_dir/a/b) or a dangling link alike.
	ok = ok || write
	for _, a := range r.aliases {
		if rel, found := strings.CutPrefix(real, a[1]); found && (rel == "" || rel[0] == '/') {
			return a[0] + rel, ok
		}
	}
	return real, ok
}

// linksOf returns the accesses of a command's result that resolve
// elsewhere than they name.
func (r *linkResolver) linksOf(res *policy.Result) []link {
	var out []link
	for _, a := range res.Accesses {
		if a.Dynamic || a.Glob || (a.Capability != classify.FSRead && a.Capability != classify.FSWrite) || !filepath.IsAbs(a.Target) {
			continue
		}
		name := a.Target
		if !cleanAbsPath(name) {
			name = filepath.Clean(name)
		}
		if kernelView(name) {
			continue
		}
		write := a.Capability == classify.FSWrite
		real, ok := r.resolve(name, write)
		if !ok || real == name || slices.ContainsFunc(out, func(l link) bool { return l.name == name && l.write == write }) {
			continue
		}
		out = append(out, link{name: name, real: real, write: write})
	}
	return out
}

// kernelView reports a path below /proc, /sys or /dev, whose links name
// processes and devices, not files a command could plant.
func kernelView(p string) bool {
	for _, d := range []string{"/proc", "/sys", "/dev"} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// judgeLinks judges each command again on the paths its accesses
// resolve to (see above), and reports whether it changed an outcome.
func (g *Gate) judgeLinks(ctx context.Context, req Request, dec *Decision, lc linkCheck) (bool, error) {
	if !req.Unsandboxed && g.sandboxKeepsPromises() {
		// Under mnemos run the kernel resolves every link as it confines
		// the run, and refuses what lies behind one as it refuses the
		// path; checking here too would cost every decision a syscall a
		// path (measured: about a tenth of a 50-command decision).
		return false, nil
	}
	var lr *linkResolver
	changed := false
	walked := 0
	for i := range dec.Commands {
		cd := &dec.Commands[i]
		if cd.Outcome == policy.Deny || cd.Policy == nil || vaglio.NoExec(cd.Command) {
			continue
		}
		if lr == nil {
			lr = newLinkResolver(dec.Workspace, g.cfg.UserHome)
			defer lr.probe.close()
		}
		guard, dirs, _ := lc.dirs.checker(i, lc.all, lc.prepared)
		links := lr.linksOf(cd.Policy)
		if len(links) > 0 {
			c, err := g.judgeLinked(ctx, req, cd, links, guard, dirs, lc)
			if err != nil {
				return changed, err
			}
			changed = changed || c
		}
		if req.Unsandboxed && cd.Outcome != policy.Deny && followsLinks(cd.Command) {
			if why, deny := g.followedLinks(req, cd, dirs, lr, lc, &walked); why != "" {
				if deny {
					cd.Outcome, cd.BlockedBy, cd.DecidedBy = policy.Deny, "guard", "guard"
					cd.Reason = "guard: " + why
				} else if cd.Outcome == policy.Allow {
					cd.Outcome, cd.DecidedBy, cd.Reason = policy.Ask, string(policy.ByFloor), why
				}
				changed = true
			}
		}
	}
	return changed, nil
}

// judgeLinked judges one command whose accesses follow links.
func (g *Gate) judgeLinked(ctx context.Context, req Request, cd *CommandDecision, links []link, guard vaglio.DirChecker, dirs []string, lc linkCheck) (bool, error) {
	home := g.cfg.UserHome
	denyBy := func(l link, why string) bool {
		cd.Outcome, cd.BlockedBy, cd.DecidedBy = policy.Deny, "guard", "guard"
		cd.Reason = "guard: " + g.linkName(req, l) + ": " + why
		return true
	}
	syn := withLinksResolved(cd.Command, links, dirs, home)
	if hit, ok := guard.Check(syn); ok {
		return denyBy(linkIn(links, hit.Word), hit.Reason), nil
	}
	for _, l := range links {
		prog := "cat"
		if l.write {
			prog = "tee"
		}
		one := shellparse.Command{Argv: []shellparse.Word{{Value: prog}, {Value: "--"}, {Value: l.real}}}
		if hit, ok := lc.prepared.Check(one, "/"); ok {
			return denyBy(l, hit.Reason), nil
		}
		capability := classify.FSRead
		if l.write {
			capability = classify.FSWrite
		}
		res := policy.Result{Verb: cd.Policy.Verb, Accesses: []policy.AccessResult{{Access: classify.Access{Capability: capability, Target: l.real}}}}
		if key, ok := namesStateSecret(&res, lc.stateFiles, lc.stateDirs); ok {
			return denyBy(l, "names mnemos's secrets "+key+" (self-tamper: the audit key rewrites the log unnoticed, the state database and hook tickets hold the tokens that let requests through, serve's socket signs a browser in)"), nil
		}
		if f, ok := unwiresAgent(&res, func() []string { return g.wiringFiles(Workspace(req.Cwd)) }); ok {
			return denyBy(l, "writes "+f+", an agent's hook settings that route its commands through mnemos (self-tamper: would unwire the gate)"), nil
		}
		if l.write && classify.RunsLater(l.real, home, lc.in.Place.Path) {
			return denyBy(l, "a write there runs code later, outside any decision (a git hook or configuration, a shell startup file, an agent's hooks or MCP servers...)"), nil
		}
	}
	if !req.Unsandboxed {
		// The sandbox resolves the links itself and refuses what it
		// does not grant.
		return false, nil
	}
	in := lc.in
	in.Command = syn
	in.Place.Dirs = dirs
	res, err := g.cfg.Policy.Evaluate(ctx, in, lc.grants)
	if err != nil {
		return false, err
	}
	if g.cfg.Extra != nil {
		extra, err := g.cfg.Extra.Evaluate(ctx, in, lc.grants)
		if err != nil {
			return false, err
		}
		if extra.Outcome.Restrictiveness() > res.Outcome.Restrictiveness() {
			res = extra
		}
	}
	if res.Outcome.Restrictiveness() <= cd.Outcome.Restrictiveness() {
		return false, nil
	}
	cd.Outcome, cd.DecidedBy = res.Outcome, string(res.DecidedBy)
	cd.Reason = g.linkName(req, links[0]) + ", and it runs outside the sandbox: " + res.Reason
	if res.Outcome == policy.Deny {
		cd.BlockedBy = string(res.DecidedBy)
	}
	return true, nil
}

// linkName says which name leads where: "l_key (a link to ~/.ssh/id_rsa)",
// the name relative to the command's directory when it lies below it.
func (g *Gate) linkName(req Request, l link) string {
	name := l.name
	if rel, err := filepath.Rel(req.Cwd, name); err == nil && filepath.IsAbs(req.Cwd) && !strings.HasPrefix(rel, "..") {
		name = rel
	}
	return shownPath(name) + " (a link to " + shownPath(homeShort(l.real, g.cfg.UserHome)) + ")"
}

// homeShort writes a path below home as ~/...
func homeShort(p, home string) string {
	if home == "" || !filepath.IsAbs(home) {
		return p
	}
	home = filepath.Clean(home)
	if p == home {
		return "~"
	}
	if rel, ok := strings.CutPrefix(p, home+"/"); ok {
		return "~/" + rel
	}
	return p
}

// shownPath quotes a name holding a control character or a space, so
// that a file name cannot add lines or words of its own to a reason.
func shownPath(s string) string {
	for _, c := range s {
		if c < ' ' || c == 0x7f || c == ' ' {
			return strconv.Quote(s)
		}
	}
	return s
}

// linkIn returns the link whose resolved path the guard's matched word
// names, or the first.
func linkIn(links []link, word string) link {
	for _, l := range links {
		if word != "" && (strings.Contains(word, l.real) || strings.Contains(l.real, word)) {
			return l
		}
	}
	return links[0]
}

// withLinksResolved returns the command with each word (or --opt=word
// value) and redirect target that names a linked path replaced by the
// path it resolves to. dirs are the directories the command may start
// in, against which a relative word is read.
func withLinksResolved(cmd shellparse.Command, links []link, dirs []string, home string) shellparse.Command {
	swap := func(w shellparse.Word) shellparse.Word {
		if w.Dynamic || w.Value == "" {
			return w
		}
		prefix, v := "", w.Value
		if strings.HasPrefix(v, "-") {
			opt, val, ok := strings.Cut(v, "=")
			if !ok {
				return w
			}
			prefix, v = opt+"=", val
		}
		var cands []string
		switch {
		case filepath.IsAbs(v):
			cands = append(cands, filepath.Clean(v))
		case !w.TildeLiteral && home != "" && (v == "~" || strings.HasPrefix(v, "~/")):
			cands = append(cands, filepath.Join(home, v[1:]))
		default:
			for _, d := range dirs {
				if filepath.IsAbs(d) {
					cands = append(cands, filepath.Join(d, v))
				}
			}
		}
		for _, c := range cands {
			for _, l := range links {
				if l.name == c {
					w.Value = prefix + l.real
					return w
				}
			}
		}
		return w
	}
	out := cmd
	out.Argv = slices.Clone(cmd.Argv)
	for i := 1; i < len(out.Argv); i++ {
		out.Argv[i] = swap(out.Argv[i])
	}
	out.Redirects = slices.Clone(cmd.Redirects)
	for i := range out.Redirects {
		out.Redirects[i].Target = swap(out.Redirects[i].Target)
	}
	return out
}

// followsLinks reports a command that may read directory trees following
// the links it meets inside them: grep -R, rg -L, ag -f, cp -rL, tar -h,
// rsync -L (and --copy-unsafe-links, -k), zip -r without -y (zip follows
// links unless told to store them), and any program not known to leave
// them alone (diff -r, git diff --no-index, an interpreter given a
// directory): outside the sandbox, what is not known harmless counts as
// following. Listers of names (ls, find, du, tree, stat) read no file.
func followsLinks(cmd shellparse.Command) bool {
	if len(cmd.Argv) == 0 {
		return false // $(<FILE): a redirection, no program
	}
	name := cmd.Name()
	var opts []string
	first := ""
	for i, w := range cmd.Argv[1:] {
		if w.Dynamic {
			continue
		}
		if w.Value == "--" {
			break
		}
		if i == 0 {
			first = w.Value
		}
		if strings.HasPrefix(w.Value, "-") {
			opts = append(opts, w.Value)
		}
	}
	short := func(letter byte) bool {
		for _, o := range opts {
			if len(o) > 1 && o[1] != '-' && strings.IndexByte(o[1:], letter) >= 0 {
				return true
			}
		}
		return false
	}
	long := func(names ...string) bool {
		for _, o := range opts {
			n, _, _ := strings.Cut(o, "=")
			if slices.Contains(names, n) {
				return true
			}
		}
		return false
	}
	switch name {
	case "grep", "egrep", "fgrep":
		return short('R') || long("--dereference-recursive")
	case "rg", "ripgrep":
		return short('L') || long("--follow")
	case "ag":
		return short('f') || long("--follow")
	case "cp":
		return (short('r') || short('R') || short('a') || long("--recursive", "--archive")) && (short('L') || long("--dereference"))
	case "tar", "bsdtar":
		bundled := first != "" && !strings.HasPrefix(first, "-") && strings.Trim(first, "AcdrtuxzjJavfhpP") == "" && strings.ContainsRune(first, 'h')
		return short('h') || long("--dereference") || bundled
	case "rsync":
		return short('L') || short('k') || long("--copy-links", "--copy-unsafe-links", "--copy-dirlinks")
	case "zip":
		return (short('r') || short('R') || long("--recurse-paths")) && !(short('y') || long("--symlinks"))
	case "git":
		// git reads its work tree's links as links (their target is
		// the content it stores); only diff --no-index reads what
		// two plain paths hold.
		return slices.ContainsFunc(cmd.Argv, func(w shellparse.Word) bool { return w.Value == "--no-index" })
	case "ls", "dir", "vdir", "tree", "du", "stat", "find", "fd", "fdfind", "exa", "eza", "lsd", "realpath", "readlink",
		"test", "[", "[[", "cd", "pushd", "popd", "echo", "printf", "true", "false", ":", "mkdir", "touch", "rm", "rmdir", "chmod", "chown":
		return false
	}
	return true
}

// followedLinks walks the directories a command that follows links reads
// (without following them) and judges each link that leads out of them
// as a recursive read of where it leads: a hit is a deny (why, true); a
// walk past maxFollowWalk entries (counted in walked, across the
// request) asks (why, false).
func (g *Gate) followedLinks(req Request, cd *CommandDecision, dirs []string, lr *linkResolver, lc linkCheck, walked *int) (string, bool) {
	var roots []string
	addRoot := func(p string) {
		if !filepath.IsAbs(p) || kernelView(p) {
			return
		}
		real, ok := lr.resolve(filepath.Clean(p), false)
		if fi, err := os.Stat(real); ok && err == nil && fi.IsDir() && !slices.Contains(roots, real) {
			roots = append(roots, real)
		}
	}
	for _, a := range cd.Policy.Accesses {
		// git's own read of its repository follows no link (followsLinks):
		// only what it is given to compare counts.
		if a.Capability == classify.FSRead && !a.Dynamic && !a.Glob && cd.Command.Name() != "git" {
			addRoot(a.Target)
		}
	}
	// A program the catalog does not read paths for (tar, zip): its
	// operands that are directories.
	for _, w := range cd.Command.Argv[1:] {
		if w.Dynamic || strings.HasPrefix(w.Value, "-") || w.Value == "" {
			continue
		}
		if filepath.IsAbs(w.Value) {
			addRoot(w.Value)
			continue
		}
		for _, d := range dirs {
			addRoot(filepath.Join(d, w.Value))
		}
	}
	under := func(p string) bool {
		return slices.ContainsFunc(roots, func(r string) bool { return classify.WithinClean(r, p) })
	}
	name := cd.Command.Name()
	errStop := errors.New("stop")
	var why string
	deny := false
	for k := 0; k < len(roots) && why == ""; k++ {
		root := roots[k]
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if *walked++; *walked > maxFollowWalk {
				why = name + " follows the links it meets as it reads " + shownPath(homeShort(root, g.cfg.UserHome)) +
					", outside the sandbox, and the tree is too large to check each link (over " + strconv.Itoa(maxFollowWalk) + " entries)"
				return errStop
			}
			if d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			real, ok := lr.resolve(p, false)
			if !ok || under(real) {
				return nil
			}
			read := shellparse.Command{Argv: []shellparse.Word{{Value: "grep"}, {Value: "-r"}, {Value: "-e"}, {Value: "x"}, {Value: "--"}, {Value: real}}}
			l := link{name: p, real: real}
			if hit, found := lc.prepared.Check(read, "/"); found {
				why, deny = name+" follows "+g.linkName(req, l)+": "+hit.Reason, true
				return errStop
			}
			res := policy.Result{Accesses: []policy.AccessResult{{Access: classify.Access{Capability: classify.FSRead, Target: real}}}}
			if key, found := namesStateSecret(&res, lc.stateFiles, lc.stateDirs); found {
				why, deny = name+" follows "+g.linkName(req, l)+": names mnemos's secrets "+key, true
				return errStop
			}
			if fi, err := os.Stat(real); err == nil && fi.IsDir() {
				// Following it reads that tree too.
				roots = append(roots, real)
			}
			return nil
		})
	}
	return why, deny
}

// worstCommand is the index of the most restrictive command's decision.
func worstCommand(cmds []CommandDecision) int {
	worst := 0
	for i, c := range cmds {
		if c.Outcome.Restrictiveness() > cmds[worst].Outcome.Restrictiveness() {
			worst = i
		}
	}
	return worst
}

// cleanAbsPath reports an absolute path filepath.Clean leaves as it is.
func cleanAbsPath(p string) bool {
	if len(p) > 1 && p[len(p)-1] == '/' {
		return false
	}
	return !strings.Contains(p, "//") && !strings.Contains(p, "/./") && !strings.Contains(p, "/../") &&
		!strings.HasSuffix(p, "/.") && !strings.HasSuffix(p, "/..")
}
