package classify

import (
	"slices"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// netOf classifies every command of src, in /w, with the package facts
// pk, and returns the hosts of their network:http accesses ("?" for one
// not known before it runs) and whether any runs code.
func netOf(t *testing.T, src string, pk *Packages) (hosts []string, exec bool) {
	t.Helper()
	s, err := shellparse.ParseScript(src, shellparse.Env{Home: "/home/u", Cwd: "/w"})
	if err != nil || len(s.Commands) == 0 {
		t.Fatalf("%s: %v", src, err)
	}
	pl := PlaceOf(s, "/w", "/home/u")
	pl.Packages = pk
	for _, c := range s.Commands {
		cl := Classify(c, pl)
		for _, a := range cl.Accesses {
			switch {
			case a.Capability == CodeExec:
				exec = true
			case a.Capability != NetworkHTTP:
			case a.Dynamic || a.Target == "":
				hosts = append(hosts, "?")
			default:
				hosts = append(hosts, a.Target)
			}
		}
	}
	return hosts, exec
}

// TestFetchSecurityNetworkNeverMissed: an install or fetch of a known
// package manager is network:http, whatever the facts the gate read say
// and however it is written (wrappers, python -m pip, a wrapper script of
// the project), and it still runs code: the contained-work rule, which
// allows only what runs with no network, never takes it, and its card
// says it reaches the network. Losing one of these is a security bug:
// an approval would not say what it lets through, and a hook deciding
// for a command run outside the sandbox would miss the network.
func TestFetchSecurityNetworkNeverMissed(t *testing.T) {
	facts := []*Packages{nil, {}, {GoVendor: true, NodeBins: []string{"cowsay", "tsc"}}}
	for _, src := range []string{
		"npm install", "npm i lodash", "npm ci", "npm isntall", "npm add left-pad", "npm update", "npm --prefix sub install",
		"npm install --offline=false", "npm exec -p cowsay cowsay hi", "npm init vite@latest", "npm audit", "npm publish",
		"pnpm install", "pnpm add react", "pnpm dlx create-vite", "yarn", "yarn install", "yarn add react", "yarn dlx cowsay",
		"bun install", "bun add zod", "bun i", "npx cowsay@1.5 hi", "bunx cowsay@latest hi", "npx -p cowsay cowsay",
		"pip install requests", "pip3 install -r requirements.txt", "python3 -m pip install x", "python -m pip install -e .",
		"pip install -e .[dev]", "pip download x", "pip wheel .", "pip list --outdated",
		"uv sync", "uv add httpx", "uv lock", "uv pip install x", "uvx ruff", "uv tool install ruff", "uv python install 3.12",
		"poetry install", "poetry add x", "poetry lock", "pdm install", "pdm sync", "pipx install black", "pipx run cowsay",
		"cargo fetch", "cargo add serde", "cargo install ripgrep", "cargo update", "cargo +nightly fetch", "cargo vendor",
		"rustup update", "rustup component add clippy", "rustup toolchain install nightly",
		"gem install rails", "gem update", "bundle", "bundle install", "bundle update", "bundle add x",
		"mvn dependency:go-offline", "mvn -U package", "mvn --update-snapshots verify", "mvn deploy", "mvn -B deploy -DskipTests",
		"mvn versions:display-dependency-updates", "./mvnw dependency:resolve", "mvn archetype:generate", "mvn release:prepare",
		"mvn org.apache.maven.plugins:maven-dependency-plugin:3.6.1:go-offline",
		"gradle build --refresh-dependencies", "./gradlew dependencies", "./gradlew clean build --refresh-dependencies",
		"go get golang.org/x/tools", "go get -u ./...", "go mod download", "go mod tidy", "go install golang.org/x/tools/gopls@latest",
		"go run golang.org/x/tools/cmd/stringer@v0.20.0 -type X", "go list -m -u all", "go -C sub mod download",
		"git fetch", "git pull", "git push", "git push origin main", "git clone https://github.com/a/b", "git ls-remote origin",
		"git fetch --all", "git remote update", "git submodule update --init", "git -C other pull",
		"timeout 60 npm install", "env FOO=1 npm install", "sudo npm install -g x", "nice -n 5 cargo fetch",
		"npm install && npm test", "cd sub && yarn install", "bash -c 'pip install x'", "GOFLAGS=-mod=mod go get x",
	} {
		for i, pk := range facts {
			hosts, exec := netOf(t, src, pk)
			if len(hosts) == 0 {
				t.Errorf("facts %d: %s: no network:http access", i, src)
			}
			if !exec && !strings.HasPrefix(src, "git ") {
				t.Errorf("facts %d: %s: no code:exec (installs run code)", i, src)
			}
		}
	}
}

// mavenLifecycle are the plugins of a jar's default and clean lifecycles.
var mavenLifecycle = []string{"clean", "resources", "compiler", "surefire", "jar", "install"}

// TestFetchSecurityBuildWithMissingModules: a build whose dependencies the
// cache lacks fetches them, so it is network:http, under any spelling
// the go and cargo commands accept.
func TestFetchSecurityBuildWithMissingModules(t *testing.T) {
	missing := &Packages{GoMissing: true, CargoMissing: true, GradleMissing: true, MavenMissing: true, MavenWrapperMissing: true,
		MavenPlugins: mavenLifecycle}
	for _, src := range []string{
		"go build ./...", "go test ./...", "go vet ./...", "go run .", "go test -run X -count=1 ./pkg/...", "go list -m all",
		"go mod vendor", "go generate ./...", "go build -mod=mod ./...", "go build -mod=readonly .", "GOFLAGS=-mod=mod go test ./...",
		"cargo build", "cargo b --release", "cargo test", "cargo check", "cargo clippy", "cargo run --bin x", "cargo build --locked",
		"./gradlew build", "./gradlew test --tests X",
		"mvn package", "mvn -q verify", "./mvnw verify", "mvn clean install -DskipTests", "mvn -T 4C clean test -e -B",
		"mvn test -Dtest=AppTest", "./mvnw -pl core -am test", "mvn -f pom.xml compile", "mvn spring-boot:run",
	} {
		if hosts, _ := netOf(t, src, missing); len(hosts) == 0 {
			t.Errorf("%s with modules missing: no network:http access", src)
		}
	}
	// A Maven build whose POMs are cached fetches still what runs a
	// plugin the repository lacks, reads another POM or another local
	// repository than the facts describe, or fetches Maven itself.
	cached := &Packages{MavenPlugins: mavenLifecycle}
	for _, tc := range []struct {
		src string
		pk  *Packages
	}{
		{"mvn package", &Packages{MavenPlugins: []string{"resources", "compiler", "surefire"}}},
		{"mvn clean test", &Packages{MavenPlugins: []string{"resources", "compiler", "surefire"}}},
		{"mvn package", &Packages{MavenPlugins: []string{"resources", "compiler", "surefire", "jar"}, MavenPackagings: []string{"war"}}},
		{"mvn versions:set -DnewVersion=2", cached},
		{"mvn spring-boot:run", cached},
		{"mvn -f other/pom.xml test", cached},
		{"mvn --file=$POM test", cached},
		{"mvn -D$PROP=/srv/repo test", cached},
		{"mvn -Dmaven.repo.local=/srv/repo test", cached},
		{"mvn $GOAL", cached},
		{"mvn integration-tests", cached},
		{"./mvnw test", &Packages{MavenPlugins: mavenLifecycle, MavenWrapperMissing: true, MavenWrapperDist: "https://repo.maven.apache.org/maven2/x.zip"}},
		{"./mvnw -v", &Packages{MavenWrapperMissing: true}},
		{"mvn test", &Packages{}},
		{"./mvnw -o test", &Packages{MavenPlugins: mavenLifecycle, MavenWrapperMissing: true}},
		{"gradle build", &Packages{GradleDepsMissing: true}},
		{"./gradlew test --tests X", &Packages{GradleDepsMissing: true}},
	} {
		if hosts, _ := netOf(t, tc.src, tc.pk); len(hosts) == 0 {
			t.Errorf("%s (facts %+v): no network:http access", tc.src, tc.pk)
		}
	}
	// And vendoring beats a missing cache only when the build reads the
	// vendor directory.
	if hosts, _ := netOf(t, "go build -mod=mod ./...", &Packages{GoMissing: true, GoVendor: true}); len(hosts) == 0 {
		t.Errorf("go build -mod=mod in a vendored module with modules missing: no network")
	}
}

// TestFetchNone: what fetches nothing stays without network:http, so
// ordinary work is contained: builds whose dependencies are in the
// cache (or not known to be missing), offline flags, the commands that
// run the project's scripts, asking a program its version.
func TestFetchNone(t *testing.T) {
	cached := &Packages{}
	for _, tc := range []struct {
		src string
		pk  *Packages
	}{
		{"go build ./...", nil}, {"go build ./...", cached}, {"go test ./...", cached}, {"go vet ./...", cached},
		{"go run .", cached}, {"go run ./cmd/x -email a@b.example", cached}, {"go version", nil}, {"go env GOPATH", nil},
		{"go fmt ./...", nil}, {"go mod init x", nil}, {"go mod edit -require x@v1", nil}, {"go test -h", nil},
		{"go build -mod=vendor ./...", &Packages{GoMissing: true}}, {"GOFLAGS=-mod=vendor go test ./...", &Packages{GoMissing: true}},
		{"go build ./...", &Packages{GoMissing: true, GoVendor: true}}, {"go test ./...", &Packages{GoMissing: true, GoFlags: "-mod=vendor"}},
		{"GOPROXY=off go get x", nil}, {"go build", &Packages{GoMissing: true, GoProxy: "off"}},
		{"npm test", nil}, {"npm run build", nil}, {"npm run lint -- --fix", nil}, {"npm --version", nil}, {"npm ci --offline", nil},
		{"npm install --offline", nil}, {"npm_config_offline=true npm install", nil}, {"npm pack", nil}, {"npm init -y", nil},
		{"npx tsc --noEmit", &Packages{NodeBins: []string{"tsc"}}}, {"npx --no-install eslint .", nil}, {"npx -c 'eslint .'", nil},
		{"bunx tsc", &Packages{NodeBins: []string{"tsc"}}}, {"bun test", nil}, {"bun run build", nil}, {"yarn test", nil},
		{"yarn --version", nil}, {"pnpm exec tsc", nil}, {"pnpm run build", nil}, {"pnpm --offline install", nil},
		{"pip --version", nil}, {"pip list", nil}, {"pip freeze", nil}, {"pip show x", nil}, {"pip install --no-index -f wheels x", nil},
		{"PIP_NO_INDEX=1 pip install x", nil}, {"pip install x", &Packages{PipOffline: true}}, {"python3 -m pip list", nil},
		{"python3 -m pytest", nil}, {"uv run pytest", nil}, {"uv sync --offline", nil}, {"UV_OFFLINE=1 uv sync", nil},
		{"poetry run pytest", nil}, {"pdm run test", nil},
		{"cargo build", nil}, {"cargo build", cached}, {"cargo test", cached}, {"cargo fetch --offline", nil}, {"cargo build --frozen", &Packages{CargoMissing: true}},
		{"cargo build --offline", &Packages{CargoMissing: true}}, {"CARGO_NET_OFFLINE=true cargo fetch", nil},
		{"cargo build", &Packages{CargoMissing: true, CargoOffline: true}}, {"cargo --version", nil}, {"cargo fmt", nil},
		{"gem list", nil}, {"gem install --local x.gem", nil}, {"bundle exec rspec", nil}, {"bundle install --local", nil},
		{"mvn -o package", nil}, {"mvn --offline verify", nil}, {"mvn -v", nil}, {"mvn --version", nil},
		{"mvn package", nil}, {"mvn package", &Packages{MavenPlugins: mavenLifecycle}}, {"mvn -T 4C clean test -e -B", &Packages{MavenPlugins: mavenLifecycle}},
		{"./mvnw clean install -DskipTests", &Packages{MavenPlugins: mavenLifecycle}}, {"mvn -q -f pom.xml verify", &Packages{MavenPlugins: mavenLifecycle}},
		{"mvn versions:set-property -Dproperty=x -DnewVersion=17", &Packages{MavenPlugins: []string{"versions"}}},
		{"mvn package", &Packages{MavenPlugins: []string{"resources", "compiler", "surefire", "war"}, MavenPackagings: []string{"war"}}},
		{"mvn install", &Packages{MavenPlugins: []string{"install"}, MavenPackagings: []string{"pom"}}},
		{"mvn package", &Packages{MavenMissing: true, MavenOffline: true}}, {"mvn validate", &Packages{}},
		{"./mvnw test -T1C -B -ntp -fae -DskipEnforcer=true -Dlicense.skip=true", &Packages{MavenPlugins: mavenLifecycle}},
		{"mvn --errors -Dtest=* test", &Packages{MavenPlugins: mavenLifecycle}}, {"mvn -ff -nsu -amd test", &Packages{MavenPlugins: mavenLifecycle}},
		{"./gradlew --offline test", &Packages{GradleDepsMissing: true}}, {"./gradlew tasks", &Packages{GradleDepsMissing: true}},
		{"gradle build", nil}, {"./gradlew build", cached}, {"./gradlew test", nil}, {"gradle --offline build --refresh-dependencies", nil},
		{"./gradlew --offline build", &Packages{GradleMissing: true}},
		{"git status", nil}, {"git commit -m x", nil}, {"git log", nil}, {"git remote -v", nil}, {"git remote add o https://x.example/r", nil},
	} {
		if hosts, _ := netOf(t, tc.src, tc.pk); len(hosts) > 0 {
			t.Errorf("%s (facts %+v): network:http %v, want none", tc.src, tc.pk, hosts)
		}
	}
}

// TestFetchHosts: the registries named are the configured ones, from the
// command line, the command's own environment words, then what the gate
// read.
func TestFetchHosts(t *testing.T) {
	remotes := &Packages{GitRemotes: map[string][]string{"origin": {"git@github.com:o/r.git"}, "up": {"https://gitlab.example/o/r.git", "ssh://push.example:2222/r"}},
		GitUpstream: "up", GitSubmodules: []string{"https://sub.example/s.git"}}
	for _, tc := range []struct {
		src  string
		pk   *Packages
		want []string
	}{
		{"npm install", nil, []string{"registry.npmjs.org"}},
		{"npm install", &Packages{NPM: []string{"https://npm.corp.example:8443/repo/", "https://scoped.example/"}}, []string{"npm.corp.example", "scoped.example"}},
		{"npm install --registry https://flag.example/", &Packages{NPM: []string{"https://npm.corp.example/"}}, []string{"flag.example"}},
		{"npm_config_registry=https://env.example/ npm ci", nil, []string{"env.example"}},
		{"NPM_CONFIG_REGISTRY=https://env.example/ npm ci", nil, []string{"env.example"}},
		{"npm install github:o/r", nil, []string{"registry.npmjs.org", "github.com", "codeload.github.com"}},
		{"npm install https://tar.example/x.tgz", nil, []string{"registry.npmjs.org", "tar.example"}},
		{"npm install $PKG", nil, []string{"registry.npmjs.org", "?"}},
		{"yarn", nil, []string{"registry.yarnpkg.com"}},
		{"yarn add x", &Packages{Yarn: []string{"https://y.example/"}}, []string{"y.example"}},
		{"bun install", &Packages{Bun: []string{"https://b.example/"}}, []string{"b.example"}},
		{"npx cowsay", nil, []string{"registry.npmjs.org"}},
		{"pip install x", nil, []string{"pypi.org", "files.pythonhosted.org"}},
		{"pip install x", &Packages{PipIndex: "https://pypi.corp.example/simple", PipExtra: []string{"https://extra.example/simple"}}, []string{"pypi.corp.example", "extra.example"}},
		{"pip install -i https://flag.example/simple x", &Packages{PipIndex: "https://pypi.corp.example/simple"}, []string{"flag.example"}},
		{"PIP_INDEX_URL=https://env.example/simple pip install x", nil, []string{"env.example"}},
		{"pip install git+https://github.com/o/r", nil, []string{"pypi.org", "files.pythonhosted.org", "github.com"}},
		{"uv sync", &Packages{UVIndex: "https://uv.example/simple"}, []string{"uv.example"}},
		{"uv add x --index corp=https://corp.example/simple", nil, []string{"pypi.org", "files.pythonhosted.org", "corp.example"}},
		{"cargo fetch", nil, []string{"index.crates.io", "static.crates.io", "crates.io"}},
		{"cargo build", &Packages{CargoMissing: true, CargoMirror: true, Cargo: []string{"sparse+https://mirror.example/index/"}}, []string{"mirror.example"}},
		{"cargo build", &Packages{CargoMissing: true, Cargo: []string{"https://github.com/o/dep"}}, []string{"github.com", "index.crates.io", "static.crates.io", "crates.io"}},
		{"gem install rails", nil, []string{"rubygems.org", "index.rubygems.org"}},
		{"bundle install", &Packages{Gem: []string{"https://gems.example"}}, []string{"gems.example"}},
		{"mvn package", &Packages{Maven: []string{"https://nexus.example/repository/maven-public/"}, MavenMirrorsAll: true}, []string{"nexus.example"}},
		{"mvn package", &Packages{Maven: []string{"https://nexus.example/repository/snapshots/"}, MavenRepos: []string{"https://repo.spring.io/milestone"}},
			[]string{"nexus.example", "repo.maven.apache.org", "repo.spring.io"}},
		{"mvn test", &Packages{MavenMissing: true, MavenRepos: []string{"https://jitpack.io"}}, []string{"repo.maven.apache.org", "jitpack.io"}},
		{"./mvnw -q test", &Packages{MavenPlugins: mavenLifecycle, MavenWrapperMissing: true,
			MavenWrapperDist: "https://repo.maven.apache.org/maven2/org/apache/maven/apache-maven/3.9.6/apache-maven-3.9.6-bin.zip"}, []string{"repo.maven.apache.org"}},
		{"mvn deploy", &Packages{MavenPlugins: mavenLifecycle}, []string{"repo.maven.apache.org", "?"}},
		{"./mvnw validate", &Packages{Maven: []string{"https://nexus.example/maven/"}, MavenMirrorsAll: true, MavenWrapperMissing: true,
			MavenWrapperDist: "https://dist.example/apache-maven-3.9.6-bin.zip"}, []string{"dist.example"}},
		{"./mvnw test", &Packages{Maven: []string{"https://nexus.example/maven/"}, MavenMirrorsAll: true, MavenWrapperMissing: true,
			MavenWrapperDist: "https://dist.example/apache-maven-3.9.6-bin.zip"}, []string{"dist.example", "nexus.example"}},
		{"mvn -s ci-settings.xml test", &Packages{MavenMissing: true}, []string{"repo.maven.apache.org", "?"}},
		{"./gradlew build", &Packages{GradleMissing: true, GradleDist: "https://services.gradle.org/distributions/gradle-8.5-bin.zip"}, []string{"services.gradle.org", "plugins.gradle.org", "repo.maven.apache.org"}},
		{"go get x", nil, []string{"proxy.golang.org", "sum.golang.org"}},
		{"go mod download", &Packages{GoProxy: "https://goproxy.example,direct", GoSumDB: "off"}, []string{"goproxy.example"}},
		{"GOPROXY=goproxy.example go mod download", nil, []string{"goproxy.example", "sum.golang.org"}},
		{"GOPROXY=direct go get github.com/o/r@v1.0.0", nil, []string{"?", "github.com", "sum.golang.org"}},
		{"go build ./...", &Packages{GoMissing: true}, []string{"proxy.golang.org", "sum.golang.org"}},
		{"git push", remotes, []string{"gitlab.example", "push.example"}},
		{"git push origin main", remotes, []string{"github.com"}},
		{"git pull https://other.example/r.git", remotes, []string{"other.example"}},
		{"git fetch --all", remotes, nil}, // every remote: checked below
		{"git push", nil, []string{"?"}},
		{"git push origin", nil, []string{"?"}},
		{"git -C elsewhere push origin", remotes, []string{"?"}},
		{"git submodule update --init", remotes, []string{"sub.example"}},
		{"git submodule foreach git pull", remotes, []string{"?", "gitlab.example", "push.example"}}, // the git pull it runs too
		{"git clone git@github.com:o/r.git", nil, []string{"github.com"}},
		{"git remote update", remotes, nil},
	} {
		got, _ := netOf(t, tc.src, tc.pk)
		want := tc.want
		if want == nil {
			want = []string{"github.com", "gitlab.example", "push.example"}
		}
		slices.Sort(got)
		got = slices.Compact(got)
		want = slices.Clone(want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: hosts %v, want %v", tc.src, got, want)
		}
	}
}

// TestFetchPorts: the ports a fetch's sandbox may connect to; none known
// when a host is not.
func TestFetchPorts(t *testing.T) {
	remotes := &Packages{GitRemotes: map[string][]string{"origin": {"ssh://git.example:2222/r"}}}
	for _, tc := range []struct {
		src  string
		pk   *Packages
		want []uint16 // nil: not ok
	}{
		{"npm install", nil, []uint16{443, 80}},
		{"npm install", &Packages{NPM: []string{"http://127.0.0.1:4873/"}}, []uint16{4873}},
		{"go mod download", nil, []uint16{443, 80}},
		{"git push origin", remotes, []uint16{443, 80, 22, 2222}},
		{"git push", nil, nil},
		{"npm install $X", nil, nil},
		{"go build", nil, nil},
		{"curl https://example.com", nil, nil},
	} {
		s, err := shellparse.ParseScript(tc.src, shellparse.Env{Home: "/home/u", Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		pl := PlaceOf(s, "/w", "/home/u")
		pl.Packages = tc.pk
		_, ports, ok := Fetch(s.Commands[0], pl)
		if ok != (tc.want != nil) || !slices.Equal(ports, tc.want) {
			t.Errorf("%s: ports %v ok %v, want %v", tc.src, ports, ok, tc.want)
		}
	}
}

// TestPackageNeeds: the gate reads configuration only for a command that
// may fetch, and only its package manager's.
func TestPackageNeeds(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want Ecosystems
	}{
		{"ls && git status && npm test && go version && cargo fmt", 0},
		{"echo hi", 0},
		{"go build ./...", EcoGo},
		{"npm install", EcoNPM | EcoNodeBins},
		{"npx tsc", EcoNPM | EcoNodeBins},
		{"yarn add x", EcoYarn | EcoNPM},
		{"pip install x", EcoPip},
		{"python3 -m pip install x", EcoPip},
		{"cargo test", EcoCargo},
		{"./gradlew build", EcoGradle},
		{"mvn package", EcoMaven},
		{"bundle install", EcoGem},
		{"git push && go test ./...", EcoGit | EcoGo},
	} {
		s, err := shellparse.ParseScript(tc.src, shellparse.Env{Home: "/home/u", Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		if got := PackageNeeds(s.Commands); got != tc.want {
			t.Errorf("%s: needs %b, want %b", tc.src, got, tc.want)
		}
	}
}

// TestFetchStep: the fetch step the hint names after a build failed in a
// sandbox without network.
func TestFetchStep(t *testing.T) {
	for src, want := range map[string]string{
		"go build ./...": "go mod download", "go test -run X ./...": "go mod download", "go vet ./...": "go mod download",
		"go mod vendor": "go mod download", "go mod init x": "", "go version": "",
		"cargo test": "cargo fetch", "cargo +nightly build": "cargo fetch", "cargo fmt": "",
		"npm test": "npm install", "npm run build": "npm install", "bun test": "bun install", "yarn build": "yarn install",
		"./gradlew build": "./gradlew build --refresh-dependencies", "./gradlew --offline build": "",
		"uv run pytest": "uv sync", "poetry run pytest": "poetry install", "bundle exec rspec": "bundle install",
		"make": "", "ls": "",
	} {
		s, err := shellparse.ParseScript(src, shellparse.Env{Home: "/home/u", Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		if got := FetchStep(s.Commands[0]); got != want {
			t.Errorf("FetchStep(%s) = %q, want %q", src, got, want)
		}
	}
}

// TestURLHostPort reads registry and remote URLs in their many forms.
func TestURLHostPort(t *testing.T) {
	for _, tc := range []struct {
		in   string
		host string
		port uint16
		ok   bool
	}{
		{"https://registry.npmjs.org/", "registry.npmjs.org", 443, true},
		{"http://127.0.0.1:4873", "127.0.0.1", 4873, true},
		{"sparse+https://index.crates.io/", "index.crates.io", 443, true},
		{"registry+https://github.com/rust-lang/crates.io-index", "github.com", 443, true},
		{"git+ssh://git@github.com/o/r.git", "github.com", 22, true},
		{"git@GitHub.com:o/r.git", "github.com", 22, true},
		{"ssh://h.example:2222/r", "h.example", 2222, true},
		{"git://h.example/r", "h.example", 9418, true},
		{"proxy.example/go", "proxy.example", 443, true},
		{"/srv/git/r.git", "", 0, true},
		{"../r.git", "", 0, true},
		{"file:///srv/r", "", 0, true},
		{"origin", "", 0, false},
		{"$URL", "", 0, false},
		{"ext::sh -c touch% /tmp/x", "", 0, false},
		{"fd::17", "", 0, false},
		{"https://h.example:0/", "", 0, false},
		{"https://h.example:99999/", "", 0, false},
		{"ftp://h.example/", "", 0, false},
	} {
		h, p, ok := urlHostPort(tc.in)
		if h != tc.host || p != tc.port || ok != tc.ok {
			t.Errorf("urlHostPort(%q) = %q %d %v, want %q %d %v", tc.in, h, p, ok, tc.host, tc.port, tc.ok)
		}
	}
}

// FuzzFetch: whatever the words and facts, a fetch's classification does
// not panic, and Fetch reports ports only with hosts.
func FuzzFetch(f *testing.F) {
	for _, s := range []string{"npm install x", "go get x@v1", "git push origin main", "pip install -i http://h:1/ x",
		"GOPROXY=a,b|direct go mod download", "cargo --config net.offline=true fetch", "npx -p a -c b", "yarn"} {
		f.Add(s, "https://r.example:8443/")
	}
	f.Fuzz(func(t *testing.T, src, registry string) {
		s, err := shellparse.ParseScript(src, shellparse.Env{Home: "/home/u", Cwd: "/w"})
		if err != nil {
			return
		}
		pl := PlaceOf(s, "/w", "/home/u")
		pl.Packages = &Packages{NPM: []string{registry}, PipIndex: registry, GoProxy: registry, Gem: []string{registry},
			GitRemotes: map[string][]string{"origin": {registry}}, GoMissing: true, CargoMissing: true}
		for _, c := range s.Commands {
			Classify(c, pl)
			hosts, ports, ok := Fetch(c, pl)
			if ok && (len(hosts) == 0 || len(ports) == 0) {
				t.Fatalf("%q: Fetch ok with hosts %v ports %v", src, hosts, ports)
			}
			FetchStep(c)
		}
	})
}
