package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/approvals/pgstore"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
)

// Exit codes (design.md).
const (
	exitOK       = 0
	exitApproval = 75
	exitDenied   = 77
	exitUsage    = 64
	exitConfig   = 78
	exitFailure  = 1
)

type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// Globals are the flags every subcommand takes; they come first.
type Globals struct {
	Home      string `help:"Keep configuration and state under this directory." env:"MNEMOS_HOME" placeholder:"DIR"`
	PolicyArg string `name:"policy" help:"An extra policy file; it can only make decisions stricter than the configured policy." env:"MNEMOS_POLICY" placeholder:"FILE"`
	Channel   string `help:"Channel the request comes through (default cli)." env:"MNEMOS_CHANNEL"`
	Sender    string `help:"Whom the agent acts for (default: the Unix user)." env:"MNEMOS_SENDER"`
	Session   string `help:"The agent's session id, for session-scoped grants." env:"MNEMOS_SESSION"`
	Level     string `help:"Lower the autonomy level for this call (readonly, supervised, full); it can never raise the policy's level." env:"MNEMOS_LEVEL"`
	Verbose   bool   `short:"v" help:"Print diagnostics on stderr."`
}

// CLI is the command line.
type CLI struct {
	Globals
	VersionFlag versionFlag `name:"version" help:"Print the version and exit."`

	Init       InitCmd       `cmd:"" help:"Write the commented default policy file."`
	Run        RunCmd        `cmd:"" help:"Decide, then run an allowed command: mnemos run -- CMD [ARG...]."`
	Policy     PolicyCmd     `cmd:"" help:"Check commands against the policy; show the registry and table."`
	Approvals  ApprovalsCmd  `cmd:"" help:"List, approve and deny pending requests."`
	Grants     GrantsCmd     `cmd:"" help:"List and revoke standing grants."`
	Extensions ExtensionsCmd `cmd:"" help:"Admit an extension's manifest; list and revoke extensions."`
	Audit      AuditCmd      `cmd:"" help:"Show and verify the audit log."`
	Sandbox    SandboxCmd    `cmd:"" help:"Show what the kernel's sandbox can enforce."`
	Changes    ChangesCmd    `cmd:"" help:"Show what runs changed in the workspace: mnemos changes [RUN|--last|--session ID] [--diff]."`
	Undo       UndoCmd       `cmd:"" help:"Put back what a run changed: mnemos undo RUN|--last|--session ID [--dry-run] [--force]."`
	Hook       HookCmd       `cmd:"" help:"Put mnemos in front of an agent's tools: mnemos hook install AGENT wires it, mnemos hook doctor proves it works; the agent runs mnemos hook AGENT."`
	Install    InstallCmd    `cmd:"" help:"Wire mnemos into an agent's settings (same as mnemos hook install): claude-code, codex, gemini, cursor, copilot or amp."`
	Uninstall  UninstallCmd  `cmd:"" help:"Take mnemos out of an agent's settings (same as mnemos hook uninstall)."`
	Status     StatusCmd     `cmd:"" help:"One screen: the level and where it comes from, the policy files, the sandbox, the agents wired, pending requests, the last denials, grants, serve. Runs nothing (mnemos doctor proves the hooks work)."`
	Sh         ShCmd         `cmd:"" passthrough:"" help:"Run a script as sh -c does, behind the gate: mnemos sh -c SCRIPT [ARG...] (mnemos-sh, a link to mnemos, is the same)."`
	Channels   ChannelsCmd   `cmd:"" help:"Pair your account on a channel's bot with your identity."`
	Serve      ServeCmd      `cmd:"" help:"Serve the approvals page on a loopback address, run the channels' bots and retries, sweep expired requests."`
	State      StateCmd      `cmd:"" help:"Migrate the shared PostgreSQL state's schema."`
	Doctor     DoctorCmd     `cmd:"" help:"Same as mnemos hook doctor: is every agent found wired to this mnemos, does it block what it should, and do the policy, state, audit log and sandbox work. Exit 1 when protection is not active."`
	Version    VersionCmd    `cmd:"" help:"Print the version, the commit it was built from and the Go release."`
}

// runOnly and checkOnly are the grammars of the two commands every agent
// command goes through. kong builds its model by reflection at every
// start: the whole CLI takes about 0.6 ms, one command a fraction of it.
// They never print help or usage: those come from the whole CLI (see
// grammarFor), so their commands need no help text of their own.
type runOnly struct {
	Globals
	Run RunCmd `cmd:""`
}

type checkOnly struct {
	Globals
	Policy struct {
		Check CheckCmd `cmd:""`
	} `cmd:""`
}

// grammarFor picks the grammar args are parsed with and the global flags
// it fills: a single command's when args start with run or policy check
// and ask for no help before "--", else the whole CLI.
func grammarFor(args []string) (grammar any, globals *Globals) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "--help" || strings.HasPrefix(a, "--help=") {
			return wholeCLI()
		}
	}
	switch {
	case len(args) > 0 && args[0] == "run":
		g := &runOnly{}
		return g, &g.Globals
	case len(args) > 1 && args[0] == "policy" && args[1] == "check":
		g := &checkOnly{}
		return g, &g.Globals
	}
	return wholeCLI()
}

func wholeCLI() (any, *Globals) {
	c := &CLI{}
	return c, &c.Globals
}

// version, when set at build time with -ldflags "-X main.version=...",
// replaces the module version of the build information (version.go).
var version = "dev"

// app holds what subcommands need; it is bound into kong.
type app struct {
	ctx    context.Context
	cli    *Globals
	io     stdio
	getenv func(string) string
	// environ is the environment the gated command inherits.
	environ func() []string
	log     *slog.Logger
	now     func() time.Time

	g *gate.Gate
	// onlyTightens names the command when it can only make things
	// stricter: files StrictModes refuses are then warnings (see trust).
	onlyTightens string
	// noShip keeps a command that only reads the shared state (audit
	// verify --fleet) from shipping the audit log on its way out.
	noShip bool
	// tolerant names the command when it reads nothing from the policy
	// and can only show the state or make things stricter: a policy file
	// that does not load is then a warning (see policies).
	tolerant string
	// located are the paths a.paths found, once a process; settled is
	// what moving the secrets into their directory did.
	located *gate.Paths
	settled gate.Settled
}

// exitError carries an exit code and, optionally, a message and hint.
type exitError struct {
	code      int
	msg, hint string
	quiet     bool // already reported
}

func (e *exitError) Error() string { return e.msg }

func quietExit(code int) error { return &exitError{code: code, quiet: true} }

// Main runs mnemos with args and returns the exit code.
func Main(ctx context.Context, args []string, s stdio, getenv func(string) string) int {
	grammar, globals := grammarFor(args)
	code, done := func() (code int, done bool) {
		defer func() {
			if r := recover(); r != nil {
				if k, ok := r.(kongExit); ok {
					code, done = int(k), true
					return
				}
				panic(r)
			}
		}()
		kctx, err := parse(grammar, args, s, getenv)
		if err != nil {
			if _, whole := grammar.(*CLI); !whole {
				// Usage errors read as the whole CLI's.
				grammar, globals = wholeCLI()
				kctx, err = parse(grammar, args, s, getenv)
			}
		}
		if err != nil {
			fmt.Fprintf(s.err, "mnemos: error: %v\n", err)
			fmt.Fprintf(s.err, "mnemos: hint: run `%s --help` for usage\n", usagePath(err))
			return exitUsage, true
		}
		level := slog.LevelWarn
		if globals.Verbose {
			level = slog.LevelDebug
		}
		a := &app{ctx: ctx, cli: globals, io: s, getenv: getenv, environ: os.Environ, now: time.Now,
			log: slog.New(slog.NewTextHandler(s.err, &slog.HandlerOptions{Level: level}))}
		defer a.close()
		kctx.Bind(a)
		return exitCodeOf(s.err, kctx.Run()), true
	}()
	if done {
		return code
	}
	return exitFailure
}

// usagePath names the command a usage error is about ("mnemos approvals
// approve"), so the hint points at the help that describes its flags.
func usagePath(err error) string {
	var pe *kong.ParseError
	if errors.As(err, &pe) && pe.Context != nil {
		for i := len(pe.Context.Path) - 1; i >= 0; i-- {
			if n := pe.Context.Path[i].Command; n != nil {
				return n.FullPath()
			}
		}
	}
	return "mnemos"
}

// parse builds a kong parser for grammar and parses args with it.
func parse(grammar any, args []string, s stdio, getenv func(string) string) (*kong.Context, error) {
	parser, err := kong.New(grammar,
		kong.Name("mnemos"),
		kong.Description("mnemos stands between AI coding agents and the shell: it parses each command, decides allow, ask or deny, parks what needs a person as a pending approval, and records every step in a hash-chained audit log.\n\nExit codes: the command's own status (run), 0 allow (check), 75 approval required, 77 denied, 64 usage error, 78 configuration error."),
		kong.UsageOnError(),
		kong.Writers(s.out, s.err),
		kong.Exit(func(code int) { panic(kongExit(code)) }),
		kong.Resolvers(envResolver(getenv)),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	)
	if err != nil {
		return nil, err
	}
	return parser.Parse(args)
}

type kongExit int

// envResolver lets kong read flag environment variables through getenv
// (kong's own env lookup reads the process environment).
func envResolver(getenv func(string) string) kong.Resolver {
	return kong.ResolverFunc(func(_ *kong.Context, _ *kong.Path, flag *kong.Flag) (any, error) {
		for _, e := range flag.Envs {
			if v := getenv(e); v != "" {
				return v, nil
			}
		}
		return nil, nil
	})
}

// exitCodeOf maps an error to an exit code in one place and prints it.
func exitCodeOf(w io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var xe *exitError
	if errors.As(err, &xe) {
		if !xe.quiet {
			printErr(w, xe.msg, xe.hint)
		}
		return xe.code
	}
	var pe *policy.Error
	if errors.As(err, &pe) {
		lint := "mnemos policy lint"
		if pe.File != "" {
			lint += " " + pe.File
		}
		printErr(w, pe.Error(), "fix the policy file; `"+lint+"` lists every problem in it")
		return exitConfig
	}
	var ue *gate.UnsafeError
	if errors.As(err, &ue) {
		printUnsafe(w, ue)
		return exitConfig
	}
	var se *gate.StateError
	if errors.As(err, &se) {
		// The innermost says where: a caller may wrap the store's own.
		for inner := (*gate.StateError)(nil); errors.As(se.Err, &inner); {
			se = inner
		}
		hint := "check that the state directory is readable and not locked by another program"
		var sch *pgstore.SchemaError
		switch {
		case errors.As(err, &sch):
			hint = sch.Hint()
		case errors.Is(err, gate.ErrLogHostChanged):
			hint = "nothing was shipped; unset MNEMOS_HOST_ID or set it back to the id this log ships as"
		case errors.Is(err, pgstore.ErrChainDiverged):
			hint = "nothing was shipped; give each audit log its own host id (MNEMOS_HOST_ID), and keep this log: `mnemos audit verify` checks it"
		case strings.HasPrefix(se.Path, "postgres"):
			hint = "nothing was allowed that needs the shared state: check that the PostgreSQL server is up and the connection string (state: in your policy) is right"
		}
		printErr(w, se.Error(), hint)
		return exitConfig
	}
	var ae *auditError
	if errors.As(err, &ae) {
		hint := "nothing was run; check that the audit log's directory is writable"
		if errors.Is(err, audit.ErrIntegrity) {
			hint = "nothing was run: the audit log was changed after it was written; see `mnemos audit verify`, keep a copy, then move audit.jsonl and audit.jsonl.anchor aside to start a new log"
		}
		printErr(w, ae.Error(), hint)
		return exitConfig
	}
	switch {
	case errors.Is(err, approvals.ErrUnknownToken):
		printErr(w, err.Error(), "see pending requests with `mnemos approvals list`")
		return exitFailure
	case errors.Is(err, approvals.ErrAlreadyResolved), errors.Is(err, approvals.ErrExpired), errors.Is(err, approvals.ErrNotRequester):
		printErr(w, err.Error(), "")
		return exitFailure
	}
	printErr(w, err.Error(), "")
	return exitFailure
}

func printErr(w io.Writer, msg, hint string) {
	fmt.Fprintf(w, "mnemos: error: %s\n", msg)
	if hint != "" {
		fmt.Fprintf(w, "mnemos: hint: %s\n", hint)
	}
}

// auditError is an audit log that cannot be written.
type auditError struct{ err error }

func (e *auditError) Error() string { return "cannot write the audit log: " + e.err.Error() }
func (e *auditError) Unwrap() error { return e.err }

// recorder wraps the audit log so its failures map to exit 78.
type recorder struct{ l *audit.Log }

func (r recorder) Append(ctx context.Context, kind string, attrs ...slog.Attr) error {
	if err := r.l.Append(ctx, kind, attrs...); err != nil {
		return &auditError{err}
	}
	return nil
}

func (a *app) close() {
	a.shipOnClose()
	if a.g != nil {
		_ = a.g.Close()
	}
}

func (a *app) userHome() string {
	if h := a.getenv("HOME"); h != "" {
		return h
	}
	if u, err := user.Current(); err == nil {
		return u.HomeDir
	}
	return ""
}

// paths finds mnemos's directories, once a process, and makes sure its
// secrets live in their directory (gate.Settle): an older layout is moved
// there the first time, or, while an older mnemos serve holds it, used as
// it is with a warning.
func (a *app) paths() (gate.Paths, error) {
	if a.located != nil {
		return *a.located, nil
	}
	p, err := gate.Locate(a.cli.Home, a.getenv, a.userHome())
	if err != nil {
		return p, &exitError{code: exitConfig, msg: err.Error(), hint: "set MNEMOS_HOME or HOME"}
	}
	p, a.settled, err = gate.Settle(p)
	if err != nil {
		return p, &exitError{code: exitConfig, msg: "mnemos's secrets: " + err.Error(),
			hint: "mnemos keeps its audit key and state database in " + p.SecretsDir + " (a directory only you can read); see mnemos doctor"}
	}
	if a.settled.Postponed != "" {
		fmt.Fprintf(a.io.err, "mnemos: warning: %s\n", a.settled.Postponed)
	}
	a.located = &p
	return p, nil
}

// loadPolicy reads the configured policy: the user's file, or the built-in
// default when there is none. An unreadable or invalid file is an error.
// It checks no owner or mode: its callers do (checkModes,
// loadCheckedPolicy).
func loadPolicy(p gate.Paths) (*policy.Policy, error) {
	if _, err := os.Stat(p.PolicyFile); errors.Is(err, fs.ErrNotExist) {
		return policy.Default(), nil
	}
	data, err := os.ReadFile(p.PolicyFile)
	if err != nil {
		return policy.Load(p.PolicyFile)
	}
	// The rules' examples are checked once for each content of the file
	// and each build of mnemos, not at every start: a record in the state
	// directory (which confined commands cannot write) holds the digest
	// of the last file whose examples held.
	marker := filepath.Join(p.StateDir, "policy-examples-checked")
	key := examplesKey(data)
	if old, err := os.ReadFile(marker); err == nil && key != "" && string(old) == key {
		return policy.ParseExamplesChecked(p.PolicyFile, data)
	}
	pol, err := policy.Parse(p.PolicyFile, data)
	if err == nil && key != "" {
		if _, serr := os.Stat(p.StateDir); serr == nil {
			_ = os.WriteFile(marker, []byte(key), 0o600)
		}
	}
	return pol, err
}

// examplesKey identifies a policy's content checked by this build of
// mnemos: the digest of the file and of the binary's size and time; "" when
// the binary cannot be found.
func examplesKey(data []byte) string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00", exe, fi.Size(), fi.ModTime().UnixNano())
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// systemPolicyFile is where the administrator's policy is read from. It is
// a variable only so that tests can point it at a file they own; nothing
// in the product changes it.
var systemPolicyFile = policy.SystemFile

// probeSandbox reports what the kernel's Landlock enforces. It is a
// variable only so that tests can describe a kernel without Landlock;
// nothing in the product changes it.
var probeSandbox = sandbox.Probe

// watchJournal reports, from the sandbox's status, whether the kernel
// lets mnemos trap what a confined command changes, so that the journal
// keeps it (gate.Config.Watch). It is a variable only so that tests can
// describe a kernel that cannot.
var watchJournal = func(st sandbox.Status) bool { return st.Watch }

// loadLayers reads the policy stack: the system policy (honoured only when
// root owns it and nobody else can write it; otherwise a warning and it is
// left out), the user's policy (or the built-in default) and the project
// policy of the workspace of cwd. An invalid file in any layer is an error:
// nothing runs until it is fixed. Loosening attempts of lower layers are
// ignored by construction (policy.Merge); `mnemos policy lint` reports
// them. The caller has checked the files' owners and modes (checkModes).
func (a *app) loadLayers(paths gate.Paths, cwd string) (*policy.Policy, error) {
	user, err := loadPolicy(paths)
	if err != nil {
		return nil, err
	}
	system, err := policy.LoadSystem(systemPolicyFile)
	if errors.Is(err, policy.ErrUntrustedSystemPolicy) {
		fmt.Fprintf(a.io.err, "mnemos: warning: %v; it is not applied\n", err)
		system, err = nil, nil
	}
	if err != nil {
		return nil, layerError(err)
	}
	var project *policy.Policy
	if cwd != "" {
		if project, err = policy.LoadProject(policy.ProjectFile(gate.Workspace(cwd))); err != nil {
			return nil, layerError(err)
		}
	}
	merged, _ := policy.Merge(system, user, project)
	return merged, nil
}

// layerError makes a policy file that cannot be used a configuration
// error (exit 78).
func layerError(err error) error {
	var pe *policy.Error
	if errors.As(err, &pe) {
		return err
	}
	return &exitError{code: exitConfig, msg: err.Error(), hint: "fix or remove the file; nothing runs until then"}
}

// gate builds the gate once per process.
func (a *app) gate() (*gate.Gate, error) {
	if a.g != nil {
		return a.g, nil
	}
	paths, err := a.paths()
	if err != nil {
		return nil, err
	}
	cwd, _ := os.Getwd()
	if err := a.checkModes(paths, cwd); err != nil {
		return nil, err
	}
	pol, extra, err := a.policies(paths, cwd)
	if err != nil {
		return nil, err
	}
	if pg := pol.State.Postgres; pg != nil && pg.DSNFile != "" {
		// The connection string is configuration mnemos reads, with a
		// password in it: the guard and the sandbox keep it from gated
		// commands like the rest.
		paths.Elsewhere = append(paths.Elsewhere, pg.DSNPath(a.userHome()))
	}
	self := []string{"mnemos"}
	if exe, err := os.Executable(); err == nil {
		self = append(self, exe)
	}
	vars := map[string]string{}
	for _, k := range []string{"MNEMOS_HOME", "MNEMOS_POLICY", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "USER", "LOGNAME"} {
		if v := a.getenv(k); v != "" {
			vars[k] = v
		}
	}
	threshold, kind, warnings := gate.JudgeFromEnv(a.getenv, pol)
	for _, w := range warnings {
		fmt.Fprintf(a.io.err, "mnemos: warning: %s\n", w)
	}
	a.g = gate.New(gate.Config{
		Paths: paths, Policy: pol, Extra: extra, UserHome: a.userHome(), SelfNames: self, Vars: vars,
		Now: a.now, Rand: rand.Reader, Log: a.log,
		Audit: recorder{openAudit(paths)},
		Probe: probeSandbox, Watch: watchJournal, Getenv: a.getenv, Environ: a.environ,
		JudgeThreshold: threshold, JudgeKind: kind,
		VaglioLogFailed: func(err error) {
			fmt.Fprintf(a.io.err, "mnemos: warning: vaglio's log was not written (the decision stands): %s\n", oneLine(err.Error()))
		},
	})
	return a.g, nil
}

// openAudit opens the audit log with its key in the secrets directory.
func openAudit(p gate.Paths) *audit.Log {
	return audit.Open(p.AuditFile, audit.Options{Key: p.AuditKey})
}

// identity is the requester (or decider): flags, then environment, then
// cli and the Unix user.
func (a *app) identity() approvals.Identity {
	id := approvals.Identity{Channel: a.cli.Channel, Sender: a.cli.Sender}
	if id.Channel == "" {
		id.Channel = "cli"
	}
	if id.Sender == "" {
		if u, err := user.Current(); err == nil {
			id.Sender = u.Username
		} else if v := a.getenv("USER"); v != "" {
			id.Sender = v
		} else {
			id.Sender = "unknown"
		}
	}
	return id
}

// request builds a gate request for argv in the current directory.
func (a *app) request(argv []string, f RequestFlags) (gate.Request, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return gate.Request{}, fmt.Errorf("cannot read the working directory: %w", err)
	}
	id := a.identity()
	req := gate.Request{Argv: argv, Cwd: cwd, Channel: id.Channel, Sender: id.Sender, Session: a.cli.Session, Reason: f.Reason}
	if req.Context, err = fieldFlags("context", f.Context); err != nil {
		return req, err
	}
	if req.Scope, err = fieldFlags("scope", f.Scope); err != nil {
		return req, err
	}
	if a.cli.Level != "" {
		l, err := policy.ParseLevel(a.cli.Level)
		if err != nil {
			return req, &exitError{code: exitUsage, msg: err.Error()}
		}
		req.Level = &l
	}
	return req, nil
}

// oneLine is text that came from a request, a policy or the state, as a
// person is shown it: on one line, with what could break the line, restyle
// the terminal or reorder the text escaped (approvals.Printable).
func oneLine(s string) string { return approvals.Printable(s) }

// gatedRequest turns the words after "--" into a request and the gate that
// judges it; usage is the synopsis shown when no command is given.
func (a *app) gatedRequest(words []string, f RequestFlags, usage string) (*gate.Gate, gate.Request, error) {
	if len(words) > 0 && words[0] == "--" {
		words = words[1:]
	}
	if len(words) == 0 {
		return nil, gate.Request{}, &exitError{code: exitUsage, msg: "no command given", hint: usage}
	}
	g, err := a.gate()
	if err != nil {
		return nil, gate.Request{}, err
	}
	req, err := a.request(words, f)
	return g, req, err
}
