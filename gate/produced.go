package gate

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/sandbox"
)

// What a write produces. A copy into a directory writes DIR/NAME, not
// DIR; a recursive copy writes every path of the tree it copies; a patch
// writes the files it names. Outside the sandbox, where nothing hides
// what runs later, those are the paths judged (cp tpl/.envrc . plants
// .envrc; cp -r tpl/sub . plants sub/n/.git/config).

// Bounds of the walk of a copied tree and of a patch read, per request.
const (
	maxProducedEntries = 20000
	maxPatchBytes      = 4 << 20
)

// producedNeeds returns the paths the decision's copies and patches
// write besides the ones they name, as write needs, and, when a tree or
// a patch could not be read whole, why they cannot be bounded.
func producedNeeds(req Request, dec *Decision) (needs []sandbox.Need, unbounded string) {
	budget := maxProducedEntries
	for _, c := range dec.Commands {
		if c.Policy == nil || len(c.Command.Argv) == 0 {
			continue
		}
		switch c.Command.Name() {
		case "cp", "mv", "install", "rsync", "ln", "ditto":
			var srcs, dsts []string
			for _, a := range c.Policy.Accesses {
				if a.Dynamic || a.Glob || !filepath.IsAbs(a.Target) {
					continue
				}
				switch a.Capability {
				case classify.FSRead:
					srcs = append(srcs, a.Target)
				case classify.FSWrite:
					dsts = append(dsts, a.Target)
				}
			}
			for _, d := range dsts {
				if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
					continue
				}
				for _, s := range srcs {
					if s == d {
						continue
					}
					// The tree itself (cp -r tpl d), or its content
					// (cp -r tpl/. d, rsync tpl/ d): both are judged.
					into := filepath.Join(d, filepath.Base(s))
					needs = append(needs, sandbox.Need{Path: into, Write: true})
					for _, dest := range []string{into, d} {
						if why := walkTree(s, dest, &needs, &budget); why != "" {
							unbounded = why
						}
					}
				}
			}
		case "git", "patch", "gpatch":
			for _, p := range patchOutputs(req, c) {
				if p == "" {
					unbounded = "applies a patch that could not be read whole"
					continue
				}
				needs = append(needs, sandbox.Need{Path: p, Write: true})
			}
		}
	}
	return needs, unbounded
}

// walkTree adds, for each entry of the tree src (not following links),
// the path it would take below into; it says why when the tree is larger
// than the budget left.
func walkTree(src, into string, needs *[]sandbox.Need, budget *int) string {
	fi, err := os.Lstat(src)
	if err != nil || !fi.IsDir() {
		return ""
	}
	stop := false
	_ = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == src {
			return nil
		}
		if *budget <= 0 {
			stop = true
			return filepath.SkipAll
		}
		*budget--
		rel, _ := filepath.Rel(src, p)
		*needs = append(*needs, sandbox.Need{Path: filepath.Join(into, rel), Write: true})
		return nil
	})
	if stop {
		return "copies a tree of more than " + strconv.Itoa(maxProducedEntries) + " entries, which cannot be judged entry by entry"
	}
	return ""
}

// patchOutputs are the files a git apply, git am or patch command
// writes, read from the patch files it reads (the binding's patchFiles
// and gitPatchFiles say which), placed as -p/--strip and -d/--directory
// say (an empty string: a patch it could not read whole).
func patchOutputs(req Request, c CommandDecision) []string {
	args := c.Command.Strings()
	if len(args) == 0 {
		return nil
	}
	var files []string
	strip, dir := -1, req.Cwd
	if c.Command.Name() == "git" {
		if files = gitPatchFiles(args[1:]); files == nil {
			return nil
		}
		// git applies paths from the top of the work tree, a/ and b/
		// stripped.
		strip, dir = 1, Workspace(req.Cwd)
	} else {
		files = patchFiles(args[1:])
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-d" || a == "--directory") && i+1 < len(args):
			dir = joinDir(dir, args[i+1])
			i++
		case strings.HasPrefix(a, "--directory="):
			dir = joinDir(dir, strings.TrimPrefix(a, "--directory="))
		case (a == "-p" || a == "--strip") && i+1 < len(args):
			strip, _ = strconv.Atoi(args[i+1])
			i++
		case strings.HasPrefix(a, "-p") && len(a) > 2:
			strip, _ = strconv.Atoi(strings.TrimPrefix(a, "-p"))
		case strings.HasPrefix(a, "--strip="):
			strip, _ = strconv.Atoi(strings.TrimPrefix(a, "--strip="))
		}
	}
	for _, r := range c.Command.Redirects {
		if r.Op == "<" && !r.Target.Dynamic {
			files = append(files, r.Target.Value)
		}
	}
	// Under -d, patchFiles names a patch both where it is written and
	// under the directory: one that is missing while another was read
	// is the other place; a patch none of them names (made by an
	// earlier command of the script) cannot be read before it runs.
	var out []string
	read, missing := 0, false
	for _, f := range files {
		if !filepath.IsAbs(f) {
			f = filepath.Join(req.Cwd, f)
		}
		names, ok := patchNames(f)
		if !ok {
			if _, err := os.Stat(f); errors.Is(err, fs.ErrNotExist) {
				missing = true
			} else {
				out = append(out, "")
			}
			continue
		}
		read++
		for _, n := range names {
			out = append(out, filepath.Join(dir, stripComponents(n, strip)))
		}
	}
	if missing && read == 0 {
		out = append(out, "")
	}
	return out
}

func joinDir(base, d string) string {
	if filepath.IsAbs(d) {
		return filepath.Clean(d)
	}
	return filepath.Join(base, d)
}

// stripComponents removes n leading components of a patch's file name;
// n < 0 keeps its base name (patch without -p).
func stripComponents(name string, n int) string {
	if n < 0 {
		return filepath.Base(name)
	}
	parts := strings.Split(name, "/")
	if n >= len(parts) {
		return parts[len(parts)-1]
	}
	return strings.Join(parts[n:], "/")
}

// patchNames reads the names of the files a unified or git patch
// creates or changes: +++ lines, and git's rename to and copy to.
func patchNames(file string) ([]string, bool) {
	f, err := os.Open(file)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() > maxPatchBytes {
		return nil, false
	}
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxPatchBytes)
	for sc.Scan() {
		line := sc.Text()
		var name string
		switch {
		case strings.HasPrefix(line, "+++ "):
			name = strings.TrimPrefix(line, "+++ ")
			if i := strings.IndexByte(name, '\t'); i >= 0 {
				name = name[:i]
			}
		case strings.HasPrefix(line, "rename to "):
			name = "x/" + strings.TrimPrefix(line, "rename to ")
		case strings.HasPrefix(line, "copy to "):
			name = "x/" + strings.TrimPrefix(line, "copy to ")
		default:
			continue
		}
		name = strings.Trim(strings.TrimSpace(name), `"`)
		if name != "" && name != "/dev/null" {
			out = append(out, name)
		}
	}
	return out, sc.Err() == nil
}
