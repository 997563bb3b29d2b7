package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ShCmd is mnemos sh -c SCRIPT [ARG...]: sh -c behind the gate, for a
// harness that runs its commands through a shell path it lets you set
// (Aider's $SHELL). The script is decided as mnemos run -- sh -c SCRIPT
// ARG... decides it, then runs sandboxed; the exit status is sh's, or
// 75 (approval required) and 77 (denied) as for mnemos run.
//
// Invoked as mnemos-sh (a symbolic link to mnemos), mnemos is mnemos sh;
// as mnemos-bash, mnemos sh --bash, which runs bash -c instead.
type ShCmd struct {
	Args []string `arg:"" optional:"" help:"-c SCRIPT [NAME [ARG...]], as for sh."`
}

// shUsage is the synopsis of mnemos sh.
const shUsage = "mnemos sh [--bash] [-eux] -c SCRIPT [NAME [ARG...]]"

// shHelp is what mnemos sh --help prints: kong passes every word after
// sh through, --help included.
const shHelp = `Usage: ` + shUsage + `

Run SCRIPT as sh -c runs it, behind the gate: decided as
mnemos run -- sh -c SCRIPT [NAME [ARG...]] decides it, then run in the
sandbox. The exit status is the script's; 75 when a person must approve
(the card is on stderr), 77 when it is denied, 64 for a usage error.

A symbolic link to mnemos named mnemos-sh runs as mnemos sh; one named
mnemos-bash as mnemos sh --bash. Point a harness whose shell you can set
(Aider: SHELL=/path/to/mnemos-sh) at it.

Options:
  --bash        Run bash -c instead of sh -c (first word only).
  -c            Read the commands from SCRIPT (required).
  -C -e -f -n -u -v -x, -o NAME (their names and pipefail), and
                their + forms: passed to the shell as given (not -a: it
                exports what the decision reads as shell variables).
  -l            Ignored (said once per session): the shell reads no login
                files; the sandbox keeps them read-only anyway.
  -i, -s        Refused: an interactive shell or one reading stdin runs
                commands mnemos cannot decide before they run.
`

// shSetOptions are the -o names mnemos sh passes on: those of the letters
// it passes, and pipefail. Others can change what the script's words mean
// to the shell, and so what mnemos decided: bash's keyword (-k) puts
// NAME=VALUE arguments in the command's environment, allexport (-a)
// exports every assignment (GIT_EXTERNAL_DIFF=x; git diff runs x), which
// the decision does not see in the shell's options.
var shSetOptions = map[string]bool{
	"noclobber": true, "errexit": true, "noglob": true, "noexec": true,
	"nounset": true, "verbose": true, "xtrace": true, "pipefail": true,
}

// shSetOptionNames lists shSetOptions, sorted.
func shSetOptionNames() []string {
	names := make([]string, 0, len(shSetOptions))
	for n := range shSetOptions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// shInvocation is what mnemos sh was asked to run.
type shInvocation struct {
	argv  []string // the command decided and run: sh [OPTS] -c SCRIPT [ARG...]
	login bool     // -l was given (and is ignored)
	help  bool
}

// parseSh reads sh's arguments as POSIX sh does for -c: option words
// (clusters such as -ec, -c -l, +x, -o NAME) up to the first other word,
// which is the script; the words after it are $0, $1 ...
func parseSh(args []string) (shInvocation, error) {
	shell := "sh"
	if len(args) > 0 {
		switch args[0] {
		case "-h", "--help":
			return shInvocation{help: true}, nil
		case "--bash":
			shell, args = "bash", args[1:]
		}
	}
	var inv shInvocation
	var opts []string
	cmode := false
	i := 0
	for i < len(args) {
		w := args[i]
		if w == "--" || w == "-" {
			i++
			break
		}
		if len(w) < 2 || (w[0] != '-' && w[0] != '+') {
			break
		}
		if strings.HasPrefix(w, "--") || strings.HasPrefix(w, "++") {
			return inv, &exitError{code: exitUsage, msg: fmt.Sprintf("mnemos sh: unknown option %q", w), hint: shUsage}
		}
		i++
		sign := w[:1]
		for _, r := range w[1:] {
			switch {
			case r == 'c' && sign == "-":
				cmode = true
			case r == 'l' && sign == "-":
				inv.login = true
			case r == 'i':
				return inv, &exitError{code: exitUsage, msg: "mnemos sh refuses -i: an interactive shell runs what is typed into it, which mnemos cannot decide before it runs",
					hint: "give the commands with -c: " + shUsage}
			case r == 's':
				return inv, &exitError{code: exitUsage, msg: "mnemos sh refuses -s: a shell reading commands from stdin runs what mnemos cannot decide before it runs",
					hint: "give the commands with -c: " + shUsage}
			case r == 'o':
				if i >= len(args) {
					return inv, &exitError{code: exitUsage, msg: sign + "o needs an option name", hint: shUsage}
				}
				if !shSetOptions[args[i]] {
					return inv, &exitError{code: exitUsage, msg: fmt.Sprintf("mnemos sh does not pass %so %q to the shell: it may change how the script reads, which mnemos decided", sign, args[i]),
						hint: "mnemos sh passes -o " + strings.Join(shSetOptionNames(), ", ")}
				}
				opts = append(opts, sign+"o", args[i])
				i++
			case strings.ContainsRune("Cefnuvx", r):
				opts = append(opts, sign+string(r))
			default:
				return inv, &exitError{code: exitUsage, msg: fmt.Sprintf("mnemos sh: unknown option %s%c in %q", sign, r, w), hint: shUsage}
			}
		}
	}
	if !cmode {
		return inv, &exitError{code: exitUsage, msg: "mnemos sh runs only a script given with -c (not a script file, nor commands on stdin)", hint: shUsage}
	}
	if i >= len(args) {
		return inv, &exitError{code: exitUsage, msg: "-c needs a script", hint: shUsage}
	}
	inv.argv = append(append(append([]string{shell}, opts...), "-c"), args[i:]...)
	return inv, nil
}

// Run decides and runs the script as mnemos run -- sh -c SCRIPT ARG...
// does: the same request, the same exit statuses and messages.
func (c *ShCmd) Run(a *app) error {
	inv, err := parseSh(c.Args)
	if err != nil {
		return err
	}
	if inv.help {
		_, err := fmt.Fprint(a.io.out, shHelp)
		return err
	}
	if inv.login {
		noteOnce(a, "sh-login", "mnemos: note: mnemos sh ignores -l: the shell reads no login files (~/.profile); set what the commands need in the environment the harness starts with")
	}
	// A harness that runs mnemos-sh as its shell often passes SHELL=
	// mnemos-sh on to its commands; a command that starts $SHELL inside
	// the sandbox would start mnemos again, which cannot read its own
	// state there. It gets the shell mnemos sh runs instead.
	// The command inherits mnemos's own environment (gate.Run), which
	// this process may change: it ends when the command does.
	if shellIsSelf(a.getenv("SHELL")) {
		if real, err := exec.LookPath(inv.argv[0]); err == nil {
			os.Setenv("SHELL", real)
		}
	}
	run := &RunCmd{Command: inv.argv}
	return run.Run(a)
}

// shellIsSelf reports whether $SHELL names mnemos: mnemos-sh, mnemos-bash
// or mnemos itself.
func shellIsSelf(shell string) bool {
	if shell == "" {
		return false
	}
	switch filepath.Base(shell) {
	case "mnemos", "mnemos-sh", "mnemos-bash":
		return true
	}
	return false
}

// argsFor maps the name mnemos was invoked by to the words it parses:
// mnemos-sh ARGS is mnemos sh ARGS; mnemos-bash ARGS is mnemos sh --bash
// ARGS; any other name leaves args as they are.
func argsFor(argv0 string, args []string) []string {
	switch strings.TrimSuffix(filepath.Base(argv0), ".exe") {
	case "mnemos-sh":
		return append([]string{"sh"}, args...)
	case "mnemos-bash":
		return append([]string{"sh", "--bash"}, args...)
	}
	return args
}

// noteOnce prints line on stderr once per session (the agent's session
// id, or else the process that ran mnemos): a marker in the state
// directory remembers that it was said.
func noteOnce(a *app, key, line string) {
	session := a.cli.Session
	if session == "" {
		session = "ppid-" + strconv.Itoa(os.Getppid())
	}
	sum := sha256.Sum256([]byte(key + "\x00" + session))
	if paths, err := a.paths(); err == nil {
		dir := filepath.Join(paths.StateDir, "warned")
		if err := os.MkdirAll(dir, 0o700); err == nil {
			f, err := os.OpenFile(filepath.Join(dir, hex.EncodeToString(sum[:8])), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
			if errors.Is(err, fs.ErrExist) {
				return
			}
			if err == nil {
				f.Close()
			}
		}
	}
	fmt.Fprintln(a.io.err, line)
}
