package approvals

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testPin = "sha256:" + strings.Repeat("a", 64)

func sessionRule(session string, life time.Duration, prefix ...string) SessionRule {
	return SessionRule{Channel: "cli", Sender: "alice", ArgvPrefix: prefix, Pin: testPin, Session: session,
		ExpiresAt: t0.Add(life), GrantedBy: "cli:alice", Approval: "TOK"}
}

func TestSessionRuleRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	r, err := s.RecordSessionRule(ctx, sessionRule("s1", time.Hour, "go", "test"), t0)
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != 1 || r.Label() != "r1" || r.Kind != SessionRuleKind || r.Approval != "tok" || !r.GrantedAt.Equal(t0) {
		t.Errorf("recorded: %+v", r)
	}
	ex := sessionRule("", time.Hour, "make")
	ex.Exact = true
	if _, err := s.RecordSessionRule(ctx, ex, t0); err != nil {
		t.Fatal(err)
	}
	// Session s1 sees both (one limited to it, one to none); s2 only the
	// one limited to none; another sender none.
	for _, c := range []struct {
		sender, session string
		want            int
	}{{"alice", "s1", 2}, {"alice", "s2", 1}, {"alice", "", 1}, {"bob", "s1", 0}} {
		got, err := s.ActiveSessionRules(ctx, "cli", c.sender, c.session, t0.Add(time.Minute))
		if err != nil || len(got) != c.want {
			t.Errorf("%s in %q: %d rules, %v; want %d", c.sender, c.session, len(got), err, c.want)
		}
	}
	got, _ := s.ActiveSessionRules(ctx, "cli", "alice", "s1", t0)
	if strings.Join(got[0].ArgvPrefix, " ") != "go test" || got[0].Exact || !got[1].Exact || got[1].Pin != testPin {
		t.Errorf("active: %+v", got)
	}
	// Expiry is compared when asked.
	if got, _ := s.ActiveSessionRules(ctx, "cli", "alice", "s1", t0.Add(time.Hour)); len(got) != 0 {
		t.Errorf("%d rules active at their expiry", len(got))
	}
	if l, _ := s.ListSessionRules(ctx, GrantFilter{}, t0.Add(2*time.Hour)); len(l) != 0 {
		t.Errorf("list shows %d expired rules", len(l))
	}
	if l, _ := s.ListSessionRules(ctx, GrantFilter{IncludeRevoked: true}, t0.Add(2*time.Hour)); len(l) != 2 || l[0].ID != 2 {
		t.Errorf("list --all: %+v", l)
	}
	// Revoking ends it at once, and only once.
	if r, ok, err := s.RevokeSessionRule(ctx, 1, t0.Add(time.Minute)); !ok || err != nil || r.RevokedAt == nil {
		t.Fatalf("revoke: %+v, %v, %v", r, ok, err)
	}
	if _, ok, _ := s.RevokeSessionRule(ctx, 1, t0.Add(time.Minute)); ok {
		t.Error("revoked twice")
	}
	if _, ok, _ := s.RevokeSessionRule(ctx, 99, t0); ok {
		t.Error("revoked an unknown rule")
	}
	if got, _ := s.ActiveSessionRules(ctx, "cli", "alice", "s1", t0.Add(2*time.Minute)); len(got) != 1 || got[0].ID != 2 {
		t.Errorf("after revoking r1: %+v", got)
	}
}

// TestSecuritySessionRuleAlwaysEnds: a session rule cannot be recorded
// without an end, nor with one further than MaxSessionRuleLife, nor
// unpinned.
func TestSecuritySessionRuleAlwaysEnds(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	for name, r := range map[string]SessionRule{
		"no expiry":        {Channel: "cli", Sender: "alice", ArgvPrefix: []string{"go", "test"}, Pin: testPin},
		"past":             sessionRule("s1", -time.Minute, "go", "test"),
		"too long":         sessionRule("s1", MaxSessionRuleLife+time.Second, "go", "test"),
		"no pin":           func() SessionRule { r := sessionRule("s1", time.Hour, "go", "test"); r.Pin = ""; return r }(),
		"no prefix":        sessionRule("s1", time.Hour),
		"empty word":       sessionRule("s1", time.Hour, "go", ""),
		"no identity":      func() SessionRule { r := sessionRule("s1", time.Hour, "go"); r.Sender = ""; return r }(),
		"exactly the life": sessionRule("s1", MaxSessionRuleLife, "go", "test"),
	} {
		_, err := s.RecordSessionRule(ctx, r, t0)
		if ok := name == "exactly the life"; (err == nil) != ok {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestParseSessionRuleLabel(t *testing.T) {
	for in, want := range map[string]int64{"r1": 1, "R12": 12, " r3 ": 3, "r": 0, "1": 0, "r0": 0, "r-1": 0, "rx": 0, "r99999999999999999999": 0} {
		if got, ok := ParseSessionRuleLabel(in); got != want || ok != (want > 0) {
			t.Errorf("ParseSessionRuleLabel(%q) = %d, %v", in, got, ok)
		}
	}
}

// TestResolveUnder: the subtree an approval's grant covers is kept with
// the request.
func TestResolveUnder(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	p, err := s.CreatePending(ctx, NewPending{Channel: "cli", Sender: "alice", CapabilityClass: "fs:write:/w/internal/a.go",
		ActionVerb: "write", TargetSummary: "x", RequestKey: "k"}, t0, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(ctx, p.Token, Approve, Identity{ViaTerminal, "alice"}, t0, ResolveOptions{Territory: TerritorySession, Under: "/w/internal", For: Identity{"cli", "alice"}})
	if err != nil || r.TerritoryUnder != "/w/internal" {
		t.Fatalf("resolve: %+v, %v", r, err)
	}
	if got, _ := s.Get(ctx, p.Token); got.TerritoryUnder != "/w/internal" || got.Territory != TerritorySession {
		t.Errorf("stored: %+v", got)
	}
}

func TestMigrateAddsSessionRules(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "mnemos.db")
	writeV1(t, path)
	s := openTest(t, path)
	if _, err := s.RecordSessionRule(ctx, sessionRule("s1", time.Hour, "go", "test"), t0); err != nil {
		t.Errorf("a session rule on a migrated database: %v", err)
	}
	if p, err := s.Get(ctx, "tok"); err != nil || p.TerritoryUnder != "" {
		t.Errorf("old request: %+v, %v", p, err)
	}
	fresh := openTest(t, "")
	for _, table := range []string{"pending", "session_rules"} {
		if a, b := columnList(t, s.db, table), columnList(t, fresh.db, table); a != b {
			t.Errorf("migrated %s columns\n%s\ndiffer from fresh\n%s", table, a, b)
		}
	}
}
