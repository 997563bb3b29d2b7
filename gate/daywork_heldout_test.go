package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// The held-out set (testdata/daywork/heldout.txt) holds commands agents
// ran in classes the rest of the day-of-work corpus holds few of: Maven
// and Gradle builds, xargs and find -exec feeding other programs, a
// toolchain or a virtualenv put on PATH before a build, npx and yarn of a
// project's own programs. TestDayWork leaves it out; TestDayWorkHeldOut
// judges it in a project that has what those commands use (a Maven and a
// Gradle build whose dependencies are in the local caches, the Maven and
// Gradle wrappers' distributions, node_modules/.bin, two virtualenvs,
// rustup's env file) and holds its own ratchets.
//
//	go test -run DayWorkHeldOut -v ./gate/

const dayworkHeldOutFile = "heldout.txt"

// Ratchet floors for the held-out set: the share of ordinary lines
// (percent) that run without asking, measured when the set was built.
// Raise them as fixes land; never lower them to make a change pass.
const (
	heldoutFloorFull       = 83.9
	heldoutFloorSupervised = 1.8
)

// heldoutKinds sorts held-out lines by the kind of command they were
// chosen for, for the report: the first pattern that matches.
var heldoutKinds = []struct {
	name string
	re   *regexp.Regexp
}{
	{"maven", regexp.MustCompile(`(^|[\s;&|(])(mvn|\./mvnw) `)},
	{"gradle", regexp.MustCompile(`(^|[\s;&|(])(gradle|\./gradlew) `)},
	{"virtualenv", regexp.MustCompile(`bin/activate`)},
	{"toolchain on PATH", regexp.MustCompile(`PATH=|cargo/env`)},
	{"xargs", regexp.MustCompile(`\|\s*xargs `)},
	{"find -exec", regexp.MustCompile(`-exec `)},
	{"npx, yarn, pnpm exec", regexp.MustCompile(`(^|[\s;&|(])(npx|yarn|pnpm exec) `)},
}

func heldoutKind(cmd string) string {
	for _, k := range heldoutKinds {
		if k.re.MatchString(cmd) {
			return k.name
		}
	}
	return "other"
}

// newHeldoutFixture is newDayworkFixture's user and project with what the
// held-out commands use.
func newHeldoutFixture(t *testing.T, level policy.Level) *dayworkFixture {
	t.Helper()
	f := newDayworkFixture(t, level)
	writeHeldoutProject(t, f.ws, f.home)
	return f
}

// writeHeldoutProject adds to the day-of-work project a Maven build
// (pom.xml, the Maven wrapper), a Gradle build in the Kotlin DSL with a
// version catalog (in place of the Groovy build.gradle), more of
// package.json's programs in node_modules/.bin, the virtualenvs venv and
// .venv, and, in home, what a machine that has built the project before
// holds: the Maven and Gradle caches with the build's dependencies and
// plugins, the wrappers' distributions, rustup's env file and cargo, and
// a tool installed under ~/.local/share.
func writeHeldoutProject(t *testing.T, ws, home string) {
	t.Helper()
	if err := os.Remove(filepath.Join(ws, "build.gradle")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(ws, "settings.gradle")); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"pom.xml":                                heldoutPom,
		".mvn/wrapper/maven-wrapper.properties":  "distributionUrl=https://repo.maven.apache.org/maven2/org/apache/maven/apache-maven/3.9.6/apache-maven-3.9.6-bin.zip\nwrapperVersion=3.3.2\n",
		"src/main/java/com/example/App.java":     "package com.example;\n\npublic class App {}\n",
		"src/test/java/com/example/AppTest.java": "package com.example;\n\nclass AppTest {}\n",
		"settings.gradle.kts":                    "rootProject.name = \"project\"\n",
		"build.gradle.kts":                       heldoutGradleBuild,
		"gradle/libs.versions.toml":              heldoutVersionCatalog,
		"gradle/wrapper/gradle-wrapper.properties": "distributionBase=GRADLE_USER_HOME\ndistributionPath=wrapper/dists\n" +
			"distributionUrl=https\\://services.gradle.org/distributions/gradle-8.5-bin.zip\nzipStoreBase=GRADLE_USER_HOME\nzipStorePath=wrapper/dists\n",
		"gradle/wrapper/gradle-wrapper.jar": "PK\x03\x04",
		"package.json": "{\n  \"name\": \"project\",\n  \"type\": \"module\",\n  \"scripts\": {\"test\": \"vitest run\", \"build\": \"tsc\", \"lint\": \"eslint src\", " +
			"\"typecheck\": \"tsc --noEmit\", \"test:format\": \"prettier --check .\", \"test:unit\": \"vitest run\"},\n" +
			"  \"devDependencies\": {\"typescript\": \"^5.6.0\", \"eslint\": \"^9.0.0\", \"vitest\": \"^2.1.0\", \"jest\": \"^29.7.0\", \"lerna\": \"^8.1.0\", " +
			"\"hereby\": \"^1.10.0\", \"nyc\": \"^17.1.0\", \"prettier\": \"^3.3.0\", \"check-dependency-version-consistency\": \"^4.1.0\"}\n}\n",
		"yarn.lock":                   "# yarn lockfile v1\n",
		"pnpm-lock.yaml":              "lockfileVersion: '9.0'\n",
		"Herebyfile.mjs":              "export const test = {};\n",
		".nycrc.unit.json":            "{}\n",
		"jest.config.js":              "export default {};\n",
		"setup.py":                    "from setuptools import setup\nsetup(name='project')\n",
		"runtests.py":                 "print('ok')\n",
		"scripts/transform_readme.py": "print('ok')\n",
		"tools/ci/configure_bazel_remote_cache.py": "print('ok')\n",
		"scripts/ci/install":                       "#!/usr/bin/env python\nprint('ok')\n",
		"tox.ini":                                  "[tox]\nenvlist = py3\n",
		"test-suite.log":                           "PASS\n",
		"index.html":                               "<html></html>\n",
		"src/parser.re":                            "/*!re2c*/\n",
		"venv/pyvenv.cfg":                          "home = /usr/bin\n",
		".venv/pyvenv.cfg":                         "home = /usr/bin\n",
		"obj/test/parser_test":                     "",
	}
	scripts := map[string]string{
		"mvnw":                       "#!/bin/sh\nexec java -classpath .mvn/wrapper/maven-wrapper.jar org.apache.maven.wrapper.MavenWrapperMain \"$@\"\n",
		"node_modules/.bin/vitest":   "#!/usr/bin/env node\n",
		"node_modules/.bin/jest":     "#!/usr/bin/env node\n",
		"node_modules/.bin/lerna":    "#!/usr/bin/env node\n",
		"node_modules/.bin/hereby":   "#!/usr/bin/env node\n",
		"node_modules/.bin/nyc":      "#!/usr/bin/env node\n",
		"node_modules/.bin/prettier": "#!/usr/bin/env node\n",
		"node_modules/.bin/check-dependency-version-consistency": "#!/usr/bin/env node\n",
		"node_modules/.bin/is-ascii-safe":                        "#!/usr/bin/env node\n",
		"specstory":                                              "#!/bin/sh\n",
	}
	for _, venv := range []string{"venv", ".venv"} {
		scripts[venv+"/bin/activate"] = heldoutActivate(filepath.Join(ws, venv))
		for _, p := range []string{"python", "python3", "pip", "pytest", "py.test", "tox"} {
			scripts[venv+"/bin/"+p] = "#!/bin/sh\n"
		}
	}
	homeFiles := map[string]string{
		".cargo/env": "#!/bin/sh\n# rustup shell setup\n# affix colons on either side of $PATH to simplify matching\ncase \":${PATH}:\" in\n" +
			"    *:\"$HOME/.cargo/bin\":*)\n        ;;\n    *)\n        # Prepending path in case a system-installed rustc needs to be overridden\n" +
			"        export PATH=\"$HOME/.cargo/bin:$PATH\"\n        ;;\nesac\n",
	}
	homeScripts := map[string]string{
		".cargo/bin/cargo":                       "#!/bin/sh\n",
		".cargo/bin/rustc":                       "#!/bin/sh\n",
		".local/share/deadreckon/bin/deadreckon": "#!/bin/sh\n",
		".m2/wrapper/dists/apache-maven-3.9.6-bin/3311e1d4/apache-maven-3.9.6/bin/mvn":         "#!/bin/sh\n",
		".gradle/wrapper/dists/gradle-8.5-bin/5t9huq95ubn472n8rpzujfbqh/gradle-8.5/bin/gradle": "#!/bin/sh\n",
	}
	// The local Maven repository holds what pom.xml names and the plugins
	// of the default lifecycle; Gradle's cache what build.gradle.kts names.
	for _, a := range heldoutMavenArtifacts {
		g, art, v := a[0], a[1], a[2]
		dir := filepath.Join(".m2", "repository", filepath.FromSlash(strings.ReplaceAll(g, ".", "/")), art, v)
		pom := "<project>\n  <modelVersion>4.0.0</modelVersion>\n  <groupId>" + g + "</groupId>\n  <artifactId>" + art +
			"</artifactId>\n  <version>" + v + "</version>\n</project>\n"
		if art == "junit-bom" {
			pom = heldoutJUnitBOM
		} else {
			homeFiles[filepath.Join(dir, art+"-"+v+".jar")] = "PK\x03\x04"
		}
		homeFiles[filepath.Join(dir, art+"-"+v+".pom")] = pom
	}
	for _, a := range heldoutGradleArtifacts {
		g, art, v := a[0], a[1], a[2]
		dir := filepath.Join(".gradle", "caches", "modules-2", "files-2.1", g, art, v, "0f3a2b1c")
		homeFiles[filepath.Join(dir, art+"-"+v+".jar")] = "PK\x03\x04"
		homeFiles[filepath.Join(dir, art+"-"+v+".pom")] = "<project/>\n"
	}
	write := func(root, name, content string, mode os.FileMode) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	for n, c := range files {
		write(ws, n, c, 0o644)
	}
	for n, c := range scripts {
		write(ws, n, c, 0o755)
	}
	for n, c := range homeFiles {
		write(home, n, c, 0o644)
	}
	for n, c := range homeScripts {
		write(home, n, c, 0o755)
	}
}

// heldoutActivate is the activate script virtualenv and python -m venv
// write (its bash part), for the virtualenv at dir.
func heldoutActivate(dir string) string {
	return `# This file must be used with "source bin/activate" *from bash*
# you cannot run it directly

deactivate () {
    if [ -n "${_OLD_VIRTUAL_PATH:-}" ] ; then
        PATH="${_OLD_VIRTUAL_PATH:-}"
        export PATH
        unset _OLD_VIRTUAL_PATH
    fi
    if [ -n "${_OLD_VIRTUAL_PYTHONHOME:-}" ] ; then
        PYTHONHOME="${_OLD_VIRTUAL_PYTHONHOME:-}"
        export PYTHONHOME
        unset _OLD_VIRTUAL_PYTHONHOME
    fi
    hash -r 2> /dev/null
    if [ -n "${_OLD_VIRTUAL_PS1:-}" ] ; then
        PS1="${_OLD_VIRTUAL_PS1:-}"
        export PS1
        unset _OLD_VIRTUAL_PS1
    fi
    unset VIRTUAL_ENV
    unset VIRTUAL_ENV_PROMPT
    if [ ! "${1:-}" = "nondestructive" ] ; then
        unset -f deactivate
    fi
}

# unset irrelevant variables
deactivate nondestructive

VIRTUAL_ENV="` + dir + `"
export VIRTUAL_ENV

_OLD_VIRTUAL_PATH="$PATH"
PATH="$VIRTUAL_ENV/bin:$PATH"
export PATH

if [ -n "${PYTHONHOME:-}" ] ; then
    _OLD_VIRTUAL_PYTHONHOME="${PYTHONHOME:-}"
    unset PYTHONHOME
fi

if [ -z "${VIRTUAL_ENV_DISABLE_PROMPT:-}" ] ; then
    _OLD_VIRTUAL_PS1="${PS1:-}"
    PS1="(` + filepath.Base(dir) + `) ${PS1:-}"
    export PS1
    VIRTUAL_ENV_PROMPT="(` + filepath.Base(dir) + `) "
    export VIRTUAL_ENV_PROMPT
fi

hash -r 2> /dev/null
`
}

const heldoutPom = `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>project</artifactId>
  <version>0.1.0-SNAPSHOT</version>
  <packaging>jar</packaging>

  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
    <junit.version>5.10.2</junit.version>
  </properties>

  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>org.junit</groupId>
        <artifactId>junit-bom</artifactId>
        <version>${junit.version}</version>
        <type>pom</type>
        <scope>import</scope>
      </dependency>
    </dependencies>
  </dependencyManagement>

  <dependencies>
    <dependency>
      <groupId>com.google.guava</groupId>
      <artifactId>guava</artifactId>
      <version>33.0.0-jre</version>
    </dependency>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>
      <scope>test</scope>
    </dependency>
  </dependencies>

  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.12.1</version>
      </plugin>
      <plugin>
        <artifactId>maven-surefire-plugin</artifactId>
        <version>3.2.5</version>
      </plugin>
    </plugins>
  </build>
</project>
`

const heldoutGradleBuild = `plugins {
    java
    alias(libs.plugins.kotlin.jvm)
}

repositories {
    mavenCentral()
}

dependencies {
    implementation(libs.kotlinx.coroutines.core)
    implementation("com.google.guava:guava:33.0.0-jre")
    testImplementation(libs.junit.jupiter)
    testRuntimeOnly("org.junit.platform:junit-platform-launcher:1.10.2")
}

tasks.test {
    useJUnitPlatform()
}
`

const heldoutVersionCatalog = `[versions]
kotlin = "1.9.22"
coroutines = "1.7.3"
junit = "5.10.2"

[libraries]
kotlinx-coroutines-core = { module = "org.jetbrains.kotlinx:kotlinx-coroutines-core", version.ref = "coroutines" }
junit-jupiter = { group = "org.junit.jupiter", name = "junit-jupiter", version.ref = "junit" }

[plugins]
kotlin-jvm = { id = "org.jetbrains.kotlin.jvm", version.ref = "kotlin" }
`

// heldoutJUnitBOM is JUnit's bill of materials, which pom.xml imports.
const heldoutJUnitBOM = `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.junit</groupId>
  <artifactId>junit-bom</artifactId>
  <version>5.10.2</version>
  <packaging>pom</packaging>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>org.junit.jupiter</groupId>
        <artifactId>junit-jupiter</artifactId>
        <version>5.10.2</version>
      </dependency>
      <dependency>
        <groupId>org.junit.platform</groupId>
        <artifactId>junit-platform-launcher</artifactId>
        <version>1.10.2</version>
      </dependency>
    </dependencies>
  </dependencyManagement>
</project>
`

// heldoutMavenArtifacts are the local repository's artifacts: what
// pom.xml declares, and the plugins of the lifecycle phases and of the
// goals the held-out commands run (group, artifact, version).
var heldoutMavenArtifacts = [][3]string{
	{"com.google.guava", "guava", "33.0.0-jre"},
	{"org.junit", "junit-bom", "5.10.2"},
	{"org.junit.jupiter", "junit-jupiter", "5.10.2"},
	{"org.apache.maven.plugins", "maven-compiler-plugin", "3.12.1"},
	{"org.apache.maven.plugins", "maven-surefire-plugin", "3.2.5"},
	{"org.apache.maven.plugins", "maven-clean-plugin", "3.2.0"},
	{"org.apache.maven.plugins", "maven-resources-plugin", "3.3.1"},
	{"org.apache.maven.plugins", "maven-jar-plugin", "3.3.0"},
	{"org.apache.maven.plugins", "maven-install-plugin", "3.1.1"},
	{"org.apache.maven.plugins", "maven-deploy-plugin", "3.1.1"},
	{"org.codehaus.mojo", "versions-maven-plugin", "2.16.2"},
}

// heldoutGradleArtifacts are Gradle's module cache (group, module,
// version): what build.gradle.kts and the version catalog declare, with
// the Kotlin plugin's marker.
var heldoutGradleArtifacts = [][3]string{
	{"org.jetbrains.kotlinx", "kotlinx-coroutines-core", "1.7.3"},
	{"com.google.guava", "guava", "33.0.0-jre"},
	{"org.junit.jupiter", "junit-jupiter", "5.10.2"},
	{"org.junit.platform", "junit-platform-launcher", "1.10.2"},
	{"org.jetbrains.kotlin.jvm", "org.jetbrains.kotlin.jvm.gradle.plugin", "1.9.22"},
	{"org.jetbrains.kotlin", "kotlin-gradle-plugin", "1.9.22"},
}

// TestDayWorkHeldOut measures the held-out set at full and supervised,
// prints the tables and, by kind of command, what still asks, and holds
// its ratchets: nothing ordinary is denied by the guard at full, and the
// share of ordinary work that runs without asking never drops.
func TestDayWorkHeldOut(t *testing.T) {
	lines := loadDayworkFile(t, filepath.Join("..", "testdata", "daywork", dayworkHeldOutFile))
	if len(lines) < 80 {
		t.Errorf("the held-out set has %d lines, want at least 80", len(lines))
	}
	var results []dayworkResult
	for _, level := range []policy.Level{policy.Full, policy.Supervised} {
		results = append(results, measureDayworkIn(t, newHeldoutFixture(t, level), lines, level))
	}
	report := "Held-out set. " + dayworkReport(lines, results) + heldoutByKind(lines, results)
	for _, s := range strings.Split(strings.TrimRight(report, "\n"), "\n") {
		t.Log(s)
	}
	appendDayworkReport(t, "\n"+report)
	if testing.Verbose() {
		for _, r := range results {
			t.Logf("ordinary held-out lines that do not run at %s:", r.level)
			for _, m := range r.notAllowed {
				t.Logf("  %s: %s: %q\n      %s", m.line, m.d.Outcome, m.line.cmd, describe(m.d))
			}
			t.Logf("held-out lines marked as needing a person that run without asking at %s:", r.level)
			for _, l := range r.markedAllowed {
				t.Logf("  %s (%s): %q", l, l.class, l.cmd)
			}
		}
	}
	for _, r := range results {
		if r.level == policy.Full {
			for _, m := range r.guardDenied {
				t.Errorf("%s: ordinary work denied by the guard at full: %q: %s", m.line, m.line.cmd, describe(m.d))
			}
		}
		o := r.byClass[dayworkOrdinary]
		got := pct(o.allow, o.total())
		floor := heldoutFloorSupervised
		if r.level == policy.Full {
			floor = heldoutFloorFull
		}
		if got < floor {
			t.Errorf("held-out set at %s: %.1f %% of ordinary work runs without asking (%d/%d); the floor is %.1f %%",
				r.level, got, o.allow, o.total(), floor)
		} else if got >= floor+0.5 {
			t.Logf("held-out set at %s: %.1f %% of ordinary work runs without asking: raise its floor (%.1f) to %.1f", r.level, got, floor, float64(int(got*10))/10)
		}
	}
}

// heldoutByKind renders, per kind of command, how many ordinary lines run
// without asking at each level.
func heldoutByKind(lines []dayworkLine, results []dayworkResult) string {
	var b strings.Builder
	b.WriteString("\nOrdinary held-out lines by kind of command, run without asking / lines:\n\n| kind |")
	for _, r := range results {
		fmt.Fprintf(&b, " %s |", r.level)
	}
	b.WriteString("\n|---|")
	for range results {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	total := map[string]int{}
	for _, l := range lines {
		if l.class == dayworkOrdinary {
			total[heldoutKind(l.cmd)]++
		}
	}
	var kinds []string
	for k := range total {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(&b, "| %s |", k)
		for _, r := range results {
			asks := 0
			for _, m := range r.notAllowed {
				if heldoutKind(m.line.cmd) == k {
					asks++
				}
			}
			fmt.Fprintf(&b, " %d/%d |", total[k]-asks, total[k])
		}
		b.WriteString("\n")
	}
	return b.String()
}
