package classify

import (
	"slices"
	"testing"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// writesOf classifies the one command of src in /w (home /home/u) with
// the package facts pk and returns its fs:write targets ("?" for one not
// known before it runs) and its floor.
func writesOf(t *testing.T, src string, pk *Packages) (writes []string, floor Outcome) {
	t.Helper()
	s, err := shellparse.ParseScript(src, shellparse.Env{Home: "/home/u", Cwd: "/w"})
	if err != nil || len(s.Commands) != 1 {
		t.Fatalf("%s: %v", src, err)
	}
	pl := PlaceOf(s, "/w", "/home/u")
	pl.Packages = pk
	cl := Classify(s.Commands[0], pl)
	for _, a := range cl.Accesses {
		if a.Capability != FSWrite {
			continue
		}
		if a.Dynamic {
			writes = append(writes, "?")
			continue
		}
		writes = append(writes, a.Target)
	}
	return writes, cl.Floor
}

// TestInstallSecurityWritesWhatRunsLater: a command that installs programs
// where the shell finds them later (go install into GOBIN, cargo install,
// npm install -g, pip install --user, uv tool install, pipx install)
// writes there: it is never contained work, and the write to a bin
// directory asks whatever a rule says (the floor of a write to what runs
// later). Missing one lets an allowed command put a program on PATH, or
// be allowed as contained and then fail on the sandbox's read-only view.
func TestInstallSecurityWritesWhatRunsLater(t *testing.T) {
	for _, tc := range []struct {
		src  string
		pk   *Packages
		want []string
	}{
		{"go install ./cmd/x", nil, []string{"/home/u/go/bin"}},
		{"go install", nil, []string{"/home/u/go/bin"}},
		{"go install golang.org/x/tools/gopls@latest", nil, []string{"/home/u/go/bin"}},
		{"go -C sub install .", nil, []string{"/home/u/go/bin"}},
		{"go install ./cmd/x", &Packages{Install: map[string]string{InstallGoBin: "/home/u/bin"}}, []string{"/home/u/bin"}},
		{"go install ./cmd/x", &Packages{Install: map[string]string{InstallGoPath: "/home/u/gp:/other"}}, []string{"/home/u/gp/bin"}},
		{"GOBIN=/home/u/.local/bin go install ./cmd/x", nil, []string{"/home/u/.local/bin"}},
		{"GOBIN=$X go install ./cmd/x", nil, []string{"?"}},
		{"cargo install ripgrep", nil, []string{"/home/u/.cargo/bin"}},
		{"cargo install --path .", &Packages{Install: map[string]string{InstallCargoHome: "/home/u/.c"}}, []string{"/home/u/.c/bin"}},
		{"cargo install --root /home/u/.local ripgrep", nil, []string{"/home/u/.local/bin"}},
		{"npm install -g typescript", &Packages{Install: map[string]string{InstallNPMPrefix: "/home/u/.npm-global"}},
			[]string{"/home/u/.npm-global/bin", "/home/u/.npm-global/lib/node_modules"}},
		{"npm i --global left-pad", nil, []string{"?", "?"}},
		{"npm uninstall -g left-pad", &Packages{Install: map[string]string{InstallNPMPrefix: "/usr/local"}},
			[]string{"/usr/local/bin", "/usr/local/lib/node_modules"}},
		{"pip install --user black", nil, []string{"/home/u/.local/bin", "/home/u/.local/lib"}},
		{"python3 -m pip install --user black", nil, []string{"/home/u/.local/bin", "/home/u/.local/lib"}},
		{"uv tool install ruff", nil, []string{"/home/u/.local/bin", "/home/u/.local/share/uv/tools"}},
		{"pipx install black", nil, []string{"/home/u/.local/bin", "/home/u/.local/share/pipx"}},
	} {
		writes, floor := writesOf(t, tc.src, tc.pk)
		for _, w := range tc.want {
			if !slices.Contains(writes, w) {
				t.Errorf("%s: writes %q, want %s among them", tc.src, writes, w)
			}
		}
		// A floor above allow is never contained work (policy.Contained).
		if floor != Ask {
			t.Errorf("%s: floor %s, want ask (a write to what runs later, or not known): contained work would allow it", tc.src, floor)
		}
	}
}

// TestInstallInWorkspace: what installs nowhere later, or only into the
// workspace, keeps its classification: the build, a local npm install, a
// pip install into a virtual environment or a --target in the workspace.
func TestInstallInWorkspace(t *testing.T) {
	for _, src := range []string{
		"go build ./...", "go install -h", "go test ./...", "cargo install --list", "cargo build",
		"npm install", "npm install left-pad", "npm run build", "pip install -r requirements.txt",
		"pip install --target vendor x", "uv tool run ruff", "uv sync", "GOBIN=/w/bin go install ./cmd/x",
	} {
		writes, _ := writesOf(t, src, nil)
		for _, w := range writes {
			if w == "?" || !Within("/w", w) {
				t.Errorf("%s: writes %s, outside the workspace", src, w)
			}
		}
	}
}
