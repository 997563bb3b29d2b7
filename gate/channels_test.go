package gate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/policy"
)

// notifier writes a script appending its stdin, one card a line, to a
// file, and returns the script and the file.
func notifier(t *testing.T) (prog, cards string) {
	t.Helper()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	dir := t.TempDir()
	prog, cards = filepath.Join(dir, "notify"), filepath.Join(dir, "cards.jsonl")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\ncat >> "+cards+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return prog, cards
}

func readCards(t *testing.T, file string) []approvals.Message {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []approvals.Message
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m approvals.Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("card is not JSON: %v\n%s", err, sc.Bytes())
		}
		out = append(out, m)
	}
	return out
}

func TestChannelsDeliverNewRequestsOnly(t *testing.T) {
	prog, cards := notifier(t)
	f := newFixture(t, "allow:\n  - {name: ls, command: {argv_prefix: [ls]}}\nchannels:\n  - {name: desk, command: ["+prog+"]}\n")
	d := f.decide(t, Mode{SpendTicket: true}, "touch", "notes.txt")
	if d.Outcome != policy.Ask || d.Approval == nil {
		t.Fatalf("decision %s", d.Outcome)
	}
	if len(d.Deliveries) != 1 || !d.Deliveries[0].OK() {
		t.Fatalf("deliveries = %+v", d.Deliveries)
	}
	got := readCards(t, cards)
	if len(got) != 1 {
		t.Fatalf("%d cards delivered, want 1", len(got))
	}
	m, tok := got[0], d.Approval.Token
	// A channel gets the command line's card but for the contained-work
	// concession, which only --remember contained can take.
	cliCard := slices.DeleteFunc(slices.Clone(d.Card), func(l string) bool { return strings.HasPrefix(l, "contained work: ") })
	if m.Token != tok || strings.Join(m.Card, "\n") != strings.Join(cliCard, "\n") || m.Form != "full" ||
		len(m.Buttons) != 2 || m.Buttons[0].Data != "approve:"+tok || m.Buttons[1].Data != "reject:"+tok ||
		m.Requester != (approvals.Identity{Channel: "cli", Sender: "dev"}) || strings.Join(m.Argv, " ") != "touch notes.txt" ||
		m.Cwd != f.ws || !strings.HasPrefix(m.CapabilityClass, "fs:write:") || !m.ExpiresAt.Equal(d.Approval.ExpiresAt) ||
		m.Answer != "mnemos approvals answer --channel cli --sender dev DATA" {
		t.Errorf("card = %+v", m)
	}
	// The same request again reuses the open approval: nothing nags twice.
	d2 := f.decide(t, Mode{SpendTicket: true}, "touch", "notes.txt")
	if d2.Approval == nil || d2.Approval.Token != tok || len(d2.Deliveries) != 0 {
		t.Errorf("rerun: approval %v, deliveries %+v", d2.Approval, d2.Deliveries)
	}
	if n := len(readCards(t, cards)); n != 1 {
		t.Errorf("%d cards after the rerun, want 1", n)
	}
	if n := f.audit.count("channel.delivered"); n != 1 {
		t.Errorf("%d channel.delivered events, want 1", n)
	}
	// What needs nobody is not delivered.
	if d := f.decide(t, Mode{SpendTicket: true}, "ls"); d.Outcome != policy.Allow {
		t.Errorf("ls = %s", d.Outcome)
	}
	if d := f.decide(t, Mode{SpendTicket: true}, "rm", "-rf", "/"); d.Outcome != policy.Deny {
		t.Errorf("rm -rf / = %s", d.Outcome)
	}
	if n := len(readCards(t, cards)); n != 1 {
		t.Errorf("%d cards after allow and deny, want 1", n)
	}
	// A new request (another command) is delivered, in the recurrence form.
	f.decide(t, Mode{SpendTicket: true}, "touch", "other.txt")
	if got := readCards(t, cards); len(got) != 2 || got[1].Token == tok {
		t.Errorf("cards = %+v", got)
	}
}

// TestSecurityDeliveryNeverChangesTheDecision: a channel that fails,
// answers an error or hangs leaves the request an ask with its pending
// approval; the failure is recorded, and the wait is bounded.
func TestSecurityDeliveryNeverChangesTheDecision(t *testing.T) {
	prog, cards := notifier(t)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer failing.Close()
	release := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hanging.Close()
	defer close(release)
	f := newFixture(t, `channels:
  - {name: broken, command: [/bin/false]}
  - {name: missing, command: [mnemos-no-such-notifier]}
  - {name: bad-gateway, webhook: "`+failing.URL+`"}
  - {name: hanging, webhook: "`+hanging.URL+`", timeout: 300ms}
  - {name: desk, command: [`+prog+`]}
`)
	d := f.decide(t, Mode{SpendTicket: true}, "touch", "notes.txt")
	if d.Outcome != policy.Ask || d.Approval == nil {
		t.Fatalf("decision %s (%s), want ask with an approval", d.Outcome, d.Reason)
	}
	failed := map[string]bool{}
	for _, dl := range d.Deliveries {
		failed[dl.Channel] = !dl.OK()
	}
	for name, want := range map[string]bool{"broken": true, "missing": true, "bad-gateway": true, "hanging": true, "desk": false} {
		if failed[name] != want {
			t.Errorf("%s failed = %v, want %v (%+v)", name, failed[name], want, d.Deliveries)
		}
	}
	if n := f.audit.count("channel.failed"); n != 4 {
		t.Errorf("%d channel.failed events, want 4", n)
	}
	if n := len(readCards(t, cards)); n != 1 {
		t.Errorf("the working channel got %d cards, want 1", n)
	}
	// Nothing was approved: the rerun still asks, and no ticket lets it run.
	if d := f.decide(t, Mode{SpendTicket: true}, "touch", "notes.txt"); d.Outcome != policy.Ask {
		t.Errorf("rerun = %s", d.Outcome)
	}
}

// TestSecurityCardIsRedacted: a channel receives the text the audit log
// would write, never a secret in the command line.
func TestSecurityCardIsRedacted(t *testing.T) {
	prog, cards := notifier(t)
	f := newFixture(t, "channels:\n  - {name: desk, command: ["+prog+"]}\n")
	secret := "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	d := f.decide(t, Mode{SpendTicket: true}, "touch", "GITHUB_TOKEN="+secret)
	if d.Outcome != policy.Ask {
		t.Fatalf("decision %s", d.Outcome)
	}
	raw, err := os.ReadFile(cards)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, []byte("ghp_")) {
		t.Errorf("the card carries the secret:\n%s", raw)
	}
	if !bytes.Contains(raw, []byte("[REDACTED]")) {
		t.Errorf("the card shows no redaction:\n%s", raw)
	}
}

// TestSecurityExtraPolicyAddsNoChannel: the --policy file (or
// MNEMOS_POLICY) only tightens; its channels are not used.
func TestSecurityExtraPolicyAddsNoChannel(t *testing.T) {
	prog, cards := notifier(t)
	f := newFixture(t, "")
	extra, err := policy.Parse("extra.yaml", []byte("channels:\n  - {name: leak, command: ["+prog+"]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	f.g.cfg.Extra = extra
	d := f.decide(t, Mode{SpendTicket: true}, "touch", "notes.txt")
	if d.Outcome != policy.Ask || len(d.Deliveries) != 0 || len(readCards(t, cards)) != 0 {
		t.Errorf("decision %s, deliveries %+v", d.Outcome, d.Deliveries)
	}
}

func TestCardMessageQuotesTheAnswer(t *testing.T) {
	m := CardMessage(approvals.Pending{Token: "t", Channel: "tele gram", Sender: "o'neil", ActionVerb: "write", CapabilityClass: "fs:write"})
	if want := `mnemos approvals answer --channel 'tele gram' --sender 'o'\''neil' DATA`; m.Answer != want {
		t.Errorf("Answer = %s, want %s", m.Answer, want)
	}
}
