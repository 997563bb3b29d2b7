package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// HelperName is the program name (argv[0]) under which the mnemos binary
// acts as the sandbox's helper: a process started in a new user and
// mount namespace that builds the view, confines itself and executes the
// command. A process that lacks CAP_SYS_ADMIN cannot make a mount
// namespace from one of its threads (a multithreaded process cannot enter
// a new user namespace), so it starts this helper instead. Started by
// hand, the helper only confines what it runs further; it grants nothing.
const HelperName = "mnemos-sandbox-helper"

// IsHelper reports whether the process was started as the helper.
func IsHelper(argv0 string) bool { return argv0 == HelperName }

// The helper's descriptors, after its standard streams.
const (
	helperRuleset = 3 // the Landlock ruleset, made by the parent
	helperPlan    = 4 // the plan, as JSON, until end of file
	helperStatus  = 5 // close-on-exec: end of file when the command runs, an error message otherwise
	helperWatch   = 6 // with a watch: a socket to send the listener back on
)

// helperPlanMsg is what the parent tells the helper.
type helperPlanMsg struct {
	View   wireView          `json:"view"`
	Filter []unix.SockFilter `json:"filter,omitempty"`
	// Watch is the filter that traps changes to files; the helper sends
	// its listener back on helperWatch.
	Watch []unix.SockFilter `json:"watch,omitempty"`
	// RequireWatch: a kernel that refuses the watch fails the helper,
	// and the command does not run.
	RequireWatch bool   `json:"require_watch,omitempty"`
	Dir          string `json:"dir"`
}

type wireView struct {
	Writable []string   `json:"writable,omitempty"`
	Zones    []wireZone `json:"zones,omitempty"`
	Pins     []string   `json:"pins,omitempty"`
	Later    []string   `json:"later,omitempty"`
	Sockets  []string   `json:"sockets,omitempty"`
}

type wireZone struct {
	Dir   string      `json:"dir"`
	Mode  uint32      `json:"mode"`
	Keep  []wireKept  `json:"keep,omitempty"`
	Links [][2]string `json:"links,omitempty"`
}

type wireKept struct {
	Path  string `json:"path"`
	Dir   bool   `json:"dir,omitempty"`
	Write bool   `json:"write,omitempty"`
}

func (v *viewPlan) wire() wireView {
	w := wireView{Writable: v.writable, Pins: v.pins, Later: v.later, Sockets: v.sockets}
	for _, z := range v.zones {
		wz := wireZone{Dir: z.dir, Mode: z.mode}
		for _, k := range z.keep {
			wz.Keep = append(wz.Keep, wireKept{Path: k.path, Dir: k.dir, Write: k.write})
		}
		for _, l := range z.links {
			wz.Links = append(wz.Links, [2]string{l.path, l.target})
		}
		w.Zones = append(w.Zones, wz)
	}
	return w
}

func (w wireView) plan() *viewPlan {
	v := &viewPlan{writable: w.Writable, pins: w.Pins, later: w.Later, sockets: w.Sockets}
	for _, wz := range w.Zones {
		z := zone{dir: wz.Dir, mode: wz.Mode}
		for _, k := range wz.Keep {
			z.keep = append(z.keep, kept{path: k.Path, dir: k.Dir, write: k.Write})
		}
		for _, l := range wz.Links {
			z.links = append(z.links, link{path: l[0], target: l[1]})
		}
		v.zones = append(v.zones, z)
	}
	return v
}

// startHelper starts cmd through the helper: the mnemos binary, in a new
// user namespace that maps the user to itself and a new mount namespace,
// keeping CAP_SYS_ADMIN there (an ambient capability) until it has built
// the view; then it drops every capability, sets no_new_privs, applies
// the ruleset and the filter, and executes the command in place, so
// cmd.Process is the command. With a watch, the helper installs its
// filter last and sends the listener back over a socket (SCM_RIGHTS)
// before it executes the command; this process serves it with handle.
// It returns once the command runs, or the helper's error, and a note
// when the helper's kernel refused the watch.
func startHelper(cmd *exec.Cmd, c confinementOf, handle func(Change) error, requireWatch bool) (w *Watch, note string, err error) {
	var watchR, watchW *os.File
	if c.watch != nil {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, "", fmt.Errorf("watch changes: %w", err)
		}
		watchR, watchW = os.NewFile(uintptr(fds[0]), "watch"), os.NewFile(uintptr(fds[1]), "watch")
		defer watchR.Close()
		defer watchW.Close()
	}
	err = runHelper(cmd, c, watchW, requireWatch, func() error {
		if watchR == nil {
			return nil
		}
		watchW.Close()
		w, note, err = receiveWatch(watchR, handle)
		return err
	})
	if err != nil {
		w.Close()
		return nil, "", err
	}
	return w, note, nil
}

// receiveWatch takes the listener the helper sends, and serves it with
// handle; or the note the helper sends when its kernel refused the
// filter. End of file means the helper failed before: it says why on
// its status pipe.
func receiveWatch(sock *os.File, handle func(Change) error) (*Watch, string, error) {
	buf := make([]byte, 1024)
	oob := make([]byte, unix.CmsgSpace(4))
	var n, oobn int
	var err error
	for {
		n, oobn, _, _, err = unix.Recvmsg(int(sock.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, "", fmt.Errorf("receive the watch from the sandbox helper: %w", err)
	}
	var fds []int
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, "", fmt.Errorf("receive the watch from the sandbox helper: %w", err)
		}
		for _, m := range msgs {
			got, err := unix.ParseUnixRights(&m)
			if err == nil {
				fds = append(fds, got...)
			}
		}
	}
	if len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		if n == 0 {
			return nil, "", nil
		}
		return nil, "changes are not watched: " + string(buf[:n]), nil
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(fds[0])
		return nil, "", fmt.Errorf("watch changes: %w", err)
	}
	return serveWatch(fds[0], wake, handle, 0), "", nil
}

// runHelper starts the helper with c's plan (and watch, the helper's end
// of the watch socket, when not nil), calls started once it has started,
// and returns once the command runs, or why not.
func runHelper(cmd *exec.Cmd, c confinementOf, watch *os.File, requireWatch bool, started func() error) error {
	planR, planW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer planR.Close()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		planW.Close()
		return err
	}
	defer statusR.Close()
	msg := helperPlanMsg{View: c.view.wire(), Filter: c.filter, Watch: c.watch, RequireWatch: requireWatch, Dir: cmd.Dir}
	raw, err := json.Marshal(msg)
	if err != nil {
		planW.Close()
		statusW.Close()
		return err
	}
	// The plan is small (a few KiB); written ahead, it waits in the pipe.
	go func() {
		_, _ = planW.Write(raw)
		planW.Close()
	}()
	dup, err := unix.FcntlInt(uintptr(c.fd), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		planW.Close()
		statusW.Close()
		return err
	}
	ruleset := os.NewFile(uintptr(dup), "landlock-ruleset")
	defer ruleset.Close()
	path, args, extra, attr := cmd.Path, cmd.Args, cmd.ExtraFiles, cmd.SysProcAttr
	defer func() { cmd.Path, cmd.Args, cmd.ExtraFiles, cmd.SysProcAttr = path, args, extra, attr }()
	// The binary's own path, not /proc/self/exe: mnemos is undumpable,
	// so its /proc entries belong to root, whom the new user namespace
	// does not map.
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the mnemos binary for the sandbox helper: %w", err)
	}
	cmd.Path = self
	cmd.Args = append([]string{HelperName, path}, args...)
	cmd.ExtraFiles = []*os.File{ruleset, planR, statusW}
	if watch != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, watch)
	}
	sys := &syscall.SysProcAttr{}
	if attr != nil {
		*sys = *attr
	}
	uid, gid := os.Getuid(), os.Getgid()
	sys.Cloneflags |= unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWIPC
	sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	sys.GidMappingsEnableSetgroups = false
	sys.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	cmd.SysProcAttr = sys
	err = cmd.Start()
	statusW.Close()
	if err != nil {
		return err
	}
	if err := started(); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return err
	}
	why, _ := io.ReadAll(statusR)
	if len(why) > 0 {
		_ = cmd.Wait()
		return fmt.Errorf("%s", why)
	}
	return nil
}

// RunHelper is the helper's main: argv is [HelperName, PATH, ARGV0,
// ARGS...]. It returns only on failure, with the status to exit with,
// after telling the parent why.
func RunHelper(argv []string) int {
	status := os.NewFile(helperStatus, "status")
	fail := func(err error) int {
		fmt.Fprintf(status, "%v", err)
		return 127
	}
	if len(argv) < 3 {
		return fail(errors.New("the sandbox helper needs a program to run"))
	}
	runtime.LockOSThread()
	raw, err := io.ReadAll(os.NewFile(helperPlan, "plan"))
	if err != nil {
		return fail(fmt.Errorf("read the sandbox plan: %w", err))
	}
	unix.Close(helperPlan)
	var msg helperPlanMsg
	if err := json.Unmarshal(raw, &msg); err != nil {
		return fail(fmt.Errorf("read the sandbox plan: %w", err))
	}
	if err := msg.View.plan().build(); err != nil {
		return fail(fmt.Errorf("build the sandbox's view: %w", err))
	}
	if msg.Dir != "" {
		if err := unix.Chdir(msg.Dir); err != nil {
			return fail(fmt.Errorf("chdir %s: %w", msg.Dir, err))
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("clear ambient capabilities: %w", err))
	}
	if unix.Geteuid() == 0 {
		// Root keeps root's short list, as on a confined thread.
		if _, err := dropCapabilities(); err != nil {
			return fail(err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("set no_new_privs: %w", err))
	}
	if err := ll.LandlockRestrictSelf(helperRuleset, 0); err != nil {
		return fail(fmt.Errorf("landlock_restrict_self: %w", err))
	}
	unix.Close(helperRuleset)
	if len(msg.Filter) > 0 {
		if err := installSeccomp(msg.Filter); err != nil {
			return fail(err)
		}
	}
	if len(msg.Watch) > 0 {
		if err := sendWatch(msg.Watch, msg.RequireWatch); err != nil {
			return fail(err)
		}
	}
	if err := closeInheritedOnExec(); err != nil {
		return fail(err)
	}
	// The status pipe is close-on-exec now: the parent reads end of file
	// once the command runs.
	err = unix.Exec(argv[1], argv[2:], os.Environ())
	return fail(fmt.Errorf("exec %s: %w", argv[1], err))
}

// sendWatch installs the watch's filter on the helper's thread and sends
// the listener to the parent, or, when the kernel refuses the filter, why.
// The helper keeps no copy: the command cannot reach it.
func sendWatch(prog []unix.SockFilter, required bool) error {
	defer unix.Close(helperWatch)
	fd, err := installWatch(prog)
	if err != nil {
		if serr := unix.Sendmsg(helperWatch, []byte(err.Error()), nil, nil, 0); serr != nil || !required {
			return serr
		}
		return fmt.Errorf("%w: changes cannot be watched: %v", ErrUnenforceable, err)
	}
	defer unix.Close(fd)
	if err := unix.Sendmsg(helperWatch, []byte("listener"), unix.UnixRights(fd), nil, 0); err != nil {
		return fmt.Errorf("send the watch to mnemos: %w", err)
	}
	return nil
}
