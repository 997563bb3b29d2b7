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
// and its only project import is shellparse.
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
			case strings.Contains(strings.Split(path, "/")[0], "."):
				t.Errorf("%s imports %s: only shellparse and the standard library are allowed", f, path)
			default:
				walk(path, f)
			}
		}
	}
}
