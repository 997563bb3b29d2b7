//go:build !linux

package serve

import (
	"context"
	"errors"
	"net"
)

func listenUnix(path string) (net.Listener, error) { return net.Listen("unix", path) }

func dialUnix(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", path)
}

func privateDir(string) error { return nil }

// peerAllowed refuses every peer: without SO_PEERCRED serve cannot tell
// who connected.
func peerAllowed(net.Conn) error {
	return errors.New("this system does not say who connected to a unix socket: sign-in links are not handed out")
}

// HideMemory does nothing off Linux.
func HideMemory() error { return nil }
