// Package sandbox confines the commands mnemos runs with Landlock, so that
// what the policy did not grant, the kernel refuses, and it reports
// honestly what this kernel enforces.
//
// It owns: probing the kernel's Landlock ABI and seccomp support (Probe,
// Status), building the default confinement for a run (DefaultSpec),
// turning a Spec into a ruleset and a seccomp filter and starting a command
// under them (Start, Applied), and explaining a refusal: of a program that
// could not start (DeniedHint), and of the paths and ports a failed command
// named (Refusals), each with the policy snippet that grants it;
// showing its caller each change a command is about to make to files,
// before it happens (StartWatched, Change); and making harmless the git
// repositories a run leaves in its workspace (WatchRepos). It never decides whether a command may run: that is the
// gate's job, and the sandbox only narrows what an allowed command can
// touch. It never confines mnemos itself, reads no environment, and keeps
// no state between calls but the listing WatchRepos keeps in the file its
// caller names.
//
// # How a command is confined
//
// Start builds the ruleset and the seccomp filter in the calling
// goroutine, then runs a fresh goroutine locked to its OS thread. That
// thread alone drops root's dangerous capabilities, sets no_new_privs,
// calls landlock_restrict_self (the raw system call, for this thread only),
// installs the seccomp filter (seccomp(2) without
// SECCOMP_FILTER_FLAG_TSYNC, so again for this thread only), with
// Spec.Watch a second filter whose listener stays in mnemos (see Watching
// changes), then starts the command, which inherits the Landlock domain
// and the filters with all its descendants. The goroutine exits without unlocking, and the Go runtime
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
// the workspace, the temp directories the caller names and the data
// directories of the tool caches under home (~/.cache, ~/go/pkg,
// ~/.cargo/registry and ~/.cargo/git, ~/.npm/_cacache, ~/.gradle/caches,
// ~/.m2/repository and the like; see DefaultCaches), never their programs
// or configuration; read on ~/.gitconfig, ~/.config/git and cargo's
// configuration; read and execute on ~/.rustup and on tool directories
// under home (~/.local/bin, ~/go/bin, ~/.cargo/bin, ~/.pyenv, ~/.nvm and the
// like).
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
//   - DefaultSpec refuses (ErrUnsafeGrant, as a *GrantError) a workspace,
//     temp directory or policy path that is home or holds it, or that
//     holds or lies inside a protected path (mnemos's configuration and
//     state) or a secret (~/.ssh, ~/.aws, /etc/shadow, see DefaultSecrets). Narrowing such a grant would
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
//   - A grant that cannot write (read, or read and execute) is not
//     narrowed around a denied path that file permissions already keep
//     from the user mnemos runs as: someone else's file the user may
//     neither read, write nor execute (/etc/shadow for anyone but root),
//     a missing one in someone else's directory the user may not write,
//     or someone else's directory the user may list but not write whose
//     entries are all so (/etc/sudoers.d; the command then sees the
//     names in it, as the user can). The command, started with no_new_privs and never more
//     capabilities, cannot reach it either, nor change its permissions.
//     Root passes every permission check, so for root /etc is still
//     narrowed, one rule per entry (about 0.7 ms more per run here).
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
// included (a test suite that starts a local server needs network), and
// the seccomp filter refuses every socket but unix and netlink ones. With
// Network true, ConnectPorts, when not empty, are the only TCP ports it
// may connect to, and BindPorts the only ones it may bind, none when the
// list is empty (port 0 means an ephemeral port), and the filter
// allows TCP and, with Spec.UDP, UDP sockets. Spec.Scoped keeps a command
// from reaching abstract unix sockets and signalling processes outside its
// sandbox.
//
// # The seccomp filter
//
// Landlock's network rules cover TCP alone. An MPTCP socket connects to
// any TCP server (it falls back to TCP with a peer that does not speak
// MPTCP), UDP and SCTP pass by, and a send with MSG_FASTOPEN connects a
// TCP socket without the connect hook the port rules rely on. A small
// classic BPF filter, built by hand in seccomp_linux.go, closes these. It
// looks only at system call numbers and integer arguments, never at
// memory, so it cannot be raced:
//
//   - socket(2): AF_UNIX and AF_NETLINK always (name resolution and
//     getifaddrs use netlink to ask the kernel about interfaces). AF_INET
//     and AF_INET6 only with network, and then only SOCK_STREAM with
//     protocol 0 or IPPROTO_TCP, so MPTCP (IPPROTO_MPTCP) and SCTP are
//     refused, and SOCK_DGRAM with protocol 0 or IPPROTO_UDP when the spec
//     grants UDP (ICMP "ping" sockets are refused). Every other family
//     (AF_PACKET, AF_VSOCK, AF_ALG, Bluetooth...) and raw sockets are
//     refused. socketpair(2) is allowed for AF_UNIX only. Refusals fail
//     with EACCES, as Landlock's do.
//   - Without network no inet socket opens at all. Landlock refuses TCP on
//     loopback too, so little that worked stops working: a program that
//     probes for IPv6 by opening a socket sees "permission denied" and goes
//     on; one that opens an inet socket only to ask about interfaces
//     (SIOCGIFCONF) fails. Name resolution of other hosts fails, as it
//     should. Where
//     Landlock predates TCP rules (ABI 1 to 3), this is what refuses TCP,
//     so Required accepts such a kernel for a spec without network.
//   - With network, UDP goes to any address and port: seccomp cannot read
//     the address, and name resolution needs UDP to the resolver.
//     DefaultSpec grants UDP with network for that reason; a Spec built by
//     hand leaves it off unless it sets UDP. ConnectPorts do not limit UDP.
//   - When ConnectPorts limit TCP, sendto, sendmsg and sendmmsg with
//     MSG_FASTOPEN fail with EACCES; TCP_FASTOPEN_CONNECT goes through
//     connect(2) and stays under the port rules.
//   - io_uring_setup, io_uring_enter and io_uring_register fail with EPERM
//     (io_uring's operations bypass seccomp; programs that use it fall back
//     as they do where the io_uring_disabled sysctl is set), and so does
//     ioctl with TIOCSTI or TIOCLINUX (pushing input into a terminal, on
//     any descriptor). bpf, perf_event_open, userfaultfd and the kernel
//     keyring (keyctl, add_key, request_key) fail with EPERM too: builds do
//     not need them, they are much of the kernel's attack surface, and the
//     keyring may hold the user's credentials. perf, rr and kinit with a
//     keyring cache do not work in the sandbox.
//   - A system call from another architecture (32-bit x86 through int
//     0x80, 32-bit arm) kills the process: its numbers, and socketcall,
//     would pass by the rules above. x32 calls on x86-64 fail with ENOSYS,
//     as on kernels built without x32.
//
// The filter applies whatever Spec.KeepCapabilities says. It is built for
// amd64 and arm64; elsewhere, or where the kernel refuses seccomp filters
// (Status.Seccomp is false), the command runs under Landlock alone and
// Applied.Notes says what is not restricted. On a kernel without Landlock
// neither is applied. Installing the filter adds about 0.1 ms to a start;
// on recent kernels, calls the filter allows whatever their arguments
// (most of them) skip it through the kernel's seccomp cache.
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
// was not enforced; nothing is silent. Spec.RequireTCP (set by the gate
// when the policy itself limits TCP) refuses a kernel whose Landlock
// cannot enforce those limits, while still letting a kernel without
// Landlock run the command unconfined.
//
// # The view
//
// Landlock can only grant, and it does not restrict chmod, chown, utime,
// setxattr or connecting to a socket file. With Spec.View, the command
// also runs in a private mount namespace (view_linux.go) where every
// mount is read-only but the ReadWrite trees; Spec.Later (what runs later
// outside the sandbox: git hooks, config and info, .envrc, editor tasks,
// PATH directories, see LaterPaths) is bound read-only over itself inside
// them; the home directory, /root, /home, /run, /var, /mnt, /media, /srv
// and /dev/shm are replaced by empty read-only directories holding only
// what the spec grants in them (so the sockets of the user's session are
// absent); and the sockets bound in the temp directories and writable
// caches (from /proc/net/unix) and those the environment names are
// covered with /dev/null. A process with
// CAP_SYS_ADMIN builds it on the thread that starts the command, before
// Landlock and the seccomp filter; any other starts the mnemos binary as
// its helper (HelperName) in a new user and mount namespace, which builds
// the view, confines itself and executes the command. Later paths that do
// not exist are listed in Applied.Absent for the caller to look at when
// the command ends; BecomeSubreaper and ReapLeftovers let it stop what the
// command left running first. Status.Promises says which of the seven
// promises hold on this machine.
//
// Before any command starts, every descriptor above the standard streams
// is marked close-on-exec: only stdin, stdout and stderr cross.
//
// # Watching changes
//
// With Spec.Watch, every change the command and its descendants are about
// to make to the file system is shown to a handler mnemos gives
// (StartWatched), before the kernel makes it, so that mnemos can keep what
// the change destroys (the journal). A second seccomp filter, installed
// after the first with SECCOMP_FILTER_FLAG_NEW_LISTENER, returns
// SECCOMP_RET_USER_NOTIF for open, openat and creat with O_WRONLY, O_RDWR,
// O_CREAT or O_TRUNC (the flags are checked in the filter: reading never
// waits), openat2, truncate, unlink, unlinkat, rmdir, mkdir, mkdirat,
// mknod, mknodat, rename, renameat, renameat2, link, linkat, symlink,
// symlinkat, chmod, fchmod, fchmodat, fchmodat2, chown, lchown, fchown
// and fchownat (amd64 and arm64). ftruncate, fallocate, write and a
// writable mmap need a descriptor opened for writing, which was shown
// when it was opened; io_uring is refused by the first filter, and so is
// openat2, whose refusal wins over the notification. open_by_handle_at
// for writing, which names no path (and needs a capability root's
// command drops), fails with EPERM.
//
// The calling thread waits while one goroutine of mnemos reads the call
// from the caller's memory (process_vm_readv, or /proc/PID/mem where that
// is refused), resolves the path as the kernel will: relative to the
// caller's working directory (/proc/TID/cwd) or directory descriptor
// (/proc/TID/fd/N), with /proc/self, /proc/thread-self and /dev/fd taken
// as the caller's, links in the parent directories resolved, and the last
// element only when the call follows it; checks that the call still waits
// (SECCOMP_IOCTL_NOTIF_ID_VALID, so a recycled pid cannot lend another
// process's path); hands the Change to the handler; and answers: go on,
// or fail with the handler's errno. A call mnemos cannot read fails
// (EFAULT, ENAMETOOLONG, or the error reading it gave). A call through a
// descriptor (or /proc/PID/fd/N) whose name was removed names no file: it
// is let through unshown when the file has no other name (O_TMPFILE, a
// deleted file) and fails with EPERM when it still has one, which would
// change unseen; a name the kernel shows as "NAME (deleted)" counts only
// if the file of that name is the one open. renameat2 with
// RENAME_WHITEOUT fails with EPERM.
//
// The listener is mnemos's alone. On the thread start the kernel returns
// it in this process; a prepared thread (Prepare) installs the filter
// before the handler is known, and its own calls pass until it has
// started the command; the helper installs the filter last and sends the
// listener back over a socket (SCM_RIGHTS) before it executes the
// command, keeping no copy. The watch ends when no process uses the
// filter any more (the kernel reports POLLHUP once the command and all its
// descendants are reaped) or when mnemos closes it (Watch.Close); from
// then on, and if mnemos dies, every trapped call of what is left fails
// with ENOSYS: nothing the command does afterwards changes files unseen.
// Where the filter cannot be installed (another architecture, a kernel
// without user notification, or mnemos itself already under a seccomp
// supervisor, as in a run inside a watched run), the command runs
// unwatched and Applied.Notes says why.
//
// The watch guards against mistakes, not against a command that means to
// hide a change: the kernel reads the path again when it runs the call,
// so another thread of the command may change the string in memory, or
// swap a directory for a symbolic link, between mnemos's reading and the
// kernel's. Landlock, which the kernel checks on the path it does use,
// remains the boundary; the journal keeps what an honest mistake would
// destroy. Paths are resolved in mnemos's view of the file system, which
// is the command's inside the writable trees the view keeps in place; a
// command that changed its root (chroot, root's commands only) is
// resolved from its root.
//
// Not shown: changes of times and extended attributes (utimensat,
// setxattr), which destroy no content; writes through descriptors the
// command did not open (its standard streams); and writes through a hard
// link whose other name lies outside the tree the handler cares about (a
// link made before the run, or one the run makes, which the handler sees
// as a Link). The handler runs in mnemos, unconfined, while the call
// waits: it must not wait on what the command holds (open a fifo it made
// without O_NONBLOCK, take a lock it holds).
//
// # Repositories left in the workspace
//
// No mount keeps read-only a git repository that does not exist yet, and
// git reads the configuration and runs the hooks of every one it finds:
// a submodule git status enters, a nested or bare repository a person
// steps into. WatchRepos checks, when a run ends, the repositories that
// appeared or changed in the workspace during it, and makes each harmless
// (repos.go): its configuration keeps only settings that name no program
// (gitconfig.go), hooks the run wrote and .git files or links to git
// directories outside the workspace are moved aside. It finds them from a
// listing of the workspace's directories kept between runs, reading again
// only those whose change time moved.
//
// # What stays open
//
// A confined command can still: with network, send UDP anywhere; stat,
// readlink and chdir in the trees it may read; read a file through a hard
// link made before it started; and use its standard streams (redirected
// by the caller, they keep their access). Without the view it can also
// connect to unix socket files such as an ssh or gpg agent or the docker
// socket, change the metadata of files it cannot open, and write what
// runs later inside the workspace. Without the seccomp filter
// it can also use UDP, MPTCP (which reaches any TCP server even without
// network while net.mptcp.enabled is 1) and other non-TCP sockets, connect
// with TCP Fast Open past the port rules, and, where
// dev.tty.legacy_tiocsti is on, push input into a terminal it holds.
// Status.Gaps lists these for the running kernel.
package sandbox
