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
	// Stop the whole tree first, from the top, until no new process
	// appears (a stopped process forks no more), then kill it all: a
	// chain of processes, or one that forks as fast as it can, cannot
	// outrun the kill.
	var names []string
	seen := map[int]bool{}
	var order []int
	deadline := time.Now().Add(2 * time.Second)
	// Two quiet passes in a row, a moment apart: a process whose parent
	// was exiting during one pass has been handed to this process by the
	// next.
	for quiet := 0; quiet < 2 && time.Now().Before(deadline); {
		if quiet > 0 {
			time.Sleep(time.Millisecond)
		}
		added := false
		queue := children()
		for len(queue) > 0 {
			pid := queue[0]
			queue = queue[1:]
			if !seen[pid] {
				seen[pid] = true
				order = append(order, pid)
				names = append(names, processName(pid))
				_ = unix.Kill(pid, unix.SIGSTOP)
				added = true
			}
			queue = append(queue, childrenOf(pid)...)
		}
		if added {
			quiet = 0
		} else {
			quiet++
		}
	}
	for _, pid := range order {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
	// Reap them all: the ones whose parents died come to this process.
	for time.Now().Before(deadline.Add(time.Second)) {
		pid, err := unix.Wait4(-1, nil, unix.WNOHANG, nil)
		if errors.Is(err, unix.ECHILD) {
			break
		}
		if pid <= 0 {
			time.Sleep(time.Millisecond)
		}
	}
	return names
}

// childrenOf lists the children of process pid, from each of its threads.
func childrenOf(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// processName is the command name of a process (its comm), with its pid.
func processName(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return strconv.Itoa(pid)
	}
	return strings.TrimSpace(string(b)) + " (" + strconv.Itoa(pid) + ")"
}

// children lists the process's own children.
func children() []int { return childrenOf(os.Getpid()) }
