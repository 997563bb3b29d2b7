package classify

import (
	"path"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// systemBinDir reports a directory whose programs are the system's tools.
// A bare name resolves through PATH to one of them in any usual setup, so
// a path into one of them is no less trusted than the bare name.
func systemBinDir(dir string) bool {
	switch dir {
	case "/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin",
		"/opt/homebrew/bin", "/opt/homebrew/sbin", "/run/current-system/sw/bin":
		return true
	}
	return false
}

// fromElsewhere reports a program written as a path outside the system's
// bin directories (./cat, bin/ls, /tmp/cat, /usr/bin/../../tmp/cat): it is
// whatever someone put there, not the tool its base name suggests. A bare
// name and a path into a system bin directory are not.
func fromElsewhere(prog string) bool {
	if !strings.Contains(prog, "/") {
		return false
	}
	if !path.IsAbs(prog) {
		return true
	}
	return !systemBinDir(path.Dir(path.Clean(prog)))
}

// programElsewhere reports a command whose program, or one of whose
// wrappers, is written as a path outside the system's bin directories.
func programElsewhere(cmd shellparse.Command) bool {
	for _, w := range cmd.Wrappers {
		if len(w.Argv) > 0 && fromElsewhere(w.Argv[0]) {
			return true
		}
	}
	return len(cmd.Argv) > 0 && fromElsewhere(cmd.Argv[0].Value)
}

// optionValues returns the value of every occurrence of the named options,
// read the way getopt and getopt_long read them: "-o FILE", "-oFILE", a
// cluster such as "-ro FILE" whose letters before o take no value,
// "--output FILE", "--output=FILE", and an abbreviation such as "--out"
// of a long name, as the program's grammar reads it (see longMatch; an
// ambiguous one is counted, which can only make a command look like it
// does more). Words after "--" are operands.
func optionValues(args []shellparse.Word, spec toolSpec, names []string) []shellparse.Word {
	if len(names) == 0 {
		return nil
	}
	var out []shellparse.Word
	next := func(i int) (shellparse.Word, bool) {
		if i+1 < len(args) {
			return args[i+1], true
		}
		return shellparse.Word{}, false
	}
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		if v == "--" {
			break
		}
		if len(v) < 2 || v[0] != '-' {
			continue
		}
		opt, val, hasEq := strings.Cut(v, "=")
		if strings.HasPrefix(v, "--") || slices.Contains(names, opt) || spec.takes(opt) {
			// A long option, or a single-dash option the catalog spells
			// out whole (xxd -cols, nmap -oN).
			if !longMatch(opt, names, spec) {
				if !hasEq && spec.takes(opt) {
					i++
				}
				continue
			}
			switch {
			case hasEq:
				out = append(out, shellparse.Word{Value: val, Dynamic: w.Dynamic})
			default:
				if n, ok := next(i); ok {
					out = append(out, n)
					i++
				}
			}
			continue
		}
		// A cluster of short options.
		for j := 1; j < len(v); j++ {
			o := "-" + v[j:j+1]
			if !slices.Contains(names, o) {
				if spec.takes(o) {
					if j+1 == len(v) {
						i++
					}
					break
				}
				continue
			}
			if rest := v[j+1:]; rest != "" {
				out = append(out, shellparse.Word{Value: rest, Dynamic: w.Dynamic})
			} else if n, ok := next(i); ok {
				out = append(out, n)
				i++
			}
			break
		}
	}
	return out
}

// longMatch reports whether opt names one of names, exactly or as an
// abbreviation of a long name: the way the program's grammar reads it
// when the catalog records one (an ambiguous abbreviation names each
// option it may stand for), and otherwise as any prefix of a long name.
func longMatch(opt string, names []string, spec toolSpec) bool {
	if slices.Contains(names, opt) {
		return true
	}
	if !strings.HasPrefix(opt, "--") || len(opt) < 3 {
		return false
	}
	if g := spec.gram.built(); g != nil {
		return g.names(opt[2:], names)
	}
	if spec.takes(opt) {
		return false
	}
	for _, n := range names {
		if strings.HasPrefix(n, "--") && strings.HasPrefix(n, opt) {
			return true
		}
	}
	return false
}

// optionAccesses adds what the catalog's file and command options do: an
// out: option's value is written, an in: option's value is read, and a
// run: option makes the program run code. It reports whether a value is
// written.
func (c *Classification) optionAccesses(cmd shellparse.Command, pl Place, name string, spec toolSpec) (writes bool) {
	args := cmd.Argv[1:]
	skip := func(v string) bool {
		// "-" is stdin or stdout; vim's NONE loads or writes nothing.
		return v == "-" || v == "" || (name == "view" && v == "NONE")
	}
	for _, v := range optionValues(args, spec, spec.outs) {
		if !skip(v.Value) {
			c.add(pl, FSWrite, v)
			writes = true
		}
	}
	for _, v := range optionValues(args, spec, spec.ins) {
		if !skip(v.Value) {
			c.add(pl, FSRead, v)
		}
	}
	for _, v := range optionValues(args, spec, spec.runs) {
		if !skip(v.Value) {
			c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
			c.Verb, c.Reversibility = "run", "partial"
			break
		}
	}
	return writes
}

// readsListedFiles reports --files0-from, with which sort, wc and du read
// the files a list names: paths not known before the program runs.
func readsListedFiles(name string, args []shellparse.Word) bool {
	switch name {
	case "sort", "wc", "du":
		return len(optionValues(args, specOf(name), []string{"--files0-from"})) > 0
	}
	return false
}

// yqLoads reports a yq expression that reads files it names itself
// (load, load_str, load_xml, load_props, load_base64, ...).
func yqLoads(args []shellparse.Word) bool {
	for _, w := range args {
		v := w.Value
		for i := 0; ; {
			j := strings.Index(v[i:], "load")
			if j < 0 {
				break
			}
			j += i
			i = j + 4
			if j > 0 && isIdentByte(v[j-1]) {
				continue
			}
			k := i
			for k < len(v) && isIdentByte(v[k]) {
				k++
			}
			if k > i && v[i] != '_' {
				continue // loader, loads, ...
			}
			for k < len(v) && (v[k] == ' ' || v[k] == '\t') {
				k++
			}
			if k < len(v) && v[k] == '(' {
				return true
			}
		}
	}
	return false
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// curlFileArgs returns the local files curl reads through its data and
// form options (-d @FILE, --data-binary @FILE, --json @FILE, -H @FILE,
// --data-urlencode NAME@FILE, -F NAME=@FILE, -F NAME=<FILE).
func curlFileArgs(args []shellparse.Word) []shellparse.Word {
	spec := specOf("curl")
	var out []shellparse.Word
	at := func(w shellparse.Word, v string) {
		if v != "" && v != "-" {
			out = append(out, shellparse.Word{Value: v, Dynamic: w.Dynamic})
		}
	}
	for _, w := range optionValues(args, spec, []string{"-d", "--data", "--data-ascii", "--data-binary", "--json", "-H", "--header", "-K", "--config"}) {
		if f, ok := strings.CutPrefix(w.Value, "@"); ok {
			at(w, f)
		}
	}
	for _, w := range optionValues(args, spec, []string{"--data-urlencode"}) {
		v := w.Value
		if eq := strings.IndexByte(v, '='); eq >= 0 {
			v = v[:eq]
		}
		if _, f, ok := strings.Cut(v, "@"); ok {
			at(w, f)
		}
	}
	for _, w := range optionValues(args, spec, []string{"-F", "--form"}) {
		_, v, ok := strings.Cut(w.Value, "=")
		if !ok || v == "" || (v[0] != '@' && v[0] != '<') {
			continue
		}
		f, _, _ := strings.Cut(v[1:], ";")
		at(w, f)
	}
	return out
}

// CurlWriteOut returns the files curl's --write-out formats name: read
// ("@FILE": the format is read from FILE, "@-" from stdin) and written
// (%output{FILE} and %output{>>FILE}, curl 8.3 and later: what the
// format prints after it goes to FILE, created or appended to). A format
// not known before it runs may hold %output{} and so write any file.
func CurlWriteOut(args []shellparse.Word) (reads, writes []shellparse.Word) {
	for _, w := range optionValues(args, specOf("curl"), []string{"-w", "--write-out"}) {
		v := w.Value
		if w.Dynamic {
			// The source text, quotes and all.
			v = strings.TrimLeft(v, `"'`)
			if f, ok := strings.CutPrefix(v, "@"); ok {
				reads = append(reads, shellparse.Word{Value: f, Dynamic: true})
			} else {
				writes = append(writes, shellparse.Word{Value: v, Dynamic: true})
			}
			continue
		}
		if f, ok := strings.CutPrefix(v, "@"); ok {
			if f != "-" && f != "" {
				reads = append(reads, shellparse.Word{Value: f})
			}
			continue
		}
		for {
			// curl compares the name exactly; any spelling counts here.
			i := strings.Index(strings.ToLower(v), "%output{")
			if i < 0 {
				break
			}
			v = v[i+len("%output{"):]
			end := strings.IndexByte(v, '}')
			if end < 0 {
				break
			}
			if f := strings.TrimPrefix(v[:end], ">>"); f != "" {
				if f[0] == '~' {
					// curl takes ~ as a name, not as the home directory.
					f = "./" + f
				}
				writes = append(writes, shellparse.Word{Value: f})
			}
			v = v[end+1:]
		}
	}
	return reads, writes
}

// sshRunsLocal reports ssh options that run a local command: a
// ProxyCommand, LocalCommand or KnownHostsCommand given with -o, a
// configuration file (-F) that can set them, and the program scp or sftp
// runs for the connection (-S, sftp -D).
func sshRunsLocal(name string, args []shellparse.Word) bool {
	spec := specOf(name)
	for _, w := range optionValues(args, spec, []string{"-o"}) {
		key, _, _ := strings.Cut(strings.TrimSpace(w.Value), "=")
		key, _, _ = strings.Cut(key, " ")
		switch strings.ToLower(key) {
		case "proxycommand", "localcommand", "knownhostscommand":
			return true
		}
		if w.Dynamic {
			return true
		}
	}
	names := []string{"-F"}
	switch name {
	case "scp":
		names = append(names, "-S")
	case "sftp":
		names = append(names, "-S", "-D")
	}
	for _, w := range optionValues(args, spec, names) {
		if w.Value != "none" {
			return true
		}
	}
	return false
}

// hasSwitch reports whether any of the named options is given, alone, in
// a cluster of short options ("-Pi" for -i), with a value ("--file=x"),
// or as an abbreviation of a long name, the way optionValues reads them.
func hasSwitch(args []shellparse.Word, spec toolSpec, names ...string) bool {
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if v == "--" {
			return false
		}
		if len(v) < 2 || v[0] != '-' {
			continue
		}
		opt, _, hasEq := strings.Cut(v, "=")
		if strings.HasPrefix(v, "--") || slices.Contains(names, opt) || spec.takes(opt) {
			if longMatch(opt, names, spec) {
				return true
			}
			if !hasEq && spec.takes(opt) {
				i++
			}
			continue
		}
		for j := 1; j < len(v); j++ {
			o := "-" + v[j:j+1]
			if slices.Contains(names, o) {
				return true
			}
			if spec.takes(o) {
				if j+1 == len(v) {
					i++
				}
				break
			}
		}
	}
	return false
}

// rsyncRunsLocal reports a remote shell (-e, --rsh) that is not plain ssh
// with harmless options: rsync runs it as a local command.
func rsyncRunsLocal(args []shellparse.Word) bool {
	for _, w := range optionValues(args, specOf("rsync"), []string{"-e", "--rsh"}) {
		f := strings.Fields(w.Value)
		if w.Dynamic || len(f) == 0 || f[0] != "ssh" && f[0] != "/usr/bin/ssh" || strings.ContainsAny(w.Value, "$`;|&<>()\\\"'") {
			return true
		}
		words := make([]shellparse.Word, 0, len(f)-1)
		for _, x := range f[1:] {
			words = append(words, shellparse.Word{Value: x})
		}
		if sshRunsLocal("ssh", words) || sshRunsRemote(words) {
			return true
		}
	}
	return false
}

// curlWgetConfigured reports a configuration that can name files the
// command line does not: curl -K/--config, wget --config, and a wgetrc
// command (-e) that sets a file or directory.
func curlWgetConfigured(name string, args []shellparse.Word) bool {
	spec := specOf(name)
	if name == "curl" {
		return len(optionValues(args, spec, []string{"-K", "--config"})) > 0
	}
	if len(optionValues(args, spec, []string{"--config"})) > 0 {
		return true
	}
	for _, w := range optionValues(args, spec, []string{"-e", "--execute"}) {
		key, _, _ := strings.Cut(w.Value, "=")
		key = strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(key))
		if w.Dynamic {
			return true
		}
		for _, k := range []string{"file", "dir", "document", "cookies", "input", "prefix", "certificate", "key", "output"} {
			if strings.Contains(key, k) {
				return true
			}
		}
	}
	return false
}

// searchesWorkingDir reports a search given no path that searches the
// working directory: rg, ag and ack always, and grep when recursive.
func searchesWorkingDir(name string, args []shellparse.Word) bool {
	switch name {
	case "rg", "ag", "ack":
		return true
	case "grep", "egrep", "fgrep":
		spec := specOf(name)
		if hasSwitch(args, spec, "-r", "-R", "--recursive", "--dereference-recursive") {
			return true
		}
		for _, d := range optionValues(args, spec, []string{"-d", "--directories"}) {
			if d.Value == "recurse" || d.Dynamic {
				return true
			}
		}
	}
	return false
}

// isPager reports a pager (or viewer) that takes +CMD, a command to run at
// start.
func isPager(name string) bool {
	switch name {
	case "less", "more", "most", "view", "zless", "zmore", "bzless", "xzless":
		return true
	}
	return false
}

// jqPairOption reports a jq option that takes two values (NAME and a value
// or file); the catalog lists it as taking one.
func jqPairOption(opt string) bool {
	switch opt {
	case "--arg", "--argjson", "--rawfile", "--slurpfile":
		return true
	}
	return false
}

// What an option word names, once read with the program's grammar.
const (
	optUnknown   = iota // no option of the program
	optExact            // an option as written
	optAbbrev           // a unique abbreviation of an option
	optAmbiguous        // an abbreviation of several options
)

// resolve reads a long option name (without its dashes and value) the
// way the program does: it returns the spelling it stands for, or, when
// ambiguous, the spellings it could stand for.
func (g *grammar) resolve(name string) (spelling, int, []spelling) {
	if name == "" {
		return spelling{}, optUnknown, nil
	}
	if g.style == styleFold {
		name = strings.ToLower(name)
	}
	// The first spelling not below name (a loop, not a search function,
	// so that name stays on the caller's stack).
	lo, hi := 0, len(g.long)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if g.long[m].text < name {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(g.long) && g.long[lo].text == name {
		return g.long[lo], optExact, nil
	}
	if g.style == styleExact || g.style == styleFold {
		return spelling{}, optUnknown, nil
	}
	var first spelling
	var others []spelling
	n := 0
	for i := lo; i < len(g.long) && strings.HasPrefix(g.long[i].text, name); i++ {
		sp := g.long[i]
		switch {
		case n == 0:
			first, n = sp, 1
		case sp.group == first.group:
			// Another name of the same option (--color, --colour): an
			// option's own name over its negation.
			if first.neg && !sp.neg {
				first = sp
			}
		default:
			dup := false
			for _, o := range others {
				dup = dup || o.group == sp.group
			}
			if !dup {
				others = append(others, sp)
				n++
			}
		}
	}
	switch n {
	case 0:
		return spelling{}, optUnknown, nil
	case 1:
		return first, optAbbrev, nil
	}
	return spelling{}, optAmbiguous, append([]spelling{first}, others...)
}

// takesValue reports whether opt (a short option or a long one, possibly
// abbreviated) needs a value, attached or in the next word.
func (g *grammar) takesValue(opt string) bool {
	if name, ok := strings.CutPrefix(opt, "--"); ok {
		sp, st, _ := g.resolve(name)
		return (st == optExact || st == optAbbrev) && !sp.neg && g.groups[sp.group].arg == argRequired
	}
	if len(opt) == 2 && opt[0] == '-' {
		return g.shortArg(opt[1]) == argRequired
	}
	return false
}

// shortArg is whether the short option -c takes a value.
func (g *grammar) shortArg(c byte) argKind {
	if i, ok := g.short[c]; ok {
		return g.groups[i].arg
	}
	return argNone
}

// names reports whether a long option name (without its dashes) stands
// for one of the options names lists: the option it abbreviates, or, for
// an ambiguous abbreviation, any of them (the most dangerous reading).
func (g *grammar) names(name string, names []string) bool {
	sp, st, cands := g.resolve(name)
	switch st {
	case optExact, optAbbrev:
		return !sp.neg && slices.Contains(names, "--"+sp.text)
	case optAmbiguous:
		for _, c := range cands {
			if !c.neg && slices.Contains(names, "--"+c.text) {
				return true
			}
		}
	}
	return false
}

// shortLetters returns the option letters of a cluster of short options
// ("-fd", "-cNAME"), read the way getopt reads it: the letters up to and
// including the first that takes a value, whose value is the rest of the
// word. Without a grammar every letter counts.
func shortLetters(g *grammar, v string) string {
	if len(v) < 2 || v[0] != '-' || v[1] == '-' {
		return ""
	}
	if g == nil {
		return v[1:]
	}
	for j := 1; j < len(v); j++ {
		if g.shortArg(v[j]) != argNone {
			return v[1 : j+1]
		}
	}
	return v[1:]
}

// staticName reports whether the name of the option word v, whose value
// is computed at run time, is known: what comes before the first
// expansion holds the whole name (--message=$M, -m$M, -n"$N").
func (g *grammar) staticName(v string) bool {
	stat := v[:strings.IndexAny(v+"$`", "$`")]
	if strings.HasPrefix(stat, "--") {
		return strings.Contains(stat, "=")
	}
	l := shortLetters(g, stat)
	if l == "" {
		return false
	}
	return g.shortArg(l[len(l)-1]) != argNone
}

// gitGrammar is the grammar of a git subcommand, or nil.
func gitGrammar(sub string) *grammar {
	if git, ok := catalog()["git"]; ok {
		return git.subs[sub].built()
	}
	return nil
}

// optionGrammar finds the grammar that reads a command's options: the
// program's, or for git the subcommand's, with the index in argv where
// its options begin.
func optionGrammar(cmd shellparse.Command) (g *grammar, start int) {
	if cmd.Dynamic || len(cmd.Argv) < 2 || cmd.Argv[0].Dynamic {
		return nil, 0
	}
	spec, ok := catalog()[cmd.Name()]
	if !ok {
		return nil, 0
	}
	if spec.kind != kindGit {
		return spec.gram.built(), 1
	}
	// git's own options come before the subcommand, each as one word or
	// with its value in the next (-C DIR, -c NAME=VALUE).
	for i := 1; i < len(cmd.Argv); i++ {
		w := cmd.Argv[i]
		if w.Dynamic {
			return nil, 0
		}
		v := w.Value
		if !strings.HasPrefix(v, "-") {
			return spec.subs[v].built(), i + 1
		}
		if !strings.Contains(v, "=") && spec.takes(v) {
			i++
		}
	}
	return nil, 0
}

// optionLabel names the program whose options start at argv[start] in an
// explanation: "sed", "git push".
func optionLabel(cmd shellparse.Command, start int) string {
	if start > 1 {
		return cmd.Name() + " " + cmd.Argv[start-1].Value
	}
	return cmd.Name()
}

// expandOptions returns the command with every long option the program
// would read as an abbreviation written out in full (git reset --har is
// git reset --hard; sed --in-pl=.bak is sed --in-place=.bak; view --CMD
// is view --cmd): the same words in the same order, each abbreviation
// replaced by the name it stands for. Words after "--", values of options
// that take one, and words not known statically are left as they are.
// The argv slice is copied only when a word changes.
//
// why is not empty when the command holds an option mnemos cannot name:
// an abbreviation of several options (which the program refuses, and no
// decision should lean on), or an option name not known before the
// command runs (--$X, -$FLAGS).
func ExpandOptions(cmd shellparse.Command) (out shellparse.Command, why string) {
	g, start := optionGrammar(cmd)
	if g == nil {
		return cmd, ""
	}
	out = cmd
	copied := false
	for i := start; i < len(cmd.Argv); i++ {
		w := cmd.Argv[i]
		v := w.Value
		if v == "--" || (g.style == styleGit && v == "--end-of-options" && !w.Dynamic) {
			break
		}
		if len(v) < 2 || v[0] != '-' {
			continue
		}
		if w.Dynamic && !g.staticName(v) {
			if why == "" {
				why = optionLabel(cmd, start) + " is given an option whose name is not known before it runs (" + v + ")"
			}
			continue
		}
		if v[1] != '-' {
			// A cluster of short options: a letter that takes a value
			// takes the rest of the word, or else the next word.
			l := shortLetters(g, v)
			if l != "" && len(l) == len(v)-1 && g.shortArg(l[len(l)-1]) == argRequired {
				i++
			}
			continue
		}
		name, val, hasEq := strings.Cut(v[2:], "=")
		sp, st, cands := g.resolve(name)
		switch st {
		case optAmbiguous:
			if why == "" {
				alts := make([]string, len(cands))
				for k, c := range cands {
					alts[k] = "--" + c.text
				}
				why = optionLabel(cmd, start) + " reads --" + name + " as an abbreviation of " + strings.Join(alts, ", ") +
					": the program refuses it, and which one is meant cannot be told"
			}
			continue
		case optUnknown:
			continue
		case optAbbrev, optExact:
			if st == optExact && sp.text == name {
				break // as written
			}
			if !copied {
				out.Argv = slices.Clone(cmd.Argv)
				copied = true
			}
			full := "--" + sp.text
			if hasEq {
				full += "=" + val
			}
			out.Argv[i] = shellparse.Word{Value: full, Dynamic: w.Dynamic}
		}
		if !hasEq && !sp.neg && g.groups[sp.group].arg == argRequired {
			i++
		}
	}
	return out, why
}

// Classify maps a parsed command to what it does. It is pure: it never
// looks at the filesystem. Options are read the way the program reads
// them: an abbreviation it accepts (git reset --har) is classified as the
// option it stands for; one it would refuse as ambiguous, or an option
// whose name is not known before the command runs, makes the command one
// mnemos never allows without a person. Targets name the command as
// written.
func Classify(cmd shellparse.Command, pl Place) Classification {
	c, _ := ClassifyExpanded(cmd, pl)
	return c
}

// ClassifyExpanded is Classify, also returning the command as
// ExpandOptions writes it out, which Classify reads: a caller that needs
// both does the work once.
func ClassifyExpanded(cmd shellparse.Command, pl Place) (Classification, shellparse.Command) {
	x, why := ExpandOptions(cmd)
	c := classifyArgv(x, pl)
	if len(x.Argv) > 0 && &x.Argv[0] != &cmd.Argv[0] {
		from, to := x.String(), cmd.String()
		for i := range c.Accesses {
			if c.Accesses[i].Target == from {
				c.Accesses[i].Target = to
			}
		}
	}
	if why != "" {
		c.raise(Ask, why)
	}
	return c, x
}
