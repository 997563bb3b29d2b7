package gate

import (
	"sort"

	"github.com/mnemos-dev/mnemos/vaglio"
)

// logVerdicts appends one line per verdict of dec to vaglio's private
// monthly log (seed 003, ch. 7): a guard's block or a judge's score, with
// the program, its option names and the names of the request's context,
// never their values. The log is fail-safe: a write that fails changes no
// decision; the first failure of the gate is passed to
// Config.VaglioLogFailed, later ones are dropped. Commands the policy
// denied before the judge have no verdict and no line.
func (g *Gate) logVerdicts(req Request, dec Decision) {
	dir := g.cfg.Paths.VaglioDir
	if dir == "" {
		return
	}
	ctxKeys := []string{"level"}
	if len(req.Context) > 0 {
		names := make([]string, 0, len(req.Context))
		for k := range req.Context {
			names = append(names, "context."+k)
		}
		sort.Strings(names)
		ctxKeys = append(ctxKeys, names...)
	}
	now := g.cfg.Now()
	for _, c := range dec.Commands {
		var v vaglio.Verdict
		switch {
		case c.Guard != nil:
			v = c.Guard.Verdict()
		case c.Judge != nil:
			v = *c.Judge
		default:
			continue
		}
		rec := vaglio.NewLogRecord(c.Command, v, req.Reason, ctxKeys)
		if err := vaglio.AppendLog(dir, rec, now); err != nil {
			if g.logWarned.CompareAndSwap(false, true) && g.cfg.VaglioLogFailed != nil {
				g.cfg.VaglioLogFailed(err)
			}
			return
		}
	}
}
