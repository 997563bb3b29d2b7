package gate

import (
	"path/filepath"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// redirectPastRule names a redirect of a command that an allow rule let
// through by its words, writing a file outside the workspace and the temp
// directories: a rule written for a program (git status, read the
// workspace) never meant to cover what the shell writes for it elsewhere
// (git status > ../other/README). "" when there is none, or when the rule
// names a capability or a target (it is about what is written).
func redirectPastRule(cmd shellparse.Command, res *policy.Result, cwd string, writable []string) string {
	if res.Outcome != policy.Allow || res.DecidedBy != policy.ByRule || res.Rule == nil || !res.RuleByWords {
		return ""
	}
	for _, r := range cmd.Redirects {
		if !r.Writes() {
			continue
		}
		v := r.Target.Value
		if r.Target.Dynamic || v == "" || strings.HasPrefix(v, "/dev/") || strings.HasPrefix(v, "&") {
			if r.Target.Dynamic {
				return r.Op + " " + v
			}
			continue
		}
		p := v
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if !classify.WithinAny(p, writable) {
			return r.Op + " " + v
		}
	}
	return ""
}
