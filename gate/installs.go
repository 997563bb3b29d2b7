package gate

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
)

// installFacts reads where the package managers the request runs install
// programs (classify's installs.go): the variables of the environment
// they read and, for npm, the global prefix of the user's .npmrc or,
// without one, node's (npm installs beside the node it runs on). go's
// env file is read by goFacts.
func (r *factReader) installFacts(needs classify.Ecosystems) {
	for _, n := range []string{classify.InstallGoBin, classify.InstallGoPath, classify.InstallCargoRoot, classify.InstallCargoHome,
		classify.InstallPyUserBase, classify.InstallUVToolBin, classify.InstallUVToolDir, classify.InstallXDGBin,
		classify.InstallXDGData, classify.InstallPipxBin, classify.InstallPipxHome} {
		r.install(n, r.getenv(n))
	}
	if needs&classify.EcoNPM == 0 {
		return
	}
	prefix := r.getenvFold("npm_config_prefix")
	if prefix == "" {
		user := r.getenvFold("npm_config_userconfig")
		if user == "" {
			user = r.homePath(".npmrc")
		}
		if b, ok := r.read(user, maxConfig); ok {
			for _, line := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.TrimSpace(k) == "prefix" {
					prefix = r.expand(strings.Trim(strings.TrimSpace(v), "\"'"))
				}
			}
		}
	}
	if prefix == "" {
		// npm's default: the directory above the one node is in.
		for _, dir := range filepath.SplitList(r.getenv("PATH")) {
			p := filepath.Join(dir, "node")
			if fi, err := os.Stat(p); err != nil || fi.IsDir() || !filepath.IsAbs(dir) {
				continue
			}
			if real, err := filepath.EvalSymlinks(p); err == nil {
				p = real
			}
			prefix = filepath.Dir(filepath.Dir(p))
			break
		}
	}
	r.install(classify.InstallNPMPrefix, prefix)
}

// install records where a package manager installs, when it says.
func (r *factReader) install(name, value string) {
	if value == "" {
		return
	}
	pk := r.facts.pk
	if pk.Install == nil {
		pk.Install = map[string]string{}
	}
	pk.Install[name] = value
}
