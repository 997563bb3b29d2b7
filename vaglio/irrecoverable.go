package vaglio

import (
	"path"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// The irrecoverable check (seed 003, Law 1: no irrecoverable state): what
// takes the system out of a state from which it can still respond. It reads
// the parsed command, so "/bin/rm -r -f -- /" and "sudo rm -rf ~" are the
// same rm, and a message mentioning "rm -rf /" is only a message.

// hasRules reports the programs the irrecoverable check has rules for.
func hasRules(name string) bool {
	switch name {
	case "rm", "dd", "shred", "wipefs", "blkdiscard", "chmod", "chown", "chgrp", "mv", "find", "tee", "cp", "rsync":
		return true
	}
	return isMkfs(name)
}

// isMkfs reports the programs that create a file system or swap area.
func isMkfs(name string) bool {
	switch name {
	case "mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "mkexfatfs", "mkreiserfs":
		return true
	}
	return strings.HasPrefix(name, "mkfs.")
}

// broad is a directory whose recursive removal, move or permission change
// cannot be undone.
type broad struct {
	path    string
	display string
	why     string
}

// systemDirs are the top-level system directories (and macOS's home
// directories' parent, /Users).
func systemDirs() [18]string {
	return [...]string{"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32",
		"/opt", "/proc", "/root", "/sbin", "/srv", "/sys", "/usr", "/var", "/Users"}
}

// systemSubdirs are the directories below them that hold the installed
// system as a whole: its programs, libraries and shared data, and the
// state of its package manager and services.
func systemSubdirs() [10]string {
	return [...]string{"/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec",
		"/usr/include", "/usr/share", "/usr/local", "/var/lib"}
}

func (c *checker) broadDirs() []broad {
	if c.broad != nil {
		return c.broad
	}
	sys := systemDirs()
	out := make([]broad, 0, len(sys)+len(systemSubdirs())+4)
	out = append(out, broad{"/", "/", "the root directory"})
	home := c.r.home
	out = append(out, broad{home, "~", "the home directory"})
	if parent := path.Dir(home); parent != home {
		out = append(out, broad{parent, "~/..", "the directory holding the home directory"})
	}
	for _, d := range sys {
		out = append(out, broad{d, d, "a top-level system directory"})
	}
	for _, d := range systemSubdirs() {
		out = append(out, broad{d, d, "a system directory"})
	}
	// Every home directory, not only the user's: "/home/*" is a pattern.
	out = append(out, broad{"/home/*", "/home/*", "a home directory"}, broad{"/Users/*", "/Users/*", "a home directory"})
	c.broad = out
	return out
}

// broadTarget reports whether a candidate names, or as a glob may name, a
// broad directory, or everything in one ("/*", "~/*", "/usr/*").
func (c *checker) broadTarget(cd candidate) (b broad, contents, ok bool) {
	if cd.openDir || cd.traversed {
		return broad{}, false, false
	}
	cd = cd.withElems()
	dirs := c.broadDirs()
	if n := len(cd.elems); cd.glob && n > 0 && wildBase(cd.elems[n-1]) {
		dir := path.Dir(cd.path)
		parent := newCandidate(dir, hasMeta(dir), false, cd.word)
		for _, d := range dirs {
			if matchRule(d.pattern(), "", parent, false) {
				return d, true, true
			}
		}
	}
	for _, d := range dirs {
		if matchRule(d.pattern(), "", cd, false) {
			return d, false, true
		}
	}
	return broad{}, false, false
}

// pattern is the rule pattern naming the directory: its path, escaped,
// except for "/home/*" and "/Users/*", which name every home directory.
func (b broad) pattern() string {
	if b.path == "/home/*" || b.path == "/Users/*" {
		return b.path
	}
	return escapeGlob(b.path)
}

// wildBase reports a last path element that matches every name: "*", ".*".
func wildBase(b string) bool {
	t := strings.TrimPrefix(b, ".")
	return t != "" && strings.Trim(t, "*") == ""
}

func (b broad) describe(contents bool) (pattern, what string) {
	if contents {
		p := strings.TrimSuffix(b.display, "/") + "/*"
		return p, "everything in " + b.why
	}
	return b.display, b.why
}

func irrecoverableHit(pattern, word, reason string) Hit {
	return Hit{Check: CheckIrrecoverable, Pattern: pattern, Word: word, Reason: reason}
}

// irrecoverable runs the check on every argv the command may run, on its
// redirects, its function context and its find wrappers. It returns false
// when emit asked to stop.
func (c *checker) irrecoverable(cmd shellparse.Command) bool {
	var subBuf [2][]shellparse.Word
	for _, argv := range c.subCommands(cmd, subBuf[:0]) {
		if !c.irrecoverableArgv(argv) {
			return false
		}
	}
	for i, rd := range cmd.Redirects {
		if !redirectWrites(rd) {
			continue
		}
		for _, cd := range c.redirectCandidates(i, rd) {
			if r, ok := c.deviceHit(cd, false); ok {
				h := irrecoverableHit(r.pattern, rd.Target.Value,
					"redirect "+rd.Op+" onto "+quote(rd.Target.Value)+" (irrecoverable: overwrites "+r.why+")")
				if !c.emit(h) {
					return false
				}
			}
		}
	}
	if fn, ok := forkBomb(cmd); ok {
		h := irrecoverableHit("fork bomb", fn,
			"function "+quote(fn)+" calls itself from its own body in a pipeline or in the background (irrecoverable: fork bomb)")
		if !c.emit(h) {
			return false
		}
	}
	if !c.inlineIrrecoverable(cmd) {
		return false
	}
	return c.findWrapper(cmd)
}

// redirectWrites is Redirect.Writes plus ">&" onto a file name (bash's
// ">& file" writes both outputs there).
func redirectWrites(rd shellparse.Redirect) bool {
	if rd.Writes() {
		return true
	}
	if rd.Op == ">&" {
		v := rd.Target.Value
		return v != "-" && strings.Trim(v, "0123456789") != ""
	}
	return false
}

func (c *checker) irrecoverableArgv(argv []shellparse.Word) bool {
	name := argvName(argv)
	switch {
	case name == "rm":
		return c.rm(argv)
	case isMkfs(name) && !onlyHelp(argv[1:]) && !c.mkfsImage(argv[1:]):
		word := name
		if ops := operands(argv[1:]); len(ops) > 0 {
			word = ops[len(ops)-1].Value
		}
		return c.emit(irrecoverableHit(name, word,
			name+" on "+quote(word)+" (irrecoverable: creates a file system, erasing what was there)"))
	case name == "dd":
		for _, w := range argv[1:] {
			v, ok := strings.CutPrefix(w.Value, "of=")
			if !ok {
				continue
			}
			target := shellparse.Word{Value: v, Dynamic: w.Dynamic}
			if !c.deviceOperand(name, "of=", target, true) {
				return false
			}
		}
	case name == "shred" || name == "wipefs" || name == "blkdiscard":
		for _, w := range operands(argv[1:]) {
			if !c.deviceOperand(name, "", w, true) {
				return false
			}
		}
	case name == "tee" || name == "cp":
		for _, w := range operands(argv[1:]) {
			if !c.deviceOperand(name, "", w, false) {
				return false
			}
		}
	case name == "chmod" || name == "chown" || name == "chgrp":
		return c.chmod(name, argv)
	case name == "mv":
		return c.mv(argv)
	case name == "find":
		return c.find(argv)
	case name == "rsync":
		return c.rsync(argv)
	}
	return true
}

// rsync: with a delete option (--delete, --delete-after, --del, ...) it
// removes from its destination everything the source lacks, so syncing an
// empty directory onto ~ empties it: the destination (its last operand,
// when local) counts as a recursive delete. With --remove-source-files it
// removes what it sent: the sources count as moved away.
func (c *checker) rsync(argv []shellparse.Word) bool {
	del, removeSources := false, false
	var ops []shellparse.Word
	args := argv[1:]
	end := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		switch {
		case end || v == "-" || !strings.HasPrefix(v, "-") && !w.Dynamic:
			ops = append(ops, w)
		case w.Dynamic:
			// "$OPTS" may be --delete; it may also be a path.
			del = true
			ops = append(ops, w)
		case v == "--":
			end = true
		case v == "--del" || strings.HasPrefix(v, "--delete"):
			del = true
		case v == "--remove-source-files" || v == "--remove-sent-files":
			removeSources = true
		case strings.HasPrefix(v, "--"):
			if !strings.Contains(v, "=") && rsyncValued(v) {
				i++
			}
		default:
			// A short option that takes a value takes the rest of the
			// cluster, or the next word.
			if j := strings.IndexAny(v[1:], "efBTM@"); j >= 0 && j+2 == len(v) {
				i++
			}
		}
	}
	if len(ops) < 2 {
		return true // one operand: rsync lists it
	}
	dest := ops[len(ops)-1]
	if del && !remotePath(dest.Value) {
		if !c.deleteOperands("rsync --delete", "recursive delete of ", ops[len(ops)-1:], wsSelf) {
			return false
		}
	}
	if removeSources {
		var local []shellparse.Word
		for _, w := range ops[:len(ops)-1] {
			if !remotePath(w.Value) {
				local = append(local, w)
			}
		}
		return c.broadOperands("rsync --remove-source-files", "moves ", local)
	}
	return true
}

// rsyncValued reports rsync's long options whose value may be the next
// word.
func rsyncValued(opt string) bool {
	switch opt {
	case "--rsh", "--rsync-path", "--exclude", "--include", "--filter", "--exclude-from", "--include-from",
		"--files-from", "--temp-dir", "--partial-dir", "--backup-dir", "--compare-dest", "--copy-dest",
		"--link-dest", "--suffix", "--chmod", "--chown", "--usermap", "--groupmap", "--log-file",
		"--log-file-format", "--out-format", "--password-file", "--port", "--address", "--sockopts",
		"--timeout", "--contimeout", "--bwlimit", "--max-size", "--min-size", "--max-delete", "--max-alloc",
		"--block-size", "--checksum-choice", "--cc", "--compress-choice", "--zc", "--compress-level", "--zl",
		"--skip-compress", "--info", "--debug", "--iconv", "--protocol", "--modify-window", "--stop-after",
		"--stop-at", "--write-batch", "--only-write-batch", "--read-batch", "--remote-option", "--outbuf",
		"--checksum-seed", "--copy-as", "--early-input":
		return true
	}
	return false
}

// remotePath reports an rsync operand on another host: "host:path",
// "user@host:path", "host::module" or an rsync:// URL (a colon before
// any slash).
func remotePath(v string) bool {
	i := strings.IndexByte(v, ':')
	return i > 0 && !strings.Contains(v[:i], "/")
}

// mkfsImage reports a file system made in an image file inside the
// workspace ("mkfs.ext4 disk.img", "mkfs.vfat -C fs.img 1024"): an
// ordinary write of that file, not a disk. Every word that is not an
// option (the device, a size or block count, and option values the
// guard does not tell apart, such as a label) must be a number or a
// static path strictly inside the workspace and outside /dev; anything
// computed at run time, a glob, a device, or a path elsewhere keeps the
// hit.
func (c *checker) mkfsImage(args []shellparse.Word) bool {
	if c.ws == "" {
		return false
	}
	ops := operands(args)
	if len(ops) == 0 {
		return false
	}
	image := false
	for _, w := range ops {
		if w.Dynamic || hasMeta(w.Value) || strings.HasPrefix(w.Value, "~") || strings.HasPrefix(w.Value, "$") {
			return false
		}
		if blockCount(w.Value) {
			continue
		}
		if strings.Contains(w.Value, "..") {
			return false
		}
		p := c.r.abs(w.Value)
		if p == c.ws || !inside(p, c.ws) || inside(p, "/dev") {
			return false
		}
		image = true
	}
	return image
}

// blockCount reports a size or block count as mkfs programs take it: digits,
// with an optional unit suffix ("1024", "10M", "2g").
func blockCount(s string) bool {
	t := strings.TrimRight(s, "kKmMgGtTpPeEsb")
	return t != "" && len(s)-len(t) <= 2 && strings.Trim(t, "0123456789") == ""
}

// onlyHelp reports arguments that only ask a program for its usage or
// version ("mkfs --help", "mkfs.ext4 -V"), with nothing to work on.
func onlyHelp(args []shellparse.Word) bool {
	if len(args) == 0 {
		return false
	}
	for _, a := range args {
		switch a.Value {
		case "-h", "--help", "-V", "--version", "-?":
		default:
			return false
		}
		if a.Dynamic {
			return false
		}
	}
	return true
}

// deviceOperand emits a hit when w names a block device or memory. could
// makes a word whose tail is computed ("/dev/$DISK") count.
func (c *checker) deviceOperand(name, prefix string, w shellparse.Word, could bool) bool {
	for _, cd := range c.r.wordCandidates(w, nil) {
		if r, ok := c.deviceHit(cd, could); ok {
			h := irrecoverableHit(name+" "+prefix+r.pattern, w.Value,
				name+" "+prefix+quote(w.Value)+" (irrecoverable: overwrites "+r.why+")")
			return c.emit(h)
		}
	}
	return true
}

func (c *checker) deviceHit(cd candidate, could bool) (pathRule, bool) {
	if cd.traversed {
		return pathRule{}, false
	}
	if !cd.glob && cd.path != "/" && !strings.HasPrefix(cd.path, "/dev/") && cd.path != "/dev" {
		// Every device rule lies below /dev (TestDeviceRulesUnderDev): a
		// literal path neither there nor above it matches none.
		return pathRule{}, false
	}
	cd = cd.withElems()
	for _, r := range deviceRules() {
		if matchRule(r.pattern, "", cd, could && cd.openDir) {
			return r, true
		}
	}
	return pathRule{}, false
}

// operands returns the words that are not options ("--" ends options). A
// dynamic word counts as an operand.
func operands(args []shellparse.Word) []shellparse.Word {
	var out []shellparse.Word
	end := false
	for _, w := range args {
		switch {
		case end || w.Dynamic || w.Value == "-" || !strings.HasPrefix(w.Value, "-"):
			out = append(out, w)
		case w.Value == "--":
			end = true
		}
	}
	return out
}

// longPrefix reports whether opt (before any "=") is an abbreviation
// getopt accepts for the long option full.
func longPrefix(opt, full string) bool {
	opt, _, _ = strings.Cut(opt, "=")
	return len(opt) >= 3 && strings.HasPrefix(full, opt)
}

// rmRecursive reports whether an rm may recurse: -r, -R, --recursive, or a
// computed word that could be one of them.
func rmRecursive(argv []shellparse.Word) bool {
	for _, w := range argv[1:] {
		v := w.Value
		switch {
		case w.Dynamic:
			return true
		case v == "--":
			return false
		case strings.HasPrefix(v, "--"):
			if longPrefix(v, "--recursive") {
				return true
			}
		case strings.HasPrefix(v, "-") && strings.ContainsAny(v[1:], "rR"):
			return true
		}
	}
	return false
}

// rm: a recursive delete of a broad directory, or --no-preserve-root.
func (c *checker) rm(argv []shellparse.Word) bool {
	recursive := false
	var ops []shellparse.Word
	end := false
	for _, w := range argv[1:] {
		v := w.Value
		switch {
		case end || v == "-" || !strings.HasPrefix(v, "-") && !w.Dynamic:
			ops = append(ops, w)
		case w.Dynamic:
			// "$FLAGS" may be -rf; it may also be a file.
			recursive = true
			ops = append(ops, w)
		case v == "--":
			end = true
		case strings.HasPrefix(v, "--"):
			if longPrefix(v, "--no-preserve-root") {
				return c.emit(irrecoverableHit("rm --no-preserve-root", v,
					"rm "+v+" (irrecoverable: lifts rm's protection of the root directory)"))
			}
			if longPrefix(v, "--recursive") {
				recursive = true
			}
		case strings.ContainsAny(v[1:], "rR"):
			recursive = true
		}
	}
	if !recursive {
		return true
	}
	return c.deleteOperands("rm -r", "recursive delete of ", ops, wsSelf)
}

func (c *checker) broadOperands(what, verb string, ops []shellparse.Word) bool {
	return c.deleteOperands(what, verb, ops, wsNone)
}

// wsReach says which operands of a delete the workspace check counts.
type wsReach int

const (
	wsNone  wsReach = iota // not a delete: the workspace is not judged
	wsAbove                // a directory holding the workspace
	wsSelf                 // the workspace itself too
)

// deleteOperands is broadOperands for a delete: an operand that is no
// broad directory but is the workspace (with wsSelf) or holds it is a hit
// as well.
func (c *checker) deleteOperands(what, verb string, ops []shellparse.Word, reach wsReach) bool {
	for _, w := range ops {
		for _, cd := range c.r.wordCandidates(w, nil) {
			if b, contents, ok := c.broadTarget(cd); ok {
				p, why := b.describe(contents)
				h := irrecoverableHit(what+" "+p, w.Value, what+" on "+quote(w.Value)+" (irrecoverable: "+verb+why+")")
				if !c.emit(h) {
					return false
				}
				break
			}
			if reach == wsNone {
				continue
			}
			if reach == wsSelf && c.workspaceGit(cd) {
				h := irrecoverableHit(what+" WORKSPACE/.git", w.Value, what+" on "+quote(w.Value)+
					" (irrecoverable: "+verb+"the workspace's repository, with every commit not pushed)")
				if !c.emit(h) {
					return false
				}
				break
			}
			self, ok := c.workspaceTarget(cd)
			if !ok || self && reach != wsSelf {
				continue
			}
			p, why := "WORKSPACE/..", "a directory holding the workspace"
			if self {
				p, why = "WORKSPACE", "the workspace"
			}
			h := irrecoverableHit(what+" "+p, w.Value, what+" on "+quote(w.Value)+" (irrecoverable: "+verb+why+")")
			if !c.emit(h) {
				return false
			}
			break
		}
	}
	return true
}

// workspaceTarget reports whether a candidate names, or as a glob may
// name, the workspace (self) or a directory above it.
func (c *checker) workspaceTarget(cd candidate) (self, ok bool) {
	ws := c.ws
	if ws == "" || cd.openDir || cd.traversed {
		return false, false
	}
	if !cd.glob {
		if !inside(ws, cd.path) {
			return false, false
		}
		return cd.path == ws, true
	}
	cd = cd.withElems()
	if !matchRule(escapeGlob(ws), "", cd, true) {
		return false, false
	}
	return len(cd.elems) == len(pathElems(ws)), true
}

// workspaceGit reports whether a candidate names, or as a glob may name,
// the workspace's .git directory, or the objects or refs in it.
func (c *checker) workspaceGit(cd candidate) bool {
	ws := c.ws
	if ws == "" || cd.openDir || cd.traversed {
		return false
	}
	if !cd.glob {
		p, ok := strings.CutPrefix(cd.path, strings.TrimSuffix(ws, "/")+"/.git")
		return ok && (p == "" || p == "/objects" || p == "/refs")
	}
	git := escapeGlob(strings.TrimSuffix(ws, "/")) + "/.git"
	return matchRule(git, "", cd, false) || matchRule(git+"/objects", "", cd, false) || matchRule(git+"/refs", "", cd, false)
}

// chmod, chown, chgrp: -R on a broad directory.
func (c *checker) chmod(name string, argv []shellparse.Word) bool {
	recursive, reference := false, false
	var ops []shellparse.Word
	end := false
	for _, w := range argv[1:] {
		v := w.Value
		switch {
		case end || v == "-" || !strings.HasPrefix(v, "-") && !w.Dynamic:
			ops = append(ops, w)
		case w.Dynamic:
			recursive = true
			ops = append(ops, w)
		case v == "--":
			end = true
		case strings.HasPrefix(v, "--"):
			if longPrefix(v, "--recursive") {
				recursive = true
			}
			if longPrefix(v, "--reference") {
				reference = true
			}
		case strings.ContainsRune(v[1:], 'R'):
			recursive = true
		}
	}
	if !recursive {
		return true
	}
	if !reference && len(ops) > 0 {
		ops = ops[1:] // the mode or owner
	}
	return c.broadOperands(name+" -R", "recursive permission or owner change of ", ops)
}

// mv: moving a broad directory away.
func (c *checker) mv(argv []shellparse.Word) bool {
	var ops []shellparse.Word
	targetDir := false
	end := false
	args := argv[1:]
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		switch {
		case end || w.Dynamic || v == "-" || !strings.HasPrefix(v, "-"):
			ops = append(ops, w)
		case v == "--":
			end = true
		case v == "-t" || v == "-S":
			targetDir = targetDir || v == "-t"
			i++
		case longPrefix(v, "--target-directory"):
			targetDir = true
			if !strings.Contains(v, "=") {
				i++
			}
		case strings.HasPrefix(v, "-t"):
			targetDir = true
		}
	}
	if !targetDir && len(ops) > 0 {
		ops = ops[:len(ops)-1]
	}
	return c.broadOperands("mv", "moves ", ops)
}

// find: -delete (or -exec rm) from a broad starting point.
func (c *checker) find(argv []shellparse.Word) bool {
	var buf [16]string
	args := buf[:0]
	for _, w := range argv[1:] {
		args = append(args, w.Value)
	}
	if !findDeletes(args) {
		return true
	}
	return c.findStarts(args, argv[1:])
}

// findDeletes reports whether find's expression deletes what it finds.
func findDeletes(args []string) bool {
	for i, a := range args {
		switch a {
		case "-delete":
			return true
		case "-exec", "-execdir", "-ok", "-okdir":
			if i+1 < len(args) && deletes(path.Base(args[i+1])) {
				return true
			}
		}
	}
	return false
}

// deletes reports programs that delete the files they are given.
func deletes(name string) bool {
	switch name {
	case "rm", "shred", "unlink", "rmdir":
		return true
	}
	return false
}

// findStarts checks find's starting points (the words before its
// expression; "." when there are none). words carries dynamic flags when
// known.
func (c *checker) findStarts(args []string, words []shellparse.Word) bool {
	var starts []shellparse.Word
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-H" || a == "-L" || a == "-P" || strings.HasPrefix(a, "-O") {
			continue
		}
		if a == "-D" {
			i++
			continue
		}
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			break
		}
		w := shellparse.Word{Value: a}
		if i < len(words) {
			w = words[i]
		}
		starts = append(starts, w)
	}
	if len(starts) == 0 {
		starts = []shellparse.Word{{Value: "."}}
	}
	// A start that holds the workspace deletes it. The workspace itself
	// loses all it holds, .git too, only when nothing in the expression
	// picks what is deleted ("find . -delete"); "find . -name '*.o'
	// -delete" is ordinary cleaning.
	reach := wsAbove
	if findEverything(args) {
		reach = wsSelf
	}
	return c.deleteOperands("find -delete", "deletes everything under ", starts, reach)
}

// findEverything reports a find expression that deletes everything it
// meets: nothing but -delete (or a deleting -exec), and options that pick
// no file (-depth, -xdev, -mindepth N, ...).
func findEverything(args []string) bool {
	i := 0
	for i < len(args) && (!strings.HasPrefix(args[i], "-") || args[i] == "-H" || args[i] == "-L" || args[i] == "-P" ||
		strings.HasPrefix(args[i], "-O") || args[i] == "-D") {
		if args[i] == "-D" {
			i++
		}
		i++
	}
	for ; i < len(args); i++ {
		switch a := args[i]; a {
		case "-delete", "-depth", "-d", "-xdev", "-mount", "-ignore_readdir_race", "-noleaf", "-print", "-print0", "-true":
		case "-mindepth":
			i++
		case "-exec", "-execdir", "-ok", "-okdir":
			if i+1 >= len(args) || !deletes(path.Base(args[i+1])) {
				return false
			}
			for i++; i < len(args) && args[i] != ";" && args[i] != "+"; i++ {
			}
		default:
			return false
		}
	}
	return true
}

// findWrapper handles "find DIR -exec rm ..." after the parser peeled the
// find: the command is the rm, the starting points are in the wrapper.
func (c *checker) findWrapper(cmd shellparse.Command) bool {
	if !deletes(cmd.Name()) {
		return true
	}
	for _, w := range cmd.Wrappers {
		if len(w.Argv) == 0 || path.Base(w.Argv[0]) != "find" {
			continue
		}
		if !c.findStarts(w.Argv[1:], nil) {
			return false
		}
	}
	return true
}

// forkBomb reports a command that calls the function it sits in from a
// pipeline, the background, a subshell or a substitution inside that
// function's body: each call starts more processes than it ends, as in
// ":(){ :|:& };:". A plain recursive call (no fork) is left to the judge.
func forkBomb(cmd shellparse.Command) (string, bool) {
	name := cmd.Name()
	if name == "" {
		return "", false
	}
	for i, ctx := range cmd.Context {
		fn, ok := strings.CutPrefix(ctx, "function ")
		if !ok || strings.TrimSpace(fn) != name {
			continue
		}
		for _, inner := range cmd.Context[i+1:] {
			if forks(inner) {
				return name, true
			}
		}
	}
	return "", false
}

// forks reports a context in which the shell starts a new process.
func forks(ctx string) bool {
	switch ctx {
	case "&&", "||", ";", "!":
		return false
	case "pipe", "pipeline", "background", "bg", "subshell", "coproc", "async":
		return true
	}
	return strings.ContainsAny(ctx, "|&(`")
}
