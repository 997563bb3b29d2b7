package gate

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/classify"
)

// mavenRepoFiles are the files of a local repository holding each
// group:artifact:version given, a jar beside its POM (a POM only for
// a pom-packaged one, whose content is pom when given).
func mavenRepoFiles(root string, gavs []string, poms map[string]string) map[string]string {
	files := map[string]string{}
	for _, gav := range gavs {
		parts := strings.Split(gav, ":")
		g, a, v := parts[0], parts[1], parts[2]
		dir := filepath.Join(root, strings.ReplaceAll(g, ".", "/"), a, v)
		pom, ok := poms[gav]
		if !ok {
			pom = "<project><groupId>" + g + "</groupId><artifactId>" + a + "</artifactId><version>" + v + "</version></project>"
			files[filepath.Join(dir, a+"-"+v+".jar")] = "PK"
		}
		files[filepath.Join(dir, a+"-"+v+".pom")] = pom
	}
	return files
}

// mavenLifecycleGAVs are the plugins of a jar's lifecycles.
var mavenLifecycleGAVs = []string{
	"org.apache.maven.plugins:maven-clean-plugin:3.2.0", "org.apache.maven.plugins:maven-resources-plugin:3.3.1",
	"org.apache.maven.plugins:maven-compiler-plugin:3.12.1", "org.apache.maven.plugins:maven-surefire-plugin:3.2.5",
	"org.apache.maven.plugins:maven-jar-plugin:3.3.0", "org.apache.maven.plugins:maven-install-plugin:3.1.1",
}

const testPOM = `<?xml version="1.0"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>app</artifactId>
  <version>1.0</version>
  <properties><guava.version>33.0.0-jre</guava.version></properties>
  <dependencies>
    <dependency><groupId>com.google.guava</groupId><artifactId>guava</artifactId><version>${guava.version}</version></dependency>
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId><version>5.10.2</version><scope>test</scope></dependency>
  </dependencies>
</project>
`

// TestMavenFacts: what the gate reads of a Maven build, and whether the
// local repository holds what it needs. Each case is a workspace and a
// home (paths relative to them) and what the facts must say.
func TestMavenFacts(t *testing.T) {
	cached := append(slices.Clone(mavenLifecycleGAVs), "com.google.guava:guava:33.0.0-jre", "org.junit.jupiter:junit-jupiter:5.10.2")
	repo := func(gavs ...string) map[string]string {
		return mavenRepoFiles(".m2/repository", gavs, nil)
	}
	with := func(ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	springParent := `<project><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-parent</artifactId><version>3.2.2</version>
<packaging>pom</packaging><properties><junit.version>5.10.2</junit.version></properties>
<dependencyManagement><dependencies><dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId><version>${junit.version}</version></dependency></dependencies></dependencyManagement>
<build><pluginManagement><plugins><plugin><artifactId>maven-surefire-plugin</artifactId><version>3.1.2</version></plugin>
<plugin><groupId>org.springframework.boot</groupId><artifactId>spring-boot-maven-plugin</artifactId><version>3.2.2</version></plugin></plugins></pluginManagement></build></project>`
	childOfSpring := `<project><parent><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-parent</artifactId><version>3.2.2</version><relativePath/></parent>
<artifactId>app</artifactId><dependencies><dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId><scope>test</scope></dependency></dependencies>
<build><plugins><plugin><groupId>org.springframework.boot</groupId><artifactId>spring-boot-maven-plugin</artifactId></plugin></plugins></build></project>`
	multiRoot := `<project><groupId>com.example</groupId><artifactId>parent</artifactId><version>2.0</version><packaging>pom</packaging>
<modules><module>core</module><module>web</module></modules>
<dependencyManagement><dependencies><dependency><groupId>com.google.guava</groupId><artifactId>guava</artifactId><version>33.0.0-jre</version></dependency></dependencies></dependencyManagement>
<repositories><repository><id>spring</id><url>https://repo.spring.io/milestone</url></repository></repositories></project>`
	multiCore := `<project><parent><groupId>com.example</groupId><artifactId>parent</artifactId><version>2.0</version></parent><artifactId>core</artifactId>
<dependencies><dependency><groupId>com.google.guava</groupId><artifactId>guava</artifactId></dependency></dependencies></project>`
	multiWeb := `<project><parent><groupId>com.example</groupId><artifactId>parent</artifactId><version>2.0</version></parent><artifactId>web</artifactId><packaging>war</packaging>
<dependencies><dependency><groupId>com.example</groupId><artifactId>core</artifactId><version>${project.version}</version></dependency></dependencies></project>`
	for _, tc := range []struct {
		name    string
		ws      map[string]string
		home    map[string]string
		env     []string
		missing bool
		plugins []string // must be among MavenPlugins
		absent  []string // must not be
		check   func(t *testing.T, pk *classify.Packages)
	}{
		{name: "cached", ws: map[string]string{"pom.xml": testPOM}, home: repo(cached...), plugins: []string{"compiler", "surefire", "jar", "clean"}},
		{name: "a dependency missing", ws: map[string]string{"pom.xml": testPOM}, home: repo(mavenLifecycleGAVs...), missing: true},
		{name: "a version from a property nothing sets", ws: map[string]string{"pom.xml": strings.Replace(testPOM, "${guava.version}", "${revision}", 1)},
			home: repo(cached...), missing: true},
		{name: "the property given in .mvn/maven.config", ws: map[string]string{"pom.xml": strings.Replace(testPOM, "${guava.version}", "${revision}", 1),
			".mvn/maven.config": "-Drevision=33.0.0-jre\n"}, home: repo(cached...)},
		{name: "a version range", ws: map[string]string{"pom.xml": strings.Replace(testPOM, "5.10.2", "[5.0,6.0)", 1)}, home: repo(cached...), missing: true},
		{name: "a POM that does not parse", ws: map[string]string{"pom.xml": "<project><dependencies>"}, home: repo(cached...), missing: true},
		{name: "the parent from the repository, with its pins", ws: map[string]string{"pom.xml": childOfSpring},
			home: with(repo(append(slices.Clone(mavenLifecycleGAVs), "org.junit.jupiter:junit-jupiter:5.10.2",
				"org.springframework.boot:spring-boot-maven-plugin:3.2.2")...),
				mavenRepoFiles(".m2/repository", []string{"org.springframework.boot:spring-boot-starter-parent:3.2.2"},
					map[string]string{"org.springframework.boot:spring-boot-starter-parent:3.2.2": springParent})),
			plugins: []string{"compiler", "spring-boot"}, absent: []string{"surefire"}}, // surefire 3.1.2 pinned, 3.2.5 cached
		{name: "the parent missing", ws: map[string]string{"pom.xml": childOfSpring}, home: repo(cached...), missing: true},
		{name: "modules, a parent in the workspace, a module depending on another", ws: map[string]string{"pom.xml": multiRoot,
			"core/pom.xml": multiCore, "web/pom.xml": multiWeb}, home: repo(cached...), absent: []string{"war"},
			check: func(t *testing.T, pk *classify.Packages) {
				if !slices.Contains(pk.MavenPackagings, "war") || !slices.Contains(pk.MavenPackagings, "pom") {
					t.Errorf("packagings %v, want pom, jar and war", pk.MavenPackagings)
				}
				if !slices.Equal(pk.MavenRepos, []string{"https://repo.spring.io/milestone"}) {
					t.Errorf("repositories %v", pk.MavenRepos)
				}
			}},
		{name: "an imported BOM missing", ws: map[string]string{"pom.xml": strings.Replace(testPOM, "<dependencies>",
			"<dependencyManagement><dependencies><dependency><groupId>org.junit</groupId><artifactId>junit-bom</artifactId><version>5.10.2</version><type>pom</type><scope>import</scope></dependency></dependencies></dependencyManagement><dependencies>", 1)},
			home: repo(cached...), missing: true},
		{name: "a build plugin missing", ws: map[string]string{"pom.xml": strings.Replace(testPOM, "</dependencies>",
			"</dependencies><build><plugins><plugin><groupId>com.evil</groupId><artifactId>evil-maven-plugin</artifactId><version>1.0</version></plugin></plugins></build>", 1)},
			home: repo(cached...), missing: true},
		{name: "a packaging no plugin provides", ws: map[string]string{"pom.xml": strings.Replace(testPOM, "<version>1.0</version>", "<version>1.0</version><packaging>bundle</packaging>", 1)},
			home: repo(cached...), missing: true},
		{name: "the local repository from settings.xml", ws: map[string]string{"pom.xml": testPOM},
			home: with(mavenRepoFiles("m2repo", cached, nil), map[string]string{".m2/settings.xml": "<settings><localRepository>${user.home}/m2repo</localRepository></settings>"})},
		{name: "the local repository from MAVEN_OPTS", ws: map[string]string{"pom.xml": testPOM}, home: repo(cached...),
			env: []string{"MAVEN_OPTS=-Xmx1g -Dmaven.repo.local=/nonexistent/repo"}, missing: true},
		{name: "offline and a mirror of everything", ws: map[string]string{"pom.xml": testPOM, ".mvn/maven.config": "-o\n"},
			home:    map[string]string{".m2/settings.xml": "<settings><mirrors><mirror><id>n</id><mirrorOf>*</mirrorOf><url>https://nexus.example/maven/</url></mirror></mirrors><proxies><proxy><active>true</active><port>3128</port></proxy></proxies></settings>"},
			missing: true,
			check: func(t *testing.T, pk *classify.Packages) {
				if !pk.MavenOffline || !pk.MavenMirrorsAll || !slices.Equal(pk.Maven, []string{"https://nexus.example/maven/"}) {
					t.Errorf("offline %v, mirrors all %v, mirrors %v", pk.MavenOffline, pk.MavenMirrorsAll, pk.Maven)
				}
			}},
		{name: "the wrapper's distribution missing", ws: map[string]string{"pom.xml": testPOM,
			".mvn/wrapper/maven-wrapper.properties": "distributionUrl=https://repo.maven.apache.org/maven2/org/apache/maven/apache-maven/3.9.6/apache-maven-3.9.6-bin.zip\n"},
			home: repo(cached...),
			check: func(t *testing.T, pk *classify.Packages) {
				if !pk.MavenWrapperMissing || !strings.HasSuffix(pk.MavenWrapperDist, "apache-maven-3.9.6-bin.zip") {
					t.Errorf("wrapper missing %v dist %q", pk.MavenWrapperMissing, pk.MavenWrapperDist)
				}
			}},
		{name: "the wrapper's distribution there", ws: map[string]string{"pom.xml": testPOM,
			".mvn/wrapper/maven-wrapper.properties": "distributionUrl=https://repo.maven.apache.org/maven2/org/apache/maven/apache-maven/3.9.6/apache-maven-3.9.6-bin.zip\n"},
			home: with(repo(cached...), map[string]string{".m2/wrapper/dists/apache-maven-3.9.6-bin/3311e1d4/apache-maven-3.9.6/bin/mvn": ""}),
			check: func(t *testing.T, pk *classify.Packages) {
				if pk.MavenWrapperMissing {
					t.Errorf("wrapper missing with its distribution in ~/.m2/wrapper/dists")
				}
			}},
		{name: "the versions plugin by prefix", ws: map[string]string{"pom.xml": testPOM},
			home: repo(append(slices.Clone(cached), "org.codehaus.mojo:versions-maven-plugin:2.16.2")...), plugins: []string{"versions"}, absent: []string{"dependency"}},
		{name: "no POM", ws: map[string]string{"README.md": "x"}, home: repo(), absent: []string{"compiler"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			home, ws := filepath.Join(root, "home"), filepath.Join(root, "ws")
			writeFiles(t, ws, tc.ws)
			writeFiles(t, home, tc.home)
			pk := packageFacts(classify.EcoMaven, []string{ws}, ws, home, tc.env).pk
			if pk.MavenMissing != tc.missing {
				t.Errorf("MavenMissing = %v, want %v", pk.MavenMissing, tc.missing)
			}
			for _, p := range tc.plugins {
				if !slices.Contains(pk.MavenPlugins, p) {
					t.Errorf("plugins %v lack %s", pk.MavenPlugins, p)
				}
			}
			for _, p := range tc.absent {
				if slices.Contains(pk.MavenPlugins, p) {
					t.Errorf("plugins %v hold %s", pk.MavenPlugins, p)
				}
			}
			if tc.check != nil {
				tc.check(t, pk)
			}
		})
	}
}

const testGradleKts = `plugins {
    java
    id("org.jetbrains.kotlin.jvm") version "1.9.22"
}

val guavaVersion = "33.0.0-jre"

dependencies {
    implementation(libs.kotlinx.coroutines.core)
    implementation("com.google.guava:guava:$guavaVersion")
    testImplementation(platform("org.junit:junit-bom:5.10.2"))
    testImplementation("org.junit.jupiter:junit-jupiter")
    implementation(project(":core"))
}
`

const testCatalog = `[versions]
coroutines = "1.7.3"

[libraries]
kotlinx-coroutines-core = { module = "org.jetbrains.kotlinx:kotlinx-coroutines-core", version.ref = "coroutines" }
`

// TestGradleFacts: what the gate reads of a Gradle build's declarations,
// and whether Gradle's module cache holds them.
func TestGradleFacts(t *testing.T) {
	cache := ".gradle/caches/modules-2/files-2.1/"
	cached := map[string]string{
		cache + "org.jetbrains.kotlinx/kotlinx-coroutines-core/1.7.3/abc/x.jar":                    "",
		cache + "com.google.guava/guava/33.0.0-jre/abc/x.jar":                                      "",
		cache + "org.junit/junit-bom/5.10.2/abc/x.pom":                                             "",
		cache + "org.junit.jupiter/junit-jupiter/5.10.2/abc/x.jar":                                 "",
		cache + "org.jetbrains.kotlin.jvm/org.jetbrains.kotlin.jvm.gradle.plugin/1.9.22/abc/x.pom": "",
		cache + "org.springframework.boot/org.springframework.boot.gradle.plugin/3.2.2/abc/x.pom":  "",
		".gradle/wrapper/dists/gradle-8.5-bin/5t9huq95ubn472n8rpzujfbqh/gradle-8.5/bin/gradle":     "",
	}
	base := map[string]string{"settings.gradle.kts": "rootProject.name = \"app\"\ninclude(\":core\")\n",
		"build.gradle.kts": testGradleKts, "gradle/libs.versions.toml": testCatalog, "core/build.gradle.kts": "plugins { `java-library` }\n",
		"gradle/wrapper/gradle-wrapper.properties": "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.5-bin.zip\n"}
	edit := func(path, from, to string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		out[path] = strings.Replace(out[path], from, to, 1)
		return out
	}
	for _, tc := range []struct {
		name    string
		ws      map[string]string
		missing bool
	}{
		{"cached", base, false},
		{"a module missing", edit("build.gradle.kts", "33.0.0-jre", "32.1.3-jre"), true},
		{"a version from gradle.properties", func() map[string]string {
			m := edit("build.gradle.kts", "$guavaVersion", "${guavaRelease}")
			m["gradle.properties"] = "guavaRelease=33.0.0-jre\norg.gradle.jvmargs=-Xmx2g\n"
			return m
		}(), false},
		{"a version from a variable not set", edit("build.gradle.kts", "$guavaVersion", "${rootProject.extra[\"guava\"]}"), true},
		{"a dynamic version", edit("build.gradle.kts", "$guavaVersion", "33.+"), true},
		{"a catalog alias not in the catalog", edit("build.gradle.kts", "libs.kotlinx.coroutines.core", "libs.kotlinx.serialization"), true},
		{"a plugin not cached", edit("build.gradle.kts", `version "1.9.22"`, `version "2.0.0"`), true},
		{"a Groovy map declaration", func() map[string]string {
			m := edit("build.gradle.kts", "", "")
			delete(m, "build.gradle.kts")
			m["build.gradle"] = "plugins { id 'java' }\ndependencies {\n    implementation group: 'com.google.guava', name: 'guava', version: '33.0.0-jre'\n}\n"
			return m
		}(), false},
		{"an included project's dependency missing", edit("core/build.gradle.kts", "}\n", "}\ndependencies { api(\"org.slf4j:slf4j-api:2.0.9\") }\n"), true},
		{"a declaration in a form not read", edit("build.gradle.kts", "implementation(project(\":core\"))", "deps.forEach { implementation(it) }\n    implementation(someDependency())"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			home, ws := filepath.Join(root, "home"), filepath.Join(root, "ws")
			writeFiles(t, ws, tc.ws)
			writeFiles(t, home, cached)
			pk := packageFacts(classify.EcoGradle, []string{ws}, ws, home, nil).pk
			if pk.GradleDepsMissing != tc.missing {
				t.Errorf("GradleDepsMissing = %v, want %v", pk.GradleDepsMissing, tc.missing)
			}
			if pk.GradleMissing {
				t.Errorf("the wrapper's distribution taken as missing")
			}
		})
	}
}

// FuzzBuildFacts: whatever a POM, a Gradle script or a version catalog
// holds, reading them ends, without panicking, within the bounds on the
// POMs and scripts read.
func FuzzBuildFacts(f *testing.F) {
	f.Add(testPOM, testGradleKts, testCatalog)
	f.Add(testPOM, "dependencies {\n implementation(\"g:n:1\")\n}\n", "")
	f.Add("<project><parent><relativePath>../../../</relativePath></parent><modules><module>.</module></modules></project>",
		"plugins { id(\"a.b\") version \"$v\" }\ndependencies {\n implementation(\"g:n:${x}\")\n}", "[libraries]\nx = { module = \"g:n\", version.ref = \"missing\" }\n")
	f.Add("<project><properties><a>${b}</a><b>${a}</b></properties><dependencies><dependency><groupId>${a}</groupId><artifactId>x</artifactId></dependency></dependencies></project>",
		"dependencies { api(libs.a.b) }", "[plugins]\nk = \"org.k:1\"\n")
	f.Fuzz(func(t *testing.T, pom, script, catalog string) {
		root := t.TempDir()
		home, ws := filepath.Join(root, "home"), filepath.Join(root, "ws")
		writeFiles(t, ws, map[string]string{"pom.xml": pom, "build.gradle.kts": script, "gradle/libs.versions.toml": catalog,
			"settings.gradle.kts": "include(\":sub\")\n", "sub/pom.xml": pom})
		writeFiles(t, home, map[string]string{".m2/repository/README": "", ".gradle/caches/modules-2/files-2.1/README": ""})
		pk := packageFacts(classify.EcoMaven|classify.EcoGradle, []string{ws}, ws, home, nil).pk
		// The Gradle cache is empty: a script that declares a module
		// (a coordinate string in a dependency block) lacks it.
		if strings.Contains(script, "dependencies {\n implementation(\"g:n:1\")") && !pk.GradleDepsMissing {
			t.Errorf("a script declaring g:n:1, with an empty module cache, taken as cached: %q", script)
		}
	})
}
