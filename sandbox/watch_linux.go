package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The watch shows mnemos every change a confined command is about to make
// to the file system, before the kernel makes it. A second seccomp filter,
// installed with SECCOMP_FILTER_FLAG_NEW_LISTENER on the thread that
// starts the command, returns SECCOMP_RET_USER_NOTIF for the calls that
// change files: the calling thread waits while mnemos, holding the
// listener, reads the call's arguments from its memory, resolves the
// path, hands a Change to the handler, and answers: go on
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE), or fail with the handler's errno.
// When the listener closes (mnemos ends, or Watch.Close), every trapped
// call of the command fails with ENOSYS: nothing it changes afterwards
// goes unseen.

// trapped is a system call the watch traps: its number on one
// architecture and where its arguments are.
type trapped struct {
	name  string
	nr    uint32
	shape callShape
}

// flagsOf says how to read a call's flags argument.
type flagsOf uint8

const (
	noFlags     flagsOf = iota
	openFlags           // O_ flags; the filter traps only opens that may write
	openHow             // a pointer to struct open_how, its size in the next argument
	atFlags             // AT_SYMLINK_NOFOLLOW and AT_EMPTY_PATH
	linkFlags           // AT_SYMLINK_FOLLOW and AT_EMPTY_PATH
	unlinkFlags         // AT_REMOVEDIR
	renameFlags         // RENAME_EXCHANGE
	handleFlags         // open_by_handle_at: names no path, refused when it may write
)

// callShape is where a trapped call keeps what the watch reads: argument
// indexes, -1 for none. A path without a directory descriptor is
// relative to the working directory.
type callShape struct {
	kind          ChangeKind
	dirfd, path   int8
	dirfd2, path2 int8
	fd            int8 // a descriptor naming the file (fchmod, fchown)
	flags         int8
	of            flagsOf
	follow        bool // the call follows a symbolic link at the path's end
}

func onPath(kind ChangeKind, dirfd, path int8, follow bool) callShape {
	return callShape{kind: kind, dirfd: dirfd, path: path, dirfd2: -1, path2: -1, fd: -1, flags: -1, follow: follow}
}

func onFD(kind ChangeKind, fd int8) callShape {
	return callShape{kind: kind, dirfd: -1, path: -1, dirfd2: -1, path2: -1, fd: fd, flags: -1}
}

func (s callShape) with(flags int8, of flagsOf) callShape { s.flags, s.of = flags, of; return s }
func (s callShape) to(dirfd, path int8) callShape         { s.dirfd2, s.path2 = dirfd, path; return s }

// callShapes are the calls the watch traps, by name, the same on every
// architecture that has them.
var callShapes = map[string]callShape{
	"open":              onPath(ChangeWrite, -1, 0, true).with(1, openFlags),
	"creat":             onPath(ChangeWrite, -1, 0, true),
	"openat":            onPath(ChangeWrite, 0, 1, true).with(2, openFlags),
	"openat2":           onPath(ChangeWrite, 0, 1, true).with(2, openHow),
	"truncate":          onPath(ChangeWrite, -1, 0, true),
	"unlink":            onPath(ChangeUnlink, -1, 0, false),
	"unlinkat":          onPath(ChangeUnlink, 0, 1, false).with(2, unlinkFlags),
	"rmdir":             onPath(ChangeRmdir, -1, 0, false),
	"mkdir":             onPath(ChangeMkdir, -1, 0, false),
	"mkdirat":           onPath(ChangeMkdir, 0, 1, false),
	"mknod":             onPath(ChangeMknod, -1, 0, false),
	"mknodat":           onPath(ChangeMknod, 0, 1, false),
	"rename":            onPath(ChangeRename, -1, 0, false).to(-1, 1),
	"renameat":          onPath(ChangeRename, 0, 1, false).to(2, 3),
	"renameat2":         onPath(ChangeRename, 0, 1, false).to(2, 3).with(4, renameFlags),
	"link":              onPath(ChangeLink, -1, 0, false).to(-1, 1),
	"linkat":            onPath(ChangeLink, 0, 1, false).to(2, 3).with(4, linkFlags),
	"symlink":           onPath(ChangeSymlink, -1, 1, false),
	"symlinkat":         onPath(ChangeSymlink, 1, 2, false),
	"chmod":             onPath(ChangeChmod, -1, 0, true),
	"fchmod":            onFD(ChangeChmod, 0),
	"fchmodat":          onPath(ChangeChmod, 0, 1, true),
	"fchmodat2":         onPath(ChangeChmod, 0, 1, true).with(3, atFlags),
	"chown":             onPath(ChangeChown, -1, 0, true),
	"lchown":            onPath(ChangeChown, -1, 0, false),
	"fchown":            onFD(ChangeChown, 0),
	"fchownat":          onPath(ChangeChown, 0, 1, true).with(4, atFlags),
	"open_by_handle_at": onFD(0, -1).with(2, handleFlags),
}

// watchNumbers are the trapped calls' numbers. arm64 (the generic table)
// has only the *at forms.
var watchNumbers = map[string][]syscallNr{
	"amd64": {
		{"openat", 257}, {"open", 2}, {"creat", 85}, {"openat2", 437}, {"truncate", 76},
		{"unlink", 87}, {"unlinkat", 263}, {"rmdir", 84}, {"mkdir", 83}, {"mkdirat", 258},
		{"mknod", 133}, {"mknodat", 259}, {"rename", 82}, {"renameat", 264}, {"renameat2", 316},
		{"link", 86}, {"linkat", 265}, {"symlink", 88}, {"symlinkat", 266},
		{"chmod", 90}, {"fchmod", 91}, {"fchmodat", 268}, {"fchmodat2", 452},
		{"chown", 92}, {"lchown", 94}, {"fchown", 93}, {"fchownat", 260}, {"open_by_handle_at", 304},
	},
	"arm64": {
		{"openat", 56}, {"openat2", 437}, {"truncate", 45}, {"unlinkat", 35}, {"mkdirat", 34},
		{"mknodat", 33}, {"renameat", 38}, {"renameat2", 276}, {"linkat", 37}, {"symlinkat", 36},
		{"fchmod", 52}, {"fchmodat", 53}, {"fchmodat2", 452}, {"fchown", 55}, {"fchownat", 54},
		{"open_by_handle_at", 265},
	},
}

// watchCalls lists the trapped calls on goarch.
func watchCalls(goarch string) ([]trapped, bool) {
	nrs, ok := watchNumbers[goarch]
	if !ok {
		return nil, false
	}
	out := make([]trapped, len(nrs))
	for i, n := range nrs {
		out[i] = trapped{name: n.name, nr: n.nr, shape: callShapes[n.name]}
	}
	return out, true
}

// Open flags the watch reads. O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_EXCL,
// O_PATH and __O_TMPFILE have the same values on amd64 and arm64;
// O_NOFOLLOW does not, and is read from the host's table (the filter
// lets calls of another architecture through to the first filter, which
// kills them).
const (
	writeOpenFlags = unix.O_WRONLY | unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC
	oTmpfile       = 0o20000000 // __O_TMPFILE: an unnamed file, named later by linkat
	renameExchange = 2          // RENAME_EXCHANGE
	renameWhiteout = 4          // RENAME_WHITEOUT
	atFDCWD        = -100
	maxSymlinks    = 40 // the kernel's MAXSYMLINKS
)

// watchProgram builds the second filter: the trapped calls return
// SECCOMP_RET_USER_NOTIF (open, openat and open_by_handle_at only with
// flags that may write, so that reading never waits for mnemos), every
// other call is allowed here and left to the first filter.
func watchProgram(audit uint32, x32 bool, calls []trapped) ([]unix.SockFilter, error) {
	var a asm
	a.load(offArch)
	a.jeq(audit, "", "allow")
	a.load(offNr)
	if x32 {
		a.jge(x32Bit, "allow", "")
	}
	for i, c := range calls {
		if c.shape.of == openFlags || c.shape.of == handleFlags {
			a.jeq(c.nr, fmt.Sprintf("flags%d", i), "")
		} else {
			a.jeq(c.nr, "notify", "")
		}
	}
	a.ret(retAllow)
	for i, c := range calls {
		if c.shape.of == openFlags || c.shape.of == handleFlags {
			a.label(fmt.Sprintf("flags%d", i))
			a.load(argLow(int(c.shape.flags)))
			a.jset(writeOpenFlags, "notify", "allow")
		}
	}
	a.label("notify")
	a.ret(unix.SECCOMP_RET_USER_NOTIF)
	a.label("allow")
	a.ret(retAllow)
	return a.assemble()
}

// watchProgramFor is watchProgram for the host.
func watchProgramFor(goarch string) ([]unix.SockFilter, error) {
	arch, ok := archFor(goarch)
	calls, ok2 := watchCalls(goarch)
	if !ok || !ok2 {
		return nil, fmt.Errorf("no watch of changes on %s (amd64 and arm64 only)", goarch)
	}
	return watchProgram(arch.audit, arch.x32, calls)
}

// The kernel's structures for user notification (linux/seccomp.h).
type seccompNotifData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompNotifData
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// notifBuf holds a notification with room for a larger one from a newer
// kernel (SECCOMP_GET_NOTIF_SIZES); probeWatch refuses kernels whose
// structures do not fit.
type notifBuf struct {
	seccompNotif
	_ [256 - unsafe.Sizeof(seccompNotif{})]byte
}

type respBuf struct {
	seccompNotifResp
	_ [64 - unsafe.Sizeof(seccompNotifResp{})]byte
}

// probeWatch reports whether changes can be watched here: the host's
// architecture has a table, the kernel offers SECCOMP_RET_USER_NOTIF,
// and its structures fit. Landlock comes with Linux 5.13, past
// SECCOMP_USER_NOTIF_FLAG_CONTINUE (5.5), so a confined start can rely on
// that.
func probeWatch() (ok bool, why string) {
	if _, ok := watchCalls(runtime.GOARCH); !ok {
		return false, fmt.Sprintf("changes are not watched on %s (amd64 and arm64 only)", runtime.GOARCH)
	}
	action := uint32(unix.SECCOMP_RET_USER_NOTIF)
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action))); errno != 0 {
		return false, fmt.Sprintf("the kernel lacks seccomp user notification: %v", errno)
	}
	var sizes struct{ notif, resp, data uint16 }
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_NOTIF_SIZES, 0, uintptr(unsafe.Pointer(&sizes))); errno != 0 {
		return false, fmt.Sprintf("the kernel does not say the sizes of seccomp notifications: %v", errno)
	}
	if uintptr(sizes.notif) > unsafe.Sizeof(notifBuf{}) || uintptr(sizes.resp) > unsafe.Sizeof(respBuf{}) ||
		uintptr(sizes.data) != unsafe.Sizeof(seccompNotifData{}) {
		return false, fmt.Sprintf("unknown seccomp notification sizes %d, %d, %d", sizes.notif, sizes.resp, sizes.data)
	}
	return true, ""
}

// installWatch installs prog on the calling thread, which must have
// no_new_privs set, and returns the listener (close-on-exec). It asks the
// kernel to let a thread it has shown to mnemos wait for the answer
// unless killed (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, Linux 5.19), so
// that a signal does not restart the call and show it again, and to wake
// mnemos on the caller's CPU (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, 6.6),
// where the kernel has them.
func installWatch(prog []unix.SockFilter) (int, error) {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	install := func(flags uintptr) (uintptr, unix.Errno) {
		fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
		return fd, errno
	}
	fd, errno := install(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
	if errno == unix.EINVAL {
		fd, errno = install(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER)
	}
	runtime.KeepAlive(prog)
	switch {
	case errno == unix.EBUSY:
		return -1, fmt.Errorf("another seccomp supervisor already watches mnemos (a run inside a watched run?): %w", errno)
	case errno != 0:
		return -1, fmt.Errorf("install the seccomp filter that watches changes: %w", errno)
	}
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	return int(fd), nil
}

// Watch serves the trapped calls of one watched command: one goroutine
// that answers each after the handler has seen it. Its methods may be
// called from any goroutine; a nil *Watch is a command not watched.
type Watch struct {
	listener int
	wake     int // an eventfd: Close writes to it
	shapes   map[uint32]callShape
	handle   atomic.Pointer[func(Change) error]
	// self is the thread that confined itself to start the command, whose
	// own calls pass unreported until it has started it; 0 for none.
	self    atomic.Int32
	done    chan struct{}
	closing sync.Once
	stats   WatchStats
	// procMem: process_vm_readv is refused here (a container's filter),
	// memory is read through /proc/TID/mem.
	procMem bool
	buf     [unix.PathMax]byte
	link    [unix.PathMax]byte
}

// startWatch installs prog on the calling (confined) thread and starts
// serving its listener with handle (nil until setHandler), letting the
// calls of thread self through. A filter the kernel refuses leaves the
// command unwatched and returns why as a note; an error once the filter
// is installed means the command must not start.
func startWatch(prog []unix.SockFilter, handle func(Change) error, self int) (w *Watch, note string, err error) {
	if prog == nil {
		return nil, "", nil
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return nil, "", fmt.Errorf("watch changes: %w", err)
	}
	fd, err := installWatch(prog)
	if err != nil {
		unix.Close(wake)
		return nil, "changes are not watched: " + err.Error(), nil
	}
	return serveWatch(fd, wake, handle, self), "", nil
}

// serveWatch starts the goroutine that serves listener.
func serveWatch(listener, wake int, handle func(Change) error, self int) *Watch {
	w := &Watch{listener: listener, wake: wake, done: make(chan struct{}), shapes: map[uint32]callShape{}}
	calls, _ := watchCalls(runtime.GOARCH)
	for _, c := range calls {
		w.shapes[c.nr] = c.shape
	}
	if handle != nil {
		w.handle.Store(&handle)
	}
	w.self.Store(int32(self))
	go w.loop()
	return w
}

// setHandler gives the watch its handler (a prepared thread's watch
// starts without one).
func (w *Watch) setHandler(handle func(Change) error) {
	if w != nil && handle != nil {
		w.handle.Store(&handle)
	}
}

// selfDone says the confined thread has started the command: from now
// on, every trapped call is the command's. It must be called on that
// thread, so that none of its own calls is still waiting.
func (w *Watch) selfDone() {
	if w != nil {
		w.self.Store(0)
	}
}

// Close stops serving and closes the listener, after which every trapped
// call of what is left of the command fails with ENOSYS; it returns what
// the watch served. Call it once the command and what it left running
// have been waited for (ReapLeftovers): by then the kernel has usually
// ended the watch itself. Close may be called more than once.
func (w *Watch) Close() WatchStats {
	if w == nil {
		return WatchStats{}
	}
	w.closing.Do(func() {
		one := [8]byte{1}
		_, _ = unix.Write(w.wake, one[:])
		<-w.done
		unix.Close(w.wake)
	})
	return w.stats
}

// loop serves the listener until the command and all its descendants
// have ended (the kernel reports POLLHUP once no process uses the filter),
// Close is called, or the listener fails; then it closes the listener.
func (w *Watch) loop() {
	defer close(w.done)
	defer unix.Close(w.listener)
	fds := []unix.PollFd{{Fd: int32(w.listener), Events: unix.POLLIN}, {Fd: int32(w.wake), Events: unix.POLLIN}}
	var n notifBuf
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			w.stats.Err = fmt.Errorf("poll the seccomp listener: %w", err)
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			if err := w.receive(&n); err != nil {
				w.stats.Err = err
				return
			}
			continue
		}
		if fds[0].Revents != 0 {
			return // POLLHUP: nothing uses the filter any more
		}
	}
}

// receive answers one notification.
func (w *Watch) receive(n *notifBuf) error {
	*n = notifBuf{}
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(w.listener), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(n))); errno != 0 {
		if errno == unix.ENOENT || errno == unix.EINTR {
			// The caller was killed or interrupted before it was read.
			return nil
		}
		return fmt.Errorf("receive a seccomp notification: %w", errno)
	}
	start := time.Now()
	w.stats.Calls++
	resp, send := w.serve(&n.seccompNotif)
	// Not counting the answer: the caller, woken on this CPU, may run
	// before it returns.
	w.stats.Busy += time.Since(start)
	if send {
		r := respBuf{seccompNotifResp: resp}
		r.ID = n.ID
		// ENOENT: the caller was interrupted or killed meanwhile.
		_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(w.listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&r)))
	}
	return nil
}

var proceed = seccompNotifResp{Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}

func refuse(errno unix.Errno) seccompNotifResp {
	return seccompNotifResp{Error: -int32(errno)}
}

// serve decides the answer to one call; send is false when the call is
// gone.
func (w *Watch) serve(n *seccompNotif) (resp seccompNotifResp, send bool) {
	if self := w.self.Load(); self != 0 && int32(n.Pid) == self {
		return proceed, true
	}
	shape, ok := w.shapes[uint32(n.Data.Nr)]
	if !ok {
		return proceed, true
	}
	c := caller{w: w, tid: int(n.Pid)}
	ch, report, errno := c.decode(shape, &n.Data.Args)
	// What was read is the call's only while it still waits: a task that
	// died meanwhile may have left its id to another.
	if !w.valid(n.ID) {
		return resp, false
	}
	if errno != 0 {
		w.stats.Refused++
		return refuse(errno), true
	}
	if !report {
		return proceed, true
	}
	handle := w.handle.Load()
	if handle == nil {
		// A change before mnemos gave a handler: not the prepared
		// thread's own, so it cannot be recorded.
		w.stats.Refused++
		return refuse(unix.EPERM), true
	}
	w.stats.Changes++
	start := time.Now()
	err := (*handle)(ch)
	w.stats.Handler += time.Since(start)
	if err != nil {
		w.stats.Refused++
		var en syscall.Errno
		if !errors.As(err, &en) || en == 0 {
			en = unix.EPERM
		}
		return refuse(en), true
	}
	return proceed, true
}

// valid reports whether notification id still waits for an answer.
func (w *Watch) valid(id uint64) bool {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(w.listener), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id)))
	return errno == 0
}

// caller is the thread that made one trapped call.
type caller struct {
	w         *Watch
	tid       int
	tgid      int
	root      string
	rootKnown bool
}

// decode reads the change a call is about to make. report is false for a
// call that changes no named file (an open that cannot write, of a pipe,
// of an O_TMPFILE); errno, when not 0, is the answer that fails the call.
func (c *caller) decode(s callShape, args *[6]uint64) (ch Change, report bool, errno unix.Errno) {
	ch = Change{Kind: s.kind, Pid: c.tid}
	follow, empty := s.follow, false
	switch s.of {
	case openFlags, openHow:
		flags := uint64(uint32(args[s.flags]))
		if s.of == openHow {
			// struct open_how: flags, mode, resolve; the kernel refuses a
			// smaller size.
			if args[s.flags+1] < 24 {
				return ch, false, 0
			}
			var how [24]byte
			if errno := c.read(args[s.flags], how[:]); errno != 0 {
				return ch, false, errno
			}
			flags = *(*uint64)(unsafe.Pointer(&how[0]))
		}
		if flags&writeOpenFlags == 0 || flags&(unix.O_PATH|oTmpfile) != 0 {
			return ch, false, 0
		}
		if flags&unix.O_NOFOLLOW != 0 || flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL {
			follow = false
		}
	case atFlags:
		flags := uint32(args[s.flags])
		follow = follow && flags&unix.AT_SYMLINK_NOFOLLOW == 0
		empty = flags&unix.AT_EMPTY_PATH != 0
	case linkFlags:
		flags := uint32(args[s.flags])
		follow = flags&unix.AT_SYMLINK_FOLLOW != 0
		empty = flags&unix.AT_EMPTY_PATH != 0
	case unlinkFlags:
		if uint32(args[s.flags])&unix.AT_REMOVEDIR != 0 {
			ch.Kind = ChangeRmdir
		}
	case renameFlags:
		if uint32(args[s.flags])&renameWhiteout != 0 {
			// It leaves a device where the file was, which overlayfs
			// needs and no one else: undo could not move the file
			// back, nor put back what it replaced.
			return ch, false, unix.EPERM
		}
		if uint32(args[s.flags])&renameExchange != 0 {
			ch.Kind = ChangeExchange
		}
	case handleFlags:
		// Opening a file by handle names no path to record.
		return ch, false, unix.EPERM
	}
	var named bool
	if s.fd >= 0 {
		ch.Path, named, errno = c.procLink("fd/" + strconv.Itoa(int(int32(args[s.fd]))))
	} else {
		ch.Path, named, errno = c.resolve(dirfdArg(args, s.dirfd), args[s.path], follow, empty)
	}
	if errno != 0 {
		return ch, false, errno
	}
	if !named && ch.Kind != ChangeLink {
		return ch, false, 0
	}
	if s.path2 >= 0 {
		var named2 bool
		ch.Path2, named2, errno = c.resolve(dirfdArg(args, s.dirfd2), args[s.path2], false, false)
		if errno != 0 {
			return ch, false, errno
		}
		if !named2 {
			return ch, false, unix.ENOENT
		}
	}
	if !named {
		// A file without a name (O_TMPFILE) gets one: to the file
		// system, a new file appears there.
		ch.Kind, ch.Path, ch.Path2 = ChangeWrite, ch.Path2, ""
	}
	return ch, true, 0
}

// dirfdArg is the directory descriptor argument i, AT_FDCWD for none.
func dirfdArg(args *[6]uint64, i int8) int32 {
	if i < 0 {
		return atFDCWD
	}
	return int32(uint32(args[i]))
}

// read copies len(b) bytes at addr in the caller's memory.
func (c *caller) read(addr uint64, b []byte) unix.Errno {
	for len(b) > 0 {
		n, errno := c.readSome(addr, b)
		if errno != 0 {
			return errno
		}
		if n == 0 {
			return unix.EFAULT
		}
		addr += uint64(n)
		b = b[n:]
	}
	return 0
}

// readSome reads at most len(b) bytes at addr, fewer where the mapping
// ends: with process_vm_readv, or through /proc/TID/mem where that call
// is refused.
func (c *caller) readSome(addr uint64, b []byte) (int, unix.Errno) {
	if addr == 0 {
		return 0, unix.EFAULT
	}
	if !c.w.procMem {
		local := []unix.Iovec{{Base: &b[0]}}
		local[0].SetLen(len(b))
		remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}
		n, err := unix.ProcessVMReadv(c.tid, local, remote, 0)
		if err == nil {
			return n, 0
		}
		if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM) {
			return 0, errnoOf(err)
		}
		if errors.Is(err, unix.ENOSYS) {
			c.w.procMem = true
		}
	}
	fd, err := unix.Open("/proc/"+strconv.Itoa(c.tid)+"/mem", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, errnoOf(err)
	}
	defer unix.Close(fd)
	n, err := unix.Pread(fd, b, int64(addr))
	if err != nil {
		if errors.Is(err, unix.EIO) {
			return 0, unix.EFAULT
		}
		return 0, errnoOf(err)
	}
	return n, 0
}

// readString reads the NUL-terminated string at addr, a page at a time
// so that a short string at the end of a mapping reads whole.
func (c *caller) readString(addr uint64) (string, unix.Errno) {
	buf := c.w.buf[:]
	page := uint64(os.Getpagesize())
	n := 0
	for n < len(buf) {
		at := addr + uint64(n)
		chunk := min(int(page-at%page), len(buf)-n)
		got, errno := c.readSome(at, buf[n:n+chunk])
		if errno != 0 {
			return "", errno
		}
		if got == 0 {
			return "", unix.EFAULT
		}
		if i := bytes.IndexByte(buf[n:n+got], 0); i >= 0 {
			return string(buf[:n+i]), 0
		}
		n += got
	}
	return "", unix.ENAMETOOLONG
}

// procLink reads the caller's /proc/TID/name link (cwd, root, fd/N):
// the file it names, in mnemos's view. named is false when that is not a
// file with a name (a pipe, a socket, a deleted file); see linkNamed.
func (c *caller) procLink(name string) (path string, named bool, errno unix.Errno) {
	p := "/proc/" + strconv.Itoa(c.tid) + "/" + name
	target, errno := c.readlink(p)
	if errno != 0 {
		if errno == unix.ENOENT {
			errno = unix.EBADF // no such descriptor
		}
		return "", false, errno
	}
	named, errno = linkNamed(p, target)
	return target, named, errno
}

// linkNamed reports whether target, what the /proc link p shows, is the
// name of the file p leads to: an absolute path, and, where the kernel
// marks the name deleted, a file of that very name that is the one open
// (a workspace may hold "notes (deleted)"). A file whose name was
// removed has none to record: harmless when it has no other (an
// O_TMPFILE, a deleted file), refused with EPERM when it still has one
// (a hard link), which the call would change unseen.
func linkNamed(p, target string) (bool, unix.Errno) {
	if !strings.HasPrefix(target, "/") {
		return false, 0
	}
	if !strings.HasSuffix(target, " (deleted)") {
		return true, 0
	}
	var open, st unix.Stat_t
	if err := unix.Stat(p, &open); err != nil {
		return false, errnoOf(err)
	}
	if unix.Lstat(target, &st) == nil && st.Dev == open.Dev && st.Ino == open.Ino {
		return true, 0
	}
	if open.Nlink == 0 || open.Mode&unix.S_IFMT == unix.S_IFDIR {
		return false, 0
	}
	return false, unix.EPERM
}

func (c *caller) readlink(p string) (string, unix.Errno) {
	n, err := unix.Readlink(p, c.w.link[:])
	if err != nil {
		return "", errnoOf(err)
	}
	if n >= len(c.w.link) {
		return "", unix.ENAMETOOLONG
	}
	return string(c.w.link[:n]), 0
}

// rootDir is the caller's root directory in mnemos's view: / unless it
// has changed it (chroot).
func (c *caller) rootDir() (string, unix.Errno) {
	if !c.rootKnown {
		root, named, errno := c.procLink("root")
		if errno != 0 {
			return "", errno
		}
		if !named {
			return "", unix.ENOENT
		}
		c.root, c.rootKnown = root, true
	}
	return c.root, 0
}

// threadGroup is the caller's process id (it may be a thread of it).
func (c *caller) threadGroup() (int, unix.Errno) {
	if c.tgid == 0 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(c.tid) + "/status")
		if err != nil {
			return 0, errnoOf(err)
		}
		_, rest, ok := bytes.Cut(b, []byte("\nTgid:"))
		if !ok {
			return 0, unix.ESRCH
		}
		line, _, _ := bytes.Cut(rest, []byte("\n"))
		if c.tgid, err = strconv.Atoi(string(bytes.TrimSpace(line))); err != nil {
			return 0, unix.ESRCH
		}
	}
	return c.tgid, 0
}

// resolve reads the path at addr and resolves it as the kernel would for
// the caller: relative to dirfd (AT_FDCWD: its working directory),
// absolute paths from its root. With empty, an empty path names dirfd
// itself (AT_EMPTY_PATH).
func (c *caller) resolve(dirfd int32, addr uint64, follow, empty bool) (string, bool, unix.Errno) {
	p, errno := c.readString(addr)
	if errno != 0 {
		return "", false, errno
	}
	return c.walk(dirfd, p, follow, empty)
}

// walk resolves p one element at a time in mnemos's view: symbolic links
// in the parent directories are followed, the last element's only with
// follow; /proc/self and /proc/thread-self are the caller's, and /proc's
// links to open files (/proc/PID/fd/N, cwd, root) are taken as the kernel
// shows them. Where an element does not exist, the rest is taken as
// written: nothing there to follow, and the call will fail or create it.
func (c *caller) walk(dirfd int32, p string, follow, empty bool) (string, bool, unix.Errno) {
	if p == "" {
		if !empty {
			return "", false, unix.ENOENT
		}
		if dirfd == atFDCWD {
			return c.procLink("cwd")
		}
		return c.procLink("fd/" + strconv.Itoa(int(dirfd)))
	}
	var cur string
	var named bool
	var errno unix.Errno
	switch {
	case p[0] == '/':
		cur, errno = c.rootDir()
		named = true
	case dirfd == atFDCWD:
		cur, named, errno = c.procLink("cwd")
	default:
		cur, named, errno = c.procLink("fd/" + strconv.Itoa(int(dirfd)))
	}
	if errno != 0 {
		return "", false, errno
	}
	if !named {
		return "", false, unix.ENOENT
	}
	rest := p
	links := 0
	for {
		rest = strings.TrimLeft(rest, "/")
		if rest == "" {
			return cur, true, 0
		}
		name := rest
		rest = ""
		if i := strings.IndexByte(name, '/'); i >= 0 {
			name, rest = name[:i], name[i:]
		}
		last := strings.TrimLeft(rest, "/") == ""
		switch name {
		case ".":
			continue
		case "..":
			root, errno := c.rootDir()
			if errno != 0 {
				return "", false, errno
			}
			if cur != root {
				cur = filepath.Dir(cur)
			}
			continue
		}
		if cur == "/proc" && (name == "self" || name == "thread-self") {
			tgid, errno := c.threadGroup()
			if errno != 0 {
				return "", false, errno
			}
			sub := strconv.Itoa(tgid)
			if name == "thread-self" {
				sub += "/task/" + strconv.Itoa(c.tid)
			}
			rest = sub + rest
			continue
		}
		next := filepath.Join(cur, name)
		if last && !follow {
			return next, true, 0
		}
		var st unix.Stat_t
		if err := unix.Lstat(next, &st); err != nil {
			if errors.Is(err, unix.ENOENT) {
				return filepath.Clean(next + "/" + rest), true, 0
			}
			return "", false, errnoOf(err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			if links++; links > maxSymlinks {
				return "", false, unix.ELOOP
			}
			target, errno := c.readlink(next)
			if errno != 0 {
				return "", false, errno
			}
			if procLinked(next) {
				// The kernel follows these to the open file itself; its
				// name is as the kernel shows it.
				named, errno := linkNamed(next, target)
				if errno != 0 {
					return "", false, errno
				}
				if !named {
					if last {
						return "", false, 0
					}
					return "", false, unix.ENOTDIR
				}
				cur = target
				continue
			}
			if strings.HasPrefix(target, "/") {
				if cur, errno = c.rootDir(); errno != 0 {
					return "", false, errno
				}
			}
			rest = target + "/" + rest
		case unix.S_IFDIR:
			cur = next
		default:
			if !last {
				return "", false, unix.ENOTDIR
			}
			cur = next
		}
	}
}

// procLinked reports whether p is a link in a process's /proc directory
// (/proc/PID/fd/N, /proc/PID/cwd, /proc/PID/task/TID/root...).
func procLinked(p string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	pid, _, ok := strings.Cut(rest, "/")
	if !ok || pid == "" {
		return false
	}
	for _, r := range pid {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// errnoOf is err's errno, EIO when it has none.
func errnoOf(err error) unix.Errno {
	var en unix.Errno
	if errors.As(err, &en) && en != 0 {
		return en
	}
	return unix.EIO
}
