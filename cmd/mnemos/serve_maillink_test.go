package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mnemos-dev/mnemos/serve"
)

// TestBrowserMailLink follows a mail's approve link the way a webmail
// opens it, from a page of another site (localhost, where the approvals
// page is 127.0.0.1), in a real headless Chromium signed in to the page.
// The SameSite=Strict session cookie does not come with a navigation
// from another site; the view's hop from the page's own origin brings
// it, and the view asks for the click: only the click approves.
func TestBrowserMailLink(t *testing.T) {
	browserPath := chromium()
	if browserPath == "" {
		t.Skip("no chromium binary found: install Debian's chromium (apt-get install chromium) to run the browser test")
	}
	w := newWatchEnv(t)
	served, serveErr := w.background("serve", "--addr", "127.0.0.1:0", "--no-print-url")
	pageURL := signInLink(w.env["MNEMOS_HOME"])
	if pageURL == "" {
		t.Fatalf("serve did not start: %s", serveErr.String())
	}
	addr := strings.TrimPrefix(strings.SplitN(pageURL, "/?", 2)[0], "http://")
	out, code := w.run(nil, "run", "--", "touch", "mailed.txt")
	m := regexp.MustCompile(`approval required: ([a-z2-7]{26})`).FindStringSubmatch(out)
	if code != exitApproval || m == nil {
		t.Fatalf("run exited %d: %s", code, out)
	}
	id := m[1]

	// The "webmail": another site with the mail's links.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	mailbox := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, `<!doctype html><title>webmail</title><h1>inbox</h1>
<a id="approve" href="%s">approve</a> <a id="nohop" href="http://%s/request/%s?hop=1&answer=approve">without the hop</a>`,
			serve.RequestURL(addr, id, "approve"), addr, id)
	})}
	go mailbox.Serve(ln)
	t.Cleanup(func() { mailbox.Close() })
	webmail := "http://localhost:" + port + "/"

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browserPath), chromedp.NoSandbox, chromedp.DisableGPU)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	bctx, cancelTimeout := context.WithTimeout(bctx, 60*time.Second)
	defer cancelTimeout()

	// Signed in to the page once, as its user would be.
	if err := chromedp.Do(bctx, chromedp.Navigate(pageURL), chromedp.WaitVisible("h1")); err != nil {
		t.Fatal(err)
	}
	// Without the hop the cookie stays home: this is why there is one.
	if err := chromedp.Do(bctx, chromedp.Navigate(webmail), chromedp.WaitVisible("#nohop"), chromedp.Click("#nohop"),
		chromedp.Sleep(500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	body, err := chromedp.Run(bctx, chromedp.Text("body"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "not signed in") {
		t.Fatalf("a cross-site navigation carried the SameSite=Strict cookie, or the view changed: %q", body)
	}
	// The mail's link: the view, signed in, asking for the click.
	if err := chromedp.Do(bctx, chromedp.Navigate(webmail), chromedp.WaitVisible("#approve"), chromedp.Click("#approve"),
		chromedp.WaitVisible(`//h1[contains(., "Approve this request?")]`)); err != nil {
		text, _ := chromedp.Run(bctx, chromedp.Text("body"))
		t.Fatalf("the mail's link did not open the view: %v\n%s", err, text)
	}
	if list, _ := w.run(nil, "approvals", "list"); !strings.Contains(list, id+"  pending") {
		t.Fatalf("following the link changed the request:\n%s", list)
	}
	if err := chromedp.Do(bctx, chromedp.Click(`//article//button[@value="approve"]`), chromedp.WaitVisible("#flash")); err != nil {
		t.Fatal(err)
	}
	if list, _ := w.run(nil, "approvals", "list", "--all"); !strings.Contains(list, id+"  approved") {
		t.Fatalf("the click did not approve:\n%s", list)
	}
	if _, code := w.run(nil, "run", "--", "touch", "mailed.txt"); code != 0 {
		t.Fatalf("the approved rerun exited %d", code)
	}
	if _, err := os.Stat(filepath.Join(w.ws, "mailed.txt")); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-served:
		t.Fatalf("serve ended (%d): %s", code, serveErr.String())
	default:
	}
}
