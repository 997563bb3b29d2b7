package gate

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
)

// What package managers fetch. classify turns an install or a fetch into
// network:http to the registries (packages.go there); what the registries
// are, and whether a build's dependencies are already in the cache, is
// read here, from the files and environment the package managers
// themselves read, and only for the package managers the request runs
// (classify.PackageNeeds): a request without one reads nothing.
//
// Files are read as data, small and regular only (a FIFO or a device in
// the workspace named .npmrc is skipped, never waited on), and only the
// registry URLs are kept: an .npmrc's tokens go nowhere.

// maxConfig bounds the configuration files read; maxLock the lock files.
const (
	maxConfig = 256 << 10
	maxLock   = 8 << 20
)

// pkgFacts is what packageFacts read: the classification's facts and,
// for the sandbox, the ports of the proxies the package managers are
// told to use.
type pkgFacts struct {
	pk *classify.Packages
	// proxyPorts are the TCP ports of configured HTTP proxies; proxyUnknown
	// is set when a proxy is configured whose port cannot be told.
	proxyPorts   []uint16
	proxyUnknown bool
}

// factReader reads the facts of one request.
type factReader struct {
	env   []string
	home  string
	ws    string
	dirs  []string
	facts pkgFacts
	// wsReal is the workspace with its links resolved, on first use.
	wsReal string
}

func (r *factReader) getenv(k string) string { return envValue(r.env, k) }

// getenvFold is the value of k in any case (npm's npm_config_*).
func (r *factReader) getenvFold(k string) string {
	v := ""
	for _, kv := range r.env {
		if n, val, ok := strings.Cut(kv, "="); ok && strings.EqualFold(n, k) && val != "" {
			v = val
		}
	}
	return v
}

// packageFacts reads what the package managers needs names would read
// for commands running in dirs (the working directory and the script's cd
// targets) of workspace ws.
func packageFacts(needs classify.Ecosystems, dirs []string, ws, home string, env []string) pkgFacts {
	r := &factReader{env: env, home: home, ws: ws, dirs: dirs, facts: pkgFacts{pk: &classify.Packages{}}}
	r.proxies()
	r.installFacts(needs)
	if needs&classify.EcoGo != 0 {
		r.goFacts()
	}
	if needs&(classify.EcoNPM|classify.EcoYarn|classify.EcoBun) != 0 {
		r.npmFacts(needs)
	}
	if needs&classify.EcoNodeBins != 0 {
		r.nodeBins()
	}
	if needs&classify.EcoPip != 0 {
		r.pipFacts()
	}
	if needs&classify.EcoUV != 0 {
		r.uvFacts()
	}
	if needs&classify.EcoCargo != 0 {
		r.cargoFacts()
	}
	if needs&classify.EcoGem != 0 {
		r.gemFacts()
	}
	if needs&classify.EcoMaven != 0 {
		r.mavenFacts()
	}
	if needs&classify.EcoGradle != 0 {
		r.gradleFacts()
	}
	if needs&classify.EcoGit != 0 {
		r.gitFacts()
	}
	return r.facts
}

// readSmall reads a regular file of at most max bytes (more is cut);
// ok is false when it is absent, not a regular file or unreadable. It
// never blocks on a FIFO.
func readSmall(p string, max int64) ([]byte, bool) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, max))
	return b, err == nil
}

// read is readSmall, except that a file inside the workspace is read only
// when it resolves inside the workspace: a project's .npmrc linked to a
// file of the user's is not the project's configuration, and what the
// gate reads of it would show on the card.
func (r *factReader) read(p string, max int64) ([]byte, bool) {
	if !classify.Within(r.ws, p) {
		return readSmall(p, max)
	}
	if r.wsReal == "" {
		r.wsReal = r.ws
		if real, err := filepath.EvalSymlinks(r.ws); err == nil {
			r.wsReal = real
		}
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil || !classify.Within(r.wsReal, real) {
		return nil, false
	}
	return readSmall(real, max)
}

// source records a configuration file inside the workspace that the
// facts were read from (the approval is bound to it).
func (r *factReader) source(p string) {
	if classify.Within(r.ws, p) && !slices.Contains(r.facts.pk.Sources, p) {
		r.facts.pk.Sources = append(r.facts.pk.Sources, p)
	}
}

// upward returns dir and its parents, up to the workspace root when dir
// lies in it, else up to the filesystem root.
func (r *factReader) upward(dir string) []string {
	var out []string
	stop := ""
	if classify.Within(r.ws, dir) {
		stop = r.ws
	}
	for d := filepath.Clean(dir); ; {
		out = append(out, d)
		parent := filepath.Dir(d)
		if d == stop || parent == d || len(out) > 64 {
			return out
		}
		d = parent
	}
}

// toRoot returns dir and every parent up to the filesystem root.
func toRoot(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; {
		out = append(out, d)
		parent := filepath.Dir(d)
		if parent == d || len(out) > 64 {
			return out
		}
		d = parent
	}
}

// nearest returns the first of dirs holding name.
func nearest(dirs []string, name string) (string, bool) {
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, true
		}
	}
	return "", false
}

func (r *factReader) homePath(elem ...string) string {
	if r.home == "" {
		return ""
	}
	return filepath.Join(append([]string{r.home}, elem...)...)
}

// configHome is XDG_CONFIG_HOME, else ~/.config.
func (r *factReader) configHome() string {
	if d := r.getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return d
	}
	return r.homePath(".config")
}

// proxies notes the HTTP proxies the environment gives the package
// managers: the sandbox must let the run reach their ports.
func (r *factReader) proxies() {
	for _, kv := range r.env {
		n, v, _ := strings.Cut(kv, "=")
		l := strings.ToLower(n)
		if v == "" || !(l == "http_proxy" || l == "https_proxy" || l == "all_proxy" || l == "npm_config_proxy" ||
			l == "npm_config_https_proxy" || l == "pip_proxy" || l == "cargo_http_proxy" || l == "yarn_http_proxy" || l == "yarn_https_proxy") {
			continue
		}
		r.proxy(v)
	}
}

// proxy notes one proxy URL.
func (r *factReader) proxy(v string) {
	v = strings.TrimSpace(v)
	if v == "" {
		return
	}
	if !strings.Contains(v, "://") {
		v = "http://" + v
	}
	i := strings.Index(v, "://")
	rest := v[i+3:]
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		rest = rest[at+1:]
	}
	hostport, _, _ := strings.Cut(rest, "/")
	port := uint16(0)
	if c := strings.LastIndexByte(hostport, ':'); c >= 0 && !strings.HasSuffix(hostport, "]") {
		if n, err := strconv.ParseUint(hostport[c+1:], 10, 16); err == nil && n > 0 {
			port = uint16(n)
		}
	} else {
		port = map[string]uint16{"http": 80, "https": 443}[strings.ToLower(v[:i])]
	}
	if port == 0 {
		r.facts.proxyUnknown = true
		return
	}
	if !slices.Contains(r.facts.proxyPorts, port) {
		r.facts.proxyPorts = append(r.facts.proxyPorts, port)
	}
}

// --- go ------------------------------------------------------------------

func (r *factReader) goFacts() {
	pk := r.facts.pk
	goenv := map[string]string{}
	envFile := r.getenv("GOENV")
	if envFile == "" && r.configHome() != "" {
		envFile = filepath.Join(r.configHome(), "go", "env")
	}
	if envFile != "" && envFile != "off" {
		if b, ok := r.read(envFile, maxConfig); ok {
			for _, line := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
					goenv[k] = strings.Trim(v, "'\"")
				}
			}
		}
	}
	get := func(k string) string {
		if v := r.getenv(k); v != "" {
			return v
		}
		return goenv[k]
	}
	pk.GoProxy, pk.GoSumDB, pk.GoFlags = get("GOPROXY"), get("GOSUMDB"), get("GOFLAGS")
	r.install(classify.InstallGoBin, get("GOBIN"))
	r.install(classify.InstallGoPath, get("GOPATH"))
	if p := get("HTTPS_PROXY"); p != "" {
		r.proxy(p)
	}
	cache := get("GOMODCACHE")
	if cache == "" {
		gopath := get("GOPATH")
		if gopath == "" {
			gopath = r.homePath("go")
		}
		if first := filepath.SplitList(gopath); len(first) > 0 {
			cache = filepath.Join(first[0], "pkg", "mod")
		}
	}
	gowork := get("GOWORK")
	for _, dir := range r.dirs {
		var mods []string
		var work *goModFile
		switch {
		case gowork == "off":
		case gowork != "":
			if b, ok := r.read(gowork, maxConfig); ok {
				work = parseGoMod(b)
				for _, u := range work.uses {
					mods = append(mods, filepath.Join(filepath.Dir(gowork), u, "go.mod"))
				}
			}
		default:
			if p, ok := nearest(toRoot(dir), "go.work"); ok {
				if b, ok := r.read(p, maxConfig); ok {
					work = parseGoMod(b)
					for _, u := range work.uses {
						if !filepath.IsAbs(u) {
							u = filepath.Join(filepath.Dir(p), u)
						}
						mods = append(mods, filepath.Join(u, "go.mod"))
					}
				}
			}
		}
		if work == nil {
			p, ok := nearest(toRoot(dir), "go.mod")
			if !ok {
				continue
			}
			mods = []string{p}
		}
		for _, m := range mods {
			b, ok := r.read(m, maxConfig)
			if !ok {
				continue
			}
			mf := parseGoMod(b)
			if work == nil && mf.vendors() && pathExists(filepath.Join(filepath.Dir(m), "vendor", "modules.txt")) {
				pk.GoVendor = true
			}
			if cache == "" || pk.GoMissing {
				continue
			}
			for _, req := range mf.requires {
				path, version := req.path, req.version
				if work != nil {
					if to, ok := work.replaced(path, version); ok {
						path, version = to.path, to.version
					}
				}
				if to, ok := mf.replaced(req.path, req.version); ok {
					path, version = to.path, to.version
				}
				if version == "" {
					continue // replaced by a directory
				}
				if !inModCache(cache, path, version, !req.indirect) {
					pk.GoMissing = true
					break
				}
			}
		}
	}
}

// goModFile is what parseGoMod reads of a go.mod or go.work file.
type goModFile struct {
	goVersion string
	requires  []goModule
	replaces  map[string]goModule // by "path" or "path@version"
	uses      []string
}

type goModule struct {
	path, version string
	indirect      bool
}

// vendors reports whether the go version the file names makes go build
// use the vendor directory by default (1.14 and later).
func (m *goModFile) vendors() bool {
	major, minor, _ := strings.Cut(m.goVersion, ".")
	minor, _, _ = strings.Cut(minor, ".")
	a, err1 := strconv.Atoi(major)
	b, err2 := strconv.Atoi(minor)
	return err1 == nil && err2 == nil && (a > 1 || a == 1 && b >= 14)
}

// replaced returns what replaces path@version; a directory replacement
// has no version.
func (m *goModFile) replaced(path, version string) (goModule, bool) {
	if to, ok := m.replaces[path+"@"+version]; ok {
		return to, true
	}
	to, ok := m.replaces[path]
	return to, ok
}

// parseGoMod reads the go, require, replace and use directives of a
// go.mod or go.work file, in their line and block forms.
func parseGoMod(b []byte) *goModFile {
	m := &goModFile{replaces: map[string]goModule{}}
	block := ""
	for _, line := range strings.Split(string(b), "\n") {
		indirect := strings.Contains(line, "// indirect")
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		for i := range f {
			f[i] = strings.Trim(f[i], "\"`")
		}
		verb := block
		switch {
		case block != "" && f[0] == ")":
			block = ""
			continue
		case block == "" && len(f) >= 2 && f[len(f)-1] == "(":
			block = f[0]
			continue
		case block == "":
			verb, f = f[0], f[1:]
		}
		switch verb {
		case "go":
			if len(f) > 0 {
				m.goVersion = f[0]
			}
		case "require":
			if len(f) >= 2 {
				m.requires = append(m.requires, goModule{path: f[0], version: f[1], indirect: indirect})
			}
		case "replace":
			arrow := slices.Index(f, "=>")
			if arrow < 1 || arrow+1 >= len(f) {
				continue
			}
			key := f[0]
			if arrow == 2 {
				key += "@" + f[1]
			}
			to := goModule{path: f[arrow+1]}
			if arrow+2 < len(f) {
				to.version = f[arrow+2]
			}
			m.replaces[key] = to
		case "use":
			if len(f) > 0 {
				m.uses = append(m.uses, f[0])
			}
		}
	}
	return m
}

// escapeModule writes a module path or version as the module cache does:
// each upper-case letter as "!" and its lower case.
func escapeModule(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r >= 'A' && r <= 'Z' }) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// inModCache reports whether the module cache holds path@version: its
// source (extracted, or the zip) when source is set, else its go.mod.
func inModCache(cache, path, version string, source bool) bool {
	if strings.Contains(path, "..") || strings.Contains(version, "/") {
		return false
	}
	p, v := escapeModule(path), escapeModule(version)
	dl := filepath.Join(cache, "cache", "download", filepath.FromSlash(p), "@v", v)
	if pathExists(filepath.Join(cache, filepath.FromSlash(p)+"@"+v)) || pathExists(dl+".zip") {
		return true
	}
	return !source && pathExists(dl+".mod")
}

// --- npm, yarn, bun ------------------------------------------------------

// npmrc reads an npmrc file's registry and scoped registries, the
// registry first ("" when it names none), and its proxies.
func (r *factReader) npmrc(p string) (registry string, scoped []string, ok bool) {
	b, ok := r.read(p, maxConfig)
	if !ok {
		return "", nil, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, found := strings.Cut(line, "=")
		if !found {
			continue
		}
		k, v = strings.TrimSpace(k), r.expand(strings.Trim(strings.TrimSpace(v), "\"'"))
		switch {
		case k == "registry":
			registry = v
		case strings.HasPrefix(k, "@") && strings.HasSuffix(k, ":registry"):
			scoped = append(scoped, v)
		case k == "proxy" || k == "https-proxy":
			r.proxy(v)
		}
	}
	return registry, scoped, true
}

// expand replaces ${NAME} with the environment's value, as npm does.
func (r *factReader) expand(v string) string {
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			return v
		}
		j := strings.IndexByte(v[i:], '}')
		if j < 0 {
			return v
		}
		v = v[:i] + r.getenv(v[i+2:i+j]) + v[i+j+1:]
	}
}

func (r *factReader) npmFacts(needs classify.Ecosystems) {
	pk := r.facts.pk
	registry := r.getenvFold("npm_config_registry")
	var scoped []string
	projectReg := ""
	for _, dir := range r.dirs {
		if p, ok := nearest(r.upward(dir), ".npmrc"); ok {
			reg, sc, ok := r.npmrc(p)
			if ok {
				r.source(p)
				scoped = append(scoped, sc...)
				if projectReg == "" {
					projectReg = reg
				}
			}
		}
	}
	user := r.getenvFold("npm_config_userconfig")
	if user == "" {
		user = r.homePath(".npmrc")
	}
	userReg := ""
	if user != "" {
		reg, sc, _ := r.npmrc(user)
		userReg, scoped = reg, append(scoped, sc...)
	}
	for _, reg := range []string{projectReg, userReg} {
		if registry == "" {
			registry = reg
		}
	}
	configured := appendURLs(nil, append([]string{registry}, scoped...)...)
	if registry == "" && len(configured) > 0 {
		configured = append([]string{"https://registry.npmjs.org/"}, configured...)
	}
	pk.NPM = configured
	if needs&classify.EcoYarn != 0 {
		pk.Yarn = appendURLs(r.yarnRegistries(), configured...)
	}
	if needs&classify.EcoBun != 0 {
		pk.Bun = appendURLs(r.bunRegistries(), configured...)
	}
}

// appendURLs appends each non-empty URL not already listed.
func appendURLs(dst []string, urls ...string) []string {
	for _, u := range urls {
		if u != "" && !slices.Contains(dst, u) {
			dst = append(dst, u)
		}
	}
	return dst
}

// yarnRegistries are the registries of yarn's own configuration:
// .yarnrc.yml's npmRegistryServer (its scopes' too), .yarnrc's registry,
// YARN_NPM_REGISTRY_SERVER and YARN_REGISTRY.
func (r *factReader) yarnRegistries() []string {
	out := appendURLs(nil, r.getenv("YARN_NPM_REGISTRY_SERVER"), r.getenv("YARN_REGISTRY"))
	files := []string{r.homePath(".yarnrc.yml"), r.homePath(".yarnrc")}
	for _, dir := range r.dirs {
		for _, n := range []string{".yarnrc.yml", ".yarnrc"} {
			if p, ok := nearest(r.upward(dir), n); ok {
				files = append(files, p)
			}
		}
	}
	for _, p := range files {
		b, ok := r.read(p, maxConfig)
		if !ok {
			continue
		}
		found := false
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			var v string
			switch {
			case strings.HasPrefix(line, "npmRegistryServer:"):
				v = strings.TrimPrefix(line, "npmRegistryServer:")
			case strings.HasPrefix(line, "registry "):
				v = strings.TrimPrefix(line, "registry ")
			case strings.HasPrefix(line, "httpsProxy:") || strings.HasPrefix(line, "httpProxy:"):
				_, pv, _ := strings.Cut(line, ":")
				r.proxy(strings.Trim(strings.TrimSpace(pv), "\"'"))
				continue
			default:
				continue
			}
			out = appendURLs(out, strings.Trim(strings.TrimSpace(v), "\"'"))
			found = true
		}
		if found {
			r.source(p)
		}
	}
	return out
}

// bunRegistries are bunfig.toml's registry and scopes, and
// BUN_CONFIG_REGISTRY.
func (r *factReader) bunRegistries() []string {
	out := appendURLs(nil, r.getenv("BUN_CONFIG_REGISTRY"))
	files := []string{r.homePath(".bunfig.toml"), filepath.Join(r.configHome(), ".bunfig.toml")}
	for _, dir := range r.dirs {
		if p, ok := nearest(r.upward(dir), "bunfig.toml"); ok {
			files = append(files, p)
		}
	}
	for _, p := range files {
		b, ok := r.read(p, maxConfig)
		if !ok {
			continue
		}
		section, found := "", false
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "[") {
				section = strings.Trim(line, "[] ")
				continue
			}
			if !strings.HasPrefix(section, "install") {
				continue
			}
			for _, u := range quotedURLs(line) {
				out = appendURLs(out, u)
				found = true
			}
		}
		if found {
			r.source(p)
		}
	}
	return out
}

// quotedURLs returns the quoted strings of a line that hold "://".
func quotedURLs(line string) []string {
	var out []string
	for {
		i := strings.IndexAny(line, "\"'")
		if i < 0 {
			return out
		}
		q := line[i]
		j := strings.IndexByte(line[i+1:], q)
		if j < 0 {
			return out
		}
		if s := line[i+1 : i+1+j]; strings.Contains(s, "://") {
			out = append(out, s)
		}
		line = line[i+j+2:]
	}
}

// nodeBins lists the programs of node_modules/.bin in the directories the
// commands run in and above them in the workspace.
func (r *factReader) nodeBins() {
	pk := r.facts.pk
	for _, dir := range r.dirs {
		for _, d := range r.upward(dir) {
			f, err := os.Open(filepath.Join(d, "node_modules", ".bin"))
			if err != nil {
				continue
			}
			names, _ := f.Readdirnames(10000)
			f.Close()
			for _, n := range names {
				if !slices.Contains(pk.NodeBins, n) {
					pk.NodeBins = append(pk.NodeBins, n)
				}
			}
		}
	}
}

// --- Python --------------------------------------------------------------

// iniValues reads an INI file's keys in the given sections; a value may
// continue on indented lines (pip's extra-index-url lists).
func iniValues(b []byte, sections []string, keys ...string) map[string][]string {
	out := map[string][]string{}
	section, key := "", ""
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';' {
			continue
		}
		if strings.HasPrefix(trimmed, "[") {
			section, key = strings.Trim(trimmed, "[] "), ""
			continue
		}
		if !slices.Contains(sections, section) {
			continue
		}
		if (line[0] == ' ' || line[0] == '\t') && key != "" {
			out[key] = append(out[key], strings.Fields(trimmed)...)
			continue
		}
		k, v, ok := strings.Cut(trimmed, "=")
		if !ok {
			k, v, ok = strings.Cut(trimmed, ":")
		}
		k = strings.ReplaceAll(strings.TrimSpace(k), "_", "-")
		key = ""
		if ok && slices.Contains(keys, k) {
			key = k
			out[k] = append(out[k], strings.Fields(v)...)
		}
	}
	return out
}

func (r *factReader) pipFacts() {
	pk := r.facts.pk
	files := []string{"/etc/xdg/pip/pip.conf", "/etc/pip.conf", r.homePath(".pip", "pip.conf")}
	if c := r.configHome(); c != "" {
		files = append(files, filepath.Join(c, "pip", "pip.conf"))
	}
	if v := r.getenv("VIRTUAL_ENV"); filepath.IsAbs(v) {
		files = append(files, filepath.Join(v, "pip.conf"))
	}
	if v := r.getenv("PIP_CONFIG_FILE"); filepath.IsAbs(v) {
		files = append(files, v)
	}
	for _, p := range files {
		b, ok := r.read(p, maxConfig)
		if !ok {
			continue
		}
		vals := iniValues(b, []string{"global", "install", "download"}, "index-url", "extra-index-url", "find-links", "no-index", "proxy")
		if v := vals["index-url"]; len(v) > 0 {
			pk.PipIndex = v[len(v)-1]
		}
		pk.PipExtra = appendURLs(pk.PipExtra, vals["extra-index-url"]...)
		pk.PipExtra = appendURLs(pk.PipExtra, vals["find-links"]...)
		if v := vals["no-index"]; len(v) > 0 {
			pk.PipOffline = truthyString(v[len(v)-1])
		}
		for _, p := range vals["proxy"] {
			r.proxy(p)
		}
		r.source(p)
	}
	if v := r.getenv("PIP_INDEX_URL"); v != "" {
		pk.PipIndex = v
	}
	pk.PipExtra = appendURLs(pk.PipExtra, strings.Fields(r.getenv("PIP_EXTRA_INDEX_URL"))...)
	pk.PipExtra = appendURLs(pk.PipExtra, strings.Fields(r.getenv("PIP_FIND_LINKS"))...)
	if v := r.getenv("PIP_NO_INDEX"); v != "" {
		pk.PipOffline = truthyString(v)
	}
}

func truthyString(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

func (r *factReader) uvFacts() {
	pk := r.facts.pk
	var files []string
	if c := r.configHome(); c != "" {
		files = append(files, filepath.Join(c, "uv", "uv.toml"))
	}
	for _, dir := range r.dirs {
		for _, n := range []string{"uv.toml", "pyproject.toml"} {
			if p, ok := nearest(r.upward(dir), n); ok {
				files = append(files, p)
			}
		}
	}
	for _, p := range files {
		b, ok := r.read(p, maxConfig)
		if !ok {
			continue
		}
		pyproject := filepath.Base(p) == "pyproject.toml"
		section, found := "", false
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "[") {
				section = strings.Trim(line, "[] ")
				continue
			}
			if pyproject && !strings.HasPrefix(section, "tool.uv") {
				continue
			}
			k, v, _ := strings.Cut(line, "=")
			k = strings.TrimSpace(k)
			switch {
			case k == "offline":
				pk.UVOffline = truthyString(v)
				found = true
			case k == "index-url":
				if u := quotedURLs(v); len(u) > 0 {
					pk.UVIndex = u[0]
					found = true
				}
			default:
				if u := quotedURLs(line); len(u) > 0 {
					pk.UVExtra = appendURLs(pk.UVExtra, u...)
					found = true
				}
			}
		}
		if found {
			r.source(p)
		}
	}
	for _, n := range []string{"UV_INDEX_URL", "UV_DEFAULT_INDEX"} {
		if v := r.getenv(n); v != "" {
			pk.UVIndex = v
		}
	}
	for _, n := range []string{"UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_FIND_LINKS"} {
		for _, u := range strings.Fields(r.getenv(n)) {
			if _, after, ok := strings.Cut(u, "="); ok && strings.Contains(after, "://") {
				u = after
			}
			pk.UVExtra = appendURLs(pk.UVExtra, u)
		}
	}
	if v := r.getenv("UV_OFFLINE"); v != "" {
		pk.UVOffline = truthyString(v)
	}
}

// --- Rust ----------------------------------------------------------------

func (r *factReader) cargoFacts() {
	pk := r.facts.pk
	cargoHome := r.getenv("CARGO_HOME")
	if !filepath.IsAbs(cargoHome) {
		cargoHome = r.homePath(".cargo")
	}
	if v := r.getenv("CARGO_NET_OFFLINE"); v != "" {
		pk.CargoOffline = truthyString(v)
	}
	for _, dir := range r.dirs {
		// Configuration: .cargo/config.toml from the directory up, then
		// CARGO_HOME's.
		var configs []string
		for _, d := range toRoot(dir) {
			for _, n := range []string{"config.toml", "config"} {
				if p := filepath.Join(d, ".cargo", n); pathExists(p) {
					configs = append(configs, p)
				}
			}
		}
		if cargoHome != "" {
			configs = append(configs, filepath.Join(cargoHome, "config.toml"), filepath.Join(cargoHome, "config"))
		}
		r.cargoConfig(configs)
		if pk.CargoOffline || pk.CargoMissing || cargoHome == "" {
			continue
		}
		if lock, ok := nearest(toRoot(dir), "Cargo.lock"); ok {
			r.cargoLock(lock, cargoHome)
		} else if manifest, ok := nearest(toRoot(dir), "Cargo.toml"); ok {
			if b, ok := r.read(manifest, maxConfig); ok && cargoHasDeps(b) {
				pk.CargoMissing = true
			}
		}
	}
}

// cargoConfig reads net.offline, crates.io's replacement and the HTTP
// proxy from cargo's configuration files (the first that sets each
// wins, as the nearest file does in cargo).
func (r *factReader) cargoConfig(files []string) {
	pk := r.facts.pk
	sources := map[string]map[string]string{}
	replaceWith := ""
	offlineSet := false
	for _, p := range files {
		b, ok := r.read(p, maxConfig)
		if !ok {
			continue
		}
		section := ""
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if i := strings.Index(line, "#"); i >= 0 && !strings.Contains(line[:i], "\"") {
				line = strings.TrimSpace(line[:i])
			}
			if strings.HasPrefix(line, "[") {
				section = strings.Trim(line, "[] ")
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), "\"'")
			switch {
			case (section == "net" && k == "offline" || section == "" && k == "net.offline") && !offlineSet:
				offlineSet = true
				if truthyString(v) {
					pk.CargoOffline = true
				}
			case section == "http" && k == "proxy" || section == "" && k == "http.proxy":
				r.proxy(v)
			case strings.HasPrefix(section, "source."):
				name := strings.Trim(strings.TrimPrefix(section, "source."), "\"")
				if sources[name] == nil {
					sources[name] = map[string]string{}
				}
				if _, set := sources[name][k]; !set {
					sources[name][k] = v
				}
				if name == "crates-io" && k == "replace-with" && replaceWith == "" {
					replaceWith = v
				}
			}
		}
		r.source(p)
	}
	if replaceWith == "" {
		return
	}
	src := sources[replaceWith]
	switch {
	case src["directory"] != "" || src["local-registry"] != "":
		pk.CargoOffline = true // vendored
	case src["registry"] != "":
		pk.CargoMirror = true
		pk.Cargo = appendURLs(pk.Cargo, src["registry"])
	}
}

// cargoLock notes a package of Cargo.lock that cargo's caches do not
// hold: a registry package neither downloaded (registry/cache) nor
// unpacked (registry/src), a git package not checked out.
func (r *factReader) cargoLock(lock, cargoHome string) {
	pk := r.facts.pk
	b, ok := r.read(lock, maxLock)
	if !ok {
		return
	}
	var indexes []string
	for _, sub := range []string{"cache", "src"} {
		d := filepath.Join(cargoHome, "registry", sub)
		if f, err := os.Open(d); err == nil {
			names, _ := f.Readdirnames(64)
			f.Close()
			for _, n := range names {
				indexes = append(indexes, filepath.Join(d, n))
			}
		}
	}
	var checkouts []string
	if f, err := os.Open(filepath.Join(cargoHome, "git", "checkouts")); err == nil {
		checkouts, _ = f.Readdirnames(10000)
		f.Close()
	}
	check := func(name, version, source string) {
		if name == "" || source == "" || pk.CargoMissing && !strings.HasPrefix(source, "git+") {
			return
		}
		if strings.ContainsAny(name+version, "/\\") {
			pk.CargoMissing = true
			return
		}
		switch {
		case strings.HasPrefix(source, "registry+") || strings.HasPrefix(source, "sparse+"):
			for _, d := range indexes {
				if pathExists(filepath.Join(d, name+"-"+version+".crate")) || pathExists(filepath.Join(d, name+"-"+version)) {
					return
				}
			}
			pk.CargoMissing = true
		case strings.HasPrefix(source, "git+"):
			u, commit, _ := strings.Cut(strings.TrimPrefix(source, "git+"), "#")
			repo := u
			if i := strings.IndexAny(repo, "?"); i >= 0 {
				repo = repo[:i]
			}
			repo = strings.TrimSuffix(strings.TrimSuffix(repo, "/"), ".git")
			repo = repo[strings.LastIndexByte(repo, '/')+1:]
			if len(commit) >= 7 {
				for _, c := range checkouts {
					if strings.HasPrefix(c, repo+"-") && pathExists(filepath.Join(cargoHome, "git", "checkouts", c, commit[:7])) {
						return
					}
				}
			}
			pk.CargoMissing = true
			pk.Cargo = appendURLs(pk.Cargo, u)
		}
	}
	var name, version, source string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "[[package]]" {
			check(name, version, source)
			name, version, source = "", "", ""
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), "\"")
		switch strings.TrimSpace(k) {
		case "name":
			name = v
		case "version":
			version = v
		case "source":
			source = v
		}
	}
	check(name, version, source)
}

// cargoHasDeps reports whether a Cargo.toml names a dependency that is
// not only a local path (it would be fetched to make Cargo.lock).
func cargoHasDeps(b []byte) bool {
	section := ""
	tableHasPath, inTable := false, false
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if strings.HasPrefix(line, "[") {
			if inTable && !tableHasPath {
				return true
			}
			section = strings.Trim(line, "[] ")
			last := section[strings.LastIndexByte(section, '.')+1:]
			// [dependencies.NAME]: one dependency as a table.
			parent := strings.TrimSuffix(section, "."+last)
			inTable = parent != section && strings.HasSuffix(parent, "dependencies")
			tableHasPath = false
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		if inTable {
			if strings.TrimSpace(k) == "path" {
				tableHasPath = true
			}
			continue
		}
		if strings.HasSuffix(section, "dependencies") && !strings.Contains(v, "path") {
			return true
		}
	}
	return inTable && !tableHasPath
}

// --- Ruby ------------------------------------------------------------

func (r *factReader) gemFacts() {
	pk := r.facts.pk
	for _, dir := range r.dirs {
		p, ok := nearest(r.upward(dir), "Gemfile")
		if !ok {
			continue
		}
		b, ok := r.read(p, maxConfig)
		if !ok {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "source") {
				pk.Gem = appendURLs(pk.Gem, quotedURLs(line)...)
			}
		}
		r.source(p)
	}
}

// Maven: maven.go. Gradle: gradle.go.

// --- git -------------------------------------------------------------------

func (r *factReader) gitFacts() {
	pk := r.facts.pk
	for _, dir := range r.dirs {
		var gitDir, top string
		for _, d := range toRoot(dir) {
			p := filepath.Join(d, ".git")
			fi, err := os.Stat(p)
			if err != nil {
				continue
			}
			top = d
			if fi.IsDir() {
				gitDir = p
			} else if b, ok := r.read(p, 4096); ok {
				if g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
					g = strings.TrimSpace(g)
					if !filepath.IsAbs(g) {
						g = filepath.Join(d, g)
					}
					gitDir = g
				}
			}
			break
		}
		if gitDir == "" {
			continue
		}
		common := gitDir
		if b, ok := r.read(filepath.Join(gitDir, "commondir"), 4096); ok {
			c := strings.TrimSpace(string(b))
			if !filepath.IsAbs(c) {
				c = filepath.Join(gitDir, c)
			}
			common = c
		}
		branch := ""
		if b, ok := r.read(filepath.Join(gitDir, "HEAD"), 4096); ok {
			branch, _ = strings.CutPrefix(strings.TrimSpace(string(b)), "ref: refs/heads/")
		}
		cfg := filepath.Join(common, "config")
		if b, ok := r.read(cfg, maxConfig); ok {
			r.source(cfg)
			remotes, upstream := gitConfig(b, branch, r)
			if pk.GitRemotes == nil {
				pk.GitRemotes = map[string][]string{}
			}
			for n, urls := range remotes {
				pk.GitRemotes[n] = appendURLs(pk.GitRemotes[n], urls...)
			}
			if pk.GitUpstream == "" {
				pk.GitUpstream = upstream
			}
		}
		if b, ok := r.read(filepath.Join(top, ".gitmodules"), maxConfig); ok {
			r.source(filepath.Join(top, ".gitmodules"))
			for _, line := range strings.Split(string(b), "\n") {
				k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
				if !ok || strings.TrimSpace(k) != "url" {
					continue
				}
				u := strings.TrimSpace(v)
				if strings.HasPrefix(u, "./") || strings.HasPrefix(u, "../") {
					// Relative to the superproject's remote: its host.
					up := pk.GitUpstream
					if up == "" {
						up = "origin"
					}
					if urls := pk.GitRemotes[up]; len(urls) > 0 {
						u = urls[0]
					}
				}
				pk.GitSubmodules = appendURLs(pk.GitSubmodules, u)
			}
		}
	}
}

// gitConfig reads a repository's config: each remote's url and pushurl,
// the current branch's remote, and http.proxy.
func gitConfig(b []byte, branch string, r *factReader) (remotes map[string][]string, upstream string) {
	remotes = map[string][]string{}
	section, sub := "", ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasPrefix(line, "[") {
			inner := strings.Trim(line, "[] ")
			name, rest, _ := strings.Cut(inner, " ")
			section, sub = strings.ToLower(name), strings.Trim(strings.TrimSpace(rest), "\"")
			if n, s, ok := strings.Cut(name, "."); ok && rest == "" {
				section, sub = strings.ToLower(n), s
			}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.Trim(strings.TrimSpace(v), "\"")
		switch {
		case section == "remote" && (k == "url" || k == "pushurl"):
			remotes[sub] = appendURLs(remotes[sub], v)
		case section == "branch" && sub == branch && k == "remote":
			upstream = v
		case section == "http" && k == "proxy":
			r.proxy(v)
		}
	}
	return remotes, upstream
}

// pathExists reports whether p names anything (following links).
func pathExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Network is the network a request needs only to fetch from package
// registries and git remotes: the hosts its card names, and the TCP
// ports its run may connect to when the policy's sandbox lists none.
// The sandbox limits ports, not hosts: the hosts say what the run is
// for.
type Network struct {
	Hosts []string `json:"hosts"`
	Ports []uint16 `json:"ports"`
}

// fetchNetwork is the request's Network, or nil when a command reaches
// the network for anything else (curl, a host not known before it runs)
// or a configured proxy's port is not known.
func fetchNetwork(cmds []CommandDecision, place classify.Place, pf pkgFacts) *Network {
	if pf.proxyUnknown {
		return nil
	}
	var n Network
	for i := range cmds {
		c := &cmds[i]
		if c.Policy == nil {
			continue
		}
		var targets []string
		for _, a := range c.Policy.Accesses {
			if a.Capability != classify.NetworkHTTP {
				continue
			}
			if a.Dynamic || a.Target == "" {
				return nil
			}
			targets = append(targets, a.Target)
		}
		if len(targets) == 0 {
			continue
		}
		hosts, ports, ok := classify.Fetch(c.Command, place)
		if !ok {
			return nil
		}
		for _, t := range targets {
			if !slices.Contains(hosts, t) {
				return nil // the network for something else as well
			}
		}
		n.Hosts = appendURLs(n.Hosts, hosts...)
		n.Ports = appendPortsNew(n.Ports, ports...)
	}
	if len(n.Hosts) == 0 {
		return nil
	}
	n.Ports = appendPortsNew(n.Ports, pf.proxyPorts...)
	return &n
}

func appendPortsNew(dst []uint16, ports ...uint16) []uint16 {
	for _, p := range ports {
		if !slices.Contains(dst, p) {
			dst = append(dst, p)
		}
	}
	return dst
}

// networkLines are the card's lines for a request's Network.
func networkLines(n *Network) []string {
	if n == nil {
		return nil
	}
	ports := make([]string, len(n.Ports))
	for i, p := range n.Ports {
		ports[i] = strconv.Itoa(int(p))
	}
	return []string{approvals.Printable("network: approving lets this run reach " + strings.Join(n.Hosts, ", ") +
		" on TCP ports " + strings.Join(ports, ", ") + " (the sandbox limits the ports, not the hosts)")}
}

// networkBeyondFetch reports whether the run's sandbox would have the
// network even without the commands' network:http accesses (the policy
// turns it on, a rule's sandbox override does): then it is not there
// only to fetch, and its ports are not narrowed.
func (g *Gate) networkBeyondFetch(dec Decision) bool {
	bare := dec
	bare.Commands = make([]CommandDecision, len(dec.Commands))
	for i, c := range dec.Commands {
		if c.Policy != nil {
			p := *c.Policy
			p.Accesses = slices.DeleteFunc(slices.Clone(p.Accesses), func(a policy.AccessResult) bool {
				return a.Capability == classify.NetworkHTTP
			})
			c.Policy = &p
		}
		bare.Commands[i] = c
	}
	return g.requestSandbox(bare).cfg.HasNetwork()
}

// toolDirs are, for each package manager whose download cache lies in
// the sandbox's default caches, the directory under home that holds the
// cache: a fresh machine has no ~/go before the first module download,
// and the sandbox grants only caches whose tool directory exists (it
// creates ~/go/pkg itself once ~/go exists).
func toolDirs(name string) []string {
	switch name {
	case "go":
		return []string{"go"}
	case "npm", "npx", "pnpm":
		return []string{".npm"}
	case "gradle", "gradlew":
		return []string{".gradle"}
	case "mvn", "mvnw":
		return []string{".m2"}
	}
	return nil
}

// makeToolDirs creates, before an allowed run, the tool directories of
// the package managers that fetch in it (toolDirs), when the user's
// environment does not move their caches elsewhere: empty directories,
// which the tool would have made itself outside the sandbox.
func (g *Gate) makeToolDirs(dec Decision) {
	home := g.cfg.UserHome
	if home == "" || !filepath.IsAbs(home) {
		return
	}
	var env []string
	if g.cfg.Environ != nil {
		env = g.cfg.Environ()
	}
	for _, c := range dec.Commands {
		if c.Policy == nil || !slices.ContainsFunc(c.Policy.Accesses, func(a policy.AccessResult) bool { return a.Capability == classify.NetworkHTTP }) {
			continue
		}
		name := c.Command.Name()
		if name == "go" && (envValue(env, "GOPATH") != "" || envValue(env, "GOMODCACHE") != "") {
			continue
		}
		for _, d := range toolDirs(name) {
			p := filepath.Join(home, d)
			if _, err := os.Lstat(p); os.IsNotExist(err) {
				_ = os.Mkdir(p, 0o755)
			}
		}
	}
}
