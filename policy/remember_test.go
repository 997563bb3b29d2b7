package policy

import (
	"strings"
	"testing"
)

var (
	pin1 = "sha256:" + strings.Repeat("1", 64)
	pin2 = "sha256:" + strings.Repeat("2", 64)
)

// TestSecurityPrefixEscapeNamesEscapingWordsInAPrefix: the words of a
// prefix remembered on approval never hold an option that makes the
// program run other code, read other files or work elsewhere.
func TestSecurityPrefixEscapeNamesEscapingWordsInAPrefix(t *testing.T) {
	for _, p := range []string{
		"make -f evil.mk test", "make -C /tmp test", "make --eval=x:=1", "make SHELL=/tmp/sh test", "make -E x test",
		"npm --prefix /tmp run lint", "git -c core.pager=sh commit", "git -C /tmp commit", "git --git-dir=/x log",
		"go -toolexec=/tmp/x test", "go test -exec /tmp/x", "cargo --config x build", "cargo -Zunstable build",
		"pip install --index-url http://evil x", "git submodule foreach", "git rebase -x sh",
	} {
		if why := PrefixEscape(strings.Fields(p)); why == "" {
			t.Errorf("%s: no escape found", p)
		} else if strings.Contains(why, "after the prefix") {
			t.Errorf("%s: %q speaks of words after the prefix", p, why)
		}
	}
	for _, p := range []string{"make test", "make -j4 test", "go test", "go test -run X", "npm run lint", "git commit",
		"git commit -m fix", "cargo build --release", "make", "pytest -x"} {
		if why := PrefixEscape(strings.Fields(p)); why != "" {
			t.Errorf("%s: %s", p, why)
		}
	}
}

func TestAddRememberedRules(t *testing.T) {
	out, err := AddRememberedRules("p.yaml", []byte("level: supervised\n"), []RememberedRule{
		{Name: "allow go test", ArgvPrefix: []string{"go", "test"}, Pin: pin1},
		{Name: "allow make", ArgvPrefix: []string{"make"}, Pin: pin2, Exact: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse("p.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rules) != 2 || p.Rules[1].Pin != pin2 || len(p.Rules[1].Conditions) != 1 || len(p.Rules[0].Conditions) != 0 {
		t.Fatalf("rules: %+v\n%s", p.Rules, out)
	}
	if !strings.Contains(string(out), `argc: {equals: 1}`) {
		t.Errorf("the exact rule holds no argc condition:\n%s", out)
	}
}

func TestTailEscape(t *testing.T) {
	for _, c := range []struct {
		argv string
		n    int
		want bool
	}{
		{"go build -o bin/x ./cmd/x", 2, true},
		{"go build ./...", 2, false},
		{"make test -f other.mk", 2, true},
		{"make -f ci.mk test", 3, false}, // in the prefix: PrefixEscape's
		{"git commit -m x", 2, false},
		{"npm run lint --prefix /tmp", 3, true},
		{"go test", 2, false},
	} {
		if got := TailEscape(strings.Fields(c.argv), c.n) != ""; got != c.want {
			t.Errorf("TailEscape(%s, %d) = %v", c.argv, c.n, got)
		}
	}
}
