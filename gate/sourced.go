package gate

import (
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/sandbox"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// What a script does to PATH before it runs a toolchain, as the parser
// is told it (shellparse.Env): the PATH the command inherits, so that
// `export PATH="$HOME/.cargo/bin:$PATH"` is a PATH known before it runs,
// and what the two files agents source before a build set: a
// virtualenv's bin/activate (VIRTUAL_ENV and PATH with the virtualenv's
// bin first) and rustup's env file (PATH with cargo's bin first). The
// file is still code the command runs (under the sandbox, confined like
// any script of the workspace; outside it, code:exec asks); knowing what
// it sets is what lets the build after it be judged with its PATH
// (classify's pathAssign): the directories a toolchain lives in (the
// sandbox's tool directories under home, the version managers' roots)
// and the workspace's virtualenvs, whose programs are the workspace's
// code, as the Tools of the place.

// parseEnv is what the parser is told of the environment the request's
// commands run in.
func (g *Gate) parseEnv(req Request, env []string) shellparse.Env {
	vars := g.cfg.Vars
	if p := envValue(env, "PATH"); g.cfg.Environ != nil && p != "" {
		vars = maps.Clone(vars)
		if vars == nil {
			vars = map[string]string{}
		}
		vars["PATH"] = p
	}
	ws := Workspace(req.Cwd)
	home, cargoHome := g.cfg.UserHome, envValue(env, "CARGO_HOME")
	return shellparse.Env{Home: home, Cwd: req.Cwd, Vars: vars, Exported: exportedNames(env),
		Sourced: func(file string) (map[string]string, bool) { return sourcedFile(file, req.Cwd, ws, home, cargoHome) }}
}

var (
	// virtualEnvLine is the assignment of an activate script that sets
	// the virtualenv's directory (venv, virtualenv, uv, each quoting it
	// its own way).
	virtualEnvLine = regexp.MustCompile(`(?m)^\s*(?:export\s+)?VIRTUAL_ENV=(?:'([^'\n]*)'|"([^"\n$` + "`" + `]*)"|([^\s'"$` + "`" + `;]+))\s*$`)
	// rustupPathLine is rustup's env file putting cargo's bin first.
	rustupPathLine = regexp.MustCompile(`(?m)^\s*export PATH="([^"$]*|\$HOME[^"$]*)/bin:\$PATH"\s*$`)
)

// sourcedFile says what sourcing file sets, for a virtualenv's activate
// script in the workspace and rustup's env file, read from the file
// itself; ok is false for any other file.
func sourcedFile(file, cwd, ws, home, cargoHome string) (map[string]string, bool) {
	p := file
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	real, err := filepath.EvalSymlinks(p)
	if err != nil || !regularFile(real) {
		return nil, false
	}
	// A virtualenv: DIR/bin/activate beside DIR/pyvenv.cfg, in the
	// workspace, whose VIRTUAL_ENV is DIR.
	if filepath.Base(p) == "activate" && filepath.Base(filepath.Dir(p)) == "bin" {
		venv := filepath.Dir(filepath.Dir(p))
		wsReal, err := filepath.EvalSymlinks(ws)
		if err != nil || !classify.Within(wsReal, real) || !classify.Within(ws, venv) || !regularFile(filepath.Join(venv, "pyvenv.cfg")) {
			return nil, false
		}
		b, ok := readSmall(real, maxConfig)
		if !ok || !strings.Contains(string(b), "deactivate") {
			return nil, false
		}
		dir := ""
		for _, m := range virtualEnvLine.FindAllStringSubmatch(string(b), -1) {
			v := m[1] + m[2] + m[3]
			if filepath.IsAbs(v) {
				dir = v
				break
			}
		}
		if dir == "" || filepath.Clean(dir) != venv {
			return nil, false // moved, or not an activate script mnemos knows
		}
		return map[string]string{"VIRTUAL_ENV": venv, "PATH": filepath.Join(venv, "bin") + ":$PATH"}, true
	}
	// rustup's env file: CARGO_HOME/env, putting CARGO_HOME/bin first.
	cargo := cargoHome
	if !filepath.IsAbs(cargo) {
		cargo = filepath.Join(home, ".cargo")
	}
	if home == "" || p != filepath.Join(cargo, "env") {
		return nil, false
	}
	b, ok := readSmall(real, maxConfig)
	if !ok {
		return nil, false
	}
	m := rustupPathLine.FindStringSubmatch(string(b))
	if m == nil {
		return nil, false
	}
	bin := strings.Replace(m[1], "$HOME", home, 1)
	if filepath.Clean(bin) != cargo {
		return nil, false
	}
	return map[string]string{"PATH": filepath.Join(cargo, "bin") + ":$PATH"}, true
}

// pathToolDirs are the directories the request's commands may put on PATH
// and run programs from (classify's Place.Tools): the tool directories
// under home the sandbox lets commands run programs from without
// writing them (~/.local/bin, ~/go/bin, ~/.cargo/bin), the version
// managers' roots, and each virtualenv of the workspace (DIR/bin beside
// DIR/pyvenv.cfg) a command's PATH names.
func pathToolDirs(home, ws string, cmds []shellparse.Command) []string {
	out := sandbox.DefaultHomeExec(home, nil)
	for _, t := range sandbox.Toolchains(home) {
		out = append(out, t.Root)
	}
	for _, d := range scriptPathDirs(cmds) {
		venv := filepath.Dir(d)
		if filepath.Base(d) == "bin" && classify.Within(ws, venv) && regularFile(filepath.Join(venv, "pyvenv.cfg")) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// scriptPathDirs are the absolute directories of the PATHs the commands
// are given by the script (a PATH known before they run).
func scriptPathDirs(cmds []shellparse.Command) []string {
	var out []string
	for _, c := range cmds {
		for _, a := range c.Assigns {
			v, ok := strings.CutPrefix(a, "PATH=")
			if !ok || strings.ContainsAny(v, "$`") {
				continue
			}
			for _, d := range filepath.SplitList(v) {
				if d = filepath.Clean(d); filepath.IsAbs(d) && !slices.Contains(out, d) {
					out = append(out, d)
				}
			}
		}
	}
	return out
}

// pathFindsWritable reports a command whose own PATH puts a directory
// commands may write (the workspace, temp) before the programs it runs,
// as a virtualenv's activate does. Under the sandbox what is found
// there is confined code; outside it, a program a rule allows by its
// name (git status) would run whatever was put there.
func pathFindsWritable(c shellparse.Command, ws string) (string, bool) {
	for _, d := range scriptPathDirs([]shellparse.Command{c}) {
		if classify.WithinAny(d, writableTrees(ws)) {
			return d, true
		}
	}
	return "", false
}
