package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/journal"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/serve"
)

// ServeCmd is mnemos serve: the approvals web page, the Telegram bot,
// channel retries and the expiry sweep, in one long-lived process a user.
type ServeCmd struct {
	Addr        string `placeholder:"HOST:PORT" help:"Loopback address to listen on (default 127.0.0.1 and a port chosen for this user; :0 picks a free one)."`
	PrintURL    bool   `default:"true" negatable:"" help:"When stdout is a terminal, print a one-time link that signs a browser in to the page (--no-print-url to leave it out); mnemos approvals url prints another."`
	InstallUnit bool   `help:"Write a systemd user unit that runs mnemos serve, print what was written, and exit."`
}

// Run serves until SIGTERM or SIGINT, then drains.
func (c *ServeCmd) Run(a *app) error {
	if c.InstallUnit {
		return c.installUnit(a)
	}
	// What serve holds (the page's session key, the sign-in codes) is in
	// its memory only: keep that memory from the user's other processes.
	if err := serve.HideMemory(); err != nil {
		fmt.Fprintf(a.io.err, "mnemos: warning: cannot keep serve's memory from your other processes: %v\n", err)
	}
	g, err := a.gate()
	if err != nil {
		return err
	}
	st, err := g.Store(a.ctx)
	if err != nil {
		return err
	}
	paths := g.Config().Paths
	level := slog.LevelInfo
	if a.cli.Verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(a.io.err, &slog.HandlerOptions{Level: level}))
	cfg := serve.Config{
		StateDir: paths.StateDir,
		Socket:   paths.ServeSocket(),
		Addr:     c.Addr,
		Identity: a.identity(),
		Resolver: g,
		Registry: st,
		Audit:    g.Config().Audit,
		Log:      log,
		Now:      a.now,
		Watch:    []string{paths.DBFile, paths.DBFile + "-wal"},
	}
	// The runs an approval let through, with what they changed, and
	// their undo (journal.undo in the audit log).
	j, err := journal.Open(g.JournalOptions())
	if err != nil {
		return &exitError{code: exitConfig, msg: err.Error()}
	}
	defer j.Close()
	cfg.Journal = j
	if paths.SecretsDir == paths.StateDir {
		// An older serve still holds the older layout: no socket there.
		cfg.Socket = ""
	}
	if g.SharedState() {
		// The requests of this identity parked on every host, learnt of
		// by the database's notifications; this host's audit events
		// shipped to the central table as they come.
		cfg.Fleet, cfg.Watch = true, nil
		if w, ok := st.(approvals.Waiter); ok {
			cfg.Changes = w
		}
		cfg.ShipAudit = func(ctx context.Context) (int, error) {
			res, err := g.ShipAudit(ctx)
			return res.Shipped, err
		}
	}
	var hooks []policy.Channel
	for _, ch := range g.Config().Policy.Channels {
		if ch.Webhook != "" {
			hooks = append(hooks, ch)
		}
		if ch.Email != nil {
			m, err := serve.MailerFromPolicy(ch)
			if err != nil {
				return &exitError{code: exitConfig, msg: err.Error(), hint: "give the channel's SMTP password in its password_file (mode 600)"}
			}
			cfg.Mailers = append(cfg.Mailers, m)
		}
		if ch.Telegram == nil {
			continue
		}
		bot, err := serve.TelegramFromPolicy(ch, a.getenv)
		if err != nil {
			return &exitError{code: exitConfig, msg: err.Error(), hint: "give the channel's bot token in its token_file (mode 600) or token_env"}
		}
		cfg.Telegram = append(cfg.Telegram, bot)
	}
	if len(hooks) > 0 {
		cfg.Webhooks = &serve.Retrier{Channels: hooks, Events: openAudit(paths).Tail}
	}
	if cfg.Addr == "" {
		cfg.Addr = defaultServeAddr()
	}
	s, err := serve.Start(cfg)
	if err != nil && c.Addr == "" && errors.Is(err, syscall.EADDRINUSE) {
		// The user's usual port is taken: any free one will do.
		cfg.Addr = "127.0.0.1:0"
		s, err = serve.Start(cfg)
	}
	switch {
	case errors.Is(err, serve.ErrRunning):
		return &exitError{code: exitFailure, msg: err.Error(), hint: "open its page with the address `mnemos approvals url` prints"}
	case err != nil && c.Addr != "":
		return &exitError{code: exitUsage, msg: err.Error()}
	case err != nil:
		return err
	}
	// The sign-in link goes to a person at a terminal only: under a
	// service manager stdout is a log anyone reading it could sign in
	// with.
	if c.PrintURL && isTerminal(a.io.out) {
		link, exp, err := s.SignInURL()
		if err != nil {
			return err
		}
		fmt.Fprintln(a.io.out, link)
		fmt.Fprintf(a.io.err, "mnemos: the link signs one browser in, once, until %s\n", exp.Local().Format(time.TimeOnly))
	}
	fmt.Fprintf(a.io.err, "mnemos: approvals page on http://%s/ (sign a browser in with the link `mnemos approvals url` prints in a terminal)\n", s.Addr())
	ctx, stop := signal.NotifyContext(a.ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return s.Run(ctx)
}

// defaultServeAddr is 127.0.0.1 and a port that stays the same for a user
// across restarts, so a bookmarked page keeps working.
func defaultServeAddr() string {
	return "127.0.0.1:" + strconv.Itoa(7700+os.Getuid()%1000)
}

// installUnit writes the systemd user unit and prints it.
func (c *ServeCmd) installUnit(a *app) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the mnemos binary: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return fmt.Errorf("cannot find the mnemos binary: %w", err)
	}
	home := a.userHome()
	if home == "" {
		return &exitError{code: exitConfig, msg: "cannot find the home directory", hint: "set HOME"}
	}
	argv := []string{exe, "serve", "--no-print-url"}
	if c.Addr != "" {
		if _, err := serve.CheckAddr(c.Addr); err != nil {
			return &exitError{code: exitUsage, msg: err.Error()}
		}
		argv = append(argv, "--addr", c.Addr)
	}
	env := map[string]string{}
	for _, k := range []string{"MNEMOS_HOME", "MNEMOS_CHANNEL", "MNEMOS_SENDER", "XDG_CONFIG_HOME", "XDG_STATE_HOME"} {
		if v := a.getenv(k); v != "" {
			env[k] = v
		}
	}
	if a.cli.Home != "" {
		abs, err := filepath.Abs(a.cli.Home)
		if err != nil {
			return err
		}
		env["MNEMOS_HOME"] = abs
	}
	path := serve.UnitPath(a.getenv, home)
	text := serve.Unit(argv, env)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(a.io.out, "wrote %s:\n\n%s\n", path, text)
	fmt.Fprintf(a.io.out, "start it now and at every login with:\n  systemctl --user daemon-reload && systemctl --user enable --now %s\n", serve.UnitName)
	return nil
}

// ApprovalsURLCmd is mnemos approvals url.
type ApprovalsURLCmd struct{}

// Run asks the running serve, over its socket, for a one-time link that
// signs a browser in to the page, and prints it to the terminal. Nothing
// else gets it: not a pipe, not a file, not a program reading stdout.
func (c *ApprovalsURLCmd) Run(a *app) error {
	paths, err := a.paths()
	if err != nil {
		return err
	}
	if !isTerminal(a.io.out) {
		return &exitError{code: exitFailure, msg: "the approvals page's sign-in link is printed to a terminal only, and stdout is not one",
			hint: "run `mnemos approvals url` in a terminal, not through a pipe or a program, and open the link it prints (once, within 2 minutes)"}
	}
	link, exp, err := serve.SignIn(a.ctx, paths.ServeSocket())
	switch {
	case errors.Is(err, serve.ErrNotRunning):
		if info, ok := serve.Running(paths.StateDir); ok {
			return &exitError{code: exitFailure, msg: fmt.Sprintf("mnemos serve (pid %d) hands out no sign-in link: it is an older mnemos", info.PID),
				hint: "stop it and start `mnemos serve` again"}
		}
		return &exitError{code: exitFailure, msg: err.Error(), hint: "start it with `mnemos serve` (or install it as a user service: `mnemos serve --install-unit`)"}
	case err != nil:
		return &exitError{code: exitFailure, msg: err.Error()}
	}
	fmt.Fprintln(a.io.out, link)
	fmt.Fprintf(a.io.err, "mnemos: the link signs one browser in, once, until %s\n", exp.Local().Format(time.TimeOnly))
	return nil
}

// ChannelsCmd groups the channel subcommands.
type ChannelsCmd struct {
	Pair ChannelsPairCmd `cmd:"" help:"Print a one-time code that pairs your account on a channel's bot with your identity."`
}

// ChannelsPairCmd is mnemos channels pair telegram.
type ChannelsPairCmd struct {
	Kind string `arg:"" enum:"telegram" help:"The kind of channel: telegram."`
	Name string `help:"The channel's name in the policy, when it has more than one telegram channel."`
}

// Run makes the code. Sending it to the bot binds the sender's Telegram
// id to the identity that runs this command: that id's buttons then
// answer this identity's requests.
func (c *ChannelsPairCmd) Run(a *app) error {
	g, err := a.gate()
	if err != nil {
		return err
	}
	var names []string
	for _, ch := range g.Config().Policy.Channels {
		if ch.Telegram != nil && (c.Name == "" || ch.Name == c.Name) {
			names = append(names, ch.Name)
		}
	}
	switch {
	case len(names) == 0 && c.Name != "":
		return &exitError{code: exitUsage, msg: fmt.Sprintf("no telegram channel named %q in the policy", oneLine(c.Name))}
	case len(names) == 0:
		return &exitError{code: exitUsage, msg: "the policy has no telegram channel",
			hint: "add one to your policy: channels: [{name: phone, telegram: {token_file: PATH, chat_id: N}}]"}
	case len(names) > 1:
		return &exitError{code: exitUsage, msg: "the policy has several telegram channels: " + strings.Join(names, ", "), hint: "choose one with --name"}
	}
	paths := g.Config().Paths
	id := a.identity()
	code, exp, err := serve.NewPairingCode(paths.StateDir, names[0], id, a.now(), rand.Reader)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.io.out, "send this to the bot of channel %s before %s:\n  /pair %s\n", names[0], exp.Local().Format("15:04"), code)
	fmt.Fprintf(a.io.out, "it lets the Telegram account that sends it answer the requests of %s:%s\n", oneLine(id.Channel), oneLine(id.Sender))
	if _, ok := serve.Running(paths.StateDir); !ok {
		fmt.Fprintln(a.io.err, "mnemos: note: mnemos serve is not running; the bot hears the code once it is")
	}
	return nil
}

// serveOnDemand runs when `run --wait` parks a request. With mnemos serve
// running it says the request can be answered on its page too; without
// it, when the policy has a telegram or email channel (whose bot and
// mail only serve runs), it starts one in the background, its log in serve.log in the state
// directory. The new serve is no child of this process (a shell starts
// it and exits), so that the end of the gated command does not stop it.
func serveOnDemand(a *app, g *gate.Gate) {
	paths := g.Config().Paths
	if _, ok := serve.Running(paths.StateDir); ok {
		fmt.Fprintln(a.io.err, "mnemos: or answer it on the approvals page of mnemos serve (mnemos approvals url)")
		return
	}
	bot := ""
	for _, c := range g.Config().Policy.Channels {
		if c.Telegram != nil || c.Email != nil {
			bot = c.Name
			break
		}
	}
	if bot == "" {
		return
	}
	exe, err := serveBinary()
	if err != nil {
		return
	}
	logPath := filepath.Join(paths.StateDir, "serve.log")
	cmd := exec.Command("/bin/sh", "-c", `"$0" serve --no-print-url </dev/null >>"$1" 2>&1 &`, exe, logPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(a.io.err, "mnemos: warning: cannot start mnemos serve for channel %s: %s\n", bot, oneLine(err.Error()))
		return
	}
	fmt.Fprintf(a.io.err, "mnemos: started mnemos serve for channel %s (its log: %s)\n", bot, logPath)
}

// serveBinary is the mnemos binary as it was started: the name looked up in
// PATH, else the executable's path.
func serveBinary() (string, error) {
	if arg0 := os.Args[0]; arg0 != "" && !strings.ContainsRune(arg0, '/') {
		if p, err := exec.LookPath(arg0); err == nil {
			return filepath.Abs(p)
		}
	}
	return os.Executable()
}
