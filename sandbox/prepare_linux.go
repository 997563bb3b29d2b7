package sandbox

import (
	"fmt"
	"os/exec"
	"reflect"
	"sync"

	"golang.org/x/sys/unix"
)

// Prepared is a thread confined ahead for one spec, waiting to start a
// command (see Prepare). Its methods are for one goroutine.
type Prepared struct {
	spec Spec
	st   Status
	// done is closed when the background work has ended; c and ok are set
	// before, ok when a thread is confined and waiting on jobs.
	done chan struct{}
	c    confinementOf
	r    confined
	ok   bool
	// r.watch, when the spec watches changes, serves the thread's own
	// calls until StartWatched gives it the handler.
	jobs chan *exec.Cmd // nil ends the thread
	// started receives cmd.Start's error from the thread.
	started chan error
	mu      sync.Mutex
	used    bool
}

// Prepare starts confining, in the background, an OS thread for spec on a
// kernel with status st: the plan, one Landlock rule per granted path
// (an /etc carved around its secrets is over a hundred), the seccomp
// filter, and the thread's restriction, which is nearly all a confined
// start costs. A caller that prepares as soon as it can guess the spec,
// and decides meanwhile whether to run anything, starts the command that
// much sooner. With Spec.Watch the thread also installs the filter that
// watches changes, and its own calls pass until StartWatched gives the
// handler and it has started the command. StartPrepared (or StartWatched)
// starts the command on that thread when it is
// given the very spec and status Prepare was; otherwise, and after Close,
// the thread ends unused. Nothing but that thread is restricted.
func Prepare(spec Spec, st Status) *Prepared {
	p := &Prepared{spec: spec, st: st, done: make(chan struct{}),
		jobs: make(chan *exec.Cmd, 1), started: make(chan error, 1)}
	go func() {
		c, err := confinement(spec, st)
		if err != nil || c.unconfined || c.helper || undumpable() != nil {
			// StartPrepared starts anew and reports it.
			if err == nil && c.fd >= 0 {
				unix.Close(c.fd)
			}
			close(p.done)
			return
		}
		onDisposableThread(func() {
			p.c = c
			p.r.dropped, p.r.err = confineThread(c.fd, !spec.KeepCapabilities, c.filter, c.view)
			unix.Close(c.fd)
			if p.r.err == nil {
				// The handler is not known yet: the thread's own calls
				// pass until it has started the command.
				p.r.watch, p.r.watchNote, p.r.err = startWatch(c.watch, nil, unix.Gettid())
			}
			p.ok = p.r.err == nil
			close(p.done)
			if !p.ok {
				return
			}
			cmd := <-p.jobs
			if cmd == nil {
				p.r.watch.Close()
				return
			}
			err := cmd.Start()
			p.r.watch.selfDone()
			p.started <- err
		})
	}()
	return p
}

// StartPrepared is Start on a kernel described by st, as Probe returned
// it, on the thread pre confined when pre was made for spec and st (pre may
// be nil); pre is used up either way. A caller that has probed already
// passes what it found, so the run is reported as it was confined. A
// Status with a lower ABI than the kernel's enforces only what that ABI
// knows, and one with ABI 0 starts the command unconfined unless
// spec.Required (tests use this to see how older kernels are treated); an
// ABI the kernel does not have fails without starting the command.
func StartPrepared(cmd *exec.Cmd, spec Spec, st Status, pre *Prepared) (Applied, error) {
	a, _, err := startWith(cmd, spec, st, pre, nil)
	return a, err
}

// start starts cmd on the prepared thread, when there is one for spec and
// st, watching changes with handle when the spec asks; ok is false when
// the caller must start cmd itself. The prepared thread is used up
// either way.
func (p *Prepared) start(cmd *exec.Cmd, spec Spec, st Status, handle func(Change) error) (a Applied, w *Watch, ok bool, err error) {
	if p == nil {
		return Applied{}, nil, false, nil
	}
	<-p.done
	p.mu.Lock()
	used := p.used
	p.used = true
	p.mu.Unlock()
	if used || !p.ok {
		return Applied{}, nil, false, nil
	}
	// Whether the watch is required is checked below, against the
	// thread's watch: a spec that requires it matches one that did not.
	same := spec
	same.RequireWatch = p.spec.RequireWatch
	if !reflect.DeepEqual(same, p.spec) || !reflect.DeepEqual(st, p.st) {
		p.jobs <- nil
		return Applied{}, nil, false, nil
	}
	closeNull, err := nullStdio(cmd)
	if err != nil {
		p.jobs <- nil
		return p.c.a, nil, true, err
	}
	defer closeNull()
	if p.c.view != nil && cmd.Dir == "" {
		if cmd.Dir, err = viewDir(spec); err != nil {
			p.jobs <- nil
			return p.c.a, nil, true, err
		}
	}
	if p.r.watch == nil && spec.RequireWatch {
		p.jobs <- nil
		return p.c.a, nil, true, fmt.Errorf("%w: %s", ErrUnenforceable, p.r.watchNote)
	}
	p.r.watch.setHandler(handle)
	p.jobs <- cmd
	if err := <-p.started; err != nil {
		p.r.watch.Close()
		return p.c.a, nil, true, err
	}
	return p.c.applied(p.r.dropped).watching(p.r.watch, p.r.watchNote), p.r.watch, true, nil
}

// Wait blocks until the background work has ended.
func (p *Prepared) Wait() {
	if p != nil {
		<-p.done
	}
}

// Close ends the prepared thread unless StartPrepared used it. It does not
// wait for the background work.
func (p *Prepared) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	used := p.used
	p.used = true
	p.mu.Unlock()
	if !used {
		// The thread, once confined, takes this and ends.
		p.jobs <- nil
	}
}
