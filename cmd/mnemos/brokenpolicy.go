package main

import (
	"fmt"
	"os"

	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
)

// A person can always make things stricter. The commands that show the
// state or can only tighten it (approvals list, show, deny and cancel;
// grants list, revoke and prune; extensions list and revoke; audit) read
// nothing from the policy: the state directory and the audit log are
// located from MNEMOS_HOME or the XDG directories (gate.Locate), the
// person from the flags, the environment and the Unix user (identity), and
// a request's or grant's expiry was fixed in the state when it was
// created. So a policy file that does not load (a YAML error, an unknown
// key, a bad rule, in the system, user, project or --policy layer) is a
// warning for them, naming the file, line and column, and they go on.
// Everything that decides or loosens (run, policy check, approve, admit)
// still refuses with exit 78.

// standInSource is the Source of the policy a showing or tightening
// command holds when the configured one does not load.
const standInSource = "no policy (the configured policy does not load)"

// standInYAML is that policy: the lowest level, and a deny rule for every
// command. No showing or tightening command decides anything with it;
// should one ever do so, nothing is allowed.
const standInYAML = `level: readonly
defaults:
  shell: deny
deny:
  - name: the policy does not load
    conditions:
      argv.0: {matches: "(?s).*"}
`

// standInPolicy returns the policy described at standInYAML.
func standInPolicy() *policy.Policy {
	p, err := policy.Parse(standInSource, []byte(standInYAML))
	if err != nil {
		// A constant that is tested; failing here is a build defect.
		panic("mnemos: the stand-in policy does not parse: " + err.Error())
	}
	return p
}

// policies reads the policy stack of cwd's workspace (loadLayers) and the
// --policy file. For a showing or tightening command (a.tolerant) a file
// that does not load is a warning and the stand-in policy takes the
// stack's place; for any other command it is the error.
func (a *app) policies(paths gate.Paths, cwd string) (pol, extra *policy.Policy, err error) {
	pol, err = a.loadLayers(paths, cwd)
	if err != nil {
		if a.tolerant == "" {
			return nil, nil, err
		}
		a.warnBroken(err)
		pol = standInPolicy()
	}
	if a.cli.PolicyArg != "" {
		extra, err = policy.Load(a.cli.PolicyArg)
		if err != nil {
			if a.tolerant == "" {
				return nil, nil, err
			}
			a.warnBroken(err)
			extra = nil
		}
	}
	return pol, extra, nil
}

// warnBroken tells, on one line, that a policy file does not load and
// that the command goes on without it.
func (a *app) warnBroken(err error) {
	fmt.Fprintf(a.io.err, "mnemos: warning: %s; %s goes on, as it reads nothing from the policy; run, policy check and approve refuse until it is fixed\n",
		oneLine(err.Error()), a.tolerant)
}

// notePolicy is what an audit command, which builds no gate, does with
// the policy: it reads it only to warn when it does not load.
func (a *app) notePolicy(paths gate.Paths) {
	cwd, _ := os.Getwd()
	_, _, _ = a.policies(paths, cwd)
}
