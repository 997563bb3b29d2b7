package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/serve"
)

// screenshot, when set, is where TestBrowserApproveAndReject saves a
// picture of the page with a request waiting:
//
//	go test ./cmd/mnemos -run TestBrowser -screenshot $PWD/docs/serve.png
var screenshot = flag.String("screenshot", "", "save a screenshot of the approvals page to this PNG file")

// lockedBuffer collects the output of an in-process mnemos.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// signInLink waits up to 15 s for the mnemos serve of the state under
// mnemosHome to listen, and returns a one-time link that signs a browser
// in to its page, as `mnemos approvals url` gets it; "" when none came.
func signInLink(mnemosHome string) string {
	p, err := gate.Locate(mnemosHome, func(string) string { return "" }, "/nonexistent")
	if err != nil {
		return ""
	}
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if link, _, err := serve.SignIn(context.Background(), p.ServeSocket()); err == nil {
			return link
		}
	}
	return ""
}

// chromium finds Debian's (or another) Chromium.
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestBrowserApproveAndReject drives the approvals page in a real
// headless Chromium: a click on Approve lets a waiting `mnemos run --wait`
// run its command; a click on Reject makes it exit 77.
func TestBrowserApproveAndReject(t *testing.T) {
	browserPath := chromium()
	if browserPath == "" {
		t.Skip("no chromium binary found: install Debian's chromium (apt-get install chromium) to run the browser test")
	}
	dir, err := os.MkdirTemp("/var/tmp", "mnemos-browser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home := filepath.Join(dir, "home")
	ws := filepath.Join(dir, "ws")
	for _, d := range []string{home, filepath.Join(ws, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{
		"HOME":          home,
		"MNEMOS_HOME":   filepath.Join(home, ".mnemos"),
		"MNEMOS_SENDER": "dev",
		"PATH":          os.Getenv("PATH"),
	}
	getenv := func(k string) string { return env[k] }
	t.Chdir(ws)
	mnemos := func(ctx context.Context, out, errw *lockedBuffer, args ...string) int {
		return Main(ctx, args, stdio{in: strings.NewReader(""), out: out, err: errw}, getenv)
	}
	if code := mnemos(context.Background(), &lockedBuffer{}, &lockedBuffer{}, "init"); code != 0 {
		t.Fatalf("init exited %d", code)
	}

	serveCtx, stopServe := context.WithCancel(context.Background())
	serveOut, serveErr := &lockedBuffer{}, &lockedBuffer{}
	served := make(chan int, 1)
	go func() { served <- mnemos(serveCtx, serveOut, serveErr, "serve", "--addr", "127.0.0.1:0") }()
	t.Cleanup(func() {
		stopServe()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Error("serve did not stop")
		}
	})
	pageURL := signInLink(env["MNEMOS_HOME"])
	if pageURL == "" {
		t.Fatalf("serve did not start: %s", serveErr.String())
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browserPath), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1000, 720))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	bctx, cancelTimeout := context.WithTimeout(bctx, 90*time.Second)
	defer cancelTimeout()

	// Sign in: the one-time code goes to a cookie and leaves the address.
	if err := chromedp.Do(bctx, chromedp.Navigate(pageURL), chromedp.WaitVisible("h1")); err != nil {
		t.Fatal(err)
	}
	loc, err := chromedp.Run(bctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(loc, "signin=") || !strings.HasSuffix(loc, "/") {
		t.Fatalf("after sign-in the address is %q", loc)
	}

	// waitingRun starts `mnemos run --wait -- touch NAME` as a process of
	// its own (a run reaps the children its process leaves, and the
	// browser is one of this one's) and returns its exit code when it ends.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(bin, "mnemos")); err != nil {
		t.Fatal(err)
	}
	waitingRun := func(name string) (<-chan int, *lockedBuffer) {
		errw := &lockedBuffer{}
		cmd := exec.Command(filepath.Join(bin, "mnemos"), "run", "--wait", "--", "touch", name)
		cmd.Dir = ws
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stdout, cmd.Stderr = &lockedBuffer{}, errw
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan int, 1)
		go func() {
			_ = cmd.Wait()
			done <- cmd.ProcessState.ExitCode()
		}()
		return done, errw
	}
	// The card arrives by server-sent event, without a reload.
	waitCard := func(name string) {
		t.Helper()
		sel := `//article[contains(@class,"card")][.//code[contains(., "touch ` + name + `")]]`
		if err := chromedp.Do(bctx, chromedp.WaitVisible(sel)); err != nil {
			t.Fatalf("the card for %s never appeared: %v", name, err)
		}
	}

	done, errw := waitingRun("approved.txt")
	waitCard("approved.txt")
	start := time.Now()
	if err := chromedp.Do(bctx, chromedp.Click(`//article[.//code[contains(., "touch approved.txt")]]//button[@value="approve"]`)); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("the approved run exited %d: %s", code, errw.String())
		}
	case <-time.After(30 * time.Second):
		html, _ := chromedp.Run(bctx, chromedp.OuterHTML("body"))
		t.Fatalf("the waiting run did not proceed after Approve\nrun: %s\nserve: %s\npage: %s", errw.String(), serveErr.String(), html)
	}
	t.Logf("click on Approve to the command's end: %v", time.Since(start).Round(time.Millisecond))
	if _, err := os.Stat(filepath.Join(ws, "approved.txt")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
	flash, err := chromedp.Run(bctx, chromedp.Text("#flash"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(flash, "Approved: write touch approved.txt") {
		t.Fatalf("after Approve the page says %q", flash)
	}

	done, errw = waitingRun("rejected.txt")
	waitCard("rejected.txt")
	if *screenshot != "" {
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*screenshot, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(bctx, chromedp.Click(`//article[.//code[contains(., "touch rejected.txt")]]//button[@value="reject"]`)); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != exitDenied {
			t.Fatalf("the rejected run exited %d, want %d: %s", code, exitDenied, errw.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting run did not end after Reject")
	}
	if !strings.Contains(errw.String(), "was rejected") {
		t.Fatalf("the rejected run said: %s", errw.String())
	}
	if _, err := os.Stat(filepath.Join(ws, "rejected.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the rejected command ran")
	}
	if strings.Contains(serveErr.String(), strings.SplitN(pageURL, "signin=", 2)[1]) {
		t.Fatal("serve's log holds the sign-in code")
	}
}
