package vaglio

import (
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSecurityNoExecNetOrDatabase: vaglio decides from values alone. Neither
// it nor any standard package it uses imports os/exec, net or database/sql,
// and its only project imports are shellparse and classify (which imports
// only shellparse and later, a list of data).
func TestSecurityNoExecNetOrDatabase(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := map[string]bool{"os/exec": true, "net": true, "database/sql": true}
	seen := map[string]bool{}
	var walk func(pkg, from string)
	walk = func(pkg, from string) {
		if forbidden[pkg] {
			t.Errorf("%s imports %s", from, pkg)
		}
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		p, err := build.Default.Import(pkg, "", 0)
		if err != nil {
			t.Errorf("import %s: %v", pkg, err)
			return
		}
		for _, imp := range p.Imports {
			walk(imp, pkg)
		}
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case path == "github.com/mnemos-dev/mnemos/shellparse":
			case path == "github.com/mnemos-dev/mnemos/classify":
				// What programs do, from the catalog: its own imports are
				// held to the same rule.
				p, err := build.Default.ImportDir(filepath.Join("..", "classify"), 0)
				if err != nil {
					t.Fatalf("classify: %v", err)
				}
				for _, imp := range p.Imports {
					if imp == "github.com/mnemos-dev/mnemos/shellparse" || imp == "github.com/mnemos-dev/mnemos/later" {
						// The parser, and the list of what runs later
						// (data only, no imports of its own).
						continue
					}
					if strings.Contains(strings.Split(imp, "/")[0], ".") {
						t.Errorf("classify imports %s: only shellparse, later and the standard library are allowed", imp)
						continue
					}
					walk(imp, "classify")
				}
			case strings.Contains(strings.Split(path, "/")[0], "."):
				t.Errorf("%s imports %s: only shellparse, classify and the standard library are allowed", f, path)
			default:
				walk(path, f)
			}
		}
	}
}
