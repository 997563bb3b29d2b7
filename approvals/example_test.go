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

	r, err := store.Resolve(ctx, p.Token, approvals.Approve, alice, now.Add(time.Minute), approvals.ResolveOptions{})
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
