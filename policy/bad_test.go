package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecurityBadPolicyFixtures loads every malformed policy under
// testdata/bad and compares the error with the exact message in the
// sibling .want file. No malformed policy loads, so none can be permissive.
func TestSecurityBadPolicyFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Fatalf("%d fixtures, want at least 40", len(files))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".want")
			if err != nil {
				t.Fatalf("no expectation: %v", err)
			}
			p, err := Parse(name, src)
			var pe *Error
			if p != nil || !errors.As(err, &pe) {
				t.Fatalf("Parse = %v, %v; want nil and a *Error", p, err)
			}
			if got := err.Error(); got != strings.TrimSuffix(string(want), "\n") {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
			if pe.Line < 1 || pe.Col < 1 {
				t.Errorf("error without position: %v", pe)
			}
			// Load fails the same way, and Lint reports it as its first error.
			if p, err := Load(f); p != nil || err == nil || !strings.HasSuffix(err.Error(), pe.Msg) {
				t.Errorf("Load = %v, %v", p, err)
			}
			diags := Lint(name, src)
			if len(diags) == 0 || diags[0].Severity != SeverityError || diags[0].String() != err.Error() {
				t.Errorf("Lint = %v, want first %s", diags, err)
			}
		})
	}
}

func TestCRLFIsAccepted(t *testing.T) {
	lf := "level: full\nallow:\n  - name: ls\n    command: {argv_prefix: [ls]}\n"
	crlf := strings.ReplaceAll(lf, "\n", "\r\n")
	a, err := Parse("lf.yaml", []byte(lf))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("crlf.yaml", []byte(crlf))
	if err != nil {
		t.Fatal(err)
	}
	if a.Level != b.Level || len(b.Rules) != 1 || b.Rules[0].Name != "ls" || b.Rules[0].Pos.Line != 3 || b.Rules[0].ArgvPrefix[0] != "ls" {
		t.Fatalf("CRLF policy differs: %+v", b.Rules)
	}
}
