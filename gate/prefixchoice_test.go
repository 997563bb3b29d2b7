package gate

import (
	"context"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityRememberedInstallKeepsItsName: a subcommand that installs or
// runs what it names (npm install PKG, go get PKG) is remembered with the
// name, whatever --prefix asks: a bare npm install (package.json's
// dependencies) is remembered exactly, never as a prefix that would let
// npm install left-pad through; --prefix "npm install" on npm install
// ms@2.1.3, and --prefix "go get" on a go get, are refused, and the
// refusal lists the prefixes that can be remembered. The one rule is the
// same for both programs.
func TestSecurityRememberedInstallKeepsItsName(t *testing.T) {
	ctx := context.Background()
	for _, remember := range []string{"session", "permanent"} {
		f, _ := bindFixture(t)
		f.write(t, "package.json", `{"name": "x"}`)
		d := f.decide(t, Mode{SpendTicket: true}, "npm", "install")
		if d.Outcome != policy.Ask {
			t.Fatalf("npm install: %s (%s)", d.Outcome, d.Reason)
		}
		choices := strings.Join(RememberChoices(*d.Approval), "\n")
		if !strings.Contains(choices, "allow npm install (exactly)") || !strings.Contains(choices, "no other prefix can be remembered") {
			t.Errorf("npm install: choices\n%s\nwant npm install exactly and no other prefix", choices)
		}
		a, err := f.g.Approve(ctx, d.Approval.Token, dev, ApproveOptions{Remember: remember, Prefixes: [][]string{{"npm", "install"}}})
		if err != nil {
			t.Fatalf("--remember %s --prefix \"npm install\" on a bare npm install: %v", remember, err)
		}
		exact := len(a.SessionRules) == 1 && a.SessionRules[0].Exact || len(a.Rules) == 1 && a.Rules[0].Exact
		if !exact {
			t.Errorf("--remember %s: rules %+v, session rules %+v; want npm install exactly", remember, a.Rules, a.SessionRules)
		}
		if remember == "permanent" {
			f.reload(t)
		}
		if d := f.decide(t, Mode{DryRun: true}, "npm", "install", "left-pad"); d.Outcome == policy.Allow {
			t.Errorf("--remember %s: npm install left-pad allowed (%s) by a rule for a bare npm install", remember, d.Reason)
		}
		if d := f.decide(t, Mode{DryRun: true}, "npm", "install"); d.Outcome != policy.Allow {
			t.Errorf("--remember %s: npm install again: %s (%s); want allowed by the rule", remember, d.Outcome, d.Reason)
		}
	}

	f, _ := bindFixture(t)
	for _, tc := range []struct {
		argv   []string
		prefix []string
		want   string
	}{
		{[]string{"npm", "install", "ms@2.1.3"}, []string{"npm", "install"}, `"npm install ms@2.1.3"`},
		{[]string{"go", "get", "golang.org/x/exp/constraints@latest"}, []string{"go", "get"}, `"go get golang.org/x/exp/constraints@latest"`},
	} {
		d := f.decide(t, Mode{SpendTicket: true}, tc.argv...)
		if d.Outcome != policy.Ask {
			t.Fatalf("%v: %s (%s)", tc.argv, d.Outcome, d.Reason)
		}
		_, err := f.g.Approve(ctx, d.Approval.Token, dev, ApproveOptions{Remember: "session", Prefixes: [][]string{tc.prefix}})
		if err == nil {
			t.Errorf("%v: --prefix %q accepted", tc.argv, tc.prefix)
			continue
		}
		if !strings.Contains(err.Error(), "can be remembered") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: --prefix %q: %v; want the prefixes that can be remembered (%s)", tc.argv, tc.prefix, err, tc.want)
		}
	}
}

// TestRememberChoicesListPrefixes: the card's remember line lists the
// other prefixes --prefix may choose.
func TestRememberChoicesListPrefixes(t *testing.T) {
	f, _ := bindFixture(t)
	d := f.decide(t, Mode{SpendTicket: true}, "go", "test", "-run", "X", "./...")
	choices := strings.Join(RememberChoices(*d.Approval), "\n")
	if !strings.Contains(choices, "allow go test ...") || !strings.Contains(choices, "--prefix WORDS for another prefix: go test -run, go test -run X, go test -run X ./...") {
		t.Errorf("choices:\n%s", choices)
	}
}
