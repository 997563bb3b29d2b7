package sandbox

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnenforceable is returned by Start, without starting the command, when
// the spec is Required and the kernel cannot enforce it.
var ErrUnenforceable = errors.New("the sandbox cannot be enforced on this kernel")

// ErrUnsafeGrant is returned by DefaultSpec when a directory it was asked to
// grant is the home directory, holds it, or holds or lies inside a protected
// or secret path.
var ErrUnsafeGrant = errors.New("unsafe sandbox grant")

// GrantError is a directory DefaultSpec refuses to grant. It matches
// ErrUnsafeGrant.
type GrantError struct {
	// What names the grant: "workspace", "temp directory", "write path",
	// "read path", "cache", "home read path" or "home tool path".
	What string
	// Path is the path as it was given.
	Path string
	// Policy is true for Options.ExtraRead and ExtraWrite, the paths of the
	// policy's sandbox section.
	Policy bool
	// Why completes the sentence "the <What> <Path> ...".
	Why string
	// Reaches is what the grant would expose: ReachesHome,
	// ReachesProtected (Options.Protected, mnemos's own files) or
	// ReachesSecret (Options.Secrets). Conflict is that path, as given.
	Reaches  Reach
	Conflict string
}

// Reach is what a refused grant would expose.
type Reach int

const (
	// ReachesHome: the grant is the home directory or holds it.
	ReachesHome Reach = iota + 1
	// ReachesProtected: it holds or lies inside mnemos's own files.
	ReachesProtected
	// ReachesSecret: it holds or lies inside one of the user's secrets.
	ReachesSecret
)

func (e *GrantError) Error() string {
	return fmt.Sprintf("%v: the %s %s %s", ErrUnsafeGrant, e.What, e.Path, e.Why)
}

// Unwrap makes errors.Is(err, ErrUnsafeGrant) hold.
func (e *GrantError) Unwrap() error { return ErrUnsafeGrant }

// Spec is what a confined command may reach. Every path is absolute; paths
// that do not exist when the command starts are skipped and reported.
type Spec struct {
	// ReadExec trees may be read, listed and executed (system directories).
	ReadExec []string `json:"read_exec,omitempty"`
	// ReadOnly trees may be read and listed, not executed.
	ReadOnly []string `json:"read,omitempty"`
	// ReadWrite trees may be read, executed, created, changed, renamed and
	// removed (workspace, temp, caches). Device nodes may not be made.
	ReadWrite []string `json:"write,omitempty"`
	// Devices may be opened for reading and writing (/dev/null).
	Devices []string `json:"devices,omitempty"`
	// Terminals are Devices that also accept device ioctls (/dev/tty).
	Terminals []string `json:"terminals,omitempty"`
	// Deny lists paths no rule may reach: mnemos's configuration and state,
	// the user's secrets. A grant inside one is dropped; a grant that holds
	// one is narrowed to its other entries (see doc.go). Both are reported.
	Deny []string `json:"deny,omitempty"`

	// Network allows TCP. When false, TCP bind and connect are refused
	// (Landlock ABI 4 and later) and, where the seccomp filter is applied,
	// no AF_INET or AF_INET6 socket can be opened at all.
	Network bool `json:"network"`
	// UDP, with Network, lets the seccomp filter allow UDP sockets, to any
	// address and port: name resolution needs them. DefaultSpec sets it
	// with Network. Without Network it has no effect.
	UDP bool `json:"udp,omitempty"`
	// ConnectPorts, when Network is true and the list is not empty, are the
	// only TCP ports the command may connect to. Empty means any port.
	ConnectPorts []uint16 `json:"connect_ports,omitempty"`
	// BindPorts, when Network is true, are the only TCP ports the command
	// may bind (0 is any ephemeral port). Empty means none: a command
	// binds a TCP port only where someone listed it (Landlock ABI 4 and
	// later; best effort like scoping, so Required does not refuse an
	// older kernel for it).
	BindPorts []uint16 `json:"bind_ports,omitempty"`

	// Scoped keeps the command from connecting to abstract unix sockets and
	// from signalling processes outside its sandbox (Landlock ABI 6).
	Scoped bool `json:"scoped"`
	// KeepCapabilities leaves a command started by root every capability.
	// By default root's command keeps only a short list (see doc.go).
	KeepCapabilities bool `json:"keep_capabilities,omitempty"`
	// Required refuses to start the command (ErrUnenforceable) unless the
	// kernel enforces the filesystem rules and, when the spec limits TCP,
	// the TCP rules (Landlock ABI 4, or, without network, the seccomp
	// filter). Scoping and the rest of the filter stay best effort and
	// reported.
	Required bool `json:"required,omitempty"`
	// RequireTCP refuses to start the command (ErrUnenforceable) when the
	// kernel has Landlock but cannot enforce the spec's TCP limits: ports
	// need Landlock ABI 4, no network needs ABI 4 or the seccomp filter.
	// Unlike Required, it lets a kernel without Landlock run the command
	// unconfined (and say so in Applied). The gate sets it when the policy
	// itself limits TCP, so that an old kernel never silently drops a limit
	// someone wrote down.
	RequireTCP bool `json:"require_tcp,omitempty"`

	// View runs the command in a private mount namespace (see view_linux.go)
	// where every mount but the ReadWrite trees is read-only, Later paths
	// are read-only too, the directories that hold what the spec does not
	// grant (Home, /root, /home, /run, /var, /mnt, /media, /srv) show only
	// what it grants, and the socket files named in MaskSockets or found in
	// SocketDirs are covered. It is built where Status.View says the
	// kernel and mnemos's privileges allow it; RequireView refuses to run
	// elsewhere.
	View        bool `json:"view,omitempty"`
	RequireView bool `json:"require_view,omitempty"`
	// ViewByHelper builds the view in the helper process (HelperName)
	// even where this process could build it on a thread, as it must
	// without CAP_SYS_ADMIN.
	ViewByHelper bool `json:"view_by_helper,omitempty"`
	// Home is the user's home directory: hidden but for what is granted.
	Home string `json:"home,omitempty"`
	// Later are paths inside the ReadWrite trees that stay read-only:
	// what runs later outside the sandbox (LaterPaths: git hooks and
	// configuration, .envrc, editor tasks...) and PATH directories. The
	// ones that do not exist are reported in Applied.Absent.
	Later []string `json:"later,omitempty"`
	// Sockets are socket files the command may connect to although they
	// lie outside what it is granted (the policy's sandbox.sockets).
	Sockets []string `json:"sockets,omitempty"`
	// MaskSockets are socket files to cover wherever they are visible (the
	// ones the environment names: SSH_AUTH_SOCK, DOCKER_HOST...);
	// SocketDirs are directories (the temp directories) whose sockets
	// bound in this network namespace, at any depth (/proc/net/unix), are
	// covered, as are those of the writable trees but the workspace.
	MaskSockets []string `json:"mask_sockets,omitempty"`
	SocketDirs  []string `json:"socket_dirs,omitempty"`

	// Watch shows every change the command and its descendants are about
	// to make to the file system to a handler, before the kernel makes it
	// (StartWatched). Where the kernel cannot (Status.Watch), the command
	// runs unwatched and Applied says why.
	Watch bool `json:"watch,omitempty"`
	// RequireWatch refuses to start the command (ErrUnenforceable) when
	// its changes cannot be watched: what allowed it relies on them being
	// kept.
	RequireWatch bool `json:"require_watch,omitempty"`
}

// restrictsTCP reports whether the spec limits TCP beyond refusing to
// bind ports it does not list: no network, or connect ports.
func (s Spec) restrictsTCP() bool {
	return !s.Network || len(s.ConnectPorts) > 0
}

// Applied is what Start enforced on one command.
type Applied struct {
	// ABI is the kernel's Landlock ABI version, 0 when it has none.
	ABI int `json:"landlock_abi"`
	// Enforced is true when a Landlock domain confines the command.
	Enforced bool `json:"enforced"`
	// FS is true when file access outside the granted trees is refused.
	FS bool `json:"fs"`
	// Net is true when the kernel limits the command's TCP bind or connect:
	// by Landlock's TCP rules, or by the seccomp filter refusing TCP
	// sockets to a command without network.
	Net bool `json:"net"`
	// Scoped is true when abstract unix sockets (and, where the kernel is
	// fixed, signals) are scoped to the sandbox.
	Scoped bool `json:"scoped"`
	// DroppedCaps is true when root's command lost its dangerous
	// capabilities.
	DroppedCaps bool `json:"dropped_caps,omitempty"`
	// Seccomp is true when the seccomp filter confines the command's
	// sockets and refuses io_uring and terminal injection; a note says
	// what it allows.
	Seccomp bool `json:"seccomp,omitempty"`
	// View is true when the command runs in the private mount view.
	View bool `json:"view,omitempty"`
	// Watched is true when every change the command makes to files is
	// shown to the handler first (Spec.Watch).
	Watched bool `json:"watched,omitempty"`
	// Absent are Spec.Later paths that did not exist when the command
	// started: a mount cannot keep a missing file read-only, so the caller
	// looks at them again when the command has ended.
	Absent []string `json:"absent,omitempty"`
	// Skipped are granted paths that did not exist, so were not granted.
	Skipped []string `json:"skipped,omitempty"`
	// Notes say what was narrowed, dropped, filtered or not enforced, one
	// line each.
	Notes []string `json:"notes,omitempty"`
}

// Summary is a one-line description for the audit log and diagnostics.
func (a Applied) Summary() string {
	if !a.Enforced {
		return fmt.Sprintf("unconfined (Landlock ABI %d)", a.ABI)
	}
	parts := []string{"files"}
	if a.Net {
		parts = append(parts, "tcp")
	}
	if a.Scoped {
		parts = append(parts, "scoped")
	}
	if a.Seccomp {
		parts = append(parts, "seccomp")
	}
	if a.DroppedCaps {
		parts = append(parts, "capabilities dropped")
	}
	if a.View {
		parts = append(parts, "read-only view")
	}
	if a.Watched {
		parts = append(parts, "changes watched")
	}
	return fmt.Sprintf("confined by Landlock ABI %d: %s", a.ABI, strings.Join(parts, ", "))
}

// Status is what the kernel offers and what mnemos enforces.
type Status struct {
	// ABI is the Landlock ABI version, 0 when the kernel has none.
	ABI int `json:"landlock_abi"`
	// Enforced is true when mnemos applies a ruleset to commands it runs,
	// which it does whenever the kernel has Landlock.
	Enforced bool `json:"enforced"`
	// Err is why the probe failed, if it did.
	Err string `json:"error,omitempty"`
	// Errata is the kernel's bitmask of fixed Landlock errata.
	Errata int `json:"errata,omitempty"`
	// TerminalInjection is true when the kernel lets a process push input
	// into a terminal it holds (the TIOCSTI ioctl).
	TerminalInjection bool `json:"terminal_injection,omitempty"`
	// Seccomp is true when mnemos can add its seccomp filter to the
	// Landlock domain (amd64 and arm64); SeccompErr says why not.
	Seccomp    bool   `json:"seccomp"`
	SeccompErr string `json:"seccomp_error,omitempty"`
	// View is true when mnemos can build the private mount view
	// (Spec.View) for the commands it runs; ViewErr says why not, and
	// ViewHint what restores it.
	View     bool   `json:"view"`
	ViewErr  string `json:"view_error,omitempty"`
	ViewHint string `json:"view_hint,omitempty"`
	// Watch is true when mnemos can see each change a confined command
	// makes to files before it happens (Spec.Watch: seccomp user
	// notification, amd64 and arm64); WatchErr says why not.
	Watch    bool   `json:"watch"`
	WatchErr string `json:"watch_error,omitempty"`
}

// WithABI is s on a kernel whose Landlock ABI is abi (0: none), as
// Probe would report it there: without Landlock nothing is enforced and
// the seccomp filter, installed with the Landlock domain, is not either.
func (s Status) WithABI(abi int) Status {
	s.ABI, s.Enforced = abi, abi >= 1
	if abi < 1 && s.Seccomp {
		s.Seccomp, s.SeccompErr = false, "the seccomp filter is installed with the Landlock domain, which this kernel cannot make"
	}
	if abi < 1 && s.Watch {
		s.Watch, s.WatchErr = false, "changes are watched by a filter installed with the Landlock domain, which this kernel cannot make"
	}
	return s
}

// filtered reports whether a confined command also gets the seccomp
// filter: it is installed together with the Landlock domain.
func (s Status) filtered() bool { return s.ABI >= 1 && s.Seccomp }

// erratumSignalThreads is the erratum whose fix lets threads of one
// process signal each other whatever their Landlock domains. Without it,
// signal scoping is left off (as go-landlock does).
const erratumSignalThreads = 0x2

// signalScoping reports whether signals can be scoped on this kernel.
func (s Status) signalScoping() bool {
	return s.ABI >= 6 && s.Errata&erratumSignalThreads != 0
}

// Enforceable reports whether a run would be confined.
func (s Status) Enforceable() bool { return s.Enforced }

// Note is a one-line human summary.
func (s Status) Note() string {
	if s.ABI < 1 {
		why := "no Landlock on this kernel"
		if s.Err != "" {
			why += " (" + s.Err + ")"
		}
		return why + "; commands run unconfined"
	}
	what := []string{"touch files outside its granted directories"}
	if s.ABI >= 4 {
		what = append(what, "bind or connect TCP ports it was not granted")
	}
	switch {
	case s.signalScoping():
		what = append(what, "reach abstract unix sockets or signal processes outside its sandbox")
	case s.ABI >= 6:
		what = append(what, "reach abstract unix sockets outside its sandbox")
	}
	if !s.filtered() {
		return fmt.Sprintf("Landlock ABI %d enforced: a command may not %s", s.ABI, joinList(what, "or"))
	}
	what = append(what, "open sockets other than unix, netlink and (with network) TCP and UDP ones",
		"use io_uring or push input into a terminal")
	return fmt.Sprintf("Landlock ABI %d and a seccomp filter enforced: a command may not %s", s.ABI, joinList(what, "or"))
}

// Gaps lists what a confined command can still do at this ABI.
func (s Status) Gaps() []string {
	var g []string
	if s.ABI < 1 {
		g = append(g, "everything: there is no Landlock ruleset")
	}
	if s.ABI < 3 {
		g = append(g, "truncating files by path (needs ABI 3)")
	}
	switch {
	case s.ABI >= 4:
	case s.filtered():
		g = append(g, "TCP ports, when network is granted (needs ABI 4; without network the seccomp filter refuses TCP)")
	default:
		g = append(g, "TCP bind and connect (needs ABI 4)")
	}
	if s.ABI < 5 {
		g = append(g, "ioctl on devices it may open (needs ABI 5)")
	}
	if s.ABI < 6 {
		g = append(g, "abstract unix sockets and signals to processes outside the sandbox (needs ABI 6)")
	} else if !s.signalScoping() {
		g = append(g, "signals to processes outside the sandbox (the kernel lacks the fix for signals between threads)")
	}
	if s.filtered() {
		g = append(g, "UDP to any address and port, when network is granted (name resolution needs it)")
	} else {
		g = append(g, "UDP, MPTCP and other non-TCP sockets")
	}
	if !s.View {
		g = append(g,
			"connecting to unix socket files (an ssh or gpg agent, a docker socket)",
			"file metadata: chmod, chown, utime and setxattr on files it cannot open; stat, readlink and chdir anywhere",
			"writing what runs later inside the workspace (git hooks and config, .envrc)",
		)
	} else {
		g = append(g, "stat, readlink and chdir in the system directories it may read")
	}
	g = append(g, "files reachable through hard links made before the command started")
	if s.TerminalInjection && !s.filtered() {
		g = append(g, "pushing input into a terminal it holds (TIOCSTI; dev.tty.legacy_tiocsti is on)")
	}
	return g
}

// joinList joins phrases with commas and a final conjunction.
func joinList(p []string, conj string) string {
	switch len(p) {
	case 0:
		return ""
	case 1:
		return p[0]
	}
	return strings.Join(p[:len(p)-1], ", ") + " " + conj + " " + p[len(p)-1]
}
