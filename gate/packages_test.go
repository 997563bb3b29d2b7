package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
)

// writeFiles writes each path (relative to root) with its content.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPackageFactsRead: what the gate reads of each package manager's
// configuration and caches, from the files those read.
func TestPackageFactsRead(t *testing.T) {
	root := t.TempDir()
	home, ws := filepath.Join(root, "home"), filepath.Join(root, "ws")
	mod := filepath.Join(home, "go", "pkg", "mod")
	writeFiles(t, root, map[string]string{
		"ws/.git/HEAD":              "ref: refs/heads/main\n",
		"ws/.git/config":            "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:o/r.git\n[remote \"up\"]\n\turl = https://gitlab.example/o/r\n\tpushurl = ssh://push.example:2222/r\n[branch \"main\"]\n\tremote = up\n",
		"ws/.gitmodules":            "[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib.git\n[submodule \"x\"]\n\turl = https://sub.example/x.git\n",
		"ws/go.mod":                 "module example.com/m\n\ngo 1.22\n\nrequire (\n\tgithub.com/Foo/bar v1.2.3\n\tgolang.org/x/text v0.14.0 // indirect\n\texample.com/local v0.0.0\n)\n\nreplace example.com/local => ./local\n",
		"ws/.npmrc":                 "registry=https://project.example/npm/\n@corp:registry=https://corp.example/\n//project.example/npm/:_authToken=SECRET-NPM-TOKEN\n",
		"home/.npmrc":               "registry=https://user.example/\n//user.example/:_authToken=SECRET-USER-TOKEN\n",
		"home/.config/pip/pip.conf": "[global]\nindex-url = https://pip.example/simple\nextra-index-url =\n    https://a.example/simple\n    https://b.example/simple\n",
		"home/.config/go/env":       "GOPROXY=https://goenv.example\n",
		"home/.m2/settings.xml":     "<settings><mirrors><mirror><id>m</id><url>https://nexus.example/repo/</url></mirror></mirrors></settings>",
		"ws/Gemfile":                "source \"https://gems.example\"\ngem 'rails'\n",
		"ws/Cargo.lock":             "version = 3\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n[[package]]\nname = \"m\"\nversion = \"0.1.0\"\n",
		"ws/gradle/wrapper/gradle-wrapper.properties": "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.5-bin.zip\n",
		"ws/node_modules/.bin/tsc":                    "",
	})
	all := classify.EcoGo | classify.EcoNPM | classify.EcoYarn | classify.EcoNodeBins | classify.EcoPip | classify.EcoCargo |
		classify.EcoGem | classify.EcoMaven | classify.EcoGradle | classify.EcoGit
	read := func(env ...string) *classify.Packages {
		return packageFacts(all, []string{ws}, ws, home, env).pk
	}
	pk := read()
	if !pk.GoMissing || pk.GoProxy != "https://goenv.example" || pk.GoVendor {
		t.Errorf("go: missing %v proxy %q vendor %v, want missing, the go env file's proxy, no vendor", pk.GoMissing, pk.GoProxy, pk.GoVendor)
	}
	if !slices.Equal(pk.NPM, []string{"https://project.example/npm/", "https://corp.example/"}) {
		t.Errorf("npm registries %v, want the project's registry, then its scope's", pk.NPM)
	}
	if !slices.Equal(pk.NodeBins, []string{"tsc"}) {
		t.Errorf("node bins %v", pk.NodeBins)
	}
	if pk.PipIndex != "https://pip.example/simple" || !slices.Equal(pk.PipExtra, []string{"https://a.example/simple", "https://b.example/simple"}) {
		t.Errorf("pip: index %q extra %v", pk.PipIndex, pk.PipExtra)
	}
	if !slices.Equal(pk.Maven, []string{"https://nexus.example/repo/"}) || !slices.Equal(pk.Gem, []string{"https://gems.example"}) {
		t.Errorf("maven %v gem %v", pk.Maven, pk.Gem)
	}
	if !pk.CargoMissing || !pk.GradleMissing || pk.GradleDist != "https://services.gradle.org/distributions/gradle-8.5-bin.zip" {
		t.Errorf("cargo missing %v, gradle missing %v dist %q", pk.CargoMissing, pk.GradleMissing, pk.GradleDist)
	}
	if pk.GitUpstream != "up" || !slices.Equal(pk.GitRemotes["up"], []string{"https://gitlab.example/o/r", "ssh://push.example:2222/r"}) ||
		!slices.Equal(pk.GitSubmodules, []string{"https://gitlab.example/o/r", "https://sub.example/x.git"}) {
		t.Errorf("git: upstream %q remotes %v submodules %v", pk.GitUpstream, pk.GitRemotes, pk.GitSubmodules)
	}
	for _, p := range pk.Sources {
		if !strings.HasPrefix(p, ws+"/") {
			t.Errorf("source %s lies outside the workspace: only the project's files are bound", p)
		}
	}
	if !slices.Contains(pk.Sources, filepath.Join(ws, ".npmrc")) || !slices.Contains(pk.Sources, filepath.Join(ws, ".git", "config")) {
		t.Errorf("sources %v lack .npmrc or .git/config", pk.Sources)
	}

	// The environment comes before the files.
	pk = read("GOPROXY=https://env.example", "npm_config_registry=https://envnpm.example/", "PIP_INDEX_URL=https://envpip.example/simple")
	if pk.GoProxy != "https://env.example" || pk.NPM[0] != "https://envnpm.example/" || pk.PipIndex != "https://envpip.example/simple" {
		t.Errorf("environment: go %q npm %v pip %q", pk.GoProxy, pk.NPM, pk.PipIndex)
	}

	// The caches filled: a direct requirement's source (the escaped
	// path), an indirect one's go.mod; serde's crate; the distribution.
	writeFiles(t, root, map[string]string{
		"home/go/pkg/mod/cache/download/github.com/!foo/bar/@v/v1.2.3.zip":              "",
		"home/go/pkg/mod/cache/download/golang.org/x/text/@v/v0.14.0.mod":               "",
		"home/.cargo/registry/cache/index.crates.io-6f17d22bba15001f/serde-1.0.0.crate": "",
		"home/.gradle/wrapper/dists/gradle-8.5-bin/abc123/gradle-8.5/bin/gradle":        "",
	})
	pk = read()
	if pk.GoMissing || pk.CargoMissing || pk.GradleMissing {
		t.Errorf("caches filled: go missing %v, cargo missing %v, gradle missing %v", pk.GoMissing, pk.CargoMissing, pk.GradleMissing)
	}
	// A direct requirement needs its source, not only its go.mod.
	if err := os.Remove(filepath.Join(mod, "cache/download/github.com/!foo/bar/@v/v1.2.3.zip")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{"home/go/pkg/mod/cache/download/github.com/!foo/bar/@v/v1.2.3.mod": ""})
	if pk = read(); !pk.GoMissing {
		t.Errorf("a direct requirement with only its go.mod cached: not missing")
	}
	// Vendored: builds read vendor/.
	writeFiles(t, root, map[string]string{"ws/vendor/modules.txt": "# github.com/Foo/bar v1.2.3\n"})
	if pk = read(); !pk.GoVendor {
		t.Errorf("vendor/modules.txt with go 1.22: not vendored")
	}
	// Cargo vendored through the configuration, and a Cargo.toml without
	// a lock whose dependencies are paths only.
	writeFiles(t, root, map[string]string{"ws/.cargo/config.toml": "[source.crates-io]\nreplace-with = \"vendored-sources\"\n\n[source.vendored-sources]\ndirectory = \"vendor\"\n"})
	if pk = read(); !pk.CargoOffline {
		t.Errorf("crates.io replaced by a vendor directory: not offline")
	}
	if cargoHasDeps([]byte("[package]\nname = \"x\"\n[dependencies]\nlocal = { path = \"../local\" }\n[dependencies.other]\npath = \"../other\"\n")) {
		t.Errorf("path dependencies only: taken for dependencies to fetch")
	}
	if !cargoHasDeps([]byte("[package]\nname = \"x\"\n[dev-dependencies]\nserde = \"1\"\n")) || !cargoHasDeps([]byte("[dependencies.serde]\nversion = \"1\"\n")) {
		t.Errorf("registry dependencies: not seen")
	}
}

// TestPackageFactsSecurityFilesAreData: the configuration is read as data
// that may be hostile: a FIFO (or a device) named .npmrc in the
// workspace is skipped, not waited on; a registry's token never leaves
// the file (not in the facts, the decision or the card); a registry
// changed after an approval makes the request ask again.
func TestPackageFactsSecurityFilesAreData(t *testing.T) {
	f := newFixture(t, "")
	if err := syscall.Mkfifo(filepath.Join(f.ws, ".npmrc"), 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(f.ws, "bunfig.toml")); err != nil {
		t.Fatal(err)
	}
	done := make(chan Decision, 1)
	go func() {
		d, _ := f.g.Decide(context.Background(), f.req("bun", "install"), Mode{DryRun: true})
		done <- d
	}()
	select {
	case d := <-done:
		if !hasNetwork(d) {
			t.Errorf("bun install beside a FIFO .npmrc: no network access (%s)", d.Reason)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("deciding bun install blocked on a FIFO .npmrc or /dev/zero")
	}

	// A project's .npmrc linked to a file outside the workspace is not
	// read: what it names would show on the card.
	l := newFixture(t, "")
	writeFiles(t, l.home, map[string]string{"private.ini": "registry=https://private-host.example/\n"})
	if err := os.Symlink(filepath.Join(l.home, "private.ini"), filepath.Join(l.ws, ".npmrc")); err != nil {
		t.Fatal(err)
	}
	if d := l.decide(t, Mode{DryRun: true}, "npm", "install"); strings.Contains(fmt.Sprint(d.Commands[0].Policy.Accesses), "private-host") {
		t.Errorf("a linked .npmrc was read: %v", d.Commands[0].Policy.Accesses)
	}

	g := newFixture(t, "")
	writeFiles(t, g.ws, map[string]string{".npmrc": "registry=https://project.example/\n//project.example/:_authToken=SECRET-NPM-TOKEN\n_auth=SECRET-BASIC\n"})
	writeFiles(t, g.home, map[string]string{".npmrc": "//registry.npmjs.org/:_authToken=SECRET-USER-TOKEN\n"})
	d := g.decide(t, Mode{}, "npm", "install")
	b, _ := json.Marshal(d)
	pk := packageFacts(classify.EcoNPM, []string{g.ws}, g.ws, g.home, nil).pk
	pb, _ := json.Marshal(pk)
	for _, secret := range []string{"SECRET-NPM-TOKEN", "SECRET-BASIC", "SECRET-USER-TOKEN"} {
		if bytes.Contains(b, []byte(secret)) || bytes.Contains(pb, []byte(secret)) {
			t.Errorf("the token %s reached the decision or the facts", secret)
		}
	}
	if d.Outcome != policy.Ask || d.Network == nil || !slices.Equal(d.Network.Hosts, []string{"project.example"}) {
		t.Fatalf("npm install: %s, network %+v; want ask naming project.example", d.Outcome, d.Network)
	}
	if !slices.ContainsFunc(d.Card, func(l string) bool { return strings.Contains(l, "reach project.example on TCP ports 443, 80 ") }) {
		t.Errorf("card %q does not name the registry and its ports", d.Card)
	}
	// Approved, then the project's registry changed: the ticket is not
	// spent.
	if _, err := g.g.Approve(context.Background(), d.Approval.Token, approvals.Identity{Channel: "cli", Sender: "dev"}, ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, g.ws, map[string]string{".npmrc": "registry=https://elsewhere.example/\n"})
	if d := g.decide(t, Mode{SpendTicket: true, DryRun: true}, "npm", "install"); d.Outcome == policy.Allow {
		t.Errorf("npm install after .npmrc changed its registry: %s (%s), want it to ask again", d.Outcome, d.Reason)
	}
	writeFiles(t, g.ws, map[string]string{".npmrc": "registry=https://project.example/\n//project.example/:_authToken=SECRET-NPM-TOKEN\n_auth=SECRET-BASIC\n"})
	if d := g.decide(t, Mode{SpendTicket: true}, "npm", "install"); d.Outcome != policy.Allow || d.Ticket == "" {
		t.Errorf("npm install with the registry approved: %s (%s), want the ticket spent", d.Outcome, d.Reason)
	}
}

func hasNetwork(d Decision) bool {
	for _, c := range d.Commands {
		if c.Policy == nil {
			continue
		}
		for _, a := range c.Policy.Accesses {
			if a.Capability == classify.NetworkHTTP {
				return true
			}
		}
	}
	return false
}

// TestFetchNetworkDecision: at level full, an install asks (it runs code
// and needs the network, so it is not contained work) and names its
// registry; a build whose modules are in the cache stays contained; the
// same build with a module missing asks; an install beside curl to
// another host gets no narrowed ports.
func TestFetchNetworkDecision(t *testing.T) {
	f := newFixture(t, "")
	src := strings.Replace(string(policy.DefaultSource()), "\nlevel: supervised\n", "\nlevel: full\n", 1)
	pol, err := policy.Parse("full.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cfg := f.g.Config()
	cfg.Policy = pol
	f.g = New(cfg)
	t.Cleanup(func() { f.g.Close() })
	writeFiles(t, f.ws, map[string]string{"go.mod": "module m\n\ngo 1.22\n\nrequire golang.org/x/text v0.14.0\n", "main.go": "package main\n"})
	for _, tc := range []struct {
		argv    []string
		outcome policy.Outcome
		hosts   []string
	}{
		{[]string{"npm", "install"}, policy.Ask, []string{"registry.npmjs.org"}},
		{[]string{"go", "mod", "download"}, policy.Ask, []string{"proxy.golang.org", "sum.golang.org"}},
		{[]string{"go", "build", "./..."}, policy.Ask, []string{"proxy.golang.org", "sum.golang.org"}},
		{[]string{"go", "build", "-mod=vendor", "./..."}, policy.Allow, nil},
		{[]string{"npm", "test"}, policy.Allow, nil},
		{[]string{"bash", "-c", "npm install && curl https://other.example/x"}, policy.Ask, nil},
	} {
		d := f.decide(t, Mode{DryRun: true}, tc.argv...)
		var hosts []string
		if d.Network != nil {
			hosts = d.Network.Hosts
		}
		if d.Outcome != tc.outcome || !slices.Equal(hosts, tc.hosts) {
			t.Errorf("%v: %s (%s), network hosts %v; want %s, %v", tc.argv, d.Outcome, d.Reason, hosts, tc.outcome, tc.hosts)
		}
	}
	writeFiles(t, f.home, map[string]string{"go/pkg/mod/cache/download/golang.org/x/text/@v/v0.14.0.zip": ""})
	if d := f.decide(t, Mode{DryRun: true}, "go", "test", "./..."); d.Outcome != policy.Allow || d.Network != nil {
		t.Errorf("go test with its module cached: %s (%s), want contained work allowed", d.Outcome, d.Reason)
	}
}

// TestFetchNetworkSecurityRun: an approved npm install runs with the
// network, limited to its registry's port; an unapproved go test, which
// is contained work at level full, runs with none; after it fails the
// hint names the fetch step only when what a build needs is missing.
func TestFetchNetworkSecurityRun(t *testing.T) {
	requireLandlock(t, 4)
	python, err := os.Stat("/usr/bin/python3")
	if err != nil || python.IsDir() {
		t.Skip("needs /usr/bin/python3 for the stand-in package managers")
	}
	f := newFixture(t, "")
	var ports [2]int
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Skipf("cannot listen on loopback: %v", err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	// Stand-ins for npm and go: each tries both ports and exits non-zero
	// when it reached neither, as a build that cannot download does.
	bin := filepath.Join(filepath.Dir(f.ws), "bin")
	prog := fmt.Sprintf(`#!/usr/bin/python3
import socket, sys
ok = 0
for port in (%d, %d):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=3).close()
        print(port, "connected"); ok += 1
    except OSError as e:
        print(port, "refused", e.errno)
sys.exit(0 if ok else 1)
`, ports[0], ports[1])
	for _, name := range []string{"npm", "go"} {
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, name), []byte(prog), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	writeFiles(t, f.ws, map[string]string{".npmrc": fmt.Sprintf("registry=http://127.0.0.1:%d/\n", ports[0])})
	src := strings.Replace(string(policy.DefaultSource()), "\nlevel: supervised\n", "\nlevel: full\n", 1) +
		"\nsandbox:\n  read: [" + bin + "]\n"
	pol, err := policy.Parse("full.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cfg := f.g.Config()
	cfg.Policy = pol
	f.g = New(cfg)
	t.Cleanup(func() { f.g.Close() })
	run := func(argv ...string) (RunResult, string) {
		t.Helper()
		var out, errb bytes.Buffer
		res, err := f.g.Run(context.Background(), f.req(argv...), Stdio{Stdout: &out, Stderr: &errb}, RunOptions{})
		if err != nil {
			t.Fatalf("run %v: %v", argv, err)
		}
		return res, out.String() + errb.String()
	}

	// go test: contained work at full, run without network.
	res, out := run("go", "test", "./...")
	if !res.Ran || res.Decision.Outcome != policy.Allow {
		t.Fatalf("go test: not run: %s (%s)", res.Decision.Outcome, res.Decision.Reason)
	}
	for _, p := range ports {
		if !strings.Contains(out, fmt.Sprintf("%d refused", p)) {
			t.Errorf("go test, unapproved: port %d not refused:\n%s", p, out)
		}
	}
	// Nothing it needs is missing: it failed for another reason, and the
	// hint does not send the person to download what is there.
	if res.ExitCode == 0 || strings.Contains(res.Hint, "go mod download") {
		t.Errorf("go test failing without network, nothing missing: exit %d, hint %q; want no fetch step", res.ExitCode, res.Hint)
	}
	// npm test where package.json depends on what node_modules lacks: the
	// hint names the fetch step.
	writeFiles(t, f.ws, map[string]string{"package.json": `{"scripts": {"test": "node t.js"}, "dependencies": {"ms": "2.1.3"}}`})
	res, _ = run("npm", "test")
	if !res.Ran || res.ExitCode == 0 || !strings.Contains(res.Hint, "run `npm install` first") {
		t.Errorf("npm test failing without network, ms missing: ran %v, exit %d, hint %q; want the fetch step named", res.Ran, res.ExitCode, res.Hint)
	}
	writeFiles(t, f.ws, map[string]string{"node_modules/ms/package.json": `{"name": "ms"}`})
	if res, _ = run("npm", "test"); !res.Ran || res.ExitCode == 0 || res.Hint != "" {
		t.Errorf("npm test failing with its dependencies installed: ran %v, exit %d, hint %q; want no hint", res.Ran, res.ExitCode, res.Hint)
	}
	if err := os.RemoveAll(filepath.Join(f.ws, "node_modules")); err != nil {
		t.Fatal(err)
	}

	// npm install: asks, naming the registry; approved, it reaches the
	// registry's port and no other.
	res, _ = run("npm", "install")
	if res.Ran || res.Decision.Outcome != policy.Ask || res.Decision.Network == nil ||
		!slices.Equal(res.Decision.Network.Ports, []uint16{uint16(ports[0])}) {
		t.Fatalf("npm install: ran %v, %s, network %+v; want an ask naming port %d", res.Ran, res.Decision.Outcome, res.Decision.Network, ports[0])
	}
	if _, err := f.g.Approve(context.Background(), res.Decision.Approval.Token, approvals.Identity{Channel: "cli", Sender: "dev"}, ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
	res, out = run("npm", "install")
	if !res.Ran {
		t.Fatalf("npm install, approved: not run: %s", res.Decision.Reason)
	}
	if !strings.Contains(out, fmt.Sprintf("%d connected", ports[0])) || !strings.Contains(out, fmt.Sprintf("%d refused", ports[1])) {
		t.Errorf("npm install, approved: want its registry's port %d reached and port %d refused:\n%s", ports[0], ports[1], out)
	}
	if res.Hint != "" {
		t.Errorf("npm install that ran with network: hint %q", res.Hint)
	}
}
