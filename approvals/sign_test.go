package approvals

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityWebhookSigned: a webhook with secret_file signs each POST;
// a receiver that verifies takes it, and refuses the same POST with a
// tampered body, under another secret, or replayed later.
func TestSecurityWebhookSigned(t *testing.T) {
	secret := []byte("s3cret-key")
	file := filepath.Join(t.TempDir(), "hook.secret")
	if err := os.WriteFile(file, append(secret, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var (
		mu     sync.Mutex
		header string
		body   []byte
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		header, body = r.Header.Get(SignatureHeader), b
		mu.Unlock()
		if err := VerifySignature(secret, r.Header.Get(SignatureHeader), b, now, 5*time.Minute); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	ch := policy.Channel{Name: "hook", Webhook: srv.URL, SecretFile: file, Timeout: 5 * time.Second}
	dl := Deliverer{Now: func() time.Time { return now }}
	out := dl.Deliver(context.Background(), []policy.Channel{ch}, Message{Token: "abc", Card: []string{"May I write?"}})
	if !out[0].OK() {
		t.Fatalf("signed delivery refused: %s", out[0].Err)
	}
	if !strings.HasPrefix(header, "t=1795608000,v1=") {
		t.Fatalf("header %q", header)
	}
	tampered := append([]byte(nil), body...)
	tampered[len(tampered)-2] = 'X'
	for name, err := range map[string]error{
		"tampered body":  VerifySignature(secret, header, tampered, now, 5*time.Minute),
		"another secret": VerifySignature([]byte("other"), header, body, now, 5*time.Minute),
		"no signature":   VerifySignature(secret, "", body, now, 5*time.Minute),
		"v1 missing":     VerifySignature(secret, "t=1795608000", body, now, 5*time.Minute),
	} {
		if !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s: %v, want ErrBadSignature", name, err)
		}
	}
	if err := VerifySignature(secret, header, body, now.Add(6*time.Minute), 5*time.Minute); !errors.Is(err, ErrStaleSignature) {
		t.Errorf("replayed later: %v, want ErrStaleSignature", err)
	}
	// The timestamp is signed: moving it forward breaks the signature.
	moved := strings.Replace(header, "t=1795608000", "t=1795608360", 1)
	if err := VerifySignature(secret, moved, body, now.Add(6*time.Minute), 5*time.Minute); !errors.Is(err, ErrBadSignature) {
		t.Errorf("timestamp moved: %v, want ErrBadSignature", err)
	}

	// A secret that cannot be read is a failed delivery that posts nothing
	// and names no secret.
	header = "unchanged"
	ch.SecretFile = filepath.Join(t.TempDir(), "missing")
	out = dl.Deliver(context.Background(), []policy.Channel{ch}, Message{Token: "abc"})
	if out[0].OK() || !strings.Contains(out[0].Err, "cannot read the webhook secret") || header != "unchanged" {
		t.Fatalf("missing secret: %+v (header %q)", out[0], header)
	}
	// Without secret_file nothing is signed.
	ch.SecretFile = ""
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		header = r.Header.Get(SignatureHeader)
		mu.Unlock()
	})
	dl.Deliver(context.Background(), []policy.Channel{ch}, Message{Token: "abc"})
	if header != "" {
		t.Fatalf("an unsigned channel sent %q", header)
	}
}
