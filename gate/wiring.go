package gate

import (
	"path/filepath"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/hook"
	"github.com/mnemos-dev/mnemos/policy"
)

// wiringFiles are the agents' settings files that route their commands
// through mnemos, for the user and for the workspace (hook.WiringFiles).
func (g *Gate) wiringFiles(ws string) []string {
	return hook.WiringFiles(hook.Locations{Home: g.cfg.UserHome, Project: ws, Getenv: g.getenv})
}

// unwiresAgent reports a write access of a command to an agent's hook
// settings, or a delete or move of the agent's directory that holds one
// (.claude, ~/.gemini): a command
// an agent runs must never unwire the gate that judges it, whether it
// runs under the sandbox (which keeps them read-only as what runs later)
// or outside it, for a hook that cannot route it into mnemos run.
func unwiresAgent(res *policy.Result, files func() []string) (string, bool) {
	dirOps := res.Verb == "delete" || res.Verb == "move"
	for _, a := range res.Accesses {
		if a.Capability != classify.FSWrite && a.Capability != classify.CodeExec {
			continue
		}
		if a.Dynamic || !filepath.IsAbs(a.Target) {
			continue
		}
		for _, f := range files() {
			switch {
			case hook.MatchWiring(f, a.Target):
				return a.Target, true
			case a.Glob:
				if globMayName(a.Target, f) {
					return f, true
				}
			case dirOps && classify.Within(a.Target, f) && strings.HasPrefix(filepath.Base(a.Target), "."):
				// The agent's own directory (.claude, ~/.gemini) removed
				// or moved away whole.
				return f, true
			}
		}
	}
	return "", false
}
