package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Options describe the run DefaultSpec builds a sandbox for. Every path is
// absolute.
type Options struct {
	// Workspace is granted read-write: the project the command works on.
	Workspace string
	// Home is the user's home directory. It is never granted whole; only
	// Caches, HomeRead and HomeExec below it are.
	Home string
	// TempDirs are granted read-write. The caller passes them (usually
	// $TMPDIR or /tmp); nil grants none.
	TempDirs []string
	// Caches are the tool caches granted: read and execute, or, when
	// Write is set, read-write. nil means DefaultCaches(Home); an empty,
	// non-nil list grants none.
	Caches []Cache
	// HomeRead are granted read-only. nil means DefaultHomeRead(Home).
	HomeRead []string
	// HomeExec are granted read and execute (tool managers). nil means
	// DefaultHomeExec(Home).
	HomeExec []string
	// ExtraRead and ExtraWrite come from the policy's sandbox section.
	// ExtraRead is granted read and execute: a command that may read a
	// program could copy it to the workspace and run it there anyway, and
	// a program the policy lets commands read should be one they can run.
	ExtraRead  []string
	ExtraWrite []string
	// Protected are mnemos's own configuration and state; Secrets are the
	// user's keys and credentials. Neither is reached by any grant.
	Protected []string
	Secrets   []string
	// Network allows TCP and UDP (name resolution needs UDP); Ports, when
	// not empty, are the only TCP ports the command may connect to, and
	// Bind the only ones it may bind, none when empty (Spec.BindPorts).
	Network bool
	Ports   []uint16
	Bind    []uint16
	// Required refuses to run unconfined (Spec.Required).
	Required bool
	// RequireTCP refuses to run where Landlock cannot enforce the TCP
	// limits (Spec.RequireTCP).
	RequireTCP bool
	// Terminals are the terminal devices the command is given as its
	// standard streams (/dev/pts/N); no other terminal is granted.
	Terminals []string
	// PathDirs are the directories on the command's PATH: any of them
	// inside a writable tree stays read-only (Spec.Later).
	PathDirs []string
	// Programs are the absolute program paths the command names; with
	// PathDirs they say which version managers' roots it reaches.
	Programs []string
	// GitConfig lets the run write the workspace's .git/config (a command
	// the decision knows writes it, allowed or approved).
	GitConfig bool
	// GitWorktree lets the run write the workspace's own later files
	// (.vscode, .idea, .husky, .devcontainer, .envrc): every command of
	// the run is git, and one checks out, merges or rebases, writing them
	// as the repository has them. Git's hooks and configuration stay
	// read-only.
	GitWorktree bool
	// Sockets are the socket files the policy grants (Spec.Sockets);
	// MaskSockets the ones the environment names (Spec.MaskSockets).
	Sockets     []string
	MaskSockets []string
}

// systemReadExec are the directories programs are loaded from.
func systemReadExec() []string {
	return []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix/store", "/snap"}
}

// SystemReadable reports whether every command may read p (absolute,
// clean) under the sandbox: it lies in the system's program and
// configuration directories or the kernel's views. Spec.Deny may still
// hide parts of them.
func SystemReadable(p string) bool {
	for _, d := range slices.Concat(systemReadExec(), systemReadOnly(), devices()) {
		if within(p, d) {
			return true
		}
	}
	return false
}

// systemReadOnly are the kernel's views most programs read: /proc for
// their own process (the kernel's ptrace check still keeps other
// processes' memory, environment and open files out of reach) and /sys.
func systemReadOnly() []string { return []string{"/proc", "/sys"} }

// devices are the character devices every program may use.
func devices() []string {
	return []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}
}

// terminals are the terminal devices, which need terminal ioctls.
// Not /dev/pts whole: the other terminals there are the user's other
// sessions, whose input (a sudo password) a command could read. The
// caller adds the terminals the command is given (Options.Terminals).
func terminals() []string { return []string{"/dev/tty", "/dev/ptmx"} }

// Cache is a tool cache a command may read and run programs from or,
// when Write is set, also change.
type Cache struct {
	Path  string
	Write bool
}

// DefaultCaches are the build and package caches under home: read-write
// on ~/.cache (GOCACHE is ~/.cache/go-build), ~/go/pkg (GOMODCACHE is
// ~/go/pkg/mod), ~/.cargo/registry, ~/.cargo/git, ~/.npm/_cacache,
// ~/.npm/_logs, ~/.gradle/caches and ~/.m2/repository; read and execute
// on ~/.rustup and on the distributions the Maven and Gradle wrappers
// downloaded (~/.m2/wrapper/dists, ~/.gradle/wrapper/dists), which
// ./mvnw and ./gradlew run.
//
// What a command writes there is data that tools read, not programs or
// configuration that run later outside the sandbox: never ~/go/bin or
// ~/.cargo/bin (on PATH), ~/.cargo/config.toml (build hooks, linkers),
// ~/.npm/_npx (packages npx runs again without installing),
// ~/.gradle/init.d, ~/.gradle/wrapper and ~/.gradle/native (scripts,
// distributions and libraries gradle runs or loads), ~/.m2/toolchains.xml
// or ~/.m2/wrapper, nor ~/.rustup's toolchains. Landlock cannot deny a
// subdirectory of a granted one, so each tool's data directory is granted
// rather than the tool's home.
func DefaultCaches(home string) []Cache {
	var out []Cache
	for _, p := range underHome(home, ".cache", "go/pkg", ".cargo/registry", ".cargo/git",
		".npm/_cacache", ".npm/_logs", ".gradle/caches", ".m2/repository") {
		out = append(out, Cache{Path: p, Write: true})
	}
	for _, p := range underHome(home, ".rustup", ".m2/wrapper/dists", ".gradle/wrapper/dists") {
		out = append(out, Cache{Path: p})
	}
	return out
}

// DefaultHomeRead are the files under home a command may read: git's
// configuration, so that commits carry the user's name, and cargo's,
// with rustup's env file, which scripts source to put cargo on PATH.
func DefaultHomeRead(home string) []string {
	return underHome(home, ".gitconfig", ".config/git", ".cargo/config.toml", ".cargo/config", ".cargo/env")
}

// DefaultHomeExec are the tool directories under home a command may run
// programs from, without changing them: ~/.local/bin, ~/go/bin and
// ~/.cargo/bin (where cargo itself usually is), and the root of each
// version manager that the command's PATH reaches into (pathDirs), so that
// a shim such as ~/.pyenv/shims/python can run the interpreter it selects
// under ~/.pyenv/versions. A program named by its absolute path inside a
// root (one of pathDirs too) reaches that root the same way.
func DefaultHomeExec(home string, pathDirs []string) []string {
	out := underHome(home, ".local/bin", "go/bin", ".cargo/bin")
	for _, t := range Toolchains(home) {
		for _, d := range pathDirs {
			if filepath.IsAbs(d) && within(filepath.Clean(d), t.Root) {
				out = append(out, t.Root)
				break
			}
		}
	}
	return out
}

// A Toolchain is a version manager's root under home: the interpreters and
// compilers it installs, and the shims that choose among them.
type Toolchain struct {
	Name string
	Root string
}

// toolchainRoots are the version managers' roots under home, by manager.
var toolchainRoots = []struct{ name, rel string }{
	{"pyenv", ".pyenv"}, {"nvm", ".nvm"}, {"volta", ".volta"}, {"bun", ".bun"}, {"deno", ".deno"},
	{"asdf", ".asdf"}, {"mise", ".local/share/mise"}, {"sdkman", ".sdkman"}, {"goenv", ".goenv"},
	{"rbenv", ".rbenv"}, {"nodenv", ".nodenv"}, {"jenv", ".jenv"}, {"fnm", ".local/share/fnm"}, {"fnm", ".fnm"},
	{"uv", ".local/share/uv/python"}, {"uv", ".local/share/uv/tools"}, {"rustup", ".rustup"},
	{"conda", "miniconda3"}, {"conda", "anaconda3"}, {"conda", "miniforge3"}, {"conda", "mambaforge"},
	{"pixi", ".pixi"}, {"juliaup", ".julia/juliaup"}, {"ghcup", ".ghcup"}, {"opam", ".opam"},
}

// Toolchains lists the version managers' roots under home.
func Toolchains(home string) []Toolchain {
	if home == "" {
		return nil
	}
	out := make([]Toolchain, len(toolchainRoots))
	for i, t := range toolchainRoots {
		out[i] = Toolchain{Name: t.name, Root: filepath.Join(home, t.rel)}
	}
	return out
}

// ToolchainOf returns the version manager whose root holds path, if any.
func ToolchainOf(home, path string) (Toolchain, bool) {
	for _, t := range Toolchains(home) {
		if within(filepath.Clean(path), t.Root) {
			return t, true
		}
	}
	return Toolchain{}, false
}

func underHome(home string, rel ...string) []string {
	if home == "" {
		return nil
	}
	out := make([]string, len(rel))
	for i, r := range rel {
		out[i] = filepath.Join(home, r)
	}
	return out
}

// DefaultSpec builds the sandbox for one run: read and execute on the
// system directories, read on /proc and /sys, the usual devices, read-write
// on the workspace, temp directories and writable caches, read and execute
// on the other caches, nothing on Protected and Secrets.
//
// It refuses (ErrUnsafeGrant) any path it is given that is the home
// directory or holds it, and a workspace, temp directory or extra path that
// holds or lies inside a protected or secret path: the command could then
// read secrets or rewrite mnemos's policy, and narrowing such a grant would
// fail in surprising ways. Caches and home paths that hold a secret (~/.cache
// holds huggingface's token) are narrowed by Start instead. Defaults that do not
// exist are left out; the paths the caller named are kept, and Start reports
// the missing ones.
func DefaultSpec(o Options) (Spec, error) {
	if !filepath.IsAbs(o.Workspace) {
		return Spec{}, fmt.Errorf("workspace %q is not an absolute path", o.Workspace)
	}
	if o.Home != "" && !filepath.IsAbs(o.Home) {
		return Spec{}, fmt.Errorf("home %q is not an absolute path", o.Home)
	}
	res := resolver{}
	deny := slices.Concat(o.Protected, o.Secrets)
	realDeny := make([]string, len(deny))
	for i, d := range deny {
		if !filepath.IsAbs(d) {
			return Spec{}, fmt.Errorf("protected path %q is not absolute", d)
		}
		realDeny[i], _ = res.real(d)
	}
	home := ""
	if o.Home != "" {
		home, _ = res.real(o.Home)
	}
	// check refuses p if it is home or holds it and, unless homeOnly, if
	// it holds or lies inside a denied path. Defaults and caches that hold
	// a denied path are narrowed by Start instead.
	check := func(what, p string, homeOnly bool) error {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("%s %q is not an absolute path", what, p)
		}
		fromPolicy := what == "write path" || what == "read path"
		refuse := func(reach Reach, conflict, why string, args ...any) error {
			return &GrantError{What: what, Path: p, Policy: fromPolicy, Why: fmt.Sprintf(why, args...), Reaches: reach, Conflict: conflict}
		}
		real, _ := res.real(p)
		if home != "" {
			if within(home, real) {
				if home == real {
					if fromPolicy {
						return refuse(ReachesHome, o.Home, "is the home directory, which is never granted whole; name the directories under it the commands need")
					}
					return refuse(ReachesHome, o.Home, "is the home directory, which is never granted whole; work in a project directory")
				}
				return refuse(ReachesHome, o.Home, "holds the home directory %s, which is never granted whole", o.Home)
			}
		}
		if homeOnly {
			return nil
		}
		for i, d := range realDeny {
			reach := ReachesSecret
			if i < len(o.Protected) {
				reach = ReachesProtected
			}
			if within(real, d) {
				return refuse(reach, deny[i], "is inside %s, which sandboxed commands may not reach", deny[i])
			}
			if within(d, real) {
				return refuse(reach, deny[i], "holds %s, which sandboxed commands may not reach", deny[i])
			}
		}
		return nil
	}
	if err := check("workspace", o.Workspace, false); err != nil {
		return Spec{}, err
	}
	for _, group := range []struct {
		what     string
		paths    []string
		homeOnly bool
	}{
		{"temp directory", o.TempDirs, false}, {"write path", o.ExtraWrite, false}, {"read path", o.ExtraRead, false},
		{"cache", cachePaths(o.Caches), true}, {"home read path", o.HomeRead, true}, {"home tool path", o.HomeExec, true},
	} {
		for _, p := range group.paths {
			if err := check(group.what, p, group.homeOnly); err != nil {
				return Spec{}, err
			}
		}
	}
	orDefault := func(given []string, def func(string) []string) []string {
		if given != nil {
			return given
		}
		return existing(def(o.Home))
	}
	homeExec := o.HomeExec
	if homeExec == nil {
		homeExec = existing(DefaultHomeExec(o.Home, slices.Concat(o.PathDirs, o.Programs)))
	}
	caches := o.Caches
	if caches == nil {
		caches = slices.DeleteFunc(DefaultCaches(o.Home), func(c Cache) bool { return !ensureCache(c) })
		ensureCacheDirs(o.Home)
	}
	var readCaches, writeCaches []string
	for _, c := range caches {
		if c.Write {
			writeCaches = append(writeCaches, c.Path)
		} else {
			readCaches = append(readCaches, c.Path)
		}
	}
	s := Spec{
		ReadExec:     slices.Concat(existing(systemReadExec()), homeExec, readCaches, o.ExtraRead),
		ReadOnly:     slices.Concat(existing(systemReadOnly()), orDefault(o.HomeRead, DefaultHomeRead)),
		ReadWrite:    slices.Concat([]string{o.Workspace}, o.TempDirs, writeCaches, o.ExtraWrite),
		Devices:      existing(devices()),
		Terminals:    slices.Concat(existing(terminals()), o.Terminals),
		Deny:         deny,
		Network:      o.Network,
		UDP:          o.Network,
		ConnectPorts: o.Ports,
		BindPorts:    o.Bind,
		Scoped:       true,
		Required:     o.Required,
		RequireTCP:   o.RequireTCP,
		View:         true,
		RequireView:  o.Required,
		Home:         o.Home,
		Sockets:      o.Sockets,
		MaskSockets:  o.MaskSockets,
		SocketDirs:   o.TempDirs,
	}
	later, _ := LaterPaths(o.Workspace, o.Home, o.GitConfig, o.GitWorktree)
	for _, d := range o.PathDirs {
		if filepath.IsAbs(d) {
			later = append(later, filepath.Clean(d))
		}
	}
	s.Later = later
	if o.Network {
		s.ReadOnly = append(s.ReadOnly, existing(resolverPaths())...)
	}
	return s, nil
}

func cachePaths(cs []Cache) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Path
	}
	return out
}

// resolverPaths are what name resolution reads outside /etc: the file
// /etc/resolv.conf links to, and systemd-resolved's directory.
func resolverPaths() []string {
	p := []string{"/run/systemd/resolve"}
	if r, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && r != "/etc/resolv.conf" {
		p = append(p, r)
	}
	return p
}

// cacheDirs are the directories under ~/.cache that everyday tools create
// on first use: Go's build cache, pip's, uv's, yarn's, pnpm's and
// node-gyp's headers.
func cacheDirs() []string {
	return []string{"go-build", "pip", "uv", "yarn", "pnpm", "node-gyp"}
}

// ensureCacheDirs creates, empty, the cacheDirs ~/.cache lacks. ~/.cache
// holds secrets (a huggingface token), so it is granted entry by entry,
// and a confined command cannot create a new directory at its top: a first
// `go build` would fail to make its build cache.
func ensureCacheDirs(home string) {
	if home == "" {
		return
	}
	top := filepath.Join(home, ".cache")
	if fi, err := os.Lstat(top); err != nil || !fi.IsDir() {
		return
	}
	for _, d := range cacheDirs() {
		_ = os.Mkdir(filepath.Join(top, d), 0o700)
	}
}

// existing keeps the paths that exist.
// ensureCache reports whether a default cache exists, first creating a
// write cache whose tool directory exists but that the tool has not made
// yet (~/.cargo/registry before the first download): a confined command
// could not create it, since the directory holding it is not granted.
func ensureCache(c Cache) bool {
	if _, err := os.Stat(c.Path); err == nil {
		return true
	}
	if !c.Write {
		return false
	}
	if fi, err := os.Stat(filepath.Dir(c.Path)); err != nil || !fi.IsDir() {
		return false
	}
	if err := os.Mkdir(c.Path, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return false
	}
	fi, err := os.Lstat(c.Path)
	return err == nil && fi.IsDir()
}

func existing(paths []string) []string {
	out := paths[:0:0]
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// DeniedHint explains, for a path a confined command was refused, whether
// the spec grants it and what to add to the policy's sandbox section to
// grant it. It returns "" when the spec already grants the path for
// writing, so the refusal came from elsewhere.
func DeniedHint(s Spec, path string) string {
	if !filepath.IsAbs(path) {
		return ""
	}
	res := resolver{}
	real, ok := res.real(path)
	target := path
	if !ok {
		// Grant the nearest directory that exists: Start skips paths that
		// do not.
		for d := filepath.Dir(filepath.Clean(path)); ; d = filepath.Dir(d) {
			if _, err := os.Stat(d); err == nil || d == "/" {
				target = d
				break
			}
		}
	}
	// Under a version manager's root, the root is what to grant: a shim
	// runs the manager's scripts, which run an interpreter elsewhere in it.
	manager := ""
	if t, ok := ToolchainOf(s.Home, path); ok {
		target, manager = t.Root, t.Name
	}
	realTarget, _ := res.real(target)
	for _, d := range s.Deny {
		rd, _ := res.real(d)
		if within(real, rd) {
			return fmt.Sprintf("%s is protected (%s): no policy grants it to a sandboxed command", path, d)
		}
		if within(rd, realTarget) {
			return fmt.Sprintf("%s is outside the sandbox, and granting %s would expose %s: grant a narrower directory in the policy's sandbox section", path, target, d)
		}
	}
	if res.grants(real, s.ReadWrite) {
		return ""
	}
	if res.grants(real, slices.Concat(s.ReadExec, s.ReadOnly, s.Devices, s.Terminals)) {
		return fmt.Sprintf("%s is read-only in the sandbox; to let commands change it, add `sandbox: {write: [%s]}` to the policy", path, target)
	}
	if manager != "" {
		return fmt.Sprintf("%s is in %s's root %s, which the sandbox grants only when PATH reaches into it; put its shims or bin directory on PATH, or add `sandbox: {read: [%s]}` to the policy to let commands read and run it", path, manager, target, target)
	}
	return fmt.Sprintf("%s is outside every directory the sandbox grants; add `sandbox: {read: [%s]}` to the policy to let commands read and run it, or `sandbox: {write: [%s]}` to let them change it", path, target, target)
}

// grants reports whether real lies beneath one of the granted paths.
func (r resolver) grants(real string, granted []string) bool {
	for _, g := range granted {
		if rg, ok := r.real(g); ok && within(real, rg) {
			return true
		}
	}
	return false
}
