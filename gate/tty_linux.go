package gate

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// job is a command run in the foreground of mnemos's terminal, shell
// style: in a process group of its own, made the terminal's foreground
// group while it runs. The terminal then sends what the keyboard
// generates (^C, ^\, ^Z, a window resize) to the command alone, and mnemos
// receives only the signals sent to it, which it relays: each reaches the
// command once, whichever way it came.
type job struct {
	tty  *os.File
	pgrp int // mnemos's own process group
}

// foregroundJob prepares cmd to run as a job when mnemos is in the
// foreground of its controlling terminal; nil otherwise, and cmd is left
// as it is (the command then shares mnemos's process group).
func foregroundJob(cmd *exec.Cmd) *job {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	fg, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP)
	if err != nil || fg != unix.Getpgrp() {
		f.Close()
		return nil
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// The child joins a new group and takes the terminal before it
	// executes the command (Ctty is mnemos's descriptor, inherited).
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Foreground, cmd.SysProcAttr.Ctty = true, true, int(f.Fd())
	return &job{tty: f, pgrp: unix.Getpgrp()}
}

// setForeground makes pgrp the terminal's foreground group. SIGTTOU is
// ignored meanwhile: a background group may then take the terminal.
func (j *job) setForeground(pgrp int) {
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	_ = unix.IoctlSetPointerInt(int(j.tty.Fd()), unix.TIOCSPGRP, pgrp)
}

// foreground reports whether mnemos's group holds the terminal.
func (j *job) foreground() bool {
	fg, err := unix.IoctlGetInt(int(j.tty.Fd()), unix.TIOCGPGRP)
	return err == nil && fg == j.pgrp
}

// restore gives the terminal back to mnemos's group, if the command's
// group still holds it, and closes it.
func (j *job) restore(cmd *exec.Cmd) {
	if j == nil {
		return
	}
	fg, err := unix.IoctlGetInt(int(j.tty.Fd()), unix.TIOCGPGRP)
	if err == nil && fg != j.pgrp && (cmd.Process == nil || fg == cmd.Process.Pid) {
		j.setForeground(j.pgrp)
	}
	j.tty.Close()
}

// The si_code of a child that stopped (waitid).
const (
	cldTrapped = 4
	cldStopped = 5
)

// wait waits for the command like cmd.Wait. For a job, when the command
// stops (^Z reaches its group alone), mnemos takes the terminal back and
// stops itself, so that the shell sees the job stopped; continued, it
// hands the terminal back to the command, if mnemos was continued in the
// foreground, and continues it.
func (j *job) wait(cmd *exec.Cmd) error {
	if j == nil {
		return cmd.Wait()
	}
	pid := cmd.Process.Pid
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WSTOPPED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || info.Code != cldStopped && info.Code != cldTrapped {
			break
		}
		// Take the stop report, leaving an exit for cmd.Wait.
		_ = unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WNOHANG, nil)
		j.setForeground(j.pgrp)
		_ = unix.Kill(os.Getpid(), unix.SIGSTOP)
		if j.foreground() {
			j.setForeground(pid)
		}
		_ = unix.Kill(-pid, unix.SIGCONT)
	}
	return cmd.Wait()
}
