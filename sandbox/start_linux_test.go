package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The test binary doubles as a network client for confined children: with
// SANDBOX_TEST_NET set it dials (or listens on) SANDBOX_TEST_ADDR and exits
// 0 on success, 1 on failure.
//
// With SANDBOX_TEST_CALL set it makes one system call (see callHelper)
// and prints "ok" or the failing step and errno, such as "socket EACCES".
//
// With SANDBOX_TEST_MAIN_THREAD set it checks, from the main goroutine
// while it still runs on the main thread, that onDisposableThread never
// runs its function there: exit 0 if so, 1 if not, 2 if the check could
// not be set up.
func TestMain(m *testing.M) {
	if IsHelper(os.Args[0]) {
		os.Exit(RunHelper(os.Args))
	}
	if network := os.Getenv("SANDBOX_TEST_NET"); network != "" {
		os.Exit(netHelper(network, os.Getenv("SANDBOX_TEST_ADDR")))
	}
	if name := os.Getenv("SANDBOX_TEST_CALL"); name != "" {
		os.Exit(callHelper(name, os.Getenv("SANDBOX_TEST_ADDR")))
	}
	if paths := os.Getenv("SANDBOX_TEST_SEALED"); paths != "" {
		for _, p := range strings.Split(paths, ":") {
			fmt.Println(sealedByPermissions(p))
		}
		os.Exit(0)
	}
	if spec := os.Getenv("SANDBOX_TEST_WATCH_PARENT"); spec != "" {
		os.Exit(watchParent(spec))
	}
	if mode := os.Getenv("SANDBOX_TEST_RUN"); mode != "" {
		os.Exit(runMode(mode, os.Args[1:]))
	}
	if op := os.Getenv("SANDBOX_TEST_FS"); op != "" {
		os.Exit(fsHelper(op, os.Args[1:]))
	}
	if os.Getenv("SANDBOX_TEST_MAIN_THREAD") != "" {
		os.Exit(mainThreadHelper())
	}
	os.Exit(m.Run())
}

func mainThreadHelper() int {
	runtime.LockOSThread()
	onMain := unix.Gettid() == unix.Getpid()
	runtime.UnlockOSThread()
	if !onMain {
		return 2
	}
	// With one P, the goroutine onDisposableThread starts runs next on
	// this thread, the main one, as soon as this goroutine waits.
	runtime.GOMAXPROCS(1)
	for range 20 {
		var tid int
		onDisposableThread(func() { tid = unix.Gettid() })
		if tid == unix.Getpid() {
			fmt.Fprintln(os.Stderr, "onDisposableThread ran its function on the main thread")
			return 1
		}
	}
	return 0
}

func netHelper(network, addr string) int {
	var err error
	if l, ok := strings.CutPrefix(network, "listen-"); ok {
		// Go listens with MPTCP by default, which Landlock leaves alone.
		var lc net.ListenConfig
		lc.SetMultipathTCP(false)
		var ln net.Listener
		if ln, err = lc.Listen(context.Background(), l, addr); err == nil {
			ln.Close()
		}
	} else {
		var c net.Conn
		d := net.Dialer{Timeout: 5 * time.Second}
		if network == "mptcp" {
			network = "tcp"
			d.SetMultipathTCP(true)
		}
		if c, err = d.Dial(network, addr); err == nil {
			c.Close()
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// callHelper makes the system calls name stands for, with raw system
// calls so that no library falls back to another kind of socket.
func callHelper(name, addr string) int {
	var sa unix.Sockaddr
	if addr != "" {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil {
			fmt.Println("addr", err)
			return 2
		}
		sa = &unix.SockaddrInet4{Addr: ap.Addr().As4(), Port: int(ap.Port())}
	}
	step, err := makeCall(name, sa)
	if err != nil {
		var en unix.Errno
		if errors.As(err, &en) {
			fmt.Println(step, unix.ErrnoName(en))
		} else {
			fmt.Println(step, err)
		}
		return 1
	}
	fmt.Println("ok")
	return 0
}

func makeCall(name string, sa unix.Sockaddr) (step string, err error) {
	socket := func(domain, typ, proto int) (int, error) {
		return unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
	}
	errno := func(_, _ uintptr, e unix.Errno) error {
		if e != 0 {
			return e
		}
		return nil
	}
	var fd int
	switch name {
	case "tcp", "mptcp":
		proto := 0
		if name == "mptcp" {
			proto = unix.IPPROTO_MPTCP
		}
		if fd, err = socket(unix.AF_INET, unix.SOCK_STREAM, proto); err != nil {
			return "socket", err
		}
		return "connect", unix.Connect(fd, sa)
	case "tfo":
		if fd, err = socket(unix.AF_INET, unix.SOCK_STREAM, 0); err != nil {
			return "socket", err
		}
		return "sendto", unix.Sendto(fd, []byte("x"), unix.MSG_FASTOPEN, sa)
	case "udp":
		if fd, err = socket(unix.AF_INET, unix.SOCK_DGRAM, 0); err != nil {
			return "socket", err
		}
		return "sendto", unix.Sendto(fd, []byte("x"), 0, sa)
	case "sctp":
		_, err = socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP)
	case "raw":
		_, err = socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
	case "ping":
		_, err = socket(unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP)
	case "packet":
		_, err = socket(unix.AF_PACKET, unix.SOCK_DGRAM, 0)
	case "netlink":
		_, err = socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)
	case "socketpair":
		_, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	case "tiocsti", "tioclinux":
		// Standard input is /dev/null: the kernel says ENOTTY, the filter
		// EPERM before the kernel looks at the descriptor.
		req := uintptr(unix.TIOCSTI)
		if name == "tioclinux" {
			req = unix.TIOCLINUX
		}
		b := [2]byte{'x', 0}
		err = errno(unix.Syscall(unix.SYS_IOCTL, 0, req, uintptr(unsafe.Pointer(&b[0]))))
	case "io_uring":
		var params [120]byte // struct io_uring_params
		err = errno(unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0))
	case "keyctl":
		_, err = unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false)
	case "userfaultfd":
		const userModeOnly = 1 // UFFD_USER_MODE_ONLY, open to unprivileged users
		err = errno(unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|userModeOnly, 0, 0))
	case "perf":
		attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK,
			Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{})), Bits: unix.PerfBitDisabled | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
		_, err = unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	default:
		return "unknown call", errors.New(name)
	}
	return name, err
}

func requireLandlock(t *testing.T) Status {
	t.Helper()
	st := Probe()
	if st.ABI == 0 {
		t.Skip("kernel has no Landlock")
	}
	return st
}

// world is a fake home, workspace, temp dir, mnemos state and a sibling
// directory outside every grant, all under the test's temp dir.
type world struct {
	home, ws, tmp, prot, outside string
}

const fakeKey = "-----BEGIN OPENSSH PRIVATE KEY-----\nnot a real key\n"

func newWorld(t testing.TB) world {
	t.Helper()
	root := t.TempDir()
	w := world{
		home:    filepath.Join(root, "home"),
		tmp:     filepath.Join(root, "tmp"),
		outside: filepath.Join(root, "outside"),
	}
	w.ws = filepath.Join(w.home, "src", "project")
	w.prot = filepath.Join(w.home, ".config", "mnemos")
	for _, d := range []string{w.ws, w.tmp, w.outside, w.prot, filepath.Join(w.home, ".ssh"), filepath.Join(w.home, ".cache")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(w.home, ".ssh", "id_rsa"): fakeKey,
		filepath.Join(w.prot, "policy.yaml"):    "level: readonly\n",
		filepath.Join(w.outside, "note"):        "outside\n",
		filepath.Join(w.home, ".gitconfig"):     "[user]\n\tname = dev\n",
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// spec is the default spec for w, plus read and execute on the test
// binary's directory for the network helper.
func (w world) spec(t testing.TB, edit func(*Options)) Spec {
	t.Helper()
	o := Options{
		Workspace: w.ws,
		Home:      w.home,
		TempDirs:  []string{w.tmp},
		Protected: []string{w.prot},
		Secrets:   DefaultSecrets(w.home),
	}
	if edit != nil {
		edit(&o)
	}
	s, err := DefaultSpec(o)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s.ReadExec = append(s.ReadExec, filepath.Dir(exe))
	return s
}

type outcome struct {
	stdout, stderr string
	code           int
	applied        Applied
}

// run starts argv confined by spec on a kernel described by st and waits.
func (w world) run(t *testing.T, spec Spec, st Status, env []string, argv ...string) outcome {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = w.ws
	cmd.Env = append([]string{"HOME=" + w.home, "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C",
		"OUT=" + w.outside, "PROT=" + w.prot, "TMP=" + w.tmp}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	a, err := start(cmd, spec, st)
	if err != nil {
		t.Fatalf("start %q: %v", argv, err)
	}
	code := 0
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("wait %q: %v", argv, err)
		}
		code = ee.ExitCode()
	}
	return outcome{stdout.String(), stderr.String(), code, a}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func TestStartConfinesFiles(t *testing.T) {
	st := requireLandlock(t)
	w := newWorld(t)
	spec := w.spec(t, nil)
	tests := []struct {
		name   string
		script string
		ok     bool
		stdout string
		check  func(t *testing.T)
	}{
		{name: "writes in the workspace", script: `echo hi > f && cat f`, ok: true, stdout: "hi\n"},
		{name: "makes dirs, renames and removes in the workspace", script: `mkdir -p a/b && echo x > a/b/f && mv a/b/f g && rm -r a && cat g`, ok: true, stdout: "x\n"},
		{name: "writes in the temp dir", script: `f=$(mktemp -p "$TMP") && echo t > "$f" && cat "$f"`, ok: true, stdout: "t\n"},
		{name: "truncates through /dev/null", script: `echo x > /dev/null && head -c 3 /dev/zero | wc -c`, ok: true, stdout: "3\n"},
		{name: "reads its own /proc entries", script: `grep -c '^Pid:' /proc/self/status`, ok: true, stdout: "1\n"},
		{name: "reads /etc around the carved secrets", script: `grep -c '^root:' /etc/passwd`, ok: true, stdout: "1\n"},
		{name: "reads git's configuration in home", script: `cat "$HOME/.gitconfig" | head -1`, ok: true, stdout: "[user]\n"},
		{name: "runs a program built in the workspace", script: `cp /bin/true ./mytrue && ./mytrue && echo ran`, ok: true, stdout: "ran\n"},
		{name: "cannot write outside", script: `echo x > "$OUT/f"`,
			check: func(t *testing.T) {
				if exists(filepath.Join(w.outside, "f")) {
					t.Error("file created outside the workspace")
				}
			}},
		{name: "cannot read outside", script: `cat "$OUT/note"`},
		{name: "cannot list home", script: `ls "$HOME"`},
		{name: "cannot read /etc/shadow", script: `cat /etc/shadow`},
		{name: "cannot make a device node", script: `mknod ./null c 1 3`},
		{name: "grandchildren are confined", script: `sh -c 'sh -c "touch \"\$OUT/g\""'`,
			check: func(t *testing.T) {
				if exists(filepath.Join(w.outside, "g")) {
					t.Error("grandchild created a file outside the workspace")
				}
			}},
		{name: "exit status passes through", script: `exit 7`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := w.run(t, spec, st, nil, "sh", "-c", tt.script)
			if tt.ok != (o.code == 0) {
				t.Fatalf("exit %d, want success %v; stderr: %s", o.code, tt.ok, o.stderr)
			}
			if tt.ok && o.stdout != tt.stdout {
				t.Errorf("stdout %q, want %q", o.stdout, tt.stdout)
			}
			if !tt.ok && tt.name != "exit status passes through" && !strings.Contains(o.stderr, "ermission denied") && !strings.Contains(o.stderr, "not permitted") && !strings.Contains(o.stderr, "Read-only file system") {
				t.Errorf("stderr %q, want a permission error", o.stderr)
			}
			if tt.name == "exit status passes through" && o.code != 7 {
				t.Errorf("exit %d, want 7", o.code)
			}
			if !o.applied.Enforced || !o.applied.FS {
				t.Errorf("applied %+v, want enforced", o.applied)
			}
			if tt.check != nil {
				tt.check(t)
			}
		})
	}
}

func TestSecurityProtectedFilesCannotBeWritten(t *testing.T) {
	st := requireLandlock(t)
	w := newWorld(t)
	spec := w.spec(t, nil)
	policy := filepath.Join(w.prot, "policy.yaml")
	attempts := []string{
		`echo 'level: full' >> "$PROT/policy.yaml"`,
		`echo 'level: full' > "$PROT/policy.yaml"`,
		`: > "$PROT/policy.yaml"`,
		`truncate -s 0 "$PROT/policy.yaml"`,
		`rm "$PROT/policy.yaml"`,
		`mv "$PROT/policy.yaml" ./stolen`,
		`echo 'level: full' > ./p && mv ./p "$PROT/policy.yaml"`,
		`touch "$PROT/new.yaml"`,
		`ln -s /tmp "$PROT/link"`,
		`ln -s "$PROT/policy.yaml" ./link && echo 'level: full' >> ./link`,
		`ln "$PROT/policy.yaml" ./hard && echo 'level: full' >> ./hard`,
		`cd "$PROT" && echo 'level: full' >> policy.yaml`,
		`sh -c 'sh -c "echo level: full >> \"\$PROT/policy.yaml\""'`,
		`cat "$HOME/.s""sh/id_rsa"`,
		`cp "$HOME/.ssh/id_rsa" ./key && cat ./key`,
		`ln "$HOME/.ssh/id_rsa" ./key2 && cat ./key2`,
		`cd "$HOME/.ssh" && cat id_rsa`,
		`cat /proc/$PPID/environ`,
		`readlink /proc/$PPID/fd/0`,
		`cat /proc/$PPID/root/etc/hostname`,
		`cat /proc/$PPID/maps`,
	}
	for _, script := range attempts {
		// Control: without Landlock the attempt works, so a refusal below
		// is the sandbox's doing.
		free := newWorld(t)
		if o := free.run(t, free.spec(t, nil), Status{}, nil, "sh", "-c", script); o.code != 0 {
			t.Errorf("%s: fails even unconfined (exit %d): %s", script, o.code, o.stderr)
		}
		o := w.run(t, spec, st, nil, "sh", "-c", script)
		if o.code == 0 {
			t.Errorf("%s: succeeded, want refused", script)
		}
		if strings.Contains(o.stdout, "PRIVATE KEY") {
			t.Errorf("%s: read the secret key", script)
		}
	}
	b, err := os.ReadFile(policy)
	if err != nil || string(b) != "level: readonly\n" {
		t.Errorf("policy file is now %q, %v", b, err)
	}
	if ents, _ := os.ReadDir(w.prot); len(ents) != 1 {
		t.Errorf("protected dir holds %d entries, want 1", len(ents))
	}
}

func TestSecurityParentStaysUnconfined(t *testing.T) {
	st := requireLandlock(t)
	w := newWorld(t)
	spec := w.spec(t, nil)
	for range 5 {
		if o := w.run(t, spec, st, nil, "sh", "-c", `touch "$OUT/denied"`); o.code == 0 {
			t.Fatal("confined child wrote outside")
		}
	}
	// The parent writes outside, and its unconfined children do too.
	if err := os.WriteFile(filepath.Join(w.outside, "parent"), []byte("ok"), 0o600); err != nil {
		t.Fatalf("parent cannot write after Start: %v", err)
	}
	for i := range 5 {
		p := filepath.Join(w.outside, "plain"+strconv.Itoa(i))
		if err := exec.Command("touch", p).Run(); err != nil {
			t.Fatalf("unconfined child: %v", err)
		}
	}
	// No thread of this process is left with no_new_privs (set together
	// with the Landlock restriction) or a seccomp filter once the starting
	// thread has ended.
	deadline := time.Now().Add(5 * time.Second)
	for {
		bad := slices.Concat(threadsWith(t, "NoNewPrivs:"), threadsWith(t, "Seccomp:"))
		if len(bad) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("threads %v of the parent are still restricted", bad)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The parent still opens what the filter refuses its children, from
	// whichever threads its goroutines land on.
	if !st.Seccomp {
		return
	}
	for range 4 {
		for _, s := range []struct {
			name              string
			domain, typ, prot int
		}{{"UDP", unix.AF_INET, unix.SOCK_DGRAM, 0}, {"MPTCP", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP}} {
			fd, err := unix.Socket(s.domain, s.typ|unix.SOCK_CLOEXEC, s.prot)
			if s.name == "MPTCP" && (errors.Is(err, unix.EPROTONOSUPPORT) || errors.Is(err, unix.ENOPROTOOPT)) {
				continue // MPTCP is off on this kernel
			}
			if err != nil {
				t.Fatalf("parent cannot open a %s socket after Start: %v", s.name, err)
			}
			unix.Close(fd)
		}
		runtime.Gosched()
	}
}

func TestSecurityRestrictedThreadIsNeverTheMainThread(t *testing.T) {
	// The runtime keeps a main thread whose locked goroutine exits (parked,
	// still restricted) instead of ending it; onDisposableThread must
	// never restrict it. The check runs in a fresh copy of this binary,
	// from its main goroutine.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "SANDBOX_TEST_MAIN_THREAD=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 2:
		t.Skip("the main goroutine had left the main thread")
	case err != nil:
		t.Fatalf("%v: %s", err, out)
	}
}

// threadsWith returns the threads of this process whose status line
// field (NoNewPrivs:, Seccomp:) is not 0.
func threadsWith(t *testing.T, field string) []string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, task := range tasks {
		f, err := os.Open(filepath.Join("/proc/self/task", task.Name(), "status"))
		if err != nil {
			continue // the thread ended
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), field); ok && strings.TrimSpace(v) != "0" {
				bad = append(bad, task.Name())
			}
		}
		f.Close()
	}
	return bad
}

// listen accepts and closes connections until the test ends.
func listen(t *testing.T, network, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln
}

func TestStartTCP(t *testing.T) {
	st := requireLandlock(t)
	if st.ABI < 4 {
		t.Skip("kernel's Landlock has no TCP rules (ABI < 4)")
	}
	w := newWorld(t)
	ln := listen(t, "tcp", "127.0.0.1:0")
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	exe, _ := os.Executable()
	tests := []struct {
		name    string
		network string
		net     bool
		ports   []uint16
		bind    []uint16
		addr    string
		ok      bool
		netRule bool
	}{
		{name: "no network: connect refused", network: "tcp", ok: false, netRule: true},
		{name: "network: any port", network: "tcp", net: true, ok: true, netRule: true},
		{name: "network: the listed port", network: "tcp", net: true, ports: []uint16{port}, ok: true, netRule: true},
		{name: "network: another port only", network: "tcp", net: true, ports: []uint16{port + 1}, ok: false, netRule: true},
		{name: "no network: bind refused", network: "listen-tcp", ok: false, netRule: true},
		{name: "security: network: bind refused without a bind list", network: "listen-tcp", net: true, ok: false, netRule: true},
		{name: "network: ephemeral bind granted", network: "listen-tcp", net: true, bind: []uint16{0}, ok: true, netRule: true},
		{name: "network: ephemeral bind not granted", network: "listen-tcp", net: true, bind: []uint16{8}, ok: false, netRule: true},
		{name: "no network: fixed bind refused", network: "listen-tcp", addr: "127.0.0.1:28471", ok: false, netRule: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := w.spec(t, func(o *Options) { o.Network, o.Ports = tt.net, tt.ports })
			spec.BindPorts = tt.bind
			addr := ln.Addr().String()
			if strings.HasPrefix(tt.network, "listen-") {
				addr = "127.0.0.1:0"
			}
			if tt.addr != "" {
				addr = tt.addr
			}
			o := w.run(t, spec, st, []string{"SANDBOX_TEST_NET=" + tt.network, "SANDBOX_TEST_ADDR=" + addr}, exe)
			if (o.code == 0) != tt.ok {
				t.Errorf("exit %d, want success %v; stderr: %s", o.code, tt.ok, o.stderr)
			}
			if o.applied.Net != tt.netRule {
				t.Errorf("Applied.Net = %v, want %v", o.applied.Net, tt.netRule)
			}
		})
	}
}

func requireSeccomp(t *testing.T) Status {
	t.Helper()
	st := requireLandlock(t)
	if !st.Seccomp {
		t.Skip(st.SeccompErr)
	}
	return st
}

// Landlock's TCP rules cover TCP alone: an MPTCP socket reaches any TCP
// server (it falls back to TCP with a peer that does not speak MPTCP), UDP,
// raw and packet sockets pass by, and a send with MSG_FASTOPEN connects
// without the connect hook the port rules use. The seccomp filter refuses
// them. Each attempt also runs under Landlock alone, as a control: where
// the kernel refuses it there too, the filter's refusal proves nothing, and
// the test says so.
func TestSecuritySeccompSockets(t *testing.T) {
	st := requireSeccomp(t)
	w := newWorld(t)
	granted := listen(t, "tcp", "127.0.0.1:0").Addr().String()
	other := listen(t, "tcp", "127.0.0.1:0").Addr().String()
	grantedPort := uint16(netip.MustParseAddrPort(granted).Port())
	exe, _ := os.Executable()
	noFilter := st
	noFilter.Seccomp = false
	tests := []struct {
		call    string
		network bool
		noUDP   bool
		addr    string
		want    string
		abi4    bool // the outcome relies on Landlock's TCP rules
	}{
		{call: "mptcp", addr: granted, want: "socket EACCES"},
		{call: "tcp", addr: granted, want: "socket EACCES"},
		{call: "tfo", addr: granted, want: "socket EACCES"},
		{call: "udp", addr: granted, want: "socket EACCES"},
		{call: "raw", want: "raw EACCES"},
		{call: "ping", want: "ping EACCES"},
		{call: "packet", want: "packet EACCES"},
		{call: "sctp", want: "sctp EACCES"},
		{call: "socketpair", want: "ok"},
		{call: "netlink", want: "ok"},
		{call: "tcp", network: true, addr: granted, want: "ok"},
		{call: "tcp", network: true, addr: other, want: "connect EACCES", abi4: true},
		{call: "mptcp", network: true, addr: granted, want: "socket EACCES"},
		{call: "mptcp", network: true, addr: other, want: "socket EACCES"},
		{call: "tfo", network: true, addr: other, want: "sendto EACCES"},
		{call: "udp", network: true, addr: other, want: "ok"},
		{call: "udp", network: true, noUDP: true, addr: other, want: "socket EACCES"},
		{call: "raw", network: true, want: "raw EACCES"},
		{call: "packet", network: true, want: "packet EACCES"},
		{call: "sctp", network: true, want: "sctp EACCES"},
		{call: "socketpair", network: true, want: "ok"},
	}
	for _, tt := range tests {
		name := tt.call + " without network"
		switch {
		case tt.network && tt.addr == granted:
			name = tt.call + " to the granted port"
		case tt.network && tt.addr == other:
			name = tt.call + " to another port"
		case tt.network:
			name = tt.call + " with network"
		}
		if tt.noUDP {
			name += ", UDP not granted"
		}
		t.Run(name, func(t *testing.T) {
			if tt.abi4 && st.ABI < 4 {
				t.Skip("kernel's Landlock has no TCP rules (ABI < 4)")
			}
			spec := w.spec(t, func(o *Options) {
				o.Network = tt.network
				if tt.network {
					o.Ports = []uint16{grantedPort}
				}
			})
			spec.UDP = spec.UDP && !tt.noUDP
			env := []string{"SANDBOX_TEST_CALL=" + tt.call, "SANDBOX_TEST_ADDR=" + tt.addr}
			o := w.run(t, spec, st, env, exe)
			if got := strings.TrimSpace(o.stdout); got != tt.want {
				t.Errorf("got %q, want %q; stderr: %s", got, tt.want, o.stderr)
			}
			if !o.applied.Seccomp || !strings.Contains(strings.Join(o.applied.Notes, "\n"), "seccomp: only unix") {
				t.Errorf("applied %+v, want the filter noted", o.applied)
			}
			if tt.want == "ok" {
				return
			}
			if c := w.run(t, spec, noFilter, env, exe); strings.TrimSpace(c.stdout) != "ok" {
				t.Logf("refused under Landlock alone too (%s)", strings.TrimSpace(c.stdout))
			}
		})
	}
}

// The filter refuses io_uring (its operations bypass seccomp), terminal
// injection and a few kernel interfaces, with EPERM. The control runs under
// Landlock alone.
func TestSecuritySeccompRefusesKernelInterfaces(t *testing.T) {
	st := requireSeccomp(t)
	w := newWorld(t)
	exe, _ := os.Executable()
	noFilter := st
	noFilter.Seccomp = false
	spec := w.spec(t, nil)
	for _, name := range []string{"tiocsti", "tioclinux", "io_uring", "keyctl", "userfaultfd", "perf"} {
		t.Run(name, func(t *testing.T) {
			env := []string{"SANDBOX_TEST_CALL=" + name}
			want := name + " EPERM"
			if o := w.run(t, spec, st, env, exe); strings.TrimSpace(o.stdout) != want {
				t.Errorf("got %q, want %q; stderr: %s", o.stdout, want, o.stderr)
			}
			if c := w.run(t, spec, noFilter, env, exe); strings.TrimSpace(c.stdout) == want {
				t.Logf("refused under Landlock alone too")
			}
		})
	}
}

func TestStartScoped(t *testing.T) {
	st := requireLandlock(t)
	if st.ABI < 6 {
		t.Skip("kernel's Landlock has no scoping (ABI < 6)")
	}
	w := newWorld(t)
	name := fmt.Sprintf("@mnemos-sandbox-test-%d", os.Getpid())
	listen(t, "unix", name)
	exe, _ := os.Executable()
	for _, scoped := range []bool{false, true} {
		spec := w.spec(t, nil)
		spec.Scoped = scoped
		o := w.run(t, spec, st, []string{"SANDBOX_TEST_NET=unix", "SANDBOX_TEST_ADDR=" + name}, exe)
		if (o.code == 0) == scoped {
			t.Errorf("scoped=%v: abstract socket connect exit %d; stderr %s", scoped, o.code, o.stderr)
		}
		if st.signalScoping() {
			o = w.run(t, spec, st, nil, "sh", "-c", "kill -0 "+strconv.Itoa(os.Getpid()))
			if (o.code == 0) == scoped {
				t.Errorf("scoped=%v: signal to the parent exit %d; stderr %s", scoped, o.code, o.stderr)
			}
		}
		if o.applied.Scoped != scoped {
			t.Errorf("Applied.Scoped = %v, want %v", o.applied.Scoped, scoped)
		}
	}
}

// TestStartDowngrades runs as if on older kernels, with and without the
// seccomp filter. Without network, the filter refuses TCP where Landlock
// predates TCP rules, so Required no longer refuses such a spec there;
// port rules still need ABI 4.
func TestStartDowngrades(t *testing.T) {
	real := requireLandlock(t)
	w := newWorld(t)
	ln := listen(t, "tcp", "127.0.0.1:0")
	exe, _ := os.Executable()
	for _, filter := range []bool{false, true} {
		if filter && !real.Seccomp {
			t.Log("no seccomp filter here: " + real.SeccompErr)
			continue
		}
		for abi := 0; abi <= real.ABI; abi++ {
			t.Run(fmt.Sprintf("abi%d/seccomp=%v", abi, filter), func(t *testing.T) {
				st := Status{ABI: abi, Enforced: abi > 0, Errata: real.Errata, Seccomp: filter}
				filtered := filter && abi > 0
				tcpClosed := abi >= 4 || filtered
				spec := w.spec(t, nil)
				o := w.run(t, spec, st, nil, "sh", "-c", `touch "$OUT/abi`+strconv.Itoa(abi)+`"`)
				if (o.code == 0) != (abi == 0) {
					t.Errorf("write outside: exit %d", o.code)
				}
				a := o.applied
				if a.Enforced != (abi > 0) || a.FS != (abi > 0) || a.Net != tcpClosed || a.Scoped != (abi >= 6) || a.Seccomp != filtered {
					t.Errorf("applied %+v", a)
				}
				notes := strings.Join(a.Notes, "\n")
				switch {
				case abi == 0 || abi >= 4:
				case filtered && !strings.Contains(notes, "TCP is refused by the seccomp filter alone"):
					t.Errorf("notes %q do not say the filter refuses TCP", a.Notes)
				case !filtered && !strings.Contains(notes, "TCP is not restricted"):
					t.Errorf("notes %q do not admit TCP is open", a.Notes)
				}
				if abi > 0 && !filtered && !strings.Contains(notes, "UDP, MPTCP and other sockets, io_uring and TIOCSTI are not restricted") {
					t.Errorf("notes %q do not admit the filter is missing", a.Notes)
				}
				o = w.run(t, spec, st, []string{"SANDBOX_TEST_NET=tcp", "SANDBOX_TEST_ADDR=" + ln.Addr().String()}, exe)
				if (o.code == 0) == tcpClosed {
					t.Errorf("connect without network: exit %d", o.code)
				}

				// Required refuses what this kernel cannot enforce, without
				// starting: the ruleset, and TCP without network (Landlock
				// ABI 4 or the filter) or TCP ports (ABI 4).
				for _, ports := range []bool{false, true} {
					spec := spec
					spec.Required = true
					if ports {
						spec.Network, spec.ConnectPorts = true, []uint16{443}
					}
					cmd := exec.Command("true")
					_, err := start(cmd, spec, st)
					want := abi == 0 || abi < 4 && (ports || !filtered)
					if refused := errors.Is(err, ErrUnenforceable); refused != want {
						t.Errorf("required, ports %v: err %v", ports, err)
					}
					if err != nil && cmd.Process != nil {
						t.Error("refused command was started")
					}
					if err == nil {
						cmd.Wait()
					}
				}
			})
		}
	}
}

// TestStartRequireTCP: RequireTCP refuses, without starting, TCP limits
// that a kernel with Landlock cannot enforce (ports need ABI 4, no network
// ABI 4 or the seccomp filter), and lets a kernel without Landlock run the
// command unconfined, as a spec that is not Required.
func TestStartRequireTCP(t *testing.T) {
	real := requireLandlock(t)
	w := newWorld(t)
	for abi := 0; abi <= min(real.ABI, 4); abi++ {
		for _, filter := range []bool{false, true} {
			if filter && !real.Seccomp {
				continue
			}
			st := Status{ABI: abi, Enforced: abi > 0, Errata: real.Errata, Seccomp: filter}
			for _, ports := range []bool{false, true} {
				spec := w.spec(t, func(o *Options) {
					o.RequireTCP = true
					if ports {
						o.Network, o.Ports = true, []uint16{443}
					}
				})
				cmd := exec.Command("true")
				a, err := start(cmd, spec, st)
				want := abi >= 1 && abi < 4 && (ports || !filter)
				if refused := errors.Is(err, ErrUnenforceable); refused != want {
					t.Errorf("abi %d, seccomp %v, ports %v: err %v, want refused %v", abi, filter, ports, err, want)
				}
				if err != nil {
					if cmd.Process != nil {
						t.Error("refused command was started")
					}
					continue
				}
				cmd.Wait()
				if abi == 0 && a.Enforced {
					t.Errorf("abi 0: applied %+v", a)
				}
			}
		}
	}
}

func TestStartCarvesAroundDenied(t *testing.T) {
	st := requireLandlock(t)
	w := newWorld(t)
	shared := filepath.Join(w.outside, "shared")
	for _, d := range []string{"keys", "docs/deep"} {
		os.MkdirAll(filepath.Join(shared, d), 0o755)
	}
	os.WriteFile(filepath.Join(shared, "keys", "k"), []byte("secret"), 0o600)
	os.WriteFile(filepath.Join(shared, "docs", "deep", "d"), []byte("doc"), 0o600)
	os.WriteFile(filepath.Join(shared, "top"), []byte("top"), 0o600)
	spec := Spec{
		ReadExec: []string{"/usr", "/bin", "/lib", "/lib64"},
		ReadOnly: []string{shared, filepath.Join(w.outside, "missing")},
		Devices:  []string{"/dev/null"},
		Deny:     []string{filepath.Join(shared, "keys")},
	}
	o := w.run(t, spec, st, nil, "sh", "-c", `cd "$OUT/shared" && cat top docs/deep/d && ls | tr '\n' ' '`)
	if o.code != 0 || o.stdout != "topdocdocs keys top " {
		t.Errorf("granted part: exit %d, stdout %q, stderr %s", o.code, o.stdout, o.stderr)
	}
	if o = w.run(t, spec, st, nil, "cat", filepath.Join(shared, "keys", "k")); o.code == 0 {
		t.Error("read a file in the carved-out directory")
	}
	if len(o.applied.Skipped) != 1 || !strings.HasSuffix(o.applied.Skipped[0], "missing") {
		t.Errorf("skipped %q, want the missing path", o.applied.Skipped)
	}
	if !strings.Contains(strings.Join(o.applied.Notes, "\n"), "granted except") {
		t.Errorf("notes %q do not mention the carving", o.applied.Notes)
	}
}

func TestStartDropsRootCapabilities(t *testing.T) {
	st := requireLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("capabilities are dropped only for root")
	}
	w := newWorld(t)
	parentBnd := threadCapBnd(t)[0]
	for _, keep := range []bool{false, true} {
		spec := w.spec(t, nil)
		spec.KeepCapabilities = keep
		o := w.run(t, spec, st, nil, "grep", "-E", "^Cap(Eff|Bnd):", "/proc/self/status")
		if o.code != 0 {
			t.Fatalf("exit %d: %s", o.code, o.stderr)
		}
		for _, line := range strings.Split(strings.TrimSpace(o.stdout), "\n") {
			f := strings.Fields(line)
			v, err := strconv.ParseUint(f[1], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []int{unix.CAP_SYS_ADMIN, unix.CAP_SYS_MODULE, unix.CAP_NET_RAW, unix.CAP_SYS_RAWIO} {
				if has := v&(1<<c) != 0; has != keep {
					t.Errorf("keep=%v: %s has capability %d = %v", keep, f[0], c, has)
				}
			}
			if v&(1<<unix.CAP_DAC_OVERRIDE) == 0 {
				t.Errorf("%s lost CAP_DAC_OVERRIDE", f[0])
			}
		}
		if o.applied.DroppedCaps == keep {
			t.Errorf("keep=%v: Applied.DroppedCaps = %v", keep, o.applied.DroppedCaps)
		}
	}
	// Every thread of the parent keeps its bounding set, once the thread
	// that started the command has ended.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		changed := slices.IndexFunc(threadCapBnd(t), func(b string) bool { return b != parentBnd })
		if changed < 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a parent thread's bounding set changed from %s", parentBnd)
		}
	}
}

// threadCapBnd returns the CapBnd line of each thread of this process.
func threadCapBnd(t *testing.T) []string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "status"))
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "CapBnd:"); ok {
				out = append(out, strings.TrimSpace(v))
			}
		}
	}
	return out
}

func TestStartRejectsRelativePaths(t *testing.T) {
	for _, spec := range []Spec{{ReadOnly: []string{"rel"}}, {Deny: []string{"rel"}}} {
		cmd := exec.Command("true")
		if _, err := Start(cmd, spec); err == nil || cmd.Process != nil {
			t.Errorf("spec %+v: err %v, started %v", spec, err, cmd.Process != nil)
		}
	}
}

func BenchmarkStartPlain(b *testing.B) {
	for b.Loop() {
		cmd := exec.Command("/bin/true")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		cmd.Wait()
	}
}

// BenchmarkStartConfined is Start and Wait of /bin/true: "minimal" grants
// the system directories and a workspace; "default" is DefaultSpec with
// mnemos's directories protected; "secrets" adds DefaultSecrets, which
// narrows /etc around the password hashes and host keys (about 150 rules);
// "default-no-seccomp" is "default" without the seccomp filter. The spec is
// built outside the loop; BenchmarkDefaultSpec times that.
func BenchmarkStartConfined(b *testing.B) {
	st := Probe()
	if st.ABI == 0 {
		b.Skip("kernel has no Landlock")
	}
	noFilter := st
	noFilter.Seccomp = false
	home, ws, tmp := benchDirs(b)
	minimal := Spec{ReadExec: []string{"/usr", "/bin", "/lib", "/lib64", "/etc"}, ReadWrite: []string{ws}, Devices: []string{"/dev/null"}}
	def, _ := DefaultSpec(Options{Workspace: ws, Home: home, TempDirs: []string{tmp}, Protected: []string{home + "/.config/mnemos"}})
	secrets, _ := DefaultSpec(Options{Workspace: ws, Home: home, TempDirs: []string{tmp}, Protected: []string{home + "/.config/mnemos"}, Secrets: DefaultSecrets(home)})
	for _, bb := range []struct {
		name string
		spec Spec
		st   Status
	}{{"minimal", minimal, st}, {"default", def, st}, {"default-no-seccomp", def, noFilter}, {"secrets", secrets, st}} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				if _, err := start(cmd, bb.spec, bb.st); err != nil {
					b.Fatal(err)
				}
				cmd.Wait()
			}
		})
	}
}

// BenchmarkSeccompInstall is the filter's own cost: a disposable thread
// that sets no_new_privs, with and without building and installing the
// filter on it.
func BenchmarkSeccompInstall(b *testing.B) {
	arch, ok := archFor(runtime.GOARCH)
	if st := Probe(); !ok || !st.Seccomp {
		b.Skip("no seccomp filter here")
	}
	spec := Spec{Network: true, UDP: true, ConnectPorts: []uint16{443}}
	for _, filter := range []bool{false, true} {
		b.Run(map[bool]string{false: "thread", true: "thread+filter"}[filter], func(b *testing.B) {
			for b.Loop() {
				var err error
				onDisposableThread(func() {
					if err = unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil || !filter {
						return
					}
					var prog []unix.SockFilter
					if prog, err = seccompProgram(arch, policyFor(spec)); err == nil {
						err = installSeccomp(prog)
					}
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDefaultSpec(b *testing.B) {
	home, ws, tmp := benchDirs(b)
	for b.Loop() {
		if _, err := DefaultSpec(Options{Workspace: ws, Home: home, TempDirs: []string{tmp}, Protected: []string{home + "/.config/mnemos"}, Secrets: DefaultSecrets(home)}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchDirs(b *testing.B) (home, ws, tmp string) {
	root := b.TempDir()
	home, ws, tmp = filepath.Join(root, "home"), filepath.Join(root, "home", "ws"), filepath.Join(root, "tmp")
	for _, d := range []string{ws, tmp, home + "/.cache"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	return home, ws, tmp
}

// TestSecuritySealedByPermissions: a path counts as out of reach only when
// it is someone else's and the credentials may neither read, write nor
// execute it. Root never sees one; another user, run by root here, does.
func TestSecuritySealedByPermissions(t *testing.T) {
	dir, err := os.MkdirTemp("/var/tmp", "mnemos-sealed-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, mode os.FileMode, isDir bool) string {
		p := filepath.Join(dir, name)
		var err error
		if isDir {
			err = os.Mkdir(p, mode)
		} else {
			err = os.WriteFile(p, []byte("secret\n"), mode)
		}
		if err == nil {
			err = os.Chmod(p, mode)
		}
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	shadow, public, private := mk("shadow", 0o600, false), mk("public", 0o644, false), mk("private", 0o700, true)
	dropins, mixed := mk("dropins", 0o755, true), mk("mixed", 0o755, true)
	mk("dropins/a", 0o440, false)
	mk("mixed/a", 0o440, false)
	mk("mixed/b", 0o444, false)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(shadow, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{shadow, public, private, link, filepath.Join(dir, "missing")} {
		if sealedByPermissions(p) {
			t.Errorf("%s is sealed for its owner (uid %d)", p, os.Geteuid())
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("checking another user's view needs root")
	}
	// The test binary's own directory is closed to other users.
	bin, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(dir, "helper")
	if err := os.WriteFile(helper, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(helper)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SANDBOX_TEST_SEALED="+strings.Join([]string{shadow, public, private, link, filepath.Join(private, "x"),
		filepath.Join(dir, "missing", "deeper"), filepath.Join(dir, "shadow", "x"), dropins, mixed}, ":"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper as uid 65534: %v", err)
	}
	// Root's 0600 file and 0700 directory are sealed, a missing path in
	// root's directory, and a listable directory of sealed files; a
	// readable file and a symbolic link are not, nor a path it cannot even
	// look at, nor one below a file, nor a directory holding a readable file.
	if got, want := strings.Fields(string(out)), []string{"true", "false", "true", "false", "false", "true", "false", "true", "false"}; !slices.Equal(got, want) {
		t.Errorf("as uid 65534: %v, want %v", got, want)
	}
}

// TestBuildPlanSealed: a read-only grant is not carved around a denied
// path the permissions seal; a writable grant still is.
func TestBuildPlanSealed(t *testing.T) {
	root := tree(t, "a/keep/f", "a/secret/k", "a/mid/deny/x", "a/mid/ok")
	j := func(p string) string { return filepath.Join(root, p) }
	sealed := func(p string) bool { return p == j("a/secret") }
	rw := accessRead | accessExec | accessWrite
	tests := []struct {
		name  string
		spec  Spec
		rules []rule
		note  string
	}{
		{"read-only, sealed", Spec{ReadOnly: []string{j("a")}, Deny: []string{j("a/secret")}},
			[]rule{{path: j("a"), access: accessRead}}, "not carved around " + j("a/secret")},
		{"read-only, one sealed and one not", Spec{ReadExec: []string{j("a")}, Deny: []string{j("a/secret"), j("a/mid/deny")}},
			[]rule{{path: j("a"), access: ll.AccessFSReadDir}, {path: j("a/keep"), access: accessRead | accessExec}, {path: j("a/mid"), access: ll.AccessFSReadDir},
				{path: j("a/mid/ok"), access: accessRead | accessExec}, {path: j("a/secret"), access: accessRead | accessExec}}, "granted except " + j("a/mid/deny")},
		{"security: writable, sealed or not", Spec{ReadWrite: []string{j("a")}, Deny: []string{j("a/secret")}},
			[]rule{{path: j("a"), access: ll.AccessFSReadDir}, {path: j("a/keep"), access: rw}, {path: j("a/mid"), access: rw}}, "granted except " + j("a/secret")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := buildPlanWith(tt.spec, sealed)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(withoutKinds(p.rules), tt.rules) {
				t.Errorf("rules\n got %v\nwant %v", p.rules, tt.rules)
			}
			if got := strings.Join(p.notes, "\n"); !strings.Contains(got, tt.note) {
				t.Errorf("notes %q, want %q", got, tt.note)
			}
		})
	}
}
