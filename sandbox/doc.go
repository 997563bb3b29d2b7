// Package sandbox confines the commands mnemos runs with Landlock, so that
// what the policy did not grant, the kernel refuses, and it reports
// honestly what this kernel enforces.
//
// It owns: probing the kernel's Landlock ABI (Probe, Status), building the
// default confinement for a run (DefaultSpec), turning a Spec into a
// ruleset and starting a command under it (Start, Applied), and explaining
// a refusal (DeniedHint). It never decides whether a command may run: that
// is the gate's job, and the sandbox only narrows what an allowed command
// can touch. It never confines mnemos itself, reads no environment, and
// keeps no state between calls.
//
// # How a command is confined
//
// Start builds the ruleset in the calling goroutine, then runs a fresh
// goroutine locked to its OS thread. That thread alone drops root's
// dangerous capabilities, sets no_new_privs and calls
// landlock_restrict_self (the raw system call, for this thread only), then
// starts the command, which inherits the Landlock domain with all its
// descendants. The goroutine exits without unlocking, and the Go runtime
// ends a thread whose goroutine exits locked; while it runs, the runtime
// starts new threads from a clean template thread, never from a locked
// one. When the goroutine lands on the main thread, which the runtime would
// keep rather than end, it holds that thread while another goroutine does
// the work. So mnemos stays unconfined and writes the audit log after the
// command ends.
//
// A command started by root keeps only CAP_CHOWN, CAP_DAC_OVERRIDE,
// CAP_FOWNER, CAP_FSETID, CAP_KILL, CAP_SETGID, CAP_SETUID, CAP_SETPCAP,
// CAP_NET_BIND_SERVICE, CAP_SYS_CHROOT and CAP_AUDIT_WRITE (Docker's
// default list without CAP_MKNOD, CAP_NET_RAW and CAP_SETFCAP): Landlock
// does not stand in the way of a process that can load kernel modules, do
// raw I/O or open raw sockets. Spec.KeepCapabilities turns this off.
//
// # The default sandbox
//
// DefaultSpec grants read and execute on /usr, /bin, /sbin, /lib*, /etc,
// /opt, /nix/store and /snap; read on /proc and /sys; read and write on
// /dev/null, /dev/zero, /dev/full, /dev/random and /dev/urandom, plus
// terminal ioctls on /dev/tty, /dev/ptmx and /dev/pts; read and write on
// the workspace, the temp directories the caller names and the caches
// under home (~/.cache, ~/go, ~/.npm, ~/.cargo, ~/.rustup, ~/.gradle,
// ~/.m2); read on ~/.gitconfig and ~/.config/git; read and execute on tool
// directories under home (~/.local/bin, ~/.pyenv, ~/.nvm and the like).
// With network, it also grants read on what name resolution reads outside
// /etc. /dev/shm is not granted (add it to the policy's write list for
// programs that need POSIX shared memory).
//
// /proc is granted read-only and whole, because a command's own entry
// (/proc/self) cannot be named before it exists. Other processes' memory,
// environment, open files and root stay out of reach: the kernel's ptrace
// check refuses them to a process in a Landlock domain the target is not
// in. /dev/fd and /dev/stdin resolve through /proc to the file they name,
// which Landlock checks like any other path.
//
// The home directory is never granted whole. Landlock can only grant; it
// cannot carve a denied directory out of a granted parent. So:
//
//   - DefaultSpec refuses (ErrUnsafeGrant) a workspace, temp directory or
//     policy path that is home or holds it, or that holds or lies inside a
//     protected path (mnemos's configuration and state) or a secret (~/.ssh,
//     ~/.aws, /etc/shadow, see DefaultSecrets). Narrowing such a grant would
//     keep the command from creating files at its top, which fails in ways
//     nobody would understand; refusing says why.
//   - Start, whatever Spec it is given, never grants a denied path or
//     anything that holds one: a grant inside a denied path is dropped, and
//     a grant that holds one (/etc holds /etc/shadow, ~/.cargo holds its
//     credentials) is replaced by grants on each of its entries but the
//     denied one, down to the denied path. The directories on the way only
//     get the right to be listed, so a command sees the names there but
//     cannot read, create or remove anything in them. Entries are taken
//     when the command starts; symbolic links among them are left out.
//     Every drop and narrowing is reported in Applied.Notes.
//
// Paths are compared after resolving symbolic links, and a denied path that
// does not exist yet still counts where it would appear, so a command
// cannot create ~/.config/mnemos/policy.yaml through a granted parent.
// Rules are added through O_PATH descriptors opened without following any
// link, so a link swapped in after the check cannot redirect a grant.
// Paths that do not exist are skipped and listed in Applied.Skipped.
//
// # Network
//
// With Spec.Network false, TCP bind and connect are refused, loopback
// included (a test suite that starts a local server needs network). With
// Network true, ConnectPorts and BindPorts, when not empty, are the only
// ports allowed (bind port 0 means an ephemeral port). Spec.Scoped keeps a
// command from reaching abstract unix sockets and signalling processes
// outside its sandbox.
//
// # Older kernels
//
// Start uses every right the kernel knows, up to ABI 7: ABI 1 restricts
// reading, writing, executing, creating and removing files (and refuses
// moving or linking files between directories everywhere); ABI 2 allows
// such moves within granted trees; ABI 3 restricts truncation; ABI 4 TCP
// bind and connect; ABI 5 device ioctls; ABI 6 abstract unix sockets and
// signals (signals only where the kernel carries the fix for signals
// between threads). On a kernel without Landlock the command runs
// unconfined unless the spec is Required, and Applied says what was and
// was not enforced; nothing is silent.
//
// # What Landlock cannot do here
//
// A confined command can still: use UDP and other non-TCP sockets; reach
// any TCP server through an MPTCP socket, which falls back to TCP and
// which Landlock's TCP rules do not cover (so Network false stops ordinary
// programs, not a determined one, while net.mptcp.enabled is 1); connect
// to unix socket files such as an ssh or gpg agent or the docker socket;
// stat, readlink and chdir anywhere; read a file through a hard link made
// before it started; use the descriptors it inherits (standard streams
// redirected by the caller keep their access); and, where
// dev.tty.legacy_tiocsti is on, push input into a terminal it holds.
// Status.Gaps lists these for the running kernel.
package sandbox
