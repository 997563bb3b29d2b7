package sandbox

import (
	"os/exec"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// Prepared holds the filesystem rules of a ruleset built in the background
// (see Prepare). Its methods are for one goroutine.
type Prepared struct {
	spec Spec
	h    handled
	done chan struct{}
	res  *prebuilt // set before done is closed
	// mu guards closed and taken against the end of the background build:
	// rules discarded before they are ready are closed by the build.
	mu     sync.Mutex
	closed bool
	taken  bool
}

// prebuilt is what the background build produced.
type prebuilt struct {
	plan    plan
	fd      int
	applied Applied // Skipped and Notes of the path rules
}

// Prepare starts building, in a background goroutine, the filesystem rules
// of the ruleset for spec on a kernel with status st: the plan and one
// rule per granted path, which is most of what starting a confined
// command costs (an /etc carved around its secrets is over a hundred
// rules). A caller that prepares as soon as it knows the workspace, and
// decides meanwhile whether to run anything, starts the command that much
// sooner. StartPrepared uses the rules when the spec it is given grants
// the same paths and handles TCP the same way, and builds anew otherwise;
// Close discards them. Nothing is restricted by preparing.
func Prepare(spec Spec, st Status) *Prepared {
	p := &Prepared{spec: spec, done: make(chan struct{})}
	if st.ABI < 1 {
		close(p.done)
		return p
	}
	p.h, _ = handledFor(st, spec)
	go func() {
		defer close(p.done)
		pl, err := buildPlan(spec)
		if err != nil {
			return // StartPrepared builds anew and reports it
		}
		var a Applied
		fd, err := buildPathRules(p.h, pl, &a)
		if err != nil {
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.closed {
			unix.Close(fd)
			return
		}
		p.res = &prebuilt{plan: pl, fd: fd, applied: a}
	}()
	return p
}

// StartPrepared is StartOn, with the filesystem rules of pre when they fit
// spec (pre may be nil). pre is used up either way.
func StartPrepared(cmd *exec.Cmd, spec Spec, st Status, pre *Prepared) (Applied, error) {
	return startWith(cmd, spec, st, pre)
}

// take returns the prebuilt rules when they fit spec on st, once; the
// caller then owns the ruleset descriptor. Rules that do not fit are
// discarded.
func (p *Prepared) take(spec Spec, st Status) *prebuilt {
	if p == nil {
		return nil
	}
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.taken || p.closed || p.res == nil {
		return nil
	}
	p.taken = true
	h, _ := handledFor(st, spec)
	if h != p.h || !sameGrants(spec, p.spec) {
		unix.Close(p.res.fd)
		return nil
	}
	return p.res
}

// Wait blocks until the background build has ended.
func (p *Prepared) Wait() {
	if p != nil {
		<-p.done
	}
}

// Close discards the prepared rules unless StartPrepared used them. It
// does not wait for the background build, which discards them when it
// ends.
func (p *Prepared) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	if !p.taken && p.res != nil {
		unix.Close(p.res.fd)
	}
}

// sameGrants reports whether two specs grant the same paths.
func sameGrants(a, b Spec) bool {
	return slices.Equal(a.ReadExec, b.ReadExec) && slices.Equal(a.ReadOnly, b.ReadOnly) &&
		slices.Equal(a.ReadWrite, b.ReadWrite) && slices.Equal(a.Devices, b.Devices) &&
		slices.Equal(a.Terminals, b.Terminals) && slices.Equal(a.Deny, b.Deny)
}
