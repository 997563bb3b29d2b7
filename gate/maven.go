package gate

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
)

// What a Maven build needs, and whether the local repository holds it
// (classify's mavenFetch decides from these facts, as it does for a go
// build from the module cache).
//
// Read, as Maven reads them: the user's settings.xml (mirrors, proxies,
// localRepository, offline), the project's .mvn/maven.config, MAVEN_OPTS
// and MAVEN_ARGS (-o, -Dmaven.repo.local), the Maven wrapper's
// properties (the distribution ./mvnw downloads when
// ~/.m2/wrapper/dists lacks it), and the POM of each directory the
// commands run in with its modules, its parents (in the workspace along
// relativePath, else in the local repository) and the BOMs it imports.
// From the POMs: the dependencies, the build's plugins and extensions
// and their versions (from the POM, its properties, its parents'
// dependencyManagement and pluginManagement, the imported BOMs), the
// packaging, and the repositories. The build needs from the local
// repository every parent, imported BOM, dependency (but the build's own
// modules), plugin and extension it names; a plugin of the default
// lifecycle the POMs do not pin (compiler, surefire, jar ...) is there
// when some version of it is.
//
// What cannot be read fails toward fetching (MavenMissing): a POM that
// does not parse or is too large, a version from a property nothing
// sets (-Drevision on the command line included), a version range, a
// packaging no plugin of the build provides, more POMs than maxPOMs.
// What a dependency itself depends on is not followed: a repository
// holding the declared artifacts is taken to hold what they need, as
// Maven downloaded them together. Profiles are not read. When these
// facts are wrong the other way, the build runs offline in the sandbox,
// fails for want of an artifact, and the run's hint names
// `mvn dependency:go-offline`, which asks (fetchhint.go).

// maxPOMs bounds the POMs read for one request; maxPOM the size of one.
const (
	maxPOMs = 64
	maxPOM  = 2 << 20
)

// mavenLifecyclePlugins are the prefixes of the plugins Maven's default
// bindings run, checked in the local repository at the version the
// build pins, else at any version.
var mavenLifecyclePlugins = []string{"clean", "resources", "compiler", "surefire", "jar", "war", "install", "deploy", "site"}

// pomFile is the part of a POM the facts read.
type pomFile struct {
	GroupID    string     `xml:"groupId"`
	ArtifactID string     `xml:"artifactId"`
	Version    string     `xml:"version"`
	Packaging  string     `xml:"packaging"`
	Parent     *pomParent `xml:"parent"`
	Properties struct {
		Entries []xmlEntry `xml:",any"`
	} `xml:"properties"`
	DepMgmt     []pomDep    `xml:"dependencyManagement>dependencies>dependency"`
	Deps        []pomDep    `xml:"dependencies>dependency"`
	Plugins     []pomPlugin `xml:"build>plugins>plugin"`
	PluginMgmt  []pomPlugin `xml:"build>pluginManagement>plugins>plugin"`
	Extensions  []pomDep    `xml:"build>extensions>extension"`
	Modules     []string    `xml:"modules>module"`
	Subprojects []string    `xml:"subprojects>subproject"`
	Repos       []string    `xml:"repositories>repository>url"`
	PluginRepos []string    `xml:"pluginRepositories>pluginRepository>url"`
}

type pomParent struct {
	GroupID      string  `xml:"groupId"`
	ArtifactID   string  `xml:"artifactId"`
	Version      string  `xml:"version"`
	RelativePath *string `xml:"relativePath"`
}

type xmlEntry struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

type pomDep struct {
	GroupID    string `xml:"groupId"`
	ArtifactID string `xml:"artifactId"`
	Version    string `xml:"version"`
	Type       string `xml:"type"`
	Classifier string `xml:"classifier"`
	Scope      string `xml:"scope"`
}

type pomPlugin struct {
	GroupID      string   `xml:"groupId"`
	ArtifactID   string   `xml:"artifactId"`
	Version      string   `xml:"version"`
	Extensions   string   `xml:"extensions"`
	Dependencies []pomDep `xml:"dependencies>dependency"`
}

// pomModel is one POM with what it inherits.
type pomModel struct {
	file   *pomFile
	path   string // the file; under the local repository for a parent or a BOM from there
	parent *pomModel
	// props are the effective properties, worked out on first use.
	props map[string]string
	// mgmt are the versions dependencyManagement gives, by groupId:artifactId,
	// worked out on first use.
	mgmt map[string]string
}

// mavenReader reads the POMs of one request.
type mavenReader struct {
	r *factReader
	// repo is the local repository ("" when it cannot be told).
	repo string
	// user are the properties given to Maven (-D of maven.config,
	// MAVEN_ARGS): they win over the POMs'.
	user   map[string]string
	reads  int
	byPath map[string]*pomModel
	// missing: the build needs what the repository lacks, or what it
	// needs cannot be read.
	missing bool
	// reactor are the groupId:artifactId of the build's own projects.
	reactor    map[string]bool
	projects   []*pomModel
	packagings []string
	repos      []string
	// pins are the plugin versions the build pins, by prefix of the
	// plugins of the default lifecycle; "" when some project does not pin it.
	pins map[string][]string
	// provided are the prefixes of the build's own plugins found in the
	// repository, and extensions whether one provides packagings.
	provided   []string
	extensions bool
}

func (r *factReader) mavenFacts() {
	pk := r.facts.pk
	m := &mavenReader{r: r, user: map[string]string{}, byPath: map[string]*pomModel{}, reactor: map[string]bool{}, pins: map[string][]string{}}
	m.repo = r.homePath(".m2", "repository")
	if p := r.homePath(".m2", "settings.xml"); p != "" {
		m.settings(p)
	}
	// Maven's options from the environment and from the project's
	// .mvn/maven.config (the nearest .mvn upward is the project's root).
	opts := strings.Fields(r.getenv("MAVEN_OPTS") + " " + r.getenv("MAVEN_ARGS"))
	for _, dir := range r.dirs {
		if p, ok := nearest(r.upward(dir), filepath.Join(".mvn", "maven.config")); ok {
			if b, ok := r.read(p, maxConfig); ok {
				r.source(p)
				opts = append(opts, strings.Fields(string(b))...)
			}
		}
		m.wrapper(dir)
	}
	for i, o := range opts {
		switch {
		case o == "-o" || o == "--offline":
			pk.MavenOffline = true
		case strings.HasPrefix(o, "-D") && len(o) > 2:
			name, value, _ := strings.Cut(o[2:], "=")
			if name == "maven.repo.local" {
				m.setRepo(value)
			} else {
				m.user[name] = value
			}
		case (o == "-s" || o == "--settings") && i+1 < len(opts):
			m.settings(opts[i+1])
		}
	}
	for _, dir := range r.dirs {
		p := filepath.Join(dir, "pom.xml")
		if _, err := os.Stat(p); err != nil {
			continue // no project here: mvn stops before resolving anything
		}
		m.project(p, 0)
	}
	if len(m.projects) > 0 {
		m.needs()
	}
	pk.MavenMissing = pk.MavenMissing || m.missing
	pk.MavenPackagings = m.packagings
	pk.MavenRepos = appendURLs(pk.MavenRepos, m.repos...)
	pk.MavenPlugins = m.plugins()
}

// fail notes that the build needs what the repository lacks, or what
// it needs cannot be read.
func (m *mavenReader) fail() { m.missing = true }

// setRepo sets the local repository from a path Maven is given.
func (m *mavenReader) setRepo(p string) {
	p = strings.TrimSpace(strings.NewReplacer("${user.home}", m.r.home, "${env.HOME}", m.r.home).Replace(p))
	if !filepath.IsAbs(p) || strings.Contains(p, "${") {
		m.repo = ""
		m.fail()
		return
	}
	m.repo = filepath.Clean(p)
}

// settings reads a settings.xml: its mirrors, proxies, local repository
// and offline mode.
func (m *mavenReader) settings(p string) {
	r := m.r
	b, ok := r.read(p, maxConfig)
	if !ok {
		return
	}
	var s struct {
		LocalRepository string `xml:"localRepository"`
		Offline         string `xml:"offline"`
		Mirrors         []struct {
			URL      string `xml:"url"`
			MirrorOf string `xml:"mirrorOf"`
		} `xml:"mirrors>mirror"`
		Proxies []struct {
			Active string `xml:"active"`
			Port   string `xml:"port"`
		} `xml:"proxies>proxy"`
	}
	if err := xml.Unmarshal(b, &s); err != nil {
		m.fail()
		r.facts.proxyUnknown = true
		return
	}
	pk := r.facts.pk
	for _, mr := range s.Mirrors {
		pk.Maven = appendURLs(pk.Maven, strings.TrimSpace(mr.URL))
		for _, of := range strings.Split(mr.MirrorOf, ",") {
			if of = strings.TrimSpace(of); of == "*" || of == "external:*" {
				pk.MavenMirrorsAll = true
			}
		}
	}
	for _, px := range s.Proxies {
		if strings.TrimSpace(px.Active) == "false" {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(px.Port), 10, 16); err == nil && n > 0 {
			r.facts.proxyPorts = appendPortsNew(r.facts.proxyPorts, uint16(n))
		} else {
			r.facts.proxyUnknown = true
		}
	}
	if v := strings.TrimSpace(s.LocalRepository); v != "" {
		m.setRepo(v)
	}
	if strings.TrimSpace(s.Offline) == "true" {
		pk.MavenOffline = true
	}
}

// wrapper reads the Maven wrapper's properties for the commands run in
// dir: ./mvnw downloads the distribution they name when
// MAVEN_USER_HOME (~/.m2) has no wrapper/dists directory for it.
func (m *mavenReader) wrapper(dir string) {
	r := m.r
	p, ok := nearest(r.upward(dir), filepath.Join(".mvn", "wrapper", "maven-wrapper.properties"))
	if !ok {
		return
	}
	b, ok := r.read(p, maxConfig)
	if !ok {
		return
	}
	r.source(p)
	home := r.getenv("MAVEN_USER_HOME")
	if !filepath.IsAbs(home) {
		home = r.homePath(".m2")
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.TrimSpace(k) != "distributionUrl" {
			continue
		}
		u := strings.ReplaceAll(strings.TrimSpace(v), `\:`, ":")
		base := strings.TrimSuffix(u[strings.LastIndexByte(u, '/')+1:], ".zip")
		if home != "" && base != "" && !strings.Contains(base, "..") && dirHasEntries(filepath.Join(home, "wrapper", "dists", base)) {
			continue
		}
		pk := r.facts.pk
		pk.MavenWrapperMissing, pk.MavenWrapperDist = true, u
	}
}

// dirHasEntries reports a directory with at least one entry.
func dirHasEntries(d string) bool {
	f, err := os.Open(d)
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) > 0
}

// parse reads a POM file; nil when it cannot be read or parsed.
func (m *mavenReader) parse(p string) *pomFile {
	if m.reads >= maxPOMs {
		m.fail()
		return nil
	}
	m.reads++
	b, ok := m.r.read(p, maxPOM+1)
	if !ok || len(b) > maxPOM {
		m.fail()
		return nil
	}
	var f pomFile
	if err := xml.Unmarshal(b, &f); err != nil {
		m.fail()
		return nil
	}
	return &f
}

// load returns the model of the POM at p with its parents; nil when it
// cannot be read (the build then fails toward fetching).
func (m *mavenReader) load(p string, depth int) *pomModel {
	if pm, ok := m.byPath[p]; ok {
		return pm
	}
	if depth > 16 {
		m.fail()
		return nil
	}
	f := m.parse(p)
	if f == nil {
		return nil
	}
	pm := &pomModel{file: f, path: p}
	m.byPath[p] = pm
	if classify.Within(m.r.ws, p) {
		m.r.source(p)
	}
	if par := f.Parent; par != nil {
		pm.parent = m.parentOf(pm, par, depth)
		if pm.parent == nil {
			return nil
		}
	}
	return pm
}

// parentOf finds a POM's parent: along relativePath (../pom.xml unless
// it says otherwise) when the POM there is that parent, else in the
// local repository.
func (m *mavenReader) parentOf(child *pomModel, par *pomParent, depth int) *pomModel {
	g, a := strings.TrimSpace(par.GroupID), strings.TrimSpace(par.ArtifactID)
	if !child.inRepo(m) {
		rel := "../pom.xml"
		if par.RelativePath != nil {
			rel = strings.TrimSpace(*par.RelativePath)
		}
		if rel != "" {
			pp := filepath.Join(filepath.Dir(child.path), filepath.FromSlash(rel))
			if fi, err := os.Stat(pp); err == nil && fi.IsDir() {
				pp = filepath.Join(pp, "pom.xml")
			}
			if _, err := os.Stat(pp); err == nil {
				if f := m.peek(pp); f != nil && f.ArtifactID == a && (f.GroupID == g || f.GroupID == "" && f.Parent != nil) {
					return m.load(pp, depth+1)
				}
			}
		}
	}
	v, ok := m.interp(child, par.Version, false)
	if !ok {
		m.fail()
		return nil
	}
	return m.fromRepo(g, a, v, depth+1)
}

// peek parses a POM without counting it as a model (to tell whether a
// relativePath names the parent).
func (m *mavenReader) peek(p string) *pomFile {
	if pm, ok := m.byPath[p]; ok {
		return pm.file
	}
	b, ok := m.r.read(p, maxPOM+1)
	if !ok || len(b) > maxPOM {
		return nil
	}
	var f pomFile
	if xml.Unmarshal(b, &f) != nil {
		return nil
	}
	return &f
}

// inRepo reports a POM read from the local repository.
func (pm *pomModel) inRepo(m *mavenReader) bool {
	return m.repo != "" && classify.Within(m.repo, pm.path)
}

// artifactPath is where the local repository keeps an artifact's file.
func (m *mavenReader) artifactPath(g, a, v, classifier, ext string) string {
	if m.repo == "" || g == "" || a == "" || v == "" || strings.Contains(g+a+v, "..") || strings.ContainsAny(g+a+v, `/\`) {
		return ""
	}
	name := a + "-" + v
	if classifier != "" {
		name += "-" + classifier
	}
	return filepath.Join(m.repo, filepath.FromSlash(strings.ReplaceAll(g, ".", "/")), a, v, name+"."+ext)
}

// fromRepo loads a POM from the local repository; nil (and the build
// needs a download) when the repository lacks it.
func (m *mavenReader) fromRepo(g, a, v string, depth int) *pomModel {
	p := m.artifactPath(g, a, v, "", "pom")
	if p == "" || !regularFile(p) {
		m.fail()
		return nil
	}
	return m.load(p, depth)
}

func regularFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// coord returns the POM's groupId, artifactId and version, inherited
// from its parent where it does not give them.
func (pm *pomModel) coord(m *mavenReader) (g, a, v string) {
	g, a, v = strings.TrimSpace(pm.file.GroupID), strings.TrimSpace(pm.file.ArtifactID), strings.TrimSpace(pm.file.Version)
	if par := pm.file.Parent; par != nil {
		if g == "" {
			g = strings.TrimSpace(par.GroupID)
		}
		if v == "" {
			v = strings.TrimSpace(par.Version)
		}
	}
	return g, a, v
}

// properties are the POM's effective properties: its parents', its own
// over them, the project.* values, and the user's over all.
func (pm *pomModel) properties(m *mavenReader) map[string]string {
	if pm.props != nil {
		return pm.props
	}
	props := map[string]string{}
	if pm.parent != nil {
		for k, v := range pm.parent.properties(m) {
			props[k] = v
		}
	}
	for _, e := range pm.file.Properties.Entries {
		props[e.XMLName.Local] = strings.TrimSpace(e.Value)
	}
	g, a, v := pm.coord(m)
	packaging := strings.TrimSpace(pm.file.Packaging)
	if packaging == "" {
		packaging = "jar"
	}
	for _, pre := range []string{"project.", "pom.", ""} {
		props[pre+"groupId"], props[pre+"artifactId"], props[pre+"version"] = g, a, v
		if pre != "" {
			props[pre+"packaging"] = packaging
		}
	}
	if par := pm.file.Parent; par != nil {
		props["project.parent.groupId"] = strings.TrimSpace(par.GroupID)
		props["project.parent.artifactId"] = strings.TrimSpace(par.ArtifactID)
		props["project.parent.version"] = strings.TrimSpace(par.Version)
	}
	props["project.basedir"], props["basedir"] = filepath.Dir(pm.path), filepath.Dir(pm.path)
	props["user.home"] = m.r.home
	for k, v := range m.user {
		props[k] = v
	}
	pm.props = props
	return props
}

// interp expands the ${…} of s with the POM's properties (and env.X
// with the environment); ok is false when one is left unexpanded. An
// empty s is not ok unless empty is.
func (m *mavenReader) interp(pm *pomModel, s string, empty bool) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", empty
	}
	props := pm.properties(m)
	for range 8 {
		i := strings.Index(s, "${")
		if i < 0 {
			return s, true
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return s, false
		}
		name := s[i+2 : i+j]
		v, ok := props[name]
		if e, isEnv := strings.CutPrefix(name, "env."); isEnv {
			v, ok = m.r.getenv(e), m.r.getenv(e) != ""
		}
		if !ok {
			return s, false
		}
		s = s[:i] + v + s[i+j+1:]
	}
	return s, !strings.Contains(s, "${")
}

// managed returns the versions the POM's dependencyManagement gives
// (its parents' and the BOMs it imports included), by
// groupId:artifactId: its own entries first, then its parents', then
// the imported BOMs'.
func (pm *pomModel) managed(m *mavenReader, depth int) map[string]string {
	if pm.mgmt != nil {
		return pm.mgmt
	}
	mg := map[string]string{}
	pm.mgmt = mg // a BOM importing itself stops here
	var imports []pomDep
	for _, d := range pm.file.DepMgmt {
		g, okg := m.interp(pm, d.GroupID, false)
		a, oka := m.interp(pm, d.ArtifactID, false)
		v, okv := m.interp(pm, d.Version, false)
		if !okg || !oka {
			m.fail()
			continue
		}
		if strings.TrimSpace(d.Scope) == "import" {
			if !okv {
				m.fail()
				continue
			}
			imports = append(imports, pomDep{GroupID: g, ArtifactID: a, Version: v})
			continue
		}
		if _, ok := mg[g+":"+a]; !ok && okv {
			mg[g+":"+a] = v
		}
	}
	if pm.parent != nil {
		for k, v := range pm.parent.managed(m, depth) {
			if _, ok := mg[k]; !ok {
				mg[k] = v
			}
		}
	}
	for _, d := range imports {
		if depth > 8 {
			m.fail()
			break
		}
		bom := m.fromRepo(d.GroupID, d.ArtifactID, d.Version, 0)
		if bom == nil {
			continue
		}
		for k, v := range bom.managed(m, depth+1) {
			if _, ok := mg[k]; !ok {
				mg[k] = v
			}
		}
	}
	return mg
}

// project loads the POM at p as a project of the build, and its
// modules.
func (m *mavenReader) project(p string, depth int) {
	if depth > 8 {
		m.fail()
		return
	}
	for _, pm := range m.projects {
		if pm.path == p {
			return
		}
	}
	pm := m.load(p, 0)
	if pm == nil {
		return
	}
	m.projects = append(m.projects, pm)
	g, a, _ := pm.coord(m)
	m.reactor[g+":"+a] = true
	for _, mod := range slices.Concat(pm.file.Modules, pm.file.Subprojects) {
		mod = strings.TrimSpace(mod)
		if mod == "" || strings.Contains(mod, "${") {
			m.fail()
			continue
		}
		mp := filepath.Join(filepath.Dir(p), filepath.FromSlash(mod))
		if fi, err := os.Stat(mp); err == nil && fi.IsDir() {
			mp = filepath.Join(mp, "pom.xml")
		}
		if !classify.Within(m.r.ws, mp) && classify.Within(m.r.ws, p) {
			m.fail() // a module outside the workspace: not read
			continue
		}
		m.project(mp, depth+1)
	}
}

// needs checks what the build's projects need in the local repository.
func (m *mavenReader) needs() {
	for _, pm := range m.projects {
		packaging, ok := m.interp(pm, pm.file.Packaging, true)
		if !ok {
			m.fail()
		}
		if packaging == "" {
			packaging = "jar"
		}
		if !slices.Contains(m.packagings, packaging) {
			m.packagings = append(m.packagings, packaging)
		}
		mg := pm.managed(m, 0)
		for c := pm; c != nil; c = c.parent {
			for _, u := range slices.Concat(c.file.Repos, c.file.PluginRepos) {
				if u, ok := m.interp(c, u, false); ok {
					m.repos = appendURLs(m.repos, u)
				}
			}
			for _, d := range c.file.Deps {
				m.needDep(c, d, mg)
			}
		}
		m.needPlugins(pm, mg)
	}
	for _, p := range m.packagings {
		switch p {
		case "jar", "pom", "war":
		default:
			if !m.extensions {
				m.fail() // a packaging whose plugins the facts do not know
			}
		}
	}
}

// needDep checks one dependency (or extension) the POM declares.
func (m *mavenReader) needDep(pm *pomModel, d pomDep, mg map[string]string) {
	scope := strings.TrimSpace(d.Scope)
	if scope == "system" || scope == "import" {
		return
	}
	g, okg := m.interp(pm, d.GroupID, false)
	a, oka := m.interp(pm, d.ArtifactID, false)
	if !okg || !oka {
		m.fail()
		return
	}
	if m.reactor[g+":"+a] {
		return // built by this build
	}
	v, ok := m.interp(pm, d.Version, false)
	if !ok {
		if d.Version != "" {
			m.fail()
			return
		}
		if v, ok = mg[g+":"+a]; !ok {
			m.fail()
			return
		}
	}
	if strings.ContainsAny(v, "[(,") {
		m.fail() // a range: which version is not known offline
		return
	}
	typ, _ := m.interp(pm, d.Type, true)
	classifier, _ := m.interp(pm, d.Classifier, true)
	ext := "jar"
	switch typ {
	case "pom":
		ext = "pom"
	case "war", "ear", "zip", "rar":
		ext = typ
	case "test-jar":
		classifier = "tests"
	}
	if p := m.artifactPath(g, a, v, classifier, ext); p == "" || !regularFile(p) {
		m.fail()
	}
}

// needPlugins checks the build's plugins and extensions, and notes the
// versions it pins of the default lifecycle's plugins.
func (m *mavenReader) needPlugins(pm *pomModel, mg map[string]string) {
	// The plugins' versions, by groupId:artifactId: pluginManagement,
	// the parents' first, then the plugins themselves.
	var chain []*pomModel
	for c := pm; c != nil; c = c.parent {
		chain = append([]*pomModel{c}, chain...)
	}
	versions := map[string]string{}
	type use struct {
		c *pomModel
		p pomPlugin
	}
	var plugins []use
	for _, c := range chain {
		for _, p := range c.file.PluginMgmt {
			if k, v, ok := m.pluginKey(c, p); ok && v != "" {
				versions[k] = v
			}
		}
		for _, p := range c.file.Plugins {
			if k, v, ok := m.pluginKey(c, p); ok && v != "" {
				versions[k] = v
			}
			plugins = append(plugins, use{c, p})
		}
		for _, e := range c.file.Extensions {
			m.extensions = true
			m.needDep(c, e, mg)
		}
	}
	for _, u := range plugins {
		k, _, ok := m.pluginKey(u.c, u.p)
		if !ok {
			m.fail()
			continue
		}
		g, a, _ := strings.Cut(k, ":")
		if strings.TrimSpace(u.p.Extensions) == "true" {
			m.extensions = true
		}
		if !m.pluginCached(g, a, versions[k]) {
			m.fail()
			continue
		}
		m.provided = append(m.provided, classify.MavenPrefixOf(a))
		for _, d := range u.p.Dependencies {
			m.needDep(u.c, d, mg)
		}
	}
	for _, prefix := range mavenLifecyclePlugins {
		m.pins[prefix] = append(m.pins[prefix], versions["org.apache.maven.plugins:maven-"+prefix+"-plugin"])
	}
}

// pluginKey returns a plugin's groupId:artifactId (the groupId defaults
// to org.apache.maven.plugins) and its version ("" when the plugin does
// not give one); ok is false when they cannot be read.
func (m *mavenReader) pluginKey(pm *pomModel, p pomPlugin) (key, version string, ok bool) {
	g, okg := m.interp(pm, p.GroupID, true)
	a, oka := m.interp(pm, p.ArtifactID, false)
	if !okg || !oka {
		return "", "", false
	}
	if g == "" {
		g = "org.apache.maven.plugins"
	}
	v, okv := m.interp(pm, p.Version, true)
	if !okv {
		return "", "", false
	}
	return g + ":" + a, v, true
}

// pluginCached reports a plugin's jar in the local repository: at
// version, else at any version.
func (m *mavenReader) pluginCached(g, a, version string) bool {
	if version != "" {
		p := m.artifactPath(g, a, version, "", "jar")
		return p != "" && regularFile(p)
	}
	if m.repo == "" || strings.Contains(g+a, "..") || strings.ContainsAny(g+a, `/\`) {
		return false
	}
	dir := filepath.Join(m.repo, filepath.FromSlash(strings.ReplaceAll(g, ".", "/")), a)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() && regularFile(filepath.Join(dir, e.Name(), a+"-"+e.Name()+".jar")) {
			return true
		}
	}
	return false
}

// plugins are the prefixes of the plugins the build finds in the local
// repository: the default lifecycle's at the versions every project
// pins (any version where one does not), the build's own, and those of
// the two groups Maven looks a prefix up in (org.apache.maven.plugins,
// org.codehaus.mojo) that the build does not pin.
func (m *mavenReader) plugins() []string {
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range m.provided {
		add(p)
	}
	for _, prefix := range mavenLifecyclePlugins {
		pins := m.pins[prefix]
		if len(pins) == 0 {
			pins = []string{""}
		}
		ok := true
		for _, v := range pins {
			ok = ok && m.pluginCached("org.apache.maven.plugins", "maven-"+prefix+"-plugin", v)
		}
		if ok {
			add(prefix)
		}
	}
	if m.repo == "" {
		return out
	}
	for _, g := range []string{"org.apache.maven.plugins", "org.codehaus.mojo"} {
		dir := filepath.Join(m.repo, filepath.FromSlash(strings.ReplaceAll(g, ".", "/")))
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			prefix := classify.MavenPrefixOf(e.Name())
			if !e.IsDir() || slices.Contains(out, prefix) || slices.Contains(mavenLifecyclePlugins, prefix) {
				continue
			}
			if m.pluginCached(g, e.Name(), "") {
				add(prefix)
			}
		}
	}
	return out
}
