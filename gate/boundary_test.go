package gate

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// imports returns the imports of a package's non-test files.
func imports(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	out := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			out[p] = true
		}
	}
	return out
}

// TestDecisionPackagesStayPure: the packages that decide never run
// programs, open sockets or databases.
func TestDecisionPackagesStayPure(t *testing.T) {
	for _, dir := range []string{"shellparse", "classify", "vaglio", "policy"} {
		for p := range imports(t, dir) {
			if p == "os/exec" || p == "net" || strings.HasPrefix(p, "net/http") || p == "database/sql" || strings.Contains(p, "sqlite") {
				t.Errorf("%s imports %s", dir, p)
			}
		}
	}
}

// TestDataFlowsOneWay: shellparse, audit, later and journal import
// nothing of ours, sandbox only later, classify only shellparse and later, vaglio
// and policy only shellparse and classify, approvals only policy and
// classify.
func TestDataFlowsOneWay(t *testing.T) {
	const mod = "github.com/mnemos-dev/mnemos/"
	allowed := map[string][]string{
		"shellparse": nil,
		"audit":      nil,
		"later":      nil,
		"journal":    nil,
		"sandbox":    {"later"},
		"classify":   {"shellparse", "later"},
		"vaglio":     {"shellparse", "classify"},
		"policy":     {"shellparse", "classify"},
		"approvals":  {"policy", "classify"},
	}
	for dir, ok := range allowed {
		for p := range imports(t, dir) {
			if !strings.HasPrefix(p, mod) {
				continue
			}
			own := strings.TrimPrefix(p, mod)
			found := false
			for _, o := range ok {
				found = found || o == own
			}
			if !found {
				t.Errorf("%s imports %s", dir, own)
			}
		}
	}
}
