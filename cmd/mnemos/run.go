package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
	"github.com/mnemos-dev/mnemos/vaglio"
)

// RunCmd decides and runs a command.
type RunCmd struct {
	Wait           bool `help:"When approval is required, wait until the request is approved, denied or expires."`
	RequireSandbox bool `help:"Refuse to run when the sandbox cannot be enforced."`
	RequestFlags
	Command []string `arg:"" passthrough:"partial" help:"The command and its arguments, after --."`
}

// Run is mnemos run. stdin, stdout and stderr belong to the command; mnemos
// speaks on stderr only.
func (c *RunCmd) Run(a *app) error {
	g, req, err := a.gatedRequest(c.Command, c.RequestFlags, "mnemos run -- CMD [ARG...]")
	if err != nil {
		return err
	}
	res, err := g.Run(a.ctx, req, gate.Stdio{Stdin: a.io.in, Stdout: a.io.out, Stderr: a.io.err}, gate.RunOptions{
		Wait: c.Wait, RequireSandbox: c.RequireSandbox,
		OnPending: func(d gate.Decision) {
			printPending(a, d)
			fmt.Fprintf(a.io.err, "mnemos: waiting for approval %s (expires %s)\n", d.Approval.Token, d.Approval.ExpiresAt.Local().Format("15:04:05"))
		},
	})
	if err != nil {
		var se *gate.SandboxError
		if errors.As(err, &se) {
			hint := "run without --require-sandbox to accept an unconfined run"
			switch {
			case se.Hint != "":
				// The policy asked for it: say what to change there.
				hint = se.Hint
			case errors.Is(err, sandbox.ErrUnsafeGrant):
				hint = "run mnemos from a project directory: the sandbox never grants your whole home directory, mnemos's own files or your secrets"
			}
			return &exitError{code: exitConfig, msg: se.Error(), hint: hint}
		}
		var st *gate.StartError
		if errors.As(err, &st) {
			return &exitError{code: res.ExitCode, msg: st.Error(), hint: st.Hint}
		}
		return err
	}
	warnJudge(a, res.Decision)
	if res.Ran {
		for _, q := range res.Quarantined {
			fmt.Fprintf(a.io.err, "mnemos: warning: the command created %s, which would run outside the sandbox later; moved it to %s\n", q[0], q[1])
		}
		if res.Reaped > 0 {
			fmt.Fprintf(a.io.err, "mnemos: note: stopped %d process(es) the command left running\n", res.Reaped)
		}
		if res.Hint != "" {
			for _, l := range strings.Split(res.Hint, "\n") {
				fmt.Fprintf(a.io.err, "mnemos: hint: %s\n", l)
			}
		}
		return quietExit(res.ExitCode)
	}
	d := res.Decision
	switch d.Outcome {
	case policy.Ask:
		if !c.Wait {
			printPending(a, d)
		}
		return quietExit(exitApproval)
	default:
		fmt.Fprintf(a.io.err, "mnemos: denied: %s\n", oneLine(d.Reason))
		return quietExit(exitDenied)
	}
}

// printPending prints the approval card and the one line saying how to
// approve.
func printPending(a *app, d gate.Decision) {
	warnDeliveries(a, d)
	for _, l := range d.Card {
		fmt.Fprintf(a.io.err, "mnemos: %s\n", l)
	}
	if d.Approval != nil {
		fmt.Fprintf(a.io.err, "mnemos: approval required: %s; approve with: mnemos approvals approve %s\n", d.Approval.Token, d.Approval.Token)
	}
}

// warnJudge says, once a request, that the policy's model judge gave no
// score and its neutral fallback stood in: the decision was made without
// the judge the policy asks for, which the person should hear about rather
// than find as a 0.5 in the audit log.
func warnJudge(a *app, d gate.Decision) {
	for _, c := range d.Commands {
		if c.Judge != nil && c.Judge.JudgeKind == vaglio.JudgeKindLLM && strings.Contains(c.Judge.Reason, "llm-judge fallback") {
			fmt.Fprintf(a.io.err, "mnemos: warning: judge %s gave no score, the neutral %.2f stood in: %s\n", vaglio.JudgeKindLLM, c.Judge.Score, oneLine(c.Judge.Reason))
			return
		}
	}
}
