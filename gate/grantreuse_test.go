package gate

import (
	"context"
	"slices"
	"testing"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
)

// activeNetworkGrants lists the identity's active network:http grants by
// target.
func activeNetworkGrants(t *testing.T, f *fixture) map[string][]approvals.GrantRecord {
	t.Helper()
	list, err := f.store(t).ListGrantRecords(context.Background(), approvals.GrantFilter{Channel: "cli", Sender: "dev"}, f.now)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]approvals.GrantRecord{}
	for _, r := range list {
		if r.Capability == classify.NetworkHTTP {
			out[r.Target] = append(out[r.Target], r)
		}
	}
	return out
}

// TestApproveReusesHeldGrants: --remember on fetches that reach the same
// registries records each network grant once: a second approval reuses
// the grant held (and says so), a longer concession replaces a shorter
// one, never two active grants for the same identity, capability, target
// and session.
func TestApproveReusesHeldGrants(t *testing.T) {
	f, _ := bindFixture(t)
	ctx := context.Background()
	f.write(t, "go.mod", "module example.com/m\n\ngo 1.22\n")
	approve := func(remember string, argv ...string) Approved {
		t.Helper()
		d := f.decide(t, Mode{SpendTicket: true}, argv...)
		if d.Outcome != policy.Ask {
			t.Fatalf("%v: %s (%s)", argv, d.Outcome, d.Reason)
		}
		a, err := f.g.Approve(ctx, d.Approval.Token, dev, ApproveOptions{Remember: remember})
		if err != nil {
			t.Fatalf("%v: %v", argv, err)
		}
		return a
	}

	first := approve("session", "go", "mod", "download")
	if len(first.Grants) != 2 || len(first.Reused) != 0 {
		t.Fatalf("first approval: grants %+v, reused %v; want two new grants", first.Grants, first.Reused)
	}
	// A second session concession lasts no longer: the grants are reused.
	second := approve("session", "go", "get", "golang.org/x/text@v0.14.0")
	if len(second.Reused) != 2 {
		t.Errorf("second approval: reused %v, grants %+v; want both held grants reused", second.Reused, second.Grants)
	}
	// A permanent concession lasts longer: it replaces them.
	third := approve("permanent", "go", "mod", "tidy")
	if len(third.Reused) != 0 || len(third.Grants) != 2 {
		t.Errorf("permanent approval: grants %+v, reused %v; want two new grants", third.Grants, third.Reused)
	}
	f.reload(t)
	fourth := approve("permanent", "go", "get", "golang.org/x/net@v0.20.0")
	if len(fourth.Reused) != 2 {
		t.Errorf("second permanent approval: reused %v; want both permanent grants reused", fourth.Reused)
	}
	for target, rs := range activeNetworkGrants(t, f) {
		if len(rs) != 1 {
			t.Errorf("%s: %d active grants %+v, want one", target, len(rs), rs)
			continue
		}
		if rs[0].ExpiresAt != nil || !slices.ContainsFunc(third.Grants, func(g policy.Grant) bool { return g.ID == rs[0].ID }) {
			t.Errorf("%s: the active grant is %+v, want the permanent one", target, rs[0])
		}
	}
}

// TestRememberedRuleSpendsItsGrants: a command a rule remembered on
// approval allows runs on the grants that approval recorded for its
// network: each run counts a use of them and stamps the time, so grants
// list shows them used (they read "uses 0, last used never" while the
// rule settled the command without consulting them). A dry run spends
// nothing.
func TestRememberedRuleSpendsItsGrants(t *testing.T) {
	f, _ := bindFixture(t)
	ctx := context.Background()
	f.write(t, "go.mod", "module example.com/m\n\ngo 1.22\n")
	argv := []string{"go", "get", "golang.org/x/text@v0.14.0"}
	for _, remember := range []string{"session", "permanent"} {
		d := f.decide(t, Mode{SpendTicket: true}, argv...)
		if d.Outcome != policy.Ask {
			t.Fatalf("%s: %s (%s)", remember, d.Outcome, d.Reason)
		}
		if _, err := f.g.Approve(ctx, d.Approval.Token, dev, ApproveOptions{Remember: remember}); err != nil {
			t.Fatal(err)
		}
		if remember == "permanent" {
			f.reload(t)
		}
		if d := f.decide(t, Mode{DryRun: true}, argv...); d.Outcome != policy.Allow {
			t.Fatalf("%s: the rerun: %s (%s)", remember, d.Outcome, d.Reason)
		}
		f.now = f.now.Add(1)
		if d := f.decide(t, Mode{SpendTicket: true}, argv...); d.Outcome != policy.Allow {
			t.Fatalf("%s: the run: %s (%s)", remember, d.Outcome, d.Reason)
		}
		held := activeNetworkGrants(t, f)
		if len(held) != 2 {
			t.Errorf("%s: network grants %+v, want the proxy's and the checksum database's", remember, held)
		}
		for target, rs := range held {
			if len(rs) != 1 || rs[0].Uses != 1 || rs[0].LastUsed == nil || !rs[0].LastUsed.Equal(f.now) {
				t.Errorf("%s: %s: %+v; want one grant used once, now", remember, target, rs)
			}
		}
		// The next concession starts from a fresh state.
		f, _ = bindFixture(t)
		f.write(t, "go.mod", "module example.com/m\n\ngo 1.22\n")
	}
}
