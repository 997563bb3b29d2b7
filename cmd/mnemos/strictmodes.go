package main

import (
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"

	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
)

// strictModes checks the files mnemos trusts for the user it runs as (see
// gate.StrictModes): a policy file or a state file that another user owns
// or that others may write is refused, with the command that fixes it.
func (a *app) strictModes() gate.StrictModes {
	return gate.StrictModes{UID: os.Geteuid(), Name: userName}
}

// userName returns the user name of uid, or "" when it has none.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return ""
}

// checkModes checks everything the gate reads its decisions from and
// writes its state to: the configuration directory and the user's policy,
// the project policy of the workspace of cwd, the --policy file, the state
// directory, the database and the audit log.
func (a *app) checkModes(paths gate.Paths, cwd string) error {
	project := ""
	if cwd != "" {
		project = policy.ProjectFile(gate.Workspace(cwd))
	}
	return a.trust(a.strictModes().Check(paths, project, a.cli.PolicyArg))
}

// loadCheckedPolicy is loadPolicy after checking the configuration
// directory and the policy file in it.
func (a *app) loadCheckedPolicy(p gate.Paths) (*policy.Policy, error) {
	if err := a.trust(a.strictModes().CheckConfig(p)); err != nil {
		return nil, err
	}
	return loadPolicy(p)
}

// trust turns the files StrictModes refused into a configuration error.
//
// A command that can only make things stricter (a.onlyTightens: deny a
// request, withdraw one, revoke a grant or an extension) goes on with a
// warning instead: the files are as untrustworthy for it as for any other
// command, but refusing it would leave a person who finds an unsafe file
// unable to shut what it may have let in until the file is fixed, and
// nothing these commands do can widen what a command is allowed. The
// files are never repaired here: the hint says how.
func (a *app) trust(found []gate.Unsafe) error {
	if len(found) == 0 {
		return nil
	}
	if a.onlyTightens == "" {
		return &gate.UnsafeError{Files: found}
	}
	for _, u := range found {
		fmt.Fprintf(a.io.err, "mnemos: warning: %s\n", u)
	}
	fmt.Fprintf(a.io.err, "mnemos: warning: %s goes on, as it can only make things stricter; other commands refuse until this is fixed\n", a.onlyTightens)
	fmt.Fprintf(a.io.err, "mnemos: hint: %s\n", (&gate.UnsafeError{Files: found}).Hint())
	return nil
}

// printUnsafe reports the files StrictModes refused, one per line, and the
// commands that fix them all.
func printUnsafe(w io.Writer, e *gate.UnsafeError) {
	for _, u := range e.Files {
		fmt.Fprintf(w, "mnemos: error: %s\n", u)
	}
	fmt.Fprintf(w, "mnemos: hint: %s\n", e.Hint())
}
