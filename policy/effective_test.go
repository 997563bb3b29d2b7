package policy

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/classify"
)

// TestEffectiveOutcome is seed 000's chapter 5 on the capability-level
// call: the four rows of the combination table and the three examples.
func TestEffectiveOutcome(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 4, 27, 18, 0, 0, 0, time.UTC)
	grants := &fakeGrants{keys: map[GrantKey]bool{
		{Channel: "telegram", Sender: "roberto", Capability: classify.FSWrite, Target: "/home/u/Documents/invoices-2026/**"}: true,
		{Channel: "telegram", Sender: "roberto", Capability: classify.MailSend, Target: "ceo@example.com"}:                   true,
	}}
	invoice := "/home/u/Documents/invoices-2026/04-Acme.pdf"
	cases := []struct {
		name      string
		level     Level
		c         classify.Capability
		target    string
		want      Cell
		consulted bool
	}{
		{"allowed: the DB is not queried", Full, classify.FSWrite, invoice, Allowed, false},
		{"example 2: denied, the DB is not queried", ReadOnly, classify.FSWrite, invoice, Denied, false},
		{"example 1: approval_required with a grant: allowed", Supervised, classify.FSWrite, invoice, Allowed, true},
		{"approval_required without a grant", Supervised, classify.FSWrite, "/home/u/other.txt", ApprovalRequired, true},
		{"example 3: mail:send at full stays approval_required", Full, classify.MailSend, "ceo@example.com", ApprovalRequired, false},
		{"no target: the table alone", Supervised, classify.FSWrite, "", ApprovalRequired, false},
		{"none-approval capability", ReadOnly, classify.TimeRead, "", Allowed, false},
	}
	for _, tc := range cases {
		grants.calls = 0
		r, err := EffectiveOutcome(ctx, tc.level, tc.c, "telegram", "roberto", tc.target, grants, now)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.Outcome != tc.want || r.GrantsConsulted != tc.consulted || (grants.calls > 0) != tc.consulted {
			t.Errorf("%s: %+v (calls %d)", tc.name, r, grants.calls)
		}
	}
	if _, err := EffectiveOutcome(ctx, Full, "fs:delete", "", "", "", nil, now); err == nil {
		t.Error("an unknown capability is not an error")
	}
}

// TestSecurityEffectiveOutcomeGrantErrorCoversNothing: a grant store that
// cannot answer never lifts approval_required.
func TestSecurityEffectiveOutcomeGrantErrorCoversNothing(t *testing.T) {
	r, err := EffectiveOutcome(context.Background(), Supervised, classify.FSWrite, "cli", "u", "/x", failingGrants{}, time.Now())
	if err == nil || r.Outcome != ApprovalRequired || r.Grant != nil {
		t.Fatalf("%+v, %v", r, err)
	}
}

type failingGrants struct{}

func (failingGrants) CoveringGrant(context.Context, string, string, classify.Capability, string, string, time.Time) (Grant, bool, error) {
	return Grant{}, true, errors.New("database is locked")
}
