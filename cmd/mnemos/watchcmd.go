package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/journal"
	"github.com/mnemos-dev/mnemos/serve"
)

// ApprovalsWatchCmd is mnemos approvals watch: the requests of your
// identity on your terminal as they arrive, each answered with one key.
type ApprovalsWatchCmd struct{}

// Run shows and answers requests on /dev/tty until q, ^C, ^D, SIGINT,
// SIGTERM or SIGHUP; the terminal's settings are restored on every way
// out. It reads and writes the terminal only (never stdin or stdout), so
// it works the same over SSH (ssh -t) and in tmux.
func (c *ApprovalsWatchCmd) Run(a *app) error {
	g, err := a.gate()
	if err != nil {
		return err
	}
	st, err := g.Store(a.ctx)
	if err != nil {
		return err
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return &exitError{code: exitUsage, msg: "approvals watch needs a terminal: " + oneLine(err.Error()),
			hint: "run it in a terminal (over SSH: ssh -t HOST mnemos approvals watch); elsewhere, mnemos approvals list and approve"}
	}
	defer tty.Close()
	restore, err := rawTerminal(tty)
	if err != nil {
		return &exitError{code: exitUsage, msg: "approvals watch cannot read single keys from the terminal: " + oneLine(err.Error()),
			hint: "use mnemos approvals list and mnemos approvals approve ID"}
	}
	defer restore()
	ctx, stop := signal.NotifyContext(a.ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	paths := g.Config().Paths
	t := &serve.Terminal{In: tty, Out: tty, Identity: a.identity(), Resolver: g, Registry: st, Now: a.now,
		Watch: []string{paths.DBFile, paths.DBFile + "-wal"}, Audit: g.Config().Audit}
	// The runs this identity's approvals let through, shown as they end,
	// and their undo.
	j, err := journal.Open(g.JournalOptions())
	if err != nil {
		return &exitError{code: exitConfig, msg: err.Error()}
	}
	defer j.Close()
	t.Journal = j
	if g.SharedState() {
		// This identity's requests on every host, learnt of by the
		// database's notifications.
		t.Fleet, t.Watch = true, nil
		if w, ok := st.(approvals.Waiter); ok {
			t.Changes = w
		}
	}
	err = t.Run(ctx)
	if errors.Is(err, syscall.EIO) {
		// The terminal went away (the SSH connection dropped).
		return nil
	}
	if err != nil {
		return fmt.Errorf("approvals watch: %w", err)
	}
	return nil
}
