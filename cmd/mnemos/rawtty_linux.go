package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// rawTerminal puts the terminal f in raw mode for single keys: no line
// editing, no echo, no signals from ^C, ^Z or ^\ (they arrive as bytes),
// no flow control, no CR-to-NL translation; output keeps its usual
// processing, so "\n" still starts a new line. The returned function
// restores the settings f had (and is safe to call more than once).
func rawTerminal(f *os.File) (func(), error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var (
		old  *unix.Termios
		ioer error
	)
	// Control, not Fd: Fd would put the file in blocking mode, and
	// closing it would then not end a Read in progress.
	if err := rc.Control(func(fd uintptr) {
		old, ioer = unix.IoctlGetTermios(int(fd), unix.TCGETS)
		if ioer != nil {
			return
		}
		raw := *old
		raw.Lflag &^= unix.ICANON | unix.ECHO | unix.ECHONL | unix.ISIG | unix.IEXTEN
		raw.Iflag &^= unix.ICRNL | unix.INLCR | unix.IGNCR | unix.IXON | unix.ISTRIP
		raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
		ioer = unix.IoctlSetTermios(int(fd), unix.TCSETS, &raw)
	}); err != nil {
		return nil, err
	}
	if ioer != nil {
		return nil, ioer
	}
	restore := func() {
		_ = rc.Control(func(fd uintptr) { _ = unix.IoctlSetTermios(int(fd), unix.TCSETS, old) })
	}
	return restore, nil
}
