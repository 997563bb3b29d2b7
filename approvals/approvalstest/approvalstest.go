// Package approvalstest is the conformance suite every approvals.Backend
// passes: the SQLite store and the PostgreSQL one run the same tests.
//
// The suite moves time by passing later times to the backend, always as
// offsets from the real clock and never to the exact instant of an
// expiry, so that a backend that compares expiries on a server's clock
// (reading the caller's now as an offset from the host's clock) passes it
// too. The tests whose names contain Security are the registry's
// invariants.
package approvalstest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
)

// Opener opens one more handle on a database, as another process would:
// its own connection. The test's cleanup closes it.
type Opener func(t testing.TB) approvals.Backend

// Fresh returns an Opener onto a new, empty database for one test.
type Fresh func(t *testing.T) Opener

// Run runs the whole suite, each test on a fresh database.
func Run(t *testing.T, fresh Fresh) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"PendingRoundTrip", pendingRoundTrip},
		{"ResolveChecksInOrder", resolveChecksInOrder},
		{"SecurityExpiredPersists", expiredPersists},
		{"SecurityOnlyRequesterResolves", onlyRequesterResolves},
		{"SecurityOwnIdentityNeverApproves", ownIdentityNeverApproves},
		{"SecurityConcurrentResolveOnce", concurrentResolveOnce},
		{"SecurityTicketSpentOnce", ticketSpentOnce},
		{"SecurityTicketBoundToRequest", ticketBoundToRequest},
		{"TicketExpires", ticketExpires},
		{"CancelByRequesterOnly", cancel},
		{"FindOpenListCleanup", findOpenListCleanup},
		{"RecentRejection", recentRejection},
		{"GrantCoverExpireRevoke", grantCoverExpireRevoke},
		{"SecurityNoGrantForAlways", noGrantForAlways},
		{"SecurityMaxUsesExactUnderConcurrency", maxUsesExact},
		{"PruneGrants", pruneGrants},
		{"SecurityRateBucketExactUnderConcurrency", rateBucketExact},
		{"SessionRules", sessionRules},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, fresh(t)) })
	}
}

var (
	alice = approvals.Identity{Channel: "cli", Sender: "alice"}
	bob   = approvals.Identity{Channel: "cli", Sender: "bob"}
	// person is alice at her terminal, answering her requests.
	person = approvals.Identity{Channel: approvals.ViaTerminal, Sender: "alice"}
)

// near is how far apart two times of one event may be: a server's clock
// and the host's differ a little.
const near = 5 * time.Second

func closeTo(a, b time.Time) bool { d := a.Sub(b); return d < near && d > -near }

func newReq(key string) approvals.NewPending {
	return approvals.NewPending{
		Channel:         alice.Channel,
		Sender:          alice.Sender,
		CapabilityClass: "fs:write:/proj/**",
		ActionVerb:      "write",
		TargetSummary:   "out.txt -> /proj/",
		RequestKey:      key,
		Details: approvals.Details{
			Argv:          []string{"tee", "/proj/out.txt"},
			Cwd:           "/proj",
			Reversibility: "irreversible",
			Accesses:      []approvals.Access{{Capability: classify.FSWrite, Target: "/proj/out.txt"}},
			Meta:          map[string]string{"k": "v"},
		},
	}
}

func create(t *testing.T, s approvals.Backend, key string, now time.Time, ttl time.Duration) approvals.Pending {
	t.Helper()
	p, err := s.CreatePending(context.Background(), newReq(key), now, ttl)
	if err != nil {
		t.Fatalf("CreatePending: %v", err)
	}
	return p
}

func pendingRoundTrip(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	now := time.Now()
	p := create(t, s, "k1", now, 0)
	if len(p.Token) != 26 || p.Status != approvals.StatusPending || p.Recurrence != 0 {
		t.Fatalf("created %+v", p)
	}
	if !closeTo(p.CreatedAt, now) || !closeTo(p.ExpiresAt, now.Add(approvals.DefaultTTL)) {
		t.Errorf("created at %v, expires %v; want about %v and %v", p.CreatedAt, p.ExpiresAt, now, now.Add(approvals.DefaultTTL))
	}
	// Another handle (another process) reads what this one wrote.
	got, err := open(t).Get(ctx, "  "+p.Token+" ")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.Token != p.Token || got.Channel != "cli" || got.Sender != "alice" || got.CapabilityClass != p.CapabilityClass ||
		got.ActionVerb != "write" || got.TargetSummary != p.TargetSummary || got.RequestKey != "k1" ||
		got.Status != approvals.StatusPending || got.DecisionAt != nil || got.DecisionBy != nil ||
		got.Details.Cwd != "/proj" || len(got.Details.Argv) != 2 || got.Details.Meta["k"] != "v" ||
		len(got.Details.Accesses) != 1 || got.Details.Accesses[0].Capability != classify.FSWrite {
		t.Errorf("Get = %+v", got)
	}
	if !closeTo(got.CreatedAt, p.CreatedAt) || !closeTo(got.ExpiresAt, p.ExpiresAt) {
		t.Errorf("stored times %v %v, returned %v %v", got.CreatedAt, got.ExpiresAt, p.CreatedAt, p.ExpiresAt)
	}
	if _, err := s.Get(ctx, "nosuchtoken"); !errors.Is(err, approvals.ErrUnknownToken) {
		t.Errorf("Get(unknown) = %v, want ErrUnknownToken", err)
	}
	if q := create(t, s, "k2", now, 0); q.Recurrence != 1 {
		t.Errorf("second request of the class: recurrence %d, want 1", q.Recurrence)
	}
	if n, err := s.Recurrence(ctx, "cli", "alice", "fs:write:/proj/**"); err != nil || n != 2 {
		t.Errorf("Recurrence = %d, %v; want 2", n, err)
	}
	for _, bad := range []approvals.NewPending{
		{Sender: "a", RequestKey: "k", ActionVerb: "v", CapabilityClass: "c"},
		{Channel: "c", Sender: "a", ActionVerb: "v", CapabilityClass: "c"},
		{Channel: "c", Sender: "a", RequestKey: "k", CapabilityClass: "c"},
	} {
		if _, err := s.CreatePending(ctx, bad, now, 0); err == nil {
			t.Errorf("CreatePending(%+v) succeeded", bad)
		}
	}
	if _, err := s.CreatePending(ctx, newReq("k"), now, -time.Second); err == nil {
		t.Error("negative ttl accepted")
	}
	if s.Path() == "" {
		t.Error("Path is empty")
	}
}

// The four checks come in order: unknown token, already resolved,
// expired, not the requester.
func resolveChecksInOrder(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	now := time.Now()
	// approve answers at the terminal of the person of forID, for forID.
	approve := func(token string, forID approvals.Identity, at time.Time) error {
		by := approvals.Identity{Channel: approvals.ViaTerminal, Sender: forID.Sender}
		_, err := s.Resolve(ctx, token, approvals.Approve, by, at, approvals.ResolveOptions{For: forID})
		return err
	}
	// 1. unknown, whoever asks
	if err := approve("aaaaaaaaaaaaaaaaaaaaaaaaaa", bob, now); !errors.Is(err, approvals.ErrUnknownToken) {
		t.Errorf("unknown token: %v", err)
	}
	// 2 before 4: a resolved request is reported resolved even to a stranger
	done := create(t, s, "done", now, 0)
	if err := approve(done.Token, alice, now); err != nil {
		t.Fatal(err)
	}
	if err := approve(done.Token, bob, now); !errors.Is(err, approvals.ErrAlreadyResolved) {
		t.Errorf("resolved request, stranger: %v, want ErrAlreadyResolved", err)
	}
	if _, err := s.Resolve(ctx, done.Token, approvals.Reject, alice, now, approvals.ResolveOptions{}); !errors.Is(err, approvals.ErrAlreadyResolved) {
		t.Errorf("reject after approve: %v, want ErrAlreadyResolved", err)
	}
	// 3 before 4: an expired request is reported expired even to a stranger
	old := create(t, s, "old", now, time.Second)
	if err := approve(old.Token, bob, now.Add(time.Minute)); !errors.Is(err, approvals.ErrExpired) {
		t.Errorf("expired request, stranger: %v, want ErrExpired", err)
	}
	// 4. a stranger cannot resolve an open request
	open1 := create(t, s, "open", now, 0)
	if err := approve(open1.Token, bob, now); !errors.Is(err, approvals.ErrNotRequester) {
		t.Errorf("stranger: %v, want ErrNotRequester", err)
	}
	if err := approve(open1.Token, alice, now); err != nil {
		t.Errorf("requester: %v", err)
	}
	if _, err := s.Resolve(ctx, open1.Token, "maybe", alice, now, approvals.ResolveOptions{}); err == nil {
		t.Error("unknown decision accepted")
	}
}

// An expired request's status is persisted although Resolve fails, so it
// can never be approved later, nor by another handle.
func expiredPersists(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	now := time.Now()
	p := create(t, s, "k", now, time.Second)
	later := now.Add(time.Minute)
	if _, err := s.Resolve(ctx, p.Token, approvals.Approve, person, later, approvals.ResolveOptions{For: alice}); !errors.Is(err, approvals.ErrExpired) {
		t.Fatalf("Resolve after expiry: %v, want ErrExpired", err)
	}
	got, err := open(t).Get(ctx, p.Token)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != approvals.StatusExpired {
		t.Errorf("stored status %q, want expired", got.Status)
	}
	// Even at a time before its expiry, it stays expired.
	if _, err := s.Resolve(ctx, p.Token, approvals.Approve, person, now, approvals.ResolveOptions{For: alice}); !errors.Is(err, approvals.ErrAlreadyResolved) {
		t.Errorf("Resolve of an expired request: %v, want ErrAlreadyResolved", err)
	}
	if _, ok, err := s.SpendTicket(ctx, "k", now); ok || err != nil {
		t.Errorf("an expired request left a ticket: %v %v", ok, err)
	}
}

// A request is never approved by its own requester's identity, whatever
// the answer says it is for; the requester may still reject it, and the
// person answering for it approves it.
func ownIdentityNeverApproves(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	now := time.Now()
	agent := approvals.Identity{Channel: "claude-code", Sender: "alice"}
	page := approvals.Identity{Channel: approvals.ViaPage, Sender: "alice"}
	for _, requester := range []approvals.Identity{alice, agent, page, person} {
		n := newReq("own-" + requester.Channel)
		n.Channel, n.Sender = requester.Channel, requester.Sender
		p, err := s.CreatePending(ctx, n, now, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []approvals.ResolveOptions{{}, {For: requester}, {For: requester, Territory: approvals.TerritoryPermanent}} {
			if _, err := s.Resolve(ctx, p.Token, approvals.Approve, requester, now, o); !errors.Is(err, approvals.ErrOwnRequest) {
				t.Errorf("%+v approving its own request (%+v): %v, want ErrOwnRequest", requester, o, err)
			}
		}
		if _, ok, _ := s.SpendTicket(ctx, n.RequestKey, now); ok {
			t.Fatal("a refused approval issued a ticket")
		}
		by := approvals.Identity{Channel: approvals.ViaTerminal, Sender: "alice"}
		if requester == by {
			by = page
		}
		got, err := s.Resolve(ctx, p.Token, approvals.Approve, by, now, approvals.ResolveOptions{For: requester})
		if err != nil || got.DecisionBy == nil || *got.DecisionBy != by {
			t.Errorf("%+v answering for %+v: %+v, %v", by, requester, got.DecisionBy, err)
		}
	}
	// Rejecting its own request takes nothing away.
	p := create(t, s, "own-reject", now, 0)
	if _, err := s.Resolve(ctx, p.Token, approvals.Reject, alice, now, approvals.ResolveOptions{}); err != nil {
		t.Errorf("the requester rejecting its own request: %v", err)
	}
}

func onlyRequesterResolves(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	now := time.Now()
	p := create(t, s, "k", now, 0)
	for _, by := range []approvals.Identity{
		bob,
		{Channel: "telegram", Sender: "alice"},
		{Channel: "cli", Sender: "Alice"},
		{Channel: "cli", Sender: "alice "},
		{},
	} {
		for _, d := range []approvals.Decision{approvals.Approve, approvals.Reject} {
			if _, err := s.Resolve(ctx, p.Token, d, by, now, approvals.ResolveOptions{}); !errors.Is(err, approvals.ErrNotRequester) {
				t.Errorf("%s by %+v: %v, want ErrNotRequester", d, by, err)
			}
		}
		if _, err := s.Cancel(ctx, p.Token, by, "", now); !errors.Is(err, approvals.ErrNotRequester) {
			t.Errorf("cancel by %+v: %v, want ErrNotRequester", by, err)
		}
	}
	if _, ok, _ := s.SpendTicket(ctx, "k", now); ok {
		t.Fatal("a refused approval issued a ticket")
	}
	got, err := s.Get(ctx, p.Token)
	if err != nil || got.Status != approvals.StatusPending {
		t.Fatalf("after refusals: %+v %v", got, err)
	}
	r, err := s.Resolve(ctx, p.Token, approvals.Approve, person, now, approvals.ResolveOptions{For: alice, Territory: approvals.TerritorySession})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != approvals.StatusApproved || r.DecisionBy == nil || *r.DecisionBy != person || r.Territory != approvals.TerritorySession {
		t.Errorf("resolved %+v", r)
	}
	got, _ = open(t).Get(ctx, p.Token)
	if got.Status != approvals.StatusApproved || got.DecisionBy == nil || *got.DecisionBy != person || got.DecisionAt == nil || got.Territory != approvals.TerritorySession {
		t.Errorf("stored %+v", got)
	}
}

// Many handles resolve one request at once: one wins, one ticket.
func concurrentResolveOnce(t *testing.T, open Opener) {
	ctx := context.Background()
	now := time.Now()
	const n = 12
	handles := make([]approvals.Backend, 4)
	for i := range handles {
		handles[i] = open(t)
	}
	p := create(t, handles[0], "k", now, 0)
	var ok, resolved atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := approvals.Approve
			if i%3 == 0 {
				d = approvals.Reject
			}
			_, err := handles[i%len(handles)].Resolve(ctx, p.Token, d, person, now, approvals.ResolveOptions{For: alice})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, approvals.ErrAlreadyResolved):
				resolved.Add(1)
			default:
				t.Errorf("Resolve: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 || resolved.Load() != n-1 {
		t.Fatalf("%d resolvers succeeded and %d were told it was resolved; want 1 and %d", ok.Load(), resolved.Load(), n-1)
	}
	got, _ := handles[1].Get(ctx, p.Token)
	tickets := 0
	for {
		_, spent, err := handles[2].SpendTicket(ctx, "k", now)
		if err != nil {
			t.Fatal(err)
		}
		if !spent {
			break
		}
		tickets++
	}
	want := 0
	if got.Status == approvals.StatusApproved {
		want = 1
	}
	if tickets != want {
		t.Errorf("status %s and %d tickets, want %d", got.Status, tickets, want)
	}
}

// One approval lets one run through, once, whatever the contention.
func ticketSpentOnce(t *testing.T, open Opener) {
	ctx := context.Background()
	now := time.Now()
	handles := make([]approvals.Backend, 4)
	for i := range handles {
		handles[i] = open(t)
	}
	for round := range 3 {
		key := fmt.Sprintf("k%d", round)
		p := create(t, handles[0], key, now, 0)
		if _, err := handles[1].Resolve(ctx, p.Token, approvals.Approve, person, now, approvals.ResolveOptions{For: alice}); err != nil {
			t.Fatal(err)
		}
		var wins atomic.Int32
		var got atomic.Value
		var wg sync.WaitGroup
		for i := range 24 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tok, ok, err := handles[i%len(handles)].SpendTicket(ctx, key, now)
				if err != nil {
					t.Errorf("SpendTicket: %v", err)
				}
				if ok {
					wins.Add(1)
					got.Store(tok)
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d spenders got the ticket, want 1", round, wins.Load())
		}
		if got.Load() != p.Token {
			t.Errorf("spent ticket names approval %v, want %s", got.Load(), p.Token)
		}
	}
}

func ticketBoundToRequest(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	now := time.Now()
	p := create(t, s, "exact", now, 0)
	if _, err := s.Resolve(ctx, p.Token, approvals.Approve, person, now, approvals.ResolveOptions{For: alice}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"Exact", "exact ", "exac", "", "other"} {
		if _, ok, err := s.SpendTicket(ctx, k, now); ok || err != nil {
			t.Errorf("ticket for %q spent with key %q (%v)", "exact", k, err)
		}
	}
	// A rejection or an approval without a ticket issues none.
	r := create(t, s, "rejected", now, 0)
	if _, err := s.Resolve(ctx, r.Token, approvals.Reject, alice, now, approvals.ResolveOptions{}); err != nil {
		t.Fatal(err)
	}
	n := create(t, s, "noticket", now, 0)
	if _, err := s.Resolve(ctx, n.Token, approvals.Approve, person, now, approvals.ResolveOptions{For: alice, NoTicket: true}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rejected", "noticket"} {
		if _, ok, _ := s.SpendTicket(ctx, k, now); ok {
			t.Errorf("%s left a ticket", k)
		}
	}
	if _, ok, _ := s.SpendTicket(ctx, "exact", now); !ok {
		t.Error("the approved request's ticket is not spendable")
	}
}

func ticketExpires(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	now := time.Now()
	p := create(t, s, "k", now, 0)
	if _, err := s.Resolve(ctx, p.Token, approvals.Approve, person, now, approvals.ResolveOptions{For: alice, TicketTTL: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.SpendTicket(ctx, "k", now.Add(time.Minute)); ok || err != nil {
		t.Errorf("ticket spent after its TTL: %v %v", ok, err)
	}
	if _, ok, err := s.SpendTicket(ctx, "k", now.Add(time.Second)); !ok || err != nil {
		t.Errorf("ticket not spendable within its TTL: %v %v", ok, err)
	}
	if _, err := s.Resolve(ctx, create(t, s, "k2", now, 0).Token, approvals.Approve, person, now, approvals.ResolveOptions{For: alice, TicketTTL: -time.Second}); err == nil {
		t.Error("negative ticket TTL accepted")
	}
}

func cancel(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	now := time.Now()
	p := create(t, s, "k", now, 0)
	if _, err := s.Cancel(ctx, p.Token, bob, "", now); !errors.Is(err, approvals.ErrNotRequester) {
		t.Errorf("cancel by another: %v", err)
	}
	c, err := s.Cancel(ctx, p.Token, alice, "  changed my mind ", now)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != approvals.StatusCancelled || c.CancelReason != "changed my mind" {
		t.Errorf("cancelled %+v", c)
	}
	got, _ := open(t).Get(ctx, p.Token)
	if got.Status != approvals.StatusCancelled || got.CancelReason != "changed my mind" {
		t.Errorf("stored %+v", got)
	}
	if _, err := s.Resolve(ctx, p.Token, approvals.Approve, person, now, approvals.ResolveOptions{For: alice}); !errors.Is(err, approvals.ErrAlreadyResolved) {
		t.Errorf("approve after cancel: %v", err)
	}
	if _, ok, _ := s.SpendTicket(ctx, "k", now); ok {
		t.Error("a cancelled request left a ticket")
	}
	// A cancellation is no person's answer.
	if _, found, err := s.RecentRejection(ctx, "k", now.Add(-time.Hour)); found || err != nil {
		t.Errorf("a cancellation reads as a rejection: %v %v", found, err)
	}
}

func findOpenListCleanup(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	now := time.Now()
	short := create(t, s, "k", now, 10*time.Second)
	long := create(t, s, "k", now.Add(time.Second), time.Hour)
	other := create(t, s, "other", now.Add(2*time.Second), time.Hour)
	p, found, err := s.FindOpen(ctx, "k", now.Add(3*time.Second))
	if err != nil || !found || p.Token != long.Token {
		t.Errorf("FindOpen = %v %v %v, want the newest, %s", p.Token, found, err, long.Token)
	}
	if _, found, _ := s.FindOpen(ctx, "none", now); found {
		t.Error("FindOpen found a request for an unknown key")
	}
	later := now.Add(time.Minute)
	list, err := s.List(ctx, approvals.ListOptions{}, later)
	if err != nil {
		t.Fatal(err)
	}
	if got := tokens(list); !equal(got, []string{other.Token, long.Token}) {
		t.Errorf("open list at +1m: %v, want %v", got, []string{other.Token, long.Token})
	}
	all, err := s.List(ctx, approvals.ListOptions{IncludeResolved: true}, later)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[2].Token != short.Token || all[2].Status != approvals.StatusExpired {
		t.Errorf("full list: %+v", all)
	}
	if one, _ := s.List(ctx, approvals.ListOptions{IncludeResolved: true, Limit: 1}, later); len(one) != 1 {
		t.Errorf("limit 1 listed %d", len(one))
	}
	bobs := newReq("bob")
	bobs.Sender = "bob"
	if _, err := s.CreatePending(ctx, bobs, now.Add(3*time.Second), time.Hour); err != nil {
		t.Fatal(err)
	}
	if mine, _ := s.List(ctx, approvals.ListOptions{IncludeResolved: true, Requester: &alice}, later); len(mine) != 3 {
		t.Errorf("alice's requests: %d, want 3", len(mine))
	}
	if his, _ := s.List(ctx, approvals.ListOptions{Requester: &bob}, later); len(his) != 1 || his[0].Sender != "bob" {
		t.Errorf("bob's requests: %+v", his)
	}
	swept, err := s.CleanupExpired(ctx, later)
	if err != nil {
		t.Fatal(err)
	}
	if len(swept) != 1 || swept[0].Token != short.Token || swept[0].Status != approvals.StatusExpired {
		t.Errorf("swept %+v", swept)
	}
	if again, _ := s.CleanupExpired(ctx, later); len(again) != 0 {
		t.Errorf("swept twice: %+v", again)
	}
	if got, _ := s.Get(ctx, short.Token); got.Status != approvals.StatusExpired {
		t.Errorf("swept request stored as %s", got.Status)
	}
}

func recentRejection(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	now := time.Now()
	p := create(t, s, "k", now, 0)
	if _, err := s.Resolve(ctx, p.Token, approvals.Reject, alice, now, approvals.ResolveOptions{}); err != nil {
		t.Fatal(err)
	}
	if r, found, err := s.RecentRejection(ctx, "k", now.Add(-time.Minute)); !found || err != nil || r.Token != p.Token {
		t.Errorf("RecentRejection = %v %v %v", r.Token, found, err)
	}
	if _, found, _ := s.RecentRejection(ctx, "k", now.Add(time.Minute)); found {
		t.Error("a rejection before since was found")
	}
	// A later approval supersedes it.
	q := create(t, s, "k", now.Add(time.Second), 0)
	if _, err := s.Resolve(ctx, q.Token, approvals.Approve, person, now.Add(2*time.Second), approvals.ResolveOptions{For: alice}); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := s.RecentRejection(ctx, "k", now.Add(-time.Minute)); found {
		t.Error("a rejection superseded by an approval was found")
	}
}

func grantKey(c classify.Capability, target string) policy.GrantKey {
	return policy.GrantKey{Channel: "cli", Sender: "alice", Capability: c, Target: target}
}

func grantCoverExpireRevoke(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	now := time.Now()
	exp := now.Add(time.Hour)
	g, err := s.RecordGrant(ctx, grantKey(classify.FSWrite, "/proj/**"), approvals.GrantOptions{ExpiresAt: &exp, GrantedBy: "cli:alice", Approval: "ABC"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if g.ID == 0 || g.Approval != "abc" || g.ExpiresAt == nil || !closeTo(*g.ExpiresAt, exp) {
		t.Errorf("recorded %+v", g)
	}
	sess, err := s.RecordGrant(ctx, grantKey(classify.NetworkHTTP, "example.com"), approvals.GrantOptions{Session: "s1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	other := open(t)
	for _, tc := range []struct {
		name         string
		sender       string
		c            classify.Capability
		target, sess string
		at           time.Time
		want         int64
	}{
		{"covered", "alice", classify.FSWrite, "/proj/a/b", "", now, g.ID},
		{"covered near expiry", "alice", classify.FSWrite, "/proj/a", "", exp.Add(-time.Minute), g.ID},
		{"after expiry", "alice", classify.FSWrite, "/proj/a", "", exp.Add(time.Minute), 0},
		{"sibling", "alice", classify.FSWrite, "/project/a", "", now, 0},
		{"other sender", "bob", classify.FSWrite, "/proj/a", "", now, 0},
		{"other capability", "alice", classify.FSRead, "/proj/a", "", now, 0},
		{"its session", "alice", classify.NetworkHTTP, "example.com", "s1", now, sess.ID},
		{"another session", "alice", classify.NetworkHTTP, "example.com", "s2", now, 0},
		{"no session", "alice", classify.NetworkHTTP, "example.com", "", now, 0},
	} {
		got, ok, err := other.CoveringGrant(ctx, "cli", tc.sender, tc.c, tc.target, tc.sess, tc.at)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if (tc.want != 0) != ok || (ok && got.ID != tc.want) {
			t.Errorf("%s: covering grant %d (%v), want %d", tc.name, got.ID, ok, tc.want)
		}
	}
	if _, _, err := s.CoveringGrant(ctx, "cli", "alice", "fs:delete", "/x", "", now); err == nil {
		t.Error("unknown capability: no error")
	}
	list, err := s.ListGrants(ctx, approvals.GrantFilter{Sender: "alice"}, now)
	if err != nil || len(list) != 2 {
		t.Errorf("ListGrants = %d grants, %v", len(list), err)
	}
	if list, _ := s.ListGrants(ctx, approvals.GrantFilter{}, exp.Add(time.Minute)); len(list) != 1 {
		t.Errorf("active after expiry: %d grants, want 1", len(list))
	}
	r, ok, err := s.RevokeGrant(ctx, g.ID, now)
	if err != nil || !ok || r.RevokedAt == nil {
		t.Fatalf("RevokeGrant = %+v %v %v", r, ok, err)
	}
	if _, ok, _ := s.RevokeGrant(ctx, g.ID, now); ok {
		t.Error("revoked twice")
	}
	if _, ok, _ := other.CoveringGrant(ctx, "cli", "alice", classify.FSWrite, "/proj/a", "", now); ok {
		t.Error("a revoked grant covers")
	}
	recs, err := s.ListGrantRecords(ctx, approvals.GrantFilter{IncludeRevoked: true}, now)
	if err != nil || len(recs) != 2 {
		t.Fatalf("ListGrantRecords = %d, %v", len(recs), err)
	}
	for _, r := range recs {
		if r.ID == g.ID && r.RevokeReason != approvals.RevokeReasonRevoked {
			t.Errorf("revoked grant's reason %q", r.RevokeReason)
		}
	}
	if _, err := s.RecordGrant(ctx, grantKey(classify.FSWrite, "/p"), approvals.GrantOptions{ExpiresAt: &now}, now.Add(time.Second)); err == nil {
		t.Error("a grant expiring before now was recorded")
	}
	if _, err := s.RecordGrant(ctx, grantKey(classify.FSWrite, "/p"), approvals.GrantOptions{MaxUses: -1}, now); err == nil {
		t.Error("negative max uses accepted")
	}
}

func noGrantForAlways(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	now := time.Now()
	for _, c := range []classify.Capability{classify.CodeExec, classify.MailSend} {
		if _, err := s.RecordGrant(ctx, grantKey(c, "/proj/**"), approvals.GrantOptions{}, now); !errors.Is(err, approvals.ErrAlwaysCapability) {
			t.Errorf("grant for %s: %v, want ErrAlwaysCapability", c, err)
		}
		if _, ok, err := s.CoveringGrant(ctx, "cli", "alice", c, "/proj/a", "", now); ok || err != nil {
			t.Errorf("%s covered: %v %v", c, ok, err)
		}
	}
	for _, target := range []string{"/", "/**", "*", "**", "  "} {
		if _, err := s.RecordGrant(ctx, grantKey(classify.FSWrite, target), approvals.GrantOptions{}, now); err == nil {
			t.Errorf("grant on %q recorded", target)
		}
	}
	if _, err := s.RecordGrant(ctx, policy.GrantKey{Capability: classify.FSWrite, Target: "/p"}, approvals.GrantOptions{}, now); err == nil {
		t.Error("a grant without an identity was recorded")
	}
}

// A grant of max_uses n is spent exactly n times by any number of
// concurrent spenders on several handles.
func maxUsesExact(t *testing.T, open Opener) {
	ctx := context.Background()
	now := time.Now()
	handles := make([]approvals.Backend, 4)
	for i := range handles {
		handles[i] = open(t)
	}
	const maxUses = 5
	g, err := handles[0].RecordGrant(ctx, grantKey(classify.NetworkHTTP, "example.com"), approvals.GrantOptions{MaxUses: maxUses}, now)
	if err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok, err := handles[i%len(handles)].SpendGrant(ctx, g.ID, now)
			if err != nil {
				t.Errorf("SpendGrant: %v", err)
			}
			if ok {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != maxUses {
		t.Fatalf("%d spends succeeded, want exactly %d", wins.Load(), maxUses)
	}
	if _, ok, _ := handles[1].CoveringGrant(ctx, "cli", "alice", classify.NetworkHTTP, "example.com", "", now); ok {
		t.Error("an exhausted grant covers")
	}
	recs, _ := handles[2].ListGrantRecords(ctx, approvals.GrantFilter{IncludeRevoked: true}, now)
	if len(recs) != 1 || recs[0].Uses != maxUses || !recs[0].Exhausted() || recs[0].LastUsed == nil {
		t.Errorf("records %+v", recs)
	}
	if _, ok, err := handles[0].SpendGrant(ctx, 999999, now); ok || err != nil {
		t.Errorf("unknown grant spent: %v %v", ok, err)
	}
}

func pruneGrants(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	now := time.Now()
	old, err := s.RecordGrant(ctx, grantKey(classify.FSWrite, "/old/**"), approvals.GrantOptions{}, now)
	if err != nil {
		t.Fatal(err)
	}
	used, err := s.RecordGrant(ctx, grantKey(classify.FSWrite, "/used/**"), approvals.GrantOptions{}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.SpendGrant(ctx, used.ID, now.Add(20*24*time.Hour)); !ok || err != nil {
		t.Fatalf("SpendGrant: %v %v", ok, err)
	}
	pruned, err := s.PruneGrants(ctx, 14*24*time.Hour, now.Add(21*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(pruned) != 1 || pruned[0].ID != old.ID {
		t.Fatalf("pruned %+v, want grant %d", pruned, old.ID)
	}
	recs, _ := s.ListGrantRecords(ctx, approvals.GrantFilter{IncludeRevoked: true}, now)
	for _, r := range recs {
		if r.ID == old.ID && r.RevokeReason != approvals.RevokeReasonStale {
			t.Errorf("pruned grant's reason %q", r.RevokeReason)
		}
	}
	if _, err := s.PruneGrants(ctx, 0, now); err == nil {
		t.Error("prune with 0 accepted")
	}
}

// A rate bucket of capacity n gives n tokens to any number of concurrent
// takers on several handles, and refills with time.
func rateBucketExact(t *testing.T, open Opener) {
	ctx := context.Background()
	now := time.Now()
	handles := make([]approvals.Backend, 4)
	for i := range handles {
		handles[i] = open(t)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, _, err := handles[i%len(handles)].TakeToken(ctx, "cli:alice:network:http", 3, 1, now)
			if err != nil {
				t.Errorf("TakeToken: %v", err)
			}
			if ok {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 3 {
		t.Fatalf("%d tokens taken from a bucket of 3", wins.Load())
	}
	ok, rem, err := handles[0].TakeToken(ctx, "cli:alice:network:http", 3, 1, now.Add(90*time.Second))
	if err != nil || !ok || rem < 0.3 || rem > 0.7 {
		t.Errorf("after 90 s at 1/min: ok %v, remaining %v, %v; want a token and about 0.5 left", ok, rem, err)
	}
	if ok, _, _ := handles[1].TakeToken(ctx, "other", 1, 0, now); !ok {
		t.Error("a new bucket is not full")
	}
	if _, _, err := handles[1].TakeToken(ctx, "", 1, 0, now); err == nil {
		t.Error("empty key accepted")
	}
	if _, _, err := handles[1].TakeToken(ctx, "k", 0, 0, now); err == nil {
		t.Error("capacity 0 accepted")
	}
}

func sessionRules(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	now := time.Now()
	r, err := s.RecordSessionRule(ctx, approvals.SessionRule{Channel: "cli", Sender: "alice", ArgvPrefix: []string{"make", "test"},
		Pin: "p1", Session: "s1", ExpiresAt: now.Add(time.Hour), GrantedBy: "cli:alice", Approval: "TOK"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if r.ID == 0 || r.Kind != approvals.SessionRuleKind || r.Approval != "tok" {
		t.Errorf("recorded %+v", r)
	}
	any1, err := s.RecordSessionRule(ctx, approvals.SessionRule{Channel: "cli", Sender: "alice", ArgvPrefix: []string{"make"}, Exact: true,
		Pin: "p2", ExpiresAt: now.Add(time.Hour)}, now)
	if err != nil {
		t.Fatal(err)
	}
	other := open(t)
	active, err := other.ActiveSessionRules(ctx, "cli", "alice", "s1", now)
	if err != nil || len(active) != 2 || active[0].ID != r.ID || !equal(active[0].ArgvPrefix, []string{"make", "test"}) || !active[1].Exact {
		t.Errorf("active in s1: %+v %v", active, err)
	}
	if active, _ := other.ActiveSessionRules(ctx, "cli", "alice", "s2", now); len(active) != 1 || active[0].ID != any1.ID {
		t.Errorf("active in s2: %+v", active)
	}
	if active, _ := other.ActiveSessionRules(ctx, "cli", "bob", "s1", now); len(active) != 0 {
		t.Errorf("bob has %+v", active)
	}
	if active, _ := other.ActiveSessionRules(ctx, "cli", "alice", "s1", now.Add(2*time.Hour)); len(active) != 0 {
		t.Errorf("expired rules active: %+v", active)
	}
	if _, ok, err := s.RevokeSessionRule(ctx, r.ID, now); !ok || err != nil {
		t.Errorf("revoke: %v %v", ok, err)
	}
	if _, ok, _ := s.RevokeSessionRule(ctx, r.ID, now); ok {
		t.Error("revoked twice")
	}
	if list, _ := other.ListSessionRules(ctx, approvals.GrantFilter{}, now); len(list) != 1 {
		t.Errorf("active list: %+v", list)
	}
	if list, _ := other.ListSessionRules(ctx, approvals.GrantFilter{IncludeRevoked: true}, now); len(list) != 2 {
		t.Errorf("full list: %+v", list)
	}
	for _, bad := range []approvals.SessionRule{
		{Channel: "cli", Sender: "alice", ArgvPrefix: []string{"x"}, Pin: "p", ExpiresAt: now.Add(approvals.MaxSessionRuleLife + time.Hour)},
		{Channel: "cli", Sender: "alice", ArgvPrefix: []string{"x"}, Pin: "p", ExpiresAt: now.Add(-time.Minute)},
		{Channel: "cli", Sender: "alice", ArgvPrefix: []string{"x"}, ExpiresAt: now.Add(time.Hour)},
		{Channel: "cli", Sender: "alice", Pin: "p", ExpiresAt: now.Add(time.Hour)},
		{Sender: "alice", ArgvPrefix: []string{"x"}, Pin: "p", ExpiresAt: now.Add(time.Hour)},
	} {
		if _, err := s.RecordSessionRule(ctx, bad, now); err == nil {
			t.Errorf("recorded %+v", bad)
		}
	}
}

func tokens(ps []approvals.Pending) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Token
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
