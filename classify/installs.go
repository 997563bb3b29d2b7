package classify

import (
	"path"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// Installs. Some package-manager commands put programs where the shell
// finds them later: go install writes GOBIN (GOPATH/bin, ~/go/bin),
// cargo install CARGO_INSTALL_ROOT/bin (CARGO_HOME/bin, ~/.cargo/bin),
// npm install -g the npm prefix's bin and lib/node_modules, pip install
// --user PYTHONUSERBASE's bin and lib (~/.local), uv tool install and
// pipx install their bin directory (~/.local/bin) and tools directory.
// Those are writes (fs:write) to what runs later, outside the sandbox,
// which keeps them read-only: the command is not contained work, and the
// write asks like any write to a PATH directory (finish). Where the
// directory is not known before the command runs, the write is dynamic.

// Install variables: the names Packages.Install holds.
const (
	InstallGoBin      = "GOBIN"
	InstallGoPath     = "GOPATH"
	InstallCargoRoot  = "CARGO_INSTALL_ROOT"
	InstallCargoHome  = "CARGO_HOME"
	InstallNPMPrefix  = "npm_config_prefix"
	InstallPyUserBase = "PYTHONUSERBASE"
	InstallUVToolBin  = "UV_TOOL_BIN_DIR"
	InstallUVToolDir  = "UV_TOOL_DIR"
	InstallXDGBin     = "XDG_BIN_HOME"
	InstallXDGData    = "XDG_DATA_HOME"
	InstallPipxBin    = "PIPX_BIN_DIR"
	InstallPipxHome   = "PIPX_HOME"
)

// addInstalls adds the writes of a command that installs programs for
// later (see the comment at the top).
func (c *Classification) addInstalls(cmd shellparse.Command, pl Place) {
	name := cmd.Name()
	if len(cmd.Argv) < 2 {
		return
	}
	args := cmd.Argv[1:]
	// bins are where the programs go, dirs the rest an install writes.
	var bins, dirs []string
	dynamic := false
	// v is the value of an install variable: the command's own word,
	// else what the gate read (Packages.Install), else def.
	v := func(n string, fold bool, def string) string {
		if val, set, known := assigned(cmd, fold, n); set {
			if !known {
				dynamic = true
			}
			return val
		}
		if pl.Packages != nil {
			if val := pl.Packages.Install[n]; val != "" {
				return val
			}
		}
		return def
	}
	home := func(rel string) string {
		if pl.Home == "" {
			return ""
		}
		return path.Join(pl.Home, rel)
	}
	switch name {
	case "go":
		sub, rest, _ := subOf(args, "-C")
		if sub != "install" || hasOpt(rest, "-h", "-help", "--help", "-n") {
			return
		}
		bin := v(InstallGoBin, false, "")
		if bin == "" {
			gopath := v(InstallGoPath, false, home("go"))
			if first, _, _ := strings.Cut(gopath, ":"); first != "" {
				bin = path.Join(first, "bin")
			}
		}
		bins = append(bins, bin)
	case "cargo":
		sub, rest, _ := subOf(args, "-Z", "--config", "-C", "--color")
		if sub != "install" || hasOpt(rest, "--list", "-h", "--help") {
			return
		}
		root := ""
		if rs := optionValuesOf(rest, "--root"); len(rs) > 0 {
			root, dynamic = rs[len(rs)-1].Value, dynamic || rs[len(rs)-1].Dynamic
		} else if root = v(InstallCargoRoot, false, ""); root == "" {
			root = v(InstallCargoHome, false, home(".cargo"))
		}
		bins = append(bins, joinIfSet(root, "bin"))
	case "npm":
		sub, rest, _ := subOf(args, npmTakes...)
		global := hasOpt(args, "-g", "--global") || slices.ContainsFunc(optionValuesOf(args, "--location"),
			func(w shellparse.Word) bool { return w.Value == "global" })
		if !global || !npmInstalls(sub) || hasOpt(rest, "-h", "--help") {
			return
		}
		prefix := ""
		if ps := optionValuesOf(args, "--prefix"); len(ps) > 0 {
			prefix, dynamic = ps[len(ps)-1].Value, dynamic || ps[len(ps)-1].Dynamic
		} else {
			prefix = v(InstallNPMPrefix, true, "")
		}
		bins, dirs = append(bins, joinIfSet(prefix, "bin")), append(dirs, joinIfSet(prefix, "lib/node_modules"))
	case "pip", "pip3":
		bins, dirs = pipInstallDirs(args, v, home)
	case "uv":
		sub, rest, _ := subOf(args, uvTakes...)
		s2, _, _ := subOf(rest, uvTakes...)
		if sub != "tool" || s2 != "install" && s2 != "upgrade" {
			if sub == "pip" && s2 == "install" && hasOpt(rest, "--user") {
				base := v(InstallPyUserBase, false, home(".local"))
				bins, dirs = append(bins, joinIfSet(base, "bin")), append(dirs, joinIfSet(base, "lib"))
			}
			break
		}
		data := v(InstallXDGData, false, home(".local/share"))
		bin := v(InstallUVToolBin, false, "")
		if bin == "" {
			bin = v(InstallXDGBin, false, "")
		}
		if bin == "" {
			bin = home(".local/bin")
			if d := v(InstallXDGData, false, ""); d != "" {
				bin = path.Join(d, "..", "bin")
			}
		}
		bins, dirs = append(bins, bin), append(dirs, v(InstallUVToolDir, false, joinIfSet(data, "uv/tools")))
	case "pipx":
		sub, rest, _ := subOf(args)
		switch sub {
		case "install", "upgrade", "upgrade-all", "inject", "reinstall", "reinstall-all", "install-all", "upgrade-shared", "uninstall", "uninstall-all":
		default:
			return
		}
		if hasOpt(rest, "-h", "--help") {
			return
		}
		bins = append(bins, v(InstallPipxBin, false, home(".local/bin")))
		dirs = append(dirs, v(InstallPipxHome, false, home(".local/share/pipx")))
	default:
		if pythonName(name) {
			// python -m pip install --user ...
			for i := 0; i+1 < len(args); i++ {
				w := args[i].Value
				if args[i].Dynamic || !strings.HasPrefix(w, "-") {
					break
				}
				if w == "-m" {
					if args[i+1].Value == "pip" && !args[i+1].Dynamic {
						bins, dirs = pipInstallDirs(args[i+2:], v, home)
					}
					break
				}
			}
		}
	}
	for i, d := range append(bins, dirs...) {
		if d == "" || dynamic {
			// finish raises the floor for a write not known.
			c.Accesses = append(c.Accesses, Access{Capability: FSWrite, Target: d, Dynamic: true})
			continue
		}
		c.add(pl, FSWrite, shellparse.Word{Value: d})
		if i < len(bins) && path.IsAbs(d) && (pl.Workspace == "" || !Within(pl.Workspace, d)) {
			// Installed programs run later, wherever the directory is.
			c.raise(Ask, "installs programs into "+path.Clean(d)+", where they run later, outside the sandbox")
		}
	}
}

// pipInstallDirs are the directories pip install writes outside the
// environment it runs in: PYTHONUSERBASE's (~/.local) bin (bins) and lib
// with --user, and the directory --target, --prefix or --root names.
func pipInstallDirs(args []shellparse.Word, v func(string, bool, string) string, home func(string) string) (bins, dirs []string) {
	sub, rest, _ := subOf(args, pipTakes...)
	if sub != "install" || hasOpt(rest, "-h", "--help") {
		return nil, nil
	}
	if hasOpt(rest, "--user") {
		base := v(InstallPyUserBase, false, home(".local"))
		bins, dirs = append(bins, joinIfSet(base, "bin")), append(dirs, joinIfSet(base, "lib"))
	}
	for _, w := range optionValuesOf(rest, "-t", "--target", "--prefix", "--root") {
		if w.Dynamic {
			dirs = append(dirs, "")
			continue
		}
		dirs = append(dirs, w.Value)
	}
	return bins, dirs
}

// npmInstalls reports an npm subcommand that, given -g, changes the global
// prefix: installs, updates, removals and links.
func npmInstalls(sub string) bool {
	if npmFetchSubs[sub] {
		return true
	}
	switch sub {
	case "uninstall", "un", "unlink", "remove", "rm", "r", "link", "ln", "rebuild", "rb":
		return true
	}
	return false
}

// joinIfSet is path.Join(dir, rel), or "" when dir is.
func joinIfSet(dir, rel string) string {
	if dir == "" {
		return ""
	}
	return path.Join(dir, rel)
}

// InstallAdvice says, for a command that installs programs where they run
// later (see the comment at the top), how to get the same without
// writing there: what to run in the workspace instead. "" for any other
// command.
func InstallAdvice(cmd shellparse.Command) string {
	var c Classification
	c.Floor = Allow
	c.addInstalls(cmd, Place{Home: "/", Dirs: []string{"/"}})
	if c.Floor == Allow && !slices.ContainsFunc(c.Accesses, func(a Access) bool { return a.Dynamic }) {
		return ""
	}
	switch name := cmd.Name(); {
	case name == "go":
		return "build into the workspace instead, with go build -o bin/ PACKAGE, or run go install yourself, outside mnemos"
	case name == "cargo":
		return "build in the workspace instead, with cargo build --release (into target/release), or run cargo install yourself, outside mnemos"
	case name == "npm":
		return "install into the project instead, with npm install and no -g (npx and npm run find its programs in node_modules/.bin), or run it yourself, outside mnemos"
	case name == "uv" || name == "pipx":
		return "run the tool without installing it, with uvx TOOL or pipx run TOOL, or install it yourself, outside mnemos"
	default:
		return "install into a virtual environment in the workspace instead, made with python3 -m venv .venv, or run it yourself, outside mnemos"
	}
}
