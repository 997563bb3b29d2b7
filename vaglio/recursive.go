package vaglio

import (
	"path"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// The recursive-read check: a program that copies, archives, sends or
// searches a whole directory reads every secret below it. `cp -r ~/.aws x`,
// `tar czf x.tgz ~` and `grep -r . ~/.aws` name no secret file, yet read
// one; a directory operand of such a program counts as every forbidden
// path below it. Project files (.env) are left out: archiving a workspace
// that holds one is ordinary work, and the sandbox is what keeps it in.
// An exclusion (tar --exclude=.ssh) does not make a directory safe: the
// excluded word is not an operand, and the directory still counts.

// recursiveOperands returns the words a program reads recursively, with
// the directory each relative one is taken from ("" for the working
// directory). It returns nil for a program that reads nothing recursively
// (or that this check does not know), at no cost.
func recursiveOperands(name string, args []shellparse.Word, roles []role) []recursiveOperand {
	switch name {
	case "cp", "scp", "rsync":
		return copySources(name, args, roles)
	case "tar", "bsdtar", "gtar":
		return tarSources(args, roles)
	case "zip":
		return zipSources(args, roles)
	case "7z", "7za", "7zr":
		return sevenZipSources(args)
	case "grep", "egrep", "fgrep", "rgrep", "rg", "ag":
		return searchSources(name, args, roles)
	}
	return nil
}

// recursiveOperand is one word read recursively; dir is the directory a
// relative word is resolved in, as written ("" for the working directory).
type recursiveOperand struct {
	word shellparse.Word
	dir  string
	// skipsHidden marks a searcher that leaves out hidden files and
	// directories below the operand (rg, ag without --hidden): it reads
	// what lies below through names that do not start with a dot.
	skipsHidden bool
}

// shortCluster reports whether a word is a cluster of short options
// ("-rf", "-avz") holding one of the letters.
func shortCluster(v, letters string) bool {
	return len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsAny(v[1:], letters)
}

// copySources handles cp, scp and rsync: recursive with -r (and -R, -a for
// cp and rsync); every operand but the destination is read.
func copySources(name string, args []shellparse.Word, roles []role) []recursiveOperand {
	letters, valued := "rRa", "tSTe"
	switch name {
	case "scp":
		letters, valued = "r", "cFiJlopPSX"
	case "rsync":
		letters, valued = "ra", "efTBM"
	}
	recursive, target := false, false
	var ops []shellparse.Word
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case v == "--recursive" || v == "--archive" || name == "cp" && v == "-dR":
			recursive = true
		case strings.HasPrefix(v, "--target-directory") || v == "-t" && name == "cp":
			target = true
			if !strings.Contains(v, "=") {
				i++ // the destination
			}
		case strings.HasPrefix(v, "--"):
			// A long option's value, when separate, is rarely a directory
			// to read; it is left out.
		case len(v) > 1 && v[0] == '-':
			recursive = recursive || shortCluster(v, letters)
			target = target || name == "cp" && shortCluster(v, "t")
			// An option that takes a value takes the rest of the cluster,
			// or the next word.
			if j := strings.IndexAny(v[1:], valued); j >= 0 && j+2 == len(v) {
				i++
			}
		case isPattern(roles, i):
			// The value of --exclude: a name left out, not an operand.
		default:
			ops = append(ops, args[i])
		}
	}
	if !recursive || len(ops) == 0 {
		return nil
	}
	if !target {
		ops = ops[:len(ops)-1]
	}
	return fromWords(ops)
}

// isPattern reports whether argument i is a name pattern (rolePattern),
// such as the value of an exclusion option.
func isPattern(roles []role, i int) bool {
	return i < len(roles) && roles[i] == rolePattern
}

func fromWords(ws []shellparse.Word) []recursiveOperand {
	out := make([]recursiveOperand, len(ws))
	for i, w := range ws {
		out[i] = recursiveOperand{word: w}
	}
	return out
}

// tarSources handles tar: in any mode but extract, list and compare, every
// operand is read recursively, from the directory the last -C named.
func tarSources(args []shellparse.Word, roles []role) []recursiveOperand {
	var out []recursiveOperand
	dir := ""
	reading := true
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "--extract" || v == "--get" || v == "--list" || v == "--diff" || v == "--compare":
			reading = false
		case v == "-C" || v == "--directory":
			if i+1 < len(args) {
				dir = args[i+1].Value
				i++
			}
		case strings.HasPrefix(v, "--directory="):
			dir = strings.TrimPrefix(v, "--directory=")
		case strings.HasPrefix(v, "--"):
		case strings.HasPrefix(v, "-") || i == 0 && len(v) > 0 && !strings.Contains(v, "/"):
			// Short options, or the old-style first word ("czf"): f, T, X,
			// b, g, K, N, V and F take the next word as their value.
			letters := strings.TrimPrefix(v, "-")
			if strings.ContainsAny(letters, "xtd") && !strings.ContainsAny(letters, "cru") {
				reading = false
			}
			if strings.HasPrefix(v, "-") && len(letters) > 1 {
				// "-fNAME" carries its value; only a final valued letter
				// takes the next word.
				if strings.ContainsAny(letters[len(letters)-1:], "fTXbgKNVFHC") {
					if letters[len(letters)-1] == 'C' && i+1 < len(args) {
						dir = args[i+1].Value
					}
					i++
				}
				continue
			}
			for _, l := range letters {
				if strings.ContainsRune("fTXbgKNVFH", l) {
					i++
				}
			}
		case isPattern(roles, i):
			// The value of --exclude: a name left out, not an operand.
		default:
			out = append(out, recursiveOperand{word: args[i], dir: dir})
		}
	}
	if !reading {
		return nil
	}
	return out
}

// zipSources handles zip -r: the first operand is the archive, the others
// are read.
func zipSources(args []shellparse.Word, roles []role) []recursiveOperand {
	recursive := false
	var ops []shellparse.Word
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "--recurse-paths" || shortCluster(v, "rR"):
			recursive = true
		case v == "-b" || v == "-n" || v == "-t" || v == "-tt" || v == "-O" || v == "-P" || v == "-Z" || v == "-s":
			i++
		case strings.HasPrefix(v, "-") || isPattern(roles, i) || v == "@":
			// Options, and the patterns of -x (the list ends at "@").
		default:
			ops = append(ops, args[i])
		}
	}
	if !recursive || len(ops) < 2 {
		return nil
	}
	return fromWords(ops[1:])
}

// sevenZipSources handles 7z a and u: the operands after the archive are
// read, recursively by default.
func sevenZipSources(args []shellparse.Word) []recursiveOperand {
	var ops []shellparse.Word
	for _, a := range args {
		if !strings.HasPrefix(a.Value, "-") {
			ops = append(ops, a)
		}
	}
	if len(ops) < 3 || ops[0].Value != "a" && ops[0].Value != "u" {
		return nil
	}
	return fromWords(ops[2:])
}

// searchSources handles grep -r (rgrep) and the searchers that recurse by
// themselves; rg and ag skip hidden directories (where the secrets are)
// unless told not to. With no directory named, they search the working
// directory.
func searchSources(name string, args []shellparse.Word, roles []role) []recursiveOperand {
	recursive := name == "rgrep"
	// rg and ag recurse by themselves, leaving hidden names out unless
	// told not to: their operands still reach what a plain name leads to.
	skipsHidden := false
	for i, a := range args {
		v := a.Value
		if v == "--" {
			break
		}
		if (name != "rg" && name != "ag") && (v == "-d" || v == "--directories") && i+1 < len(args) && args[i+1].Value == "recurse" {
			// grep -d recurse is -r.
			recursive = true
		}
		switch name {
		case "rg", "ag":
			if v == "--hidden" || v == "-." || v == "--unrestricted" || strings.HasPrefix(v, "-uu") ||
				v == "-u" && name == "ag" {
				recursive = true
			}
		default:
			if v == "--recursive" || v == "--dereference-recursive" || v == "--directories=recurse" ||
				shortCluster(v, "rR") && !strings.HasPrefix(v, "-e") && !strings.HasPrefix(v, "-f") {
				recursive = true
			}
		}
	}
	if !recursive && (name == "rg" || name == "ag") {
		recursive, skipsHidden = true, true
	}
	if !recursive {
		return nil
	}
	var out []recursiveOperand
	for i, a := range args {
		if roles != nil && i < len(roles) && roles[i] == rolePath && !strings.HasPrefix(a.Value, "-") {
			out = append(out, recursiveOperand{word: a, skipsHidden: skipsHidden})
		}
	}
	if len(out) == 0 {
		out = append(out, recursiveOperand{word: shellparse.Word{Value: "."}, skipsHidden: skipsHidden})
	}
	return out
}

// secretRoots returns the forbidden paths a directory may hold, anchored:
// the home-directory secrets of the floating rules, in the user's home and
// in every other home, and the anchored rules as they are.
func (c *checker) secretRoots() []pathRule {
	rules := forbiddenRules()
	out := make([]pathRule, 0, 3*len(rules))
	for _, r := range rules {
		body, floating, subtree := ruleShape(r.pattern)
		if !floating {
			if !r.notRootHome || c.rootForbidden() {
				out = append(out, r)
			}
			continue
		}
		if strings.HasPrefix(body, ".env") {
			continue
		}
		if subtree {
			body += "/**"
		}
		for _, home := range []string{escapeGlob(c.r.home), "/home/*", "/Users/*", "/root"} {
			if home == "" || home == "/" {
				continue
			}
			out = append(out, pathRule{pattern: home + "/" + body, why: r.why, publicSSH: r.publicSSH})
		}
	}
	return out
}

// recursiveReads denies a recursive read of a directory that holds a
// forbidden path, or mnemos's own configuration and state (the protected
// paths: the audit key is in the state directory). It returns false to
// stop.
func (c *checker) recursiveReads(cmd shellparse.Command, roles []role) bool {
	name := cmd.Name()
	if len(cmd.Argv) < 2 && name != "rgrep" {
		return true
	}
	ops := recursiveOperands(name, cmd.Argv[1:], roles)
	if len(ops) == 0 {
		return true
	}
	var roots []pathRule
	var buf []candidate
	for _, op := range ops {
		w := op.word
		if op.dir != "" && !strings.HasPrefix(w.Value, "/") && !strings.HasPrefix(w.Value, "~") {
			w.Value = path.Join(op.dir, w.Value)
		}
		buf = c.r.wordCandidates(w, buf[:0])
		for _, cd := range buf {
			if !op.skipsHidden && c.mayHoldSecrets(cd) {
				if roots == nil {
					roots = c.secretRoots()
				}
				for _, r := range roots {
					if matchRule(r.pattern, "", cd, true) && !(r.publicSSH && publicSSHFile(cd)) {
						return c.emit(Hit{
							Check:   CheckForbiddenPath,
							Pattern: r.pattern,
							Word:    cd.word,
							Reason: name + " reads " + quote(cd.word) + " recursively, and with it " + r.pattern +
								" (" + r.why + ")",
						})
					}
				}
			}
			if p, ok := c.holdsProtected(cd, op.skipsHidden); ok {
				return c.emit(selfTamperHit(p, cd.word, name+" reads "+quote(cd.word)+" recursively, and with it "+p+
					" (mnemos's own configuration and state: the audit key in it lets whoever reads it rewrite the audit log)"))
			}
		}
	}
	return true
}

// holdsProtected returns the protected path (mnemos's own configuration
// and state) a recursive read of the candidate reaches: the candidate is
// it, lies inside it, or holds it. With skipsHidden, a protected path
// reached below the candidate only through a hidden name is not read.
func (c *checker) holdsProtected(cd candidate, skipsHidden bool) (string, bool) {
	if !c.hasProtected() {
		return "", false
	}
	for _, p := range c.protectedPaths() {
		if !c.protectedMatch(&cd, p, true) {
			continue
		}
		if skipsHidden && hiddenBelow(cd, p) {
			continue
		}
		return p, true
	}
	return "", false
}

// hiddenBelow reports a protected path p that lies below the candidate
// (a directory, or a glob of directories without "**") through a name
// starting with a dot, which a searcher that skips hidden names never
// enters. The candidate's own names, written out, are searched.
func hiddenBelow(cd candidate, p string) bool {
	if strings.Contains(cd.path, "**") {
		return false
	}
	depth := strings.Count(strings.TrimSuffix(cd.path, "/"), "/")
	if cd.path == "/" {
		depth = 0
	}
	segs := strings.Split(strings.Trim(p, "/"), "/")
	if depth >= len(segs) {
		return false // the candidate is p or inside it
	}
	for _, s := range segs[depth:] {
		if strings.HasPrefix(s, ".") {
			return true
		}
	}
	return false
}

// mayHoldSecrets is a quick filter in front of secretRoots: only a glob,
// the root, a directory above or inside a home directory (inside: below
// one of its dot directories), and the system directories the anchored
// rules name can hold a forbidden path.
func (c *checker) mayHoldSecrets(cd candidate) bool {
	p := cd.path
	if cd.glob || p == "/" {
		return true
	}
	home := c.r.home
	first, rest, _ := strings.Cut(p[1:], "/")
	switch first {
	case "etc", "proc", "sys", "boot", "dev":
		return true
	case "root":
		if home != "/root" {
			return true
		}
	case "home":
		// /home, /home/NAME, and the dot directories inside a home.
		_, inside, deep := strings.Cut(rest, "/")
		if !deep || strings.HasPrefix(inside, ".") {
			return true
		}
	}
	if home == "" || home == "/" {
		return false
	}
	if strings.HasPrefix(home, p) && (len(home) == len(p) || home[len(p)] == '/') {
		return true // the home directory, or a directory above it
	}
	// A dot directory in the home directory: p is home + "/." + ....
	return len(p) > len(home)+1 && p[len(home)] == '/' && p[len(home)+1] == '.' && strings.HasPrefix(p, home)
}
