package policy

import (
	"path"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// An allow rule's argv_prefix says which command its author (or a person
// answering "don't ask again") meant: `make test`, run here, with the
// makefile they know. The words after the prefix may change that: make
// test -f other.mk runs another makefile, make test SHELL=/tmp/x another
// shell, git fetch --upload-pack=CMD a command, npm test
// --script-shell=CMD another shell; a variable given to the command
// (PAGER=..., GIT_TRACE=...) does too. Such a command is not the one the
// rule allows: the rule does not match it, and the command is judged on
// its own (by the other rules and the table).
//
// This holds for every argv_prefix allow rule, written by hand or by
// --remember: the words of the prefix itself are what the author chose
// (a rule for [make, -f, ci.mk] covers that makefile), and an author who
// means every use of a program writes a rule on the command's name
// (command: {equals: make}) rather than a prefix. Ask and deny rules keep
// matching whatever follows: they only make a decision stricter.

// prefixEscape returns why a command whose words start with an allow
// rule's argv_prefix does more than the prefix names, or "".
func prefixEscape(in *Input, cl *classify.Classification, prefix []string) string {
	cmd := &in.Command
	if why := envEscape(in, false); why != "" {
		return why
	}
	tail := cmd.Argv[len(prefix):]
	name := path.Base(cmd.Argv[0].Value)
	if why := escapingOption(name, cmd.Argv[1:], len(prefix)-1); why != "" {
		return why
	}
	if len(tail) == 0 {
		return ""
	}
	if _, ok := escapeTables(name); ok {
		for _, w := range tail {
			if w.Dynamic {
				return "the word " + w.Value + " after the prefix is not known before the command runs"
			}
		}
	}
	// What the options after the prefix add: a capability the prefix
	// alone does not use (sed -n p f -i writes, rsync ... -e CMD runs).
	// A prefix of the program's name alone names no use of it to compare
	// with, and operands name what the command works on, not how.
	if len(prefix) < 2 || !slices.ContainsFunc(tail, func(w shellparse.Word) bool { return strings.HasPrefix(w.Value, "-") }) {
		return ""
	}
	readOnly := true
	for _, a := range cl.Accesses {
		if a.Capability != classify.FSRead && a.Capability != classify.ParseLocal && a.Capability != classify.TimeRead {
			readOnly = false
			break
		}
	}
	if readOnly {
		return ""
	}
	short := *cmd
	short.Argv = cmd.Argv[:len(prefix)]
	short.Assigns = nil
	base := classify.Classify(short, in.Place)
	for _, a := range cl.Accesses {
		if !classify.HasCap(&base, a.Capability) {
			return "the words after the prefix add " + string(a.Capability)
		}
	}
	return ""
}

// envEscape returns why the environment given to a command makes it
// another command than its words name (PAGER=..., GIT_DIR=...), or "".
// An allow rule that names a command by its words (argv_prefix, or
// conditions on argv and command only) does not cover it; one that
// judges its accesses (capability, targets, target conditions) sees
// what the variable does among them. A PATH of installed programs'
// directories, or one a virtualenv of the workspace puts first, does not
// make it another command to a rule that relies on the sandbox (the
// contained-work rule), which judges by what the command's accesses are:
// the workspace's code is among them (classify.EnvInPlace).
func envEscape(in *Input, sandboxRule bool) string {
	for _, a := range in.Command.Assigns {
		n, val, known := classify.SplitAssign(a)
		if code, ok := classify.EnvInPlace(n, val, known, in.Place); ok && (!code || sandboxRule) {
			continue
		}
		if j := classify.JudgeEnv(n, val, known); j.Capability != "" {
			return "the command is given " + n + ": " + j.Why
		}
	}
	return ""
}

// judgesAccesses reports a rule that matches a command by what it does
// (capability, targets, a condition on each access), not by its words
// alone.
func (r *Rule) judgesAccesses() bool {
	if r.Capability != "" || r.InWorkspace {
		return true
	}
	for i := range r.Conditions {
		if r.Conditions[i].field().perAccess() {
			return true
		}
	}
	return false
}

// escapeTable lists a program's options that make it run other code,
// read another set of files or work elsewhere.
type escapeTable struct {
	short string // short options that escape
	value string // short options whose value is attached or the next word
	// optional: short options whose value, if any, is attached (make -j4).
	optional string
	long     []string // long options that escape, and any abbreviation of at least 3 letters
	// single: long options are written with one dash (go -toolexec).
	single bool
	// assigns: NAME=value operands change the program's variables (make).
	assigns bool
}

func escapeTables(name string) (escapeTable, bool) {
	switch name {
	case "make", "gmake":
		// make --help: -f FILE, -C DIR, -I DIR, -E STRING, -e; VAR=value.
		return escapeTable{short: "fCIEe", value: "fCIEoW", optional: "jlO",
			long:    []string{"--file", "--makefile", "--directory", "--include-dir", "--eval", "--environment-overrides"},
			assigns: true}, true
	case "npm", "pnpm", "yarn":
		// Every npm configuration key is also a flag (npm help config).
		return escapeTable{short: "Cc", value: "Cc", long: []string{"--prefix", "--userconfig", "--globalconfig",
			"--script-shell", "--shell", "--node-options", "--registry", "--git", "--editor", "--browser", "--cache",
			"--init-module", "--onload-script", "--call", "--package", "--dir", "--cwd", "--global-dir", "--config",
			"--ignore-scripts"}}, true
	case "go":
		// go help build: -C dir, -toolexec, -exec, -modfile, -overlay,
		// go vet's -vettool (a program it runs),
		// -o, -ldflags (-extld), -gccgoflags, -pkgdir; go help testflag:
		// the profiles, traces and coverage files a test run writes
		// wherever they name (also as -test.NAME).
		return escapeTable{single: true, long: []string{"-C", "-toolexec", "-vettool", "-exec", "-modfile", "-overlay", "-o",
			"-ldflags", "-gccgoflags", "-pkgdir", "-work",
			"-cpuprofile", "-memprofile", "-blockprofile", "-mutexprofile", "-trace", "-coverprofile", "-outputdir",
			"-test.cpuprofile", "-test.memprofile", "-test.blockprofile", "-test.mutexprofile", "-test.trace",
			"-test.coverprofile", "-test.outputdir", "-test.gocoverdir"}}, true
	case "cargo":
		return escapeTable{short: "CZ", value: "CZ", long: []string{"--config", "--manifest-path", "--target-dir",
			"--path", "--git", "--registry", "--index", "--root"}}, true
	case "pip", "pip3":
		return escapeTable{short: "ifrcetC", value: "ifrcetC", long: []string{"--index-url", "--extra-index-url",
			"--find-links", "--trusted-host", "--requirement", "--constraint", "--editable", "--target", "--prefix",
			"--root", "--src", "--config-settings", "--user", "--no-build-isolation"}}, true
	case "cmake":
		return escapeTable{short: "CPDSBE", value: "CPDSB", long: []string{"--build", "--install", "--preset"}}, true
	case "tar":
		return escapeTable{short: "CTIF", value: "CTIFfbHKLNVgX", long: []string{"--directory", "--files-from",
			"--to-command", "--checkpoint-action", "--use-compress-program", "--rmt-command", "--rsh-command",
			"--info-script", "--new-volume-script"}}, true
	case "rsync":
		return escapeTable{short: "e", value: "eBTM", long: []string{"--rsh", "--rsync-path", "--files-from",
			"--include-from", "--exclude-from", "--filter", "--temp-dir", "--partial-dir"}}, true
	}
	return escapeTable{}, false
}

// escapingOption finds, in a command's arguments (program name
// excluded), an option at or after index from that escapes the prefix.
func escapingOption(name string, args []shellparse.Word, from int) string {
	if name == "git" {
		return gitEscape(args, from)
	}
	t, ok := escapeTables(name)
	if !ok {
		return ""
	}
	for i := 0; i < len(args); i++ {
		w := args[i].Value
		if w == "--" {
			break
		}
		inTail := i >= from
		switch {
		case t.assigns && isAssignWord(w):
			if inTail {
				return "the variable " + strings.SplitN(w, "=", 2)[0] + " set after the prefix changes what " + name + " runs"
			}
		case strings.HasPrefix(w, "--") || t.single && strings.HasPrefix(w, "-") && len(w) > 1:
			opt, _, _ := strings.Cut(w, "=")
			if inTail && longEscapes(opt, t) {
				return "the option " + opt + " after the prefix makes " + name + " run other code, read other files or work elsewhere"
			}
		case strings.HasPrefix(w, "-") && len(w) > 1:
			for k := 1; k < len(w); k++ {
				if inTail && strings.IndexByte(t.short, w[k]) >= 0 {
					return "the option -" + string(w[k]) + " after the prefix makes " + name + " run other code, read other files or work elsewhere"
				}
				if strings.IndexByte(t.value, w[k]) >= 0 {
					if k == len(w)-1 {
						i++ // the value is the next word
					}
					break
				}
				if strings.IndexByte(t.optional, w[k]) >= 0 {
					break
				}
			}
		}
	}
	return ""
}

// longEscapes reports a long option that is one of the table's or may
// abbreviate one (programs using getopt_long, optparse or nopt accept a
// unique prefix; any prefix of two letters or more is taken as the
// option it may stand for, unique or not).
func longEscapes(opt string, t escapeTable) bool {
	for _, l := range t.long {
		if opt == l {
			return true
		}
		if t.single {
			if "-"+opt == l || opt == "-"+l {
				return true
			}
			continue
		}
		if len(opt) >= 4 && strings.HasPrefix(l, opt) {
			return true
		}
	}
	return false
}

// isAssignWord reports a make variable assignment among the operands:
// NAME=value, NAME:=value, NAME+=value..., where a make variable's name
// may hold any character but whitespace, ':', '#' and '=' (.SHELLFLAGS).
func isAssignWord(w string) bool {
	n, _, ok := strings.Cut(w, "=")
	n = strings.TrimRight(n, ":+?!")
	return ok && n != "" && !strings.HasPrefix(n, "-") && !strings.ContainsAny(n, " \t:#")
}

// gitEscape finds, at or after index from of git's arguments, a global
// option that points git at another repository, configuration or
// executable (-c, -C, --git-dir, --work-tree, --exec-path, --namespace,
// --config-env), or a subcommand option that runs a command or reads a
// template (--upload-pack, --receive-pack, --exec, rebase -x, clone -c
// and -u, --template, --separate-git-dir, --ext-diff, grep -O, difftool
// -x and --extcmd).
func gitEscape(args []shellparse.Word, from int) string {
	sub := -1
	for i := 0; i < len(args); i++ {
		w := args[i].Value
		if !strings.HasPrefix(w, "-") {
			sub = i
			break
		}
		opt, _, eq := strings.Cut(w, "=")
		switch opt {
		case "-c", "-C", "--git-dir", "--work-tree", "--exec-path", "--namespace", "--config-env", "--super-prefix":
			if i >= from && (opt != "--exec-path" || eq) {
				return "the option " + opt + " after the prefix points git at another repository, configuration or program"
			}
			if !eq && opt != "--exec-path" {
				i++
			}
		default:
			if i >= from && len(opt) >= 4 && (strings.HasPrefix("--git-dir", opt) || strings.HasPrefix("--work-tree", opt) ||
				strings.HasPrefix("--exec-path", opt) || strings.HasPrefix("--namespace", opt) || strings.HasPrefix("--config-env", opt)) {
				return "the option " + opt + " after the prefix points git at another repository, configuration or program"
			}
		}
	}
	if sub < 0 {
		return ""
	}
	subName := args[sub].Value
	long := []string{"--upload-pack", "--receive-pack", "--exec", "--template", "--separate-git-dir", "--ext-diff",
		"--textconv", "--open-files-in-pager", "--extcmd", "--tool", "--config", "--git-dir", "--work-tree"}
	short := ""
	switch subName {
	case "rebase":
		short = "x"
	case "clone":
		short = "cu"
	case "grep":
		short = "O"
	case "difftool", "mergetool":
		short = "xt"
	case "submodule", "bisect", "filter-branch", "config":
		// foreach CMD, run CMD, filters, --file: the words themselves
		// are commands or another file.
		for _, w := range args[max(sub+1, from):] {
			switch w.Value {
			case "foreach", "run", "--tree-filter", "--index-filter", "--msg-filter", "--env-filter",
				"--commit-filter", "--parent-filter", "--tag-name-filter", "--file", "-f", "--blob", "--global", "--system":
				return "the word " + w.Value + " after the prefix makes git run a command or use another configuration"
			}
		}
	}
	for i := max(sub+1, from); i < len(args); i++ {
		w := args[i].Value
		if w == "--" {
			break
		}
		if strings.HasPrefix(w, "--") {
			opt, _, _ := strings.Cut(w, "=")
			for _, l := range long {
				if opt == l || len(opt) >= 4 && strings.HasPrefix(l, opt) {
					return "the option " + opt + " after the prefix makes git run a command or use another repository"
				}
			}
			continue
		}
		if strings.HasPrefix(w, "-") && len(w) > 1 && short != "" {
			// Only the cluster's first letter is sure to be an option:
			// later ones may be its value.
			if strings.IndexByte(short, w[1]) >= 0 {
				return "the option -" + string(w[1]) + " after the prefix makes git " + subName + " run a command"
			}
		}
	}
	return ""
}
