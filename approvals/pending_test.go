package approvals

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var alice = Identity{Channel: "cli", Sender: "alice"}

func newReq(key string) NewPending {
	return NewPending{
		Channel:         "cli",
		Sender:          "alice",
		CapabilityClass: "fs:write:/proj/**",
		ActionVerb:      "write",
		TargetSummary:   "out.txt -> /proj/",
		RequestKey:      key,
		Details: Details{
			Argv:          []string{"tee", "/proj/out.txt"},
			Cwd:           "/proj",
			Reversibility: Irreversible,
			Accesses:      []Access{{Capability: "fs:write", Target: "/proj/out.txt"}},
		},
	}
}

// The approval registry's six cases (seed 002, ch. 8).
func TestRegistry(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s *Store, p Pending)
	}{
		{"create returns a token, pending status and the TTL's expiry", func(t *testing.T, s *Store, p Pending) {
			if !validToken(p.Token) {
				t.Errorf("token %q is not 26 base32 characters", p.Token)
			}
			if p.Status != StatusPending || !p.ExpiresAt.Equal(t0.Add(DefaultTTL)) || !p.CreatedAt.Equal(t0) {
				t.Errorf("got %+v", p)
			}
			got, err := s.Get(ctx, strings.ToUpper(p.Token)) // typed tokens are case-insensitive
			if err != nil || got.Status != StatusPending || got.Details.Argv[1] != "/proj/out.txt" ||
				got.Details.Accesses[0].Target != "/proj/out.txt" || got.RequestKey != "k" {
				t.Errorf("Get = %+v, %v", got, err)
			}
		}},
		{"approve sets status, decision time and decider", func(t *testing.T, s *Store, p Pending) {
			now := t0.Add(time.Minute)
			r, err := s.Resolve(ctx, p.Token, Approve, Identity{Channel: ViaTerminal, Sender: alice.Sender}, now, ResolveOptions{For: alice, Territory: TerritorySession})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := s.Get(ctx, p.Token)
			for _, q := range []Pending{r, got} {
				if q.Status != StatusApproved || q.DecisionAt == nil || !q.DecisionAt.Equal(now) ||
					*q.DecisionBy != (Identity{Channel: ViaTerminal, Sender: alice.Sender}) || q.Territory != TerritorySession {
					t.Errorf("after approve: %+v", q)
				}
			}
		}},
		{"reject is symmetric and issues no ticket", func(t *testing.T, s *Store, p Pending) {
			r, err := s.Resolve(ctx, p.Token, Reject, alice, t0.Add(time.Minute), ResolveOptions{Territory: TerritoryPermanent})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := s.Get(ctx, p.Token)
			if r.Status != StatusRejected || got.Status != StatusRejected || got.DecisionBy == nil || got.Territory != "" {
				t.Errorf("after reject: %+v / %+v", r, got)
			}
			if _, ok, _ := s.SpendTicket(ctx, "k", t0.Add(2*time.Minute)); ok {
				t.Error("a rejected request issued a ticket")
			}
		}},
		{"unknown token raises", func(t *testing.T, s *Store, p Pending) {
			if _, err := s.Resolve(ctx, "aaaaaaaaaaaaaaaaaaaaaaaaaa", Approve, Identity{Channel: ViaTerminal, Sender: alice.Sender}, t0, ResolveOptions{For: alice}); !errors.Is(err, ErrUnknownToken) {
				t.Errorf("err = %v", err)
			}
			if _, err := s.Get(ctx, "nope"); !errors.Is(err, ErrUnknownToken) {
				t.Errorf("Get err = %v", err)
			}
		}},
		{"a second resolve raises: no double spend", func(t *testing.T, s *Store, p Pending) {
			if _, err := s.Resolve(ctx, p.Token, Approve, Identity{Channel: ViaTerminal, Sender: alice.Sender}, t0, ResolveOptions{For: alice}); err != nil {
				t.Fatal(err)
			}
			for _, d := range []Decision{Approve, Reject} {
				if _, err := s.Resolve(ctx, p.Token, d, alice, t0, ResolveOptions{}); !errors.Is(err, ErrAlreadyResolved) {
					t.Errorf("%s again: err = %v", d, err)
				}
			}
			if got, _ := s.Get(ctx, p.Token); got.Status != StatusApproved {
				t.Errorf("status changed to %s", got.Status)
			}
		}},
		{"a different decider raises; an expired request persists as expired", func(t *testing.T, s *Store, p Pending) {
			for _, by := range []Identity{{"cli", "mallory"}, {"telegram", "alice"}, {"", ""}} {
				if _, err := s.Resolve(ctx, p.Token, Approve, Identity{Channel: ViaTerminal, Sender: by.Sender}, t0, ResolveOptions{For: by}); !errors.Is(err, ErrNotRequester) {
					t.Errorf("decider %+v: err = %v", by, err)
				}
			}
			if got, _ := s.Get(ctx, p.Token); got.Status != StatusPending {
				t.Fatalf("a refused decider changed the status to %s", got.Status)
			}
			late := p.ExpiresAt.Add(time.Second)
			if _, err := s.Resolve(ctx, p.Token, Approve, Identity{Channel: ViaTerminal, Sender: alice.Sender}, late, ResolveOptions{For: alice}); !errors.Is(err, ErrExpired) {
				t.Fatalf("late resolve: err = %v", err)
			}
			// The transition survives the error, seen from another connection.
			other := openTest(t, s.Path())
			if got, _ := other.Get(ctx, p.Token); got.Status != StatusExpired {
				t.Errorf("status after expiry error = %s, want expired", got.Status)
			}
			if _, err := s.Resolve(ctx, p.Token, Approve, Identity{Channel: ViaTerminal, Sender: alice.Sender}, late, ResolveOptions{For: alice}); !errors.Is(err, ErrAlreadyResolved) {
				t.Errorf("resolve after expiry: err = %v", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t, "")
			p, err := s.CreatePending(ctx, newReq("k"), t0, 0)
			if err != nil {
				t.Fatal(err)
			}
			tc.run(t, s, p)
		})
	}
}

func TestResolveChecksInOrder(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	// Expired and wrong decider: expiry is checked first, and persists.
	p, _ := s.CreatePending(ctx, newReq("k"), t0, time.Minute)
	if _, err := s.Resolve(ctx, p.Token, Approve, Identity{"cli", "mallory"}, t0.Add(2*time.Minute), ResolveOptions{}); !errors.Is(err, ErrExpired) {
		t.Errorf("err = %v, want ErrExpired", err)
	}
	// Already resolved and wrong decider: already resolved first.
	q, _ := s.CreatePending(ctx, newReq("k2"), t0, 0)
	s.Resolve(ctx, q.Token, Reject, alice, t0, ResolveOptions{})
	if _, err := s.Resolve(ctx, q.Token, Approve, Identity{"cli", "mallory"}, t0, ResolveOptions{}); !errors.Is(err, ErrAlreadyResolved) {
		t.Errorf("err = %v, want ErrAlreadyResolved", err)
	}
	// Expiry is exclusive: at exactly expires_at the request still resolves.
	r, _ := s.CreatePending(ctx, newReq("k3"), t0, time.Minute)
	if _, err := s.Resolve(ctx, r.Token, Approve, Identity{Channel: ViaTerminal, Sender: alice.Sender}, r.ExpiresAt, ResolveOptions{For: alice}); err != nil {
		t.Errorf("resolve at expires_at: %v", err)
	}
	// Bad arguments are refused before anything is read.
	for _, o := range []struct {
		d Decision
		o ResolveOptions
	}{{"maybe", ResolveOptions{}}, {Approve, ResolveOptions{Territory: "forever"}}, {Approve, ResolveOptions{TicketTTL: -1}}} {
		if _, err := s.Resolve(ctx, p.Token, o.d, alice, t0, o.o); err == nil || errors.Is(err, ErrAlreadyResolved) {
			t.Errorf("%+v: err = %v", o, err)
		}
	}
}

func TestSecurityOnlyRequesterResolves(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	p, _ := s.CreatePending(ctx, newReq("k"), t0, 0)
	for _, by := range []Identity{
		{"cli", "Alice"}, {"cli", "alice "}, {"CLI", "alice"}, {"telegram", "alice"}, {"cli", ""}, {"", "alice"},
	} {
		if _, err := s.Resolve(ctx, p.Token, Approve, Identity{Channel: ViaTerminal, Sender: by.Sender}, t0, ResolveOptions{For: by}); !errors.Is(err, ErrNotRequester) {
			t.Errorf("decider %q: err = %v", by, err)
		}
	}
	if _, ok, _ := s.SpendTicket(ctx, "k", t0); ok {
		t.Fatal("a refused decider issued a ticket")
	}
	if _, err := s.Resolve(ctx, p.Token, Approve, Identity{Channel: ViaTerminal, Sender: alice.Sender}, t0, ResolveOptions{For: alice}); err != nil {
		t.Fatalf("requester: %v", err)
	}
}

func TestSecurityConcurrentResolveOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "mnemos.db")
	s := openTest(t, path)
	p, _ := s.CreatePending(ctx, newReq("k"), t0, 0)
	handles := make([]*Store, 8)
	for i := range handles {
		handles[i] = openTest(t, path)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i, h := range handles {
		wg.Go(func() {
			d := Approve
			if i%2 == 1 {
				d = Reject
			}
			_, err := h.Resolve(ctx, p.Token, d, alice, t0, ResolveOptions{})
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, ErrAlreadyResolved):
				t.Errorf("resolver %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d resolvers succeeded, want 1", wins.Load())
	}
	var tickets int
	s.db.QueryRow("SELECT COUNT(*) FROM tickets").Scan(&tickets)
	if got, _ := s.Get(ctx, p.Token); (got.Status == StatusApproved) != (tickets == 1) || tickets > 1 {
		t.Errorf("status %s with %d tickets", got.Status, tickets)
	}
}

func approved(t testing.TB, s *Store, key string, o ResolveOptions) Pending {
	t.Helper()
	ctx := context.Background()
	p, err := s.CreatePending(ctx, newReq(key), t0, 0)
	if err != nil {
		t.Fatal(err)
	}
	o.For = alice
	if _, err := s.Resolve(ctx, p.Token, Approve, Identity{Channel: ViaTerminal, Sender: alice.Sender}, t0, o); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTicketOneShot(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	p := approved(t, s, "k", ResolveOptions{TicketTTL: time.Minute})
	for i, want := range []bool{true, false} {
		tok, ok, err := s.SpendTicket(ctx, "k", t0.Add(time.Second))
		if err != nil || ok != want || (ok && tok != p.Token) {
			t.Errorf("spend %d: %q, %v, %v; want ok=%v", i+1, tok, ok, err, want)
		}
	}
	// A ticket is bound to its request key and lapses at its expiry.
	approved(t, s, "k2", ResolveOptions{TicketTTL: time.Minute})
	for _, c := range []struct {
		key string
		at  time.Time
	}{{"other", t0}, {"k2", t0.Add(time.Minute)}, {"k2", t0.Add(time.Hour)}} {
		if _, ok, _ := s.SpendTicket(ctx, c.key, c.at); ok {
			t.Errorf("spent a ticket for %q at %v", c.key, c.at.Sub(t0))
		}
	}
	if _, ok, _ := s.SpendTicket(ctx, "k2", t0.Add(59*time.Second)); !ok {
		t.Error("an unexpired ticket was not spendable")
	}
}

// Sixteen goroutines on one handle and sixteen handles race for one ticket:
// exactly one spends it.
func TestSecurityTicketSpentOnceUnderContention(t *testing.T) {
	ctx := context.Background()
	for _, sharedHandle := range []bool{true, false} {
		t.Run(fmt.Sprintf("shared handle %v", sharedHandle), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mnemos.db")
			s := openTest(t, path)
			approved(t, s, "k", ResolveOptions{})
			handles := make([]*Store, 16)
			for i := range handles {
				handles[i] = s
				if !sharedHandle {
					handles[i] = openTest(t, path)
				}
			}
			var wins atomic.Int32
			var wg sync.WaitGroup
			start := make(chan struct{})
			for _, h := range handles {
				wg.Go(func() {
					<-start
					_, ok, err := h.SpendTicket(ctx, "k", t0.Add(time.Second))
					if err != nil {
						t.Error(err)
					}
					if ok {
						wins.Add(1)
					}
				})
			}
			close(start)
			wg.Wait()
			if wins.Load() != 1 {
				t.Errorf("%d spends succeeded, want 1", wins.Load())
			}
		})
	}
}

// helperEnv makes the test binary act as one more process spending a
// ticket; see TestSecurityTicketSpentOnceAcrossProcesses.
const helperEnv = "MNEMOS_APPROVALS_TEST_SPEND"

func TestSecurityTicketSpentOnceAcrossProcesses(t *testing.T) {
	if path := os.Getenv(helperEnv); path != "" {
		s, err := Open(context.Background(), path)
		if err != nil {
			fmt.Println("error", err)
			return
		}
		defer s.Close()
		// Start together: every helper waits for the same instant.
		at, _ := strconv.ParseInt(os.Getenv(helperEnv+"_AT"), 10, 64)
		time.Sleep(time.Until(time.Unix(0, at)))
		_, ok, err := s.SpendTicket(context.Background(), "k", t0.Add(time.Second))
		fmt.Println("spent", ok, err)
		return
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	path := filepath.Join(t.TempDir(), "mnemos.db")
	s := openTest(t, path)
	approved(t, s, "k", ResolveOptions{})
	const procs = 6
	at := time.Now().Add(time.Second).UnixNano()
	outs := make([]bytes.Buffer, procs)
	cmds := make([]*exec.Cmd, procs)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestSecurityTicketSpentOnceAcrossProcesses$", "-test.count=1")
		cmds[i].Env = append(os.Environ(), helperEnv+"="+path, fmt.Sprintf("%s_AT=%d", helperEnv, at))
		cmds[i].Stdout = &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	wins := 0
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, outs[i].String())
		}
		switch out := outs[i].String(); {
		case strings.Contains(out, "spent true <nil>"):
			wins++
		case !strings.Contains(out, "spent false <nil>"):
			t.Errorf("helper %d: %s", i, out)
		}
	}
	if wins != 1 {
		t.Errorf("%d processes spent the ticket, want 1", wins)
	}
}

func TestFindOpenListCleanupRecurrence(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	a, _ := s.CreatePending(ctx, newReq("a"), t0, time.Minute)
	b, _ := s.CreatePending(ctx, newReq("b"), t0.Add(time.Second), time.Hour)
	c, _ := s.CreatePending(ctx, newReq("c"), t0.Add(2*time.Second), time.Hour)
	s.Resolve(ctx, c.Token, Reject, alice, t0.Add(3*time.Second), ResolveOptions{})
	other := newReq("d")
	other.CapabilityClass = "network:http:example.com"
	d, _ := s.CreatePending(ctx, other, t0.Add(4*time.Second), time.Hour)

	if a.Recurrence != 0 || b.Recurrence != 1 || c.Recurrence != 2 || d.Recurrence != 0 {
		t.Errorf("recurrence %d %d %d %d, want 0 1 2 0", a.Recurrence, b.Recurrence, c.Recurrence, d.Recurrence)
	}
	if n, err := s.Recurrence(ctx, "cli", "alice", "fs:write:/proj/**"); n != 3 || err != nil {
		t.Errorf("Recurrence = %d, %v", n, err)
	}
	if n, _ := s.Recurrence(ctx, "cli", "bob", "fs:write:/proj/**"); n != 0 {
		t.Errorf("Recurrence for another sender = %d", n)
	}

	later := t0.Add(2 * time.Minute) // a has expired, unmarked
	for _, tc := range []struct {
		key  string
		at   time.Time
		want string
	}{{"a", t0, a.Token}, {"a", later, ""}, {"b", later, b.Token}, {"c", later, ""}, {"zz", t0, ""}} {
		p, ok, err := s.FindOpen(ctx, tc.key, tc.at)
		if err != nil || ok != (tc.want != "") || p.Token != tc.want {
			t.Errorf("FindOpen(%q) = %q, %v, %v; want %q", tc.key, p.Token, ok, err, tc.want)
		}
	}

	tokens := func(ps []Pending) (out []string) {
		for _, p := range ps {
			out = append(out, p.Token+":"+string(p.Status))
		}
		return out
	}
	open, _ := s.List(ctx, ListOptions{}, later)
	if got, want := tokens(open), []string{d.Token + ":pending", b.Token + ":pending"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("List open = %v, want %v", got, want)
	}
	all, _ := s.List(ctx, ListOptions{IncludeResolved: true}, later)
	want := []string{d.Token + ":pending", c.Token + ":rejected", b.Token + ":pending", a.Token + ":expired"}
	if got := tokens(all); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("List all = %v, want %v", got, want)
	}
	if l, _ := s.List(ctx, ListOptions{IncludeResolved: true, Limit: 2}, later); len(l) != 2 {
		t.Errorf("Limit 2 returned %d", len(l))
	}
	if g, _ := s.Get(ctx, a.Token); g.Status != StatusPending || g.StatusAt(later) != StatusExpired {
		t.Errorf("Get before cleanup: %s, StatusAt %s", g.Status, g.StatusAt(later))
	}

	exp, err := s.CleanupExpired(ctx, later)
	if err != nil || len(exp) != 1 || exp[0].Token != a.Token || exp[0].Status != StatusExpired {
		t.Fatalf("CleanupExpired = %v, %v", tokens(exp), err)
	}
	if g, _ := s.Get(ctx, a.Token); g.Status != StatusExpired {
		t.Errorf("after cleanup: %s", g.Status)
	}
	if exp, _ := s.CleanupExpired(ctx, later); len(exp) != 0 {
		t.Errorf("second cleanup marked %d", len(exp))
	}
}

func TestCreatePendingValidation(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "")
	for name, mut := range map[string]func(*NewPending){
		"no channel": func(n *NewPending) { n.Channel = "" },
		"no sender":  func(n *NewPending) { n.Sender = "" },
		"no key":     func(n *NewPending) { n.RequestKey = "" },
		"no verb":    func(n *NewPending) { n.ActionVerb = "" },
		"no class":   func(n *NewPending) { n.CapabilityClass = "" },
	} {
		n := newReq("k")
		mut(&n)
		if _, err := s.CreatePending(ctx, n, t0, 0); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := s.CreatePending(ctx, newReq("k"), t0, -time.Second); err == nil {
		t.Error("negative ttl accepted")
	}
	// The token comes from the injected source.
	z, err := Open(ctx, filepath.Join(t.TempDir(), "z.db"), WithRandom(bytes.NewReader(make([]byte, 16))))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	p, err := z.CreatePending(ctx, newReq("k"), t0, 0)
	if err != nil || p.Token != strings.Repeat("a", 26) {
		t.Errorf("token %q, %v", p.Token, err)
	}
	if _, err := z.CreatePending(ctx, newReq("k"), t0, 0); err == nil {
		t.Error("an exhausted random source still produced a token")
	}
}

func TestRequestKey(t *testing.T) {
	base := KeyInput{Channel: "cli", Sender: "alice", Cwd: "/p", Argv: []string{"rm", "a b"}}
	k := RequestKey(base)
	if len(k) != 64 || RequestKey(base) != k {
		t.Fatalf("key %q", k)
	}
	for name, v := range map[string]KeyInput{
		"argv split":  {Channel: "cli", Sender: "alice", Cwd: "/p", Argv: []string{"rm", "a", "b"}},
		"cwd":         {Channel: "cli", Sender: "alice", Cwd: "/q", Argv: []string{"rm", "a b"}},
		"sender":      {Channel: "cli", Sender: "bob", Cwd: "/p", Argv: []string{"rm", "a b"}},
		"shift":       {Channel: "cli", Sender: "alice", Cwd: "/prm", Argv: []string{"a b"}},
		"script":      {Channel: "cli", Sender: "alice", Cwd: "/p", Script: "rm 'a b'"},
		"channel mix": {Channel: "clia", Sender: "lice", Cwd: "/p", Argv: []string{"rm", "a b"}},
	} {
		if RequestKey(v) == k {
			t.Errorf("%s: same key", name)
		}
	}
}
