package sandbox

import "fmt"

// Promise is one of the seven things the sandbox promises about every
// command mnemos runs, and whether it holds on this machine.
type Promise struct {
	// Key is a short stable name: later, metadata, descriptors,
	// namespaces, sockets, secrets, audit.
	Key string `json:"key"`
	// What says the promise in one line.
	What  string `json:"what"`
	Holds bool   `json:"holds"`
	// Why says, when it does not hold, what is missing; Hint what
	// restores it (a sysctl, a kernel, a package).
	Why  string `json:"why,omitempty"`
	Hint string `json:"hint,omitempty"`
}

// landlockHint is what brings Landlock to a kernel that has none.
const landlockHint = "boot a kernel built with CONFIG_SECURITY_LANDLOCK=y and landlock in its lsm= list (Linux 5.13 or later; most distributions since 2022)"

// Promises lists the seven promises and which of them hold here:
//
//  1. later: what runs later (git hooks and configuration, .envrc,
//     editor tasks, PATH directories, shell startup files) is read-only;
//  2. metadata: chmod, chown, utime, setxattr, rename and link fail
//     outside the writable trees;
//  3. descriptors: only stdin, stdout and stderr cross into the command;
//  4. namespaces: no new namespaces, mounts, keyrings, bpf or
//     perf_event_open in the sandbox;
//  5. sockets: socket files outside the workspace and temp, abstract
//     sockets and signals outside the sandbox are out of reach;
//  6. secrets: the keys and credentials the guard forbids are unreadable;
//  7. audit: confined commands can neither read the audit key nor write
//     the log, so a rewrite without the key is detected.
func (s Status) Promises() []Promise {
	noLandlock := func(p Promise) Promise {
		p.Why, p.Hint = "no Landlock on this kernel", landlockHint
		if s.Err != "" {
			p.Why += " (" + s.Err + ")"
		}
		return p
	}
	view := func(p Promise) Promise {
		switch {
		case s.ABI < 1:
			return noLandlock(p)
		case !s.View:
			p.Why, p.Hint = "no private mount view: "+s.ViewErr, s.ViewHint
		default:
			p.Holds = true
		}
		return p
	}
	out := []Promise{
		view(Promise{Key: "later", What: "what runs later (git hooks and config, .envrc, editor tasks, PATH directories, shell startup files) is read-only"}),
		view(Promise{Key: "metadata", What: "chmod, chown, utime, setxattr, rename and link fail outside the writable trees"}),
		{Key: "descriptors", What: "only stdin, stdout and stderr cross into the command", Holds: true},
	}
	ns := Promise{Key: "namespaces", What: "no new namespaces, mounts, keyrings, bpf or perf_event_open inside the sandbox"}
	switch {
	case s.ABI < 1:
		ns = noLandlock(ns)
	case !s.filtered():
		ns.Why, ns.Hint = "no seccomp filter: "+s.SeccompErr, "use an amd64 or arm64 kernel built with CONFIG_SECCOMP_FILTER=y"
	default:
		ns.Holds = true
	}
	out = append(out, ns)
	sock := view(Promise{Key: "sockets", What: "socket files outside the workspace and temp, abstract sockets and signals outside the sandbox are out of reach"})
	if sock.Holds && s.ABI < 6 {
		sock.Holds = false
		sock.Why = fmt.Sprintf("abstract unix sockets and signals are not scoped: Landlock ABI %d predates scoping (ABI 6)", s.ABI)
		sock.Hint = "upgrade to Linux 6.12 or later"
	}
	out = append(out, sock)
	secrets := Promise{Key: "secrets", What: "the keys and credentials the guard forbids are unreadable"}
	audit := Promise{Key: "audit", What: "confined commands can neither read the audit key nor write the audit log"}
	if s.ABI < 1 {
		secrets, audit = noLandlock(secrets), noLandlock(audit)
	} else {
		secrets.Holds, audit.Holds = true, true
	}
	return append(out, secrets, audit)
}

// Missing returns the promises that do not hold.
func (s Status) Missing() []Promise {
	var out []Promise
	for _, p := range s.Promises() {
		if !p.Holds {
			out = append(out, p)
		}
	}
	return out
}
