package gate

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
)

func manifest(t *testing.T, src string) *policy.Manifest {
	t.Helper()
	m, errs := policy.ParseManifest("ext.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return m
}

func resultFor(t *testing.T, a Admitted, c classify.Capability) ExtensionResult {
	t.Helper()
	for _, r := range a.Capabilities {
		if r.Capability == c {
			return r
		}
	}
	t.Fatalf("no result for %s in %+v", c, a)
	return ExtensionResult{}
}

var dev = approvals.Identity{Channel: "cli", Sender: "dev"}

// TestAdmitExtensionLedger: a granted capability is a grant for the
// extension's identity; one that needs a person is a pending request the
// admitting person approves, which records the grant and no ticket; a
// denied one records nothing. Every step is audited.
func TestAdmitExtensionLedger(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	m := manifest(t, `name: notes
version: "1.0"
capabilities:
  - {capability: fs:read, target: ~/notes/**, why: read notes}
  - {capability: fs:write, target: ~/notes/out/**, why: write summaries}
  - {capability: network:http, target: "*", why: anything}
`)
	a, err := f.g.AdmitExtension(ctx, m, dev, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Outcome != policy.Deny || a.Level != "supervised" {
		t.Fatalf("outcome %s at %s", a.Outcome, a.Level)
	}
	read := resultFor(t, a, classify.FSRead)
	if read.State != StateGranted || read.Grant == nil || read.Grant.Channel != ExtensionChannel ||
		read.Grant.Sender != "notes" || read.Grant.Target != f.home+"/notes/**" {
		t.Fatalf("fs:read: %+v", read)
	}
	write := resultFor(t, a, classify.FSWrite)
	if write.State != StatePending || write.Approval == "" {
		t.Fatalf("fs:write: %+v", write)
	}
	if net := resultFor(t, a, classify.NetworkHTTP); net.State != StateDenied || net.Class != policy.DeniedAmbient {
		t.Fatalf("network: %+v", net)
	}
	for kind, n := range map[string]int{"extension.granted": 1, "extension.requested": 1, "extension.denied": 1, "extension.admitted": 1, "grant.recorded": 1} {
		if got := f.audit.count(kind); got != n {
			t.Errorf("%s: %d events, want %d", kind, got, n)
		}
	}

	// The grant covers the extension's identity, not the person's.
	st, _ := f.g.Store(ctx)
	if _, ok, _ := st.CoveringGrant(ctx, ExtensionChannel, "notes", classify.FSRead, f.home+"/notes/a.md", "", f.now); !ok {
		t.Error("extension grant does not cover its target")
	}
	if _, ok, _ := st.CoveringGrant(ctx, "cli", "dev", classify.FSRead, f.home+"/notes/a.md", "", f.now); ok {
		t.Error("extension grant covers the person")
	}

	// Admitting again reuses the grant and the open request.
	again, err := f.g.AdmitExtension(ctx, m, dev, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := resultFor(t, again, classify.FSRead); r.Grant == nil || r.Grant.ID != read.Grant.ID {
		t.Errorf("second admission recorded a new grant: %+v", r)
	}
	if r := resultFor(t, again, classify.FSWrite); r.Approval != write.Approval {
		t.Errorf("second admission asked again: %+v", r)
	}

	// Someone else cannot approve it; the person who admitted can.
	if _, err := f.g.Approve(ctx, write.Approval, approvals.Identity{Channel: "cli", Sender: "mallory"}, ApproveOptions{}); !errors.Is(err, approvals.ErrNotRequester) {
		t.Fatalf("approve by another: %v", err)
	}
	if _, err := f.g.Approve(ctx, write.Approval, dev, ApproveOptions{Remember: "session"}); err == nil {
		t.Fatal("a session-limited extension grant was accepted")
	}
	res, err := f.g.Approve(ctx, write.Approval, dev, ApproveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Grants) != 1 || res.Grants[0].Channel != ExtensionChannel || res.Grants[0].Sender != "notes" ||
		res.Grants[0].Capability != classify.FSWrite || res.Grants[0].Target != f.home+"/notes/out/**" {
		t.Fatalf("approval grants: %+v", res.Grants)
	}
	if f.audit.count("extension.granted") != 2 {
		t.Errorf("approval wrote %d extension.granted", f.audit.count("extension.granted"))
	}
	// No run ticket is left behind for a request that has no command.
	if _, ok, _ := st.SpendTicket(ctx, res.Pending.RequestKey, f.now); ok {
		t.Error("approving an extension request issued a ticket")
	}

	exts, err := f.g.Extensions(ctx, false)
	if err != nil || len(exts) != 1 || exts[0].Name != "notes" || len(exts[0].Grants) != 2 || len(exts[0].Pending) != 0 {
		t.Fatalf("Extensions = %+v, %v", exts, err)
	}

	rev, ok, err := f.g.RevokeExtension(ctx, "notes", dev)
	if err != nil || !ok || len(rev.Grants) != 2 {
		t.Fatalf("RevokeExtension = %+v, %v, %v", rev, ok, err)
	}
	if _, ok, _ := st.CoveringGrant(ctx, ExtensionChannel, "notes", classify.FSRead, f.home+"/notes/a.md", "", f.now); ok {
		t.Error("revoked grant still covers")
	}
	if f.audit.count("extension.revoked") != 1 || f.audit.count("grant.revoked") != 2 {
		t.Errorf("revoke events: %v", f.audit.kinds)
	}
	if _, ok, err := f.g.RevokeExtension(ctx, "notes", dev); ok || err != nil {
		t.Errorf("second revoke: %v %v", ok, err)
	}
}

// TestAdmitExtensionRevokeWithdrawsRequests: revoking an extension also
// withdraws its open requests, so nobody approves them later.
func TestAdmitExtensionRevokeWithdrawsRequests(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	a, err := f.g.AdmitExtension(ctx, manifest(t, "name: up\ncapabilities:\n  - {capability: network:http, target: api.example.com, why: upload}\n"), dev, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok := a.Capabilities[0].Approval
	rev, ok, err := f.g.RevokeExtension(ctx, "up", dev)
	if err != nil || !ok || len(rev.Cancelled) != 1 || rev.Cancelled[0] != tok {
		t.Fatalf("RevokeExtension = %+v, %v, %v", rev, ok, err)
	}
	if _, err := f.g.Approve(ctx, tok, dev, ApproveOptions{}); !errors.Is(err, approvals.ErrAlreadyResolved) {
		t.Fatalf("approving a withdrawn request: %v", err)
	}
}

// TestSecurityAdmitExtensionSelfGranting: a target reaching mnemos's own
// files, or what the guard forbids, is denied, judged by the gate's own
// paths and the guard.
func TestSecurityAdmitExtensionSelfGranting(t *testing.T) {
	f := newFixture(t, "level: full\n")
	ctx := context.Background()
	cfg := f.g.Config().Paths
	for _, c := range []struct{ capLine, want string }{
		{"{capability: fs:write, target: '" + cfg.PolicyFile + "', why: x}", "covers mnemos's own"},
		{"{capability: fs:read, target: '" + cfg.StateDir + "/**', why: x}", "covers mnemos's own"},
		{"{capability: fs:write, target: '" + cfg.ConfigDir + "/*.yaml', why: x}", "covers mnemos's own"},
		{"{capability: fs:write, target: '" + f.home + "/**', why: x}", "ambient"},
		{"{capability: fs:read, target: ~/.ssh/**, why: x}", "forbidden-path"},
		{"{capability: fs:read, target: ~/.ssh/id_ed25519, why: x}", "forbidden-path"},
		{"{capability: fs:read, target: /etc/shadow, why: x}", "forbidden-path"},
		{"{capability: fs:write, target: '" + f.home + "/.mnemos/**', why: x}", "self-granting"},
		{"{capability: code:exec, target: mnemos approvals approve abc, why: x}", "self-tamper"},
		{"{capability: code:exec, target: 'cat ~/.ssh/id_rsa', why: x}", "forbidden-path"},
	} {
		a, err := f.g.AdmitExtension(ctx, manifest(t, "name: sneaky\ncapabilities:\n  - "+c.capLine+"\n"), dev, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := a.Capabilities[0]
		if r.State != StateDenied || r.Grant != nil || r.Approval != "" || !strings.Contains(r.Reason, c.want) {
			t.Errorf("%s: %s %s %q, want denied with %q", c.capLine, r.State, r.Class, r.Reason, c.want)
		}
	}
	// A self-granting code:exec is named as such, not only as per-command.
	a, _ := f.g.AdmitExtension(ctx, manifest(t, "name: sneaky\ncapabilities:\n  - {capability: code:exec, target: mnemos grants revoke 1, why: x}\n"), dev, nil)
	if a.Capabilities[0].Class != policy.DeniedSelfGrant {
		t.Errorf("code:exec running mnemos: %+v", a.Capabilities[0])
	}
	st, _ := f.g.Store(ctx)
	if gs, _ := st.ListGrants(ctx, approvals.GrantFilter{}, f.now); len(gs) != 0 {
		t.Errorf("grants recorded: %+v", gs)
	}
}

// TestSecurityAdmitExtensionLevel: the level the policy gives the
// extension's identity is the ceiling; --level only lowers it.
func TestSecurityAdmitExtensionLevel(t *testing.T) {
	f := newFixture(t, "level: full\n")
	ctx := context.Background()
	m := manifest(t, "name: w\ncapabilities:\n  - {capability: fs:write, target: /srv/out/**, why: w}\n  - {capability: fs:read, target: /srv/in/**, why: r}\n")
	ro := policy.ReadOnly
	a, err := f.g.AdmitExtension(ctx, m, dev, &ro)
	if err != nil {
		t.Fatal(err)
	}
	if a.Level != "readonly" || resultFor(t, a, classify.FSWrite).Class != policy.DeniedLevel || resultFor(t, a, classify.FSRead).State != StateGranted {
		t.Fatalf("%+v", a)
	}
	// Even at full, writing waits for a person.
	a, err = f.g.AdmitExtension(ctx, m, dev, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resultFor(t, a, classify.FSWrite).State != StatePending {
		t.Fatalf("%+v", a)
	}
}

// TestSecurityExtensionAdmitIsSelfTamperThroughTheGate: a gated command
// may not admit an extension, revoke one, or approve its requests.
func TestSecurityExtensionAdmitIsSelfTamperThroughTheGate(t *testing.T) {
	f := newFixture(t, "level: full\n")
	for _, argv := range [][]string{
		{"mnemos", "extensions", "admit", "ext.yaml"},
		{"mnemos", "extensions", "revoke", "notes"},
		{"mnemos", "run", "--", "mnemos", "extensions", "admit", "ext.yaml"},
		{"sh", "-c", "mnemos extensions admit ext.yaml"},
	} {
		d := f.decide(t, Mode{DryRun: true}, argv...)
		if d.Outcome != policy.Deny || d.BlockedBy != "guard" || d.Commands[0].Guard == nil || d.Commands[0].Guard.Check != "self-tamper" {
			t.Errorf("%v: %s by %s (%s)", argv, d.Outcome, d.BlockedBy, d.Reason)
		}
	}
}
