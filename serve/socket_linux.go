package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxSocketPath is what fits in a sockaddr_un with its NUL.
const maxSocketPath = 107

// socketName returns a name for the socket at path that fits a
// sockaddr_un: the path, or, when it is too long, the same file reached
// through a descriptor of its directory (/proc/self/fd/N/NAME); release
// closes that descriptor.
func socketName(path string) (name string, release func(), err error) {
	if len(path) <= maxSocketPath {
		return path, func() {}, nil
	}
	fd, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, err
	}
	name = "/proc/self/fd/" + strconv.Itoa(fd) + "/" + filepath.Base(path)
	if len(name) > maxSocketPath {
		unix.Close(fd)
		return "", nil, fmt.Errorf("the socket's name is too long: %s", path)
	}
	return name, func() { unix.Close(fd) }, nil
}

// unlinkingListener removes its socket file by its real path on Close.
type unlinkingListener struct {
	*net.UnixListener
	path string
}

func (l unlinkingListener) Close() error {
	err := l.UnixListener.Close()
	_ = os.Remove(l.path)
	return err
}

func listenUnix(path string) (net.Listener, error) {
	name, release, err := socketName(path)
	if err != nil {
		return nil, err
	}
	defer release()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: name, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false)
	return unlinkingListener{UnixListener: ln, path: path}, nil
}

func dialUnix(ctx context.Context, path string) (net.Conn, error) {
	if _, err := os.Lstat(path); err != nil {
		return nil, err
	}
	name, release, err := socketName(path)
	if err != nil {
		return nil, err
	}
	defer release()
	var d net.Dialer
	return d.DialContext(ctx, "unix", name)
}

// privateDir refuses a directory that is not the user's own or that
// others may enter.
func privateDir(dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return err
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("%s is not a directory", dir)
	case int(st.Uid) != os.Getuid():
		return fmt.Errorf("%s is owned by uid %d, not by you (uid %d)", dir, st.Uid, os.Getuid())
	case st.Mode&0o077 != 0:
		return fmt.Errorf("%s is open to others (mode %04o): chmod 700 it", dir, st.Mode&0o7777)
	}
	return nil
}

// peerAllowed admits a peer of the same uid that does not run under a
// mnemos sandbox.
func peerAllowed(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("cannot tell who connected: %w", cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("uid %d is not the user mnemos serve runs for (uid %d)", cred.Uid, os.Getuid())
	}
	if p, ok := sandboxedAncestor(int(cred.Pid)); ok {
		return fmt.Errorf("the peer (pid %d) runs under mnemos (pid %d): a gated command does not sign in to the approvals page", cred.Pid, p)
	}
	return nil
}

// sandboxedAncestor returns an ancestor of pid (pid itself and serve left
// out) that runs mnemos (this executable, or one named mnemos): every
// command mnemos runs, and all it starts, has the mnemos that confines it
// (mnemos run, its sandbox helper) above it while it lives, for mnemos
// run is its subreaper. Processes whose executable cannot be read
// (another user's) are passed over.
func sandboxedAncestor(pid int) (int, bool) {
	self, _ := os.Executable()
	selfInfo, _ := os.Stat(self)
	p := parentOf(pid)
	for i := 0; p > 1 && i < 128; i++ {
		if p != os.Getpid() {
			exe, err := os.Readlink("/proc/" + strconv.Itoa(p) + "/exe")
			if err == nil {
				exe = strings.TrimSuffix(exe, " (deleted)")
				if b := filepath.Base(exe); b == "mnemos" || b == "mnemos-sh" {
					return p, true
				}
				if fi, err := os.Stat(exe); err == nil && selfInfo != nil && os.SameFile(fi, selfInfo) {
					return p, true
				}
			}
		}
		p = parentOf(p)
	}
	return 0, false
}

// parentOf reads a process's parent from /proc; 0 when it cannot.
func parentOf(pid int) int {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// HideMemory makes this process not dumpable: no core file, and its
// memory, environment and descriptors under /proc, and ptrace, are kept
// from processes of the same user (root's, with CAP_SYS_PTRACE, still
// reach them). mnemos serve calls it before it draws its session key.
func HideMemory() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
