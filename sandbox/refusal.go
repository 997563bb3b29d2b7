package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Need is an access a command named on its command line: a path it reads
// or changes, or a TCP port it connects to.
type Need struct {
	// Path is an absolute path the command reads or, with Write, creates
	// or changes.
	Path  string
	Write bool
	// Host and Port name a TCP connection when Path is empty; Host is only
	// shown. With Bind, Port is one the command listens on.
	Host string
	Port uint16
	Bind bool
}

// Refusals says which of the needs a command named the sandbox refuses:
// one line each, without repeats, naming the policy snippet that grants
// it, or saying that no policy can. mnemos prints them after a confined
// command failed, so Refusals stays silent about what the sandbox allows
// and about what it did not enforce: a path counts only when applied.FS, a
// port only when applied.Net. A path the command reads that does not exist
// is not the sandbox's doing either.
//
// A path to change needs the right to write it when it exists, and the
// snippet then names its directory (programs often replace a file by
// renaming a new one over it) or, where that cannot be granted, the file;
// a path that does not exist needs the right to create files in the
// nearest directory that exists, which the snippet names. The snippet never names home
// (given as home), anything that holds it, or anything that holds or lies
// inside a denied path: DefaultSpec would refuse those.
//
// It reads the filesystem, as Start does, and changes nothing.
func Refusals(s Spec, applied Applied, home string, needs []Need) []string {
	r := refusals{spec: s, res: resolver{}, home: home}
	var out []string
	for _, n := range needs {
		var line string
		switch {
		case n.Path != "" && applied.FS:
			line = r.path(n, applied).Line
		case n.Path == "" && n.Port != 0 && n.Bind && applied.Net:
			line = r.bind(n)
		case n.Path == "" && n.Port != 0 && applied.Net:
			line = r.port(n)
		}
		if line != "" && !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	return out
}

// refusals holds what Refusals works out once: the ruleset's plan and the
// resolved denied paths.
type refusals struct {
	spec     Spec
	res      resolver
	home     string
	planned  bool
	plan     plan
	planErr  error
	realDeny []string
}

func (r *refusals) load() error {
	if r.planned {
		return r.planErr
	}
	r.planned = true
	r.plan, r.planErr = buildPlan(r.spec)
	for _, d := range r.spec.Deny {
		rd, _ := r.res.real(d)
		r.realDeny = append(r.realDeny, rd)
	}
	return r.planErr
}

// A Refusal is a path need the sandbox refuses: Line says so as
// Refusals does; Grant, when set, is the path that a policy's sandbox
// section (Key: read or write) would grant to let it through, and Never
// says that no policy can.
type Refusal struct {
	Need  Need
	Line  string
	Grant string
	Key   string
	Never bool
	// Kind says why no policy can grant it (Never): what runs later, a
	// protected path, or a directory granted only below it.
	Kind RefusalKind
}

// RefusalKind says why a need is one no policy can grant.
type RefusalKind int

const (
	// Grantable: a policy's sandbox section can grant it (Refusal.Grant).
	Grantable RefusalKind = iota
	// RunsLater: a write to what runs later outside the sandbox (the
	// workspace's later files, kept read-only by the view).
	RunsLater
	// Protected: a secret or mnemos's own files, which no command reaches.
	Protected
	// Whole: the home directory, the whole filesystem or a directory that
	// holds a protected path, granted only below it or entry by entry.
	Whole
)

// Assess is Refusals for the path needs, before the command runs and as
// data: for each need the spec's sandbox would refuse, what would grant
// it, or that nothing can. A spec with a view (Spec.View) keeps what runs
// later read-only.
func Assess(s Spec, home string, needs []Need) []Refusal {
	r := refusals{spec: s, res: resolver{}, home: home}
	var out []Refusal
	for _, n := range needs {
		if n.Path == "" {
			continue
		}
		if f := r.path(n, Applied{FS: true, View: s.View}); f.Line != "" && !slices.ContainsFunc(out, func(o Refusal) bool { return o.Line == f.Line }) {
			out = append(out, f)
		}
	}
	return out
}

func (r *refusals) path(n Need, applied Applied) Refusal {
	if !filepath.IsAbs(n.Path) || r.load() != nil {
		return Refusal{}
	}
	p := filepath.Clean(n.Path)
	real, exists := r.res.real(p)
	if !exists && !n.Write {
		return Refusal{}
	}
	// No policy should be asked to grant the kernel's views.
	for _, k := range []string{"/proc", "/sys", "/dev"} {
		if within(real, k) {
			return Refusal{}
		}
	}
	// What runs later stays read-only whatever the policy says.
	if n.Write && applied.View {
		for _, l := range r.spec.Later {
			rl, _ := r.res.real(l)
			if within(real, rl) {
				return Refusal{Need: n, Never: true, Kind: RunsLater, Line: fmt.Sprintf("%s runs outside the sandbox later (%s), so it stays read-only to every command mnemos runs; change it yourself, outside mnemos", p, l)}
			}
		}
	}
	verb, key := "read", "read"
	if n.Write {
		verb, key = "write", "write"
	}
	for i, d := range r.realDeny {
		if within(real, d) {
			return Refusal{Need: n, Never: true, Kind: Protected, Line: fmt.Sprintf("the sandbox does not let commands %s %s: it is protected (%s), and no policy can grant it", verb, shown(p), shown(r.spec.Deny[i]))}
		}
	}
	target, reach := p, real
	var access uint64
	fi, err := os.Stat(real)
	switch {
	case !n.Write && err == nil && fi.IsDir():
		access = ll.AccessFSReadDir
	case !n.Write:
		access = ll.AccessFSReadFile
	case exists && err == nil && !fi.IsDir():
		access = ll.AccessFSWriteFile
	case exists:
		access = ll.AccessFSMakeReg
	default:
		// Creating p needs the right to create files in the nearest
		// directory that exists.
		target = nearestExisting(p)
		reach, _ = r.res.real(target)
		access = ll.AccessFSMakeReg
	}
	if r.plan.allows(reach, access) {
		return Refusal{}
	}
	if access == ll.AccessFSWriteFile {
		// Programs often change a file by writing a new one beside it and
		// renaming it over the old one: grant the directory, unless
		// only the file can be granted.
		dir := filepath.Dir(p)
		if rd, _ := r.res.real(dir); r.ungrantable(rd) == "" {
			target, reach = dir, rd
		}
	}
	if why := r.ungrantable(reach); why != "" {
		if entry := r.newEntry(p, target, reach); entry != "" {
			return Refusal{Need: n, Never: true, Kind: Whole, Line: fmt.Sprintf("the sandbox does not let commands %s %s: it grants %s entry by entry (%s), so nothing new can be made at its top; create %s outside the sandbox and later runs may change it", verb, shown(p), shown(target), why, shown(entry))}
		}
		return Refusal{Need: n, Never: true, Kind: Whole, Line: fmt.Sprintf("the sandbox does not let commands %s %s, and no policy can grant %s (%s): use a directory below it that the policy grants", verb, shown(p), shown(target), why)}
	}
	return Refusal{Need: n, Grant: target, Key: key,
		Line: fmt.Sprintf("the sandbox does not let commands %s %s; to allow it, add to the policy: sandbox: {%s: [%s]}", verb, shown(p), key, yamlPath(r.display(target)))}
}

// newEntry is, for a path to create below a directory the spec grants for
// writing but Start narrows to its entries (it holds a denied path), the
// entry of that directory on the way to p, when Start would grant it once
// it exists; else "". Start takes the entries when the command starts, so
// an entry made beforehand is granted whole.
func (r *refusals) newEntry(p, dir, realDir string) string {
	if !r.res.grants(realDir, r.spec.ReadWrite) {
		return ""
	}
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	entry := filepath.Join(dir, first)
	realEntry, _ := r.res.real(entry)
	if r.ungrantable(realEntry) != "" {
		return ""
	}
	for _, d := range r.realDeny {
		if within(realEntry, d) {
			return ""
		}
	}
	return entry
}

// ungrantable says why DefaultSpec would refuse to grant real, or "".
func (r *refusals) ungrantable(real string) string {
	if r.home != "" {
		h, _ := r.res.real(r.home)
		if real == h {
			return "it is the home directory, never granted whole"
		}
		if within(h, real) {
			return "it holds the home directory"
		}
	}
	for i, d := range r.realDeny {
		if within(d, real) {
			return "it holds " + shown(r.spec.Deny[i])
		}
	}
	if real == "/" {
		return "it is the whole filesystem"
	}
	return ""
}

// display writes a path under home as ~/..., as a policy would.
func (r *refusals) display(p string) string {
	if r.home == "" {
		return p
	}
	if rel, err := filepath.Rel(filepath.Clean(r.home), p); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		return "~/" + rel
	}
	return p
}

func (r *refusals) port(n Need) string {
	s := r.spec
	what := "TCP port " + strconv.Itoa(int(n.Port))
	if n.Host != "" {
		host := n.Host
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		what = shown(host) + ":" + strconv.Itoa(int(n.Port))
	}
	if !s.Network {
		return fmt.Sprintf("the sandbox does not let commands connect to %s: it gives them no network; to allow it, add to the policy: sandbox: {network: true}", what)
	}
	if len(s.ConnectPorts) == 0 || slices.Contains(s.ConnectPorts, n.Port) {
		return ""
	}
	ports := append(slices.Clone(s.ConnectPorts), n.Port)
	slices.Sort(ports)
	list := make([]string, len(ports))
	for i, p := range ports {
		list[i] = strconv.Itoa(int(p))
	}
	return fmt.Sprintf("the sandbox does not let commands connect to %s: port %d is not among its TCP ports; to allow it, add to the policy: sandbox: {ports: [%s]}", what, n.Port, strings.Join(list, ", "))
}

// bind says why the sandbox refuses to let the command listen on a TCP
// port, and which bind list grants it.
func (r *refusals) bind(n Need) string {
	s := r.spec
	what := "listen on TCP port " + strconv.Itoa(int(n.Port))
	if !s.Network {
		return fmt.Sprintf("the sandbox does not let commands %s: it gives them no network; to allow it, add to the policy: sandbox: {network: true, bind: [%d]}", what, n.Port)
	}
	if slices.Contains(s.BindPorts, n.Port) {
		return ""
	}
	ports := append(slices.Clone(s.BindPorts), n.Port)
	slices.Sort(ports)
	list := make([]string, len(ports))
	for i, p := range ports {
		list[i] = strconv.Itoa(int(p))
	}
	return fmt.Sprintf("the sandbox does not let commands %s: it is not in its bind list; to allow it, add to the policy: sandbox: {bind: [%s]}", what, strings.Join(list, ", "))
}

// allows reports whether a rule of the plan grants access beneath real.
func (p plan) allows(real string, access uint64) bool {
	for _, r := range p.rules {
		if r.access&access == access && within(real, r.path) {
			return true
		}
	}
	return false
}

// nearestExisting is the closest ancestor of p that exists.
func nearestExisting(p string) string {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == "/" {
			return d
		}
	}
}

// shown quotes a name holding anything unprintable, so that a file name
// cannot add lines of its own to what mnemos prints.
func shown(s string) string {
	for _, c := range s {
		if !unicode.IsPrint(c) {
			return strconv.Quote(s)
		}
	}
	return s
}

// yamlPath quotes a path for a YAML flow sequence when it holds anything
// but the usual path characters.
func yamlPath(p string) string {
	for _, c := range p {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._-~+@", c)) {
			return strconv.Quote(p)
		}
	}
	return p
}

// Holds returns the first protected path (Spec.Deny) that lies in dir or
// is dir, as each resolves, or "": a program that reads dir's files,
// recursively or not, would read it.
func (s Spec) Holds(dir string) string {
	if !filepath.IsAbs(dir) {
		return ""
	}
	res := resolver{}
	real, _ := res.real(filepath.Clean(dir))
	for _, d := range s.Deny {
		if rd, _ := res.real(d); within(rd, real) || within(d, filepath.Clean(dir)) {
			return d
		}
	}
	return ""
}
