package gate

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
)

// statusCache holds the kernel's answer to sandbox.Probe, asked at most
// once a gate: what the sandbox can enforce does not change while mnemos
// runs.
type statusCache struct {
	once sync.Once
	st   sandbox.Status
	// keeps is keepsPromises(st), worked out once.
	keeps bool
}

// sandboxStatus is Config.Probe's answer, asked once.
func (g *Gate) sandboxStatus() sandbox.Status {
	g.status.once.Do(func() { g.status.st = g.cfg.Probe(); g.status.keeps = keepsPromises(g.status.st) })
	return g.status.st
}

// sandboxKeepsPromises is keepsPromises(g.sandboxStatus()).
func (g *Gate) sandboxKeepsPromises() bool {
	g.sandboxStatus()
	return g.status.keeps
}

// keepsPromises reports whether the sandbox mnemos run would start keeps every
// promise on this machine: a contained command is then held by it, and
// not only by the decision.
func keepsPromises(st sandbox.Status) bool { return st.Enforced && len(st.Missing()) == 0 }

// sandboxOf is how the request's commands will run, as far as is known
// before deciding: outside the sandbox when the request says so (a hook
// runs the command itself); otherwise under it and, until a command
// turns out to need the network, offline. Whether the kernel keeps the
// sandbox's promises is asked only when a rule relies on it
// (recheckContained).
func sandboxOf(req Request) policy.RunSandbox {
	if req.Unsandboxed {
		return policy.Unsandboxed
	}
	return policy.SandboxedOffline
}

// writableTrees are the trees the sandbox lets every command write: the
// workspace and the temp directories (the writable caches are the
// sandbox's own business: a command that names one is not contained).
func writableTrees(ws string) []string {
	out := []string{ws, "/tmp"}
	if t := filepath.Clean(os.TempDir()); t != "/tmp" {
		out = append(out, t)
	}
	return out
}

// recheckContained decides again the commands a rule settled because they
// were contained (the field sandbox), when that turns out not to hold for
// the request as a whole: the kernel cannot keep the sandbox's promises,
// the run's sandbox reaches the network (another command needs it, or
// the policy's sandbox section turns it on), or it may write git's
// configuration or check out the workspace's later files. in is the input the commands
// were decided with.
//
// It reports whether it changed a command's outcome.
func (g *Gate) recheckContained(ctx context.Context, dec *Decision, details []commandDetail, in policy.Input, grants policy.GrantChecker, explain bool) (bool, error) {
	relies := false
	for i := range dec.Commands {
		if p := dec.Commands[i].Policy; p != nil && p.ReliesOnSandbox {
			relies = true
			break
		}
	}
	if !relies || in.Sandbox == policy.Unsandboxed {
		return false, nil
	}
	run, ok := g.runReachesFurther(dec)
	if !ok {
		return false, nil
	}
	in.Sandbox = run
	changed := false
	for i := range dec.Commands {
		cd := &dec.Commands[i]
		if cd.Policy == nil || !cd.Policy.ReliesOnSandbox {
			continue
		}
		in.Command = cd.Command
		res, err := evaluate(ctx, g.cfg.Policy, in, nil, grants, cd, explain)
		if err == nil {
			res, err = g.withExtra(ctx, in, nil, grants, cd, explain, res)
		}
		if err != nil {
			return false, err
		}
		if res.Outcome.Restrictiveness() <= cd.Outcome.Restrictiveness() {
			continue
		}
		details[i].result = res
		cd.Policy = &details[i].result
		cd.Outcome, cd.DecidedBy, cd.Reason = res.Outcome, string(res.DecidedBy), res.Reason
		changed = true
	}
	return changed, nil
}

// runReachesFurther reports whether the run of a decision reaches beyond
// what contained work may, and how it then runs: outside the sandbox when
// the kernel cannot keep its promises; with the network when the run's
// sandbox has it (another command needs it, or the policy turns it on);
// sandboxed but reaching what runs later when it may write git's
// configuration or the workspace's own later files (.envrc, .vscode …)
// as the repository has them.
func (g *Gate) runReachesFurther(dec *Decision) (policy.RunSandbox, bool) {
	switch {
	case !keepsPromises(g.sandboxStatus()):
		return policy.Unsandboxed, true
	case g.requestSandbox(*dec).cfg.HasNetwork(), writesGitConfig(*dec), changesGitWorktree(*dec):
		return policy.Sandboxed, true
	}
	return policy.SandboxedOffline, false
}
