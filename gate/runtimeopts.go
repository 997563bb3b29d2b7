package gate

import (
	"context"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/shellparse"
	"github.com/mnemos-dev/mnemos/vaglio"
)

// runTimeOptions judges a command that has words computed at run time
// where its program reads options (git push $(echo --force) origin main)
// as if each such word were each option the program reads there
// (classify.OptionVariants): when the guard denies one of those readings,
// the command is denied; when the policy would deny or ask about one and
// decides the command itself less strictly, the command asks, its reason
// naming the word and the options. Under the sandbox a reading counts by
// the policy's rules and the classification's floors (git push --force,
// git reset --hard, git clean -f), and an option's value is a path in the
// workspace: the sandbox confines what the option itself does, as it
// does any command's. Outside it a reading counts by the level's table
// too, and a value is a path not known before it runs.
func (g *Gate) runTimeOptions(ctx context.Context, guard vaglio.DirChecker, in policy.Input, grants policy.GrantChecker, cd *CommandDecision) {
	value := shellparse.Word{Value: "x"}
	if in.Sandbox == policy.Unsandboxed {
		value = shellparse.Word{Value: "$VALUE", Dynamic: true}
	}
	variants := classify.OptionVariants(cd.Command, value)
	if len(variants) == 0 {
		return
	}
	// Each reading is judged by the policy alone, as the command itself
	// is (grants and remembered rules apply to both alike).
	judge := func(c shellparse.Command) policy.Result {
		in.Command = c
		var scratch CommandDecision
		res, err := evaluate(ctx, g.cfg.Policy, in, nil, grants, &scratch, false)
		if err == nil {
			res, err = g.withExtra(ctx, in, nil, grants, &scratch, false, res)
		}
		if err != nil {
			return policy.Result{Outcome: policy.Ask, Reason: err.Error()}
		}
		return res
	}
	base := judge(cd.Command)
	worstRes := base
	var worst []*classify.OptionVariant
	for i := range variants {
		v := &variants[i]
		if hit, ok := guard.Check(v.Command); ok {
			h := hit
			cd.Outcome, cd.BlockedBy, cd.DecidedBy, cd.Guard = policy.Deny, "guard", "guard", &h
			cd.Reason = "guard: " + v.Word + " is known only when it runs, and may be " + v.Option + ": " + hit.Reason
			if v.Plain {
				cd.Reason = "guard: " + v.Word + " is known only when it runs, and reads as " + v.Option + ": " + hit.Reason
			}
			return
		}
		res := judge(v.Command)
		if in.Sandbox != policy.Unsandboxed && res.DecidedBy != policy.ByRule && res.DecidedBy != policy.ByFloor {
			// Under the sandbox what the option does (writes in the
			// workspace, runs code) is confined as any command's is:
			// the level's table asks about it or not for the
			// command's own accesses. Rules and floors are what a
			// reading adds.
			continue
		}
		switch r := res.Outcome.Restrictiveness(); {
		case r > worstRes.Outcome.Restrictiveness():
			worst, worstRes = append(worst[:0], v), res
		case r == worstRes.Outcome.Restrictiveness() && len(worst) > 0 && len(worst) < 4 && worst[0].Word == v.Word && !v.Plain && !worst[0].Plain:
			worst = append(worst, v)
		}
	}
	if len(worst) == 0 {
		return
	}
	opts := make([]string, len(worst))
	for i, v := range worst {
		opts[i] = v.Option
	}
	list := opts[0]
	if n := len(opts); n > 1 {
		list = strings.Join(opts[:n-1], ", ") + " or " + opts[n-1]
	}
	may := worst[0].Word + " is known only when it runs, and may be " + list + " (" + worst[0].Reader + " reads options there)"
	if worst[0].Plain {
		may = worst[0].Word + " is known only when it runs, and reads as " + list
	}
	switch {
	case cd.Outcome == policy.Allow:
		// A reading that would be denied asks: the person sees the word
		// and what it may be, rather than a dead end for an operand
		// (git push origin "$BRANCH").
		cd.Outcome, cd.DecidedBy = policy.Ask, string(policy.ByFloor)
		cd.Reason = may + ": " + worstRes.Reason
	case cd.Outcome == policy.Ask && worstRes.Outcome == policy.Deny:
		cd.Reason += "; " + may + ", which " + worstRes.Reason
	}
}
