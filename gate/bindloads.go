package gate

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// What a command loads beyond the script it names (binding.go's file
// facts), bound the same way:
//
//   - make: the files its makefiles include, and what their recipes run
//     (bindmake.go);
//   - npm, pnpm, yarn, bun: what the package.json scripts it runs run,
//     each script read as the command line it is and bound as one
//     (the program found on PATH with node_modules/.bin first, the
//     script an interpreter runs, a makefile, a nested npm run...);
//   - pytest (and python -m pytest): its configuration files (pytest.ini,
//     .pytest.ini, pyproject.toml, tox.ini, setup.cfg, or -c FILE) in the
//     test paths' directory and each one above it, and every conftest.py
//     from the workspace's root down to the test paths and below them
//     (the directories pytest does not enter by default left out),
//     bounded by maxConftestDirs directories;
//   - python -m MODULE: the module's files in the working directory,
//     which python puts first on its path (MODULE.py shadows the
//     module meant);
//   - a patch, or a shell or interpreter, reading its program from
//     stdin: the file redirected to it (patch < fix.diff, sh < x.sh).
//
// Scripts that run scripts are followed maxScriptDepth levels down, and
// all of it within one command's work budget (envFacts.spend).

const (
	// maxScriptDepth bounds scripts that run scripts (npm run a runs
	// npm run b...).
	maxScriptDepth = 4
	// maxConftestDirs bounds the directories searched for conftest.py;
	// beyond it the rest of the tree is not bound, and the binding says
	// so (a fact "conftest DIR truncated").
	maxConftestDirs = 4000
	// maxPackageJSON bounds the package.json read for its scripts.
	maxPackageJSON = 4 << 20
)

// loadFacts are the facts of the files a command started in dir loads
// besides its script.
func loadFacts(c shellparse.Command, name, dir string, place classify.Place, env envFacts, depth int) []string {
	args := c.Argv[1:]
	for _, a := range args {
		if a.Dynamic {
			return nil // the words are bound; what they name is not known
		}
	}
	words := values(args)
	var out []string
	if programFromStdin(name, words) {
		for _, r := range c.Redirects {
			if r.Op == "<" && (r.Fd == "" || r.Fd == "0") && r.By == "" && !r.Target.Dynamic {
				for _, p := range resolveIn(r.Target.Value, []string{dir}) {
					out = append(out, "file "+p+" "+fileDigest(p))
				}
			}
		}
	}
	family := strings.TrimRight(name, "0123456789.")
	switch {
	case name == "make" || name == "gmake":
		out = append(out, makeFacts(words, dir, place, env, c.Assigns, depth)...)
	case name == "npm" || name == "pnpm" || name == "yarn" || name == "bun":
		out = append(out, packageScriptFacts(name, words, dir, place, env, depth)...)
	case name == "pytest" || name == "py.test":
		if !env.spend(50) {
			return append(out, "truncated")
		}
		out = append(out, pytestFacts(words, dir, place.Workspace)...)
	case family == "python" || family == "pypy":
		if mod, rest, ok := pythonModule(words); ok {
			out = append(out, moduleFacts(mod, dir)...)
			if mod == "pytest" && !env.spend(50) {
				return append(out, "truncated")
			}
			if mod == "pytest" {
				out = append(out, pytestFacts(rest, dir, place.Workspace)...)
			}
		}
	case name == "uv" || name == "poetry" || name == "pipenv" || name == "pdm" || name == "hatch" || name == "rye":
		// X run CMD...: CMD is bound as a command of its own.
		if inner, ok := runsCommand(name, args); ok {
			out = append(out, commandFactsDepth(inner, place, env, depth+1)...)
		}
	}
	return out
}

// values are the words' values.
func values(words []shellparse.Word) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w.Value
	}
	return out
}

// programFromStdin reports a command that reads the code or patch it
// applies from its standard input.
func programFromStdin(name string, args []string) bool {
	family := strings.TrimRight(name, "0123456789.")
	switch family {
	case "patch", "gpatch":
		n := 0
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "-i" || a == "--input":
				return i+1 < len(args) && args[i+1] == "-"
			case strings.HasPrefix(a, "--input="):
				return a == "--input=-"
			case strings.HasPrefix(a, "-i") && len(a) > 2 && !strings.HasPrefix(a, "--"):
				return a == "-i-"
			case patchValueOption(a):
				i++
			case a == "--" || !strings.HasPrefix(a, "-") || a == "-":
				n++
			}
		}
		return n < 2
	case "git":
		sub, rest := gitSubcommand(args)
		if sub != "apply" && sub != "am" {
			return false
		}
		files := gitPatchOperands(rest)
		return len(files) == 0 || slices.Contains(files, "-")
	case "python", "pypy", "bash", "sh", "dash", "zsh", "ksh", "mksh", "perl", "ruby", "node", "nodejs":
		code := map[string]string{"python": "cm", "pypy": "cm", "perl": "eE", "ruby": "e", "node": "ep", "nodejs": "ep"}[family]
		if code == "" {
			code = "c"
		}
		for _, a := range args {
			switch {
			case a == "-":
				return true
			case a == "--eval" || a == "--print" || a == "--command" || strings.HasPrefix(a, "--eval=") || strings.HasPrefix(a, "--print="):
				return false
			case strings.HasPrefix(a, "--"):
			case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
				if strings.ContainsAny(a[1:], code) {
					return false
				}
			default:
				return false // a script operand (or an option's value: bound more, not less)
			}
		}
		return true
	}
	return false
}

// patchValueOption reports an option of patch whose value is the next
// word.
func patchValueOption(a string) bool {
	switch a {
	case "-B", "-D", "-d", "-F", "-g", "-o", "-p", "-r", "-V", "-Y", "-z",
		"--prefix", "--ifdef", "--directory", "--fuzz", "--get", "--output", "--strip", "--reject-file",
		"--version-control", "--basename-prefix", "--suffix", "--quoting-style":
		return true
	}
	return false
}

// patchFiles is the patch file patch reads: -i FILE, --input=FILE, or
// the second operand; each also under -d DIR, where patch goes first.
func patchFiles(args []string) []string {
	var files, ops []string
	dir := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-i" || a == "--input") && i+1 < len(args):
			i++
			files = append(files, args[i])
		case strings.HasPrefix(a, "--input="):
			files = append(files, a[len("--input="):])
		case strings.HasPrefix(a, "-i") && len(a) > 2:
			files = append(files, a[2:])
		case (a == "-d" || a == "--directory") && i+1 < len(args):
			i++
			dir = args[i]
		case strings.HasPrefix(a, "--directory="):
			dir = a[len("--directory="):]
		case strings.HasPrefix(a, "-d") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			dir = a[2:]
		case patchValueOption(a):
			i++
		case a == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case !strings.HasPrefix(a, "-"):
			ops = append(ops, a)
		}
	}
	if len(ops) >= 2 {
		files = append(files, ops[1])
	}
	var out []string
	for _, f := range files {
		if f == "-" || f == "" {
			continue
		}
		out = append(out, f)
		if dir != "" && !filepath.IsAbs(f) {
			out = append(out, filepath.Join(dir, f))
		}
	}
	return out
}

// gitDir is the directory git -C moves to, relative to the start.
func gitDir(args []string) string {
	dir := ""
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "-C":
			dir = filepath.Join(dir, args[i+1])
			i++
		case "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env":
			i++
		default:
			if !strings.HasPrefix(args[i], "-") {
				return dir
			}
		}
	}
	return dir
}

// gitPatchOperands are the patch files of git apply or git am: their
// operands (their options take their values attached).
func gitPatchOperands(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a)
		}
	}
	return out
}

// gitPatchFiles are the patch files git apply and git am read, under
// git -C's directory.
func gitPatchFiles(args []string) []string {
	sub, rest := gitSubcommand(args)
	if sub != "apply" && sub != "am" {
		return nil
	}
	dir := gitDir(args)
	var out []string
	for _, f := range gitPatchOperands(rest) {
		if f == "-" {
			continue
		}
		if dir != "" && !filepath.IsAbs(f) {
			f = filepath.Join(dir, f)
		}
		out = append(out, f)
	}
	return out
}

// runsCommand is the command uv run, poetry run (and the like) run.
func runsCommand(name string, args []shellparse.Word) (shellparse.Command, bool) {
	if len(args) == 0 || args[0].Value != "run" {
		return shellparse.Command{}, false
	}
	valued := map[string]bool{"--with": true, "--python": true, "-p": true, "--package": true, "--extra": true,
		"--group": true, "--env-file": true, "--project": true, "--directory": true, "--index": true, "-e": true, "--env": true}
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "--":
			if i+1 < len(args) {
				return shellparse.Command{Argv: args[i+1:]}, true
			}
			return shellparse.Command{}, false
		case valued[v]:
			i++
		case strings.HasPrefix(v, "-"):
		default:
			return shellparse.Command{Argv: args[i:]}, true
		}
	}
	return shellparse.Command{}, false
}

// pythonModule reads python's -m MODULE and the words after it.
func pythonModule(args []string) (string, []string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-m" && i+1 < len(args):
			return args[i+1], args[i+2:], true
		case strings.HasPrefix(a, "-m") && len(a) > 2:
			return a[2:], args[i+1:], true
		case a == "-c" || strings.HasPrefix(a, "-c") || a == "-" || !strings.HasPrefix(a, "-"):
			return "", nil, false
		case a == "-W" || a == "-X" || a == "-Q":
			i++
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a[1:], "cm"):
			// -Im: a cluster ending with m takes the next word.
			if strings.HasSuffix(a, "m") && i+1 < len(args) {
				return args[i+1], args[i+2:], true
			}
			return "", nil, false
		}
	}
	return "", nil, false
}

// moduleFacts bind what python -m MODULE finds first: the module's files
// in the working directory.
func moduleFacts(mod, dir string) []string {
	if mod == "" || strings.ContainsAny(mod, "/\\") || strings.HasPrefix(mod, ".") {
		return nil
	}
	p := filepath.Join(dir, strings.ReplaceAll(mod, ".", "/"))
	var out []string
	for _, f := range []string{p + ".py", filepath.Join(p, "__init__.py"), filepath.Join(p, "__main__.py")} {
		out = append(out, "file "+f+" "+fileDigest(f))
	}
	if i := strings.IndexByte(mod, '.'); i > 0 {
		top := filepath.Join(dir, mod[:i], "__init__.py")
		out = append(out, "file "+top+" "+fileDigest(top))
	}
	return out
}

// packageScriptFacts bind what the package.json scripts a package
// manager's command runs run.
func packageScriptFacts(prog string, args []string, dir string, place classify.Place, env envFacts, depth int) []string {
	if depth >= maxScriptDepth {
		return nil
	}
	sub, target, pkgDir := packageCommand(prog, args)
	if pkgDir != "" {
		if !filepath.IsAbs(pkgDir) {
			pkgDir = filepath.Join(dir, pkgDir)
		}
		dir = filepath.Clean(pkgDir)
	}
	pj := filepath.Join(dir, "package.json")
	var out []string
	if pkgDir != "" {
		// Another directory's package.json: bound here, as scriptFiles
		// binds the working directory's.
		out = append(out, "file "+pj+" "+fileDigest(pj))
	}
	scripts := readScripts(pj)
	if len(scripts) == 0 {
		return out
	}
	names := scriptsRun(prog, sub, target, scripts)
	if len(names) == 0 {
		return out
	}
	// Scripts run with the package's node_modules/.bin first on PATH.
	senv := env
	if env.known {
		senv.binPath = filepath.Join(dir, "node_modules", ".bin") + ":" + envValue(env.vars, "PATH")
	}
	for _, n := range names {
		src, ok := scripts[n]
		if !ok {
			continue
		}
		if !env.spend(1) {
			return append(out, "truncated")
		}
		s, err := shellparse.ParseScript(src, shellparse.Env{Home: place.Home, Cwd: dir})
		if err != nil {
			continue // the script's text is bound with package.json
		}
		sp := classify.PlaceOf(s, dir, place.Home)
		sp.Workspace = place.Workspace
		for _, c := range s.Commands {
			out = append(out, commandFactsDepth(c, sp, senv, depth+1)...)
		}
	}
	return out
}

// readScripts reads package.json's scripts.
func readScripts(pj string) map[string]string {
	f, err := os.Open(pj)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPackageJSON))
	if err != nil {
		return nil
	}
	var doc struct {
		Scripts map[string]json.RawMessage `json:"scripts"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	out := map[string]string{}
	for k, v := range doc.Scripts {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = s
		}
	}
	return out
}

// packageCommand reads a package manager's command line: its
// subcommand, the script named after run (or the subcommand itself),
// and the directory it works in (--prefix, -C, --cwd, --dir).
func packageCommand(prog string, args []string) (sub, target, dir string) {
	valued := map[string]bool{"--prefix": true, "-C": true, "--cwd": true, "--dir": true, "-w": true, "--workspace": true,
		"--filter": true, "-F": true, "--registry": true, "--cache": true, "--userconfig": true, "--loglevel": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		opt, val, eq := strings.Cut(a, "=")
		switch {
		case a == "--":
			if sub != "" && target == "" && i+1 < len(args) {
				target = args[i+1]
			}
			return sub, target, dir
		case valued[opt]:
			if !eq && i+1 < len(args) {
				i++
				val = args[i]
			}
			switch opt {
			case "--prefix", "-C", "--cwd", "--dir":
				dir = val
			case "-w", "--workspace":
				// A workspace named by its directory; one named by its
				// package name is not followed.
				if strings.Contains(val, "/") || strings.HasPrefix(val, ".") {
					dir = filepath.Join(dir, val)
				}
			}
		case strings.HasPrefix(a, "-"):
		case sub == "":
			sub = a
		case target == "":
			target = a
		}
	}
	return sub, target, dir
}

// scriptsRun names the scripts a package manager's subcommand runs, with
// their pre and post scripts.
func scriptsRun(prog, sub, target string, scripts map[string]string) []string {
	around := func(n ...string) []string {
		var out []string
		for _, s := range n {
			out = append(out, "pre"+s, s, "post"+s)
		}
		return out
	}
	install := []string{"preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare"}
	switch sub {
	case "run", "run-script", "rum", "urn":
		if target == "" {
			return nil
		}
		return around(target)
	case "test", "t", "tst":
		return around("test")
	case "start", "stop":
		return around(sub)
	case "restart":
		return around("restart", "stop", "start")
	case "", "install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall", "add",
		"ci", "clean-install", "ic", "install-clean", "isntall-clean", "rebuild", "rb":
		if sub == "" && prog != "yarn" {
			return nil
		}
		return install
	case "install-test", "it", "install-ci-test", "cit":
		return append(install, around("test")...)
	case "pack", "publish":
		return append(around("pack", "publish"), "prepare", "prepublishOnly", "prepublish")
	case "version":
		return around("version")
	}
	if prog != "npm" {
		// yarn X, pnpm X, bun X run the script X.
		if _, ok := scripts[sub]; ok {
			return around(sub)
		}
	}
	return nil
}

// Directories pytest does not enter by default (norecursedirs), and
// virtual environments.
func pytestSkips(dir string, d fs.DirEntry) bool {
	n := d.Name()
	switch {
	case strings.HasPrefix(n, "."), strings.HasSuffix(n, ".egg"):
		return true
	}
	switch n {
	case "build", "dist", "node_modules", "venv", "CVS", "_darcs", "{arch}", "__pycache__":
		return true
	}
	_, err := os.Stat(filepath.Join(dir, "pyvenv.cfg"))
	return err == nil
}

// pytestFacts bind pytest's configuration files and conftest.py files
// for a run in dir with args.
func pytestFacts(args []string, dir, ws string) []string {
	valued := map[string]bool{"-c": true, "--config-file": true, "--rootdir": true, "-p": true, "-k": true, "-m": true,
		"-o": true, "--override-ini": true, "--confcutdir": true, "--basetemp": true, "-W": true, "--pythonwarnings": true,
		"--maxfail": true, "--deselect": true, "--ignore": true, "--ignore-glob": true, "--log-level": true, "--log-file": true,
		"--junitxml": true, "--junit-xml": true, "--durations": true, "--import-mode": true, "--cov": true, "--cov-report": true,
		"--cov-config": true, "--timeout": true, "-n": true, "--dist": true, "--tb": true, "--capture": true, "-r": true}
	var paths, configs, plugins []string
	noConftest := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		opt, val, eq := strings.Cut(a, "=")
		switch {
		case a == "--noconftest":
			noConftest = true
		case valued[opt]:
			if !eq && i+1 < len(args) {
				i++
				val = args[i]
			}
			switch opt {
			case "-c", "--config-file":
				configs = append(configs, val)
			case "-p":
				if !strings.HasPrefix(val, "no:") {
					plugins = append(plugins, val)
				}
			}
		case strings.HasPrefix(a, "-p") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			plugins = append(plugins, a[2:])
		case strings.HasPrefix(a, "-c") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			configs = append(configs, a[2:])
		case strings.HasPrefix(a, "-"):
		default:
			p, _, _ := strings.Cut(a, "::")
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	top := dir
	if ws != "" && classify.Within(ws, dir) {
		top = ws
	}
	var out []string
	bind := func(p string, ifPresent bool) {
		d := fileDigest(p)
		if ifPresent && d == "absent" {
			return
		}
		out = append(out, "file "+p+" "+d)
	}
	for _, c := range configs {
		if !filepath.IsAbs(c) {
			c = filepath.Join(dir, c)
		}
		bind(c, false)
	}
	for _, p := range plugins {
		out = append(out, moduleFacts(p, dir)...)
	}
	walked := 0
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		fi, err := os.Stat(p)
		start := p
		if err != nil || !fi.IsDir() {
			start = filepath.Dir(p)
		}
		// Upwards: the configuration files (inside the workspace even
		// where absent, above it where present) and each conftest.py up
		// to the workspace's root.
		for d := start; ; d = filepath.Dir(d) {
			inside := classify.Within(top, d)
			if len(configs) == 0 {
				for _, n := range []string{"pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"} {
					bind(filepath.Join(d, n), !inside)
				}
			}
			if inside && !noConftest {
				bind(filepath.Join(d, "conftest.py"), false)
			}
			if d == filepath.Dir(d) {
				break
			}
		}
		if noConftest || err != nil || !fi.IsDir() {
			continue
		}
		// Downwards: every conftest.py pytest may collect.
		filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if q != p && pytestSkips(q, d) {
				return filepath.SkipDir
			}
			if walked++; walked > maxConftestDirs {
				out = append(out, "conftest "+p+" truncated")
				return filepath.SkipAll
			}
			if q != p {
				bind(filepath.Join(q, "conftest.py"), true)
			}
			return nil
		})
	}
	return out
}
