package classify

import (
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// This file classifies what package managers and git fetch: an install
// or a fetch of a known package manager (go get, npm install, pip
// install, cargo fetch, bundle install, mvn, ...) is network:http to its
// registries, beside the code:exec of the program (install scripts,
// builds); git fetch, pull, push, clone and ls-remote are network:http to
// the remote's host. The registries are read from the command line, the
// command's own environment words and, where the gate read them
// (Place.Packages), the package managers' configuration: GOPROXY,
// .npmrc's registry, pip's index-url, a Gemfile's source, a Maven mirror,
// the git remote's URL. A build (go build, cargo build) is network only
// when Place.Packages says its dependencies are not all in the cache;
// without that knowledge it is taken to find them there (if it does not,
// it fails in the sandbox, and the run's hint names the fetch step, which
// asks, when what the build needs turns out missing: gate's
// fetchhint.go). An offline flag (-mod=vendor, --offline, --no-index,
// mvn -o) makes it no network at all.

// Ecosystems is a set of package managers (and git) whose configuration
// or caches a request's classification reads from Place.Packages: the
// gate reads those, and only those, for the commands at hand.
type Ecosystems uint16

// The ecosystems PackageNeeds reports.
const (
	EcoGo       Ecosystems = 1 << iota // GOPROXY, GOSUMDB, GOFLAGS, the module's requirements and the module cache
	EcoNPM                             // npm's registry (.npmrc, npm_config_registry)
	EcoYarn                            // yarn's registry (.yarnrc.yml, .yarnrc)
	EcoBun                             // bun's registry (bunfig.toml)
	EcoNodeBins                        // the programs in node_modules/.bin (npx runs those without fetching)
	EcoPip                             // pip's index (pip.conf, PIP_INDEX_URL)
	EcoUV                              // uv's index (UV_INDEX_URL, uv.toml)
	EcoCargo                           // cargo's configuration, Cargo.lock and the registry cache
	EcoGem                             // the Gemfile's sources
	EcoMaven                           // Maven's mirrors (~/.m2/settings.xml)
	EcoGradle                          // the Gradle wrapper's distribution
	EcoGit                             // the repository's remotes and submodules
)

// Packages is what the gate read of the package managers' configuration
// and caches for the commands of one request (see PackageNeeds). Nil
// means not read: registries are then the defaults, and a build is taken
// to find its dependencies in the cache.
type Packages struct {
	// GoProxy, GoSumDB and GoFlags are GOPROXY, GOSUMDB and GOFLAGS as
	// the go command reads them (its environment, else its go env file);
	// "" when unset.
	GoProxy, GoSumDB, GoFlags string
	// GoMissing: the module (or go.work workspace) the commands run in
	// requires a module the module cache does not hold, so a build
	// downloads it.
	GoMissing bool
	// GoVendor: that module vendors its dependencies (vendor/modules.txt,
	// go 1.14 or later), so builds read them from there.
	GoVendor bool
	// NPM, Yarn and Bun are the registry URLs their configuration names
	// (the registry first, then scoped ones); empty: the default.
	NPM, Yarn, Bun []string
	// NodeBins are the programs in node_modules/.bin of the directories
	// the commands run in.
	NodeBins []string
	// PipIndex is pip's configured index-url ("" the default), PipExtra
	// its extra-index-url and find-links URLs; PipOffline: no-index.
	PipIndex   string
	PipExtra   []string
	PipOffline bool
	// UVIndex, UVExtra and UVOffline are the same for uv.
	UVIndex   string
	UVExtra   []string
	UVOffline bool
	// CargoMissing: Cargo.lock names a package that is neither in
	// cargo's registry cache nor among its git checkouts (or there is
	// no Cargo.lock and Cargo.toml has dependencies). Cargo lists the
	// other URLs cargo fetches from: a registry replacing crates.io
	// (CargoMirror) and the git sources of the missing packages.
	// CargoOffline: net.offline, or crates.io replaced by a vendored
	// directory.
	CargoMissing, CargoMirror, CargoOffline bool
	Cargo                                   []string
	// Gem are the Gemfile's source URLs.
	Gem []string
	// Maven are the mirror URLs of Maven's settings; MavenRepos the
	// other repositories the build names (its POMs' repositories and
	// pluginRepositories), which it reaches where no mirror stands for
	// every repository.
	Maven, MavenRepos []string
	// MavenMirrorsAll: a mirror of Maven's settings stands for every
	// repository (mirrorOf * or external:*): the build reaches only the
	// mirrors.
	MavenMirrorsAll bool
	// MavenMissing: the build's POMs name an artifact the local
	// repository lacks (a parent, an imported BOM, a dependency, a build
	// plugin or extension), or they cannot be read whole (a POM that does
	// not parse, a version from a property they do not set, a version
	// range), so that a build downloads.
	MavenMissing bool
	// MavenPlugins are the prefixes of the plugins the local repository
	// holds (compiler, surefire, versions, spring-boot ...), at the
	// version the build pins where it pins one: a phase or a goal (mvn
	// test, mvn versions:set) whose plugin is not among them downloads it.
	MavenPlugins []string
	// MavenPackagings are the packagings of the build's projects (jar,
	// pom, war ...): they say which plugins the lifecycle's phases run.
	MavenPackagings []string
	// MavenOffline: Maven's settings or the project's .mvn/maven.config
	// put Maven offline.
	MavenOffline bool
	// MavenWrapperMissing: the Maven wrapper's distribution is not yet
	// downloaded; MavenWrapperDist is its URL.
	MavenWrapperMissing bool
	MavenWrapperDist    string
	// GradleMissing: the Gradle wrapper's distribution is not yet
	// downloaded; GradleDist is its URL.
	GradleMissing bool
	GradleDist    string
	// GradleDepsMissing: the Gradle build declares, in what can be read
	// of it statically (build.gradle or build.gradle.kts, the version
	// catalog, gradle.properties), a dependency or a plugin Gradle's
	// module cache lacks, or a declaration that cannot be read (a version
	// from a variable it does not set, a dynamic version).
	GradleDepsMissing bool
	// GitRemotes maps each remote's name to its URLs (url, then
	// pushurl); GitUpstream is the remote of the current branch;
	// GitSubmodules are the URLs of .gitmodules.
	GitRemotes    map[string][]string
	GitUpstream   string
	GitSubmodules []string
	// Install holds where the package managers install programs, as
	// they read it (their environment, go's env file, .npmrc's prefix,
	// node's prefix), by the Install* names (installs.go).
	Install map[string]string
	// Sources are the configuration files the facts were read from: a
	// one-shot approval is bound to their content, so a registry changed
	// after the approval asks again.
	Sources []string
}

// PackageNeeds reports which package managers' configuration the
// classification of cmds reads, so that the gate reads nothing for a
// request without a package manager or git talking to a remote.
func PackageNeeds(cmds []shellparse.Command) Ecosystems {
	var n Ecosystems
	for _, c := range cmds {
		n |= needsOf(c)
	}
	return n
}

func needsOf(c shellparse.Command) Ecosystems {
	name := c.Name()
	if name == "" {
		return 0
	}
	// The place a command fetches most from: a build's dependencies all
	// missing, nothing installed.
	probe := Place{Packages: &Packages{GoMissing: true, CargoMissing: true, GradleMissing: true, GradleDepsMissing: true,
		MavenMissing: true, MavenWrapperMissing: true}}
	if _, ok := packageFetch(c, probe); !ok {
		return 0 // fetches nothing whatever the configuration says
	}
	var sub string
	if len(c.Argv) > 1 {
		sub = c.Argv[1].Value
	}
	switch name {
	case "go":
		return EcoGo
	case "npm", "pnpm":
		return EcoNPM | EcoNodeBins
	case "npx":
		return EcoNPM | EcoNodeBins
	case "yarn":
		return EcoYarn | EcoNPM
	case "bun", "bunx":
		return EcoBun | EcoNPM | EcoNodeBins
	case "pip", "pip3":
		return EcoPip
	case "uv", "uvx":
		return EcoUV
	case "cargo":
		return EcoCargo
	case "gem", "bundle":
		return EcoGem
	case "mvn", "mvnw":
		return EcoMaven
	case "gradle", "gradlew":
		return EcoGradle
	case "git":
		return EcoGit
	}
	if pythonName(name) && sub == "-m" {
		return EcoPip
	}
	return 0
}

// fetch is what a command fetches from package registries or git
// remotes.
type fetch struct {
	hosts []string
	ports []uint16
	// dynamic: a host is not known before it runs.
	dynamic bool
	// verb, when set, names the operation on approval cards ("install").
	verb string
}

// host adds a host reached on ports.
func (f *fetch) host(h string, ports ...uint16) {
	if h == "" {
		f.dynamic = true
		return
	}
	if !slices.Contains(f.hosts, h) {
		f.hosts = append(f.hosts, h)
	}
	for _, p := range ports {
		if !slices.Contains(f.ports, p) {
			f.ports = append(f.ports, p)
		}
	}
}

// url adds the host of a registry or remote URL, on its port.
func (f *fetch) url(raw string) {
	h, port, ok := urlHostPort(raw)
	if !ok {
		f.dynamic = true
		return
	}
	if h == "" {
		return // a local path or file: URL
	}
	if port == 443 {
		// HTTPS, and HTTP beside it: redirects, certificate revocation
		// checks.
		f.host(h, 443, 80)
		return
	}
	f.host(h, port)
}

// web adds hosts reached over HTTPS (and HTTP, which registries redirect
// from).
func (f *fetch) web(hosts ...string) {
	for _, h := range hosts {
		f.host(h, 443, 80)
	}
}

// urlHostPort reads a registry or remote URL: "https://host:8443/x",
// "sparse+https://index.crates.io/", "git+ssh://git@host/x",
// "git@host:o/r.git", "host/path". host is "" for a local path or a
// file: URL; ok is false when the value cannot be read.
func urlHostPort(raw string) (host string, port uint16, ok bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" || strings.ContainsAny(raw, "$`") || strings.Contains(raw, "::") {
		// TRANSPORT::ADDRESS runs git's remote helper for TRANSPORT
		// (ext::CMD runs CMD): what it reaches is not a host.
		return "", 0, false
	}
	if strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "./") || strings.HasPrefix(raw, "../") || raw == "." || raw == ".." || strings.HasPrefix(raw, "file:") {
		return "", 0, true
	}
	if i := strings.Index(raw, "://"); i > 0 {
		if j := strings.LastIndexByte(raw[:i], '+'); j >= 0 {
			raw = raw[j+1:] // sparse+https://, git+ssh://
		}
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" {
			return "", 0, false
		}
		port := map[string]uint16{"https": 443, "http": 80, "ssh": 22, "git": 9418}[strings.ToLower(u.Scheme)]
		if u.Scheme == "file" {
			return "", 0, true
		}
		if p := u.Port(); p != "" {
			n, err := strconv.ParseUint(p, 10, 16)
			if err != nil || n == 0 {
				return "", 0, false
			}
			port = uint16(n)
		}
		if port == 0 {
			return "", 0, false
		}
		return strings.ToLower(u.Hostname()), port, true
	}
	// scp-like: [user@]host:path, with no slash before the colon.
	if i := strings.IndexByte(raw, ':'); i > 0 && !strings.Contains(raw[:i], "/") {
		h := raw[:i]
		if j := strings.LastIndexByte(h, '@'); j >= 0 {
			h = h[j+1:]
		}
		if h == "" || strings.ContainsAny(h, " \t[]") {
			return "", 0, false
		}
		return strings.ToLower(h), 22, true
	}
	// A bare host, or host/path (a GOPROXY entry may omit https://).
	h, _, _ := strings.Cut(raw, "/")
	if !strings.Contains(h, ".") && h != "localhost" {
		return "", 0, false
	}
	return strings.ToLower(h), 443, true
}

// assigned returns the value the command's own environment words give a
// variable (NAME=value before it, or exported by the script): set when
// one names it, known when its value is static. fold compares names
// without case (npm reads npm_config_* so).
func assigned(cmd shellparse.Command, fold bool, names ...string) (value string, set, known bool) {
	for _, a := range cmd.Assigns {
		n, v, k := SplitAssign(a)
		for _, want := range names {
			if n == want || fold && strings.EqualFold(n, want) {
				value, set, known = v, true, k
			}
		}
	}
	return value, set, known
}

// truthy reads a boolean environment value or option value.
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// subOf returns the first operand of args (the subcommand), the words
// after it and the index it stood at, skipping options and the values of
// those in takes. dynamic is true when a word before it is not static.
func subOf(args []shellparse.Word, takes ...string) (sub string, rest []shellparse.Word, dynamic bool) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w.Dynamic {
			return "", args[i:], true
		}
		v := w.Value
		if v == "--" {
			if i+1 < len(args) && !args[i+1].Dynamic {
				return args[i+1].Value, args[i+2:], false
			}
			return "", nil, i+1 < len(args)
		}
		if len(v) > 1 && v[0] == '-' {
			if !strings.Contains(v, "=") && slices.Contains(takes, v) {
				i++
			}
			continue
		}
		return v, args[i+1:], false
	}
	return "", nil, false
}

// operandsOf are the non-option words of args, skipping the values of the
// options in takes; dynamic words are kept.
func operandsOf(args []shellparse.Word, takes ...string) []shellparse.Word {
	var out []shellparse.Word
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		if !w.Dynamic && v == "--" {
			return append(out, args[i+1:]...)
		}
		if !w.Dynamic && len(v) > 1 && v[0] == '-' {
			if !strings.Contains(v, "=") && slices.Contains(takes, v) {
				i++
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// optionValuesOf returns every value given to the named options
// ("--opt V", "--opt=V", "-oV" for a one-letter option).
func optionValuesOf(args []shellparse.Word, names ...string) []shellparse.Word {
	var out []shellparse.Word
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if v == "--" {
			break
		}
		for _, n := range names {
			switch {
			case v == n && i+1 < len(args):
				out = append(out, args[i+1])
			case strings.HasPrefix(n, "--") && strings.HasPrefix(v, n+"="):
				out = append(out, shellparse.Word{Value: v[len(n)+1:], Dynamic: args[i].Dynamic})
			case len(n) == 2 && n[1] != '-' && len(v) > 2 && strings.HasPrefix(v, n) && !strings.HasPrefix(v, "--"):
				out = append(out, shellparse.Word{Value: v[2:], Dynamic: args[i].Dynamic})
			}
		}
	}
	return out
}

// hasOpt reports an option given as a word of its own or with =VALUE.
func hasOpt(args []shellparse.Word, names ...string) bool {
	for _, w := range args {
		if w.Value == "--" {
			return false
		}
		opt, _, _ := strings.Cut(w.Value, "=")
		if slices.Contains(names, opt) {
			return true
		}
	}
	return false
}

func pythonName(name string) bool {
	n := strings.TrimRight(name, "0123456789.")
	return n == "python" || n == "pypy"
}

// asksItself reports a command that only asks the program for its help
// or version.
func asksItself(args []shellparse.Word) bool {
	if len(args) == 0 {
		return false
	}
	for _, a := range args {
		switch a.Value {
		case "--help", "-h", "--version", "-v", "-V", "-version", "-help", "help", "version":
		default:
			return false
		}
	}
	return true
}

// packageFetch reports what cmd fetches from package registries or git
// remotes; ok is false when it fetches nothing (or is not such a
// command).
func packageFetch(cmd shellparse.Command, pl Place) (fetch, bool) {
	name := cmd.Name()
	if name == "" || len(cmd.Argv) == 0 {
		return fetch{}, false
	}
	args := cmd.Argv[1:]
	pk := pl.Packages
	if pk == nil {
		pk = &Packages{}
	}
	switch name {
	case "go":
		return goFetch(cmd, args, pk, pl.Packages != nil)
	case "npm", "pnpm", "npx", "yarn", "bun", "bunx":
		return nodeFetch(cmd, name, args, pk, pl.Packages != nil)
	case "pip", "pip3":
		return pipFetch(cmd, args, pk)
	case "uv", "uvx":
		return uvFetch(cmd, name, args, pk)
	case "poetry", "pdm", "pipx":
		return pyToolFetch(name, args)
	case "cargo":
		return cargoFetch(cmd, args, pk)
	case "rustup":
		return rustupFetch(cmd, args)
	case "gem", "bundle":
		return rubyFetch(name, args, pk)
	case "mvn", "mvnw":
		return mavenFetch(name, args, pk, pl.Packages != nil)
	case "gradle", "gradlew":
		return gradleFetch(name, args, pk)
	case "git":
		sub, rest, other := gitSub(args)
		if other {
			pk = &Packages{} // another repository's remotes
		}
		return gitFetch(sub, rest, pk)
	}
	if pythonName(name) {
		// python -m pip ...: pip, run by this interpreter.
		for i := 0; i+1 < len(args); i++ {
			v := args[i].Value
			if args[i].Dynamic || !strings.HasPrefix(v, "-") {
				break
			}
			if v == "-m" {
				if args[i+1].Value == "pip" && !args[i+1].Dynamic {
					return pipFetch(cmd, args[i+2:], pk)
				}
				break
			}
		}
	}
	return fetch{}, false
}

// Fetch reports what cmd fetches from package registries or git
// remotes: the hosts, and the TCP ports it connects to (443 and 80 for
// registries, 22 as well for git, and any port a configured URL names);
// ok is false when cmd fetches nothing or reaches a host not known
// before it runs.
func Fetch(cmd shellparse.Command, pl Place) (hosts []string, ports []uint16, ok bool) {
	x, _ := ExpandOptions(cmd)
	f, fetches := packageFetch(x, pl)
	if !fetches || f.dynamic || len(f.ports) == 0 {
		return nil, nil, false
	}
	return f.hosts, f.ports, true
}

// addFetch adds the network accesses of what the command fetches.
func (c *Classification) addFetch(cmd shellparse.Command, pl Place) {
	if f, ok := packageFetch(cmd, pl); ok {
		c.fetched(f)
	}
}

// fetched adds the network accesses of f: one a host, and one not known
// when a host is not (or none is).
func (c *Classification) fetched(f fetch) {
	for _, h := range f.hosts {
		c.Accesses = append(c.Accesses, Access{Capability: NetworkHTTP, Target: h})
	}
	if f.dynamic || len(f.hosts) == 0 {
		c.Accesses = append(c.Accesses, Access{Capability: NetworkHTTP, Dynamic: true})
	}
	if f.verb != "" && c.Verb == "run" {
		c.Verb = f.verb
	}
}

// --- go ----------------------------------------------------------------

// goTakes are the go command's build and test flags that take a value
// as the next word.
var goTakes = []string{"-o", "-exec", "-toolexec", "-tags", "-ldflags", "-gcflags", "-asmflags", "-mod", "-modfile",
	"-overlay", "-pkgdir", "-p", "-run", "-skip", "-bench", "-benchtime", "-count", "-timeout", "-cpu", "-parallel",
	"-coverprofile", "-covermode", "-coverpkg", "-cpuprofile", "-memprofile", "-blockprofile", "-mutexprofile",
	"-trace", "-outputdir", "-fuzz", "-fuzztime", "-f", "-C", "-buildmode", "-compiler", "-installsuffix", "-pgo", "-vettool"}

// goFacts are the go subcommands that download only what the module
// requires and the module cache lacks (the second word for mod and work).
func goFactsSub(sub, s2 string) bool {
	switch sub {
	case "build", "test", "vet", "generate", "tool", "fix", "install", "run", "list":
		return true
	case "mod":
		return s2 == "vendor" || s2 == "graph" || s2 == "why" || s2 == "verify"
	case "work":
		return s2 == "sync" || s2 == "vendor"
	}
	return false
}

// goFetch: go get, go mod download and tidy, go install and go run of
// pkg@version and go list -u always fetch; go build, test, run, vet,
// list, generate, tool, mod vendor/graph/why/verify and work sync fetch
// when the module requires what the module cache does not hold (known
// only from Place.Packages). GOPROXY=off, -mod=vendor or a vendored
// module make them fetch nothing.
func goFetch(cmd shellparse.Command, args []shellparse.Word, pk *Packages, read bool) (fetch, bool) {
	var f fetch
	sub, rest, _ := subOf(args, "-C")
	if hasOpt(rest, "-h", "-help", "--help") {
		return f, false
	}
	always, facts := false, false
	// withVersion: a package named at a version (go install x@v1),
	// which is fetched whatever the module requires. go run's words after
	// its package are the program's.
	withVersion := func() bool {
		ops := operandsOf(rest, goTakes...)
		if sub == "run" && len(ops) > 1 {
			ops = ops[:1]
		}
		for _, w := range ops {
			if !w.Dynamic && strings.Contains(w.Value, "@") {
				return true
			}
		}
		return false
	}
	s2, _, _ := subOf(rest)
	switch sub {
	case "get":
		always = true
	case "mod":
		always = s2 == "download" || s2 == "tidy"
	case "install", "run":
		always = withVersion()
	case "list":
		always = hasOpt(rest, "-u", "-versions", "-retracted") || withVersion()
	}
	facts = !always && goFactsSub(sub, s2)
	if !always && !facts {
		return f, false
	}
	flags := pk.GoFlags
	if v, set, _ := assigned(cmd, false, "GOFLAGS"); set {
		flags = v
	}
	mod := ""
	for _, w := range strings.Fields(flags) {
		if v, ok := strings.CutPrefix(strings.TrimLeft(w, "-"), "mod="); ok {
			mod = v
		}
	}
	for _, w := range rest {
		if v, ok := strings.CutPrefix(strings.TrimLeft(w.Value, "-"), "mod="); ok && strings.HasPrefix(w.Value, "-") {
			mod = v
		}
	}
	proxy := pk.GoProxy
	proxySet := proxy != ""
	if v, set, known := assigned(cmd, false, "GOPROXY"); set {
		if !known {
			f.dynamic = true
		}
		proxy, proxySet = v, true
	}
	if !proxySet {
		proxy = "https://proxy.golang.org,direct"
	}
	entries := strings.FieldsFunc(proxy, func(r rune) bool { return r == ',' || r == '|' })
	if len(entries) > 0 && strings.TrimSpace(entries[0]) == "off" {
		return f, false // the go command may not download anything
	}
	if facts {
		vendored := mod == "vendor" || pk.GoVendor && mod != "mod" && mod != "readonly"
		if vendored || !read || !pk.GoMissing {
			return f, false
		}
	}
	for i, e := range entries {
		e = strings.TrimSpace(e)
		switch e {
		case "off":
		case "direct":
			if i > 0 {
				continue // a fallback for what the proxies do not serve
			}
			// Straight from each module's origin, found through its
			// path (a vanity path redirects anywhere).
			f.dynamic = true
			for _, w := range operandsOf(rest) {
				p, _, _ := strings.Cut(w.Value, "@")
				if h, _, _ := strings.Cut(p, "/"); strings.Contains(h, ".") && !w.Dynamic {
					f.web(strings.ToLower(h))
				}
			}
		default:
			if !strings.Contains(e, "://") {
				e = "https://" + e
			}
			f.url(e)
		}
		if e == "off" {
			break
		}
	}
	sumdb := pk.GoSumDB
	if v, set, _ := assigned(cmd, false, "GOSUMDB"); set {
		sumdb = v
	}
	switch fields := strings.Fields(sumdb); {
	case sumdb == "":
		f.web("sum.golang.org")
	case sumdb == "off":
	case len(fields) > 1:
		f.url(fields[1])
	default:
		name, _, _ := strings.Cut(fields[0], "+")
		f.web(name)
	}
	if sub == "get" {
		f.verb = "install"
	}
	return f, true
}

// --- npm, pnpm, yarn, bun ------------------------------------------------

// npmFetchSubs are the npm subcommands (and their aliases) that fetch from
// the registry; installing ones are marked true.
var npmFetchSubs = map[string]bool{
	"install": true, "i": true, "in": true, "ins": true, "inst": true, "insta": true, "instal": true,
	"isnt": true, "isnta": true, "isntal": true, "isntall": true, "add": true,
	"ci": true, "clean-install": true, "ic": true, "install-clean": true, "isntall-clean": true,
	"install-test": true, "it": true, "install-ci-test": true, "cit": true,
	"update": true, "up": true, "upgrade": true, "udpate": true,
	"dedupe": false, "ddp": false, "outdated": false, "view": false, "v": false, "info": false, "show": false,
	"search": false, "s": false, "se": false, "find": false, "publish": false, "unpublish": false,
	"deprecate": false, "dist-tag": false, "owner": false, "access": false, "login": false, "adduser": false,
	"add-user": false, "logout": false, "whoami": false, "ping": false, "audit": false, "doctor": false,
	"token": false, "team": false, "org": false, "star": false, "stars": false, "unstar": false,
}

var pnpmFetchSubs = map[string]bool{
	"install": true, "i": true, "add": true, "update": true, "up": true, "upgrade": true, "fetch": true,
	"dlx": false, "outdated": false, "audit": false, "view": false, "info": false, "show": false,
	"publish": false, "create": false, "login": false, "logout": false, "whoami": false,
}

var yarnFetchSubs = map[string]bool{
	"install": true, "add": true, "upgrade": true, "up": true, "upgrade-interactive": true,
	"dlx": false, "info": false, "npm": false, "outdated": false, "audit": false, "publish": false,
	"create": false, "set": false, "login": false, "logout": false,
}

var bunFetchSubs = map[string]bool{
	"install": true, "i": true, "add": true, "a": true, "update": true,
	"outdated": false, "upgrade": false, "create": false, "c": false, "publish": false, "audit": false, "info": false,
}

// npmTakes are npm's options that take a value, as far as finding its
// subcommand and operands needs.
var npmTakes = []string{"--prefix", "--registry", "-w", "--workspace", "--cache", "--userconfig", "--globalconfig",
	"--loglevel", "--tag", "-C", "--dir", "--filter", "-F", "--cwd", "-p", "--package", "-c", "--call", "--save-prefix",
	"--omit", "--include", "--install-strategy", "--cpu", "--os", "--libc", "--modules-folder", "--mutex", "--network-timeout"}

func nodeFetch(cmd shellparse.Command, name string, args []shellparse.Word, pk *Packages, read bool) (fetch, bool) {
	var f fetch
	if asksItself(args) {
		return f, false
	}
	family := name
	switch name {
	case "npx":
		family = "npm"
	case "bunx":
		family = "bun"
	}
	// The registries, from the command line, the command's environment,
	// then the configuration.
	registries := func() {
		if rs := optionValuesOf(args, "--registry"); len(rs) > 0 {
			for _, r := range rs {
				if r.Dynamic {
					f.dynamic = true
				} else {
					f.url(r.Value)
				}
			}
			return
		}
		if v, set, known := assigned(cmd, true, "npm_config_registry"); set && family != "yarn" {
			if known {
				f.url(v)
			} else {
				f.dynamic = true
			}
			return
		}
		if family == "bun" {
			if v, set, known := assigned(cmd, false, "BUN_CONFIG_REGISTRY"); set {
				if known {
					f.url(v)
				} else {
					f.dynamic = true
				}
				return
			}
		}
		list := pk.NPM
		def := "https://registry.npmjs.org/"
		switch family {
		case "yarn":
			list, def = pk.Yarn, "https://registry.yarnpkg.com/"
		case "bun":
			list = pk.Bun
		}
		if len(list) == 0 {
			f.url(def)
			return
		}
		for _, u := range list {
			f.url(u)
		}
	}
	offline := hasOpt(args, "--offline") && !slices.ContainsFunc(args, func(w shellparse.Word) bool { return w.Value == "--offline=false" })
	if v, set, known := assigned(cmd, true, "npm_config_offline"); set && known && truthy(v) && family != "yarn" {
		offline = true
	}
	// runsPackage: npx PKG and friends run a package's program, fetching
	// the package unless node_modules/.bin holds it.
	runsPackage := func(rest []shellparse.Word, always bool) (fetch, bool) {
		if offline || hasOpt(rest, "--no-install", "--no") {
			return f, false
		}
		pkgs := optionValuesOf(rest, "-p", "--package")
		if !always && len(pkgs) == 0 && hasOpt(rest, "-c", "--call") {
			return f, false
		}
		ops := operandsOf(rest, npmTakes...)
		if !always && len(pkgs) == 0 {
			if len(ops) == 0 {
				return f, false
			}
			prog := ops[0]
			bin := prog.Value
			local := !prog.Dynamic && !strings.Contains(strings.TrimPrefix(bin, "@"), "@") && !strings.Contains(bin, ":")
			if local && strings.Contains(bin, "/") {
				local = false // a package path or a git spec: fetched
			}
			if local && read && slices.Contains(pk.NodeBins, path.Base(bin)) {
				return f, false // the project's own program
			}
		}
		registries()
		for _, p := range pkgs {
			specHost(&f, p)
		}
		if len(ops) > 0 && (always || len(pkgs) == 0) {
			specHost(&f, ops[0])
		}
		return f, true
	}
	switch name {
	case "npx":
		return runsPackage(args, false)
	case "bunx":
		return runsPackage(args, false)
	}
	sub, rest, dyn := subOf(args, npmTakes...)
	if dyn {
		return f, false
	}
	var subs map[string]bool
	switch family {
	case "npm":
		subs = npmFetchSubs
		switch sub {
		case "exec", "x":
			return runsPackage(rest, false)
		case "init", "create", "innit":
			// npm init NAME runs create-NAME, fetched.
			if len(operandsOf(rest, npmTakes...)) == 0 {
				return f, false
			}
			registries()
			return f, true
		case "pack":
			// npm pack SPEC fetches SPEC; a bare npm pack packs this one.
			ops := operandsOf(rest, npmTakes...)
			if len(ops) == 0 {
				return f, false
			}
			registries()
			specHost(&f, ops[0])
			return f, true
		}
	case "pnpm":
		subs = pnpmFetchSubs
		if sub == "dlx" {
			return runsPackage(rest, true)
		}
	case "yarn":
		subs = yarnFetchSubs
		if sub == "" && !slices.ContainsFunc(args, func(w shellparse.Word) bool {
			return w.Value == "--help" || w.Value == "-h" || w.Value == "--version" || w.Value == "-v"
		}) {
			sub = "install" // a bare yarn installs
		}
		if sub == "dlx" {
			return runsPackage(rest, true)
		}
	case "bun":
		subs = bunFetchSubs
		if sub == "x" {
			return runsPackage(rest, false)
		}
		if sub == "upgrade" {
			// bun upgrade replaces bun itself from its releases.
			f.web("github.com", "objects.githubusercontent.com")
			return f, true
		}
	}
	installs, fetches := subs[sub]
	if !fetches || offline {
		return f, false
	}
	if hasOpt(rest, "--help", "-h") {
		return f, false
	}
	registries()
	if installs {
		f.verb = "install"
		for _, w := range operandsOf(rest, npmTakes...) {
			specHost(&f, w)
		}
	}
	return f, true
}

// specHost adds the host a package spec names beyond the registry: a
// tarball or git URL, a hosted git shortcut (github:u/r, u/r), or
// nothing for a registry name or a local path. A spec not known before
// it runs may be any of them.
func specHost(f *fetch, w shellparse.Word) {
	if w.Dynamic {
		f.dynamic = true
		return
	}
	v := w.Value
	if i := strings.Index(v, "://"); i > 0 {
		// name@URL or a URL; pip's "name @ URL" arrives in words.
		start := strings.LastIndexAny(v[:i], "@ ") + 1
		f.url(v[start:])
		return
	}
	for prefix, hosts := range map[string][]string{
		"github:": {"github.com", "codeload.github.com"}, "gitlab:": {"gitlab.com"},
		"bitbucket:": {"bitbucket.org"}, "gist:": {"gist.github.com", "codeload.github.com"},
	} {
		if strings.HasPrefix(v, prefix) {
			f.web(hosts...)
			return
		}
	}
	if strings.HasPrefix(v, "git@") {
		f.url(v)
		return
	}
	if strings.HasPrefix(v, "@") || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") ||
		strings.Contains(v, ":") || strings.Count(v, "/") != 1 || strings.HasSuffix(v, ".tgz") || strings.HasSuffix(v, ".tar.gz") {
		return
	}
	// user/repo: a GitHub repository.
	f.web("github.com", "codeload.github.com")
}

// --- Python --------------------------------------------------------------

// pypi are the Python Package Index's hosts: its index and its files.
var pypi = []string{"pypi.org", "files.pythonhosted.org"}

// pythonIndex adds the index hosts: index (the configured or given
// index-url, "" for PyPI) and extras.
func pythonIndex(f *fetch, index shellparse.Word, extras []shellparse.Word) {
	switch {
	case index.Dynamic:
		f.dynamic = true
	case index.Value == "":
		f.web(pypi...)
	default:
		f.url(index.Value)
		if h, _, _ := urlHostPort(index.Value); h == "pypi.org" {
			f.web(pypi...)
		}
	}
	for _, e := range extras {
		if e.Dynamic {
			f.dynamic = true
			continue
		}
		if strings.Contains(e.Value, "://") {
			f.url(e.Value)
		}
	}
}

var pipTakes = []string{"--python", "--log", "--proxy", "--retries", "--timeout", "--exists-action", "--trusted-host",
	"--cert", "--client-cert", "--cache-dir", "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-t",
	"--target", "--platform", "--python-version", "--implementation", "--abi", "--root", "--prefix", "--src",
	"--upgrade-strategy", "--global-option", "--config-settings", "-C", "--no-binary", "--only-binary", "-i",
	"--index-url", "--extra-index-url", "-f", "--find-links", "-d", "--dest", "-w", "--wheel-dir", "--report",
	"--progress-bar", "--root-user-action", "--format", "--exclude", "--path", "--keyring-provider"}

func pipFetch(cmd shellparse.Command, args []shellparse.Word, pk *Packages) (fetch, bool) {
	var f fetch
	sub, rest, dyn := subOf(args, pipTakes...)
	if dyn {
		return f, false
	}
	switch sub {
	case "install", "download", "wheel", "index", "search":
	case "list":
		if !hasOpt(rest, "-o", "--outdated", "-u", "--uptodate") {
			return f, false
		}
	default:
		return f, false
	}
	if hasOpt(rest, "--help", "-h") {
		return f, false
	}
	offline := pk.PipOffline || hasOpt(args, "--no-index")
	if v, set, known := assigned(cmd, false, "PIP_NO_INDEX"); set {
		offline = known && truthy(v)
	}
	if offline {
		return f, false
	}
	index := shellparse.Word{Value: pk.PipIndex}
	if v, set, known := assigned(cmd, false, "PIP_INDEX_URL"); set {
		index = shellparse.Word{Value: v, Dynamic: !known}
	}
	if vs := optionValuesOf(args, "-i", "--index-url"); len(vs) > 0 {
		index = vs[len(vs)-1]
	}
	extras := optionValuesOf(args, "--extra-index-url", "-f", "--find-links")
	for _, n := range []string{"PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"} {
		if v, set, known := assigned(cmd, false, n); set {
			for _, u := range strings.Fields(v) {
				extras = append(extras, shellparse.Word{Value: u, Dynamic: !known})
			}
		}
	}
	for _, u := range pk.PipExtra {
		extras = append(extras, shellparse.Word{Value: u})
	}
	pythonIndex(&f, index, extras)
	for _, w := range operandsOf(rest, pipTakes...) {
		if w.Dynamic || strings.Contains(w.Value, "://") || strings.HasPrefix(w.Value, "git@") {
			specHost(&f, w)
		}
	}
	if sub == "install" {
		f.verb = "install"
	}
	return f, true
}

var uvTakes = []string{"--index-url", "-i", "--default-index", "--extra-index-url", "--index", "-f", "--find-links",
	"-p", "--python", "--directory", "--project", "--cache-dir", "--config-file", "-r", "--requirements", "-c",
	"--constraint", "--with", "--from", "-o", "--output-file", "--group", "--extra", "--package", "--color", "-w"}

func uvFetch(cmd shellparse.Command, name string, args []shellparse.Word, pk *Packages) (fetch, bool) {
	var f fetch
	if asksItself(args) {
		return f, false
	}
	offline := pk.UVOffline || hasOpt(args, "--offline")
	if v, set, known := assigned(cmd, false, "UV_OFFLINE"); set {
		offline = known && truthy(v)
	}
	if offline {
		return f, false
	}
	sub, rest := "tool", args
	if name == "uv" {
		var dyn bool
		sub, rest, dyn = subOf(args, uvTakes...)
		if dyn {
			return f, false
		}
	}
	s2, _, _ := subOf(rest, uvTakes...)
	switch sub {
	case "tool":
		// uvx NAME is uv tool run NAME.
		if name == "uv" && s2 != "install" && s2 != "run" && s2 != "upgrade" {
			return f, false
		}
	case "pip":
		if s2 != "install" && s2 != "sync" && s2 != "compile" && s2 != "download" {
			return f, false
		}
	case "sync", "add", "lock", "remove", "publish":
	case "python", "self":
		if sub == "python" && s2 != "install" || sub == "self" && s2 != "update" {
			return f, false
		}
		// uv's own releases and its managed Pythons come from GitHub.
		f.web("github.com", "objects.githubusercontent.com")
		return f, true
	default:
		return f, false
	}
	if hasOpt(rest, "--help", "-h") {
		return f, false
	}
	if sub == "publish" {
		f.web("upload.pypi.org")
		return f, true
	}
	index := shellparse.Word{Value: pk.UVIndex}
	for _, n := range []string{"UV_INDEX_URL", "UV_DEFAULT_INDEX"} {
		if v, set, known := assigned(cmd, false, n); set {
			index = shellparse.Word{Value: v, Dynamic: !known}
		}
	}
	if vs := optionValuesOf(args, "-i", "--index-url", "--default-index"); len(vs) > 0 {
		index = vs[len(vs)-1]
	}
	extras := optionValuesOf(args, "--extra-index-url", "--index", "-f", "--find-links")
	for _, n := range []string{"UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_FIND_LINKS"} {
		if v, set, known := assigned(cmd, false, n); set {
			for _, u := range strings.Fields(v) {
				extras = append(extras, shellparse.Word{Value: u, Dynamic: !known})
			}
		}
	}
	for _, u := range pk.UVExtra {
		extras = append(extras, shellparse.Word{Value: u})
	}
	for i, e := range extras {
		// --index NAME=URL
		if _, u, ok := strings.Cut(e.Value, "="); ok && strings.Contains(u, "://") {
			extras[i].Value = u
		}
	}
	pythonIndex(&f, index, extras)
	if sub == "add" || sub == "pip" && s2 == "install" || sub == "tool" {
		f.verb = "install"
	}
	return f, true
}

// pyToolFetch: poetry, pdm and pipx install from PyPI (their own sources,
// set in pyproject.toml, are not read).
func pyToolFetch(name string, args []shellparse.Word) (fetch, bool) {
	var f fetch
	sub, rest, dyn := subOf(args, "-C", "--directory", "-P", "--project", "-p", "--python", "--index-url", "-i")
	if dyn || hasOpt(rest, "--help", "-h") {
		return f, false
	}
	s2, _, _ := subOf(rest)
	install := false
	switch name {
	case "poetry":
		switch sub {
		case "install", "add", "update", "sync":
			install = true
		case "lock", "search":
		case "show":
			if !hasOpt(rest, "--outdated", "-o", "--latest", "-l") {
				return f, false
			}
		case "publish":
			f.web("upload.pypi.org")
			return f, true
		case "self":
			if s2 != "add" && s2 != "update" && s2 != "install" && s2 != "lock" {
				return f, false
			}
			install = true
		default:
			return f, false
		}
	case "pdm":
		switch sub {
		case "install", "sync", "add", "update":
			install = true
		case "lock", "outdated", "search":
		case "publish":
			f.web("upload.pypi.org")
			return f, true
		case "self":
			if s2 != "add" && s2 != "update" {
				return f, false
			}
			install = true
		default:
			return f, false
		}
	case "pipx":
		switch sub {
		case "install", "upgrade", "upgrade-all", "inject", "reinstall", "reinstall-all", "install-all", "upgrade-shared":
			install = true
		case "run":
		default:
			return f, false
		}
		if vs := optionValuesOf(rest, "--index-url", "-i"); len(vs) > 0 {
			pythonIndex(&f, vs[len(vs)-1], nil)
			f.verb = "install"
			return f, true
		}
	}
	f.web(pypi...)
	if install {
		f.verb = "install"
	}
	return f, true
}

// --- Rust ----------------------------------------------------------------

// crates are crates.io's hosts: its sparse index, its downloads, its API.
var crates = []string{"index.crates.io", "static.crates.io", "crates.io"}

func cargoFetch(cmd shellparse.Command, args []shellparse.Word, pk *Packages) (fetch, bool) {
	var f fetch
	var ops []shellparse.Word
	for _, w := range operandsOf(args, "-Z", "--config", "-C", "--color", "--manifest-path", "-p", "--package", "--target",
		"--features", "-F", "-j", "--jobs", "--profile", "--target-dir", "--bin", "--example", "--test", "--bench",
		"--message-format", "--registry", "--index", "--version", "--vers", "--git", "--branch", "--tag", "--rev", "--path",
		"--root", "--exclude", "--lockfile-path") {
		if !w.Dynamic && strings.HasPrefix(w.Value, "+") {
			continue // +toolchain
		}
		ops = append(ops, w)
	}
	if len(ops) == 0 || ops[0].Dynamic || asksItself(args) || hasOpt(args, "--help", "-h") {
		return f, false
	}
	sub := ops[0].Value
	always := false
	switch sub {
	case "fetch", "add", "update", "install", "search", "publish", "login", "logout", "owner", "yank",
		"generate-lockfile", "vendor", "info", "package":
		always = true
	case "build", "b", "check", "c", "test", "t", "run", "r", "bench", "doc", "d", "clippy", "tree",
		"metadata", "fix", "rustc", "rustdoc":
	default:
		return f, false
	}
	offline := pk.CargoOffline || hasOpt(args, "--offline", "--frozen")
	for _, c := range optionValuesOf(args, "--config") {
		if strings.ReplaceAll(c.Value, " ", "") == "net.offline=true" {
			offline = true
		}
	}
	if v, set, known := assigned(cmd, false, "CARGO_NET_OFFLINE"); set {
		offline = known && truthy(v)
	}
	if offline || !always && !pk.CargoMissing {
		return f, false
	}
	for _, w := range optionValuesOf(args, "--index", "--git") {
		if w.Dynamic {
			f.dynamic = true
		} else {
			f.url(w.Value)
		}
	}
	if len(optionValuesOf(args, "--registry")) > 0 {
		f.dynamic = true // a registry named in cargo's configuration
	}
	for _, u := range pk.Cargo {
		f.url(u)
	}
	if !pk.CargoMirror || sub == "search" || sub == "publish" || sub == "login" || sub == "owner" || sub == "yank" {
		f.web(crates...)
	}
	if sub == "add" || sub == "install" {
		f.verb = "install"
	}
	return f, true
}

func rustupFetch(cmd shellparse.Command, args []shellparse.Word) (fetch, bool) {
	var f fetch
	ops := operandsOf(args)
	if len(ops) == 0 || ops[0].Dynamic || hasOpt(args, "--help", "-h") {
		return f, false
	}
	s2 := ""
	if len(ops) > 1 {
		s2 = ops[1].Value
	}
	switch ops[0].Value {
	case "update", "install", "upgrade":
	case "toolchain":
		if s2 != "install" && s2 != "add" && s2 != "update" {
			return f, false
		}
	case "component", "target":
		if s2 != "add" && s2 != "install" {
			return f, false
		}
	case "self":
		if s2 != "update" {
			return f, false
		}
	default:
		return f, false
	}
	if v, set, known := assigned(cmd, false, "RUSTUP_DIST_SERVER"); set {
		if known {
			f.url(v)
		} else {
			f.dynamic = true
		}
	} else {
		f.web("static.rust-lang.org")
	}
	f.verb = "install"
	return f, true
}

// --- Ruby, Java ------------------------------------------------------------

func rubyFetch(name string, args []shellparse.Word, pk *Packages) (fetch, bool) {
	var f fetch
	if asksItself(args) {
		return f, false
	}
	sub, rest, dyn := subOf(args, "-s", "--source", "-v", "--version", "--gemfile", "--path", "--with", "--without", "-j", "--jobs", "--retry")
	if dyn || hasOpt(rest, "--help", "-h") {
		return f, false
	}
	install := false
	if name == "gem" {
		switch sub {
		case "install", "i", "update":
			install = true
		case "fetch", "search", "outdated", "push", "owner", "yank", "signin":
		case "list", "query", "info":
			if !hasOpt(rest, "-r", "--remote", "-b", "--both") {
				return f, false
			}
		case "sources":
			if !hasOpt(rest, "-a", "--add", "-u", "--update") {
				return f, false
			}
		default:
			return f, false
		}
		if hasOpt(rest, "-l", "--local") {
			return f, false
		}
		if vs := optionValuesOf(rest, "-s", "--source"); len(vs) > 0 {
			for _, v := range vs {
				if v.Dynamic {
					f.dynamic = true
				} else {
					f.url(v.Value)
				}
			}
			if install {
				f.verb = "install"
			}
			return f, true
		}
	} else {
		switch sub {
		case "", "install", "update", "add":
			install = true
		case "lock", "outdated", "cache", "package":
		default:
			return f, false
		}
		if hasOpt(args, "--local") {
			return f, false
		}
	}
	if len(pk.Gem) == 0 {
		f.web("rubygems.org", "index.rubygems.org")
	}
	for _, u := range pk.Gem {
		f.url(u)
	}
	if install {
		f.verb = "install"
	}
	return f, true
}

// mavenTakes are the options of mvn that take a value as the next word.
var mavenTakes = []string{"-f", "--file", "-s", "--settings", "-gs", "--global-settings", "-t", "--toolchains",
	"-gt", "--global-toolchains", "-pl", "--projects", "-rf", "--resume-from", "-T", "--threads", "-P",
	"--activate-profiles", "-l", "--log-file", "-b", "--builder", "-D", "--define", "-emp", "--encrypt-master-password",
	"-ep", "--encrypt-password"}

// mavenPhases are the phases of Maven's lifecycles in order, each with
// the prefix of the plugin the default bindings run in it for a jar
// (mavenBinding changes it for other packagings).
var mavenPhases = []struct{ phase, plugin string }{
	{"pre-clean", ""}, {"clean", "clean"}, {"post-clean", ""},
	{"validate", ""}, {"initialize", ""}, {"generate-sources", ""}, {"process-sources", ""},
	{"generate-resources", ""}, {"process-resources", "resources"}, {"compile", "compiler"},
	{"process-classes", ""}, {"generate-test-sources", ""}, {"process-test-sources", ""},
	{"generate-test-resources", ""}, {"process-test-resources", "resources"}, {"test-compile", "compiler"},
	{"process-test-classes", ""}, {"test", "surefire"}, {"prepare-package", ""}, {"package", "jar"},
	{"pre-integration-test", ""}, {"integration-test", ""}, {"post-integration-test", ""}, {"verify", ""},
	{"install", "install"}, {"deploy", "deploy"},
	{"pre-site", ""}, {"site", "site"}, {"post-site", ""}, {"site-deploy", "site"},
}

// mavenBinding is the plugin a phase runs for a packaging: a pom runs
// only install and deploy (and the clean and site lifecycles); a war
// packs with the war plugin.
func mavenBinding(plugin, packaging string) string {
	switch packaging {
	case "pom":
		switch plugin {
		case "clean", "install", "deploy", "site":
			return plugin
		}
		return ""
	case "war":
		if plugin == "jar" {
			return "war"
		}
	}
	return plugin
}

// mavenPhasePlugins returns the prefixes of the plugins running phase
// (and the phases of its lifecycle before it) runs for the packagings;
// ok is false when phase is not a phase.
func mavenPhasePlugins(phase string, packagings []string) (plugins []string, ok bool) {
	if len(packagings) == 0 {
		packagings = []string{"jar"}
	}
	start := 0
	for i, p := range mavenPhases {
		switch p.phase {
		case "pre-clean", "validate", "pre-site":
			start = i
		}
		if p.phase != phase {
			continue
		}
		for _, q := range mavenPhases[start : i+1] {
			for _, pkg := range packagings {
				if b := mavenBinding(q.plugin, pkg); b != "" && !slices.Contains(plugins, b) {
					plugins = append(plugins, b)
				}
			}
		}
		return plugins, true
	}
	return nil, false
}

// mavenAlwaysFetches reports the goals that reach a repository whatever
// the local one holds: the dependency plugin's goals that resolve or
// download on purpose, the versions plugin's goals that look for newer
// versions, archetype:generate's catalog, a release.
func mavenAlwaysFetches(prefix, goal string) bool {
	switch prefix {
	case "dependency":
		switch goal {
		case "go-offline", "resolve", "resolve-plugins", "resolve-sources", "sources", "get",
			"purge-local-repository", "analyze-report", "list-repositories":
			return true
		}
	case "versions":
		return strings.HasPrefix(goal, "display-") || strings.HasPrefix(goal, "use-") ||
			strings.HasPrefix(goal, "update-") || goal == "resolve-ranges" || goal == "lock-snapshots" ||
			goal == "dependency-updates-report" || goal == "plugin-updates-report" || goal == "property-updates-report"
	case "archetype":
		return goal == "generate"
	case "release", "deploy", "site-deploy", "sonar", "jib", "gpg":
		return true
	case "wrapper":
		return true
	}
	return false
}

// mavenPrefixOf is the prefix Maven gives a plugin's artifactId:
// maven-X-plugin and X-maven-plugin are X.
func mavenPrefixOf(artifactID string) string {
	if p, ok := strings.CutPrefix(artifactID, "maven-"); ok {
		if q, ok := strings.CutSuffix(p, "-plugin"); ok {
			return q
		}
	}
	if p, ok := strings.CutSuffix(artifactID, "-maven-plugin"); ok {
		return p
	}
	return artifactID
}

// MavenPrefixOf is mavenPrefixOf, for the gate's fact reader.
func MavenPrefixOf(artifactID string) string { return mavenPrefixOf(artifactID) }

// mavenFetch: a Maven build resolves its plugins and its dependencies
// from the local repository and downloads what that lacks. Without
// facts (Packages not read) it is taken to find them there, as a go
// build is; with them, it fetches when the build's POMs name something
// the repository lacks or cannot be read whole (MavenMissing), when a
// phase or a goal runs a plugin the repository lacks (MavenPlugins),
// when the command points Maven at another POM (-f) or another local
// repository (-Dmaven.repo.local) than the facts describe, and always
// with -U or a goal that resolves or looks for updates on purpose (a
// deploy, dependency:go-offline, versions:display-dependency-updates).
// ./mvnw also fetches Maven itself when its distribution is absent.
// -o, --offline or an offline setting fetches nothing. The registries
// are the mirrors of Maven's settings, else Maven Central and the
// repositories the POMs name.
func mavenFetch(name string, args []shellparse.Word, pk *Packages, read bool) (fetch, bool) {
	var f fetch
	// The wrapper downloads Maven before Maven reads its options.
	wrapper := name == "mvnw" && pk.MavenWrapperMissing
	if wrapper && pk.MavenWrapperDist != "" {
		f.url(pk.MavenWrapperDist)
	}
	if asksItself(args) || hasOpt(args, "-o", "--offline") || pk.MavenOffline {
		if wrapper {
			f.web("repo.maven.apache.org")
		}
		return f, wrapper
	}
	goals := operandsOf(args, mavenTakes...)
	// fetches: the build itself downloads (the wrapper's download is
	// wrapper's).
	fetches, unknown := false, false
	if len(goals) > 0 {
		if hasOpt(args, "-U", "--update-snapshots") {
			fetches = true
		}
		if read && pk.MavenMissing {
			fetches = true
		}
		for i, w := range args {
			v := w.Value
			switch {
			case (v == "-f" || v == "--file") && i+1 < len(args):
				if f := args[i+1]; f.Dynamic || path.Clean(f.Value) != "pom.xml" {
					fetches, unknown = true, true // another POM than the one read
				}
			case strings.HasPrefix(v, "--file="):
				if w.Dynamic || path.Clean(v[len("--file="):]) != "pom.xml" {
					fetches, unknown = true, true
				}
			case strings.HasPrefix(v, "-D"):
				// -Dmaven.repo.local=DIR: another local repository; a
				// property whose name is computed may be that one.
				name, _, _ := strings.Cut(v[2:], "=")
				if name == "maven.repo.local" || w.Dynamic && (name == "" || strings.ContainsAny(name, "$`*?[")) {
					fetches = true
				}
			}
		}
		if hasOpt(args, "-s", "--settings", "-gs", "--global-settings") {
			unknown = true // mirrors the facts do not hold
		}
	}
	for _, g := range goals {
		if g.Dynamic && strings.HasPrefix(g.Value, "-") {
			continue // an option with a glob or a variable in its value: -Dtest=*
		}
		if g.Dynamic {
			fetches, unknown = true, true
			continue
		}
		prefix, goal, isGoal := strings.Cut(g.Value, ":")
		if !isGoal {
			plugins, ok := mavenPhasePlugins(g.Value, pk.MavenPackagings)
			switch {
			case !ok:
				fetches = true // not a phase: a lifecycle the facts do not know
			case g.Value == "deploy" || g.Value == "site-deploy":
				fetches, unknown = true, true // the POM's distribution repository
			case read:
				for _, p := range plugins {
					if !slices.Contains(pk.MavenPlugins, p) {
						fetches = true
					}
				}
			}
			continue
		}
		if strings.Contains(goal, ":") {
			// groupId:artifactId[:version]:goal
			parts := strings.Split(g.Value, ":")
			prefix, goal = mavenPrefixOf(parts[1]), parts[len(parts)-1]
			if len(parts) > 3 {
				fetches = true // a version the facts do not say is cached
			}
		}
		if mavenAlwaysFetches(prefix, goal) {
			fetches = true
			if prefix == "deploy" || prefix == "release" || prefix == "sonar" || prefix == "jib" {
				unknown = true
			}
		} else if read && !slices.Contains(pk.MavenPlugins, prefix) {
			fetches = true
		}
	}
	if !fetches && !wrapper {
		return f, false
	}
	if fetches || len(f.hosts) == 0 {
		if len(pk.Maven) == 0 || !pk.MavenMirrorsAll {
			f.web("repo.maven.apache.org")
			for _, u := range pk.MavenRepos {
				f.url(u)
			}
		}
		for _, u := range pk.Maven {
			f.url(u)
		}
	}
	if unknown {
		f.dynamic = true
	}
	return f, true
}

// gradleFetch: a Gradle build resolves from its caches what it resolved
// before, so it fetches with --refresh-dependencies, the tasks that
// resolve on purpose, a wrapper whose distribution is not yet
// downloaded, or a task of a build that declares what the module cache
// lacks (GradleDepsMissing); --offline fetches nothing.
func gradleFetch(name string, args []shellparse.Word, pk *Packages) (fetch, bool) {
	var f fetch
	if len(args) == 0 && name == "gradle" || asksItself(args) || hasOpt(args, "--offline") {
		return f, false
	}
	fetches := hasOpt(args, "--refresh-dependencies", "--write-locks", "--update-locks") ||
		name == "gradlew" && pk.GradleMissing
	tasks := operandsOf(args, "-x", "--exclude-task", "-p", "--project-dir", "-b", "--build-file", "-c",
		"--settings-file", "-g", "--gradle-user-home", "-I", "--init-script", "-P", "--project-prop", "-D", "--system-prop",
		"--console", "--warning-mode", "--max-workers", "--priority", "--include-build", "--tests")
	for _, w := range tasks {
		switch t := w.Value; {
		case t == "dependencies" || t == "dependencyUpdates" || t == "dependencyInsight" || strings.HasSuffix(t, ":dependencies"):
			fetches = true
		case t != "help" && t != "tasks" && pk.GradleDepsMissing:
			// The build resolves what it declares and the cache lacks.
			fetches = true
		}
	}
	if !fetches {
		return f, false
	}
	if name == "gradlew" && pk.GradleMissing && pk.GradleDist != "" {
		f.url(pk.GradleDist)
	}
	f.web("services.gradle.org", "plugins.gradle.org", "repo.maven.apache.org")
	return f, true
}

// --- git -------------------------------------------------------------------

// gitSub returns git's subcommand and the words after it; other is true
// when an option points git at another repository than the working
// directory's (-C, --git-dir, --work-tree).
func gitSub(args []shellparse.Word) (sub string, rest []shellparse.Word, other bool) {
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if args[i].Dynamic {
			return "", nil, true
		}
		switch {
		case v == "-C" || v == "--git-dir" || v == "--work-tree" || v == "--namespace":
			other = true
			i++
		case v == "-c" || v == "--config-env" || v == "--exec-path":
			i++
		case strings.HasPrefix(v, "--git-dir=") || strings.HasPrefix(v, "--work-tree="):
			other = true
		case strings.HasPrefix(v, "-"):
		default:
			return v, args[i+1:], other
		}
	}
	return "", nil, other
}

// gitTakes are options of git's remote subcommands that take a value.
var gitTakes = []string{"-o", "--push-option", "--repo", "--depth", "--deepen", "--shallow-since", "--shallow-exclude",
	"-j", "--jobs", "--negotiation-tip", "--server-option", "--filter", "-b", "--branch", "--origin", "--reference",
	"--reference-if-able", "--separate-git-dir", "--template", "--upload-pack", "--receive-pack", "--exec", "-s",
	"--strategy", "-X", "--strategy-option", "--recurse-submodules-default", "--refmap", "--sort", "--name", "--bundle-uri"}

// gitFetch: fetch, pull, push, ls-remote and clone reach the remote they
// name (a URL, or a remote's name read from the repository's
// configuration; none: the current branch's remote, else origin), fetch
// --all and remote update every remote, remote show and prune the one
// named, submodule update the submodules' URLs.
func gitFetch(sub string, rest []shellparse.Word, pk *Packages) (fetch, bool) {
	var f fetch
	remote := func(name shellparse.Word) {
		if name.Dynamic {
			f.dynamic = true
			return
		}
		if urls, ok := pk.GitRemotes[name.Value]; ok {
			for _, u := range urls {
				f.gitURL(u)
			}
			return
		}
		f.gitURL(name.Value)
	}
	all := func() {
		if len(pk.GitRemotes) == 0 {
			f.dynamic = true
		}
		names := make([]string, 0, len(pk.GitRemotes))
		for n := range pk.GitRemotes {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			for _, u := range pk.GitRemotes[n] {
				f.gitURL(u)
			}
		}
	}
	ops := operandsOf(rest, gitTakes...)
	switch sub {
	case "fetch", "pull", "push", "ls-remote":
		switch {
		case sub == "fetch" && hasOpt(rest, "--all"):
			all()
		case sub == "fetch" && hasOpt(rest, "--multiple"):
			for _, o := range ops {
				remote(o)
			}
		case len(ops) > 0:
			remote(ops[0])
		default:
			up := pk.GitUpstream
			if up == "" {
				up = "origin"
			}
			remote(shellparse.Word{Value: up})
		}
	case "clone":
		if len(ops) == 0 || ops[0].Dynamic {
			f.dynamic = true
		} else {
			f.gitURL(ops[0].Value)
		}
	case "remote":
		if len(ops) == 0 {
			return f, false
		}
		switch ops[0].Value {
		case "update":
			all()
		case "show", "prune":
			if hasOpt(rest, "-n") {
				return f, false
			}
			if len(ops) < 2 {
				f.dynamic = true
			}
			for _, o := range ops[1:] {
				remote(o)
			}
		default:
			return f, false
		}
	case "submodule":
		if len(ops) > 0 && ops[0].Value == "update" && len(pk.GitSubmodules) > 0 {
			for _, u := range pk.GitSubmodules {
				f.gitURL(u)
			}
		} else {
			f.dynamic = true
		}
	default:
		return f, false
	}
	return f, true
}

// gitURL adds the host of a git remote's URL, on the ports git may use
// for it: a configured insteadOf can turn an https remote into an ssh
// one and back, so both 443 and 22 are allowed. A local path is not the
// network, but what it is cannot be told here: it counts as a host not
// known.
func (f *fetch) gitURL(u string) {
	h, port, ok := urlHostPort(u)
	if !ok || h == "" {
		f.dynamic = true
		return
	}
	ports := []uint16{443, 80, 22}
	if port != 443 && port != 80 && port != 22 {
		ports = append(ports, port)
	}
	f.host(h, ports...)
}

// FetchStep names the command that fetches what a build command of a
// package manager needs, for the hint after it fails in a sandbox
// without network: go mod download for go build, cargo fetch for cargo
// test, npm install for npm test, ...; "" when cmd is no such build.
func FetchStep(cmd shellparse.Command) string {
	name := cmd.Name()
	if name == "" || len(cmd.Argv) < 2 {
		return ""
	}
	args := cmd.Argv[1:]
	sub, _, _ := subOf(args, "-C")
	switch name {
	case "go":
		_, rest, _ := subOf(args, "-C")
		s2, _, _ := subOf(rest)
		if goFactsSub(sub, s2) {
			return "go mod download"
		}
	case "cargo":
		ops := operandsOf(args, "-Z", "--config", "-C", "--color")
		if len(ops) > 0 && strings.HasPrefix(ops[0].Value, "+") {
			ops = ops[1:]
		}
		if len(ops) > 0 {
			switch ops[0].Value {
			case "build", "b", "check", "c", "test", "t", "run", "r", "bench", "doc", "d", "clippy", "tree", "metadata", "fix":
				return "cargo fetch"
			}
		}
	case "gradle", "gradlew":
		if hasOpt(args, "--offline") {
			return ""
		}
		return cmd.Argv[0].Value + " " + strings.Join(cmd.Args(), " ") + " --refresh-dependencies"
	case "mvn", "mvnw":
		if hasOpt(args, "-o", "--offline") || len(operandsOf(args, mavenTakes...)) == 0 {
			return ""
		}
		return cmd.Argv[0].Value + " dependency:go-offline"
	case "npm", "pnpm", "yarn", "bun":
		switch sub {
		case "run", "run-script", "test", "t", "start", "build", "exec", "x":
			return name + " install"
		}
	case "uv":
		if sub == "run" {
			return "uv sync"
		}
	case "poetry", "pdm":
		if sub == "run" || sub == "build" {
			return name + " install"
		}
	case "bundle":
		if sub == "exec" {
			return "bundle install"
		}
	}
	return ""
}
