// Command mnemos is a gatekeeper between AI coding agents and the shell.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mnemos-dev/mnemos/sandbox"
)

func main() {
	if sandbox.IsHelper(os.Args[0]) {
		os.Exit(sandbox.RunHelper(os.Args))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	code := Main(ctx, argsFor(os.Args[0], os.Args[1:]), stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}, os.Getenv)
	stop()
	os.Exit(code)
}
