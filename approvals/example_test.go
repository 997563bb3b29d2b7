package approvals_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
)

func ExampleStore_Resolve() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "mnemos-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := approvals.Open(ctx, filepath.Join(dir, "state", "mnemos.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	now := time.Date(2026, 4, 27, 18, 0, 0, 0, time.UTC)
	alice := approvals.Identity{Channel: "cli", Sender: "alice"}
	argv := []string{"make", "install"}
	key := approvals.RequestKey(approvals.KeyInput{Channel: alice.Channel, Sender: alice.Sender, Cwd: "/proj", Argv: argv})

	p, err := store.CreatePending(ctx, approvals.NewPending{
		Channel:         alice.Channel,
		Sender:          alice.Sender,
		CapabilityClass: "code:exec:make",
		ActionVerb:      "run",
		TargetSummary:   "make install in /proj",
		RequestKey:      key,
		Details:         approvals.Details{Argv: argv, Cwd: "/proj", Reversibility: approvals.Partial},
	}, now, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Join(approvals.RenderCard(p.Card()), "\n"))

	// Someone else holding the token cannot answer for alice.
	_, err = store.Resolve(ctx, p.Token, approvals.Approve, approvals.Identity{Channel: "cli", Sender: "mallory"}, now, approvals.ResolveOptions{})
	fmt.Println(err)

	r, err := store.Resolve(ctx, p.Token, approvals.Approve, approvals.Identity{Channel: approvals.ViaTerminal, Sender: alice.Sender}, now.Add(time.Minute), approvals.ResolveOptions{For: alice})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Status)

	// The rerun of the exact request spends the one-shot ticket.
	for range 2 {
		_, ok, err := store.SpendTicket(ctx, key, now.Add(2*time.Minute))
		fmt.Println("ticket spent:", ok, err)
	}
	// Output:
	// May I run?
	// make install in /proj
	// partial | class: code:exec:make
	// only the requester can resolve this approval
	// approved
	// ticket spent: true <nil>
	// ticket spent: false <nil>
}

// A grant from a rule whose scope_template says max_uses: 2 covers two
// runs. The gate looks the grant up while deciding and spends it when the
// command is let through; the spend is what enforces the limit.
func ExampleStore_SpendGrant() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "mnemos-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := approvals.Open(ctx, filepath.Join(dir, "mnemos.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	now := time.Date(2026, 4, 27, 18, 0, 0, 0, time.UTC)
	k := policy.GrantKey{Channel: "cli", Sender: "alice", Capability: classify.NetworkHTTP, Target: "proxy.golang.org"}
	if _, err := store.RecordGrant(ctx, k, approvals.GrantOptions{MaxUses: 2}, now); err != nil {
		log.Fatal(err)
	}
	for i := range 3 {
		g, ok, err := store.CoveringGrant(ctx, "cli", "alice", classify.NetworkHTTP, "proxy.golang.org", "", now)
		if err != nil {
			log.Fatal(err)
		}
		if !ok {
			fmt.Printf("run %d: not covered, ask\n", i+1)
			continue
		}
		r, ok, err := store.SpendGrant(ctx, g.ID, now)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("run %d: spent %v, %d of %d uses\n", i+1, ok, r.Uses, r.MaxUses)
	}
	// Output:
	// run 1: spent true, 1 of 2 uses
	// run 2: spent true, 2 of 2 uses
	// run 3: not covered, ask
}

// A bucket of 2 requests refilled at 1 a minute, keyed by identity and
// capability.
func ExampleStore_TakeToken() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "mnemos-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := approvals.Open(ctx, filepath.Join(dir, "mnemos.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	now := time.Date(2026, 4, 27, 18, 0, 0, 0, time.UTC)
	for _, after := range []time.Duration{0, 0, 0, 30 * time.Second, time.Minute} {
		ok, remaining, err := store.TakeToken(ctx, "cli:alice:network:http", 2, 1, now.Add(after))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("+%v: %v (%.1f left)\n", after, ok, remaining)
	}
	// Output:
	// +0s: true (1.0 left)
	// +0s: true (0.0 left)
	// +0s: false (0.0 left)
	// +30s: false (0.5 left)
	// +1m0s: true (0.0 left)
}
