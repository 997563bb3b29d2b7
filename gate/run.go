package gate

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
)

// Stdio are the streams handed to the gated command.
type Stdio struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// RunOptions qualify Run.
type RunOptions struct {
	// Wait blocks an ask until the approval is resolved or expires.
	Wait bool
	// PollEvery is how often Wait looks at the approval (default 250 ms).
	PollEvery time.Duration
	// RequireSandbox refuses to run when the sandbox cannot be enforced.
	RequireSandbox bool
	// OnPending is called once when the request is parked, before waiting.
	OnPending func(Decision)
}

// RunResult is what happened.
type RunResult struct {
	Decision Decision
	// Ran is true when the command was started.
	Ran bool
	// ExitCode is the command's exit status (128+N for signal N).
	ExitCode int
}

// Run decides and, if the decision is allow, runs the command with the
// given stdio, passing its exit status through. run.started and
// run.finished are recorded around it.
func (g *Gate) Run(ctx context.Context, req Request, stdio Stdio, opts RunOptions) (RunResult, error) {
	dec, err := g.Decide(ctx, req, Mode{SpendTicket: true})
	if err != nil {
		return RunResult{Decision: dec}, err
	}
	if dec.Outcome == policy.Ask && opts.Wait && dec.Approval != nil {
		if opts.OnPending != nil {
			opts.OnPending(dec)
		}
		dec, err = g.wait(ctx, req, dec, opts)
		if err != nil {
			return RunResult{Decision: dec}, err
		}
	}
	if dec.Outcome != policy.Allow {
		return RunResult{Decision: dec}, nil
	}
	code, err := g.exec(ctx, req, dec, stdio, opts)
	return RunResult{Decision: dec, Ran: err == nil || code >= 0, ExitCode: code}, err
}

// wait polls the pending approval until it is resolved or expires; an
// approval's ticket is then spent by deciding again.
func (g *Gate) wait(ctx context.Context, req Request, dec Decision, opts RunOptions) (Decision, error) {
	every := opts.PollEvery
	if every <= 0 {
		every = 250 * time.Millisecond
	}
	st, err := g.Store(ctx)
	if err != nil {
		return dec, err
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		p, err := st.Get(ctx, dec.Approval.Token)
		if err != nil {
			return dec, &StateError{Path: g.cfg.Paths.DBFile, Err: err}
		}
		switch p.StatusAt(g.cfg.Now()) {
		case approvals.StatusApproved:
			return g.Decide(ctx, req, Mode{SpendTicket: true})
		case approvals.StatusRejected:
			dec = deny(dec, "approval", "approval "+p.Token+" was rejected")
			return dec, nil
		case approvals.StatusExpired:
			if _, err := g.ExpireSweep(ctx); err != nil {
				return dec, err
			}
			dec = deny(dec, "approval", "approval "+p.Token+" expired before anyone answered")
			return dec, nil
		}
		select {
		case <-ctx.Done():
			return deny(dec, "approval", "stopped waiting: "+ctx.Err().Error()), nil
		case <-t.C:
		}
	}
}

// exec starts the command, relays signals, and records its end. The exit
// code is -1 when the command could not be started.
func (g *Gate) exec(ctx context.Context, req Request, dec Decision, stdio Stdio, opts RunOptions) (int, error) {
	spec, err := g.sandboxSpec(req, dec, opts)
	if err != nil {
		return -1, &SandboxError{Status: sandbox.Probe(), Err: err}
	}
	status := sandbox.Probe()
	if opts.RequireSandbox && !status.Enforceable() {
		return -1, &SandboxError{Status: status, Err: sandbox.ErrUnenforceable}
	}
	// Signals sent to mnemos from here on reach the command (or, before it
	// starts, wait for it), so mnemos always records run.finished.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGWINCH, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(sigs)

	start := g.cfg.Now()
	if err := g.cfg.Audit.Append(ctx, "run.started",
		slog.Any("argv", req.Argv), slog.String("cwd", req.Cwd),
		slog.String("channel", req.Channel), slog.String("sender", req.Sender),
		slog.String("ticket", dec.Ticket),
		slog.Group("sandbox", slog.Int("landlock_abi", status.ABI), slog.Bool("enforceable", status.Enforceable()),
			slog.Bool("network", spec.Network), slog.Any("write", spec.ReadWrite), slog.String("note", status.Note())),
	); err != nil {
		return -1, err
	}
	cmd := exec.Command(req.Argv[0], req.Argv[1:]...)
	cmd.Dir = req.Cwd
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
	cmd.Env = os.Environ()

	code := -1
	applied, runErr := sandbox.Start(cmd, spec)
	if runErr == nil {
		done := make(chan struct{})
		go func() {
			for {
				select {
				case s := <-sigs:
					// Terminal signals reach the child through the process
					// group already; relay only what was sent to mnemos.
					if s == syscall.SIGINT || s == syscall.SIGQUIT {
						if isForeground() {
							continue
						}
					}
					_ = cmd.Process.Signal(s)
				case <-done:
					return
				}
			}
		}()
		waitErr := cmd.Wait()
		close(done)
		code = exitCode(cmd.ProcessState)
		if waitErr != nil && !errors.As(waitErr, new(*exec.ExitError)) {
			runErr = waitErr
		}
	}
	attrs := []slog.Attr{
		slog.Any("argv", req.Argv), slog.Int("exit_status", code),
		slog.Float64("duration_ms", float64(g.cfg.Now().Sub(start).Microseconds())/1000),
		slog.Group("sandbox", slog.Int("landlock_abi", applied.ABI), slog.Bool("enforced", applied.Enforced),
			slog.Bool("fs", applied.FS), slog.Bool("net", applied.Net), slog.Bool("scoped", applied.Scoped),
			slog.Bool("seccomp", applied.Seccomp),
			slog.Any("notes", applied.Notes)),
	}
	if runErr != nil {
		attrs = append(attrs, slog.String("error", runErr.Error()))
	}
	if cmd.ProcessState != nil {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			attrs = append(attrs, slog.String("signal", ws.Signal().String()))
		}
	}
	if err := g.cfg.Audit.Append(context.WithoutCancel(ctx), "run.finished", attrs...); err != nil && runErr == nil {
		return code, err
	}
	if errors.Is(runErr, sandbox.ErrUnenforceable) {
		return -1, &SandboxError{Status: status, Err: runErr}
	}
	if runErr != nil {
		return 127, &StartError{Argv0: req.Argv[0], Err: runErr, Hint: sandbox.DeniedHint(spec, cmd.Path)}
	}
	return code, nil
}

// sandboxSpec builds the Landlock ruleset for a run from the decision:
// read-write on the workspace and temp directories, the usual caches,
// nothing on mnemos's own files or the user's secrets, and TCP only when a
// command of the request was allowed network:http.
func (g *Gate) sandboxSpec(req Request, dec Decision, opts RunOptions) (sandbox.Spec, error) {
	network := false
	for _, c := range dec.Commands {
		if c.Policy == nil {
			continue
		}
		for _, a := range c.Policy.Accesses {
			network = network || a.Capability == policy.NetworkHTTP
		}
	}
	tmp := []string{os.TempDir()}
	if tmp[0] != "/tmp" {
		tmp = append(tmp, "/tmp")
	}
	return sandbox.DefaultSpec(sandbox.Options{
		Workspace: dec.Workspace, Home: g.cfg.UserHome, TempDirs: tmp,
		Protected: g.cfg.Paths.Protected(), Secrets: sandbox.DefaultSecrets(g.cfg.UserHome),
		Network: network, Required: opts.RequireSandbox,
	})
}

func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// StartError is a command that could not be started (exit 127 like a shell).
type StartError struct {
	Argv0 string
	Err   error
	// Hint says how to grant a path the sandbox refused, if it did.
	Hint string
}

func (e *StartError) Error() string { return "cannot run " + e.Argv0 + ": " + e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// SandboxError is a run refused because the sandbox cannot be built or
// enforced (exit 78).
type SandboxError struct {
	Status sandbox.Status
	Err    error
}

func (e *SandboxError) Error() string {
	if errors.Is(e.Err, sandbox.ErrUnenforceable) {
		return "the sandbox cannot be enforced here: " + e.Status.Note()
	}
	return "cannot build the sandbox: " + e.Err.Error()
}

func (e *SandboxError) Unwrap() error { return e.Err }
