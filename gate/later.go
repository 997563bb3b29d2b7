package gate

import (
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
	"github.com/mnemos-dev/mnemos/shellparse"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// writesGitConfig reports whether a command of the decision is git
// writing its repository's configuration as part of what it was asked to
// do: git config with a value, git remote add (and rename, remove,
// set-url, set-head, set-branches), git push -u, git branch with
// --set-upstream-to and the other options that rewrite a branch's section,
// git checkout and switch that may create a tracking branch, git submodule
// add, init, sync and update. The sandbox then lets that run write
// .git/config; every other run finds it read-only.
//
// Every command of the request must be git: the write is the run's, and
// another program of the same request (`git switch x && ./script`) would
// get it too.
func writesGitConfig(dec Decision) bool { return gitAloneAnd(dec, gitWritesConfig) }

// changesGitWorktree reports whether every command of the decision is git
// and one of them writes the work tree from the repository (checkout,
// switch, restore, reset, merge, rebase, pull, stash, cherry-pick,
// revert, am, apply, read-tree, checkout-index): the workspace's own later
// files (.vscode, .idea, .husky, .devcontainer, .envrc) may then change as
// the repository has them. A request that mixes git with anything else
// keeps them read-only.
func changesGitWorktree(dec Decision) bool {
	return gitAloneAnd(dec, func(args []string) bool {
		switch sub, _ := gitSubcommand(args); sub {
		case "checkout", "switch", "restore", "reset", "merge", "rebase", "pull", "stash", "cherry-pick", "revert", "am", "apply", "read-tree", "checkout-index":
			return true
		}
		return false
	})
}

// gitAloneAnd reports whether every command of the decision is git and
// does holds for the arguments of one of them.
func gitAloneAnd(dec Decision, does func(args []string) bool) bool {
	found := false
	for _, c := range dec.Commands {
		if filepath.Base(c.Command.Name()) != "git" {
			return false
		}
		found = found || does(c.Command.Args())
	}
	return found
}

// gitWritesConfig is writesGitConfig for one git command's arguments.
func gitWritesConfig(args []string) bool {
	sub, rest := gitSubcommand(args)
	var opts, pos []string
	for i, a := range rest {
		if a == "--" {
			pos = append(pos, rest[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			opts = append(opts, a)
		} else {
			pos = append(pos, a)
		}
	}
	has := func(names ...string) bool {
		for _, o := range opts {
			name, _, _ := strings.Cut(o, "=")
			for _, n := range names {
				if name == n || (strings.HasPrefix(n, "--") && len(name) > 3 && strings.HasPrefix(n, name)) {
					return true
				}
				// Bundled short options: -fu.
				if len(n) == 2 && n[0] == '-' && !strings.HasPrefix(o, "--") && strings.ContainsRune(o[1:], rune(n[1])) {
					return true
				}
			}
		}
		return false
	}
	switch sub {
	case "config":
		if has("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l", "--list", "--show-origin", "--show-scope", "--name-only") {
			return false
		}
		if len(pos) > 0 && (pos[0] == "get" || pos[0] == "list") {
			return false
		}
		return len(pos) >= 2 || has("--unset", "--unset-all", "--replace-all", "--add", "--rename-section", "--remove-section", "-e", "--edit") ||
			(len(pos) > 0 && (pos[0] == "set" || pos[0] == "unset" || pos[0] == "edit" || pos[0] == "rename-section" || pos[0] == "remove-section"))
	case "remote":
		if len(pos) == 0 {
			return false
		}
		switch pos[0] {
		case "add", "rename", "rm", "remove", "set-url", "set-head", "set-branches":
			return true
		}
	case "push":
		return has("-u", "--set-upstream")
	case "branch":
		return has("-u", "--set-upstream-to", "--unset-upstream", "-m", "-M", "--move", "-c", "-C", "--copy", "-d", "-D", "--delete", "--edit-description", "-t", "--track") ||
			(len(pos) == 2 && !has("--list", "-l", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"))
	case "checkout", "switch":
		return has("-b", "-B", "-c", "-C", "-t", "--track", "--guess", "--create", "--force-create") ||
			(len(pos) == 1 && !has("--detach", "-d", "--orphan"))
	case "submodule":
		if len(pos) > 0 {
			switch pos[0] {
			case "add", "init", "sync", "update", "deinit", "set-url", "set-branch":
				return true
			}
		}
	}
	return false
}

// gitSubcommand skips git's own options (-C DIR, -c NAME=VALUE, --git-dir
// and the like) and returns the subcommand and its arguments.
func gitSubcommand(args []string) (string, []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" || a == "--exec-path" || a == "--config-env" || a == "--super-prefix":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a, args[i+1:]
		}
	}
	return "", nil
}

// sessionSockets are the socket files the environment names: the ssh and
// gpg agents, the docker daemon, the session bus, X11 and Wayland
// displays, terminal multiplexers, editors' and window managers' control
// sockets. The sandbox covers each one a command could otherwise reach.
func sessionSockets(getenv func(string) string) []string {
	var out []string
	add := func(p string) {
		if filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	for _, k := range []string{"SSH_AUTH_SOCK", "VSCODE_IPC_HOOK_CLI", "VSCODE_IPC_HOOK", "VSCODE_GIT_IPC_HANDLE", "NVIM", "NVIM_LISTEN_ADDRESS", "SWAYSOCK", "I3SOCK", "NIRI_SOCKET", "GNOME_KEYRING_CONTROL", "JB_IDE_SOCKET"} {
		add(getenv(k))
	}
	for _, k := range []string{"DOCKER_HOST", "CONTAINER_HOST", "PODMAN_HOST"} {
		if v, ok := strings.CutPrefix(getenv(k), "unix://"); ok {
			add(v)
		}
	}
	for _, k := range []string{"DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS"} {
		for _, part := range strings.Split(getenv(k), ";") {
			_, params, _ := strings.Cut(part, ":")
			for _, kv := range strings.Split(params, ",") {
				if v, ok := strings.CutPrefix(kv, "path="); ok {
					add(v)
				}
			}
		}
	}
	for _, k := range []string{"KITTY_LISTEN_ON", "PULSE_SERVER"} {
		if v, ok := strings.CutPrefix(getenv(k), "unix:"); ok {
			add(v)
		}
	}
	if v := getenv("TMUX"); v != "" {
		p, _, _ := strings.Cut(v, ",")
		add(p)
	}
	if v := getenv("GPG_AGENT_INFO"); v != "" {
		p, _, _ := strings.Cut(v, ":")
		add(p)
	}
	if d := getenv("DISPLAY"); strings.HasPrefix(d, ":") {
		n, _, _ := strings.Cut(d[1:], ".")
		add("/tmp/.X11-unix/X" + n)
	}
	if w, rt := getenv("WAYLAND_DISPLAY"), getenv("XDG_RUNTIME_DIR"); w != "" {
		if filepath.IsAbs(w) {
			add(w)
		} else if rt != "" {
			add(filepath.Join(rt, w))
		}
	}
	add("/var/run/docker.sock")
	add("/run/docker.sock")
	return out
}

// quarantine moves aside what a command created at the paths that run
// later outside the sandbox and did not exist when it started (a mount
// cannot keep a missing file read-only): each is renamed in place to
// NAME.quarantined-UNIXTIME (sandbox.MoveAside), which no tool reads, so
// nothing is lost and the person can look at it. It returns each path and
// where it went.
func quarantine(absent []string, now time.Time) [][2]string {
	var out [][2]string
	for _, p := range absent {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		to, err := sandbox.MoveAside(p, now)
		if err != nil {
			out = append(out, [2]string{p, "not moved: " + err.Error()})
			continue
		}
		out = append(out, [2]string{p, to})
	}
	return out
}

// ownTerminals are the terminals mnemos's standard streams are: the only
// ones the command it runs is given.
func ownTerminals() []string {
	var out []string
	for _, fd := range []string{"0", "1", "2"} {
		p, err := os.Readlink("/proc/self/fd/" + fd)
		if err != nil || !strings.HasPrefix(p, "/dev/pts/") || strings.ContainsRune(p, ' ') {
			continue
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// namesStateSecret reports an access of the result that names one of
// mnemos's secrets (files: the older layout's audit key, database and
// page token, the channels' credential files; dirs: the secrets
// directory, which holds the audit key, the state database and its
// journals, the hook tickets and serve's socket): the file itself, a path
// below such a directory, or a pattern that may match one.
func namesStateSecret(res *policy.Result, files, dirs []string) (string, bool) {
	for _, a := range res.Accesses {
		if !strings.HasPrefix(string(a.Capability), "fs:") {
			continue
		}
		glob := a.Glob
		if a.Dynamic {
			// A pattern the shell expands when the command runs (one
			// through hidden names, ~/.l*/s*/*, or with brackets): every
			// path it may match counts. Other words known only then ask.
			if !strings.ContainsAny(a.Target, "*?[") {
				continue
			}
			glob = true
		}
		for _, f := range files {
			if a.Target == f {
				return a.Target, true
			}
			if glob && globMayName(a.Target, f) {
				return a.Target, true
			}
		}
		for _, d := range dirs {
			if filepath.IsAbs(d) && classify.WithinClean(d, a.Target) { // d is clean (stateSecrets)
				return a.Target, true
			}
			if glob && globMayReach(a.Target, d) {
				return a.Target, true
			}
		}
	}
	return "", false
}

// redirectNamesStateSecret is namesStateSecret for the files a command's
// redirections name, resolved in each directory it may run in: a
// redirection with no program ($(<FILE)) has no access of its own.
func redirectNamesStateSecret(cmd shellparse.Command, dirs, files, secretDirs []string) (string, bool) {
	var res policy.Result
	for _, r := range cmd.Redirects {
		v := r.Target.Value
		if r.Target.Dynamic || v == "" || strings.HasPrefix(v, "&") {
			continue
		}
		for _, p := range joinEach(dirs, v) {
			if p != "" {
				res.Accesses = append(res.Accesses, policy.AccessResult{Access: classify.Access{Capability: classify.FSRead, Target: filepath.Clean(p)}})
			}
		}
	}
	return namesStateSecret(&res, files, secretDirs)
}

// globMayReach reports whether a glob may match the directory d or a path
// below it: its first elements, as many as d has, may match d's (or it
// cannot be read as a pattern), and it has more.
func globMayReach(glob, d string) bool {
	g := strings.Split(filepath.Clean(glob), "/")
	e := strings.Split(d, "/")
	if len(g) < len(e) {
		return false
	}
	return globMayName(strings.Join(g[:len(e)], "/"), d)
}

// globMayName reports whether a glob may match the path p: it does, or it
// cannot be read as a pattern (a command's glob is never trusted less).
func globMayName(glob, p string) bool {
	ok, err := filepath.Match(glob, p)
	return ok || err != nil
}

// stateSecrets are the files and directories namesStateSecret looks for,
// worked out once for the gate's paths, the directories clean (joined).
// The caller does not change them.
func (g *Gate) stateSecrets() (files, dirs []string) {
	p := g.cfg.Paths
	if s := g.secrets.Load(); s != nil && s.secrets == p.SecretsDir && s.db == p.DBFile && s.state == p.StateDir {
		return s.files, s.dirs
	}
	s := &stateSecretPaths{secrets: p.SecretsDir, db: p.DBFile, state: p.StateDir}
	// The secrets directory holds the audit key, the state database and
	// its journals, the hook tickets and serve's socket: the whole of it.
	// An older layout kept them (and the approvals page's token, which
	// let whoever read it answer as the person) in the state directory.
	s.dirs = append(s.dirs, filepath.Clean(p.SecretsDir))
	legacyFiles, legacyDirs := p.LegacySecrets()
	s.files = append(s.files, legacyFiles...)
	s.dirs = append(s.dirs, legacyDirs...)
	for _, f := range []string{p.AuditKey, p.DBFile} {
		if f != "" && !classify.WithinClean(s.dirs[0], f) {
			s.files = append(s.files, f, f+"-wal", f+"-shm", f+"-journal")
		}
	}
	// The channels' credentials (an SMTP password, a bot token, a
	// webhook's signing key) let whoever reads them speak as mnemos on
	// that channel, and a shared state's connection string holds the
	// database's password, wherever the policy keeps them.
	if g.cfg.Policy != nil {
		for _, c := range g.cfg.Policy.Channels {
			if c.SecretFile != "" {
				s.files = append(s.files, c.SecretFile)
			}
			if c.Telegram != nil && c.Telegram.TokenFile != "" {
				s.files = append(s.files, c.Telegram.TokenFile)
			}
			if c.Email != nil && c.Email.PasswordFile != "" {
				s.files = append(s.files, c.Email.PasswordFile)
			}
		}
		if pg := g.cfg.Policy.State.Postgres; pg != nil && pg.DSNFile != "" {
			s.files = append(s.files, pg.DSNPath(g.cfg.UserHome))
		}
	}
	g.secrets.Store(s)
	return s.files, s.dirs
}

// stateSecretPaths is stateSecrets for the audit log, database and state
// directory it names.
type stateSecretPaths struct {
	secrets, db, state string
	files, dirs        []string
}
