package approvals

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/policy"
)

func key(c policy.Capability, target string) policy.GrantKey {
	return policy.GrantKey{Channel: "cli", Sender: "alice", Capability: c, Target: target}
}

func TestGrantRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	exp := t0.Add(time.Hour)
	g, err := s.RecordGrant(ctx, key(policy.FSWrite, "/proj/**"),
		GrantOptions{ExpiresAt: &exp, GrantedBy: "cli:alice", Approval: "ABC"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if g.ID == 0 || !g.GrantedAt.Equal(t0) || !g.ExpiresAt.Equal(exp) || g.Approval != "abc" {
		t.Errorf("recorded %+v", g)
	}
	for _, tc := range []struct {
		name           string
		channel, snd   string
		c              policy.Capability
		target, sess   string
		at             time.Time
		want           bool
		wantErrUnknown bool
	}{
		{"exact four-tuple", "cli", "alice", policy.FSWrite, "/proj/**", "", t0, true, false},
		{"glob covers a file deep below", "cli", "alice", policy.FSWrite, "/proj/a/b", "", t0, true, false},
		{"glob covers the directory itself", "cli", "alice", policy.FSWrite, "/proj", "", t0, true, false},
		{"sibling prefix is not below", "cli", "alice", policy.FSWrite, "/project/a", "", t0, false, false},
		{"other capability", "cli", "alice", policy.FSRead, "/proj/a", "", t0, false, false},
		{"other sender", "cli", "bob", policy.FSWrite, "/proj/a", "", t0, false, false},
		{"other channel", "telegram", "alice", policy.FSWrite, "/proj/a", "", t0, false, false},
		{"just before expiry", "cli", "alice", policy.FSWrite, "/proj/a", "", exp.Add(-time.Nanosecond), true, false},
		{"at expiry", "cli", "alice", policy.FSWrite, "/proj/a", "", exp, false, false},
		{"after expiry", "cli", "alice", policy.FSWrite, "/proj/a", "", exp.Add(time.Hour), false, false},
		{"unknown capability", "cli", "alice", "fs:delete", "/proj/a", "", t0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := s.CoveringGrant(ctx, tc.channel, tc.snd, tc.c, tc.target, tc.sess, tc.at)
			if errors.Is(err, policy.ErrUnknownCapability) != tc.wantErrUnknown || (err != nil && !tc.wantErrUnknown) {
				t.Fatalf("err = %v", err)
			}
			if ok != tc.want || (ok && got.ID != g.ID) {
				t.Errorf("CoveringGrant = %+v, %v; want %v", got, ok, tc.want)
			}
		})
	}
	var lastUsed string
	s.db.QueryRow("SELECT last_used FROM grants WHERE id = ?", g.ID).Scan(&lastUsed)
	if lastUsed == "" {
		t.Error("last_used not stamped on a match")
	}
}

func TestRecordGrantRefusals(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	past := t0.Add(-time.Second)
	for _, tc := range []struct {
		name string
		k    policy.GrantKey
		o    GrantOptions
		is   error
	}{
		{"unknown capability", key("fs:delete", "/proj/**"), GrantOptions{}, policy.ErrUnknownCapability},
		{"root", key(policy.FSWrite, "/"), GrantOptions{}, ErrTargetTooBroad},
		{"root glob", key(policy.FSWrite, "/**"), GrantOptions{}, ErrTargetTooBroad},
		{"star", key(policy.NetworkHTTP, "*"), GrantOptions{}, ErrTargetTooBroad},
		{"double star", key(policy.FSRead, "**"), GrantOptions{}, ErrTargetTooBroad},
		{"any top-level dir", key(policy.FSRead, "/*/**"), GrantOptions{}, ErrTargetTooBroad},
		{"empty target", key(policy.FSRead, " "), GrantOptions{}, nil},
		{"no sender", policy.GrantKey{Channel: "cli", Capability: policy.FSRead, Target: "/p"}, GrantOptions{}, nil},
		{"expiry in the past", key(policy.FSRead, "/p/**"), GrantOptions{ExpiresAt: &past}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.RecordGrant(ctx, tc.k, tc.o, t0)
			if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Errorf("err = %v, want %v", err, tc.is)
			}
		})
	}
	if gs, _ := s.ListGrants(ctx, GrantFilter{IncludeRevoked: true}, t0); len(gs) != 0 {
		t.Errorf("refused grants were stored: %+v", gs)
	}
}

// Seed 000: no grant is ever created for capabilities marked always, and
// none covers them even if one were written into the table by hand.
func TestSecurityNoGrantForAlwaysCapabilities(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	for _, spec := range policy.Registry() {
		if spec.DefaultApproval != policy.ApprovalAlways {
			continue
		}
		if _, err := s.RecordGrant(ctx, key(spec.Name, "/usr/bin/make"), GrantOptions{}, t0); !errors.Is(err, ErrAlwaysCapability) {
			t.Errorf("%s: err = %v, want ErrAlwaysCapability", spec.Name, err)
		}
		if _, err := s.db.Exec(`INSERT INTO grants (channel, sender_id, capability, target, granted_at)
			VALUES ('cli', 'alice', ?, '/usr/bin/make', ?)`, string(spec.Name), formatTime(t0)); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.CoveringGrant(ctx, "cli", "alice", spec.Name, "/usr/bin/make", "", t0); ok || err != nil {
			t.Errorf("%s: a hand-written grant covers (%v, %v)", spec.Name, ok, err)
		}
	}
}

func TestGrantSessionLimit(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	if _, err := s.RecordGrant(ctx, key(policy.FSRead, "/docs/**"), GrantOptions{Session: "s1"}, t0); err != nil {
		t.Fatal(err)
	}
	for sess, want := range map[string]bool{"s1": true, "s2": false, "": false} {
		if _, ok, _ := s.CoveringGrant(ctx, "cli", "alice", policy.FSRead, "/docs/x", sess, t0); ok != want {
			t.Errorf("session %q: covered %v, want %v", sess, ok, want)
		}
	}
	// A grant without a session covers every session.
	s.RecordGrant(ctx, key(policy.FSRead, "/src/**"), GrantOptions{}, t0)
	if _, ok, _ := s.CoveringGrant(ctx, "cli", "alice", policy.FSRead, "/src/x", "s9", t0); !ok {
		t.Error("an unlimited grant did not cover a session")
	}
}

func TestRevokeGrant(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	g, _ := s.RecordGrant(ctx, key(policy.FSWrite, "/proj/**"), GrantOptions{}, t0)
	if _, ok, _ := s.CoveringGrant(ctx, "cli", "alice", policy.FSWrite, "/proj/a", "", t0); !ok {
		t.Fatal("not covered before revoke")
	}
	r, ok, err := s.RevokeGrant(ctx, g.ID, t0.Add(time.Minute))
	if !ok || err != nil || r.RevokedAt == nil || !r.RevokedAt.Equal(t0.Add(time.Minute)) || r.Target != "/proj/**" {
		t.Fatalf("RevokeGrant = %+v, %v, %v", r, ok, err)
	}
	if _, ok, _ := s.CoveringGrant(ctx, "cli", "alice", policy.FSWrite, "/proj/a", "", t0.Add(time.Hour)); ok {
		t.Error("a revoked grant still covers")
	}
	for _, id := range []int64{g.ID, 999} {
		if _, ok, err := s.RevokeGrant(ctx, id, t0.Add(time.Hour)); ok || err != nil {
			t.Errorf("revoke %d again: %v, %v", id, ok, err)
		}
	}
}

func TestListGrants(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	soon := t0.Add(time.Hour)
	rec := func(ch, snd, target string, at time.Time, exp *time.Time) policy.Grant {
		g, err := s.RecordGrant(ctx, policy.GrantKey{Channel: ch, Sender: snd, Capability: policy.FSRead, Target: target},
			GrantOptions{ExpiresAt: exp}, at)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	a := rec("cli", "alice", "/a/**", t0, nil)
	b := rec("cli", "bob", "/b/**", t0.Add(time.Second), nil)
	c := rec("telegram", "alice", "/c/**", t0.Add(2*time.Second), nil)
	d := rec("cli", "alice", "/d/**", t0.Add(3*time.Second), &soon)
	e := rec("cli", "alice", "/e/**", t0.Add(4*time.Second), nil)
	s.RevokeGrant(ctx, e.ID, t0.Add(5*time.Second))

	ids := func(gs []policy.Grant) (out []int64) {
		for _, g := range gs {
			out = append(out, g.ID)
		}
		return out
	}
	later := t0.Add(2 * time.Hour) // d has expired
	for _, tc := range []struct {
		f    GrantFilter
		at   time.Time
		want []int64
	}{
		{GrantFilter{}, t0.Add(time.Minute), []int64{d.ID, c.ID, b.ID, a.ID}},
		{GrantFilter{}, later, []int64{c.ID, b.ID, a.ID}},
		{GrantFilter{Channel: "cli"}, later, []int64{b.ID, a.ID}},
		{GrantFilter{Sender: "alice"}, later, []int64{c.ID, a.ID}},
		{GrantFilter{Channel: "cli", Sender: "alice"}, later, []int64{a.ID}},
		{GrantFilter{Channel: "cli", Sender: "alice", IncludeRevoked: true}, later, []int64{e.ID, d.ID, a.ID}},
	} {
		got, err := s.ListGrants(ctx, tc.f, tc.at)
		if err != nil || fmt.Sprint(ids(got)) != fmt.Sprint(tc.want) {
			t.Errorf("ListGrants(%+v) = %v, %v; want %v", tc.f, ids(got), err, tc.want)
		}
	}
}

func TestTooBroad(t *testing.T) {
	for target, want := range map[string]bool{
		"/": true, "/**": true, "*": true, "**": true, "/*": true, "/*/**": true, "//**/**": true, "?": true,
		"/proj/**": false, "/home/*/**": false, "example.com": false, "/tmp": false, "a": false,
	} {
		if got := tooBroad(target); got != want {
			t.Errorf("tooBroad(%q) = %v, want %v", target, got, want)
		}
	}
}
