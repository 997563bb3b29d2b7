package gate

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// What a Gradle build needs, and whether Gradle's caches hold it
// (classify's gradleFetch decides from these facts).
//
// The wrapper: ./gradlew downloads the distribution its
// gradle/wrapper/gradle-wrapper.properties names when
// GRADLE_USER_HOME (~/.gradle) has no wrapper/dists directory for it
// (GradleMissing).
//
// The build: its scripts are programs, so only what they declare in the
// plain forms is read: in build.gradle or build.gradle.kts of the
// build's root and of the projects settings.gradle(.kts) includes, the
// dependencies given as "group:name:version" strings, as
// group/name/version maps, or through the version catalog
// (gradle/libs.versions.toml, libs.x.y), with versions from the
// catalog, gradle.properties and plain assignments of the scripts, and
// the plugins of the plugins {} blocks with their versions (their
// marker artifact, id:id.gradle.plugin). Each must be in the module
// cache (caches/modules-2/files-2.1/GROUP/NAME/VERSION); one without a
// version (a platform gives it) must be there at some version. A
// version from something else (a variable computed in the script, a
// property set elsewhere), a dynamic version (1.+, latest.release, a
// range), a catalog the build names but that is missing, or more than
// maxGradleScripts scripts: the build is taken to download
// (GradleDepsMissing). What is declared in another form (a loop, a
// function, a convention plugin) is not seen; the build then runs
// offline in the sandbox and, if it does need a download, fails, and
// the run's hint names the fetch step.

// maxGradleScripts bounds the build scripts read for one request.
const maxGradleScripts = 32

var (
	// gradleConfigs are the configurations a dependency is declared in.
	gradleDepLine = regexp.MustCompile(`(?m)^\s*([A-Za-z][A-Za-z0-9]*)\s*[( ]\s*(.*)$`)
	// A coordinate string: "group:name[:version[:classifier]][@ext]".
	gradleCoordString = regexp.MustCompile(`^(?:platform|enforcedPlatform|testFixtures)?\s*\(?\s*["']([^"'$:\s]+):([^"':\s]+)(?::([^"':@\s]*))?(?::[^"'@]*)?(?:@[^"']*)?["']`)
	// A coordinate map: group: 'g', name: 'n', version: 'v' (Groovy) or
	// group = "g", name = "n", version = "v" (Kotlin).
	gradleMapPart = regexp.MustCompile(`\b(group|name|version)\s*[:=]\s*["']([^"']*)["']`)
	// A catalog accessor: libs.a.b.c (libs.plugins.x in plugins {}).
	gradleAccessor = regexp.MustCompile(`^(?:platform|enforcedPlatform)?\s*\(?\s*libs\.([A-Za-z0-9_.]+)`)
	// A plugin: id("x") version "v", id 'x' version 'v', kotlin("jvm")
	// version "v", alias(libs.plugins.x).
	gradlePluginID       = regexp.MustCompile(`^\s*id\s*\(?\s*["']([^"']+)["']\s*\)?\s*(?:version\s*\(?\s*["']([^"']*)["']\s*\)?)?`)
	gradlePluginKotlin   = regexp.MustCompile(`^\s*kotlin\s*\(\s*["']([^"']+)["']\s*\)\s*(?:version\s*\(?\s*["']([^"']*)["']\s*\)?)?`)
	gradlePluginAlias    = regexp.MustCompile(`^\s*alias\s*\(\s*libs\.plugins\.([A-Za-z0-9_.]+)\s*\)`)
	gradleAssign         = regexp.MustCompile(`(?m)^\s*(?:val|var|def|ext\.|extra\[")?\s*([A-Za-z_][A-Za-z0-9_]*)"?\]?\s*(?::\s*String\s*)?=\s*["']([^"'$]*)["']\s*$`)
	gradleBlockOpen      = regexp.MustCompile(`\b((?:dependencies|plugins|buildscript)\s*\{)`)
	gradleInclude        = regexp.MustCompile(`(?m)^\s*include\s*\(?(.*)$`)
	gradleQuoted         = regexp.MustCompile(`["']([^"']+)["']`)
	gradleDollar         = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_.]*)\}?`)
	gradleTOMLTable      = regexp.MustCompile(`^\[([A-Za-z0-9_.-]+)\]$`)
	gradleTOMLEntry      = regexp.MustCompile(`^([A-Za-z0-9_.-]+)\s*=\s*(.*)$`)
	gradleTOMLInlinePart = regexp.MustCompile(`([A-Za-z.]+)\s*=\s*"([^"]*)"`)
)

// gradleConfigs are the names a dependency is declared under, beside
// those ending in Implementation, Api, CompileOnly or RuntimeOnly
// (testImplementation, kapt …).
var gradleConfigs = []string{"implementation", "api", "compileOnly", "runtimeOnly", "compile", "runtime",
	"testCompile", "testRuntime", "annotationProcessor", "kapt", "ksp", "classpath", "developmentOnly",
	"compileOnlyApi", "detektPlugins", "lintChecks", "coreLibraryDesugaring"}

func gradleConfig(name string) bool {
	if slices.Contains(gradleConfigs, name) {
		return true
	}
	for _, suf := range []string{"Implementation", "Api", "CompileOnly", "RuntimeOnly", "AnnotationProcessor"} {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}

// gradleModule is a module the build declares: version "" when a
// platform or the plugin gives it.
type gradleModule struct{ group, name, version string }

func (r *factReader) gradleFacts() {
	pk := r.facts.pk
	userHome := r.getenv("GRADLE_USER_HOME")
	if !filepath.IsAbs(userHome) {
		userHome = r.homePath(".gradle")
	}
	for _, dir := range r.dirs {
		r.gradleWrapper(dir, userHome)
		if userHome != "" && r.gradleBuildMissing(dir, filepath.Join(userHome, "caches", "modules-2", "files-2.1")) {
			pk.GradleDepsMissing = true
		}
	}
}

// gradleWrapper notes a wrapper distribution not yet downloaded.
func (r *factReader) gradleWrapper(dir, userHome string) {
	pk := r.facts.pk
	p, ok := nearest(r.upward(dir), filepath.Join("gradle", "wrapper", "gradle-wrapper.properties"))
	if !ok || userHome == "" {
		return
	}
	b, ok := r.read(p, maxConfig)
	if !ok {
		return
	}
	r.source(p)
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.TrimSpace(k) != "distributionUrl" {
			continue
		}
		u := strings.ReplaceAll(strings.TrimSpace(v), `\:`, ":")
		base := strings.TrimSuffix(u[strings.LastIndexByte(u, '/')+1:], ".zip")
		if base == "" || strings.Contains(base, "..") {
			continue
		}
		if dirHasEntries(filepath.Join(userHome, "wrapper", "dists", base)) {
			continue
		}
		pk.GradleMissing, pk.GradleDist = true, u
	}
}

// gradleBuild is what was read of one Gradle build.
type gradleBuild struct {
	r       *factReader
	root    string
	vars    map[string]string
	catalog map[string]gradleModule // libraries, by accessor (a.b.c)
	plugins map[string]gradleModule // catalog plugins, by accessor
	modules []gradleModule
	unknown bool
	scripts int
}

// gradleBuildMissing reports a build, run in dir, that declares what the
// module cache (files-2.1) lacks, or a declaration that cannot be read.
func (r *factReader) gradleBuildMissing(dir, cache string) bool {
	up := r.upward(dir)
	root := ""
	for _, d := range up {
		if regularFile(filepath.Join(d, "settings.gradle")) || regularFile(filepath.Join(d, "settings.gradle.kts")) {
			root = d
			break
		}
	}
	if root == "" {
		for _, d := range up {
			if regularFile(filepath.Join(d, "build.gradle")) || regularFile(filepath.Join(d, "build.gradle.kts")) {
				root = d
				break
			}
		}
	}
	if root == "" {
		return false // no build here: gradle stops before resolving anything
	}
	b := &gradleBuild{r: r, root: root, vars: map[string]string{}, catalog: map[string]gradleModule{}, plugins: map[string]gradleModule{}}
	b.properties(filepath.Join(root, "gradle.properties"))
	b.versionCatalog(filepath.Join(root, "gradle", "libs.versions.toml"))
	projects := []string{root}
	for _, name := range []string{"settings.gradle", "settings.gradle.kts"} {
		src, ok := b.script(filepath.Join(root, name))
		if !ok {
			continue
		}
		b.declarations(src)
		for _, m := range gradleInclude.FindAllStringSubmatch(src, -1) {
			for _, q := range gradleQuoted.FindAllStringSubmatch(m[1], -1) {
				rel := strings.ReplaceAll(strings.TrimPrefix(q[1], ":"), ":", "/")
				if rel == "" || strings.Contains(rel, "..") || strings.Contains(rel, "$") {
					b.unknown = true
					continue
				}
				projects = append(projects, filepath.Join(root, filepath.FromSlash(rel)))
			}
		}
	}
	for _, p := range projects {
		for _, name := range []string{"build.gradle", "build.gradle.kts"} {
			if src, ok := b.script(filepath.Join(p, name)); ok {
				b.declarations(src)
			}
		}
	}
	if b.unknown {
		return true
	}
	for _, m := range b.modules {
		if !gradleCached(cache, m) {
			return true
		}
	}
	return false
}

// script reads a build or settings script of the build (and notes it
// as a source of the facts); ok is false when there is none.
func (b *gradleBuild) script(p string) (string, bool) {
	if !regularFile(p) {
		return "", false
	}
	if b.scripts++; b.scripts > maxGradleScripts {
		b.unknown = true
		return "", false
	}
	data, ok := b.r.read(p, maxConfig+1)
	if !ok || len(data) > maxConfig {
		b.unknown = true
		return "", false
	}
	b.r.source(p)
	src := string(data)
	for _, m := range gradleAssign.FindAllStringSubmatch(src, -1) {
		b.vars[m[1]] = m[2]
	}
	return src, true
}

// properties reads gradle.properties' NAME=VALUE lines.
func (b *gradleBuild) properties(p string) {
	data, ok := b.r.read(p, maxConfig)
	if !ok {
		return
	}
	b.r.source(p)
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			b.vars[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
}

// versionCatalog reads gradle/libs.versions.toml: its versions,
// libraries and plugins, by the accessor the scripts write (the alias
// with - and _ as .).
func (b *gradleBuild) versionCatalog(p string) {
	data, ok := b.r.read(p, maxConfig)
	if !ok {
		return
	}
	b.r.source(p)
	versions := map[string]string{}
	table := ""
	type entry struct{ table, alias, value string }
	var entries []entry
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, " #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" || line[0] == '#' {
			continue
		}
		if m := gradleTOMLTable.FindStringSubmatch(line); m != nil {
			table = m[1]
			continue
		}
		m := gradleTOMLEntry.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		alias, value := m[1], strings.TrimSpace(m[2])
		if table == "versions" {
			versions[alias] = strings.Trim(value, `"`)
			continue
		}
		entries = append(entries, entry{table, alias, value})
	}
	accessor := func(alias string) string { return strings.NewReplacer("-", ".", "_", ".").Replace(alias) }
	for _, e := range entries {
		var mod gradleModule
		var id string
		if strings.HasPrefix(e.value, `"`) {
			parts := strings.Split(strings.Trim(e.value, `"`), ":")
			switch {
			case e.table == "plugins" && len(parts) == 2:
				id, mod.version = parts[0], parts[1]
			case e.table == "libraries" && len(parts) >= 2:
				mod.group, mod.name = parts[0], parts[1]
				if len(parts) > 2 {
					mod.version = parts[2]
				}
			default:
				b.unknown = true
				continue
			}
		} else {
			for _, kv := range gradleTOMLInlinePart.FindAllStringSubmatch(e.value, -1) {
				switch kv[1] {
				case "module":
					mod.group, mod.name, _ = strings.Cut(kv[2], ":")
				case "group":
					mod.group = kv[2]
				case "name":
					mod.name = kv[2]
				case "id":
					id = kv[2]
				case "version", "version.require", "version.strictly", "version.prefer":
					mod.version = kv[2]
				case "version.ref":
					v, ok := versions[kv[2]]
					if !ok {
						b.unknown = true
					}
					mod.version = v
				}
			}
		}
		switch e.table {
		case "libraries":
			b.catalog[accessor(e.alias)] = mod
		case "plugins":
			b.plugins[accessor(e.alias)] = gradleModule{group: id, name: id + ".gradle.plugin", version: mod.version}
		}
	}
}

// declarations reads the dependencies and plugins a script declares.
func (b *gradleBuild) declarations(src string) {
	// One declaration a line, also in a block written on one line:
	// dependencies { api("g:n:v") }.
	src = gradleBlockOpen.ReplaceAllString(src, "$1\n")
	inPlugins := false
	depth := 0
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "//") {
			continue
		}
		if strings.HasPrefix(t, "plugins") && strings.Contains(t, "{") {
			inPlugins, depth = true, 0
		}
		if inPlugins {
			b.plugin(t)
			depth += strings.Count(t, "{") - strings.Count(t, "}")
			if depth <= 0 {
				inPlugins = false
			}
			continue
		}
		m := gradleDepLine.FindStringSubmatch(line)
		if m == nil || !gradleConfig(m[1]) {
			continue
		}
		b.dependency(strings.TrimSpace(m[2]))
	}
}

// plugin reads one line of a plugins {} block.
func (b *gradleBuild) plugin(t string) {
	if strings.Contains(t, "apply false") && !strings.Contains(t, "version") && !strings.Contains(t, "alias") {
		return
	}
	switch {
	case gradlePluginAlias.MatchString(t):
		m := gradlePluginAlias.FindStringSubmatch(t)
		p, ok := b.plugins[m[1]]
		if !ok {
			b.unknown = true
			return
		}
		b.add(p)
	case gradlePluginKotlin.MatchString(t):
		m := gradlePluginKotlin.FindStringSubmatch(t)
		id := "org.jetbrains.kotlin." + m[1]
		b.add(gradleModule{group: id, name: id + ".gradle.plugin", version: b.expand(m[2])})
	case gradlePluginID.MatchString(t):
		m := gradlePluginID.FindStringSubmatch(t)
		id := m[1]
		if !strings.Contains(id, ".") {
			return // a core plugin: java, application, java-library …
		}
		b.add(gradleModule{group: id, name: id + ".gradle.plugin", version: b.expand(m[2])})
	}
}

// dependency reads the arguments of a dependency declaration.
func (b *gradleBuild) dependency(args string) {
	switch {
	case strings.HasPrefix(args, "project(") || strings.HasPrefix(args, "project ") || strings.HasPrefix(args, "files(") ||
		strings.HasPrefix(args, "fileTree(") || strings.HasPrefix(args, "gradleApi(") || strings.HasPrefix(args, "localGroovy("):
		return // the build's own projects and files
	case gradleCoordString.MatchString(args):
		m := gradleCoordString.FindStringSubmatch(args)
		b.add(gradleModule{group: m[1], name: m[2], version: b.expand(m[3])})
	case gradleAccessor.MatchString(args):
		m := gradleAccessor.FindStringSubmatch(args)
		acc := strings.TrimSuffix(m[1], ".get")
		mod, ok := b.catalog[acc]
		if !ok {
			b.unknown = true // a bundle, or a catalog alias not read
			return
		}
		b.add(mod)
	case strings.Contains(args, "group") && strings.Contains(args, "name"):
		mod := gradleModule{}
		for _, kv := range gradleMapPart.FindAllStringSubmatch(args, -1) {
			switch kv[1] {
			case "group":
				mod.group = kv[2]
			case "name":
				mod.name = kv[2]
			case "version":
				mod.version = b.expand(kv[2])
			}
		}
		if mod.group == "" || mod.name == "" {
			b.unknown = true
			return
		}
		b.add(mod)
	case strings.HasPrefix(args, "kotlin("):
		// kotlin("stdlib"): the Kotlin plugin's version.
		if q := gradleQuoted.FindStringSubmatch(args); q != nil {
			b.add(gradleModule{group: "org.jetbrains.kotlin", name: "kotlin-" + q[1]})
		}
	default:
		b.unknown = true // a declaration in a form not read
	}
}

// expand replaces $name and ${name} with what the scripts and
// gradle.properties set; unknown is set when one is not set.
func (b *gradleBuild) expand(v string) string {
	return gradleDollar.ReplaceAllStringFunc(v, func(s string) string {
		name := gradleDollar.FindStringSubmatch(s)[1]
		if val, ok := b.vars[name]; ok {
			return val
		}
		b.unknown = true
		return s
	})
}

// add notes a module the build needs, and a version that cannot be
// resolved offline.
func (b *gradleBuild) add(m gradleModule) {
	v := m.version
	if strings.ContainsAny(v, "+[]()$,") || strings.HasPrefix(v, "latest.") || strings.HasSuffix(v, "-SNAPSHOT") {
		b.unknown = true // resolved anew against the repositories
		return
	}
	if m.group == "" || m.name == "" {
		b.unknown = true
		return
	}
	b.modules = append(b.modules, m)
}

// gradleCached reports a module in Gradle's module cache: at its
// version, else at any version.
func gradleCached(cache string, m gradleModule) bool {
	if strings.Contains(m.group+m.name+m.version, "..") || strings.ContainsAny(m.group+m.name+m.version, `/\`) {
		return false
	}
	dir := filepath.Join(cache, m.group, m.name)
	if m.version != "" {
		return dirHasEntries(filepath.Join(dir, m.version))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() && dirHasEntries(filepath.Join(dir, e.Name())) {
			return true
		}
	}
	return false
}
