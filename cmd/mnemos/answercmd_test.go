package main

import (
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
)

func TestDigestGroupsByIdentityAndCapability(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	req := func(tok, ch, sender, class string, c classify.Capability, min int) approvals.Pending {
		p := approvals.Pending{Token: tok, Channel: ch, Sender: sender, CapabilityClass: class, CreatedAt: t0.Add(time.Duration(min) * time.Minute)}
		if c != "" {
			p.Details.Accesses = []approvals.Access{{Capability: c}}
		}
		return p
	}
	// Newest first, as List returns them.
	list := []approvals.Pending{
		req("e", "cli", "dev", "fs:write:/w/c", classify.FSWrite, 5),
		req("d", "telegram", "42", "fs:write:/w/x", classify.FSWrite, 4),
		req("c", "cli", "dev", "code:exec", "", 3),
		req("b", "cli", "dev", "fs:write:/w/b", classify.FSWrite, 2),
		req("a", "cli", "dev", "fs:write:/w/a", "", 1),
	}
	got := digest(list)
	want := []struct {
		id, capability, newest string
		count                  int
	}{
		{"cli:dev", "fs:write", "e", 3},
		{"telegram:42", "fs:write", "d", 1},
		{"cli:dev", "code:exec", "c", 1},
	}
	if len(got) != len(want) {
		t.Fatalf("digest = %+v", got)
	}
	for i, w := range want {
		g := got[i]
		if g.Channel+":"+g.Sender != w.id || g.Capability != w.capability || g.Newest.Token != w.newest || g.Count != w.count {
			t.Errorf("group %d = %s:%s %s newest %s count %d, want %+v", i, g.Channel, g.Sender, g.Capability, g.Newest.Token, g.Count, w)
		}
	}
	if len(digest(nil)) != 0 {
		t.Error("digest of nothing is not empty")
	}
}
