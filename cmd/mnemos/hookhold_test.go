package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holdingHook starts `mnemos hook claude-code --hold 60s` for a Bash
// command, with Claude Code's permissions bypassed (so nobody can be
// asked in its prompt); done is closed when it has answered on out.
func (w *watchEnv) holdingHook(command string) (done chan struct{}, out, errw *lockedBuffer) {
	w.t.Helper()
	payload, _ := json.Marshal(map[string]any{
		"session_id": "s1", "cwd": w.ws, "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": command}, "tool_use_id": "toolu_01",
	})
	cmd := w.command("hook", "claude-code", "--hold", "60s")
	cmd.Stdin = strings.NewReader(string(payload))
	out, errw = &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, errw
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	done = make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	w.t.Cleanup(func() { cmd.Process.Kill() })
	return done, out, errw
}

// TestHookHoldAnsweredOnPage: Claude Code with its permissions bypassed
// cannot ask its person, so `mnemos hook claude-code --hold` parks the
// request and holds; the approvals page of mnemos serve, serving the
// hook's identity (--channel claude-code), answers it. Approve, and the
// hook answers allow with the command rewritten to run sandboxed (and it
// runs); Reject, and it answers deny.
func TestHookHoldAnsweredOnPage(t *testing.T) {
	w := newWatchEnv(t)
	served, serveErr := w.background("--channel", "claude-code", "serve", "--addr", "127.0.0.1:0", "--no-print-url")
	page := signInLink(w.env["MNEMOS_HOME"])
	if page == "" {
		t.Fatalf("serve did not start: %s", serveErr.String())
	}
	base := strings.SplitN(page, "/?", 2)[0]
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if resp, err := client.Get(page); err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %v %v", resp, err)
	}

	// hold runs the hook for a command and returns its answer's stdout
	// when the page's button named answer was pressed on its card.
	hold := func(command, answer string) string {
		t.Helper()
		done, out, errw := w.holdingHook(command)

		// The card appears on the page, with the hook's identity's buttons.
		card := regexp.MustCompile(`(?s)<article class="card[^"]*" id="req-([a-z2-7]{26})".*?` + regexp.QuoteMeta(command) + `.*?name="csrf" value="([0-9a-f]+)"`)
		var m []string
		for deadline := time.Now().Add(20 * time.Second); m == nil; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the hook's request never showed on the page; hook said: %s", errw.String())
			}
			resp, err := client.Get(base + "/")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			m = card.FindStringSubmatch(string(b))
		}
		if !strings.Contains(errw.String(), "holding for approval "+m[1]) {
			t.Fatalf("the hook is not holding for %s: %s", m[1], errw.String())
		}
		resp, err := client.PostForm(base+"/answer", url.Values{"csrf": {m[2]}, "id": {m[1]}, "answer": {answer}})
		if err != nil || resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("answer %s: %v %v", answer, resp, err)
		}
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("the hook still holds after %s on the page: %s", answer, errw.String())
		}
		return out.String()
	}

	out := hold("touch held.txt", "approve")
	if !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Fatalf("after Approve the hook answered: %s", out)
	}
	var ans struct {
		Out struct {
			Input struct{ Command string } `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out), &ans); err != nil || !strings.Contains(ans.Out.Input.Command, "--hook-ticket=") {
		t.Fatalf("the allow is not rewritten to run sandboxed: %s (%v)", out, err)
	}
	run := exec.Command("/bin/sh", "-c", ans.Out.Input.Command)
	run.Dir = w.ws
	for k, v := range w.env {
		run.Env = append(run.Env, k+"="+v)
	}
	run.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if b, err := run.CombinedOutput(); err != nil {
		t.Fatalf("the rewritten command: %v: %s", err, b)
	}
	if _, err := os.Stat(filepath.Join(w.ws, "held.txt")); err != nil {
		t.Fatal("the approved command did not run")
	}

	out = hold("touch refused.txt", "reject")
	if !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, "was rejected") {
		t.Fatalf("after Reject the hook answered: %s", out)
	}

	select {
	case code := <-served:
		t.Fatalf("serve ended (%d): %s", code, serveErr.String())
	default:
	}
}
