package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
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
	// HookTicket is what an agent's hook puts in the command it rewrote
	// (gate.RunHook); without a valid one the command is decided as usual.
	HookTicket string `name:"hook-ticket" hidden:"" help:"The ticket of the agent's hook that decided this command."`
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
	stdio := gate.Stdio{Stdin: a.io.in, Stdout: a.io.out, Stderr: a.io.err}
	opts := gate.RunOptions{
		Wait: c.Wait, RequireSandbox: c.RequireSandbox,
		OnPending: func(d gate.Decision) {
			printPending(a, d)
			fmt.Fprintf(a.io.err, "mnemos: waiting for approval %s (expires %s)\n", d.Approval.Token, d.Approval.ExpiresAt.Local().Format("15:04:05"))
			serveOnDemand(a, g)
		},
	}
	run := g.Run
	if c.HookTicket != "" {
		run = func(ctx context.Context, req gate.Request, stdio gate.Stdio, opts gate.RunOptions) (gate.RunResult, error) {
			return g.RunHook(ctx, req, c.HookTicket, stdio, opts)
		}
	}
	res, err := run(a.ctx, req, stdio, opts)
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
		warnPromises(a, res.Sandbox)
		for _, q := range res.Quarantined {
			fmt.Fprintf(a.io.err, "mnemos: warning: the command created %s, which would run outside the sandbox later; moved it to %s (read it, and move it back yourself if you want it)\n", q[0], q[1])
		}
		warnRepos(a, res.Repos, res.ReposUnchecked)
		if len(res.Reaped) > 0 {
			fmt.Fprintf(a.io.err, "mnemos: note: stopped what the command left running in the background: %s (nothing a sandboxed command starts outlives it; run a server in the foreground of its own mnemos run)\n", strings.Join(res.Reaped, ", "))
		}
		reportJournal(a, res)
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
		printRememberLines(a.io.err, *d.Approval)
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

// warnPromises says on stderr, once per session (the agent's session id,
// or else the process that ran mnemos), which of the sandbox's promises do
// not hold on this machine. A marker in the state directory remembers
// that the session was told.
func warnPromises(a *app, st sandbox.Status) {
	missing := st.Missing()
	if len(missing) == 0 {
		return
	}
	keys := make([]string, len(missing))
	for i, p := range missing {
		keys[i] = p.Key
	}
	session := a.cli.Session
	if session == "" {
		session = "ppid-" + strconv.Itoa(os.Getppid())
	}
	sum := sha256.Sum256([]byte(session + "\x00" + strings.Join(keys, ",")))
	if paths, err := a.paths(); err == nil {
		dir := filepath.Join(paths.StateDir, "warned")
		marker := filepath.Join(dir, hex.EncodeToString(sum[:8]))
		if _, err := os.Stat(marker); err == nil {
			return
		}
		if err := os.MkdirAll(dir, 0o700); err == nil {
			if f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
				f.Close()
			} else if errors.Is(err, fs.ErrExist) {
				return
			}
		}
	}
	fmt.Fprintf(a.io.err, "mnemos: warning: the sandbox keeps %d of its 7 promises here; %s do not hold (%s)\n",
		7-len(missing), strings.Join(keys, ", "), missing[0].Why)
	fmt.Fprintf(a.io.err, "mnemos: hint: mnemos sandbox status says what restores them; sandbox: {required: true} in the policy refuses to run without them\n")
}

// maxRepoWarnings bounds the repositories named on stderr; the audit
// event names them all.
const maxRepoWarnings = 5

// warnRepos says which git repositories the command left that would have
// run something outside the sandbox, and what was moved aside.
func warnRepos(a *app, repos []sandbox.DefusedRepo, unchecked string) {
	for i, r := range repos {
		if i == maxRepoWarnings {
			fmt.Fprintf(a.io.err, "mnemos: warning: and %d more git repositories, made harmless the same way (mnemos audit lists them under run.finished)\n", len(repos)-i)
			break
		}
		moved := make([]string, len(r.Moved))
		for j, m := range r.Moved {
			moved[j] = m[0] + " -> " + m[1]
		}
		wrote := ""
		if r.Wrote != "" {
			wrote = "; wrote its harmless settings to " + r.Wrote
		}
		fmt.Fprintf(a.io.err, "mnemos: warning: the command left the git repository %s, which would run commands outside the sandbox through %s; moved aside %s%s (read them, and move them back yourself if you want them)\n",
			oneLine(r.Repo), oneLine(strings.Join(r.Would, ", ")), oneLine(strings.Join(moved, ", ")), oneLine(wrote))
	}
	if unchecked != "" {
		fmt.Fprintf(a.io.err, "mnemos: warning: %s\n", oneLine(unchecked))
	}
}

// reportJournal says what the journal could not keep of the run, always,
// and, with -v or when the run dropped work the journal keeps, the run's
// id and how to undo it.
func reportJournal(a *app, res gate.RunResult) {
	if res.JournalErr != "" {
		fmt.Fprintf(a.io.err, "mnemos: warning: the journal's record of this run is incomplete: %s\n", res.JournalErr)
	}
	j := res.Journal
	if j == nil || !j.Changed {
		return
	}
	for _, n := range j.NotKept {
		fmt.Fprintf(a.io.err, "mnemos: warning: the journal could not keep %s (%s): `mnemos undo` cannot bring it back\n", n.Path, n.Why)
	}
	for _, p := range j.Pruned {
		fmt.Fprintf(a.io.err, "mnemos: warning: the journal dropped run %s (%s) to make room for this run's changes (the workspace's quota): `mnemos undo` can no longer bring back what it changed\n",
			p.ID, oneLine(strings.Join(p.Argv, " ")))
	}
	if a.cli.Verbose || res.Decision.DropsKept() {
		fmt.Fprintf(a.io.err, "mnemos: run %s changed the workspace: `mnemos changes %s` shows what, `mnemos undo %s` puts it back\n", j.ID, j.ID, j.ID)
	}
}
