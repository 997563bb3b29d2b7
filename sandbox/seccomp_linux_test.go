package sandbox

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// call is one system call as the filter sees it (struct seccomp_data).
type call struct {
	arch uint32
	nr   uint32
	args [6]uint64
}

// runBPF interprets the classic BPF subset the filter uses, the way the
// kernel runs a seccomp filter over seccomp_data.
func runBPF(t testing.TB, prog []unix.SockFilter, c call) uint32 {
	t.Helper()
	var data [64]byte
	binary.LittleEndian.PutUint32(data[offNr:], c.nr)
	binary.LittleEndian.PutUint32(data[offArch:], c.arch)
	for i, a := range c.args {
		binary.LittleEndian.PutUint64(data[offArgs+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if in.K%4 != 0 || in.K+4 > uint32(len(data)) {
				t.Fatalf("pc %d: load at %d", pc, in.K)
			}
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= in.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			var taken bool
			switch in.Code &^ (unix.BPF_JMP | unix.BPF_K) {
			case unix.BPF_JEQ:
				taken = acc == in.K
			case unix.BPF_JGE:
				taken = acc >= in.K
			default:
				taken = acc&in.K != 0
			}
			if taken {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("pc %d: opcode %#x", pc, in.Code)
		}
	}
	t.Fatal("program ran off its end")
	return 0
}

func retName(r uint32) string {
	switch r {
	case retAllow:
		return "allow"
	case retKill:
		return "kill"
	case retEACCES:
		return "EACCES"
	case retEPERM:
		return "EPERM"
	case retENOSYS:
		return "ENOSYS"
	}
	return fmt.Sprintf("%#x", r)
}

// wantSocket is the rule the filter must implement for socket(2).
func wantSocket(p filterPolicy, domain, typ, proto uint32) uint32 {
	switch domain {
	case afUnix, afNetlink:
		return retAllow
	case afInet, afInet6:
		if !p.inet {
			return retEACCES
		}
		switch typ & sockType {
		case sockStream:
			if proto == 0 || proto == ipprotoTCP {
				return retAllow
			}
		case sockDgram:
			if p.udp && (proto == 0 || proto == ipprotoUDP) {
				return retAllow
			}
		}
	}
	return retEACCES
}

func TestSeccompProgram(t *testing.T) {
	const (
		sockRaw    = 3
		sockSeqpkt = 5
		sockPacket = 10
		nonblock   = unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC
		afPacket   = 17
		afVsock    = 40
		afAlg      = 38
		mptcp      = 262
		sctp       = 132
		icmp       = 1
		high       = 1 << 32 // set in the unused upper half of an argument
	)
	noNet := filterPolicy{}
	tcpOnly := filterPolicy{inet: true}
	withUDP := filterPolicy{inet: true, udp: true}
	ports := filterPolicy{inet: true, udp: true, noFastOpen: true}
	all := []filterPolicy{noNet, tcpOnly, withUDP, ports}
	type tcase struct {
		name     string
		sys      func(a seccompArch) uint32
		args     [6]uint64
		policies []filterPolicy
		want     string
	}
	socket := func(a seccompArch) uint32 { return a.socket }
	socketpair := func(a seccompArch) uint32 { return a.socketpair }
	ioctl := func(a seccompArch) uint32 { return a.ioctl }
	sendto := func(a seccompArch) uint32 { return a.sendto }
	sendmsg := func(a seccompArch) uint32 { return a.sendmsg }
	sendmmsg := func(a seccompArch) uint32 { return a.sendmmsg }
	nr := func(n uint32) func(seccompArch) uint32 { return func(seccompArch) uint32 { return n } }
	// modeCall is the setID call whose mode is argument index 2 (fchmodat)
	// or 1 (fchmod), on either architecture.
	modeCall := func(which int) func(seccompArch) uint32 {
		return func(a seccompArch) uint32 {
			want := 2
			if which == 0 {
				want = 1
			}
			for _, c := range a.setID {
				if c.mode == want && (which == 1) == (c.nr == 268 || c.nr == 53) {
					return c.nr
				}
			}
			return a.setID[0].nr
		}
	}
	createCall := func(name string) func(seccompArch) uint32 {
		return func(a seccompArch) uint32 {
			nrs := map[string]map[string]uint32{"amd64": {"openat": 257, "mknodat": 259}, "arm64": {"openat": 56, "mknodat": 33}}
			return nrs[a.goarch][name]
		}
	}
	tests := []tcase{
		{"unix socket", socket, [6]uint64{afUnix, sockStream | nonblock}, all, "allow"},
		{"netlink socket", socket, [6]uint64{afNetlink, sockRaw, 0}, all, "allow"},
		{"unix socketpair", socketpair, [6]uint64{afUnix, sockDgram}, all, "allow"},
		{"inet socketpair", socketpair, [6]uint64{afInet, sockStream}, all, "EACCES"},
		{"tcp without network", socket, [6]uint64{afInet, sockStream, 0}, []filterPolicy{noNet}, "EACCES"},
		{"tcp6 without network", socket, [6]uint64{afInet6, sockStream, ipprotoTCP}, []filterPolicy{noNet}, "EACCES"},
		{"udp without network", socket, [6]uint64{afInet, sockDgram, 0}, []filterPolicy{noNet}, "EACCES"},
		{"tcp", socket, [6]uint64{afInet, sockStream | nonblock, 0}, []filterPolicy{tcpOnly, withUDP, ports}, "allow"},
		{"tcp6 by name", socket, [6]uint64{afInet6, sockStream, ipprotoTCP}, []filterPolicy{tcpOnly, withUDP, ports}, "allow"},
		{"tcp, upper halves ignored as the kernel does", socket, [6]uint64{high | afInet, high | sockStream, high}, []filterPolicy{tcpOnly}, "allow"},
		{"mptcp", socket, [6]uint64{afInet, sockStream, mptcp}, all, "EACCES"},
		{"mptcp6 nonblocking", socket, [6]uint64{afInet6, sockStream | nonblock, mptcp}, all, "EACCES"},
		{"sctp stream", socket, [6]uint64{afInet, sockStream, sctp}, all, "EACCES"},
		{"sctp seqpacket", socket, [6]uint64{afInet, sockSeqpkt, sctp}, all, "EACCES"},
		{"udp with udp", socket, [6]uint64{afInet, sockDgram | nonblock, 0}, []filterPolicy{withUDP, ports}, "allow"},
		{"udp6 by name", socket, [6]uint64{afInet6, sockDgram, ipprotoUDP}, []filterPolicy{withUDP}, "allow"},
		{"udp without udp", socket, [6]uint64{afInet, sockDgram, 0}, []filterPolicy{tcpOnly}, "EACCES"},
		{"ping socket", socket, [6]uint64{afInet, sockDgram, icmp}, all, "EACCES"},
		{"raw socket", socket, [6]uint64{afInet, sockRaw, icmp}, all, "EACCES"},
		{"SOCK_PACKET in AF_INET", socket, [6]uint64{afInet, sockPacket, 0}, all, "EACCES"},
		{"packet socket", socket, [6]uint64{afPacket, sockRaw, 0}, all, "EACCES"},
		{"vsock", socket, [6]uint64{afVsock, sockStream, 0}, all, "EACCES"},
		{"AF_ALG", socket, [6]uint64{afAlg, sockSeqpkt, 0}, all, "EACCES"},
		{"TIOCSTI", ioctl, [6]uint64{0, tiocsti}, all, "EPERM"},
		{"TIOCSTI, upper half set", ioctl, [6]uint64{0, high | tiocsti}, all, "EPERM"},
		{"TIOCLINUX", ioctl, [6]uint64{0, tioclinux}, all, "EPERM"},
		{"TCGETS", ioctl, [6]uint64{0, unix.TCGETS}, all, "allow"},
		{"TIOCSWINSZ", ioctl, [6]uint64{0, unix.TIOCSWINSZ}, all, "allow"},
		{"sendto", sendto, [6]uint64{3, 0, 1, unix.MSG_NOSIGNAL}, all, "allow"},
		{"sendto MSG_FASTOPEN, ports open", sendto, [6]uint64{3, 0, 1, msgFastOpen}, []filterPolicy{noNet, tcpOnly, withUDP}, "allow"},
		{"sendto MSG_FASTOPEN", sendto, [6]uint64{3, 0, 1, msgFastOpen | unix.MSG_NOSIGNAL}, []filterPolicy{ports}, "EACCES"},
		{"sendmsg MSG_FASTOPEN", sendmsg, [6]uint64{3, 0, msgFastOpen}, []filterPolicy{ports}, "EACCES"},
		{"sendmsg", sendmsg, [6]uint64{3, 0, unix.MSG_DONTWAIT}, all, "allow"},
		{"sendmmsg MSG_FASTOPEN", sendmmsg, [6]uint64{3, 0, 1, msgFastOpen}, []filterPolicy{ports}, "EACCES"},
		{"io_uring_setup", nr(425), [6]uint64{1}, all, "EPERM"},
		{"io_uring_enter", nr(426), [6]uint64{}, all, "EPERM"},
		{"io_uring_register", nr(427), [6]uint64{}, all, "EPERM"},
		{"clone of a thread", func(a seccompArch) uint32 { return a.clone }, [6]uint64{unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD}, all, "allow"},
		{"clone, new user namespace", func(a seccompArch) uint32 { return a.clone }, [6]uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}, all, "EPERM"},
		{"clone, new mount namespace", func(a seccompArch) uint32 { return a.clone }, [6]uint64{unix.CLONE_NEWNS}, all, "EPERM"},
		{"clone, new time namespace", func(a seccompArch) uint32 { return a.clone }, [6]uint64{unix.CLONE_NEWTIME}, all, "EPERM"},
		{"clone, new net namespace, upper half set", func(a seccompArch) uint32 { return a.clone }, [6]uint64{high | unix.CLONE_NEWNET}, all, "EPERM"},
		{"unshare of the file table", func(a seccompArch) uint32 { return a.unshare }, [6]uint64{unix.CLONE_FILES | unix.CLONE_FS}, all, "allow"},
		{"unshare, new user namespace", func(a seccompArch) uint32 { return a.unshare }, [6]uint64{unix.CLONE_NEWUSER}, all, "EPERM"},
		{"unshare, new pid namespace", func(a seccompArch) uint32 { return a.unshare }, [6]uint64{unix.CLONE_NEWPID}, all, "EPERM"},
		{"clone3", func(a seccompArch) uint32 { return a.clone3 }, [6]uint64{}, all, "ENOSYS"},
		{"openat2", func(a seccompArch) uint32 { return a.openat2 }, [6]uint64{}, all, "ENOSYS"},
		{"fchmodat setuid", modeCall(1), [6]uint64{0, 0, 0o4755}, all, "EPERM"},
		{"fchmodat setgid", modeCall(1), [6]uint64{0, 0, 0o2755}, all, "EPERM"},
		{"fchmodat plain", modeCall(1), [6]uint64{0, 0, 0o755}, all, "allow"},
		{"fchmod setuid", modeCall(0), [6]uint64{3, 0o4711}, all, "EPERM"},
		{"fchmod sticky", modeCall(0), [6]uint64{3, 0o1777}, all, "allow"},
		{"openat creating setuid", createCall("openat"), [6]uint64{0, 0, unix.O_CREAT | unix.O_WRONLY, 0o4755}, all, "EPERM"},
		{"openat creating plain", createCall("openat"), [6]uint64{0, 0, unix.O_CREAT | unix.O_WRONLY, 0o644}, all, "allow"},
		{"openat, no O_CREAT, mode ignored", createCall("openat"), [6]uint64{0, 0, unix.O_RDONLY, 0o6777}, all, "allow"},
		{"openat O_TMPFILE setgid", createCall("openat"), [6]uint64{0, 0, unix.O_TMPFILE | unix.O_RDWR, 0o2755}, all, "EPERM"},
		{"mknodat setuid", createCall("mknodat"), [6]uint64{0, 0, unix.S_IFREG | 0o4755}, all, "EPERM"},
		{"x32 socket", func(a seccompArch) uint32 { return x32Bit | a.socket }, [6]uint64{afInet, sockRaw}, all, "x32"},
	}
	for _, goarch := range []string{"amd64", "arm64"} {
		arch, ok := archFor(goarch)
		if !ok {
			t.Fatalf("no table for %s", goarch)
		}
		for _, p := range all {
			prog, err := seccompProgram(arch, p)
			if err != nil {
				t.Fatal(err)
			}
			run := func(nr uint32, args [6]uint64) string {
				return retName(runBPF(t, prog, call{arch: arch.audit, nr: nr, args: args}))
			}
			for _, tt := range tests {
				if !containsPolicy(tt.policies, p) {
					continue
				}
				want := tt.want
				if want == "x32" {
					want = "allow"
					if arch.x32 {
						want = "ENOSYS"
					}
				}
				if got := run(tt.sys(arch), tt.args); got != want {
					t.Errorf("%s %+v: %s = %s, want %s", goarch, p, tt.name, got, want)
				}
			}
			for _, c := range arch.refused {
				if got := run(c.nr, [6]uint64{}); got != "EPERM" {
					t.Errorf("%s %+v: %s = %s, want EPERM", goarch, p, c.name, got)
				}
			}
			// Everyday calls pass: read, write, openat, execve, connect.
			for _, n := range []uint32{0, 1, 56, 57, 59, 63, 64, 221, 203, 42} {
				if !isNamed(arch, n) && run(n, [6]uint64{3}) != "allow" {
					t.Errorf("%s %+v: call %d refused", goarch, p, n)
				}
			}
			// Another architecture's calls kill the process: i386 and arm
			// number their calls differently (socketcall multiplexes).
			for _, foreign := range []uint32{unix.AUDIT_ARCH_I386, unix.AUDIT_ARCH_ARM, unix.AUDIT_ARCH_X86_64, unix.AUDIT_ARCH_AARCH64} {
				if foreign == arch.audit {
					continue
				}
				if got := retName(runBPF(t, prog, call{arch: foreign, nr: 102})); got != "kill" {
					t.Errorf("%s: a call from arch %#x = %s, want kill", goarch, foreign, got)
				}
			}
		}
	}
	if _, ok := archFor("riscv64"); ok {
		t.Error("riscv64 has a table, but no test")
	}
}

func containsPolicy(ps []filterPolicy, p filterPolicy) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

func isNamed(a seccompArch, nr uint32) bool {
	if nr == a.socket || nr == a.socketpair || nr == a.ioctl || nr == a.sendto || nr == a.sendmsg || nr == a.sendmmsg ||
		nr == a.clone || nr == a.unshare || nr == a.clone3 || nr == a.openat2 {
		return true
	}
	for _, c := range slices.Concat(a.setID, a.created) {
		if c.nr == nr {
			return true
		}
	}
	for _, c := range a.refused {
		if c.nr == nr {
			return true
		}
	}
	return false
}

// The table for the machine the tests run on agrees with x/sys/unix.
func TestSeccompArchMatchesHost(t *testing.T) {
	arch, ok := archFor(runtime.GOARCH)
	if !ok {
		t.Skipf("no seccomp filter for %s", runtime.GOARCH)
	}
	named := map[string]uint32{
		"socket": arch.socket, "socketpair": arch.socketpair, "ioctl": arch.ioctl,
		"sendto": arch.sendto, "sendmsg": arch.sendmsg, "sendmmsg": arch.sendmmsg,
		"clone": arch.clone, "unshare": arch.unshare, "clone3": arch.clone3,
	}
	for _, c := range arch.refused {
		named[c.name] = c.nr
	}
	host := map[string]uint32{
		"socket": unix.SYS_SOCKET, "socketpair": unix.SYS_SOCKETPAIR, "ioctl": unix.SYS_IOCTL,
		"sendto": unix.SYS_SENDTO, "sendmsg": unix.SYS_SENDMSG, "sendmmsg": unix.SYS_SENDMMSG,
		"io_uring_setup": unix.SYS_IO_URING_SETUP, "io_uring_enter": unix.SYS_IO_URING_ENTER,
		"io_uring_register": unix.SYS_IO_URING_REGISTER, "bpf": unix.SYS_BPF,
		"perf_event_open": unix.SYS_PERF_EVENT_OPEN, "userfaultfd": unix.SYS_USERFAULTFD,
		"keyctl": unix.SYS_KEYCTL, "add_key": unix.SYS_ADD_KEY, "request_key": unix.SYS_REQUEST_KEY,
		"clone": unix.SYS_CLONE, "unshare": unix.SYS_UNSHARE, "clone3": unix.SYS_CLONE3, "setns": unix.SYS_SETNS,
		"mount": unix.SYS_MOUNT, "umount2": unix.SYS_UMOUNT2, "pivot_root": unix.SYS_PIVOT_ROOT,
		"open_tree": unix.SYS_OPEN_TREE, "move_mount": unix.SYS_MOVE_MOUNT, "fsopen": unix.SYS_FSOPEN,
		"fsconfig": unix.SYS_FSCONFIG, "fsmount": unix.SYS_FSMOUNT, "fspick": unix.SYS_FSPICK,
		"mount_setattr": unix.SYS_MOUNT_SETATTR,
	}
	if len(named) != len(host) {
		t.Errorf("table names %d calls, want %d", len(named), len(host))
	}
	for name, nr := range host {
		if named[name] != nr {
			t.Errorf("%s is %d in the table, %d on %s", name, named[name], nr, runtime.GOARCH)
		}
	}
	if runtime.GOARCH == "amd64" {
		for _, c := range []struct {
			name  string
			table []modeArg
			i     int
			nr    uint32
		}{{"chmod", arch.setID, 0, 90}, {"fchmod", arch.setID, 1, unix.SYS_FCHMOD}, {"fchmodat", arch.setID, 2, unix.SYS_FCHMODAT},
			{"open", arch.created, 0, unix.SYS_OPEN}, {"openat", arch.created, 1, unix.SYS_OPENAT}, {"creat", arch.created, 2, unix.SYS_CREAT},
			{"mknod", arch.created, 3, unix.SYS_MKNOD}, {"mknodat", arch.created, 4, unix.SYS_MKNODAT}} {
			if c.table[c.i].nr != c.nr {
				t.Errorf("%s is %d in the table, %d on amd64", c.name, c.table[c.i].nr, c.nr)
			}
		}
		if arch.openat2 != unix.SYS_OPENAT2 {
			t.Errorf("openat2 is %d in the table, %d on amd64", arch.openat2, unix.SYS_OPENAT2)
		}
	}
	consts := map[string][2]uint32{
		"TIOCSTI": {tiocsti, unix.TIOCSTI}, "TIOCLINUX": {tioclinux, unix.TIOCLINUX},
		"AF_UNIX": {afUnix, unix.AF_UNIX}, "AF_INET": {afInet, unix.AF_INET}, "AF_INET6": {afInet6, unix.AF_INET6},
		"AF_NETLINK": {afNetlink, unix.AF_NETLINK}, "MSG_FASTOPEN": {msgFastOpen, unix.MSG_FASTOPEN},
		"SOCK_STREAM": {sockStream, unix.SOCK_STREAM}, "SOCK_DGRAM": {sockDgram, unix.SOCK_DGRAM},
	}
	for name, v := range consts {
		if v[0] != v[1] {
			t.Errorf("%s = %#x, unix says %#x", name, v[0], v[1])
		}
	}
}

func TestSeccompAssembler(t *testing.T) {
	var a asm
	a.jeq(1, "nowhere", "")
	a.ret(retAllow)
	if _, err := a.assemble(); err == nil || !strings.Contains(err.Error(), "no label") {
		t.Errorf("unknown label: err %v", err)
	}
	var b asm
	b.label("back")
	b.ret(retAllow)
	b.jeq(1, "back", "")
	if _, err := b.assemble(); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("backward jump: err %v", err)
	}
	var c asm
	c.jeq(1, "far", "")
	for range 256 {
		c.ret(retAllow)
	}
	c.label("far")
	c.ret(retAllow)
	if _, err := c.assemble(); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("long jump: err %v", err)
	}
}

func TestSeccompPolicyFor(t *testing.T) {
	tests := []struct {
		spec Spec
		want filterPolicy
		note string
	}{
		{Spec{}, filterPolicy{}, "only unix and netlink sockets"},
		{Spec{UDP: true}, filterPolicy{}, "only unix and netlink sockets"},
		{Spec{Network: true}, filterPolicy{inet: true}, "(UDP, MPTCP, SCTP, raw and packet sockets refused)"},
		{Spec{Network: true, UDP: true}, filterPolicy{inet: true, udp: true}, "only unix, netlink, TCP and UDP sockets"},
		{Spec{Network: true, UDP: true, ConnectPorts: []uint16{443}}, filterPolicy{inet: true, udp: true, noFastOpen: true}, "TCP Fast Open sends refused"},
		{Spec{Network: true, BindPorts: []uint16{0}}, filterPolicy{inet: true}, "io_uring, TIOCSTI"},
	}
	for _, tt := range tests {
		p := policyFor(tt.spec)
		if p != tt.want {
			t.Errorf("policyFor(%+v) = %+v, want %+v", tt.spec, p, tt.want)
		}
		if d := p.describe(); !strings.Contains(d, tt.note) {
			t.Errorf("describe() = %q, want %q", d, tt.note)
		}
	}
}

// FuzzSecuritySeccompSockets checks the assembled filter against the rule
// for every socket(2) and socketpair(2) call: only unix and netlink
// sockets without network; TCP and, if granted, UDP with it.
func FuzzSecuritySeccompSockets(f *testing.F) {
	f.Add(false, uint8(0), uint64(afInet), uint64(sockStream), uint64(262))
	f.Add(true, uint8(3), uint64(afInet6), uint64(sockDgram|unix.SOCK_NONBLOCK), uint64(0))
	f.Add(true, uint8(1), uint64(1<<32|afInet), uint64(sockStream), uint64(1<<32|ipprotoTCP))
	f.Add(false, uint8(2), uint64(17), uint64(3), uint64(0))
	progs := map[string][]unix.SockFilter{}
	f.Fuzz(func(t *testing.T, arm bool, pol uint8, domain, typ, proto uint64) {
		goarch := "amd64"
		if arm {
			goarch = "arm64"
		}
		arch, _ := archFor(goarch)
		p := filterPolicy{inet: pol&1 != 0, udp: pol&3 == 3, noFastOpen: pol&4 != 0}
		key := fmt.Sprint(goarch, p)
		prog, ok := progs[key]
		if !ok {
			var err error
			if prog, err = seccompProgram(arch, p); err != nil {
				t.Fatal(err)
			}
			progs[key] = prog
		}
		args := [6]uint64{domain, typ, proto}
		want := wantSocket(p, uint32(domain), uint32(typ), uint32(proto))
		if got := runBPF(t, prog, call{arch: arch.audit, nr: arch.socket, args: args}); got != want {
			t.Errorf("%s %+v socket(%#x, %#x, %#x) = %s, want %s", goarch, p, domain, typ, proto, retName(got), retName(want))
		}
		want = retEACCES
		if uint32(domain) == afUnix {
			want = retAllow
		}
		if got := runBPF(t, prog, call{arch: arch.audit, nr: arch.socketpair, args: args}); got != want {
			t.Errorf("%s %+v socketpair(%#x, ...) = %s, want %s", goarch, p, domain, retName(got), retName(want))
		}
	})
}

func BenchmarkSeccompProgram(b *testing.B) {
	arch, ok := archFor(runtime.GOARCH)
	if !ok {
		b.Skip("no filter for this architecture")
	}
	for b.Loop() {
		if _, err := seccompProgram(arch, filterPolicy{inet: true, udp: true, noFastOpen: true}); err != nil {
			b.Fatal(err)
		}
	}
}
