package sandbox

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter closes what Landlock's rules leave open: sockets
// other than TCP, TCP Fast Open, io_uring, terminal injection and a few
// kernel interfaces a build never needs. It is a classic BPF program built
// here by hand, installed on the thread that starts the command, after
// no_new_privs and landlock_restrict_self and without
// SECCOMP_FILTER_FLAG_TSYNC, so only that thread and the command inherit
// it. See doc.go for what it refuses and why.

// seccompData offsets (struct seccomp_data): the system call number, the
// audit architecture, then six 64-bit arguments. Both architectures the
// filter supports are little-endian, so an argument's low 32 bits come
// first. Every argument the filter reads is an int or unsigned int, which
// the kernel truncates to those 32 bits.
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

func argLow(i int) uint32 { return uint32(offArgs + 8*i) }

// x32Bit marks a system call of the x32 ABI, which shares x86-64's audit
// architecture but numbers its calls apart.
const x32Bit = 0x40000000

// Socket arguments and flags the filter compares (the same on every
// architecture Linux supports).
const (
	afUnix      = 1
	afInet      = 2
	afInet6     = 10
	afNetlink   = 16
	sockStream  = 1
	sockDgram   = 2
	sockType    = 0xf // SOCK_TYPE_MASK: the rest are SOCK_NONBLOCK and SOCK_CLOEXEC
	ipprotoTCP  = 6
	ipprotoUDP  = 17
	msgFastOpen = 0x20000000
	tiocsti     = 0x5412
	tioclinux   = 0x541c
)

// Filter results.
const (
	retAllow  = unix.SECCOMP_RET_ALLOW
	retKill   = unix.SECCOMP_RET_KILL_PROCESS
	retEACCES = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// syscallNr is a system call the filter names.
type syscallNr struct {
	name string
	nr   uint32
}

// seccompArch is what the filter needs to know about one architecture.
type seccompArch struct {
	goarch string
	audit  uint32
	// x32 is true where calls carrying x32Bit belong to another ABI.
	x32                                                  bool
	socket, socketpair, ioctl, sendto, sendmsg, sendmmsg uint32
	// clone and unshare fail with EPERM when their flags ask for a new
	// namespace; clone3, whose flags the filter cannot read, fails with
	// ENOSYS, so that C libraries fall back to clone.
	clone, unshare, clone3 uint32
	// refused always fail with EPERM.
	refused []syscallNr
	// setID are the calls that set a file's mode, with the index of the
	// mode argument; created those that create a file, with the index of
	// the flags (-1: always creates) and of the mode. Setting the set-user-
	// or set-group-ID bit fails with EPERM: root's command could otherwise
	// leave a set-user-ID root program behind for anyone to run.
	setID   []modeArg
	created []modeArg
	// openat2 takes its mode in a structure the filter cannot read: it
	// fails with ENOSYS, and programs fall back to openat.
	openat2 uint32
}

// modeArg is a system call and where its flags and mode are.
type modeArg struct {
	nr          uint32
	flags, mode int
}

// setIDBits are S_ISUID and S_ISGID; createFlags O_CREAT and __O_TMPFILE.
const (
	setIDBits   = 0o6000
	createFlags = 0o100 | 0o20000000
)

// cloneNewNamespaces are the clone and unshare flags that make a new
// namespace: CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
// CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET and CLONE_NEWTIME.
const cloneNewNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWTIME

// mountCalls are the system calls that change mounts, and setns; their
// numbers are the same on amd64 and arm64 from open_tree on.
func mountCalls(mount, umount2, pivotRoot, setns uint32) []syscallNr {
	return []syscallNr{
		{"mount", mount}, {"umount2", umount2}, {"pivot_root", pivotRoot}, {"setns", setns},
		{"open_tree", 428}, {"move_mount", 429}, {"fsopen", 430}, {"fsconfig", 431}, {"fsmount", 432},
		{"fspick", 433}, {"mount_setattr", 442},
	}
}

// archFor returns the system call table for a Go architecture. The filter
// is built for amd64 and arm64 only.
func archFor(goarch string) (seccompArch, bool) {
	ioUring := []syscallNr{{"io_uring_setup", 425}, {"io_uring_enter", 426}, {"io_uring_register", 427}}
	switch goarch {
	case "amd64":
		return seccompArch{
			goarch: goarch, audit: unix.AUDIT_ARCH_X86_64, x32: true,
			socket: 41, socketpair: 53, ioctl: 16, sendto: 44, sendmsg: 46, sendmmsg: 307,
			clone: 56, unshare: 272, clone3: 435, openat2: 437,
			setID: []modeArg{{nr: 90, mode: 1}, {nr: 91, mode: 1}, {nr: 268, mode: 2}, {nr: 452, mode: 2}},
			created: []modeArg{{nr: 2, flags: 1, mode: 2}, {nr: 257, flags: 2, mode: 3}, {nr: 85, flags: -1, mode: 1},
				{nr: 133, flags: -1, mode: 1}, {nr: 259, flags: -1, mode: 2}},
			refused: append(append(ioUring, mountCalls(165, 166, 155, 308)...),
				syscallNr{"bpf", 321}, syscallNr{"perf_event_open", 298}, syscallNr{"userfaultfd", 323},
				syscallNr{"keyctl", 250}, syscallNr{"add_key", 248}, syscallNr{"request_key", 249}),
		}, true
	case "arm64":
		return seccompArch{
			goarch: goarch, audit: unix.AUDIT_ARCH_AARCH64,
			socket: 198, socketpair: 199, ioctl: 29, sendto: 206, sendmsg: 211, sendmmsg: 269,
			clone: 220, unshare: 97, clone3: 435, openat2: 437,
			setID:   []modeArg{{nr: 52, mode: 1}, {nr: 53, mode: 2}, {nr: 452, mode: 2}},
			created: []modeArg{{nr: 56, flags: 2, mode: 3}, {nr: 33, flags: -1, mode: 2}},
			refused: append(append(ioUring, mountCalls(40, 39, 41, 268)...),
				syscallNr{"bpf", 280}, syscallNr{"perf_event_open", 241}, syscallNr{"userfaultfd", 282},
				syscallNr{"keyctl", 219}, syscallNr{"add_key", 217}, syscallNr{"request_key", 218}),
		}, true
	}
	return seccompArch{}, false
}

// filterPolicy is what the filter allows for one spec.
type filterPolicy struct {
	// inet allows TCP sockets (SOCK_STREAM, protocol 0 or IPPROTO_TCP) in
	// AF_INET and AF_INET6.
	inet bool
	// udp also allows UDP sockets (SOCK_DGRAM, protocol 0 or IPPROTO_UDP).
	udp bool
	// noFastOpen refuses sends with MSG_FASTOPEN, which connect without
	// the connect hook Landlock's port rules rely on.
	noFastOpen bool
}

func policyFor(s Spec) filterPolicy {
	return filterPolicy{inet: s.Network, udp: s.Network && s.UDP, noFastOpen: s.Network && len(s.ConnectPorts) > 0}
}

// describe is the line Applied.Notes carries for the filter.
func (p filterPolicy) describe() string {
	var b strings.Builder
	b.WriteString("seccomp: ")
	switch {
	case !p.inet:
		b.WriteString("only unix and netlink sockets")
	case p.udp:
		b.WriteString("only unix, netlink, TCP and UDP sockets (MPTCP, SCTP, raw and packet sockets refused)")
	default:
		b.WriteString("only unix, netlink and TCP sockets (UDP, MPTCP, SCTP, raw and packet sockets refused)")
	}
	if p.noFastOpen {
		b.WriteString("; TCP Fast Open sends refused")
	}
	b.WriteString("; io_uring, TIOCSTI, TIOCLINUX, bpf, perf_event_open, userfaultfd, the kernel keyring, new namespaces, setns, mounts and set-user/group-ID modes refused")
	return b.String()
}

// seccompProgram builds the filter: a call from another architecture
// kills the process (x32 calls fail with ENOSYS), refused sockets fail
// with EACCES like Landlock's network refusals, the other refused calls
// with EPERM, and everything else is allowed.
func seccompProgram(arch seccompArch, p filterPolicy) ([]unix.SockFilter, error) {
	var a asm
	a.load(offArch)
	a.jeq(arch.audit, "", "kill")
	a.load(offNr)
	if arch.x32 {
		a.jge(x32Bit, "enosys", "")
	}
	a.jeq(arch.socket, "socket", "")
	a.jeq(arch.socketpair, "socketpair", "")
	a.jeq(arch.ioctl, "ioctl", "")
	a.jeq(arch.clone, "nsflags", "")
	a.jeq(arch.unshare, "nsflags", "")
	a.jeq(arch.clone3, "enosys", "")
	a.jeq(arch.openat2, "enosys", "")
	for i, c := range arch.setID {
		a.jeq(c.nr, fmt.Sprintf("mode%d", i), "")
	}
	for i, c := range arch.created {
		a.jeq(c.nr, fmt.Sprintf("create%d", i), "")
	}
	for _, c := range arch.refused {
		a.jeq(c.nr, "eperm", "")
	}
	if p.noFastOpen {
		a.jeq(arch.sendto, "flags3", "")
		a.jeq(arch.sendmmsg, "flags3", "")
		a.jeq(arch.sendmsg, "flags2", "")
	}
	a.ret(retAllow)

	for i, c := range arch.setID {
		a.label(fmt.Sprintf("mode%d", i))
		a.load(argLow(c.mode))
		a.jset(setIDBits, "eperm", "allow")
	}
	for i, c := range arch.created {
		a.label(fmt.Sprintf("create%d", i))
		if c.flags >= 0 {
			a.load(argLow(c.flags))
			a.jset(createFlags, "", "allow")
		}
		a.load(argLow(c.mode))
		a.jset(setIDBits, "eperm", "allow")
	}

	a.label("nsflags")
	a.load(argLow(0))
	a.jset(cloneNewNamespaces, "eperm", "allow")

	a.label("ioctl")
	a.load(argLow(1))
	a.jeq(tiocsti, "eperm", "")
	a.jeq(tioclinux, "eperm", "allow")

	if p.noFastOpen {
		a.label("flags3")
		a.load(argLow(3))
		a.jset(msgFastOpen, "eacces", "allow")
		a.label("flags2")
		a.load(argLow(2))
		a.jset(msgFastOpen, "eacces", "allow")
	}

	a.label("socketpair")
	a.load(argLow(0))
	a.jeq(afUnix, "allow", "eacces")

	a.label("socket")
	a.load(argLow(0))
	a.jeq(afUnix, "allow", "")
	if p.inet {
		a.jeq(afNetlink, "allow", "")
		a.jeq(afInet, "inet", "")
		a.jeq(afInet6, "inet", "eacces")
		a.label("inet")
		a.load(argLow(1))
		a.and(sockType)
		if p.udp {
			a.jeq(sockDgram, "dgram", "")
		}
		a.jeq(sockStream, "", "eacces")
		a.load(argLow(2))
		a.jeq(0, "allow", "")
		a.jeq(ipprotoTCP, "allow", "eacces")
		if p.udp {
			a.label("dgram")
			a.load(argLow(2))
			a.jeq(0, "allow", "")
			a.jeq(ipprotoUDP, "allow", "eacces")
		}
	} else {
		a.jeq(afNetlink, "allow", "eacces")
	}

	a.label("allow")
	a.ret(retAllow)
	a.label("eacces")
	a.ret(retEACCES)
	a.label("eperm")
	a.ret(retEPERM)
	a.label("enosys")
	a.ret(retENOSYS)
	a.label("kill")
	a.ret(retKill)
	return a.assemble()
}

// asm assembles a classic BPF program whose conditional jumps name labels
// ("" is the next instruction). Jumps only go forward, at most 255
// instructions.
type asm struct {
	ins    []unix.SockFilter
	fixups []fixup
	labels map[string]int
}

type fixup struct {
	at     int
	jt, jf string
}

func (a *asm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.ins)
}

func (a *asm) emit(code uint16, k uint32) {
	a.ins = append(a.ins, unix.SockFilter{Code: code, K: k})
}

func (a *asm) load(off uint32) { a.emit(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off) }
func (a *asm) and(k uint32)    { a.emit(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, k) }
func (a *asm) ret(k uint32)    { a.emit(unix.BPF_RET|unix.BPF_K, k) }

func (a *asm) jump(op uint16, k uint32, jt, jf string) {
	a.fixups = append(a.fixups, fixup{at: len(a.ins), jt: jt, jf: jf})
	a.emit(unix.BPF_JMP|op|unix.BPF_K, k)
}

func (a *asm) jeq(k uint32, jt, jf string)  { a.jump(unix.BPF_JEQ, k, jt, jf) }
func (a *asm) jge(k uint32, jt, jf string)  { a.jump(unix.BPF_JGE, k, jt, jf) }
func (a *asm) jset(k uint32, jt, jf string) { a.jump(unix.BPF_JSET, k, jt, jf) }

func (a *asm) assemble() ([]unix.SockFilter, error) {
	offset := func(at int, label string) (uint8, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := a.labels[label]
		if !ok {
			return 0, fmt.Errorf("seccomp filter: no label %q", label)
		}
		d := to - at - 1
		if d < 0 || d > 255 {
			return 0, fmt.Errorf("seccomp filter: jump from %d to %q (%d) out of range", at, label, to)
		}
		return uint8(d), nil
	}
	for _, f := range a.fixups {
		jt, err := offset(f.at, f.jt)
		if err != nil {
			return nil, err
		}
		jf, err := offset(f.at, f.jf)
		if err != nil {
			return nil, err
		}
		a.ins[f.at].Jt, a.ins[f.at].Jf = jt, jf
	}
	if len(a.ins) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp filter: %d instructions", len(a.ins))
	}
	return a.ins, nil
}

// installSeccomp installs prog on the calling thread only (no TSYNC). The
// thread must have no_new_privs set.
func installSeccomp(prog []unix.SockFilter) error {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("install the seccomp filter: %w", errno)
	}
	return nil
}

// probeSeccomp reports whether the filter can be installed here: the
// architecture is one it is built for, and the kernel takes filters that
// kill the process and return an errno. why says why not.
func probeSeccomp() (ok bool, why string) {
	if _, ok := archFor(runtime.GOARCH); !ok {
		return false, fmt.Sprintf("no seccomp filter for %s (amd64 and arm64 only)", runtime.GOARCH)
	}
	for _, action := range []uint32{retKill, unix.SECCOMP_RET_ERRNO} {
		_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
		if errno != 0 {
			return false, fmt.Sprintf("the kernel refuses seccomp filters: %v", errno)
		}
	}
	return true, ""
}
