package approvals

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/policy"
)

func testMessage() Message {
	c := Card{ActionVerb: "write", TargetSummary: "touch notes.txt (in /w)", CapabilityClass: "fs:write:/w/notes.txt", Token: "abcdefghijklmnopqrstuvwxyz"}
	return Message{
		Token: c.Token, Card: RenderCard(c), Form: Form(0), Buttons: c.Buttons(),
		Requester: Identity{Channel: "cli", Sender: "dev"}, Argv: []string{"touch", "notes.txt"}, Cwd: "/w",
		CapabilityClass: c.CapabilityClass, CreatedAt: time.Unix(0, 0).UTC(), ExpiresAt: time.Unix(600, 0).UTC(),
		Answer: "mnemos approvals answer --channel cli --sender dev DATA",
	}
}

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "notify.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDeliverCommand(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	out := filepath.Join(t.TempDir(), "card.json")
	prog := script(t, `cat > "$1"; echo "$PATH" > "$1.path"; pwd > "$1.dir"; echo "${LD_PRELOAD-unset}" > "$1.ld"`)
	ch := policy.Channel{Name: "desk", Command: []string{prog, out}, Timeout: 5 * time.Second}
	env := []string{"PATH=/tmp/evil:/usr/bin", "LD_PRELOAD=/tmp/evil.so", "HOME=/nowhere"}
	got := Deliverer{Env: env}.Deliver(context.Background(), []policy.Channel{ch}, testMessage())
	if len(got) != 1 || !got[0].OK() || got[0].Channel != "desk" || got[0].Kind != "command" {
		t.Fatalf("Deliver = %+v", got)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var m Message
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("stdin is not the card as JSON: %v\n%s", err, b)
	}
	if m.Token != testMessage().Token || len(m.Card) != 3 || m.Card[0] != "May I write?" ||
		m.Buttons[0].Data != "approve:"+m.Token || m.Buttons[1].Data != "reject:"+m.Token ||
		m.Requester.Sender != "dev" || m.Cwd != "/w" || m.CapabilityClass != "fs:write:/w/notes.txt" {
		t.Errorf("card = %+v", m)
	}
	// The notifier runs with the system PATH, from /, without the dynamic
	// loader's variables of whoever started mnemos.
	for suffix, want := range map[string]string{".path": SystemPath, ".dir": "/", ".ld": "unset"} {
		b, _ := os.ReadFile(out + suffix)
		if strings.TrimSpace(string(b)) != want {
			t.Errorf("%s = %q, want %q", suffix, b, want)
		}
	}
}

func TestDeliverCommandFailures(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	cases := []struct {
		name    string
		argv    []string
		timeout time.Duration
		want    string
	}{
		{"exit non-zero", []string{script(t, "cat >/dev/null; echo 'no bus' >&2; exit 3")}, time.Second, "exit status 3: no bus"},
		{"timeout", []string{script(t, "sleep 10")}, 200 * time.Millisecond, "timed out after 200ms"},
		{"descendant keeps stderr", []string{script(t, "sleep 10 & exit 0")}, 300 * time.Millisecond, ""},
		{"missing program", []string{"mnemos-no-such-notifier"}, time.Second, `program "mnemos-no-such-notifier" not found`},
		{"relative program", []string{"bin/notify"}, time.Second, "relative path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			got := Deliverer{}.Deliver(context.Background(), []policy.Channel{{Name: "x", Command: tc.argv, Timeout: tc.timeout}}, testMessage())
			if took := time.Since(start); took > tc.timeout+2*time.Second {
				t.Errorf("delivery took %v, timeout %v", took, tc.timeout)
			}
			if tc.want == "" {
				if !got[0].OK() {
					t.Errorf("Deliver = %+v, want delivered", got[0])
				}
				return
			}
			if got[0].OK() || !strings.Contains(got[0].Err, tc.want) {
				t.Errorf("Deliver = %+v, want error with %q", got[0], tc.want)
			}
		})
	}
}

func TestDeliverWebhook(t *testing.T) {
	var gotBody []byte
	var gotType string
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotType = r.Header.Get("Content-Type")
		gotBody, _ = io.ReadAll(r.Body)
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	}))
	defer ok.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusInternalServerError)
	}))
	defer failing.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, ok.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)

	chans := []policy.Channel{
		{Name: "ok", Webhook: ok.URL + "/mnemos"},
		{Name: "500", Webhook: failing.URL},
		{Name: "redirect", Webhook: redirect.URL},
		{Name: "slow", Webhook: slow.URL, Timeout: 200 * time.Millisecond},
		{Name: "closed", Webhook: "http://127.0.0.1:1/"},
	}
	start := time.Now()
	got := Deliverer{}.Deliver(context.Background(), chans, testMessage())
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("deliveries took %v; they run at once, each bounded", took)
	}
	want := map[string]string{"ok": "", "500": "webhook answered 500 Internal Server Error",
		"redirect": "webhook answered 307", "slow": "timed out after 200ms", "closed": "connection refused"}
	for i, d := range got {
		if d.Channel != chans[i].Name || d.Kind != "webhook" {
			t.Errorf("delivery %d = %+v", i, d)
		}
		w := want[d.Channel]
		if w == "" && !d.OK() || w != "" && !strings.Contains(d.Err, w) {
			t.Errorf("%s: %+v, want %q", d.Channel, d, w)
		}
	}
	if gotType != "application/json" {
		t.Errorf("Content-Type = %q", gotType)
	}
	var m Message
	if err := json.Unmarshal(gotBody, &m); err != nil || m.Token != testMessage().Token || len(m.Buttons) != 2 {
		t.Errorf("body = %s (%v)", gotBody, err)
	}
}

func TestDeliverNoChannels(t *testing.T) {
	if got := (Deliverer{}).Deliver(context.Background(), nil, testMessage()); len(got) != 0 {
		t.Errorf("Deliver = %+v", got)
	}
}
