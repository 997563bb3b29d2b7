package sandbox

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes the calling process adopt the descendants its
// children leave behind (PR_SET_CHILD_SUBREAPER), so that a command that
// puts a process in the background, or daemonizes, still has it as an
// ancestor when it ends: ReapLeftovers then stops them. Nothing a confined
// command starts outlives it.
func BecomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// ReapLeftovers stops every child the process still has: after the
// command it ran has been waited for, those are the descendants the
// command left running, adopted since BecomeSubreaper. A child that ends
// within a short grace (git's helpers, a pipeline's last process) is only
// reaped; the others are killed (SIGKILL) and reaped, and their names are
// returned. It must not run while the process waits for another child of
// its own.
func ReapLeftovers() []string {
	reapExited := func() {
		for {
			pid, err := unix.Wait4(-1, nil, unix.WNOHANG, nil)
			if pid <= 0 || err != nil {
				return
			}
		}
	}
	for wait := 0; wait < 10; wait++ {
		reapExited()
		if len(children()) == 0 {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	var names []string
	for round := 0; round < 64; round++ {
		pids := children()
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			name := processName(pid)
			if unix.Kill(pid, unix.SIGKILL) == nil {
				names = append(names, name)
			}
		}
		for _, pid := range pids {
			var ws unix.WaitStatus
			for {
				_, err := unix.Wait4(pid, &ws, 0, nil)
				if !errors.Is(err, unix.EINTR) {
					break
				}
			}
		}
	}
	return names
}

// processName is the command name of a process (its comm), with its pid.
func processName(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return strconv.Itoa(pid)
	}
	return strings.TrimSpace(string(b)) + " (" + strconv.Itoa(pid) + ")"
}

// children lists the process's children, from each of its threads.
func children() []int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}
