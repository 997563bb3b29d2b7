package vaglio

import (
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// The forbidden-path check: secrets and system internals the gated command
// may not touch at all. A word counts when the program may use it as a file
// (any word of an unknown program, the operands of a known one, every
// redirect target, assignment values, wrapper options); a word a program
// only prints or matches against (echo's words, a commit message, a grep
// pattern) does not.

func forbiddenHit(r pathRule, what, word string) Hit {
	return Hit{
		Check:   CheckForbiddenPath,
		Pattern: r.pattern,
		Word:    word,
		Reason:  what + " on " + quote(word) + " (forbidden path " + r.pattern + ": " + r.why + ")",
	}
}

// forbiddenRule returns the first rule a candidate breaks. reading says the
// access only reads, which lets public keys under ~/.ssh through.
func (c *checker) forbiddenRule(cd candidate, reading bool) (pathRule, bool) {
	if r, ok := c.forbiddenRuleExact(cd, reading); ok {
		return r, true
	}
	// ~/.SSH is ~/.ssh on a case-insensitive filesystem; every rule is
	// written in lower case.
	if hasUpper(cd.path) && mayBeForbiddenFold(cd) {
		return c.forbiddenRuleExact(newCandidate(strings.ToLower(cd.path), cd.glob, cd.openDir, cd.word), reading)
	}
	return pathRule{}, false
}

// forbiddenRuleExact is forbiddenRule, matching case as written.
func (c *checker) forbiddenRuleExact(cd candidate, reading bool) (pathRule, bool) {
	if !mayBeForbidden(cd) {
		return pathRule{}, false
	}
	cd = cd.withElems()
	rules := forbiddenRules()
	for i := range rules {
		r := &rules[i]
		if r.notRootHome && !c.rootForbidden() {
			continue
		}
		if !matchRule(r.pattern, r.except, cd, false) {
			continue
		}
		if r.publicSSH && reading && publicSSHFile(cd) {
			continue
		}
		if c.fixtureStore(r, cd) {
			continue
		}
		return *r, true
	}
	devices := deviceRules()
	for i := range devices {
		if matchRule(devices[i].pattern, "", cd, false) {
			return devices[i], true
		}
	}
	return pathRule{}, false
}

// mayBeForbidden is a quick filter in front of the rule tables: every
// anchored rule starts with one of a few top-level directories, and every
// floating rule with one of a few dot names, so a literal path with neither
// cannot match. A glob cannot either when its first element is a literal
// other than those directories and none of its elements starts with a dot
// (in the shell, and in elemMatch, no glob character matches a leading
// dot). TestForbiddenRulesShape keeps the tables within this filter.
func mayBeForbidden(cd candidate) bool {
	if cd.path == "/" {
		return true
	}
	// The elements of the path, read in place.
	first, _, _ := strings.Cut(cd.path[1:], "/")
	switch first {
	case "etc", "root", "boot", "sys", "proc", "dev", "run", "var":
		return true
	}
	if cd.glob && hasMeta(first) {
		return true
	}
	p := cd.path
	for off := 1; ; off++ {
		// The elements that start with a dot (each follows a slash).
		i := strings.IndexByte(p[off:], '.')
		if i < 0 {
			return false
		}
		off += i
		if p[off-1] != '/' {
			continue
		}
		e, _, _ := strings.Cut(p[off:], "/")
		if cd.glob || floatingHead(e) {
			return true
		}
	}
}

// mayBeForbiddenFold is mayBeForbidden for a path that may be written in
// another case: its first element, or an element after a slash that starts
// with a dot, is a rule's head in any case.
func mayBeForbiddenFold(cd candidate) bool {
	p := cd.path
	first, _, _ := strings.Cut(p[1:], "/")
	if len(first) == 3 || len(first) == 4 {
		for _, d := range [...]string{"etc", "root", "boot", "sys", "proc", "dev", "run", "var"} {
			if strings.EqualFold(first, d) {
				return true
			}
		}
	}
	for off := 1; ; off++ {
		// The elements that start with a dot (each follows a slash).
		i := strings.IndexByte(p[off:], '.')
		if i < 0 {
			return false
		}
		off += i
		if p[off-1] != '/' {
			continue
		}
		e, _, _ := strings.Cut(p[off:], "/")
		if floatingHead(e) || hasUpper(e) && floatingHead(strings.ToLower(e)) {
			return true
		}
	}
}

// floatingHead reports the names a floating rule can start with.
func floatingHead(e string) bool {
	if len(e) < 3 || e[0] != '.' {
		return false
	}
	switch e {
	case ".ssh", ".gnupg", ".aws", ".config", ".netrc", ".docker", ".kube", ".git-credentials", ".pgpass", ".env", ".env~",
		".age", ".azure", ".local", ".password-store", ".vault-token", ".terraform.d", ".cargo", ".gem", ".m2",
		".my.cnf", ".boto", ".s3cfg", ".oci", ".huggingface", ".cache", ".npmrc", ".pypirc",
		".claude", ".codex", ".gemini", ".dockercfg", ".pulumi", ".fly", ".databrickscfg", ".ngrok2",
		".composer", ".wrangler", ".mozilla", ".bitcoin", ".electrum", ".ethereum", ".bash_history",
		".zsh_history", ".python_history", ".node_repl_history", ".psql_history", ".mysql_history",
		".cloudflared", ".supabase", ".snowflake", ".now", ".netlify", ".terraformrc", ".sentryclirc", ".kaggle",
		".railway", ".circleci", ".dbt", ".tsh":
		return true
	}
	return strings.HasPrefix(e, ".env.")
}

// scan emits a hit for the first forbidden candidate among cands. The
// hit's reason names what+detail (joined only for a hit).
func (c *checker) scan(cands []candidate, what, detail string, reading bool) bool {
	for _, cd := range cands {
		if r, ok := c.forbiddenRule(cd, reading); ok {
			return c.emit(forbiddenHit(r, what+detail, cd.word))
		}
	}
	return true
}

// sedFileGaps puts a space between a sed command that names a file and
// the file, so that the path in "w/home/u/x" is seen as one: "w/", "r/",
// "W/", "R/", "w~" and "r~" become "w /" and so on, left to right. A
// script with none is returned as it is, without allocating.
func sedFileGaps(s string) string {
	var b strings.Builder
	done := 0 // s[:done] is in b
	for i := 0; i+1 < len(s); i++ {
		c, next := s[i], s[i+1]
		if (c == 'w' || c == 'r') && (next == '/' || next == '~') || (c == 'W' || c == 'R') && next == '/' {
			if done == 0 {
				b.Grow(len(s) + 4)
			}
			b.WriteString(s[done : i+1])
			b.WriteByte(' ')
			done = i + 1
			i++ // the separator is no command letter
		}
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// literalPaths marks candidates as literal: a script's regular
// expressions are no shell globs. The script word is still judged whole
// (sed's "w/path" needs no space) and for the paths inside it. The
// caller passes a copy: the cached candidates serve other checks.
func literalPaths(cds []candidate) []candidate {
	for i := range cds {
		cds[i].glob = false
	}
	return cds
}

// roles are argRoles(cmd.Name(), cmd.Argv).
func (c *checker) forbiddenPaths(cmd shellparse.Command, roles []role) bool {
	var buf []candidate
	name := cmd.Name()
	what := name
	if what == "" {
		what = "a dynamic program"
	}
	if len(cmd.Argv) > 0 {
		// The program itself, when given as a path.
		if p := cmd.Argv[0]; strings.Contains(p.Value, "/") {
			if !c.scan(c.r.wordCandidates(p, buf[:0]), "program", "", false) {
				return false
			}
		}
		args := cmd.Argv[1:]
		reading := isReader(name, args)
		if c.isSelfName(name) {
			roles = selfRoles(args)
		}
		for i, w := range args {
			if roles != nil && roles[i] == roleScript {
				// sed reads and writes files named right after r, R, w
				// and W, with or without a space ("w/path"); the paths
				// are judged as written to, whatever sed does otherwise.
				cds := append(buf[:0], c.argCandidates(i, w)...)
				cds = c.r.embeddedCandidates(sedFileGaps(w.Value), cds)
				if !c.scan(literalPaths(cds), what, "", false) {
					return false
				}
				continue
			}
			if roles != nil && roles[i] != rolePath {
				continue
			}
			if !c.scan(c.argCandidates(i, w), what, "", reading) {
				return false
			}
		}
	}
	// Name patterns that choose which files a program reads: a glob that
	// may match a forbidden name counts as that name.
	for _, pat := range selectedNames(name, cmd.Argv) {
		buf = append(buf[:0], newCandidate(c.r.abs(pat), hasMeta(pat), false, pat))
		if !c.scan(buf, what, "", true) {
			return false
		}
	}
	// The names xargs or find give the program when it runs, where the
	// script shows them (find's -name of the branch that feeds it, what
	// echo pipes into xargs): the files they select, read.
	if cmd.RunTimeArgs != "" && !namesOnly(name) {
		for _, pat := range cmd.RunTimeNames {
			pat = c.r.expandHome(pat)
			buf = append(buf[:0], newCandidate(c.r.abs(pat), hasMeta(pat), false, pat))
			if !c.scan(buf, what, "", true) {
				return false
			}
		}
	}
	for i, rd := range cmd.Redirects {
		switch rd.Op {
		case "<<", "<<-", "<<<":
			// A here-document's body is data on stdin; for a program that
			// may run it as code, look for paths written inside it.
			if len(cmd.Argv) > 0 && (isReader(name, cmd.Argv[1:]) || name == "git" && gitMessageOnStdin(cmd.Argv[1:])) {
				continue
			}
			buf = c.r.embeddedCandidates(rd.Target.Value, buf[:0])
			if !c.scan(buf, "here-document of ", what, false) {
				return false
			}
			continue
		case ">&", "<&":
			if !redirectWrites(rd) {
				continue
			}
		}
		reading := !redirectWrites(rd)
		if !c.scan(c.redirectCandidates(i, rd), "redirect ", rd.Fd+rd.Op, reading) {
			return false
		}
	}
	for _, a := range cmd.Assigns {
		name, value, ok := strings.Cut(a, "=")
		if !ok || value == "" || shellparse.CommandVar(name) {
			// A command in the environment is walked, and judged, as the
			// command it is.
			continue
		}
		buf = buf[:0]
		if looksLikePath(value) {
			buf = c.r.dynamicCandidates(c.r.expandHome(value), false, value, buf)
		}
		buf = c.r.embeddedCandidates(value, buf)
		if !c.scan(buf, "assignment ", strings.TrimSuffix(name, "+"), false) {
			return false
		}
	}
	for _, wr := range cmd.Wrappers {
		shell := len(wr.Argv) > 0 && isShell(baseName(wr.Argv[0]))
		for i := 1; i < len(wr.Argv); i++ {
			v := wr.Argv[i]
			if shell && v == "-c" {
				i++ // the script, parsed into commands of its own
				continue
			}
			if carriedValue(baseName(wr.Argv[0]), wr.Argv, i) {
				continue // a command of its own, as above
			}
			if findPattern(wr.Argv, i) {
				continue // judged on find itself (selectedNames)
			}
			buf = buf[:0]
			if looksLikePath(v) {
				buf = c.r.dynamicCandidates(c.r.expandHome(v), false, v, buf)
			}
			buf = c.r.embeddedCandidates(v, buf)
			if !c.scan(buf, "wrapper ", wr.Name, false) {
				return false
			}
		}
	}
	return true
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// selectedNames returns the name patterns with which a program chooses the
// files whose content it reads: grep's --include, rg's --glob, and find's
// -name and -path when find runs a command on what it finds (listing names
// reads no content).
func selectedNames(name string, argv []shellparse.Word) []string {
	if len(argv) < 2 {
		return nil
	}
	args := argv[1:]
	var out []string
	switch {
	case isGrepLike(name):
		for i, a := range args {
			v := a.Value
			if !strings.HasPrefix(v, "-") {
				continue
			}
			for _, o := range [...]string{"--include", "--glob", "--iglob", "-g"} {
				p, ok := "", true
				if len(v) > len(o) && v[len(o)] == '=' && strings.HasPrefix(v, o) {
					p = v[len(o)+1:] // o=VALUE
				} else if v == o && i+1 < len(args) {
					p = args[i+1].Value
				} else if o == "-g" && strings.HasPrefix(v, "-g") && len(v) > 2 && name == "rg" {
					p = v[2:]
				} else {
					ok = false
				}
				// rg's "!" leaves the files it matches out.
				if ok && !(name == "rg" && o != "--include" && strings.HasPrefix(p, "!")) {
					out = append(out, p)
				}
			}
		}
	case name == "find":
		runs := false
		for i, a := range args {
			switch a.Value {
			case "-exec", "-execdir", "-ok", "-okdir":
				// A command that only shows the names it is given
				// (-exec echo {} \;) reads no content.
				if i+1 == len(args) || args[i+1].Dynamic || !namesOnly(args[i+1].Value) {
					runs = true
				}
			}
		}
		if !runs {
			return nil
		}
		for i := 0; i+1 < len(args); i++ {
			switch args[i].Value {
			case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename":
				out = append(out, args[i+1].Value)
				i++
			}
		}
	}
	for i, p := range out {
		// An include pattern may name files at any depth; "!" negates.
		out[i] = strings.TrimPrefix(strings.TrimPrefix(p, "!"), "/")
	}
	return out
}

// hasUpper reports an ASCII upper-case letter in s.
func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// carriedValue reports whether argv[i] is a command line its program runs,
// which the parser walks as a command of its own: git's -c value for a key
// git runs (core.sshCommand=..., alias.x=!...), and ssh's ProxyCommand,
// LocalCommand and KnownHostsCommand options; or ssh's identity file,
// which ssh signs with and never shows (see sshRoles).
func carriedValue(prog string, argv []string, i int) bool {
	v := argv[i]
	switch prog {
	case "git":
		if i > 0 && argv[i-1] == "-c" {
			k, val, ok := strings.Cut(v, "=")
			return ok && shellparse.GitRunsValue(k, val)
		}
	case "ssh", "scp", "sftp":
		opt := ""
		switch {
		case i > 0 && argv[i-1] == "-i", strings.HasPrefix(v, "-i") && len(v) > 2:
			return true
		case i > 0 && argv[i-1] == "-o":
			opt = v
		case strings.HasPrefix(v, "-o") && len(v) > 2:
			opt = v[2:]
		default:
			return false
		}
		return shellparse.SSHRunsOption(opt)
	}
	return false
}

// namesOnly reports programs that, given file names, only print them or
// parts of them: find's -exec running one reads no content.
func namesOnly(prog string) bool {
	switch prog {
	case "echo", "printf", "basename", "dirname", "realpath", "true":
		return true
	}
	return false
}

// findPattern reports find's name pattern at argv[i] (-name .env): a
// pattern it matches names against, not a file. The find command itself is
// judged with its patterns as the files they select (selectedNames).
func findPattern(argv []string, i int) bool {
	if i == 0 || baseName(argv[0]) != "find" {
		return false
	}
	switch argv[i-1] {
	case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename":
		return true
	}
	return false
}

// fixtureStore reports a match of an any-depth rule for a secret store
// directory ("**/.ssh/**", "**/.aws/credentials", "**/.kube/config") that is
// a test fixture of the workspace: "tests/fixtures/.ssh/config",
// "testdata/.aws/credentials". It holds only when the workspace is known
// and neither the home directory nor above it, the path lies inside the
// workspace, and the store's directory lies strictly below the workspace's
// top ("./.ssh/config" at the top is more likely a real store put there by
// mistake, and stays a hit). Stays a hit anywhere: rules for one file
// (".env", ".npmrc", ".netrc", ".git-credentials", histories), which are
// the project's own secrets wherever they lie, and private key names
// (privateKeyName).
//
// A committed symbolic link can make such a fixture path lead to the real
// ~/.ssh: the guard judges the path as written. Under mnemos run the
// sandbox still refuses the read, as it refuses every secret store of the
// home directory whatever path names it.
func (c *checker) fixtureStore(r *pathRule, cd candidate) bool {
	c.out.placeRead = true
	ws, home := c.ws, c.r.home
	if ws == "" || ws == "/" || cd.glob || cd.openDir || !strings.HasPrefix(r.pattern, "**/") {
		return false
	}
	head, rest, ok := strings.Cut(r.pattern[len("**/"):], "/")
	if !ok || rest == "" || hasMeta(head) {
		return false // a rule for one file at any depth
	}
	if ws == home || inside(home, ws) || !inside(cd.path, ws) || cd.path == ws {
		return false
	}
	rel := strings.Split(cd.path[len(ws)+1:], "/")
	if rel[0] == head {
		return false // at the workspace's top
	}
	below := false
	for _, e := range rel[1:] {
		if e == head {
			below = true
		}
	}
	if !below {
		return false // the store's directory lies above the workspace
	}
	for _, e := range rel {
		if privateKeyName(e) {
			return false
		}
	}
	return true
}

// privateKeyName reports file and directory names that hold private keys
// wherever they lie: SSH identities (id_rsa, id_ed25519_sk; not their .pub
// halves), PEM and PuTTY keys, GnuPG's private key directory and secret
// keyring.
func privateKeyName(e string) bool {
	switch {
	case strings.HasPrefix(e, "id_") && !strings.HasSuffix(e, ".pub"):
		return true
	case strings.HasSuffix(e, ".pem"), strings.HasSuffix(e, ".key"), strings.HasSuffix(e, ".ppk"):
		return true
	case e == "private-keys-v1.d", e == "secring.gpg", e == "identity":
		return true
	}
	return false
}
