package approvals

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
)

func key(c classify.Capability, target string) policy.GrantKey {
	return policy.GrantKey{Channel: "cli", Sender: "alice", Capability: c, Target: target}
}

func TestGrantRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	exp := t0.Add(time.Hour)
	g, err := s.RecordGrant(ctx, key(classify.FSWrite, "/proj/**"),
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
		c              classify.Capability
		target, sess   string
		at             time.Time
		want           bool
		wantErrUnknown bool
	}{
		{"exact four-tuple", "cli", "alice", classify.FSWrite, "/proj/**", "", t0, true, false},
		{"glob covers a file deep below", "cli", "alice", classify.FSWrite, "/proj/a/b", "", t0, true, false},
		{"glob covers the directory itself", "cli", "alice", classify.FSWrite, "/proj", "", t0, true, false},
		{"sibling prefix is not below", "cli", "alice", classify.FSWrite, "/project/a", "", t0, false, false},
		{"other capability", "cli", "alice", classify.FSRead, "/proj/a", "", t0, false, false},
		{"other sender", "cli", "bob", classify.FSWrite, "/proj/a", "", t0, false, false},
		{"other channel", "telegram", "alice", classify.FSWrite, "/proj/a", "", t0, false, false},
		{"just before expiry", "cli", "alice", classify.FSWrite, "/proj/a", "", exp.Add(-time.Nanosecond), true, false},
		{"at expiry", "cli", "alice", classify.FSWrite, "/proj/a", "", exp, false, false},
		{"after expiry", "cli", "alice", classify.FSWrite, "/proj/a", "", exp.Add(time.Hour), false, false},
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
		{"root", key(classify.FSWrite, "/"), GrantOptions{}, ErrTargetTooBroad},
		{"root glob", key(classify.FSWrite, "/**"), GrantOptions{}, ErrTargetTooBroad},
		{"star", key(classify.NetworkHTTP, "*"), GrantOptions{}, ErrTargetTooBroad},
		{"double star", key(classify.FSRead, "**"), GrantOptions{}, ErrTargetTooBroad},
		{"any top-level dir", key(classify.FSRead, "/*/**"), GrantOptions{}, ErrTargetTooBroad},
		{"empty target", key(classify.FSRead, " "), GrantOptions{}, nil},
		{"no sender", policy.GrantKey{Channel: "cli", Capability: classify.FSRead, Target: "/p"}, GrantOptions{}, nil},
		{"expiry in the past", key(classify.FSRead, "/p/**"), GrantOptions{ExpiresAt: &past}, nil},
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
	if _, err := s.RecordGrant(ctx, key(classify.FSRead, "/docs/**"), GrantOptions{Session: "s1"}, t0); err != nil {
		t.Fatal(err)
	}
	for sess, want := range map[string]bool{"s1": true, "s2": false, "": false} {
		if _, ok, _ := s.CoveringGrant(ctx, "cli", "alice", classify.FSRead, "/docs/x", sess, t0); ok != want {
			t.Errorf("session %q: covered %v, want %v", sess, ok, want)
		}
	}
	// A grant without a session covers every session.
	s.RecordGrant(ctx, key(classify.FSRead, "/src/**"), GrantOptions{}, t0)
	if _, ok, _ := s.CoveringGrant(ctx, "cli", "alice", classify.FSRead, "/src/x", "s9", t0); !ok {
		t.Error("an unlimited grant did not cover a session")
	}
}

func TestRevokeGrant(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	g, _ := s.RecordGrant(ctx, key(classify.FSWrite, "/proj/**"), GrantOptions{}, t0)
	if _, ok, _ := s.CoveringGrant(ctx, "cli", "alice", classify.FSWrite, "/proj/a", "", t0); !ok {
		t.Fatal("not covered before revoke")
	}
	r, ok, err := s.RevokeGrant(ctx, g.ID, t0.Add(time.Minute))
	if !ok || err != nil || r.RevokedAt == nil || !r.RevokedAt.Equal(t0.Add(time.Minute)) || r.Target != "/proj/**" {
		t.Fatalf("RevokeGrant = %+v, %v, %v", r, ok, err)
	}
	if _, ok, _ := s.CoveringGrant(ctx, "cli", "alice", classify.FSWrite, "/proj/a", "", t0.Add(time.Hour)); ok {
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
		g, err := s.RecordGrant(ctx, policy.GrantKey{Channel: ch, Sender: snd, Capability: classify.FSRead, Target: target},
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

func records(t *testing.T, s *Store) map[int64]GrantRecord {
	t.Helper()
	rs, err := s.ListGrantRecords(context.Background(), GrantFilter{IncludeRevoked: true}, t0)
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[int64]GrantRecord, len(rs))
	for _, r := range rs {
		m[r.ID] = r
	}
	return m
}

// A grant with max_uses n covers and spends n times, then covers nothing;
// an unlimited grant behind it takes over.
func TestGrantMaxUses(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	limited, err := s.RecordGrant(ctx, key(classify.FSWrite, "/proj/**"), GrantOptions{MaxUses: 3}, t0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		at := t0.Add(time.Duration(i) * time.Minute)
		g, ok, err := s.CoveringGrant(ctx, "cli", "alice", classify.FSWrite, "/proj/a", "", at)
		if !ok || err != nil || g.ID != limited.ID {
			t.Fatalf("use %d: CoveringGrant = %+v, %v, %v", i, g, ok, err)
		}
		r, ok, err := s.SpendGrant(ctx, g.ID, at)
		if !ok || err != nil || r.Uses != i || r.MaxUses != 3 || r.LastUsed == nil || !r.LastUsed.Equal(at) || r.Exhausted() != (i == 3) {
			t.Fatalf("use %d: SpendGrant = %+v, %v, %v", i, r, ok, err)
		}
	}
	later := t0.Add(time.Hour)
	if _, ok, err := s.SpendGrant(ctx, limited.ID, later); ok || err != nil {
		t.Errorf("fourth spend: %v, %v", ok, err)
	}
	if g, ok, err := s.CoveringGrant(ctx, "cli", "alice", classify.FSWrite, "/proj/a", "", later); ok || err != nil {
		t.Errorf("an exhausted grant still covers: %+v, %v", g, err)
	}
	if gs, _ := s.ListGrants(ctx, GrantFilter{}, later); len(gs) != 0 {
		t.Errorf("an exhausted grant is listed as active: %+v", gs)
	}
	if r := records(t, s)[limited.ID]; r.Uses != 3 || r.RevokedAt != nil || r.RevokeReason != "" {
		t.Errorf("exhausted record %+v", r)
	}
	unlimited, _ := s.RecordGrant(ctx, key(classify.FSWrite, "/proj/**"), GrantOptions{}, later)
	if g, ok, _ := s.CoveringGrant(ctx, "cli", "alice", classify.FSWrite, "/proj/a", "", later); !ok || g.ID != unlimited.ID {
		t.Errorf("the unlimited grant does not take over: %+v, %v", g, ok)
	}
	for i := range 10 {
		if r, ok, err := s.SpendGrant(ctx, unlimited.ID, later); !ok || err != nil || r.Uses != i+1 || r.MaxUses != 0 {
			t.Fatalf("unlimited spend %d: %+v, %v, %v", i, r, ok, err)
		}
	}
	if _, err := s.RecordGrant(ctx, key(classify.FSWrite, "/x/**"), GrantOptions{MaxUses: -1}, t0); err == nil {
		t.Error("negative max uses recorded")
	}
}

func TestSpendGrantRefusals(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	exp := t0.Add(time.Hour)
	rec := func(o GrantOptions) int64 {
		g, err := s.RecordGrant(ctx, key(classify.FSWrite, "/proj/**"), o, t0)
		if err != nil {
			t.Fatal(err)
		}
		return g.ID
	}
	revoked := rec(GrantOptions{})
	s.RevokeGrant(ctx, revoked, t0)
	expiring := rec(GrantOptions{ExpiresAt: &exp})
	once := rec(GrantOptions{MaxUses: 1})
	if _, ok, _ := s.SpendGrant(ctx, once, t0); !ok {
		t.Fatal("first spend of a one-use grant refused")
	}
	for _, tc := range []struct {
		name string
		id   int64
		at   time.Time
		want bool
	}{
		{"unknown id", 999, t0, false},
		{"revoked", revoked, t0, false},
		{"just before expiry", expiring, exp.Add(-time.Nanosecond), true},
		{"at expiry", expiring, exp, false},
		{"exhausted", once, t0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := records(t, s)[tc.id]
			_, ok, err := s.SpendGrant(ctx, tc.id, tc.at)
			if ok != tc.want || err != nil {
				t.Errorf("SpendGrant = %v, %v; want %v", ok, err, tc.want)
			}
			if after := records(t, s)[tc.id]; !tc.want && after.Uses != before.Uses {
				t.Errorf("a refused spend counted: %d -> %d", before.Uses, after.Uses)
			}
		})
	}
}

// 16 goroutines on one handle, then 32 handles, race for a grant with
// max_uses 5: exactly 5 spends succeed each time.
func TestSecurityGrantMaxUsesUnderContention(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		shared  bool
		workers int
	}{{true, 16}, {false, 32}} {
		t.Run(fmt.Sprintf("shared handle %v", tc.shared), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mnemos.db")
			s := openTest(t, path)
			g, err := s.RecordGrant(ctx, key(classify.NetworkHTTP, "example.com"), GrantOptions{MaxUses: 5}, t0)
			if err != nil {
				t.Fatal(err)
			}
			var wins atomic.Int32
			var wg sync.WaitGroup
			start := make(chan struct{})
			for range tc.workers {
				h := s
				if !tc.shared {
					h = openTest(t, path)
				}
				wg.Go(func() {
					<-start
					if _, ok, err := h.SpendGrant(ctx, g.ID, t0.Add(time.Second)); err != nil {
						t.Error(err)
					} else if ok {
						wins.Add(1)
					}
				})
			}
			close(start)
			wg.Wait()
			if wins.Load() != 5 || records(t, s)[g.ID].Uses != 5 {
				t.Errorf("%d spends succeeded, %d uses stored; want 5", wins.Load(), records(t, s)[g.ID].Uses)
			}
		})
	}
}

// grantHelperEnv makes the test binary act as one more process that finds
// a covering grant and spends it, as the gate does; see
// TestSecurityGrantMaxUsesAcrossProcesses.
const grantHelperEnv = "MNEMOS_APPROVALS_TEST_SPEND_GRANT"

// Issue 4: 64 processes racing for a grant with max_uses 5 get exactly 5
// successes. Every helper opens the database and says so, then waits for
// its stdin to close; the test closes them all once every helper is ready.
func TestSecurityGrantMaxUsesAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	if path := os.Getenv(grantHelperEnv); path != "" {
		s, err := Open(ctx, path)
		if err != nil {
			fmt.Println("error", err)
			return
		}
		defer s.Close()
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		now := t0.Add(time.Second)
		g, ok, err := s.CoveringGrant(ctx, "cli", "alice", classify.NetworkHTTP, "example.com", "", now)
		if ok && err == nil {
			_, ok, err = s.SpendGrant(ctx, g.ID, now)
		}
		fmt.Println("spent", ok, err)
		return
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	path := filepath.Join(t.TempDir(), "mnemos.db")
	s := openTest(t, path)
	g, err := s.RecordGrant(ctx, key(classify.NetworkHTTP, "example.com"), GrantOptions{MaxUses: 5}, t0)
	if err != nil {
		t.Fatal(err)
	}
	const procs = 64
	type helper struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Reader
	}
	hs := make([]helper, procs)
	for i := range hs {
		c := exec.Command(os.Args[0], "-test.run=^TestSecurityGrantMaxUsesAcrossProcesses$", "-test.count=1")
		c.Env = append(os.Environ(), grantHelperEnv+"="+path)
		in, err := c.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		hs[i] = helper{c, in, bufio.NewReader(out)}
	}
	for i, h := range hs {
		if line, err := h.out.ReadString('\n'); line != "ready\n" {
			t.Fatalf("helper %d: %q, %v", i, line, err)
		}
	}
	for _, h := range hs {
		h.stdin.Close()
	}
	wins := 0
	for i, h := range hs {
		out, _ := io.ReadAll(h.out)
		if err := h.cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, out)
		}
		switch {
		case bytes.Contains(out, []byte("spent true <nil>")):
			wins++
		case !bytes.Contains(out, []byte("spent false <nil>")):
			t.Errorf("helper %d: %s", i, out)
		}
	}
	if r := records(t, s)[g.ID]; wins != 5 || r.Uses != 5 {
		t.Errorf("%d processes spent the grant, %d uses stored; want 5", wins, r.Uses)
	}
}

func TestPruneGrants(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	day := 24 * time.Hour
	now := t0.Add(200 * day)
	farExp := t0.Add(1000 * day)
	soonExp := t0.Add(150 * day)
	rec := func(target string, at time.Time, o GrantOptions) int64 {
		g, err := s.RecordGrant(ctx, key(classify.FSRead, target), o, at)
		if err != nil {
			t.Fatal(err)
		}
		return g.ID
	}
	neverUsedOld := rec("/a/**", t0, GrantOptions{})
	neverUsedNew := rec("/b/**", now.Add(-10*day), GrantOptions{})
	usedLongAgo := rec("/c/**", t0, GrantOptions{ExpiresAt: &farExp})
	s.SpendGrant(ctx, usedLongAgo, t0.Add(50*day))
	usedRecently := rec("/d/**", t0, GrantOptions{})
	s.SpendGrant(ctx, usedRecently, now.Add(-89*day))
	exactlyAtCutoff := rec("/e/**", now.Add(-90*day), GrantOptions{})
	alreadyRevoked := rec("/f/**", t0, GrantOptions{})
	s.RevokeGrant(ctx, alreadyRevoked, t0.Add(day))
	expired := rec("/g/**", t0, GrantOptions{ExpiresAt: &soonExp})
	exhausted := rec("/h/**", t0, GrantOptions{MaxUses: 1})
	s.SpendGrant(ctx, exhausted, t0)

	if _, err := s.PruneGrants(ctx, 0, now); err == nil {
		t.Error("PruneGrants(0) succeeded")
	}
	pruned, err := s.PruneGrants(ctx, 90*day, now)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, g := range pruned {
		got = append(got, g.ID)
		if g.RevokedAt == nil || !g.RevokedAt.Equal(now) {
			t.Errorf("pruned grant %d: revoked_at %v", g.ID, g.RevokedAt)
		}
	}
	if want := []int64{neverUsedOld, usedLongAgo}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pruned %v, want %v", got, want)
	}
	rs := records(t, s)
	for id, want := range map[int64]string{
		neverUsedOld: RevokeReasonStale, usedLongAgo: RevokeReasonStale, alreadyRevoked: RevokeReasonRevoked,
		neverUsedNew: "", usedRecently: "", exactlyAtCutoff: "", expired: "", exhausted: "",
	} {
		if rs[id].RevokeReason != want || (want == "") != (rs[id].RevokedAt == nil) {
			t.Errorf("grant %d (%s): reason %q, revoked %v; want %q", id, rs[id].Target, rs[id].RevokeReason, rs[id].RevokedAt, want)
		}
	}
	if again, err := s.PruneGrants(ctx, 90*day, now); len(again) != 0 || err != nil {
		t.Errorf("second prune: %v, %v", again, err)
	}
	if _, ok, _ := s.CoveringGrant(ctx, "cli", "alice", classify.FSRead, "/a/x", "", now); ok {
		t.Error("a pruned grant still covers")
	}
}
