package classify

import (
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/later"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// Access is one thing a command does: a capability exercised on a target.
type Access struct {
	Capability Capability `json:"capability"`
	// Target is an absolute, cleaned path for path_glob capabilities, a host
	// for network:http, a recipient for mail:send, the command line for
	// code:exec, and empty when the capability has no target.
	Target string `json:"target,omitempty"`
	// Dynamic is true when the target is not known statically.
	Dynamic bool `json:"dynamic,omitempty"`
	// Glob is true when Target is a pattern the shell expands (*, ?) whose
	// every match lies below the directory it names: no "..", no hidden
	// names. It can lie in the workspace and be covered by a grant, but it
	// satisfies no condition of an allow rule.
	Glob bool `json:"glob,omitempty"`
	// Model is the model an llm:online access names on its command line
	// (--model, -m, a JSON body's "model"), "" when not known; the
	// policy's costs: section estimates the call from it.
	Model string `json:"model,omitempty"`
}

// Classification is what a command does, in the registry's vocabulary.
type Classification struct {
	Accesses []Access `json:"accesses"`
	// Verb is the imperative used on the approval card ("write", "run").
	Verb string `json:"verb"`
	// Reversibility is "reversible", "partial" or "irreversible".
	Reversibility string `json:"reversibility"`
	// Floor is the least restrictive outcome this command may get whatever
	// rules, table and grants say, with the reason (Allow when none).
	Floor       Outcome `json:"-"`
	FloorReason string  `json:"floor_reason,omitempty"`
}

// Place is where a command runs: the directories relative paths may resolve
// against and the user's home.
type Place struct {
	// Dirs are the candidate working directories (absolute). More than one
	// when the script changes directory; relative targets resolve against
	// each of them.
	Dirs []string
	// UnknownDir is true when the script changes to a directory that is not
	// known statically: relative targets are then dynamic.
	UnknownDir bool
	Home       string
	// Workspace, when set, is the project the commands work on: a delete
	// outside it, the temp directories and ~/.cache asks at every level.
	Workspace string
	// Path, when set, are the directories on the PATH the commands run
	// with (absolute, clean): a program written into one runs later in
	// place of the one a command names, so a write there is judged as
	// one to what runs later, as the sandbox keeps them read-only.
	Path []string
	// Packages, when set, is what the gate read of the package managers'
	// configuration and caches (PackageNeeds says which): the registries
	// an install reaches, whether a build's dependencies are in the cache.
	Packages *Packages
	// Tools, when set, are the directories a command may put on PATH and
	// run programs from (the sandbox's tool directories under home and
	// version managers' roots, the virtualenvs of the workspace): what
	// PATH finds there is not in a place commands write freely, or, for
	// a virtualenv, is code of the workspace (envvars.go's pathAssign).
	Tools []string
	// TerminalEnv is true when the commands run with the environment
	// mnemos run gives them (TerminalEnv: less in its secure mode, git's
	// and man's pagers off) and the script keeps it (TerminalEnvKept):
	// a pager that reads commands from the terminal then runs none.
	TerminalEnv bool
}

// toolKind says how a program's arguments map to accesses.
type toolKind int

const (
	kindExec      toolKind = iota // unknown or code-running: code:exec on the command line
	kindPure                      // computes on its arguments or stdin only
	kindTime                      // reads the clock
	kindRead                      // reads its path arguments (none: stdin)
	kindReadDir                   // reads its path arguments (none: the working directory)
	kindWrite                     // writes its path arguments
	kindCopy                      // reads all path arguments but the last, writes the last
	kindMove                      // writes (removes or creates) every path argument
	kindNet                       // network:http to the hosts in its arguments
	kindMail                      // mail:send to its recipients
	kindGit                       // per subcommand
	kindNavigate                  // cd, pushd, popd: no access by themselves
	kindLLMLocal                  // a local model runner (classify_services.go)
	kindLLMOnline                 // a hosted model's client (classify_services.go)
	kindMailRead                  // reads a mailbox (classify_services.go)
	kindCalendar                  // reads a calendar (classify_services.go)
	kindChat                      // sends to a chat channel (classify_services.go)
)

// toolKindOf says how a program's arguments map to accesses, from the
// catalog (catalog.txt). Anything absent is code:exec.
func toolKindOf(name string) toolKind { return specOf(name).kind }

// classifyArgv is Classify once the command's long options are written
// out in full (see expandOptions).
func classifyArgv(cmd shellparse.Command, pl Place) (c Classification) {
	if cmd.RunTimeArgs != "" {
		defer c.runTimeArgs(cmd)
	}
	c = Classification{Verb: "run", Reversibility: "partial", Floor: Allow, Accesses: make([]Access, 0, 4)}
	name := cmd.Name()
	switch {
	case cmd.Dynamic || name == "":
		c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String(), Dynamic: true})
		why := "the command name is not known before it runs"
		if len(cmd.Notes) > 0 {
			why = cmd.Notes[0]
		}
		c.raise(Ask, why)
		return c
	}
	for _, n := range cmd.Notes {
		c.raise(Ask, n)
		break
	}
	for _, w := range cmd.Wrappers {
		switch w.Name {
		case "sudo", "doas", "su", "runuser", "pkexec", "chroot", "nsenter", "unshare":
			c.raise(Ask, "runs with other privileges through "+w.Name)
			c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
			c.Reversibility = "irreversible"
		}
	}
	pl = chdirPlace(cmd, pl)
	// The environment the command is given: its own NAME=value words,
	// env's, and what the script exported to it (envvars.go).
	builtin := len(cmd.Assigns) > 0 && startsNoProgram(cmd, name)
	for _, a := range cmd.Assigns {
		n, v, known := SplitAssign(a)
		if n == "IFS" && name == "read" || builtin && !readByShell(n) {
			continue
		}
		c.envAssign(cmd, pl, n, v, known, false)
	}

	if programElsewhere(cmd) {
		// ./cat or /tmp/cat is whatever someone put there, not cat.
		c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
		c.Verb = "run"
		if name == "gradlew" || name == "mvnw" {
			// A build tool's wrapper in the project: what it fetches.
			c.addFetch(cmd, pl)
		}
		c.finish(cmd, pl)
		return c
	}
	args := cmd.Argv[1:]
	spec := specOf(name)
	if onlyHelp(args) && spec.kind != kindExec && len(cmd.Redirects) == 0 && len(cmd.Assigns) == 0 {
		// PROG --help or --version of a catalogued program that runs no
		// code of its own: it prints its usage and reads nothing.
		c.Verb, c.Reversibility = "read", "reversible"
		c.Accesses = append(c.Accesses, Access{Capability: ParseLocal})
		return c
	}
	// The path arguments, which one branch below takes.
	var pathBuf [8]shellparse.Word
	runs := func(verb string) {
		c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
		c.Verb, c.Reversibility = verb, "partial"
	}
	switch spec.kind {
	case kindPure, kindNavigate:
		c.Verb, c.Reversibility = "compute", "reversible"
		c.Accesses = append(c.Accesses, Access{Capability: ParseLocal})
		if c.optionAccesses(cmd, pl, name, spec) && c.Verb == "compute" {
			c.Verb, c.Reversibility = "write", "partial"
		}
		switch name {
		case "read", "printf", "mapfile", "readarray", "getopts", "declare", "typeset", "local", "export", "readonly":
			// What the builtin sets for the commands after it
			// (envvars.go): export PAGER=..., read PATH, printf -v.
			c.envSetters(cmd, pl, name)
		case "command":
			// command -v NAME only looks NAME up; any other form runs it
			// (the parser peels those, so this is a fallback).
			if len(args) == 0 || !isLookupFlags(args[0].Value) {
				runs("run")
			}
		case "man":
			// A browser given on the command line runs as a command (the
			// pager and configuration file are run: options).
			if hasOptionPrefix(args, "-H", "--html") {
				runs("run")
			}
			// A name with a slash, or any name under -l, is a file to
			// format and show, wherever it is.
			local := hasSwitch(args, spec, "-l", "--local-file")
			for _, p := range pathArgsOf(name, spec, args, pathBuf[:0]) {
				if local || strings.Contains(p.Value, "/") {
					c.add(pl, FSRead, p)
					if c.Verb == "compute" {
						c.Verb = "read"
					}
				}
			}
		case "hostname":
			// hostname NAME, -F FILE or -b set the system's name.
			if len(pathArgsOf(name, spec, args, pathBuf[:0])) > 0 || hasSwitch(args, spec, "-F", "--file", "-b", "--boot") {
				runs("change the hostname")
			}
		case "hash":
			// hash -p PATH NAME makes NAME run PATH from then on.
			if hasSwitch(args, spec, "-p") {
				runs("run")
			}
		}
	case kindTime:
		c.Verb, c.Reversibility = "read the clock", "reversible"
		c.Accesses = append(c.Accesses, Access{Capability: TimeRead})
		if name == "date" {
			if _, ok := optionValue(args, "-s", "--set"); ok {
				c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
				c.Verb, c.Reversibility = "set the clock", "partial"
			}
			if f, ok := optionValue(args, "-f", "--file"); ok {
				c.add(pl, FSRead, f)
			}
		}
	case kindRead, kindReadDir:
		c.Verb, c.Reversibility = "read", "reversible"
		paths := pathArgsOf(name, spec, args, pathBuf[:0])
		if c.optionAccesses(cmd, pl, name, spec) && c.Verb == "read" {
			c.Verb, c.Reversibility = "write", "partial"
		}
		if readsListedFiles(name, args) {
			c.Accesses = append(c.Accesses, Access{Capability: FSRead, Dynamic: true})
		}
		switch name {
		case "sed":
			if sedRuns(args) {
				// A script from a file, or one with e, w, W, r or R, runs
				// commands or touches files the command line does not name.
				runs("run")
			}
			if sedWrites(args) {
				c.Verb, c.Reversibility = "edit", "partial"
				for _, p := range paths {
					c.add(pl, FSWrite, p)
				}
				c.finish(cmd, pl)
				return c
			}
		case "less", "more", "most", "view", "zless", "zmore", "bzless", "xzless":
			// +CMD runs a pager (or editor) command at start, and those can
			// run shell commands; so can view -c.
			for _, w := range args {
				if strings.HasPrefix(w.Value, "+") || (name == "view" && (w.Value == "-c" || w.Value == "--cmd")) {
					runs("run")
					break
				}
			}
		case "uniq":
			// uniq INPUT OUTPUT writes OUTPUT.
			if len(paths) == 2 {
				c.add(pl, FSWrite, paths[1])
				c.Verb, c.Reversibility = "write", "partial"
				paths = paths[:1]
			}
		case "jq":
			// --rawfile NAME FILE and --slurpfile NAME FILE read FILE.
			for i := 0; i+2 < len(args); i++ {
				if v := args[i].Value; v == "--" {
					break
				} else if v == "--rawfile" || v == "--slurpfile" {
					c.add(pl, FSRead, args[i+2])
					i += 2
				}
			}
		case "xxd":
			// xxd [-r] INFILE OUTFILE writes OUTFILE. Its options are many
			// and loosely spelt, so every operand after the first counts.
			for _, p := range paths[min(1, len(paths)):] {
				c.add(pl, FSWrite, p)
				c.Verb, c.Reversibility = "write", "partial"
			}
		case "yq":
			if yqLoads(args) {
				// load("FILE") and friends read files the expression names.
				c.Accesses = append(c.Accesses, Access{Capability: FSRead, Dynamic: true})
			}
			if hasSwitch(args, spec, "-s", "--split-exp") {
				// Each result goes to a file the expression names.
				c.Accesses = append(c.Accesses, Access{Capability: FSWrite, Dynamic: true})
				c.Verb, c.Reversibility = "write", "partial"
			}
			if hasSwitch(args, spec, "-i", "--inplace", "--in-place") {
				c.Verb, c.Reversibility = "edit", "partial"
				for _, p := range paths {
					c.add(pl, FSWrite, p)
				}
			}
		case "file":
			// file -C compiles the magic file into NAME.mgc in the working
			// directory.
			if hasSwitch(args, spec, "-C", "--compile") {
				c.add(pl, FSWrite, shellparse.Word{Value: "."})
				c.Verb, c.Reversibility = "write", "partial"
			}
		case "tree":
			// tree -R runs tree again in every directory through the shell.
			if hasSwitch(args, spec, "-R") {
				runs("run")
			}
		case "bat", "batcat":
			// bat cache builds or clears its cache from configuration.
			if len(paths) > 0 && paths[0].Value == "cache" {
				runs("run")
			}
		}
		if name == "find" {
			// With no starting point find searches ".", and -delete
			// deletes there; -fprint FILE and its kin write FILE.
			paths = findRoots(args)
			if len(paths) == 0 {
				paths = []shellparse.Word{{Value: "."}}
			}
			for _, f := range findOutputs(args) {
				c.add(pl, FSWrite, f)
				c.Verb, c.Reversibility = "write", "partial"
			}
			if findDeletes(args) {
				c.Verb, c.Reversibility = "delete", "irreversible"
				for _, p := range paths {
					c.add(pl, FSWrite, p)
				}
			}
		}
		if len(paths) == 0 {
			if searchesWorkingDir(name, args) {
				c.add(pl, FSRead, shellparse.Word{Value: "."})
			} else if toolKindOf(name) == kindReadDir {
				c.add(pl, FSRead, shellparse.Word{Value: "."})
			} else {
				c.Accesses = append(c.Accesses, Access{Capability: ParseLocal})
			}
		}
		if spec.parser {
			c.Accesses = append(c.Accesses, Access{Capability: ParseLocal})
			if name == "pdftotext" && len(paths) == 2 {
				// pdftotext IN.pdf OUT.txt writes OUT.txt ("-" is stdout).
				if paths[1].Value != "-" {
					c.add(pl, FSWrite, paths[1])
					c.Verb, c.Reversibility = "write", "partial"
				}
				paths = paths[:1]
			}
			if name == "xmllint" && hasSwitch(args, spec, "--shell") {
				// Its shell's save and write commands name files on stdin.
				c.Accesses = append(c.Accesses, Access{Capability: FSWrite, Dynamic: true})
			}
		}
		for _, p := range paths {
			c.add(pl, FSRead, p)
		}
	case kindWrite:
		c.Verb = "write"
		if name == "rm" || name == "rmdir" || name == "shred" || name == "unlink" {
			c.Verb, c.Reversibility = "delete", "irreversible"
		}
		c.optionAccesses(cmd, pl, name, spec)
		paths := pathArgsOf(name, spec, args, pathBuf[:0])
		if len(paths) == 0 && name != "tee" {
			c.Accesses = append(c.Accesses, Access{Capability: ParseLocal})
		}
		for _, p := range paths {
			c.add(pl, FSWrite, p)
		}
	case kindCopy:
		c.Verb = "copy"
		c.optionAccesses(cmd, pl, name, spec)
		if name == "rsync" && rsyncRunsLocal(args) {
			runs("run")
		}
		paths := pathArgsOf(name, spec, args, pathBuf[:0])
		if name == "rsync" && hasRemote(paths) {
			c.Accesses = append(c.Accesses, Access{Capability: NetworkHTTP, Target: remoteHost(paths)})
		}
		// install -d makes (or changes the mode of) every operand.
		dirs := name == "install" && hasSwitch(args, spec, "-d", "--directory")
		for i, p := range paths {
			if dirs || i == len(paths)-1 && len(paths) > 1 {
				c.add(pl, FSWrite, p)
			} else {
				c.add(pl, FSRead, p)
			}
		}
		if len(paths) < 2 && !dirs {
			c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
		}
	case kindMove:
		c.Verb = "move"
		for _, p := range pathArgsOf(name, spec, args, pathBuf[:0]) {
			c.add(pl, FSWrite, p)
		}
	case kindNet:
		c.Verb = "connect to the network"
		c.optionAccesses(cmd, pl, name, spec)
		hosts := hostsOf(name, args)
		if len(hosts) == 0 {
			c.Accesses = append(c.Accesses, Access{Capability: NetworkHTTP, Dynamic: true})
		}
		for _, h := range hosts {
			c.Accesses = append(c.Accesses, Access{Capability: NetworkHTTP, Target: h})
		}
		if name == "curl" || name == "wget" {
			c.Verb = "download"
			for _, w := range args {
				// A file: URL reads a local file.
				if u, err := url.Parse(w.Value); err == nil && u.Scheme == "file" && !w.Dynamic {
					c.add(pl, FSRead, shellparse.Word{Value: u.Path})
				}
			}
			saved := len(optionValues(args, spec, []string{"-o", "--output", "--output-dir"})) > 0
			if name == "wget" {
				saved = len(optionValues(args, spec, []string{"-O", "--output-document", "-P", "--directory-prefix"})) > 0
			}
			switch {
			case name == "curl" && !saved && hasSwitch(args, spec, "-O", "--remote-name", "--remote-name-all"):
				c.add(pl, FSWrite, shellparse.Word{Value: "."})
			case name == "wget" && !saved:
				c.add(pl, FSWrite, shellparse.Word{Value: "."})
			}
			if name == "curl" {
				for _, f := range curlFileArgs(args) {
					c.add(pl, FSRead, f)
				}
				reads, writes := CurlWriteOut(args)
				for _, f := range reads {
					c.add(pl, FSRead, f)
				}
				for _, f := range writes {
					c.add(pl, FSWrite, f)
				}
			}
			if curlWgetConfigured(name, args) {
				// A configuration file or wgetrc command can name files
				// to write that the command line does not.
				c.Accesses = append(c.Accesses, Access{Capability: FSWrite, Dynamic: true})
			}
		}
		c.serviceRequests(name, spec, args)
		if name == "ssh" && sshRunsRemote(args) {
			c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
			c.Verb = "run remotely"
		}
		if (name == "ssh" || name == "scp" || name == "sftp") && sshRunsLocal(name, args) {
			c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
			c.Verb = "run"
		}
		if name == "scp" || name == "sftp" {
			c.Verb = "copy over the network"
			for _, p := range pathArgsOf(name, spec, args, pathBuf[:0]) {
				if !strings.Contains(p.Value, ":") {
					c.add(pl, FSWrite, p)
				}
			}
		}
	case kindMail:
		c.Verb, c.Reversibility = "send mail", "irreversible"
		c.optionAccesses(cmd, pl, name, spec)
		c.Reversibility = "irreversible"
		rcpts := recipients(args)
		if name == "mutt" || name == "neomutt" {
			// mutt -f imaps://host/INBOX reads that mailbox.
			if f, ok := optionValue(args, "-f"); ok && !f.Dynamic {
				if u, err := url.Parse(f.Value); err == nil && (u.Scheme == "imap" || u.Scheme == "imaps" || u.Scheme == "pop" || u.Scheme == "pops") {
					c.Accesses = append(c.Accesses, Access{Capability: MailRead, Target: u.Hostname()})
				}
			}
		}
		if len(rcpts) == 0 {
			c.Accesses = append(c.Accesses, Access{Capability: MailSend, Dynamic: true})
		}
		for _, r := range rcpts {
			c.Accesses = append(c.Accesses, Access{Capability: MailSend, Target: r})
		}
	case kindGit:
		classifyGit(&c, cmd, pl)
	case kindLLMLocal, kindLLMOnline, kindMailRead, kindCalendar, kindChat:
		c.classifyService(cmd, pl, name, spec)
	default:
		c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
		c.Verb = "run"
		if spec.verb != "" {
			c.Verb = spec.verb
		}
		// An install or fetch of a package manager (packages.go).
		c.addFetch(cmd, pl)
		// And what it installs for later (installs.go).
		c.addInstalls(cmd, pl)
	}
	// A pager, REPL or editor that may read commands from a terminal
	// (terminal.go).
	c.readsTerminal(cmd, pl, name, spec)
	c.finish(cmd, pl)
	return c
}

// raise lifts the floor to o, with the reason, when o is stricter.
// runTimeArgs judges a command some of whose words xargs or find supply
// when it runs (shellparse's Command.RunTimeArgs): a program that only
// reads, parses or tells the time reads paths known at run time, which
// its accesses already say (a read of a dynamic path: under the sandbox
// it reaches only what the sandbox grants; outside it, the gate asks);
// one that runs code, writes where the command line does not say, or
// reaches further, does so with arguments no one has seen, and asks.
// The sandbox hides the home directory's secrets, not the workspace's
// own (.env, a key file): a program that shows the content of what it
// reads is given names the script shows (Command.RunTimeNames, which
// the guard judges as the files they select), or asks. One that shows
// only names and metadata (ls, stat) reads no content.
func (c *Classification) runTimeArgs(cmd shellparse.Command) {
	why := cmd.RunTimeArgs
	for _, a := range c.Accesses {
		switch a.Capability {
		case FSRead, ParseLocal, TimeRead:
			continue
		case FSWrite:
			if !a.Dynamic && a.Target != "" {
				continue // named on the command line: judged as without xargs
			}
		}
		c.raise(Ask, why)
		return
	}
	if cmd.RunTimeNames == nil && !namesOnly(cmd.Name()) {
		c.raise(Ask, why+"; the names are not known, and may be the workspace's secret files (.env, keys), which the sandbox does not hide")
	}
}

// namesOnly reports programs that, given paths, show their names or
// metadata and not what they hold.
func namesOnly(name string) bool {
	switch name {
	case "ls", "stat", "du", "echo", "printf", "basename", "dirname", "realpath", "readlink", "true", "test", "[":
		return true
	}
	return false
}

func (c *Classification) raise(o Outcome, why string) {
	if o.Restrictiveness() > c.Floor.Restrictiveness() {
		c.Floor, c.FloorReason = o, why
	}
}

// finish adds the redirects' accesses and the floor for dynamic writes.
func (c *Classification) finish(cmd shellparse.Command, pl Place) {
	for _, r := range cmd.Redirects {
		switch {
		case r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<":
			continue
		case (r.Op == ">&" || r.Op == "<&") && (r.Target.Dynamic || fdWord(r.Target.Value)):
			continue
		case r.Op == ">&":
			// >& FILE sends standard output and error to FILE.
			c.add(pl, FSWrite, r.Target)
			continue
		case r.Op == "<&":
			c.add(pl, FSRead, r.Target)
			continue
		case isStdStream(r.Target.Value):
			continue
		case r.Writes():
			c.add(pl, FSWrite, r.Target)
			if c.Verb == "compute" || c.Verb == "read" {
				c.Verb, c.Reversibility = "write", "partial"
			}
		default:
			c.add(pl, FSRead, r.Target)
		}
	}
	if c.Verb == "delete" && pl.Workspace != "" {
		// find deletes what it selects below its starting point, not
		// the starting point itself: find . -name '*.o' -delete stays
		// in the workspace (find . -delete is the guard's).
		find := len(cmd.Argv) > 0 && path.Base(cmd.Argv[0].Value) == "find"
		for _, a := range c.Accesses {
			if a.Capability != FSWrite || a.Dynamic || deletable(a.Target, pl) {
				continue
			}
			if a.Target == pl.Workspace {
				if find {
					continue
				}
				c.raise(Ask, "deletes the workspace itself ("+a.Target+")")
				break
			}
			c.raise(Ask, "deletes outside the workspace ("+a.Target+")")
			break
		}
	}
	runsLater := false
	for _, a := range c.Accesses {
		if a.Dynamic && a.Capability == FSWrite {
			c.raise(Ask, "writes to a path that is not known before it runs")
		}
		if a.Capability == FSWrite && !a.Dynamic && (laterTarget(a.Target, a.Glob, pl.Home, c.Verb != "delete") || onPath(a.Target, a.Glob, pl.Path, c.Verb != "delete") ||
			changesModeOverLater(cmd, a.Target, pl)) {
			runsLater = true
		}
	}
	if !runsLater && linksToLater(cmd, pl) {
		// A link to what runs later makes every later write through the
		// link's name a write there (ln -s .git/hooks h; echo x >
		// h/pre-commit).
		runsLater = true
	}
	if runsLater {
		// What is written there runs later, outside any decision: it is
		// running code.
		c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
		c.raise(Ask, "writes a file that runs code later (a git hook, git's configuration, a shell startup file, a tool's hooks or tasks, autostart, cron, a PATH directory)")
	}
	if showsEnvironment(cmd, inheritedKeys(cmd, c.ownKeys())) {
		c.Accesses = append(c.Accesses, Access{Capability: FSRead, Target: EnvironmentTarget})
		if c.Verb == "compute" {
			c.Verb = "read"
		}
	}
	c.Accesses = dedupe(c.Accesses)
}

// EnvironmentTarget is the target of a command that shows the environment,
// where tokens and keys live: reading it is reading this file.
const EnvironmentTarget = "/proc/self/environ"

// showsEnvironment reports a command that prints the whole environment
// (env, printenv, set, export -p, declare -p with no name) or a variable
// whose name says it holds a secret (printenv GITHUB_TOKEN, echo
// "$AWS_SECRET_ACCESS_KEY"), in any of its words, directly or through
// the script's own variables (Command.EnvRefs). own are the variables
// that do not count: a model provider's key sent only to that provider
// (Classification.ownKeys).
func showsEnvironment(cmd shellparse.Command, own []string) bool {
	for _, n := range cmd.EnvRefs {
		// The value of a secret-named variable reaches the command's
		// words, perhaps through the script's own variables
		// (x=$GITHUB_TOKEN; echo "$x").
		if secretName(n) && !slices.Contains(own, n) {
			return true
		}
	}
	name := cmd.Name()
	switch name {
	case "env", "printenv", "set", "export", "declare", "typeset":
	case "jq", "gojq", "jaq", "yq":
		// jq's env and $ENV, yq's env(NAME) and strenv(NAME) read the
		// environment into the output.
		for _, w := range cmd.Argv[1:] {
			if !w.Dynamic && jqReadsEnv(w.Value) {
				return true
			}
		}
		fallthrough
	default:
		for _, w := range cmd.Argv {
			if w.Dynamic && secretVarRef(w.Value, own) {
				return true
			}
		}
		for _, r := range cmd.Redirects {
			if r.Target.Dynamic && secretVarRef(r.Target.Value, own) {
				return true
			}
		}
		return false
	}
	var operands []string
	assigns, skip := false, false
	for _, w := range cmd.Argv[min(1, len(cmd.Argv)):] {
		if skip {
			// The value of env's -u NAME or -C DIR is no operand.
			skip = false
			continue
		}
		if w.Dynamic {
			if secretVarRef(w.Value, own) {
				return true
			}
			continue
		}
		switch {
		case name == "env" && (w.Value == "-u" || w.Value == "--unset" || w.Value == "-C" || w.Value == "--chdir"):
			skip = true
		case strings.Contains(w.Value, "="):
			assigns = true
		case !strings.HasPrefix(w.Value, "-"):
			operands = append(operands, w.Value)
		}
	}
	for _, r := range cmd.Redirects {
		if r.Target.Dynamic && secretVarRef(r.Target.Value, own) {
			return true
		}
	}
	switch name {
	case "env", "printenv":
		if len(operands) == 0 {
			return true
		}
		if name == "printenv" {
			for _, o := range operands {
				if secretName(o) {
					return true
				}
			}
		}
	case "set":
		return len(cmd.Argv) == 1
	case "export", "declare", "typeset":
		if len(operands) == 0 && !assigns {
			if name == "export" {
				// export with no name, whatever its options, lists the
				// exported variables with their values.
				return true
			}
			for _, w := range cmd.Argv[1:] {
				if strings.HasPrefix(w.Value, "-") && strings.ContainsAny(w.Value, "px") {
					return true
				}
			}
			return len(cmd.Argv) == 1
		}
		for _, o := range operands {
			if secretName(o) {
				return true
			}
		}
	}
	return false
}

// inheritedKeys keeps of keys those the command's words take from the
// environment it was given, unchanged: named in Command.EnvRefs and not
// set for it (env NAME=…, an assignment before it, an export in the
// script), where the parser cannot tell what they hold.
func inheritedKeys(cmd shellparse.Command, keys []string) []string {
	var out []string
	for _, k := range keys {
		if !slices.Contains(cmd.EnvRefs, k) {
			continue
		}
		if slices.ContainsFunc(cmd.Assigns, func(a string) bool { return strings.HasPrefix(a, k+"=") }) {
			continue
		}
		out = append(out, k)
	}
	return out
}

// secretVarRef reports a word's source text that expands a variable whose
// name says it holds a secret ($GITHUB_TOKEN, ${DB_PASSWORD:-x}), other
// than those of own.
func secretVarRef(s string, own []string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		j := i + 1
		if j < len(s) && s[j] == '{' {
			j++
			if j < len(s) && (s[j] == '!' || s[j] == '#') {
				j++
			}
		}
		k := j
		for k < len(s) && (s[k] == '_' || 'A' <= s[k] && s[k] <= 'Z' || 'a' <= s[k] && s[k] <= 'z' || k > j && '0' <= s[k] && s[k] <= '9') {
			k++
		}
		if k > j && secretName(s[j:k]) && !slices.Contains(own, s[j:k]) {
			return true
		}
	}
	return false
}

// secretName reports an environment variable name that says it holds a
// secret.
func secretName(n string) bool {
	u := strings.ToUpper(n)
	for _, part := range []string{"SECRET", "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "API_KEY", "APIKEY",
		"ACCESS_KEY", "PRIVATE_KEY", "CREDENTIAL", "AUTH", "COOKIE", "SESSION_KEY", "_PAT", "SIGNING_KEY"} {
		if strings.Contains(u, part) {
			return true
		}
	}
	return false
}

func isStdStream(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero":
		return true
	}
	return false
}

// add appends an access to a path, resolved against every candidate
// directory.
func (c *Classification) add(pl Place, capability Capability, w shellparse.Word) {
	var buf [4]resolved
	for _, t := range resolvePaths(pl, w, buf[:0]) {
		if host, ok := devNet(t.path); ok && !t.dynamic {
			// bash opens a connection for /dev/tcp/HOST/PORT and
			// /dev/udp/HOST/PORT: what is written there leaves the
			// machine.
			c.Accesses = append(c.Accesses, Access{Capability: NetworkHTTP, Target: host})
			// A rule written for the command (git status) never meant
			// to cover a connection its redirect opens: asked at every
			// level.
			c.raise(Ask, "opens a network connection to "+host+" through bash's /dev/tcp or /dev/udp")
			continue
		}
		c.Accesses = append(c.Accesses, t.access(capability))
	}
}

// onlyHelp reports arguments that are only --help and --version, the long
// forms every GNU program reads the same way (-h and -V mean other things
// to some programs: shutdown -h, sort -V).
func onlyHelp(args []shellparse.Word) bool {
	if len(args) == 0 {
		return false
	}
	for _, a := range args {
		if a.Dynamic || a.Value != "--help" && a.Value != "--version" {
			return false
		}
	}
	return true
}

// fdWord reports the target of a descriptor duplication: a number or
// "-", optionally followed by "-" (2>&1, <&-, >&3-).
func fdWord(v string) bool {
	v = strings.TrimSuffix(v, "-")
	return v == "" || strings.Trim(v, "0123456789") == ""
}

// devNet reports bash's network paths, /dev/tcp/HOST/PORT and
// /dev/udp/HOST/PORT, and the HOST:PORT they reach.
func devNet(p string) (string, bool) {
	for _, pre := range []string{"/dev/tcp/", "/dev/udp/"} {
		if rest, ok := strings.CutPrefix(p, pre); ok {
			host, port, _ := strings.Cut(rest, "/")
			return host + ":" + port, host != ""
		}
	}
	return "", false
}

type resolved struct {
	path          string
	dynamic, glob bool
}

func (r resolved) access(c Capability) Access {
	return Access{Capability: c, Target: r.path, Dynamic: r.dynamic, Glob: r.glob}
}

// containedGlob reports a word that is a plain glob: only * and ? besides
// ordinary characters, no "..", and no component that could match a
// hidden name. Its matches all lie below the directory it names.
func containedGlob(v string) bool {
	if !strings.ContainsAny(v, "*?") || strings.ContainsAny(v, "$`\"'\\(){}[]~!@+\n") {
		return false
	}
	for _, part := range strings.Split(v, "/") {
		if part == ".." || strings.HasPrefix(part, ".") && strings.ContainsAny(part, "*?") {
			return false
		}
	}
	return true
}

// resolvePaths turns a path word into absolute, cleaned paths: "~" and
// "$HOME" become the home directory, relative paths resolve against every
// candidate directory. A dynamic word stays dynamic (its text is kept).
func resolvePaths(pl Place, w shellparse.Word, out []resolved) []resolved {
	v := w.Value
	if v == "" {
		return nil
	}
	// A quoted or escaped "~" ('~', "~", \~) is a file of that name: the
	// shell leaves it as it is.
	if pl.Home != "" && !(w.TildeLiteral && strings.HasPrefix(v, "~")) {
		switch {
		case v == "~" || v == "$HOME" || v == "${HOME}":
			v = pl.Home
		case strings.HasPrefix(v, "~/"):
			v = pl.Home + v[1:]
		case strings.HasPrefix(v, "$HOME/"):
			v = pl.Home + v[5:]
		case strings.HasPrefix(v, "${HOME}/"):
			v = pl.Home + v[7:]
		}
	}
	glob := w.Dynamic && containedGlob(v)
	if w.Dynamic && !glob {
		return append(out, resolved{path: v, dynamic: true})
	}
	if path.IsAbs(v) {
		return append(out, resolved{path: path.Clean(v), glob: glob})
	}
	if pl.UnknownDir || len(pl.Dirs) == 0 {
		return append(out, resolved{path: v, dynamic: true})
	}
	// What joining v to a directory and cleaning drops: leading "./" and
	// trailing slashes ("./cmd/x/" is cmd/x, "./" and "." the directory).
	q := v
	for strings.HasPrefix(q, "./") {
		q = strings.TrimLeft(q[2:], "/")
	}
	q = strings.TrimRight(q, "/")
	here := q == "" || q == "."
	simple := here || relClean(q)
	// Which directories are clean, asked once for the three loops below.
	var cleanBuf [8]bool
	var clean []bool
	if simple {
		clean = cleanBuf[:0]
		for _, d := range pl.Dirs {
			clean = append(clean, cleanDir(d))
		}
	}
	// A clean relative path below a clean absolute directory joins by
	// concatenation, all of them into one string.
	var joined strings.Builder
	if simple && !here {
		n := 0
		for i, d := range pl.Dirs {
			if clean[i] {
				n += len(d) + 1 + len(q)
			}
		}
		joined.Grow(n)
	}
	start := len(out)
	for i, d := range pl.Dirs {
		switch {
		case !simple || !clean[i]:
			p := d + "/" + v
			if d == "/" {
				p = "/" + v
			}
			if !cleanAbs(p) {
				p = path.Clean(p)
			}
			out = append(out, resolved{path: p, glob: glob})
		case here:
			out = append(out, resolved{path: d, glob: glob})
		default:
			// The path is filled in below, as a piece of joined.
			out = append(out, resolved{glob: glob})
			if d != "/" {
				joined.WriteString(d)
			}
			joined.WriteByte('/')
			joined.WriteString(q)
		}
	}
	if all, off := joined.String(), 0; all != "" {
		for i, d := range pl.Dirs {
			if !clean[i] {
				continue
			}
			n := len(d) + 1 + len(q)
			if d == "/" {
				n = 1 + len(q)
			}
			out[start+i].path = all[off : off+n]
			off += n
		}
	}
	return out
}

// cleanDir reports an absolute directory that path.Clean leaves as it is.
func cleanDir(d string) bool {
	return strings.HasPrefix(d, "/") && cleanAbs(d)
}

// relClean reports whether a relative path, joined to a clean absolute
// directory, leaves it clean: non-empty elements separated by single
// slashes, none of them "." or "..", no leading or trailing slash.
func relClean(q string) bool {
	if q == "" || q[len(q)-1] == '/' {
		return false
	}
	for i := 0; i < len(q); {
		// The element starting at i.
		if q[i] == '/' || q[i] == '.' && (i+1 == len(q) || q[i+1] == '/' || q[i+1] == '.' && (i+2 == len(q) || q[i+2] == '/')) {
			return false
		}
		j := strings.IndexByte(q[i:], '/')
		if j < 0 {
			return true
		}
		i += j + 1
	}
	return true
}

func dedupe(in []Access) []Access {
	if len(in) < 2 {
		return in
	}
	out := in[:0]
	if len(in) <= 16 {
		// Few accesses: comparing each with those kept is cheaper than
		// a map.
		for _, a := range in {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
		return out
	}
	seen := make(map[Access]bool, len(in))
	for _, a := range in {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// pathArgs returns the words a program takes as paths: its non-option
// arguments, minus values of options known to take one, minus the pattern
// of grep-like tools and the script of sed. Words after "--" are paths.
func pathArgs(prog string, args []shellparse.Word) []shellparse.Word {
	return pathArgsOf(prog, specOf(prog), args, nil)
}

// pathArgsOf is pathArgs for a program whose spec is at hand, appended to
// out.
func pathArgsOf(prog string, spec toolSpec, args []shellparse.Word, out []shellparse.Word) []shellparse.Word {
	first := len(out)
	patternPending, scriptPending := spec.pattern, spec.script
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		if v == "--" {
			out = append(out, args[i+1:]...)
			break
		}
		// A word that starts with a literal "-" is an option even when part
		// of it is computed (--include=*.go).
		if strings.HasPrefix(v, "-") && len(v) > 1 {
			opt, _, hasEq := strings.Cut(v, "=")
			if opt == "-e" || opt == "-f" || opt == "--regexp" || opt == "--expression" || opt == "--file" || opt == "--from-file" {
				patternPending, scriptPending = false, false
			}
			if !hasEq && spec.takes(opt) {
				i++
			}
			if prog == "jq" && jqPairOption(opt) {
				i++ // --arg NAME VALUE, --rawfile NAME FILE, ...
			}
			continue
		}
		if strings.HasPrefix(v, "+") && isPager(prog) {
			continue // a command to run at start, not a file
		}
		if patternPending {
			patternPending = false
			continue
		}
		if scriptPending {
			scriptPending = false
			continue
		}
		if spec.mode && len(out) == first && !isPathy(v) {
			// The mode or owner comes first.
			out = append(out, shellparse.Word{})
			continue
		}
		out = append(out, w)
	}
	// Drop the placeholders left for chmod/chown's first operand.
	filtered := out[:first]
	for _, w := range out[first:] {
		if w.Value != "" {
			filtered = append(filtered, w)
		}
	}
	return filtered
}

func isPathy(v string) bool {
	return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "~")
}

func optionValue(args []shellparse.Word, names ...string) (shellparse.Word, bool) {
	for i, w := range args {
		for _, n := range names {
			if w.Value == n && i+1 < len(args) {
				return args[i+1], true
			}
			if strings.HasPrefix(n, "--") && strings.HasPrefix(w.Value, n+"=") {
				return shellparse.Word{Value: w.Value[len(n)+1:], Dynamic: w.Dynamic}, true
			}
			if len(n) == 2 && n[0] == '-' && n[1] != '-' && strings.HasPrefix(w.Value, n) && len(w.Value) > 2 && !strings.HasPrefix(w.Value, "--") {
				return shellparse.Word{Value: w.Value[2:], Dynamic: w.Dynamic}, true
			}
		}
	}
	return shellparse.Word{}, false
}

func hasFlag(args []shellparse.Word, names ...string) bool {
	for _, w := range args {
		for _, n := range names {
			if w.Value == n {
				return true
			}
		}
	}
	return false
}

// sedWrites reports an in-place edit (-i, -i.bak, -ni, --in-place).
func sedWrites(args []shellparse.Word) bool {
	for _, w := range args {
		v := w.Value
		if v == "--" {
			return false
		}
		if strings.HasPrefix(v, "--in-place") {
			return true
		}
		if strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") {
			for _, ch := range v[1:] {
				if ch == 'i' {
					return true
				}
				if ch == 'e' || ch == 'f' || ch == 'l' {
					break
				}
			}
		}
	}
	return false
}

// sedRuns reports a sed invocation whose script is not on the command
// line (-f) or runs commands or touches files the command line does not
// name (e, w, W, r, R, s///e, s///w), or that cannot be read.
func sedRuns(args []shellparse.Word) bool {
	var scripts []shellparse.Word
	explicit := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		if v == "--" {
			if !explicit && i+1 < len(args) {
				scripts = append(scripts, args[i+1])
			}
			break
		}
		switch {
		case v == "--file" || strings.HasPrefix(v, "--file="):
			return true
		case v == "--expression" || v == "-e":
			explicit = true
			if i+1 < len(args) {
				scripts = append(scripts, args[i+1])
				i++
			}
			continue
		case strings.HasPrefix(v, "--expression="):
			explicit = true
			scripts = append(scripts, shellparse.Word{Value: strings.TrimPrefix(v, "--expression="), Dynamic: w.Dynamic})
			continue
		case v == "-l" || v == "--line-length":
			i++
			continue
		case strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && len(v) > 1:
			for j, ch := range v[1:] {
				switch ch {
				case 'f':
					return true
				case 'e':
					explicit = true
					if rest := v[j+2:]; rest != "" {
						scripts = append(scripts, shellparse.Word{Value: rest, Dynamic: w.Dynamic})
					} else if i+1 < len(args) {
						scripts = append(scripts, args[i+1])
						i++
					}
				}
				if ch == 'e' || ch == 'l' || ch == 'i' {
					break
				}
			}
			continue
		case strings.HasPrefix(v, "-") && len(v) > 1:
			continue
		}
		if !explicit && len(scripts) == 0 {
			scripts = append(scripts, w)
		}
		if !explicit {
			break
		}
	}
	for _, s := range scripts {
		if s.Dynamic || sedScriptRisky(s.Value) {
			return true
		}
	}
	return false
}

// sedScriptRisky scans a sed script for commands and flags that run
// commands or open files (e, w, W, r, R, s///e, s///w). Anything it cannot
// read counts as risky.
func sedScriptRisky(s string) bool {
	n := len(s)
	i := 0
	skipBlanks := func() {
		for i < n && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	// delimited skips a delimited part starting after its opening
	// delimiter d; false when it is not closed.
	delimited := func(d byte) bool {
		for i < n {
			switch {
			case s[i] == '\\':
				i += 2
			case s[i] == d:
				i++
				return true
			default:
				i++
			}
		}
		return false
	}
	address := func() bool {
		switch {
		case i < n && s[i] >= '0' && s[i] <= '9':
			for i < n && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case i < n && s[i] == '$':
			i++
		case i < n && (s[i] == '+' || s[i] == '~'):
			i++
			for i < n && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case i < n && s[i] == '/':
			i++
			if !delimited('/') {
				return false
			}
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case i+1 < n && s[i] == '\\':
			d := s[i+1]
			i += 2
			if !delimited(d) {
				return false
			}
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		}
		return true
	}
	toEnd := func(stops string) {
		for i < n && !strings.ContainsRune(stops, rune(s[i])) {
			i++
		}
	}
	for i < n {
		for i < n && strings.ContainsRune(" \t\n;", rune(s[i])) {
			i++
		}
		if i >= n {
			break
		}
		if !address() {
			return true
		}
		skipBlanks()
		if i < n && s[i] == ',' {
			i++
			skipBlanks()
			if !address() {
				return true
			}
		}
		skipBlanks()
		for i < n && s[i] == '!' {
			i++
			skipBlanks()
		}
		if i >= n {
			return true
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'x', 'n', 'N', 'p', 'P', 'z', 'F':
		case 'q', 'Q', 'l', 'L':
			skipBlanks()
			for i < n && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case '#', 'a', 'i', 'c':
			// Text (or a comment) to the end of the line; a backslash at the
			// end continues it.
			for i < n && s[i] != '\n' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			toEnd(";\n")
		case 's':
			if i >= n || s[i] == '\n' || s[i] == '\\' {
				return true
			}
			d := s[i]
			i++
			if !delimited(d) || !delimited(d) {
				return true
			}
			for i < n && !strings.ContainsRune(";\n}", rune(s[i])) {
				if s[i] == 'e' || s[i] == 'w' || s[i] == 'W' {
					return true
				}
				i++
			}
		case 'y':
			if i >= n {
				return true
			}
			d := s[i]
			i++
			if !delimited(d) || !delimited(d) {
				return true
			}
		default:
			// e, w, W, r, R, and anything unknown.
			return true
		}
	}
	return false
}

// findRoots are find's starting points: the words before its expression,
// past the options that come first (-H, -L, -P, -D DEBUGOPTS, -OLEVEL).
// None means ".".
func findRoots(args []shellparse.Word) []shellparse.Word {
	var out []shellparse.Word
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if len(out) == 0 && !args[i].Dynamic {
			if v == "-H" || v == "-L" || v == "-P" || strings.HasPrefix(v, "-O") {
				continue
			}
			if v == "-D" {
				i++
				continue
			}
		}
		if strings.HasPrefix(v, "-") || v == "(" || v == "!" || v == "," {
			break
		}
		out = append(out, args[i])
	}
	return out
}

// findDeletes reports a find expression that deletes what it selects.
func findDeletes(args []shellparse.Word) bool {
	for _, w := range args {
		if w.Value == "-delete" {
			return true
		}
	}
	return false
}

// findOutputs are the files find's -fprint, -fprint0, -fls and -fprintf
// write (truncating them first, whether or not anything is selected).
func findOutputs(args []shellparse.Word) []shellparse.Word {
	var out []shellparse.Word
	for i := 0; i < len(args); i++ {
		switch args[i].Value {
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(args) {
				out = append(out, args[i+1])
			} else {
				out = append(out, shellparse.Word{Dynamic: true})
			}
			if args[i].Value == "-fprintf" {
				i++
			}
			i++
		}
	}
	return out
}

func hostsOf(prog string, args []shellparse.Word) []string {
	var hosts []string
	if prog == "ssh" || prog == "scp" || prog == "sftp" {
		// A jump host is connected to first.
		for _, j := range optionValues(args, specOf(prog), []string{"-J"}) {
			for _, h := range strings.Split(j.Value, ",") {
				if at := strings.LastIndex(h, "@"); at >= 0 {
					h = h[at+1:]
				}
				if h, _, _ = strings.Cut(h, ":"); h != "" && !j.Dynamic {
					hosts = append(hosts, h)
				}
			}
		}
	}
	// Operands only: the value of an option (ssh -p 22, -i KEY) is not a
	// host.
	for _, w := range pathArgs(prog, args) {
		v := w.Value
		if w.Dynamic || strings.HasPrefix(v, "-") {
			continue
		}
		if u, err := url.Parse(v); err == nil && u.Host != "" {
			hosts = append(hosts, u.Hostname())
			continue
		}
		switch prog {
		case "ssh", "ping", "dig", "host", "nslookup", "traceroute", "whois", "telnet", "nc", "ncat", "netcat", "ftp", "sftp":
			h := v
			if at := strings.LastIndex(h, "@"); at >= 0 {
				h = h[at+1:]
			}
			if strings.Trim(h, "0123456789") == "" && len(hosts) > 0 {
				continue // a port after the host (nc host 80)
			}
			if h != "" && !strings.Contains(h, "/") {
				hosts = append(hosts, h)
				if prog == "ssh" {
					return hosts
				}
			}
		case "scp":
			if host, _, ok := strings.Cut(v, ":"); ok && host != "" && !strings.Contains(host, "/") {
				if at := strings.LastIndex(host, "@"); at >= 0 {
					host = host[at+1:]
				}
				hosts = append(hosts, host)
			}
		}
	}
	return hosts
}

func sshRunsRemote(args []shellparse.Word) bool {
	// ssh [options] host [command...]: anything after the host runs there.
	nonOpt := 0
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if strings.HasPrefix(v, "-") {
			if len(v) == 2 && strings.ContainsRune("bcDEeFIiJLlmOopQRSWw", rune(v[1])) {
				i++
			}
			continue
		}
		nonOpt++
	}
	return nonOpt > 1
}

func hasRemote(paths []shellparse.Word) bool { return remoteHost(paths) != "" }

func remoteHost(paths []shellparse.Word) string {
	for _, p := range paths {
		if host, _, ok := strings.Cut(p.Value, ":"); ok && host != "" && !strings.Contains(host, "/") {
			if at := strings.LastIndex(host, "@"); at >= 0 {
				host = host[at+1:]
			}
			return host
		}
	}
	return ""
}

func recipients(args []shellparse.Word) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if strings.HasPrefix(v, "-") {
			if len(v) == 2 && strings.ContainsRune("sacbrfF", rune(v[1])) {
				i++
			}
			continue
		}
		if strings.Contains(v, "@") {
			out = append(out, v)
		}
	}
	return out
}

// inBareRepo reports a working directory inside a directory named like a
// bare repository (NAME.git, other than a work tree's own .git), where
// git would use that repository and its config.
func inBareRepo(pl Place) bool {
	for _, d := range pl.Dirs {
		for rest := d; rest != ""; {
			part, next, _ := strings.Cut(rest, "/")
			if len(part) > len(".git") && strings.HasSuffix(part, ".git") {
				return true
			}
			rest = next
		}
	}
	return false
}

// gitGrepPager reports a bundle of git grep's short options that
// includes -O[PAGER], which opens the matching files in PAGER (a program):
// -nO./x is -n then -O./x. Letters that take a value end the bundle.
func gitGrepPager(v string) bool {
	if len(v) < 2 || v[0] != '-' || v[1] == '-' {
		return false
	}
	for _, r := range v[1:] {
		switch r {
		case 'O':
			return true
		case 'e', 'f', 'A', 'B', 'C', 'm':
			return false
		}
	}
	return false
}

// classifyGit maps git subcommands: reading the repository is fs:read of the
// working directory, changing it is fs:write, talking to remotes adds
// network:http, and anything that can run configured commands (-c, aliases,
// unknown subcommands, --upload-pack, --output) is code:exec or fs:write.
func classifyGit(c *Classification, cmd shellparse.Command, pl Place) {
	args := cmd.Argv[1:]
	sub := ""
	i := 0
	for ; i < len(args); i++ {
		v := args[i].Value
		if args[i].Dynamic {
			break
		}
		if v == "-C" || v == "--git-dir" || v == "--work-tree" || v == "--namespace" {
			// Changes which repository git works on; treat as unknown code.
			c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
			i++
			continue
		}
		if strings.HasPrefix(v, "--git-dir=") || strings.HasPrefix(v, "--work-tree=") || strings.HasPrefix(v, "--namespace=") {
			// The same, written as one word: another repository's config
			// names the programs git runs.
			c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
			continue
		}
		if v == "-c" || strings.HasPrefix(v, "--config-env") || strings.HasPrefix(v, "--exec-path") {
			c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
			if v == "-c" {
				i++
			}
			continue
		}
		if strings.HasPrefix(v, "-") {
			continue
		}
		sub = v
		break
	}
	rest := []shellparse.Word{}
	if i+1 <= len(args) && sub != "" {
		rest = args[i+1:]
	}
	here := shellparse.Word{Value: "."}
	if inBareRepo(pl) {
		// A bare repository committed inside the workspace (vendor/x.git)
		// brings its own config, and git finds it from there: core.pager,
		// core.fsmonitor and the like then run whatever it names.
		c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
		c.Verb = "run"
	}
	var outputs []shellparse.Word
	for j := 0; j < len(rest); j++ {
		w := rest[j]
		v := w.Value
		switch {
		case strings.HasPrefix(v, "--output-indicator-"):
			continue
		case v == "--output" && j+1 < len(rest):
			// git diff, log, show --output FILE write the patch to FILE.
			outputs = append(outputs, rest[j+1])
			j++
			continue
		case strings.HasPrefix(v, "--output="):
			outputs = append(outputs, shellparse.Word{Value: strings.TrimPrefix(v, "--output="), Dynamic: w.Dynamic})
			continue
		}
		if strings.HasPrefix(v, "--output") || strings.HasPrefix(v, "--upload-pack") ||
			strings.HasPrefix(v, "--receive-pack") || strings.HasPrefix(v, "--exec") ||
			v == "--ext-diff" || strings.HasPrefix(v, "--open-files-in-pager") || strings.HasPrefix(v, "-O") ||
			(sub == "grep" && gitGrepPager(v)) {
			c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
			c.Verb = "run"
			return
		}
	}
	if g := gitGrammar(sub); g != nil && len(g.runs) > 0 && hasSwitch(rest, toolSpec{gram: g}, g.runs...) {
		// An option whose value git runs, written short or long: rebase
		// -x CMD, clone -u PROGRAM, clone -c core.fsmonitor=CMD.
		c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
		c.Verb = "run"
		return
	}
	switch sub {
	case "status", "log", "diff", "show", "blame", "grep", "ls-files", "ls-tree",
		"rev-parse", "rev-list", "describe", "shortlog", "cat-file",
		"whatchanged", "cherry", "count-objects", "name-rev", "merge-base", "version", "help":
		c.Verb, c.Reversibility = "read", "reversible"
		c.add(pl, FSRead, here)
		gitReadsFiles(c, sub, rest, pl)
		if sub == "help" && hasSwitch(rest, toolSpec{}, "-w", "--web") {
			// The help page opens in the configured browser.
			c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
			c.Verb = "run"
		}
	case "reflog":
		// git reflog [show|list|exists] reads; expire, delete and drop
		// throw history away.
		c.Verb, c.Reversibility = "read", "reversible"
		c.add(pl, FSRead, here)
		for _, w := range rest {
			if strings.HasPrefix(w.Value, "-") {
				continue
			}
			if w.Dynamic || w.Value == "expire" || w.Value == "delete" || w.Value == "drop" {
				c.Verb, c.Reversibility = "drop history from the repository", "irreversible"
				c.add(pl, FSWrite, here)
			}
			break
		}
	case "branch", "tag", "remote", "stash", "config", "worktree", "notes":
		// Listing forms read; anything with further words may change state.
		c.Verb, c.Reversibility = "read", "reversible"
		c.add(pl, FSRead, here)
		// A bare git stash is git stash push: it takes the changes out
		// of the work tree.
		if (len(rest) > 0 || sub == "stash") && !(sub == "branch" && onlyFlags(rest, "-a", "-r", "-v", "-vv", "--list", "--all", "--show-current")) &&
			!(sub == "remote" && onlyFlags(rest, "-v")) && !(sub == "tag" && onlyFlags(rest, "-l", "--list")) &&
			!(sub == "stash" && len(rest) == 1 && rest[0].Value == "list") {
			c.Verb, c.Reversibility = "change the repository", "partial"
			c.add(pl, FSWrite, here)
			if sub == "config" {
				c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
				// --global and --system write the user's and the
				// system's configuration, --file the file it names.
				for j, w := range rest {
					switch v := w.Value; {
					case v == "--global" && pl.Home != "":
						c.add(pl, FSWrite, shellparse.Word{Value: path.Join(pl.Home, ".gitconfig")})
					case v == "--system":
						c.add(pl, FSWrite, shellparse.Word{Value: "/etc/gitconfig"})
					case (v == "--file" || v == "-f") && j+1 < len(rest):
						c.add(pl, FSWrite, rest[j+1])
					case strings.HasPrefix(v, "--file="):
						c.add(pl, FSWrite, shellparse.Word{Value: strings.TrimPrefix(v, "--file="), Dynamic: w.Dynamic})
					}
				}
			}
			if sub == "remote" {
				// git remote update, show NAME and prune NAME talk to
				// the remotes.
				if f, ok := packageFetch(cmd, pl); ok {
					c.fetched(f)
				}
			}
		}
	case "add", "commit", "checkout", "switch", "restore", "reset", "merge", "rebase",
		"cherry-pick", "revert", "rm", "mv", "clean", "init", "apply", "am", "bisect",
		"gc", "prune", "repack", "update-index", "sparse-checkout", "submodule":
		c.Verb, c.Reversibility = "change the repository", "partial"
		if gitDiscards(sub, rest) {
			c.Verb, c.Reversibility = VerbDiscard, "irreversible"
		} else if p := checkoutMayRestore(sub, rest); p != "" {
			c.raise(Ask, "git checkout "+p+" restores "+p+" from the index, discarding its uncommitted changes, if it names a file and not a branch")
		}
		c.add(pl, FSWrite, here)
		if sub == "apply" && slices.ContainsFunc(rest, func(w shellparse.Word) bool { return w.Dynamic || w.Value == "--unsafe-paths" }) {
			// With --unsafe-paths the patch writes wherever its names
			// lead, outside the work tree too: not known before it runs.
			c.Accesses = append(c.Accesses, Access{Capability: FSWrite, Target: cmd.String(), Dynamic: true})
			c.raise(Ask, "git apply --unsafe-paths writes wherever the patch's file names lead")
		}
		if sub == "submodule" {
			// Any submodule subcommand may reach the submodules' remotes
			// (update fetches the URLs .gitmodules names).
			f, _ := packageFetch(cmd, pl)
			c.fetched(f)
		}
	case "push", "pull", "fetch", "clone", "ls-remote":
		c.Verb, c.Reversibility = "talk to a remote repository", "partial"
		if gitRemoteProgram(sub, rest) {
			// --upload-pack, --receive-pack, --exec: a program git runs
			// (on the remote, or here for a local path or ext::).
			c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
		}
		// The remote named (a URL, or a remote of the repository's
		// configuration), else the current branch's (packages.go).
		f, _ := packageFetch(cmd, pl)
		c.fetched(f)
		switch sub {
		case "clone":
			// The directory it clones into, not the one it runs in.
			c.add(pl, FSWrite, cloneDestination(rest))
		case "ls-remote":
		default:
			c.add(pl, FSWrite, here)
		}
		if sub == "push" {
			c.Reversibility = "irreversible"
		}
	default:
		// Unknown subcommands may be aliases, which can run shell commands.
		c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
	}
	for _, o := range outputs {
		c.add(pl, FSWrite, o)
		if c.Verb == "read" {
			c.Verb, c.Reversibility = "write", "partial"
		}
	}
}

// gitRemoteProgram reports an option of a remote subcommand that names a
// program git runs: --upload-pack (-u for clone and ls-remote),
// --receive-pack and --exec (push, ls-remote), or a word not known
// before it runs where an option may stand.
func gitRemoteProgram(sub string, rest []shellparse.Word) bool {
	for _, w := range rest {
		v := w.Value
		if v == "--" {
			return false
		}
		name, _, _ := strings.Cut(v, "=")
		switch {
		case name == "--upload-pack", name == "--receive-pack", name == "--exec":
			return true
		case strings.HasPrefix(v, "-u") && !strings.HasPrefix(v, "--") && (sub == "clone" || sub == "ls-remote"):
			return true
		}
	}
	return false
}

// cloneDestination is the directory git clone writes: its second operand,
// else the repository's name (its last path element, without .git) in
// the working directory. A word not known before it runs is dynamic.
func cloneDestination(rest []shellparse.Word) shellparse.Word {
	var operands []shellparse.Word
	for j := 0; j < len(rest); j++ {
		w := rest[j]
		v := w.Value
		switch {
		case w.Dynamic && len(operands) == 0 && !strings.HasPrefix(v, "-"):
			operands = append(operands, w)
		case v == "--":
			operands = append(operands, rest[j+1:]...)
			j = len(rest)
		case slices.Contains([]string{"-b", "--branch", "-o", "--origin", "-c", "--config", "--depth", "--reference",
			"--reference-if-able", "--template", "-u", "--upload-pack", "--separate-git-dir", "-j", "--jobs", "--filter",
			"--shallow-since", "--shallow-exclude", "--server-option", "--bundle-uri", "--ref-format", "--revision"}, v):
			j++
		case strings.HasPrefix(v, "-") && v != "-":
		default:
			operands = append(operands, w)
		}
	}
	switch {
	case len(operands) >= 2:
		return operands[1]
	case len(operands) == 1 && !operands[0].Dynamic:
		name := strings.TrimSuffix(path.Base(strings.TrimRight(strings.ReplaceAll(operands[0].Value, ":", "/"), "/")), ".git")
		if name == "" || name == "." || name == ".." || name == "/" {
			return shellparse.Word{Value: "."}
		}
		return shellparse.Word{Value: name}
	}
	return shellparse.Word{Value: "", Dynamic: true}
}

// gitReadsFiles adds the files a reading git subcommand opens outside the
// repository's own data: both paths of git diff --no-index (which git
// also assumes, without the flag, for two paths when one lies outside the
// working tree or there is no repository), and the files named by grep
// -f, blame --contents, -S and --ignore-revs-file, and ls-files -X.
func gitReadsFiles(c *Classification, sub string, rest []shellparse.Word, pl Place) {
	var names []string
	spec := toolSpec{}
	switch sub {
	case "diff":
		var operands []shellparse.Word
		noIndex := false
		for j := 0; j < len(rest); j++ {
			v := rest[j].Value
			switch {
			case v == "--no-index":
				noIndex = true
			case v == "--":
			case v == "--output":
				j++
			case strings.HasPrefix(v, "-") && len(v) > 1:
			default:
				operands = append(operands, rest[j])
			}
		}
		if noIndex || len(operands) == 2 {
			for _, p := range operands {
				if !isStdStream(p.Value) {
					c.add(pl, FSRead, p)
				}
			}
		}
		return
	case "grep":
		names = []string{"-f"}
		spec.opts = []string{"-e", "-A", "-B", "-C", "-m", "--max-count", "--max-depth", "--threads", "--and", "--or"}
	case "blame":
		names = []string{"--contents", "-S", "--ignore-revs-file"}
		spec.opts = []string{"-L", "-C", "-M", "--ignore-rev"}
	case "ls-files":
		names = []string{"-X", "--exclude-from"}
		spec.opts = []string{"-x", "--exclude", "--exclude-per-directory"}
	default:
		return
	}
	for _, f := range optionValues(rest, spec, names) {
		if f.Value != "-" {
			c.add(pl, FSRead, f)
		}
	}
}

func onlyFlags(ws []shellparse.Word, allowed ...string) bool {
	for _, w := range ws {
		ok := false
		for _, a := range allowed {
			if w.Value == a {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// chdirPlace applies a wrapper's change of directory (env -C DIR, env
// --chdir=DIR, sudo -D DIR): relative paths resolve against DIR, or are
// unknown when DIR is not known statically.
func chdirPlace(cmd shellparse.Command, pl Place) Place {
	for _, w := range cmd.Wrappers {
		base := path.Base(w.Name)
		if base != "env" && base != "sudo" {
			continue
		}
		for i := 1; i < len(w.Argv); i++ {
			a := w.Argv[i]
			dir, found := "", false
			switch {
			case a == "--chdir" || (base == "env" && a == "-C") || (base == "sudo" && a == "-D"):
				found = true
				if i+1 < len(w.Argv) {
					dir = w.Argv[i+1]
				}
			case strings.HasPrefix(a, "--chdir="):
				dir, found = strings.TrimPrefix(a, "--chdir="), true
			case base == "env" && strings.HasPrefix(a, "-C") && len(a) > 2:
				dir, found = a[2:], true
			case base == "sudo" && strings.HasPrefix(a, "-D") && len(a) > 2:
				dir, found = a[2:], true
			}
			if !found {
				continue
			}
			if dir == "~" || strings.HasPrefix(dir, "~/") {
				if pl.Home == "" {
					dir = "$HOME"
				} else {
					dir = pl.Home + dir[1:]
				}
			}
			next := Place{Home: pl.Home}
			switch {
			case dir == "" || strings.ContainsAny(dir, "$`*?[") || pl.UnknownDir && !path.IsAbs(dir):
				next.UnknownDir = true
			case path.IsAbs(dir):
				next.Dirs = []string{path.Clean(dir)}
			default:
				for _, d := range pl.Dirs {
					next.Dirs = append(next.Dirs, path.Join(d, dir))
				}
			}
			pl = next
		}
	}
	return pl
}

// hasOptionPrefix reports an option given alone, as --name=value, or as
// a short option with its value attached (-Pcat).
func hasOptionPrefix(args []shellparse.Word, names ...string) bool {
	for _, w := range args {
		for _, n := range names {
			if w.Value == n || strings.HasPrefix(w.Value, n+"=") || (len(n) == 2 && strings.HasPrefix(w.Value, n)) {
				return true
			}
		}
	}
	return false
}

// isLookupFlags reports an option cluster of command's lookup flags: -v,
// -V, possibly with -p.
func isLookupFlags(v string) bool {
	if len(v) < 2 || v[0] != '-' || !strings.ContainsAny(v, "vV") {
		return false
	}
	return strings.Trim(v[1:], "pvV") == ""
}

// VerbDiscard is the verb of a git command that throws away uncommitted
// changes in the work tree: nothing brings them back.
const VerbDiscard = "discard uncommitted changes"

// gitDiscards reports the git restore, checkout and switch forms that
// overwrite uncommitted changes: restore of the work tree (its default;
// --staged alone only unstages), checkout and switch with --force, switch
// --discard-changes. A word not known statically may be any of them.
func gitDiscards(sub string, rest []shellparse.Word) bool {
	var staged, worktree, force bool
	for _, w := range rest {
		v := w.Value
		if w.Dynamic {
			return sub == "restore" || sub == "checkout" || sub == "switch"
		}
		if v == "--" {
			break
		}
		switch {
		case v == "--staged":
			staged = true
		case v == "--worktree":
			worktree = true
		case v == "--force" || v == "--discard-changes":
			force = true
		case strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && len(v) > 1:
			// A letter that takes a value ends the cluster: -cfix is
			// -c fix, not -f.
			l := shortLetters(gitGrammar(sub), v)
			staged = staged || strings.ContainsRune(l, 'S')
			worktree = worktree || strings.ContainsRune(l, 'W')
			force = force || strings.ContainsRune(l, 'f')
		}
	}
	switch sub {
	case "restore":
		return worktree || !staged
	case "checkout":
		return force || checkoutPaths(rest)
	case "switch":
		return force
	}
	return false
}

// checkoutPaths reports a git checkout that restores paths, from the index
// or from a commit, over the work tree: paths after --, a tree-ish and
// paths (git checkout HEAD~3 README: two operands without -b, -B or
// --orphan), --pathspec-from-file, or -p, which picks the hunks to throw
// away.
func checkoutPaths(rest []shellparse.Word) bool {
	g := gitGrammar("checkout")
	branch := false
	for i, w := range rest {
		v := w.Value
		if v == "--" {
			return i+1 < len(rest)
		}
		opt, _, _ := strings.Cut(v, "=")
		switch {
		case opt == "--pathspec-from-file" || v == "--patch":
			return true
		case v == "--ours" || v == "--theirs":
			// Only paths take a side of a conflict.
			if len(operands("git", toolSpec{gram: g}, rest)) > 0 {
				return true
			}
		case v == "--orphan" || strings.HasPrefix(v, "--orphan="):
			branch = true
		case len(v) > 1 && v[0] == '-' && v[1] != '-':
			l := shortLetters(g, v)
			if strings.ContainsRune(l, 'p') {
				return true
			}
			branch = branch || strings.ContainsAny(l, "bB")
		}
	}
	if branch {
		return false
	}
	ops := operands("git", toolSpec{gram: g}, rest)
	return len(ops) >= 2 || len(ops) == 1 && !ops[0].Dynamic && notRefName(ops[0].Value)
}

// notRefName reports a word git cannot read as a branch or commit, so as
// a path: ., .., ./x, ../x, pathspec magic (:/x), a directory (x/), a
// glob (refs hold none of * ? [).
func notRefName(v string) bool {
	return v == "." || v == ".." || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, ":") ||
		strings.HasSuffix(v, "/") || strings.ContainsAny(v, "*?[")
}

// checkoutMayRestore returns the operand of a git checkout given one,
// which git reads as a path when it names no branch or commit, when it
// looks like a file name (an extension with a letter: main.go, not
// v1.2): git checkout main.go restores main.go. (Forms that cannot be a
// branch are checkoutPaths'.)
func checkoutMayRestore(sub string, rest []shellparse.Word) string {
	if sub != "checkout" {
		return ""
	}
	g := gitGrammar("checkout")
	for _, w := range rest {
		if len(w.Value) > 1 && w.Value[0] == '-' && w.Value[1] != '-' && strings.ContainsAny(shortLetters(g, w.Value), "bB") ||
			strings.HasPrefix(w.Value, "--orphan") || w.Value == "--detach" {
			return ""
		}
	}
	ops := operands("git", toolSpec{gram: g}, rest)
	if len(ops) != 1 || ops[0].Dynamic {
		return ""
	}
	v := ops[0].Value
	last := v[strings.LastIndexByte(v, '/')+1:]
	ext := ""
	if i := strings.LastIndexByte(last, '.'); i > 0 {
		ext = last[i+1:]
	}
	switch {
	case v == "-":
		// The branch checked out before.
		return ""
	case ext != "" && len(ext) <= 8 && strings.IndexFunc(ext, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) >= 0:
		return v
	}
	return ""
}

// jqReadsEnv reports a jq or yq program that reads the environment: jq's
// env and $ENV, yq's env(NAME) and strenv(NAME).
func jqReadsEnv(prog string) bool {
	if strings.Contains(prog, "$ENV") || strings.Contains(prog, "strenv(") {
		return true
	}
	for i := 0; ; {
		j := strings.Index(prog[i:], "env")
		if j < 0 {
			return false
		}
		j += i
		// .env is a key, not the builtin.
		before := j == 0 || !identChar(prog[j-1]) && prog[j-1] != '.' && prog[j-1] != '$'
		if j > 0 && prog[j-1] == '"' {
			before = false // ."env" or a string "env..."
		}
		after := j+3 == len(prog) || !identChar(prog[j+3])
		if before && after {
			return true
		}
		i = j + 3
	}
}

func identChar(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// laterTarget reports a write target whose content a program runs or
// obeys later without a command line anyone judges, judged on every path
// it may resolve to: a glob component matches any name it could match
// (.git/hoo*/pre-commit, .git/conf?g). into is false for a delete: a
// directory that only holds what runs later is then no such target
// (rm -rf .git/index.lock, rm -rf .git).
func laterTarget(p string, glob bool, home string, into bool) bool {
	if !path.IsAbs(p) {
		return false
	}
	var buf [16]string
	segs := appendSegments(buf[:0], p)
	eq := func(seg, lit string) bool {
		if seg == lit {
			return true
		}
		if !glob || !strings.ContainsAny(seg, "*?[") {
			return false
		}
		ok, err := path.Match(seg, lit)
		return ok || err != nil
	}
	eqAny := func(seg string, lits ...string) bool {
		for _, l := range lits {
			if eq(seg, l) {
				return true
			}
		}
		return false
	}
	for i, seg := range segs {
		rest := segs[i+1:]
		switch {
		case eq(seg, ".git"):
			if gitDirLater(rest, eq, eqAny, into) {
				return true
			}
		case eqAny(seg, ".envrc", ".husky", ".devcontainer", ".idea", ".pre-commit-config.yaml", ".lefthook",
			".mise.toml", ".yarnrc.yml", ".gitmodules"),
			into && len(rest) == 0 && eq(seg, "mise.toml"):
			// direnv's .envrc, husky's hooks, dev containers'
			// definitions, JetBrains run configurations, pre-commit's
			// configuration: run by the tools that read them; the
			// submodules git enters (sandbox.LaterPaths).
			return true
		case lefthookConfig(seg, glob):
			return true
		case agentLater(seg, rest, eq, eqAny, into):
			// The coding agents' MCP servers, hooks, plugins, commands
			// (agentfiles.go).
			return true
		case eq(seg, ".claude") && len(rest) == 1 && eqAny(rest[0], "settings.json", "settings.local.json"):
			// An agent's project settings: its hooks run commands.
			return true
		case eq(seg, ".cargo") && len(rest) == 1 && eqAny(rest[0], "config.toml", "config"):
			// cargo's project configuration: build runners, linkers.
			return true
		case eq(seg, ".vscode"):
			// The editor's tasks, launch configurations and settings
			// (which name programs it runs).
			if len(rest) == 0 && into || len(rest) > 0 && eqAny(rest[0], "tasks.json", "launch.json", "settings.json") {
				return true
			}
		}
	}
	if home != "" && laterInHome(segs, home, eq, eqAny, into) {
		return true
	}
	return laterSystem(p, segs, eq, eqAny, into)
}

// gitDirLater is laterTarget below a git directory: rest are the
// components after ".git". Hooks, configuration (core.fsmonitor, aliases,
// filters, pagers), per-worktree configuration, info (attributes),
// commondir; a submodule's under modules/NAME; a linked worktree's
// commondir, gitdir, configuration and hooks; and, for a write into it
// (a copy, a move, an archive extracted there), the directory itself.
func gitDirLater(rest []string, eq func(string, string) bool, eqAny func(string, ...string) bool, into bool) bool {
	gitLater := func(seg string) bool { return eqAny(seg, later.Git()...) }
	switch {
	case len(rest) == 0:
		return into
	case gitLater(rest[0]):
		return true
	case eq(rest[0], "modules"):
		if len(rest) <= 2 {
			return into
		}
		for _, s := range rest[2:] {
			if gitLater(s) {
				return true
			}
		}
	case eq(rest[0], "worktrees"):
		if len(rest) <= 2 {
			return into
		}
		return eqAny(rest[2], "commondir", "gitdir", "config.worktree", "hooks")
	}
	return false
}

// lefthookConfig reports lefthook's configuration file names
// (lefthook.yml, .lefthook-local.yaml, lefthook.toml, lefthook.json).
func lefthookConfig(seg string, glob bool) bool {
	if glob && strings.ContainsAny(seg, "*?[") {
		for _, n := range []string{"lefthook.yml", ".lefthook.yml", "lefthook-local.yml", ".lefthook-local.yml"} {
			if ok, err := path.Match(seg, n); ok || err != nil {
				return true
			}
		}
		return false
	}
	n := strings.TrimPrefix(seg, ".")
	n = strings.TrimPrefix(n, "lefthook")
	if len(n) == len(strings.TrimPrefix(seg, ".")) {
		return false
	}
	n = strings.TrimPrefix(n, "-local")
	switch n {
	case ".yml", ".yaml", ".toml", ".json":
		return true
	}
	return false
}

// laterInHome is laterTarget in the home directory: the shell's startup
// files, the user's git configuration, the desktop's autostart entries
// and application launchers, systemd's user units and environment, the
// fish shell's configuration, and the user's directories on PATH.
func laterInHome(segs []string, home string, eq func(string, string) bool, eqAny func(string, ...string) bool, into bool) bool {
	h := appendSegments(nil, home)
	if len(segs) <= len(h) {
		return false
	}
	for i := range h {
		if segs[i] != h[i] {
			return false
		}
	}
	rel := segs[len(h):]
	if len(rel) == 1 && eqAny(rel[0], ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile",
		".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login",
		".xprofile", ".xsessionrc", ".xinitrc", ".xsession", ".pam_environment", ".gitconfig",
		// Editors', debuggers' and downloaders' startup files, which run
		// commands or choose programs.
		".vimrc", ".exrc", ".gvimrc", ".gdbinit", ".curlrc", ".wgetrc", ".inputrc", ".npmrc", ".yarnrc", ".emacs",
		// Terminal multiplexers', REPLs', database clients', mailers' and
		// build tools' startup files, which run commands they name.
		".tmux.conf", ".screenrc", ".wezterm.lua", ".Rprofile", ".Renviron", ".irbrc", ".pryrc", ".gemrc",
		".pythonrc", ".pythonrc.py", ".pydistutils.cfg", ".perldb", ".ghci", ".ocamlinit", ".sbclrc", ".guile",
		".lldbinit", ".psqlrc", ".sqliterc", ".muttrc", ".mailrc", ".mavenrc", ".npm-init.js", ".yarnrc.yml",
		".bunfig.toml", ".envrc", ".spacemacs", ".huskyrc", ".lesskey") {
		return true
	}
	if len(rel) == 2 && eq(rel[0], ".cargo") && eqAny(rel[1], "env", "config.toml", "config") {
		// ~/.cargo/env, which the shell startup files source; cargo's
		// configuration (build runners, linkers).
		return true
	}
	if into && len(rel) >= 1 && strings.HasSuffix(rel[len(rel)-1], ".pth") && slices.Contains(rel, "site-packages") ||
		into && len(rel) >= 1 && eqAny(rel[len(rel)-1], "usercustomize.py", "sitecustomize.py") {
		// Python runs .pth lines that import, and the customize
		// modules, at every start.
		return true
	}
	under := func(parts ...string) bool { return underSegs(rel, parts, eq, into) }
	return under(".config", "autostart") || under(".config", "systemd", "user") || under(".config", "environment.d") ||
		under(".local", "share", "systemd", "user") || under(".pyenv", "pyenv.d") || under(".pyenv", "shims") ||
		under(".config", "nvim") || under(".vim") || under(".config", "direnv") || under(".config", "mise") ||
		under(".claude", "settings.json") || under(".claude", "settings.local.json") || under(".bashrc.d") ||
		under(".config", "pip") || under(".pip") || under(".config", "git", "attributes") ||
		under(".local", "share", "applications") || under(".config", "fish") || under(".config", "git", "config") ||
		under(".local", "bin") && len(rel) <= 3 || under("bin") && len(rel) <= 2 ||
		under("go", "bin") && len(rel) <= 3 || under(".cargo", "bin") && len(rel) <= 3 ||
		laterToolConfig(under)
}

// laterToolConfig reports a path under home, through under, in a
// tool's configuration that names programs it runs or code it loads:
// build tools' init scripts and plugins (Gradle, sbt, Leiningen,
// Clojure), editors' and IDEs' settings and plugins, terminals' and
// window managers' configuration, REPL startup directories, CLIs whose
// configuration runs commands (AWS's credential_process, gh's aliases,
// lazygit's custom commands, starship's modules, docker's CLI plugins).
func laterToolConfig(under func(parts ...string) bool) bool {
	return under(".gradle", "init.gradle") || under(".gradle", "init.gradle.kts") || under(".gradle", "init.d") ||
		under(".sbt") || under(".lein") || under(".clojure") || under(".R") ||
		under(".config", "tmux") || under(".config", "vim") || under(".local", "share", "nvim") ||
		under(".emacs.d") || under(".config", "emacs") || under(".doom.d") || under(".config", "doom") ||
		under(".config", "Code", "User") || under(".config", "Code - OSS", "User") || under(".config", "VSCodium", "User") ||
		under(".vscode-server", "data") || under(".vscode", "extensions") || under(".config", "JetBrains") ||
		under(".config", "kitty") || under(".config", "alacritty") || under(".config", "wezterm") ||
		under(".config", "i3") || under(".config", "sway") || under(".config", "hypr") || under(".config", "openbox") ||
		under(".config", "starship.toml") || under(".config", "lazygit") || under(".config", "gh", "config.yml") ||
		under(".config", "powershell") || under(".config", "nushell") || under(".config", "zsh") ||
		under(".oh-my-zsh") || under(".zsh") || under(".config", "mutt") || under(".config", "gdb") ||
		under(".ipython") || under(".config", "ipython") || under(".jupyter") ||
		under(".aws", "config") || under(".docker", "cli-plugins") || under(".config", "yarn") ||
		under(".config", "plasma-workspace", "env") || under(".kde", "Autostart") || under(".config", "upstart")
}

// laterSystem is laterTarget outside the home directory: the system's
// shell startup files, cron's tables, systemd's and init's units, the
// desktop's system autostart, and the system's directories on PATH.
func laterSystem(p string, segs []string, eq func(string, string) bool, eqAny func(string, ...string) bool, into bool) bool {
	switch p {
	case "/etc/profile", "/etc/bash.bashrc", "/etc/bashrc", "/etc/environment", "/etc/zshenv", "/etc/zsh/zshenv",
		"/etc/zsh/zshrc", "/etc/rc.local", "/etc/anacrontab", "/etc/gitconfig", "/etc/ld.so.preload":
		return true
	}
	under := func(parts ...string) bool { return underSegs(segs, parts, eq, into) }
	if agentSystemLater(segs, eq, into) {
		return true
	}
	if len(segs) >= 2 && eq(segs[0], "etc") && (strings.HasPrefix(segs[1], "cron") || glob1(segs[1], "cron.d")) {
		return len(segs) > 2 || into || segs[1] == "crontab"
	}
	if under("usr", "lib", "node_modules") || under("usr", "local", "lib", "node_modules") ||
		len(segs) >= 4 && (eq(segs[0], "usr") && (slices.Contains(segs, "site-packages") || slices.Contains(segs, "dist-packages"))) {
		// The programs' own code that the system's node and python
		// load: npm itself, global packages, installed modules.
		return true
	}
	if under("etc", "profile.d") || under("var", "spool", "cron") || under("etc", "systemd") || under("etc", "init.d") ||
		under("etc", "xdg", "autostart") || under("etc", "zsh") || under("usr", "lib", "systemd") ||
		under("etc", "apt", "apt.conf.d") || under("etc", "ld.so.conf.d") || under("etc", "update-motd.d") ||
		under("etc", "pam.d") || under("etc", "security") || under("etc", "sudoers.d") {
		return true
	}
	if into && len(segs) >= 1 && eqAny(segs[len(segs)-1], "sitecustomize.py", "usercustomize.py") ||
		into && len(segs) >= 1 && strings.HasSuffix(segs[len(segs)-1], ".pth") && (slices.Contains(segs, "site-packages") || slices.Contains(segs, "dist-packages")) {
		return true
	}
	for _, d := range [][]string{{"bin"}, {"sbin"}, {"usr", "bin"}, {"usr", "sbin"}, {"usr", "local", "bin"}, {"usr", "local", "sbin"}} {
		if len(segs) <= len(d)+1 && under(d...) {
			return true
		}
	}
	return false
}

// onPath reports a file directly in one of the PATH directories dirs
// (a program there runs in place of one a later command names), or, for
// a write into it (into), the directory itself. A glob is compared as a
// pattern that may match either.
func onPath(p string, glob bool, dirs []string, into bool) bool {
	if len(dirs) == 0 || !path.IsAbs(p) {
		return false
	}
	parent := path.Dir(p)
	for _, d := range dirs {
		switch {
		case parent == d || into && p == d:
			return true
		case glob && strings.ContainsAny(p, "*?["):
			if ok, err := path.Match(parent, d); ok || err != nil {
				return true
			}
			if ok, err := path.Match(p, d); into && (ok || err != nil) {
				return true
			}
		}
	}
	return false
}

// underSegs reports path segments that begin with parts (each compared
// with eq): something below them, or, for a write into it (into), the
// directory itself.
func underSegs(segs, parts []string, eq func(string, string) bool, into bool) bool {
	if len(segs) < len(parts) {
		return false
	}
	for i, p := range parts {
		if !eq(segs[i], p) {
			return false
		}
	}
	return len(segs) > len(parts) || into
}

// glob1 reports a glob component that may match lit.
func glob1(seg, lit string) bool {
	if !strings.ContainsAny(seg, "*?[") {
		return false
	}
	ok, err := path.Match(seg, lit)
	return ok || err != nil
}

// appendSegments appends the components of an absolute path.
func appendSegments(out []string, p string) []string {
	for _, s := range strings.Split(strings.Trim(p, "/"), "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// linksToLater reports a link (ln, cp -s, cp -l) whose target is what
// runs later, or a directory holding it: a write through the link's name
// later in the script writes there.
func linksToLater(cmd shellparse.Command, pl Place) bool {
	name := cmd.Name()
	if name != "ln" && name != "cp" {
		return false
	}
	args := cmd.Argv[1:]
	if name == "cp" {
		link := false
		for _, w := range args {
			v := w.Value
			if v == "-s" || v == "-l" || strings.HasPrefix(v, "--sym") || strings.HasPrefix(v, "--li") ||
				len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsAny(v, "sl") {
				link = true
			}
		}
		if !link {
			return false
		}
	}
	var buf [4]resolved
	for _, w := range args {
		if strings.HasPrefix(w.Value, "-") {
			continue
		}
		for _, r := range resolvePaths(pl, w, buf[:0]) {
			if r.dynamic || laterTarget(r.path, r.glob, pl.Home, true) || onPath(r.path, r.glob, pl.Path, true) {
				if r.dynamic && !strings.Contains(r.path, "/.git") && !strings.HasPrefix(r.path, ".git") {
					continue
				}
				return true
			}
		}
	}
	return false
}

// deletable reports a path a delete may remove at any level without
// asking: inside the workspace, a temp directory or ~/.cache.
func deletable(p string, pl Place) bool {
	within := func(dir string) bool {
		return dir != "" && (p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/"))
	}
	if p == pl.Workspace || p == "/tmp" || p == "/var/tmp" {
		return false
	}
	return within(pl.Workspace) || within("/tmp") || within("/var/tmp") || within("/dev/shm") ||
		(pl.Home != "" && within(path.Join(pl.Home, ".cache")))
}
