package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Start starts cmd confined by spec and reports what the kernel enforces.
//
// The ruleset and the seccomp filter are built in the calling goroutine.
// Then a fresh goroutine locks itself to its OS thread, drops root's
// dangerous capabilities, sets no_new_privs, restricts that thread alone
// with landlock_restrict_self, installs the seccomp filter on it (without
// TSYNC, so on that thread alone) and calls cmd.Start, so the child and all
// its descendants inherit the Landlock domain and the filter. The
// goroutine never unlocks the thread: the Go runtime ends a thread whose
// locked goroutine exits, and while it runs it starts new threads from a
// clean template thread, so no other goroutine ever runs restricted and
// the calling process stays free (it still writes the audit log after the
// command ends).
//
// Standard streams left nil are connected to /dev/null opened before the
// restriction. On a kernel without Landlock the command starts unconfined
// (without the filter too) unless spec.Required, and the returned Applied
// says so. Where the filter cannot be installed (another architecture, or
// the kernel refuses it), the command runs under Landlock alone and a note
// says so. When anything fails after the kernel offered Landlock, the
// command is not started; nor is it when spec.RequireTCP asks for TCP
// limits this kernel's Landlock cannot enforce.
func Start(cmd *exec.Cmd, spec Spec) (Applied, error) {
	return start(cmd, spec, Probe())
}

// StartWatched is StartPrepared for a spec that watches changes
// (Spec.Watch): handle sees each change the command and its descendants
// are about to make to the file system, before the kernel makes it (see
// Change for what is reported). A nil error lets the call proceed; an
// error fails it, with its errno when it is a syscall.Errno, EPERM
// otherwise. Calls wait while handle runs, one at a time.
//
// The returned Watch is nil when nothing is watched: the spec did not
// ask, or the kernel could not (Applied.Watched is false and a note says
// why); the command runs all the same. Otherwise the caller closes it
// once the command and what it left running have been waited for
// (ReapLeftovers), and reads what it served.
func StartWatched(cmd *exec.Cmd, spec Spec, st Status, pre *Prepared, handle func(Change) error) (Applied, *Watch, error) {
	return startWith(cmd, spec, st, pre, handle)
}

// handled is what a ruleset restricts.
type handled struct{ fs, net, scoped uint64 }

// handledFor chooses what to restrict for spec on a kernel with status st,
// and notes what the spec asks for that the kernel cannot enforce.
func handledFor(st Status, s Spec) (h handled, notes []string) {
	h.fs = handledFS(st.ABI)
	if st.ABI < 2 {
		notes = append(notes, "moving or linking files between directories is refused everywhere (Landlock ABI 1)")
	}
	if st.ABI < 3 {
		notes = append(notes, "truncating files by path is not restricted (needs Landlock ABI 3)")
	}
	if st.ABI < 5 {
		notes = append(notes, "device ioctls are not restricted (needs Landlock ABI 5)")
	}
	// Binding is refused but for BindPorts, with or without network.
	switch {
	case st.ABI >= 4:
		h.net = ll.AccessNetBindTCP
		if s.restrictsTCP() {
			h.net |= ll.AccessNetConnectTCP
		}
	case st.filtered() && !s.Network:
		notes = append(notes, fmt.Sprintf("TCP is refused by the seccomp filter alone: Landlock ABI %d predates TCP rules (ABI 4)", st.ABI))
	case s.restrictsTCP():
		notes = append(notes, fmt.Sprintf("TCP is not restricted: Landlock ABI %d predates TCP rules (ABI 4)", st.ABI))
	default:
		notes = append(notes, fmt.Sprintf("TCP bind is not restricted: Landlock ABI %d predates TCP rules (ABI 4)", st.ABI))
	}
	if s.Scoped {
		switch {
		case st.ABI < 6:
			notes = append(notes, fmt.Sprintf("abstract unix sockets and signals are not scoped: Landlock ABI %d predates scoping (ABI 6)", st.ABI))
		case st.signalScoping():
			h.scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
		default:
			h.scoped = ll.ScopeAbstractUnixSocket
			notes = append(notes, "signals are not scoped: the kernel lacks the fix for signals between threads")
		}
	}
	return h, notes
}

// start is Start on a kernel described by st. Tests pass an older ABI than
// the running kernel's to check the downgrades.
func start(cmd *exec.Cmd, spec Spec, st Status) (Applied, error) {
	a, _, err := startWith(cmd, spec, st, nil, nil)
	return a, err
}

// errNoHandler refuses to start a watched spec without a handler.
var errNoHandler = errors.New("sandbox: a spec that watches changes needs a handler (StartWatched)")

// startWith is start, on the thread pre confined ahead when pre was made
// for this very spec and kernel (see Prepare), watching changes with
// handle when the spec asks.
func startWith(cmd *exec.Cmd, spec Spec, st Status, pre *Prepared, handle func(Change) error) (Applied, *Watch, error) {
	if spec.Watch && handle == nil {
		pre.Close()
		return Applied{ABI: st.ABI}, nil, errNoHandler
	}
	if err := closeInheritedOnExec(); err != nil {
		return Applied{ABI: st.ABI}, nil, err
	}
	if a, w, ok, err := pre.start(cmd, spec, st, handle); ok {
		return a, w, err
	}
	c, err := confinement(spec, st)
	if err != nil || c.unconfined {
		if err == nil {
			err = cmd.Start()
		}
		return c.a, nil, err
	}
	defer unix.Close(c.fd)
	closeNull, err := nullStdio(cmd)
	if err != nil {
		return c.a, nil, err
	}
	defer closeNull()
	if c.view != nil && cmd.Dir == "" {
		if cmd.Dir, err = viewDir(spec); err != nil {
			return c.a, nil, err
		}
	}
	if c.helper {
		w, note, err := startHelper(cmd, c, handle, spec.RequireWatch)
		if err != nil {
			return c.a, nil, err
		}
		return c.applied(false).watching(w, note), w, nil
	}
	if err := undumpable(); err != nil {
		return c.a, nil, err
	}
	var r confined
	onDisposableThread(func() {
		if r.dropped, r.err = confineThread(c.fd, !spec.KeepCapabilities, c.filter, c.view); r.err != nil {
			return
		}
		if r.watch, r.watchNote, r.err = startWatch(c.watch, handle, unix.Gettid()); r.err != nil {
			return
		}
		if r.watch == nil && spec.RequireWatch {
			r.err = fmt.Errorf("%w: %s", ErrUnenforceable, r.watchNote)
			return
		}
		r.err = cmd.Start()
		r.watch.selfDone()
	})
	if r.err != nil {
		r.watch.Close()
		return c.a, nil, r.err
	}
	return c.applied(r.dropped).watching(r.watch, r.watchNote), r.watch, nil
}

// confined is what confining a thread did.
type confined struct {
	dropped bool
	err     error
	// watch serves the changes the command makes, nil when unwatched;
	// watchNote says why the kernel refused to watch.
	watch     *Watch
	watchNote string
}

// confinementOf is everything a confined start needs but the thread: the
// ruleset descriptor, the seccomp filter and what they enforce.
type confinementOf struct {
	a      Applied
	fd     int
	filter []unix.SockFilter
	// view is the private mount view the thread builds, nil for none.
	view *viewPlan
	// helper: the view is built, and the command confined, by the
	// helper (startHelper), not by a thread of this process.
	helper      bool
	h           handled
	tcpByFilter bool
	// watch is the filter that traps changes to files (Spec.Watch), nil
	// when they are not watched.
	watch []unix.SockFilter
	// unconfined: the kernel has no Landlock and the spec does not
	// require it; the command starts as it is.
	unconfined bool
}

// applied is what the confinement enforces once a thread is confined.
func (c confinementOf) applied(dropped bool) Applied {
	a := c.a
	a.Enforced, a.FS, a.Seccomp = true, true, c.filter != nil
	a.Net, a.Scoped, a.DroppedCaps = c.h.net != 0 || c.tcpByFilter, c.h.scoped != 0, dropped
	a.View = c.view != nil
	return a
}

// watchNote is a's notes, with why changes are not watched unless ok.
func (a Applied) watchNote(ok bool, why string) []string {
	if ok {
		return a.Notes
	}
	if why == "" {
		why = "the kernel cannot show them to mnemos"
	}
	return append(a.Notes, "changes are not watched: "+why)
}

// watching is a once w watches the command's changes, or note says why
// the kernel refused.
func (a Applied) watching(w *Watch, note string) Applied {
	a.Watched = w != nil
	if note != "" {
		a.Notes = append(a.Notes, note)
	}
	return a
}

// confinement builds the plan, the ruleset and the filter for spec on st.
// The caller closes fd unless unconfined or an error is returned.
func confinement(spec Spec, st Status) (confinementOf, error) {
	arch, ok := archFor(runtime.GOARCH)
	if !ok {
		st.Seccomp = false
	}
	c := confinementOf{a: Applied{ABI: st.ABI}, fd: -1}
	p, err := buildPlan(spec)
	if err != nil {
		return c, err
	}
	c.a.Skipped, c.a.Notes = p.skipped, p.notes
	if st.ABI < 1 {
		if spec.Required {
			return c, fmt.Errorf("%w: %s", ErrUnenforceable, st.Note())
		}
		c.a.Notes = append(c.a.Notes, "no Landlock on this kernel: the command runs unconfined")
		if spec.Watch {
			c.a.Notes = c.a.watchNote(false, "no Landlock domain to install the watch with")
		}
		c.unconfined = true
		return c, nil
	}
	// Without network, the seccomp filter refuses TCP sockets whatever
	// the Landlock ABI; port rules need Landlock's.
	c.tcpByFilter = st.filtered() && !spec.Network
	if (spec.Required || spec.RequireTCP) && spec.restrictsTCP() && st.ABI < 4 && !c.tcpByFilter {
		return c, fmt.Errorf("%w: TCP rules need Landlock ABI 4, the kernel has %d", ErrUnenforceable, st.ABI)
	}
	if err := c.planView(spec, st); err != nil {
		return c, err
	}
	var notes []string
	c.h, notes = handledFor(st, spec)
	c.a.Notes = append(c.a.Notes, notes...)
	if st.filtered() {
		pol := policyFor(spec)
		if c.filter, err = seccompProgram(arch, pol); err != nil {
			return c, err
		}
		c.a.Notes = append(c.a.Notes, pol.describe())
	} else {
		why := st.SeccompErr
		if why == "" {
			why = "no seccomp filter"
		}
		c.a.Notes = append(c.a.Notes, why+": UDP, MPTCP and other sockets, io_uring and TIOCSTI are not restricted")
	}
	if spec.Watch {
		why := st.WatchErr
		if st.Watch {
			if c.watch, err = watchProgramFor(runtime.GOARCH); err != nil {
				why = err.Error()
			}
		}
		c.a.Notes = c.a.watchNote(c.watch != nil, why)
		if c.watch == nil && spec.RequireWatch {
			return c, fmt.Errorf("%w: changes cannot be watched: %s", ErrUnenforceable, why)
		}
	}
	if c.fd, err = buildRuleset(c.h, p, spec, &c.a); err != nil {
		return c, fmt.Errorf("build the Landlock ruleset: %w", err)
	}
	return c, nil
}

// viewDir is where a command started without a directory starts in the
// view: the child changes directory after the view is built, so that it
// starts inside it, not in a directory the view covers. That is the
// working directory when the spec grants it, else the first writable tree
// (the workspace).
func viewDir(spec Spec) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	res := resolver{}
	real, _ := res.real(wd)
	if underAny(real, slices.Concat(spec.ReadWrite, spec.ReadExec, spec.ReadOnly), res) || len(spec.ReadWrite) == 0 {
		return wd, nil
	}
	return spec.ReadWrite[0], nil
}

// planView plans the private mount view when the spec asks for one and
// this process can build it, and says what is missing otherwise.
func (c *confinementOf) planView(spec Spec, st Status) error {
	if !spec.View {
		return nil
	}
	if !st.View {
		why := st.ViewErr
		if why == "" {
			why = "the view needs CAP_SYS_ADMIN or a user namespace"
		}
		if spec.RequireView {
			return fmt.Errorf("%w: %s", ErrUnenforceable, why)
		}
		c.a.Notes = append(c.a.Notes, "no read-only view: "+why+"; what runs later, file metadata and socket files are not protected")
		return nil
	}
	v := planView(spec)
	c.view = &v
	c.helper = spec.ViewByHelper || !hasSysAdmin()
	c.a.Absent = v.absent
	return nil
}

// nullStdio connects the standard streams left nil to /dev/null, opened
// before any restriction; the returned function closes it.
func nullStdio(cmd *exec.Cmd) (func(), error) {
	if cmd.Stdin != nil && cmd.Stdout != nil && cmd.Stderr != nil {
		return func() {}, nil
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if cmd.Stdin == nil {
		cmd.Stdin = null
	}
	if cmd.Stdout == nil {
		cmd.Stdout = null
	}
	if cmd.Stderr == nil {
		cmd.Stderr = null
	}
	return func() { null.Close() }, nil
}

// onDisposableThread runs f on an OS thread that ends when f returns, and
// waits for it. The runtime ends a thread whose goroutine exits while
// locked to it, except the main thread, which it keeps parked for good: so
// when the goroutine lands on the main thread, it holds that thread (so
// the scheduler must pick another) while a second goroutine does the work,
// then releases it untouched.
func onDisposableThread(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			onDisposableThread(f)
			runtime.UnlockOSThread()
			return
		}
		// Never unlocked: f may leave the thread restricted, and the
		// thread must end with this goroutine.
		f()
	}()
	<-done
}

// confineThread restricts the calling OS thread with the Landlock ruleset
// and, unless filter is nil, the seccomp filter. It must run on a locked
// thread that is never unlocked; what that thread starts inherits it all.
func confineThread(rulesetFD int, dropCaps bool, filter []unix.SockFilter, view *viewPlan) (dropped bool, err error) {
	if view != nil {
		if err := view.enter(); err != nil {
			return false, fmt.Errorf("build the sandbox's view: %w", err)
		}
	}
	if dropCaps {
		if dropped, err = dropCapabilities(); err != nil {
			return false, err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return false, fmt.Errorf("set no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(rulesetFD, 0); err != nil {
		return false, fmt.Errorf("landlock_restrict_self: %w", err)
	}
	if filter != nil {
		if err := installSeccomp(filter); err != nil {
			return false, err
		}
	}
	return dropped, nil
}

// keptCapabilities are the capabilities a command started by root keeps:
// Docker's default list without CAP_MKNOD, CAP_NET_RAW (raw sockets pass
// by the TCP rules) and CAP_SETFCAP.
const keptCapabilities uint64 = 1<<unix.CAP_CHOWN | 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_FOWNER |
	1<<unix.CAP_FSETID | 1<<unix.CAP_KILL | 1<<unix.CAP_SETGID | 1<<unix.CAP_SETUID |
	1<<unix.CAP_SETPCAP | 1<<unix.CAP_NET_BIND_SERVICE | 1<<unix.CAP_SYS_CHROOT | 1<<unix.CAP_AUDIT_WRITE

// dropCapabilities removes every capability but keptCapabilities from the
// calling thread's bounding, ambient, inheritable, permitted and effective
// sets, so a root command cannot load kernel modules, use raw I/O or raw
// sockets, or remount. It reports whether the thread had anything to drop.
func dropCapabilities() (bool, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false, fmt.Errorf("read capabilities: %w", err)
	}
	permitted := uint64(data[0].Permitted) | uint64(data[1].Permitted)<<32
	dropped := permitted&^keptCapabilities != 0
	for c := 0; c < 64; c++ {
		if keptCapabilities&(1<<c) != 0 {
			continue
		}
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the kernel's last capability
		}
		if err != nil {
			// Without CAP_SETPCAP the bounding set stays; no_new_privs
			// and the sets below still keep exec from granting more.
			break
		}
		dropped = true
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return false, fmt.Errorf("clear ambient capabilities: %w", err)
	}
	for i := range data {
		keep := uint32(keptCapabilities >> (32 * i))
		data[i].Effective &= keep
		data[i].Permitted &= keep
		data[i].Inheritable &= keep
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return false, fmt.Errorf("drop capabilities: %w", err)
	}
	return dropped, nil
}

// buildRuleset creates the ruleset file descriptor. Paths that vanished
// since the plan are added to a.Skipped; paths that could not be opened
// safely are left out and noted.
func buildRuleset(h handled, p plan, s Spec, a *Applied) (int, error) {
	fd, err := buildPathRules(h, p, a)
	if err != nil {
		return -1, err
	}
	if err := addPorts(fd, h, s); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// buildPathRules creates the ruleset with the plan's path rules. The
// descriptors opened for the rules are closed in the background: the
// ruleset holds what it needs of them.
func buildPathRules(h handled, p plan, a *Applied) (int, error) {
	attr := ll.RulesetAttr{HandledAccessFS: h.fs, HandledAccessNet: h.net, Scoped: h.scoped}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	opened := make([]int, 0, len(p.rules))
	defer func() {
		go func() {
			for _, o := range opened {
				unix.Close(o)
			}
		}()
	}()
	for _, r := range p.rules {
		o, err := addPath(fd, r, h.fs, a)
		if o >= 0 {
			opened = append(opened, o)
		}
		if err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

// addPorts adds the spec's TCP port rules to the ruleset.
func addPorts(fd int, h handled, s Spec) error {
	if s.Network {
		ports := []struct {
			access uint64
			list   []uint16
		}{{ll.AccessNetConnectTCP, s.ConnectPorts}, {ll.AccessNetBindTCP, s.BindPorts}}
		for _, pl := range ports {
			if h.net&pl.access == 0 {
				continue
			}
			for _, port := range pl.list {
				if err := ll.LandlockAddNetPortRule(fd, &ll.NetPortAttr{AllowedAccess: pl.access, Port: uint64(port)}, 0); err != nil {
					return fmt.Errorf("grant TCP port %d: %w", port, err)
				}
			}
		}
	}
	return nil
}

// addPath adds one path-beneath rule, masking the rights a file that is
// not a directory cannot carry. It returns the descriptor it opened for
// the rule (-1 when none), for the caller to close.
func addPath(rulesetFD int, r rule, handledFS uint64, a *Applied) (int, error) {
	fd, err := openPath(r.path)
	switch {
	case errors.Is(err, unix.ENOENT):
		a.Skipped = append(a.Skipped, r.path)
		return -1, nil
	case errors.Is(err, unix.ELOOP):
		a.Notes = append(a.Notes, fmt.Sprintf("%s not granted: a symbolic link appeared in it", r.path))
		return -1, nil
	case err != nil:
		a.Notes = append(a.Notes, fmt.Sprintf("%s not granted: %v", r.path, err))
		return -1, nil
	}
	access := r.access & handledFS
	if r.kind == kindFile {
		access &= accessFile
	}
	if r.kind == kindUnknown {
		if access, err = accessFor(fd, r.path, access); err != nil {
			return fd, err
		}
	}
	if access == 0 {
		return fd, nil
	}
	err = ll.LandlockAddPathBeneathRule(rulesetFD, &ll.PathBeneathAttr{AllowedAccess: access, ParentFd: fd}, 0)
	if errors.Is(err, unix.EINVAL) && r.kind == kindDir {
		// No longer a directory since the plan listed it: look.
		if access, err = accessFor(fd, r.path, access); err != nil || access == 0 {
			return fd, err
		}
		err = ll.LandlockAddPathBeneathRule(rulesetFD, &ll.PathBeneathAttr{AllowedAccess: access, ParentFd: fd}, 0)
	}
	if err != nil {
		return fd, fmt.Errorf("grant %s: landlock_add_rule: %w", r.path, err)
	}
	return fd, nil
}

// accessFor masks access to what the file open at fd can carry.
func accessFor(fd int, path string, access uint64) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= accessFile
	}
	return access, nil
}

// openPath opens p with O_PATH without following any symbolic link, so a
// link swapped in since the plan was made cannot redirect a grant.
func openPath(p string) (int, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS,
	})
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM) {
		return fd, err
	}
	// openat2 is filtered out (some container runtimes do that): refuse
	// a link at the last element at least.
	fd, err = unix.Open(p, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		unix.Close(fd)
		return -1, unix.ELOOP
	}
	return fd, nil
}

// undumpable makes this process one that nothing without CAP_SYS_PTRACE
// may trace, read the memory of, or take descriptors from
// (PR_SET_DUMPABLE 0). The thread that confines itself to start a command
// is in the command's Landlock domain, with its uid, until the thread
// ends: without this, the command could reach mnemos through it
// (/proc/PID/task/TID/mem, pidfd_getfd on the audit log or the state
// database). The command's own process becomes dumpable again when it
// executes its program. The helper's way needs none of it (no thread of
// mnemos is confined), and could not use it: a parent must write the
// user namespace's maps in the child's /proc entry, which an undumpable
// process's child hands to root.
func undumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make mnemos undumpable: %w", err)
	}
	return nil
}

// closeInheritedOnExec marks every descriptor above the standard streams
// close-on-exec, so that a command started afterwards gets only its
// standard streams (and the ExtraFiles its exec.Cmd names, which the child
// duplicates anew). Descriptors mnemos opens itself are close-on-exec
// already; the ones its caller left open are not, and could hold anything
// (a private key, a socket, a directory outside the sandbox, which
// Landlock does not check again once open).
func closeInheritedOnExec() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("mark inherited descriptors close-on-exec: %w", err)
	}
	// Before Linux 5.11: one by one, as listed in /proc/self/fd.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("list inherited descriptors: %w", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("mark descriptor %d close-on-exec: %w", fd, err)
		}
	}
	return nil
}
