package gate

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/mnemos-dev/mnemos/classify"
)

// The hint after a failed run without network ("run go mod download
// first") is given only when the failure looks like one for want of
// downloads: some command of the request is a build of a package manager
// (classify.FetchStep) and, looked at after the run, what that build
// needs is missing: the module cache lacks a module go.mod requires,
// Cargo.lock names a crate neither cached nor checked out, the Gradle or
// Maven wrapper's distribution is absent, the Maven or Gradle build
// declares what the local repository or module cache lacks (maven.go,
// gradle.go), or node_modules lacks a package
// package.json depends on. A build that failed for another reason (a
// test, a compile error), or a script in which something else failed
// (git commit with nothing to commit), gets no hint: the hint would send
// the person to fetch what is already there. The command's output is not
// read: its standard error stays the terminal it was given.

// missingFetchStep is the fetch step to name in the hint after a failed
// run without network, or "" when nothing the request's builds need is
// missing.
func (g *Gate) missingFetchStep(req Request, dec Decision) string {
	var env []string
	if g.cfg.Environ != nil {
		env = g.cfg.Environ()
	}
	dirs := []string{req.Cwd}
	for _, c := range dec.Commands {
		step := classify.FetchStep(c.Command)
		if step == "" {
			continue
		}
		var needs classify.Ecosystems
		switch c.Command.Name() {
		case "go":
			needs = classify.EcoGo
		case "cargo":
			needs = classify.EcoCargo
		case "gradle", "gradlew":
			needs = classify.EcoGradle
		case "mvn", "mvnw":
			needs = classify.EcoMaven
		case "npm", "pnpm", "yarn", "bun":
			if nodeModulesMissing(req.Cwd) {
				return step
			}
			continue
		default:
			continue
		}
		pk := packageFacts(needs, dirs, dec.Workspace, g.cfg.UserHome, env).pk
		if pk.GoMissing && !pk.GoVendor || pk.CargoMissing && !pk.CargoOffline || pk.GradleMissing || pk.GradleDepsMissing ||
			pk.MavenMissing && !pk.MavenOffline || pk.MavenWrapperMissing {
			return step
		}
	}
	return ""
}

// nodeModulesMissing reports a package.json in dir whose dependencies
// (or devDependencies) are not all in dir's node_modules.
func nodeModulesMissing(dir string) bool {
	b, ok := readSmall(filepath.Join(dir, "package.json"), maxConfig)
	if !ok {
		return false
	}
	var pj struct {
		Dependencies    map[string]any `json:"dependencies"`
		DevDependencies map[string]any `json:"devDependencies"`
	}
	if json.Unmarshal(b, &pj) != nil {
		return false
	}
	for _, deps := range []map[string]any{pj.Dependencies, pj.DevDependencies} {
		for name := range deps {
			if !filepath.IsLocal(name) {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, "node_modules", name, "package.json")); err != nil {
				return true
			}
		}
	}
	return false
}
