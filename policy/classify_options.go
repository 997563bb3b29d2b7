package policy

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
// of a long name (counted even when the program would find it ambiguous,
// which can only make a command look like it does more). A word that is
// itself an option the catalog lists is never read as an abbreviation.
// Words after "--" are operands.
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
// abbreviation of a long name.
func longMatch(opt string, names []string, spec toolSpec) bool {
	if slices.Contains(names, opt) {
		return true
	}
	if !strings.HasPrefix(opt, "--") || len(opt) < 3 || spec.takes(opt) {
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
