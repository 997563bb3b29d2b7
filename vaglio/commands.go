package vaglio

import (
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// What the guard knows about programs. Unknown programs get the
// conservative treatment: every word may be a file, and the program may
// write to any file it names.

// role is what an argument is to its program.
type role uint8

const (
	rolePath    role = iota // may name a file: checked whole and for paths inside it
	roleText                // data, never opened (echo's words, a commit message, a grep pattern)
	roleMeta                // a file whose name and metadata, not content, are used (ls, stat)
	rolePattern             // a name pattern that leaves files out (tar --exclude=.env): never opened
	// roleScript is a program's script (sed's, awk's): its regular
	// expressions are no globs, so it is judged, whole and for the paths
	// in it (sed's w and r, awk's print > "f"), as literal text.
	roleScript
)

// isPrinter reports programs whose arguments are only printed or compared.
func isPrinter(name string) bool {
	switch name {
	case "echo", "printf", "true", "false", ":", "yes", "sleep", "basename", "dirname":
		return true
	}
	return false
}

// isNameLookup reports programs whose arguments are command or topic names.
// man is one of them, except that man opens an argument holding a "/".
func isNameLookup(name string) bool {
	switch name {
	case "which", "type", "whatis", "apropos", "whereis", "help", "hash", "man":
		return true
	}
	return false
}

// isMetadata reports programs that look at names and metadata only: they
// never open a file's content. Their options are still scanned (du
// --files0-from=F reads F).
func isMetadata(name string) bool {
	switch name {
	case "ls", "dir", "vdir", "stat", "test", "[", "[[", "cd", "pushd", "realpath", "readlink", "du",
		"df", "lsblk", "blkid", "findmnt", "lsof", "fuser", "mountpoint", "getfacl", "lsattr", "namei":
		return true
	}
	return false
}

// isReader reports programs that never change a file they are given: they
// may read the policy file, and read public keys under ~/.ssh.
func isReader(name string, args []shellparse.Word) bool {
	if isPrinter(name) || isNameLookup(name) || isMetadata(name) {
		return true
	}
	switch name {
	case "cat", "tac", "less", "more", "most", "head", "tail", "wc", "diff", "cmp", "file", "nl", "od",
		"hexdump", "strings", "jq", "bat", "batcat", "zcat", "zless",
		"grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack",
		"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum":
		return true
	case "find":
		for _, a := range args {
			switch a.Value {
			case "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
				return false
			}
		}
		return true
	case "ssh-keygen":
		// -l prints a fingerprint, -y the public key: they only read.
		for _, a := range args {
			if v := a.Value; len(v) > 1 && v[0] == '-' && strings.Trim(v[1:], "lyvf") == "" && strings.ContainsAny(v, "ly") {
				return true
			}
		}
	}
	return false
}

// isGrepLike reports the search programs whose first operand (or -e value)
// is a pattern.
func isGrepLike(name string) bool {
	switch name {
	case "grep", "egrep", "fgrep", "rgrep", "zgrep", "zegrep", "zfgrep", "rg", "ag", "ack":
		return true
	}
	return false
}

// argRoles returns the role of each argument (argv without the program
// name). A nil result means every argument is a possible path. The result
// is written in buf when it is large enough.
func argRoles(name string, argv []shellparse.Word, buf []role) []role {
	if len(argv) < 2 {
		return nil
	}
	args := argv[1:]
	switch {
	case isPrinter(name):
		return fill(buf, len(args), roleText)
	case isNameLookup(name):
		roles := fill(buf, len(args), roleText)
		if name == "man" {
			for i, a := range args {
				if strings.Contains(a.Value, "/") {
					roles[i] = rolePath
				}
			}
		}
		return roles
	case name == "command":
		if v := args[0].Value; v == "-v" || v == "-V" {
			return fill(buf, len(args), roleText)
		}
		return nil
	case isMetadata(name):
		roles := newRoles(buf, len(args))
		for i, a := range args {
			if !strings.HasPrefix(a.Value, "-") || a.Value == "-" {
				roles[i] = roleMeta
			}
		}
		return roles
	case isGrepLike(name):
		return grepRoles(name, args, newRoles(buf, len(args)))
	case name == "git":
		return gitRoles(args, buf)
	case name == "find":
		return findRoles(args, newRoles(buf, len(args)))
	case name == "gh":
		return ghRoles(args, newRoles(buf, len(args)))
	case name == "ssh" || name == "scp" || name == "sftp":
		return sshRoles(args, buf)
	case name == "ssh-add":
		return sshAddRoles(args, buf)
	case name == "tar" || name == "bsdtar" || name == "gtar" || name == "rsync":
		return excludeRoles(args, buf, name == "rsync")
	case name == "zip":
		return zipRoles(args, buf)
	case name == "7z" || name == "7za" || name == "7zr":
		return sevenZipRoles(args, buf)
	case name == "jq" || name == "gojq" || name == "jaq" || name == "yq":
		return jqRoles(name, args, newRoles(buf, len(args)))
	case name == "sed" || name == "gsed" || name == "awk" || name == "gawk" || name == "mawk" || name == "nawk":
		return scriptRoles(name, args, newRoles(buf, len(args)))
	}
	return nil
}

// scriptRoles marks sed's and awk's script words as roleScript: the
// values of -e and --expression (sed), --source (gawk), and otherwise the
// first operand, unless -f gives the script from a file (a path).
func scriptRoles(name string, args []shellparse.Word, roles []role) []role {
	sed := name == "sed" || name == "gsed"
	fromFile := false
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if args[i].Dynamic {
			continue
		}
		switch {
		case sed && (v == "-e" || v == "--expression") || !sed && (v == "-e" || v == "--source"):
			if i+1 < len(roles) {
				roles[i+1] = roleScript
			}
			fromFile = true // the script is given: operands are files
			i++
		case sed && (strings.HasPrefix(v, "--expression=")) || !sed && strings.HasPrefix(v, "--source="):
			roles[i] = roleScript
			fromFile = true
		case v == "-f" || v == "--file" || strings.HasPrefix(v, "--file="):
			fromFile = true
			if v == "-f" || v == "--file" {
				i++
			}
		case !sed && (v == "-v" || v == "-F"):
			i++
		case v == "--":
		case strings.HasPrefix(v, "-") && v != "-":
		default:
			if !fromFile {
				roles[i] = roleScript
				fromFile = true
			}
		}
	}
	return roles
}

// jqRoles marks the filter of jq and its relatives as text: ".env" in
// "jq .env config.json" reads a key, not a file. jq's filters open no
// file; yq's load operators do (load_str("~/.ssh/id_rsa")), so a yq
// filter that names one stays a path. Files given to --slurpfile,
// --rawfile and -f (whose filter then comes from that file) are paths;
// the values of --arg, --argjson and the like are text, as are the
// positional values after --args or --jsonargs.
func jqRoles(name string, args []shellparse.Word, roles []role) []role {
	filterSeen := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if a.Dynamic {
			continue // a path, for all the guard knows
		}
		switch {
		case v == "--arg" || v == "--argjson":
			for j := i + 1; j <= i+2 && j < len(roles); j++ {
				roles[j] = roleText
			}
			i += 2
			continue
		case v == "--slurpfile" || v == "--rawfile":
			if i+1 < len(roles) {
				roles[i+1] = roleText // the variable's name; the file stays a path
			}
			i += 2
			continue
		case v == "-f" || v == "--from-file":
			filterSeen = true // the filter is that file
			i++
			continue
		case v == "--args" || v == "--jsonargs":
			if filterSeen {
				for j := i + 1; j < len(roles); j++ {
					roles[j] = roleText
				}
				return roles
			}
			continue
		case name == "yq" && (v == "e" || v == "eval" || v == "ea" || v == "eval-all") && !filterSeen && i == firstOperand(args):
			roles[i] = roleText
			continue
		case name == "yq" && (v == "-o" || v == "--output-format" || v == "-p" || v == "--input-format" || v == "-I" || v == "--indent"):
			if i+1 < len(roles) {
				roles[i+1] = roleText
			}
			i++
			continue
		case v == "--indent" || v == "-L" && name != "yq":
			i++
			continue
		case strings.HasPrefix(v, "-") && v != "-":
			continue
		}
		if !filterSeen {
			filterSeen = true
			if name != "yq" || !strings.Contains(v, "load") {
				roles[i] = roleText
			}
		}
	}
	return roles
}

// firstOperand returns the index of the first argument that is no option.
func firstOperand(args []shellparse.Word) int {
	for i, a := range args {
		if !strings.HasPrefix(a.Value, "-") || a.Value == "-" {
			return i
		}
	}
	return -1
}

// The exclusion options of the archivers, copiers and searchers take a
// name pattern that leaves files out: "tar --exclude=.env" opens no .env
// file, and neither does "rsync --exclude .env" or "zip -x .env". Only
// the excluded word itself is spared: the directories the program reads
// are read all the same, secrets other than the excluded one with them,
// so the recursive-read check still sees them. A file of patterns
// (--exclude-from=FILE, -X FILE, zip -x@FILE) is read, and stays a path;
// so do words computed at run time, which the shell may split into more
// words than one.

// excludeRoles marks the values of tar's and rsync's --exclude (and, for
// rsync, of a --filter/-f rule that excludes: "- .env") as patterns. It
// returns nil when there is none.
func excludeRoles(args []shellparse.Word, buf []role, rsync bool) []role {
	var roles []role
	mark := func(i int) {
		if roles == nil {
			roles = newRoles(buf, len(args))
		}
		roles[i] = rolePattern
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if len(v) < 2 || v[0] != '-' || a.Dynamic {
			continue
		}
		if v == "--" {
			break
		}
		switch {
		case v == "--exclude" || rsync && (v == "--filter" || v == "-f"):
			if i+1 < len(args) && !args[i+1].Dynamic && (v == "--exclude" || rsyncExcludeRule(args[i+1].Value)) {
				mark(i + 1)
			}
			i++
		case strings.HasPrefix(v, "--exclude="):
			mark(i)
		case rsync && strings.HasPrefix(v, "--filter=") && rsyncExcludeRule(v[len("--filter="):]):
			mark(i)
		}
	}
	return roles
}

// rsyncExcludeRule reports a filter rule that only excludes: "- PATTERN",
// "exclude PATTERN", with modifiers ("-/ PATTERN", "exclude,s PATTERN").
// A rule with "!" excludes what does not match, and is not one.
func rsyncExcludeRule(r string) bool {
	name, _, ok := strings.Cut(r, " ")
	if !ok {
		if name, _, ok = strings.Cut(r, "_"); !ok {
			return false
		}
	}
	if strings.Contains(name, "!") {
		return false
	}
	name, _, _ = strings.Cut(name, ",")
	if name == "exclude" {
		return true
	}
	rest, ok := strings.CutPrefix(name, "-")
	return ok && strings.Trim(rest, "/Csrpx") == ""
}

// zipRoles marks zip's exclusion lists as patterns: -x (or --exclude)
// takes every following word up to the next option, a lone "@" or the end
// ("zip -r a.zip . -x .env '*.log'"); -xPATTERN carries one pattern.
func zipRoles(args []shellparse.Word, buf []role) []role {
	var roles []role
	mark := func(i int) {
		if roles == nil {
			roles = newRoles(buf, len(args))
		}
		roles[i] = rolePattern
	}
	list := false
	for i, a := range args {
		v := a.Value
		switch {
		case a.Dynamic:
			list = list && !strings.HasPrefix(v, "-")
		case strings.HasPrefix(v, "-"):
			list = v == "-x" || v == "--exclude"
			if len(v) > 2 && v[1] == 'x' && v[2] != '@' {
				mark(i)
			}
		case v == "@":
			list = false
		case list && v[0] != '@':
			mark(i)
		}
	}
	return roles
}

// sevenZipRoles marks 7-Zip's exclusion switches as patterns: -x!PATTERN,
// -xr!PATTERN, -xr-!PATTERN, -xr0!PATTERN (-x@LISTFILE is read).
func sevenZipRoles(args []shellparse.Word, buf []role) []role {
	var roles []role
	for i, a := range args {
		v, ok := strings.CutPrefix(a.Value, "-x")
		if !ok || a.Dynamic {
			continue
		}
		v = strings.TrimPrefix(v, "r")
		v = strings.TrimLeft(v, "-0")
		if strings.HasPrefix(v, "!") {
			if roles == nil {
				roles = newRoles(buf, len(args))
			}
			roles[i] = rolePattern
		}
	}
	return roles
}

// sshRoles marks the identity file of ssh, scp and sftp (-i KEY): ssh
// signs with the key and never shows it, so naming a private key there is
// using it, not reading it out. Everything else stays a possible path.
func sshRoles(args []shellparse.Word, buf []role) []role {
	var roles []role
	mark := func(i int, r role) {
		if roles == nil {
			roles = newRoles(buf, len(args))
		}
		roles[i] = r
	}
	for i, a := range args {
		v := a.Value
		switch {
		case !a.Dynamic && v == "-o" && i+1 < len(args) && !args[i+1].Dynamic && shellparse.SSHRunsOption(args[i+1].Value):
			mark(i+1, roleText) // walked by the parser as a command
		case !a.Dynamic && strings.HasPrefix(v, "-o") && len(v) > 2 && shellparse.SSHRunsOption(v[2:]):
			mark(i, roleText)
		case v == "-i" && i+1 < len(args):
			if roles == nil {
				roles = newRoles(buf, len(args))
			}
			roles[i+1] = roleMeta
		case strings.HasPrefix(v, "-i") && len(v) > 2 && !a.Dynamic:
			if roles == nil {
				roles = newRoles(buf, len(args))
			}
			roles[i] = roleMeta
		}
	}
	return roles
}

// sshAddRoles marks the keys ssh-add loads into the agent: the agent signs
// with them and never shows them. With -d or -D it only removes keys; with
// -L, -l, -T or -X it reads nothing from files; all the same use.
func sshAddRoles(args []shellparse.Word, buf []role) []role {
	roles := newRoles(buf, len(args))
	for i, a := range args {
		switch v := a.Value; {
		case v == "-t" || v == "-E" || v == "-S" || v == "-H" || v == "-h":
			// An option that takes a value: the value is not a key.
			if i+1 < len(args) {
				i++
			}
		case !strings.HasPrefix(v, "-"):
			roles[i] = roleMeta
		}
	}
	return roles
}

// findRoles marks the patterns and formats of find's tests and actions
// as text: "-path '*/.ssh/*' -prune" names no file.
func findRoles(args []shellparse.Word, roles []role) []role {
	for i := 0; i+1 < len(args); i++ {
		switch args[i].Value {
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
			"-lname", "-ilname", "-printf", "-user", "-group", "-perm", "-size", "-type", "-xtype",
			"-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-regextype", "-fstype":
			i++
			roles[i] = roleText
		case "-fprintf":
			i += 2 // a file, then a format
			if i < len(args) {
				roles[i] = roleText
			}
		}
	}
	return roles
}

// ghRoles marks the titles, bodies and notes given to gh as text. Files
// (--body-file, -F) stay paths.
func ghRoles(args []shellparse.Word, roles []role) []role {
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if long, ok := strings.CutPrefix(v, "--"); ok {
			opt, _, hasValue := strings.Cut(long, "=")
			switch opt {
			case "title", "body", "notes", "subject", "description", "desc", "message":
				if hasValue {
					roles[i] = roleText
				} else if i+1 < len(args) {
					i++
					roles[i] = roleText
				}
			}
			continue
		}
		if (v == "-t" || v == "-b" || v == "-m") && i+1 < len(args) {
			i++
			roles[i] = roleText
		}
	}
	return roles
}

// newRoles returns n roles, all rolePath, in buf when it is large enough.
func newRoles(buf []role, n int) []role {
	if n > cap(buf) {
		return make([]role, n)
	}
	out := buf[:n]
	clear(out)
	return out
}

// fill returns n roles, all r, in buf when it is large enough.
func fill(buf []role, n int, r role) []role {
	out := newRoles(buf, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// grepRoles marks the search pattern of grep and its relatives as text:
// the values of -e/--regexp, or else the first operand. The value of
// -f/--file is a file and stays a path.
func grepRoles(name string, args []shellparse.Word, roles []role) []role {
	shortValues := "ABCDdefm"
	if name == "rg" {
		shortValues = "ABCEdefgjMmrtT"
	}
	explicit := false
	first := -1
	endOpts := false
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if endOpts || v == "-" || !strings.HasPrefix(v, "-") {
			if first < 0 {
				first = i
			}
			continue
		}
		if v == "--" {
			endOpts = true
			continue
		}
		if long, ok := strings.CutPrefix(v, "--"); ok {
			opt, _, hasValue := strings.Cut(long, "=")
			switch kind := grepLongKind(name, opt); {
			case kind == 'e':
				explicit = true
				if hasValue {
					roles[i] = roleText
				} else if i+1 < len(args) {
					i++
					roles[i] = roleText
				}
			case kind == 'f':
				explicit = true
				if !hasValue {
					i++
				}
			case kind == 'v':
				j := i // the word that holds the value
				if !hasValue {
					j = i + 1
				}
				if j < len(args) && !args[i].Dynamic && !args[j].Dynamic && excludingOption(name, opt, optValue(args[j].Value, hasValue)) {
					roles[j] = rolePattern
				}
				i = j
			}
			continue
		}
		for k := 1; k < len(v); k++ {
			c := v[k]
			if !strings.ContainsRune(shortValues, rune(c)) {
				continue
			}
			attached := k+1 < len(v)
			switch c {
			case 'e':
				explicit = true
				if attached {
					roles[i] = roleText
				} else if i+1 < len(args) {
					i++
					roles[i] = roleText
				}
			case 'f':
				explicit = true
				if !attached {
					i++
				}
			default:
				j := i // the word that holds the value
				if !attached {
					j = i + 1
				}
				if c == 'g' && name == "rg" && j < len(args) && !args[i].Dynamic && !args[j].Dynamic {
					val := args[j].Value
					if attached {
						val = v[k+1:]
					}
					if strings.HasPrefix(val, "!") {
						roles[j] = rolePattern // rg -g '!.env' leaves .env out
					}
				}
				i = j
			}
			break
		}
	}
	if !explicit && first >= 0 {
		roles[first] = roleText
	}
	return roles
}

// optValue returns the value of a long option written as word: the part
// after "=" when the value is attached, the whole word when it follows.
func optValue(word string, attached bool) string {
	if attached {
		_, v, _ := strings.Cut(word, "=")
		return v
	}
	return word
}

// excludingOption reports a search program's option whose value is a
// pattern of names left out: grep's --exclude and --exclude-dir, rg's
// negated globs (--glob '!.env'), ag's --ignore and --ignore-dir, ack's
// --ignore-dir. A file of such patterns (--exclude-from) is read.
func excludingOption(name, opt, value string) bool {
	switch opt {
	case "exclude", "exclude-dir":
		return name != "rg" && name != "ag" && name != "ack"
	case "glob", "iglob":
		return name == "rg" && strings.HasPrefix(value, "!")
	case "ignore":
		return name == "ag"
	case "ignore-dir", "ignore-directory":
		return name == "ag" || name == "ack"
	}
	return false
}

// grepLongKind classifies a long option of a search program: 'e' a pattern,
// 'f' a pattern file, 'v' another option taking a value, 0 none.
func grepLongKind(name, opt string) byte {
	switch opt {
	case "regexp":
		return 'e'
	case "file":
		return 'f'
	case "after-context", "before-context", "context", "max-count", "include", "exclude", "exclude-dir",
		"exclude-from", "label", "devices", "directories", "binary-files", "group-separator":
		return 'v'
	}
	switch {
	case name == "ag" && (opt == "ignore" || opt == "ignore-dir"),
		name == "ack" && (opt == "ignore-dir" || opt == "ignore-directory"):
		return 'v'
	}
	if name == "rg" {
		switch opt {
		case "glob", "iglob", "type", "type-not", "type-add", "type-clear", "max-columns", "replace",
			"threads", "max-depth", "max-filesize", "encoding", "sort", "sortr", "pre", "pre-glob",
			"colors", "color", "ignore-file", "path-separator", "context-separator",
			"field-match-separator", "field-context-separator", "engine", "dfa-size-limit", "regex-size-limit":
			return 'v'
		}
	}
	return 0
}

// gitRoles marks a message given with -m/--message to the git subcommands
// that take one as text. Everything else stays a possible path.
func gitRoles(args []shellparse.Word, buf []role) []role {
	sub := -1
	var carried []int // -c values git runs as commands, which the parser walks
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if v == "-C" || v == "-c" || v == "--git-dir" || v == "--work-tree" || v == "--namespace" {
			if v == "-c" && i+1 < len(args) && !args[i+1].Dynamic {
				if k, val, ok := strings.Cut(args[i+1].Value, "="); ok && shellparse.GitRunsValue(k, val) {
					carried = append(carried, i+1)
				}
			}
			i++
			continue
		}
		if !strings.HasPrefix(v, "-") {
			sub = i
			break
		}
	}
	if sub < 0 && len(carried) == 0 {
		return nil
	}
	roles := newRoles(buf, len(args))
	for _, i := range carried {
		roles[i] = roleText
	}
	if sub < 0 {
		return roles
	}
	marked := gitExcludes(args, sub, roles) || len(carried) > 0
	switch args[sub].Value {
	case "commit", "tag", "merge", "stash", "notes", "revert", "cherry-pick":
	case "check-ignore":
		// It matches the names against the ignore rules and opens none
		// of them ("git check-ignore -v .env").
		for i := sub + 1; i < len(args); i++ {
			if !strings.HasPrefix(args[i].Value, "-") && !args[i].Dynamic {
				roles[i] = roleMeta
			}
		}
		return roles
	case "rm":
		if gitRmCached(args, sub, roles) {
			return roles
		}
		if marked {
			return roles
		}
		return nil
	case "log", "show", "whatchanged", "shortlog", "rev-list", "reflog":
		return gitLogRoles(args, sub, roles)
	case "grep":
		return gitGrepRoles(args, sub, roles)
	default:
		if marked {
			return roles
		}
		return nil
	}
	for i := sub + 1; i < len(args); i++ {
		v := args[i].Value
		if v == "--" {
			break
		}
		if long, ok := strings.CutPrefix(v, "--"); ok {
			opt, _, hasValue := strings.Cut(long, "=")
			if opt == "message" {
				if hasValue {
					roles[i] = roleText
				} else if i+1 < len(args) {
					i++
					roles[i] = roleText
				}
			}
			continue
		}
		if !strings.HasPrefix(v, "-") || len(v) < 2 {
			continue
		}
		if k := strings.IndexByte(v, 'm'); k > 0 && onlyLetters(v[1:k]) {
			if k+1 < len(v) {
				roles[i] = roleText
			} else if i+1 < len(args) {
				i++
				roles[i] = roleText
			}
		}
	}
	return roles
}

// gitExcludes marks the pathspecs with exclude magic (":(exclude).env",
// ":!.env", ":^.env", ":/!.env") as patterns: they leave the files they
// match out of the command, and git opens none of them for them. It
// reports whether there was one.
func gitExcludes(args []shellparse.Word, sub int, roles []role) bool {
	found := false
	for i := sub + 1; i < len(args); i++ {
		if a := args[i]; !a.Dynamic && gitExcludePathspec(a.Value) {
			roles[i] = rolePattern
			found = true
		}
	}
	return found
}

// gitExcludePathspec reports a pathspec whose magic holds exclude: the
// long form ":(top,exclude)PATH" or the short one, the signs "/", "!" and
// "^" after the colon, up to an optional closing colon.
func gitExcludePathspec(v string) bool {
	if len(v) < 2 || v[0] != ':' {
		return false
	}
	if v[1] == '(' {
		magic, _, ok := strings.Cut(v[2:], ")")
		if !ok {
			return false
		}
		for m := range strings.SplitSeq(magic, ",") {
			if m == "exclude" {
				return true
			}
		}
		return false
	}
	for _, c := range []byte(v[1:]) {
		switch c {
		case '!', '^':
			return true
		case '/':
		default:
			return false
		}
	}
	return false
}

// gitRmCached marks the paths of git rm --cached as metadata: it only
// drops them from the index and neither opens nor removes the files
// ("git rm --cached .env" stops tracking a secret). It reports whether
// --cached was given. The file --pathspec-from-file reads stays a path.
func gitRmCached(args []shellparse.Word, sub int, roles []role) bool {
	cached := false
	for _, a := range args[sub+1:] {
		if a.Value == "--" {
			break
		}
		if a.Value == "--cached" && !a.Dynamic {
			cached = true
		}
	}
	if !cached {
		return false
	}
	opts := true
	for i := sub + 1; i < len(args); i++ {
		v := args[i].Value
		switch {
		case opts && v == "--":
			opts = false
		case opts && v == "--pathspec-from-file":
			i++
		case opts && strings.HasPrefix(v, "-"):
		case !args[i].Dynamic:
			roles[i] = roleMeta
		}
	}
	return true
}

// gitLogRoles marks the search strings and formats of git log and its
// relatives as text (-S, -G, --grep, --author, --committer, --format).
func gitLogRoles(args []shellparse.Word, sub int, roles []role) []role {
	for i := sub + 1; i < len(args); i++ {
		v := args[i].Value
		if v == "--" {
			break
		}
		if long, ok := strings.CutPrefix(v, "--"); ok {
			opt, _, hasValue := strings.Cut(long, "=")
			switch opt {
			case "grep", "author", "committer", "format", "pretty", "grep-reflog":
				if hasValue {
					roles[i] = roleText
				} else if i+1 < len(args) && opt != "pretty" && opt != "format" {
					i++
					roles[i] = roleText
				}
			}
			continue
		}
		if v == "-S" || v == "-G" {
			if i+1 < len(args) {
				i++
				roles[i] = roleText
			}
		} else if strings.HasPrefix(v, "-S") || strings.HasPrefix(v, "-G") {
			roles[i] = roleText
		}
	}
	return roles
}

// gitGrepRoles marks git grep's pattern as text: the values of -e, or else
// its first operand. The value of -f is a file.
func gitGrepRoles(args []shellparse.Word, sub int, roles []role) []role {
	explicit := false
	first := -1
	for i := sub + 1; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "--":
			i = len(args)
		case v == "-e":
			explicit = true
			if i+1 < len(args) {
				i++
				roles[i] = roleText
			}
		case v == "-f":
			explicit = true
			i++
		case v == "-A" || v == "-B" || v == "-C" || v == "-m" || v == "--max-depth" || v == "--threads" || v == "-O":
			i++
		case strings.HasPrefix(v, "-"):
		case first < 0:
			first = i
		}
	}
	if !explicit && first >= 0 {
		roles[first] = roleText
	}
	return roles
}

// gitMessageOnStdin reports a git command that reads a message from
// standard input (commit -F -, tag --file=-): a here-document given to it
// is text.
func gitMessageOnStdin(args []shellparse.Word) bool {
	sub := ""
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if args[i].Dynamic {
			return false
		}
		if sub == "" {
			if v == "-C" || v == "-c" || v == "--git-dir" || v == "--work-tree" || v == "--namespace" {
				i++
				continue
			}
			if !strings.HasPrefix(v, "-") {
				sub = v
				switch sub {
				case "commit", "tag", "notes", "merge", "stash":
				default:
					return false
				}
			}
			continue
		}
		if v == "--file=-" || (v == "-F" || v == "--file") && i+1 < len(args) && args[i+1].Value == "-" ||
			strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.HasSuffix(v, "F") && i+1 < len(args) && args[i+1].Value == "-" {
			return true
		}
	}
	return false
}

func onlyLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// isWrapperProgram reports programs that run another command given in their
// arguments. The parser peels these; when one reaches the guard unpeeled,
// the guard also judges every command the arguments could start.
func isWrapperProgram(name string) bool {
	switch name {
	case "sudo", "doas", "env", "nice", "nohup", "time", "timeout", "stdbuf", "ionice", "chrt", "taskset",
		"setsid", "command", "builtin", "exec", "xargs", "unbuffer", "watch", "strace", "ltrace", "flock",
		"chroot", "runuser", "busybox", "systemd-run", "nsenter", "unshare", "firejail", "torsocks", "proxychains":
		return true
	}
	return false
}

// isShell reports the shells whose -c argument is a script (parsed into
// commands of its own, so not scanned again as a wrapper word).
func isShell(name string) bool {
	switch name {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "su":
		return true
	}
	return false
}
