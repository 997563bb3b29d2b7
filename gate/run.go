package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/journal"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
	"github.com/mnemos-dev/mnemos/shellparse"
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
	// Quarantined are files the command created where they would run
	// later outside the sandbox (a new .envrc, .git/config.worktree...),
	// each moved aside to the path given after it.
	Quarantined [][2]string
	// Repos are the git repositories the command left in the workspace
	// (made or changed) that would have run something outside the
	// sandbox, each made harmless (sandbox.WatchRepos); ReposUnchecked
	// says what of the workspace was not looked at, and why.
	Repos          []sandbox.DefusedRepo
	ReposUnchecked string
	// Sandbox is what this machine's sandbox enforces (Status.Promises),
	// as probed for the run.
	Sandbox sandbox.Status
	// Reaped are the processes the command left running when it ended,
	// which were stopped: name (pid).
	Reaped []string
	// Journal is what the journal kept of the run's changes (nil when
	// nothing was watched); JournalErr says why its record is incomplete.
	Journal    *journal.Summary
	JournalErr string
	// Hint, after a sandboxed command exited non-zero, names the paths and
	// ports the command named that the sandbox refuses, and the policy
	// snippet that grants each (or that none can): one or two lines,
	// without the "mnemos: hint: " prefix. It is empty when the sandbox
	// refuses nothing the command named.
	Hint string
}

// Run decides and, if the decision is allow, runs the command with the
// given stdio, passing its exit status through. run.started and
// run.finished are recorded around it.
func (g *Gate) Run(ctx context.Context, req Request, stdio Stdio, opts RunOptions) (RunResult, error) {
	// The sandbox's path rules depend on the workspace and the policy,
	// seldom on the decision: they are built while the decision is made,
	// and used when the decision's sandbox turns out the same.
	status := g.cfg.Probe()
	early := g.prepareSandbox(req, opts, status)
	defer early.close()
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
		// Rules prepared before a wait would describe the filesystem as it
		// was then.
		early.close()
		early = nil
	}
	if dec.Outcome != policy.Allow {
		return RunResult{Decision: dec}, nil
	}
	res, err := g.exec(ctx, req, dec, stdio, opts, status, early)
	res.Decision, res.Ran, res.Sandbox = dec, err == nil || res.ExitCode >= 0, status
	return res, err
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
			g.awaitConcession(ctx, req, p)
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
		if !pause(ctx, st, dec.Approval.Token, t.C, every) {
			return deny(dec, "approval", "stopped waiting: "+ctx.Err().Error()), nil
		}
	}
}

// concessionGrace bounds how long a waiting run gives an approval's
// concession to be recorded.
const concessionGrace = 2 * time.Second

// awaitConcession waits, after an approval with a territory concession,
// until the concession lets the request through (or concessionGrace has
// passed): the approver records its grants and rules just after the
// approval, which a waiting run hears of at once (on another host too),
// and such an approval issues no ticket when the concession covers the
// request. Without the wait the run would ask again.
func (g *Gate) awaitConcession(ctx context.Context, req Request, p approvals.Pending) {
	if p.Territory == "" || p.Territory == approvals.TerritoryNone {
		return
	}
	deadline := time.Now().Add(concessionGrace)
	for {
		d, err := g.Decide(ctx, req, Mode{DryRun: true})
		if err != nil || d.Outcome != policy.Ask || !time.Now().Before(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// exec starts the command, relays signals, and records its end. The exit
// code is -1 when the command could not be started. After a non-zero exit
// it returns the sandbox's refusals of what the command named, as
// RunResult.Hint.
func (g *Gate) exec(ctx context.Context, req Request, dec Decision, stdio Stdio, opts RunOptions, status sandbox.Status, early *earlySandbox) (RunResult, error) {
	failed := RunResult{ExitCode: -1}
	g.makeToolDirs(dec)
	sb, pre, err := early.spec(g, req, dec, opts)
	if err != nil {
		if se := (*SandboxError)(nil); errors.As(err, &se) {
			se.Status = status
		}
		return failed, g.refused(ctx, req, sb, status, err)
	}
	spec := sb.spec
	// What the command changes in the workspace is watched, and kept
	// first, when the journal is on for it (journal.go).
	spec.Watch = !escalationAllowed(dec) && g.watches(dec.Workspace)
	// A run allowed only because it can be undone runs watched, or not at all.
	spec.RequireWatch = reliesOnJournal(dec)
	if spec.RequireWatch && !spec.Watch {
		return failed, g.refused(ctx, req, sb, status, &SandboxError{Status: status,
			Err:  errors.New("this run was allowed because the journal keeps what it changes, and the journal cannot record it"),
			Hint: "run it again; if it fails again, `mnemos status` says why the journal is off"})
	}
	if spec.Required && escalationAllowed(dec) {
		return failed, g.refused(ctx, req, sb, status, &SandboxError{Status: status,
			Err:  fmt.Errorf("%w: this run was approved to run outside the sandbox, and the sandbox is required (%s)", sandbox.ErrUnenforceable, sb.requiredBy),
			Hint: "run it yourself, outside mnemos, or without --require-sandbox"})
	}
	if spec.Required && !status.Enforceable() {
		return failed, g.refused(ctx, req, sb, status, &SandboxError{Status: status, Err: sandbox.ErrUnenforceable, Hint: sb.unenforceableHint(status)})
	}
	if spec.Required {
		// Every promise, or nothing runs.
		if missing := status.Missing(); len(missing) > 0 {
			m := missing[0]
			hint := m.Hint
			if h := sb.unenforceableHint(status); h != "" {
				hint += "; or " + h
			}
			return failed, g.refused(ctx, req, sb, status, &SandboxError{Status: status,
				Err:  fmt.Errorf("%w: the sandbox cannot keep its promise that %s: %s", sandbox.ErrUnenforceable, m.What, m.Why),
				Hint: hint})
		}
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
		slog.Group("sandbox", startedSandbox(sb, status, dec)...),
	); err != nil {
		return failed, err
	}
	// The git repositories the run makes or changes in the workspace are
	// looked at when it ends; the listing of the workspace the check
	// relies on is read (or, the first time, made) while the decision was
	// being made.
	repos := early.reposFor(g, dec.Workspace)
	repos.Start()
	// What the command leaves running is adopted, and stopped when it
	// ends (ReapLeftovers), before what it left behind is looked at.
	if err := sandbox.BecomeSubreaper(); err != nil {
		g.cfg.Log.Debug("cannot adopt the command's orphans", "error", err)
	}
	cmd := exec.Command(req.Argv[0], req.Argv[1:]...)
	cmd.Dir = req.Cwd
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
	cmd.Env = g.childEnviron(os.Environ())

	code := -1
	// In the foreground of a terminal the command runs as a job with the
	// terminal to itself: what the keyboard generates reaches it alone, so
	// every signal mnemos receives was sent to mnemos and is relayed once.
	j := foregroundJob(cmd)
	var applied sandbox.Applied
	var runErr error
	// What the command changes in the workspace is kept first (journal.go).
	var rj *runJournal
	var watch *sandbox.Watch
	if escalationAllowed(dec) {
		// A person approved, once, what no sandbox can grant (outside.go).
		applied = sandbox.Applied{ABI: status.ABI, Notes: []string{"approved to run outside the sandbox (approval " + dec.Ticket + "): " + outsideSummary(dec.Reach)}}
		runErr = cmd.Start()
	} else if rj, runErr = g.beginJournal(req, dec, spec); runErr == nil {
		// Unless the journal cannot record the run: then nothing starts.
		applied, watch, runErr = sandbox.StartWatched(cmd, spec, status, pre, rj.handler())
	}
	if runErr != nil {
		j.restore(cmd)
	} else {
		done := make(chan struct{})
		go func() {
			for {
				select {
				case s := <-sigs:
					_ = cmd.Process.Signal(s)
				case <-done:
					return
				}
			}
		}()
		waitErr := j.wait(cmd)
		j.restore(cmd)
		close(done)
		code = exitCode(cmd.ProcessState)
		if waitErr != nil && !errors.As(waitErr, new(*exec.ExitError)) {
			runErr = waitErr
		}
	}
	reaped := sandbox.ReapLeftovers()
	watched := watch.Close()
	jsum, jerr := rj.finish()
	quarantined := quarantine(applied.Absent, g.cfg.Now())
	rep := repos.Finish(sandbox.RepoOptions{Home: g.cfg.UserHome, Protected: keptReadOnly(spec, applied), Now: g.cfg.Now()})
	// A command that exited with an error (not one killed by a signal,
	// such as an interrupt) may have been refused something it named.
	var refused []string
	if runErr == nil && cmd.ProcessState != nil && cmd.ProcessState.Exited() && code != 0 && applied.Enforced {
		refused = sandbox.Refusals(spec, applied, g.cfg.UserHome, g.namedNeeds(req, dec))
	}
	sandboxAttrs := []any{slog.String("summary", applied.Summary()),
		slog.Int("landlock_abi", applied.ABI), slog.Bool("enforced", applied.Enforced),
		slog.Bool("fs", applied.FS), slog.Bool("net", applied.Net), slog.Bool("scoped", applied.Scoped),
		slog.Bool("seccomp", applied.Seccomp),
		slog.Any("notes", applied.Notes)}
	if len(refused) > 0 {
		sandboxAttrs = append(sandboxAttrs, slog.Any("refused", refused))
	}
	if applied.View {
		sandboxAttrs = append(sandboxAttrs, slog.Bool("view", true))
	}
	if moved := slices.Concat(quarantined, movedAside(rep.Repos)); len(moved) > 0 {
		sandboxAttrs = append(sandboxAttrs, slog.Any("quarantined", moved))
	}
	if len(rep.Repos) > 0 {
		sandboxAttrs = append(sandboxAttrs, slog.Any("repos", rep.Repos))
	}
	if rep.Unchecked != "" {
		sandboxAttrs = append(sandboxAttrs, slog.String("repos_unchecked", rep.Unchecked))
	}
	if len(reaped) > 0 {
		sandboxAttrs = append(sandboxAttrs, slog.Any("reaped", reaped))
	}
	journalAttrs := journalAttrsOf(rj, jsum, watched, jerr)
	attrs := []slog.Attr{
		slog.Any("argv", req.Argv), slog.Int("exit_status", code),
		slog.Float64("duration_ms", float64(g.cfg.Now().Sub(start).Microseconds())/1000),
		slog.Group("sandbox", sandboxAttrs...),
	}
	if journalAttrs != nil {
		attrs = append(attrs, slog.Group("journal", journalAttrs...))
	}
	if runErr != nil {
		attrs = append(attrs, slog.String("error", runErr.Error()))
	}
	if cmd.ProcessState != nil {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			attrs = append(attrs, slog.String("signal", ws.Signal().String()))
		}
	}
	res := RunResult{ExitCode: code, Quarantined: quarantined, Repos: rep.Repos, ReposUnchecked: rep.Unchecked, Reaped: reaped, Journal: jsum}
	if jerr != nil {
		res.JournalErr = jerr.Error()
	}
	if err := g.cfg.Audit.Append(context.WithoutCancel(ctx), "run.finished", attrs...); err != nil && runErr == nil {
		return res, err
	}
	if errors.Is(runErr, sandbox.ErrUnenforceable) {
		return failed, &SandboxError{Status: status, Err: runErr, Hint: sb.unenforceableHint(status)}
	}
	if runErr != nil {
		res.ExitCode = 127
		return res, &StartError{Argv0: req.Argv[0], Err: runErr, Hint: sandbox.DeniedHint(spec, cmd.Path)}
	}
	res.Hint = hintLines(refused)
	if code != 0 && runErr == nil && cmd.ProcessState.Exited() && applied.Enforced && !spec.Network {
		if step := g.missingFetchStep(req, dec); step != "" {
			if res.Hint != "" {
				res.Hint += "\n"
			}
			res.Hint += "the sandbox gave this run no network: if it failed for want of dependencies to download, run `" + step +
				"` first (it asks once for the network to the registry), then this again"
		}
	}
	return res, nil
}

// refused records run.refused for an allowed command that was not started
// because its sandbox could not be built or enforced, so that the audit
// log does not end at an allow decision, and returns err (or the audit
// log's error, which stops everything).
func (g *Gate) refused(ctx context.Context, req Request, sb runSandbox, st sandbox.Status, err error) error {
	required := sb.requiredBy
	if aerr := g.cfg.Audit.Append(context.WithoutCancel(ctx), "run.refused",
		slog.Any("argv", req.Argv), slog.String("cwd", req.Cwd),
		slog.String("channel", req.Channel), slog.String("sender", req.Sender),
		slog.String("error", err.Error()),
		slog.Group("sandbox", slog.Int("landlock_abi", st.ABI), slog.Bool("enforceable", st.Enforceable()),
			slog.String("required_by", required), slog.String("note", st.Note())),
	); aerr != nil {
		return aerr
	}
	return err
}

// earlySandbox is the sandbox of a request worked out while its decision
// is made: the spec for the policy's sandbox without any rule's override,
// and its path rules, prepared in the background. Most decisions leave
// the sandbox as it is; the run then starts with both ready.
type earlySandbox struct {
	done chan struct{}
	ws   string     // the workspace assumed
	base runSandbox // requestSandbox of no command: what the guess assumed
	sb   runSandbox
	err  error
	pre  *sandbox.Prepared
	// repos is the check of the repositories the run leaves in the
	// workspace, started at once.
	repos *sandbox.RepoWatch
}

// prepareSandbox starts working out the request's sandbox in the
// background.
func (g *Gate) prepareSandbox(req Request, opts RunOptions, status sandbox.Status) *earlySandbox {
	ws := Workspace(req.Cwd)
	e := &earlySandbox{done: make(chan struct{}), ws: ws, repos: sandbox.WatchRepos(ws, g.reposListing(ws))}
	go func() {
		defer close(e.done)
		e.base = g.requestSandbox(Decision{})
		e.sb, e.err = g.sandboxSpec(req, Decision{Workspace: e.ws}, opts)
		if e.err == nil {
			e.sb.spec.Watch = g.watches(e.ws)
			e.pre = sandbox.Prepare(e.sb.spec, status)
		}
	}()
	return e
}

// spec returns the sandbox of the decided request and the rules prepared
// for it: the early ones when the decision's sandbox is the one assumed,
// else a spec worked out anew (with no prepared rules).
func (e *earlySandbox) spec(g *Gate, req Request, dec Decision, opts RunOptions) (runSandbox, *sandbox.Prepared, error) {
	if e != nil {
		<-e.done
		// The early spec assumed no command writes git's configuration or
		// checks out the work tree,
		// nor names a program inside a version manager's root.
		if e.err == nil && dec.Workspace == e.ws && !writesGitConfig(dec) && !changesGitWorktree(dec) &&
			toolchainPrograms(g.cfg.UserHome, dec) == nil && len(dec.Reach) == 0 && dec.Network == nil && reflect.DeepEqual(g.requestSandbox(dec), e.base) {
			return e.sb, e.pre, nil
		}
	}
	sb, err := g.sandboxSpec(req, dec, opts)
	return sb, nil, err
}

// reposFor returns the repository check started for the workspace ws, or
// starts one.
func (e *earlySandbox) reposFor(g *Gate, ws string) *sandbox.RepoWatch {
	if e != nil && e.repos != nil && e.ws == ws {
		return e.repos
	}
	return sandbox.WatchRepos(ws, g.reposListing(ws))
}

// reposListing is the file where the repository check keeps the listing
// of the workspace ws between runs, in mnemos's state, which no command
// it runs can reach.
func (g *Gate) reposListing(ws string) string {
	if g.cfg.Paths.StateDir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(ws))
	return filepath.Join(g.cfg.Paths.StateDir, "repos", hex.EncodeToString(sum[:16]))
}

// keptReadOnly are the paths the view kept read-only for the run: the
// later paths that existed when it started.
func keptReadOnly(spec sandbox.Spec, applied sandbox.Applied) []string {
	if !applied.View {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(spec.Later), func(p string) bool { return slices.Contains(applied.Absent, p) })
}

// movedAside lists what the repository check moved aside, and where.
func movedAside(repos []sandbox.DefusedRepo) [][2]string {
	var out [][2]string
	for _, r := range repos {
		out = append(out, r.Moved...)
	}
	return out
}

// close discards the prepared rules that were not used.
func (e *earlySandbox) close() {
	if e == nil {
		return
	}
	go func() {
		<-e.done
		e.pre.Close()
	}()
}

// hintLines keeps a hint to two lines; the audit event lists every
// refusal.
func hintLines(refused []string) string {
	if len(refused) > 2 {
		refused = []string{refused[0], fmt.Sprintf("%s (and %d more in the audit log)", refused[1], len(refused)-2)}
	}
	return strings.Join(refused, "\n")
}

// runSandbox is the sandbox of one run and where its settings came from.
type runSandbox struct {
	spec sandbox.Spec
	// cfg is the request's sandbox from the policy's sandbox section and
	// the matching rules' overrides, tightened by Config.Extra, with "~/"
	// expanded.
	cfg policy.SandboxConfig
	// requiredBy is what demands an enforced sandbox: "--require-sandbox"
	// or a policy's source; "" when nothing does.
	requiredBy string
	// limitsTCP is true when a policy limits TCP: network: false whatever
	// the decision, or ports with network. (Bind lists grant: binding is
	// refused by default, best effort on kernels without TCP rules.)
	limitsTCP bool
}

// startedAttrs describe the sandbox in run.started: what the kernel
// offers, what the spec grants, and what the policy added (its paths, TCP
// ports and bind ports, listed only when it set them).
// startedSandbox is run.started's account of the sandbox: none, for an
// escalation a person approved to run outside it.
func startedSandbox(sb runSandbox, st sandbox.Status, dec Decision) []any {
	if escalationAllowed(dec) {
		return []any{slog.Bool("unconfined", true), slog.String("approval", dec.Ticket), slog.String("outside", outsideSummary(dec.Reach))}
	}
	return sb.startedAttrs(st)
}

func (sb runSandbox) startedAttrs(st sandbox.Status) []any {
	s := sb.spec
	attrs := []any{slog.Int("landlock_abi", st.ABI), slog.Bool("enforceable", st.Enforceable()),
		slog.Bool("network", s.Network), slog.Any("write", s.ReadWrite)}
	for _, l := range []struct {
		key  string
		list []string
	}{{"policy_read", sb.cfg.Read}, {"policy_write", sb.cfg.Write}} {
		if len(l.list) > 0 {
			attrs = append(attrs, slog.Any(l.key, l.list))
		}
	}
	for _, l := range []struct {
		key  string
		list []uint16
	}{{"ports", s.ConnectPorts}, {"bind", s.BindPorts}} {
		if len(l.list) > 0 {
			attrs = append(attrs, slog.Any(l.key, l.list))
		}
	}
	promises := make([]any, 0, 7)
	for _, p := range st.Promises() {
		promises = append(promises, slog.Bool(p.Key, p.Holds))
	}
	return append(attrs, slog.Bool("required", s.Required), slog.String("note", st.Note()), slog.Group("promises", promises...))
}

// sandboxSpec builds the Landlock ruleset for a run from the decision and
// the policy: read-write on the workspace and temp directories, the
// policy's caches (or the sandbox's default ones) and its write paths, read on its read paths, nothing on
// mnemos's own files or the user's secrets, and TCP when a command of the
// request was allowed network:http or the policy says network: true, to
// the policy's ports only.
//
// A policy path that is the home directory, holds it, or holds or lies
// inside mnemos's files or a secret is refused (SandboxError, exit 78),
// not narrowed: the command would otherwise run with less than the policy
// promised it, or fail in ways nobody would understand.
func (g *Gate) sandboxSpec(req Request, dec Decision, opts RunOptions) (runSandbox, error) {
	sb := g.requestSandbox(dec)
	if opts.RequireSandbox {
		sb.requiredBy = "--require-sandbox"
	}
	var caches []sandbox.Cache
	if sb.cfg.CachesSet {
		// The policy's list replaces the sandbox's defaults; empty, none.
		caches = []sandbox.Cache{}
		for _, c := range sb.cfg.Caches {
			caches = append(caches, sandbox.Cache{Path: c.Path, Write: c.Write})
		}
	}
	for _, p := range slices.Concat(sb.cfg.Read, sb.cfg.Write, cachePaths(caches)) {
		if !filepath.IsAbs(p) {
			return sb, &SandboxError{
				Err:  fmt.Errorf("the policy's sandbox path %q is not absolute", p),
				Hint: "write sandbox paths in the policy as absolute paths or ~/ paths, and set HOME for ~/"}
		}
	}
	tmp := []string{os.TempDir()}
	if tmp[0] != "/tmp" {
		tmp = append(tmp, "/tmp")
	}
	network := sb.cfg.HasNetwork()
	// The environment the command inherits, read once.
	var env []string
	if g.cfg.Environ != nil {
		env = g.cfg.Environ()
	}
	o := sandbox.Options{
		Workspace: dec.Workspace, Home: g.cfg.UserHome, TempDirs: tmp,
		ExtraRead: sb.cfg.Read, ExtraWrite: sb.cfg.Write, Caches: caches,
		Protected: g.cfg.Paths.Protected(), Secrets: sandbox.DefaultSecrets(g.cfg.UserHome),
		Network: network, Required: sb.requiredBy != "", RequireTCP: sb.limitsTCP,
		PathDirs: filepath.SplitList(envValue(env, "PATH")), GitConfig: writesGitConfig(dec), GitWorktree: changesGitWorktree(dec),
		Sockets: sb.cfg.Sockets, MaskSockets: sessionSockets(func(k string) string { return envValue(env, k) }), Terminals: ownTerminals(),
	}
	o.Programs = toolchainPrograms(g.cfg.UserHome, dec)
	if dec.Outcome == policy.Allow {
		// Landlock grants what each path resolves to now (reachlinks.go).
		if err := reachMoved(dec); err != nil {
			return sb, err
		}
		reachOptions(&o, dec)
	}
	if network {
		o.Ports, o.Bind = sb.cfg.Ports, sb.cfg.Bind
		if len(o.Ports) == 0 && dec.Network != nil && !g.networkBeyondFetch(dec) {
			// The network is there only to fetch from registries and
			// remotes: their ports, no other.
			o.Ports = dec.Network.Ports
		}
	}
	spec, err := sandbox.DefaultSpec(o)
	if err != nil {
		se := &SandboxError{Err: err}
		var ge *sandbox.GrantError
		if errors.As(err, &ge) {
			se.Hint = grantHint(ge)
		}
		return sb, se
	}
	sb.spec = spec
	return sb, nil
}

// toolchainPrograms are the programs the decision's commands name by an
// absolute path inside a version manager's root under home, and the
// directories inside one that a PATH the script gives its commands
// names (export PATH="$HOME/.pyenv/shims:$PATH"): the sandbox grants
// that root as it does when the inherited PATH reaches into it.
func toolchainPrograms(home string, dec Decision) []string {
	var out []string
	cmds := make([]shellparse.Command, len(dec.Commands))
	for i, c := range dec.Commands {
		cmds[i] = c.Command
	}
	for _, d := range scriptPathDirs(cmds) {
		if _, ok := sandbox.ToolchainOf(home, d); ok {
			out = append(out, d)
		}
	}
	for _, c := range dec.Commands {
		if c.Command.Dynamic || len(c.Command.Argv) == 0 || c.Command.Argv[0].Dynamic {
			continue
		}
		if p := c.Command.Argv[0].Value; filepath.IsAbs(p) {
			if _, ok := sandbox.ToolchainOf(home, p); ok {
				out = append(out, filepath.Clean(p))
			}
		}
	}
	return out
}

func cachePaths(cs []sandbox.Cache) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Path
	}
	return out
}

// grantHint says what to change when DefaultSpec refuses a grant: the
// policy's path, the working directory, or where mnemos, the home
// directory or TMPDIR live. "" leaves the hint to the caller.
func grantHint(ge *sandbox.GrantError) string {
	const never = "the sandbox never grants the home directory whole, mnemos's own files or your secrets, nor a directory that holds them"
	switch {
	case ge.Policy:
		return "remove " + ge.Path + " from the policy's sandbox section: " + never
	case ge.What == "workspace" && ge.Reaches == sandbox.ReachesHome:
		return "run mnemos from a project directory: the sandbox never grants your whole home directory"
	case ge.What == "workspace":
		return "run mnemos from a project directory that neither holds nor lies inside " + ge.Conflict + ": " + never
	case ge.What == "temp directory" && ge.Reaches == sandbox.ReachesProtected && ge.Path == "/tmp":
		return "keep mnemos's configuration and state out of /tmp (set MNEMOS_HOME or --home to a directory such as ~/.config/mnemos): every sandboxed command may write /tmp"
	case ge.What == "temp directory" && ge.Path == "/tmp":
		return "keep your home directory out of /tmp (" + ge.Conflict + " is under it): every sandboxed command may write /tmp"
	case ge.What == "temp directory":
		return "set TMPDIR to a directory that neither holds nor lies inside " + ge.Conflict + ", such as /tmp: every sandboxed command may write TMPDIR"
	}
	return ""
}

// requestSandbox combines the sandbox of the request from the configured
// policy (policy.SandboxFor over the results of its commands) and, when
// set, Config.Extra, which may only tighten it: Extra's required and
// network: false count, its caches narrow the configured ones
// (policy.NarrowCaches), its ports and bind narrow the configured lists
// (no common port: no network; no common bind port: nothing to bind, as
// when the configured policy lists none), and its read and write paths
// and network: true are ignored. Paths keep no "~/".
func (g *Gate) requestSandbox(dec Decision) runSandbox {
	var results []policy.Result
	for _, c := range dec.Commands {
		if c.Policy != nil {
			results = append(results, *c.Policy)
		}
	}
	main, extra := g.cfg.Policy, g.cfg.Extra
	own := results
	if extra != nil {
		// A command's result comes from one policy or the other; a
		// rule's override must count only in its own policy.
		own = withoutOverridesOf(extra, main, results)
	}
	cfg := main.SandboxFor(own)
	// A policy limits TCP on its own when, even for a request decided to
	// need the network, it turns the network off.
	off := !main.SandboxFor(withNetwork(own)).HasNetwork()
	sb := runSandbox{}
	if cfg.Required {
		sb.requiredBy = main.Source
	}
	if extra != nil {
		er := withNetwork(withoutOverridesOf(main, extra, results))
		ec := extra.SandboxFor(er)
		if ec.Required && sb.requiredBy == "" {
			sb.requiredBy = extra.Source
		}
		cfg.Required = cfg.Required || ec.Required
		var closedP bool
		cfg.Ports, closedP = narrowPorts(cfg.Ports, ec.Ports)
		if len(ec.Bind) > 0 {
			// Bind lists what may be bound: an empty one binds nothing.
			cfg.Bind = slices.DeleteFunc(slices.Clone(cfg.Bind), func(p uint16) bool { return !slices.Contains(ec.Bind, p) })
		}
		if ec.CachesSet {
			base := cfg.Caches
			if !cfg.CachesSet {
				base = policy.DefaultCaches()
			}
			cfg.Caches, cfg.CachesSet = policy.NarrowCaches(base, ec.Caches), true
		}
		if !ec.HasNetwork() || closedP {
			f := false
			cfg.Network, off = &f, true
		}
	}
	sb.cfg = cfg.ExpandHome(g.cfg.UserHome)
	sb.limitsTCP = off || sb.cfg.HasNetwork() && len(sb.cfg.Ports) > 0
	return sb
}

// withoutOverridesOf returns results without the sandbox overrides that
// come from other's files and not from own's: both a single-file policy
// and Config.Extra tag their rules' overrides with the same (empty) layer.
func withoutOverridesOf(other, own *policy.Policy, results []policy.Result) []policy.Result {
	files := func(p *policy.Policy) map[string]bool {
		m := map[string]bool{p.Source: true}
		for _, l := range p.Layers() {
			m[l.Source] = true
		}
		return m
	}
	theirs, ours := files(other), files(own)
	out := make([]policy.Result, len(results))
	for i, r := range results {
		r.Sandbox = slices.DeleteFunc(slices.Clone(r.Sandbox), func(o policy.SandboxOverride) bool {
			f := o.Config.Pos.File
			return theirs[f] && !ours[f]
		})
		out[i] = r
	}
	return out
}

// withNetwork adds a command that needs the network to results, so that
// SandboxFor says network false only when a policy turns it off.
func withNetwork(results []policy.Result) []policy.Result {
	net := policy.Result{Accesses: []policy.AccessResult{{Access: classify.Access{Capability: classify.NetworkHTTP}}}}
	return append(slices.Clone(results), net)
}

// narrowPorts intersects two port allow-lists, where an empty list is no
// limit. closed is true when both limit and share no port.
func narrowPorts(a, b []uint16) (out []uint16, closed bool) {
	switch {
	case len(b) == 0:
		return a, false
	case len(a) == 0:
		return slices.Clone(b), false
	}
	for _, p := range a {
		if slices.Contains(b, p) {
			out = append(out, p)
		}
	}
	return out, len(out) == 0
}

// unenforceableHint says what to change when a policy, rather than
// --require-sandbox, asked for what this kernel cannot enforce.
func (sb runSandbox) unenforceableHint(st sandbox.Status) string {
	switch {
	case st.ABI >= 1 && sb.limitsTCP:
		return fmt.Sprintf("the policy limits TCP (sandbox network: false, ports or bind), which needs Landlock ABI 4 and this kernel has %d; remove those limits from the policy to run with TCP unrestricted", st.ABI)
	case sb.requiredBy == "" || sb.requiredBy == "--require-sandbox":
		return ""
	}
	return "the policy " + sb.requiredBy + " sets sandbox required: true; run where Landlock is available, or remove it from the policy to accept an unconfined run"
}

// maxNeeds bounds what a hint looks at.
const maxNeeds = 64

// namedNeeds lists what the request's commands named, for the hint after
// a failure: the paths the decision classified (read or write; for a
// removal or a move, the directory is written), the files
// they redirect to or from, path-like arguments (one that exists is read,
// one that does not is written), and the TCP ports of the network
// addresses in their arguments. Relative paths are taken from req.Cwd.
func (g *Gate) namedNeeds(req Request, dec Decision) []sandbox.Need {
	var needs []sandbox.Need
	abs := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "~/"); ok && g.cfg.UserHome != "" {
			return filepath.Join(g.cfg.UserHome, rest)
		}
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(req.Cwd, p)
	}
	for _, c := range dec.Commands {
		if len(needs) >= maxNeeds {
			break
		}
		classified := map[string]bool{}
		if c.Policy != nil {
			// Removing or moving a file changes its directory.
			inDir := c.Policy.Verb == "delete" || c.Policy.Verb == "move"
			for _, a := range c.Policy.Accesses {
				if a.Dynamic || a.Glob || !filepath.IsAbs(a.Target) {
					continue
				}
				classified[a.Target] = true
				switch {
				case a.Capability == classify.FSRead:
					needs = append(needs, sandbox.Need{Path: a.Target})
				case a.Capability == classify.FSWrite && inDir:
					needs = append(needs, sandbox.Need{Path: filepath.Dir(a.Target), Write: true})
				case a.Capability == classify.FSWrite:
					needs = append(needs, sandbox.Need{Path: a.Target, Write: true})
				}
			}
		}
		for _, r := range c.Command.Redirects {
			if r.Target.Dynamic || r.Target.Value == "" {
				continue
			}
			switch {
			case r.Writes():
				needs = append(needs, sandbox.Need{Path: abs(r.Target.Value), Write: true})
			case r.Op == "<":
				needs = append(needs, sandbox.Need{Path: abs(r.Target.Value)})
			}
		}
		for _, n := range argNeeds(c.Command, abs) {
			// The decision said how the command uses a path it classified.
			if !classified[n.Path] {
				needs = append(needs, n)
			}
		}
	}
	if len(needs) > maxNeeds {
		needs = needs[:maxNeeds]
	}
	return needs
}

// argNeeds reads a command's arguments for what the sandbox may refuse:
// path-like words (also as the value of --name=value), URLs and
// host:port words, the host of ssh, scp, sftp, git and rsync (port 22,
// or the -p or -P given), and nc or telnet's HOST PORT.
func argNeeds(c shellparse.Command, abs func(string) string) []sandbox.Need {
	if len(c.Argv) < 2 {
		return nil
	}
	name, args := c.Name(), c.Argv[1:]
	needs := bindNeeds(name, args)
	sshPort := uint16(22)
	for i, w := range args {
		if w.Dynamic {
			continue
		}
		v := w.Value
		if i > 0 && !args[i-1].Dynamic {
			if o := args[i-1].Value; o == "-p" && name == "ssh" || o == "-P" && (name == "scp" || name == "sftp") {
				if p, ok := tcpPort(v); ok {
					sshPort = p
				}
			}
		}
		if strings.HasPrefix(v, "-") {
			k, val, ok := strings.Cut(v, "=")
			if !ok || !strings.HasPrefix(k, "--") || listenOption(k) {
				continue
			}
			v = val
		}
		if i > 0 && !args[i-1].Dynamic && listenOption(args[i-1].Value) {
			continue // a port to listen on (bindNeeds)
		}
		if n, ok := urlNeed(v); ok {
			needs = append(needs, n)
			continue
		}
		if h, p, ok := hostPort(v); ok {
			needs = append(needs, sandbox.Need{Host: h, Port: p})
			continue
		}
		switch name {
		case "nc", "ncat", "netcat", "telnet":
			if i+1 < len(args) && hostLike(v) {
				if p, ok := tcpPort(args[i+1].Value); ok && !args[i+1].Dynamic {
					needs = append(needs, sandbox.Need{Host: v, Port: p})
					continue
				}
			}
		case "ssh", "scp", "sftp", "git", "rsync":
			// [user@]host:path, or ssh's and sftp's [user@]host.
			h, _, remote := strings.Cut(v, ":")
			if at := strings.LastIndex(h, "@"); at >= 0 {
				h = h[at+1:]
			}
			// git names revisions HEAD:path and messages "fix: ...": an
			// scp-like remote there has a user or a dotted host.
			gitRemote := name != "git" || (strings.Contains(v, "@") || strings.Contains(h, ".")) && !strings.ContainsAny(v, " \t\n")
			if hostLike(h) && gitRemote && !strings.Contains(h, "/") && (remote || (name == "ssh" || name == "sftp") && strings.Contains(h, ".")) {
				needs = append(needs, sandbox.Need{Host: h, Port: sshPort})
				continue
			}
		}
		if pathLike(v) {
			p := abs(v)
			_, err := os.Lstat(p)
			needs = append(needs, sandbox.Need{Path: p, Write: err != nil})
		}
	}
	return needs
}

// listenOption reports a long option whose value is a port (or
// host:port) to listen on.
func listenOption(o string) bool {
	switch o {
	case "--port", "--listen", "--bind", "--http-port", "--listen-port", "--server-port":
		return true
	}
	return false
}

// bindNeeds reads the TCP ports a command says it listens on: the value of
// --port, --listen, --bind and the like, python -m http.server's port (8000
// by default), php -S's address, and nc -l's port.
func bindNeeds(name string, args []shellparse.Word) []sandbox.Need {
	var needs []sandbox.Need
	add := func(v string) {
		if _, p, ok := hostPort(v); ok {
			needs = append(needs, sandbox.Need{Port: p, Bind: true})
		} else if p, ok := tcpPort(v); ok && p != 0 {
			needs = append(needs, sandbox.Need{Port: p, Bind: true})
		}
	}
	listening := false
	for i, w := range args {
		if w.Dynamic {
			continue
		}
		v := w.Value
		if k, val, ok := strings.Cut(v, "="); ok && listenOption(k) {
			add(val)
			continue
		}
		next := ""
		if i+1 < len(args) && !args[i+1].Dynamic {
			next = args[i+1].Value
		}
		switch {
		case listenOption(v):
			add(next)
		case (name == "php" || strings.HasPrefix(name, "php")) && v == "-S":
			add(next)
		case strings.HasPrefix(name, "python") && v == "-m" && next == "http.server":
			port := "8000"
			for _, a := range args[i+2:] {
				if !a.Dynamic && !strings.HasPrefix(a.Value, "-") {
					port = a.Value
					break
				}
			}
			add(port)
		case (name == "nc" || name == "ncat" || name == "netcat") && strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.Contains(v, "l"):
			listening = true
			if strings.HasSuffix(v, "p") {
				add(next)
			}
		case listening && (v == "-p"):
			add(next)
		case listening && !strings.HasPrefix(v, "-"):
			add(v)
		}
	}
	return needs
}

// pathLike reports a word that names a file: it has a slash, and nothing
// that suggests code or an address.
func pathLike(v string) bool {
	if !strings.Contains(v, "/") || len(v) > 4096 || strings.ContainsAny(v, "\n\t;(){}'\"$`|&<>*?") || strings.Contains(v, "://") {
		return false
	}
	if before, _, ok := strings.Cut(v, ":"); ok && !strings.Contains(before, "/") {
		return false // host:path
	}
	return true
}

// urlNeed is the host and TCP port of a URL with a scheme whose default
// port is known, or that names its port.
func urlNeed(v string) (sandbox.Need, bool) {
	if !strings.Contains(v, "://") {
		return sandbox.Need{}, false
	}
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return sandbox.Need{}, false
	}
	if p := u.Port(); p != "" {
		port, ok := tcpPort(p)
		return sandbox.Need{Host: u.Hostname(), Port: port}, ok
	}
	defaults := map[string]uint16{"http": 80, "https": 443, "ws": 80, "wss": 443, "ssh": 22, "git+ssh": 22, "ssh+git": 22, "git": 9418, "ftp": 21}
	port, ok := defaults[strings.ToLower(u.Scheme)]
	return sandbox.Need{Host: u.Hostname(), Port: port}, ok
}

// hostPort splits "host:port" or "[v6]:port" where host looks like a host
// name or address and port is a number.
func hostPort(v string) (string, uint16, bool) {
	i := strings.LastIndexByte(v, ':')
	if i <= 0 {
		return "", 0, false
	}
	h, p := v[:i], v[i+1:]
	port, ok := tcpPort(p)
	if !ok {
		return "", 0, false
	}
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
		return h, port, h != "" && strings.Trim(h, "0123456789abcdefABCDEF:.") == ""
	}
	return h, port, hostLike(h)
}

// hostLike reports a host name or IPv4 address: letters, digits, dots and
// hyphens, with a letter or a dot (so that "12" in "12:30" is not one).
func hostLike(h string) bool {
	if h == "" || len(h) > 253 || strings.HasPrefix(h, "-") {
		return false
	}
	letterOrDot := false
	for _, c := range h {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '.':
			letterOrDot = true
		case c >= '0' && c <= '9', c == '-':
		default:
			return false
		}
	}
	return letterOrDot
}

// tcpPort parses a TCP port number from 1 to 65535.
func tcpPort(s string) (uint16, bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 || s[0] == '+' {
		return 0, false
	}
	return uint16(n), true
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
	// Hint says what to change: a sandbox path the policy may not grant,
	// required: true or TCP limits an old kernel cannot enforce, a working
	// directory, TMPDIR or mnemos's own directory the sandbox may not
	// grant; "" when --require-sandbox caused the refusal.
	Hint string
}

func (e *SandboxError) Error() string {
	if errors.Is(e.Err, sandbox.ErrUnenforceable) {
		if e.Err != sandbox.ErrUnenforceable {
			// Start says what it could not enforce.
			return e.Err.Error()
		}
		return "the sandbox cannot be enforced here: " + e.Status.Note()
	}
	return "cannot build the sandbox: " + e.Err.Error()
}

func (e *SandboxError) Unwrap() error { return e.Err }
