package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mnemos-dev/mnemos/sandbox"
)

// TestBrowserUndo drives the approvals page in a real headless Chromium
// through what issue 21 promises: an agent's sh -c 'rm -rf *', approved
// with a click, deletes the workspace's files (one named like an HTML
// tag); the page then shows, under that approval, the run and what it
// deleted, the name as text; Undo asks first, and its confirmation puts
// every file back.
func TestBrowserUndo(t *testing.T) {
	browserPath := chromium()
	if browserPath == "" {
		t.Skip("no chromium binary found: install Debian's chromium (apt-get install chromium) to run the browser test")
	}
	if st := sandbox.Probe(); st.ABI == 0 || !st.Watch {
		t.Skipf("the sandbox cannot watch changes here, so nothing is journaled: %s", st.WatchErr)
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
	const evil = `<img src=x onerror=alert(1)>`
	files := map[string]string{"calc.go": "package calc\n", "notes.txt": "untracked notes\n", evil: "evil\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HOME": home, "MNEMOS_HOME": filepath.Join(home, ".mnemos"), "MNEMOS_SENDER": "dev", "PATH": os.Getenv("PATH")}
	getenv := func(k string) string { return env[k] }
	t.Chdir(ws)
	mnemos := func(ctx context.Context, out, errw *lockedBuffer, args ...string) int {
		return Main(ctx, args, stdio{in: strings.NewReader(""), out: out, err: errw}, getenv)
	}
	if code := mnemos(context.Background(), &lockedBuffer{}, &lockedBuffer{}, "init"); code != 0 {
		t.Fatalf("init exited %d", code)
	}
	serveCtx, stopServe := context.WithCancel(context.Background())
	serveErr := &lockedBuffer{}
	served := make(chan int, 1)
	go func() { served <- mnemos(serveCtx, &lockedBuffer{}, serveErr, "serve", "--addr", "127.0.0.1:0") }()
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

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browserPath), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1000, 720))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	bctx, cancelTimeout := context.WithTimeout(bctx, 90*time.Second)
	defer cancelTimeout()
	if err := chromedp.Do(bctx, chromedp.Navigate(pageURL), chromedp.WaitVisible("h1")); err != nil {
		t.Fatal(err)
	}

	// The agent's command waits for the approval, as a process of its
	// own (a run reaps what its process leaves, and the browser is one).
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
	cmd := exec.Command(filepath.Join(bin, "mnemos"), "run", "--wait", "--", "sh", "-c", "rm -rf *")
	cmd.Dir = ws
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	runErr := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = &lockedBuffer{}, runErr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		_ = cmd.Wait()
		done <- cmd.ProcessState.ExitCode()
	}()
	card := `//article[contains(@class,"card")][.//code[contains(., "rm -rf")]]`
	if err := chromedp.Do(bctx, chromedp.WaitVisible(card), chromedp.Click(card+`//button[@value="approve"]`)); err != nil {
		t.Fatalf("approving on the page: %v\nrun: %s", err, runErr.String())
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("the approved run exited %d: %s", code, runErr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the approved run did not end: %s", runErr.String())
	}
	for name := range files {
		if _, err := os.Lstat(filepath.Join(ws, name)); err == nil {
			t.Fatalf("the approved rm -rf * left %s", name)
		}
	}

	// The run reaches the page by its live updates, under its approval.
	undo := `//div[contains(@class,"run")]//a[contains(@class,"undo")]`
	if err := chromedp.Do(bctx, chromedp.WaitVisible(undo)); err != nil {
		html, _ := chromedp.Run(bctx, chromedp.OuterHTML("body"))
		t.Fatalf("the run never reached the page: %v\n%s\nserve: %s", err, html, serveErr.String())
	}
	changes, err := chromedp.Run(bctx, chromedp.Text(`//div[contains(@class,"run")]//ul[contains(@class,"changes")]`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"deleted calc.go", "deleted notes.txt", "deleted " + evil} {
		if !strings.Contains(strings.Join(strings.Fields(changes), " "), want) {
			t.Errorf("the page's list of changes lacks %q:\n%s", want, changes)
		}
	}
	imgs, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('img').length`))
	if err != nil || imgs != 0 {
		t.Fatalf("the file's name made %d <img> elements (%v)", imgs, err)
	}

	// Undo asks first; the confirmation's button puts everything back.
	confirm := `//form[contains(@class,"undo-form")]//button[@value="undo"]`
	if err := chromedp.Do(bctx, chromedp.Click(undo), chromedp.WaitVisible(confirm)); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		if _, err := os.Lstat(filepath.Join(ws, name)); err == nil {
			t.Fatalf("opening the confirmation restored %s", name)
		}
	}
	if err := chromedp.Do(bctx, chromedp.Click(confirm), chromedp.WaitVisible("#flash")); err != nil {
		t.Fatal(err)
	}
	flash, err := chromedp.Run(bctx, chromedp.Text("#flash"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(flash, "Undid run ") || !strings.Contains(flash, "3 paths restored") {
		t.Fatalf("after the undo the page says %q", flash)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(ws, name))
		if err != nil || string(got) != want {
			t.Errorf("%s after the undo: %q, %v", name, got, err)
		}
	}
	if err := chromedp.Do(bctx, chromedp.WaitVisible(`//span[contains(@class,"undone")]`)); err != nil {
		t.Fatalf("the run is not shown undone: %v", err)
	}
}
