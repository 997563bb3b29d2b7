package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSecurityApprovalsURLToTerminalOnly: mnemos approvals url gets a
// one-time sign-in link from the running serve's socket and prints it to
// a terminal, which signs one browser in once; to a pipe it prints
// nothing, and a client started by mnemos (as every command mnemos run
// confines is) is refused the link.
func TestSecurityApprovalsURLToTerminalOnly(t *testing.T) {
	w := newWatchEnv(t)
	_, serveErr := w.background("serve", "--addr", "127.0.0.1:0", "--no-print-url")
	if signInLink(w.env["MNEMOS_HOME"]) == "" {
		t.Fatalf("serve did not start: %s", serveErr.String())
	}

	// To a pipe: nothing.
	out, code := w.run(nil, "approvals", "url")
	if code != 1 || !strings.Contains(out, "printed to a terminal only") || strings.Contains(out, "signin=") {
		t.Fatalf("approvals url to a pipe exited %d:\n%s", code, out)
	}

	// Started by this test, whose binary is the mnemos serve runs: refused
	// as a command mnemos confines would be.
	master, tty := openPTY(t)
	sc := newScreen(t, master)
	cmd := w.command("approvals", "url")
	errw := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = tty, errw
	if err := cmd.Run(); err == nil || !strings.Contains(errw.String(), "runs under mnemos") {
		t.Fatalf("a client under mnemos: %v\n%s", err, errw.String())
	}

	// A person's terminal: started by a shell that is gone, as a login
	// shell's children are not started by mnemos.
	errFile := filepath.Join(w.dir, "url.err")
	sh := exec.Command("/bin/sh", "-c", `("$0" approvals url >"$1" 2>"$2" &)`, w.bin, tty.Name(), errFile)
	sh.Dir = w.ws
	for k, v := range w.env {
		sh.Env = append(sh.Env, k+"="+v)
	}
	if err := sh.Run(); err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/\?signin=[a-z2-7]{32}`)
	var got string
	for deadline := time.Now().Add(15 * time.Second); got == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		got = link.FindString(sc.buf.String())
	}
	if got == "" {
		b, _ := os.ReadFile(errFile)
		t.Fatalf("no link on the terminal: %q\n%s", sc.buf.String(), b)
	}
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i, want := range []int{http.StatusSeeOther, http.StatusForbidden} {
		resp, err := c.Get(got)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want || (i == 0) != (len(resp.Cookies()) == 1) {
			t.Fatalf("use %d of the link: %s, cookies %v", i+1, resp.Status, resp.Cookies())
		}
	}
}
