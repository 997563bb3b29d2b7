package main

import (
	"context"
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

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/approvals/pgstore"
)

// fleetPage is mnemos serve running on a host of a fleet, and a browser
// signed in to its page.
type fleetPage struct {
	t    *testing.T
	cmd  *exec.Cmd
	log  *lockedBuffer
	base string
	c    *http.Client
	done chan error
}

// serve starts mnemos serve on h (a loopback port of its own) and signs
// a browser in with a link from its socket, as `mnemos approvals url`
// does (serve prints none: its stdout is no terminal).
func (h *fleetHost) serve(t *testing.T) *fleetPage {
	t.Helper()
	cmd := h.command("serve", "--addr", "127.0.0.1:0")
	p := &fleetPage{t: t, cmd: cmd, log: &lockedBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { p.stop() })
	link := signInLink(h.mnemosHome())
	if link == "" {
		t.Fatalf("serve gave no sign-in link:\n%s", p.log.String())
	}
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	p.base = "http://" + u.Host
	jar, _ := cookiejar.New(nil)
	p.c = &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if resp := p.do(http.MethodGet, u.String(), nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %s", resp.Status)
	}
	return p
}

// stop sends SIGTERM and waits for serve to drain and end.
func (p *fleetPage) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		p.t.Error("serve did not stop on SIGTERM")
	}
}

func (p *fleetPage) do(method, u string, form url.Values) *http.Response {
	p.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		p.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := p.c.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader(string(b)))
	return resp
}

func (p *fleetPage) page() string {
	p.t.Helper()
	b, _ := io.ReadAll(p.do(http.MethodGet, p.base+"/", nil).Body)
	return string(b)
}

var (
	pageCSRF  = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)
	pageFlash = regexp.MustCompile(`<p class="flash"[^>]*>([^<]*)</p>`)
)

// answer posts an answer as the page's form does and returns the
// message the page shows next.
func (p *fleetPage) answer(id, answer string) string {
	p.t.Helper()
	m := pageCSRF.FindStringSubmatch(p.page())
	if m == nil {
		p.t.Fatal("no CSRF token on the page")
	}
	if resp := p.do(http.MethodPost, p.base+"/answer", url.Values{"csrf": {m[1]}, "id": {id}, "answer": {answer}}); resp.StatusCode != http.StatusSeeOther {
		p.t.Fatalf("answer: %s", resp.Status)
	}
	f := pageFlash.FindStringSubmatch(p.page())
	if f == nil {
		p.t.Fatal("no message after the answer")
	}
	return f[1]
}

// background starts mnemos ARGS on h with extra environment, returning
// its exit code when it ends and its stderr.
func (h *fleetHost) background(t *testing.T, env []string, args ...string) (<-chan int, *lockedBuffer) {
	t.Helper()
	cmd := h.command(args...)
	cmd.Env = append(cmd.Env, env...)
	errw := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = &lockedBuffer{}, errw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() { _ = cmd.Wait(); done <- cmd.ProcessState.ExitCode() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return done, errw
}

// parkedID waits until out says which request was parked.
func parkedID(t *testing.T, out *lockedBuffer) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if m := approvalID.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no request parked: %s", out.String())
		}
	}
}

// TestFleetServeApprovesAnotherHost: two hosts (MNEMOS_HOST_ID host-0
// and host-1) share the PostgreSQL state. A `mnemos run --wait` on host-0
// parks a request; the page of `mnemos serve` on host-1, serving the same
// identity, shows it with its host, a POST approves it, and the run on
// host-0 proceeds. approvals watch on host-1 answers the next one with a
// key. serve ships host-1's audit events to the central table.
func TestFleetServeApprovesAnotherHost(t *testing.T) {
	srv := fleetServer(t)
	hosts, dsn := newFleet(t, srv, 2)
	a, b := hosts[0], hosts[1]
	page := b.serve(t)

	file := filepath.Join(a.ws, "approved-on-b.txt")
	done, errw := a.background(t, nil, "run", "--wait", "--", "touch", file)
	id := parkedID(t, errw)
	var card string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		pg := page.page()
		if i := strings.Index(pg, `id="req-`+id+`"`); i >= 0 {
			card = pg[i:]
			card = card[:strings.Index(card, "</article>")]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("host-1's page never showed request %s:\n%s", id, pg)
		}
	}
	if !strings.Contains(card, `<dd class="host">host-0</dd>`) {
		t.Errorf("the card does not name host-0:\n%s", card)
	}
	if flash := page.answer(id, "approve"); !strings.HasPrefix(flash, "Approved: ") {
		t.Fatalf("approve on host-1's page: %q", flash)
	}
	if code := within(t, done, 20*time.Second, "run --wait on host-0"); code != 0 {
		t.Fatalf("run --wait on host-0 exited %d after the approval on host-1: %s", code, errw.String())
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}

	// approvals watch on host-1, on a pseudo-terminal.
	master, tty := openPTY(t)
	sc := newScreen(t, master)
	wcmd := b.command("approvals", "watch")
	wcmd.Stdout, wcmd.Stderr = &lockedBuffer{}, &lockedBuffer{}
	wcmd.ExtraFiles = []*os.File{tty}
	wcmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
	if err := wcmd.Start(); err != nil {
		t.Fatal(err)
	}
	wdone := make(chan error, 1)
	go func() { wdone <- wcmd.Wait() }()
	t.Cleanup(func() { wcmd.Process.Kill() })
	sc.wait("on every host sharing the state")
	sc.wait("waiting for new requests")
	file2 := filepath.Join(a.ws, "keyed-on-b.txt")
	done, errw = a.background(t, nil, "run", "--wait", "--", "touch", file2)
	id = parkedID(t, errw)
	sc.wait("--- request " + id)
	sc.wait("host:      host-0")
	sc.wait("? ")
	master.WriteString("a")
	sc.wait("approved " + id)
	if code := within(t, done, 20*time.Second, "run --wait on host-0"); code != 0 {
		t.Fatalf("run --wait exited %d after the key on host-1: %s", code, errw.String())
	}
	master.WriteString("q")
	select {
	case <-wdone:
	case <-time.After(10 * time.Second):
		t.Error("watch did not quit")
	}

	// serve ships host-1's events (its approvals) to the central table.
	page.stop()
	if !strings.Contains(page.log.String(), "stopped") {
		t.Errorf("serve's log:\n%s", page.log.String())
	}
	st, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Host: "checker"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	chains, err := st.VerifyFleet(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	shipped := 0
	for _, c := range chains {
		if c.Host == b.id {
			shipped = c.Lines
		}
	}
	if local := b.localLines(t); shipped != local {
		t.Errorf("host-1: %d events in its log, %d shipped", local, shipped)
	}
	checkFleet(t, dsn, hosts)
}

// TestSecurityFleetServeIdentityAndTicket: host-1's page answers for its
// identity only, and the ticket its approval issues is spent on the host
// that parked the request. Eve's request parked on host-0 is not on
// dev's page on host-1, and a forged POST for it is refused; dev's
// request parked on host-0 and approved on host-1's page does not run
// when host-1 runs the same command in the same directory (it asks
// again), and runs once on host-0.
func TestSecurityFleetServeIdentityAndTicket(t *testing.T) {
	srv := fleetServer(t)
	hosts, dsn := newFleet(t, srv, 2)
	a, b := hosts[0], hosts[1]
	page := b.serve(t)

	evesFile := filepath.Join(a.ws, "eve.txt")
	evesDone, evesErr := a.background(t, []string{"MNEMOS_SENDER=eve"}, "run", "--", "touch", evesFile)
	if code := within(t, evesDone, 20*time.Second, "eve's run"); code != 75 {
		t.Fatalf("eve's run exited %d: %s", code, evesErr.String())
	}
	evesID := parkedID(t, evesErr)
	file := filepath.Join(a.ws, "ticket.txt")
	code, out := a.run(t, "run", "--", "touch", file)
	if code != 75 {
		t.Fatalf("dev's run on host-0 exited %d: %s", code, out)
	}
	id := approvalID.FindStringSubmatch(out)[1]

	pg := page.page()
	if !strings.Contains(pg, `id="req-`+id+`"`) {
		t.Fatalf("dev's request on host-0 is not on host-1's page:\n%s", pg)
	}
	if strings.Contains(pg, evesID) {
		t.Error("eve's request on host-0 is on dev's page on host-1")
	}
	if flash := page.answer(evesID, "approve"); !strings.HasPrefix(flash, "Not answered: ") {
		t.Errorf("a forged approval of eve's request on dev's page: %q", flash)
	}
	st, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Host: "checker"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if p, err := st.Get(context.Background(), evesID); err != nil || p.Status != approvals.StatusPending {
		t.Errorf("eve's request after the forged approval: %s %v", p.Status, err)
	}

	if flash := page.answer(id, "approve"); !strings.HasPrefix(flash, "Approved: ") {
		t.Fatalf("approve on host-1's page: %q", flash)
	}
	// Host-1 runs the same command in the same directory: the ticket is
	// host-0's, so it asks.
	cmd := b.command("run", "--", "touch", file)
	cmd.Dir = a.ws
	bout, _ := cmd.CombinedOutput()
	if c := cmd.ProcessState.ExitCode(); c != 75 {
		t.Errorf("host-1 ran host-0's approved command: exit %d: %s", c, bout)
	}
	if c, out := a.run(t, "run", "--", "touch", file); c != 0 {
		t.Errorf("host-0's rerun after the approval exited %d: %s", c, out)
	}
	if c, _ := a.run(t, "run", "--", "touch", file); c != 75 {
		t.Errorf("host-0's second rerun exited %d: the ticket was spent twice", c)
	}
}

// TestFleetServeConcessions: a waiting run on host-0 goes ahead when
// host-1's page approves it with a concession, which then applies where
// the request was asked: contained work in host-0's workspace (a session
// rule on host-0), the command for the session (a session rule on
// host-0); "always" writes the allow rule to host-1's own policy file,
// so host-0's run gets a one-shot ticket and asks again next time.
func TestFleetServeConcessions(t *testing.T) {
	srv := fleetServer(t)
	hosts, _ := newFleet(t, srv, 2)
	a, b := hosts[0], hosts[1]
	if err := os.WriteFile(filepath.Join(a.ws, "Makefile"), []byte("c1 c2 s1 p1:\n\t@echo made $@\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	page := b.serve(t)
	approveWaiting := func(target, answer string) (card string) {
		t.Helper()
		done, errw := a.background(t, nil, "run", "--wait", "--", "make", target)
		select {
		case code := <-done:
			t.Fatalf("make %s ended before asking: exit %d: %s", target, code, errw.String())
		case <-time.After(300 * time.Millisecond):
		}
		id := parkedID(t, errw)
		pg := page.page()
		i := strings.Index(pg, `id="req-`+id+`"`)
		if i < 0 {
			t.Fatalf("make %s: no card on host-1's page", target)
		}
		card = pg[i:]
		card = card[:strings.Index(card, "</article>")]
		if !strings.Contains(card, `value="`+answer+`"`) {
			return card
		}
		if flash := page.answer(id, answer); !strings.HasPrefix(flash, "Approved: ") {
			t.Fatalf("make %s, %s: %q", target, answer, flash)
		}
		if code := within(t, done, 20*time.Second, "run --wait"); code != 0 {
			t.Fatalf("make %s approved with %s on host-1: run --wait on host-0 exited %d: %s", target, answer, code, errw.String())
		}
		return ""
	}
	if card := approveWaiting("s1", "approve:session"); card != "" {
		t.Fatalf("no session choice:\n%s", card)
	}
	if c, out := a.run(t, "run", "--", "make", "s1"); c != 0 {
		t.Errorf("make s1 for the session, on host-0: exit %d: %s", c, out)
	}
	if card := approveWaiting("p1", "approve:permanent"); card != "" {
		t.Fatalf("no permanent choice:\n%s", card)
	}
	if b, err := os.ReadFile(filepath.Join(b.home, ".mnemos", "policy.yaml")); err != nil || !strings.Contains(string(b), `argv_prefix: ["make", "p1"]`) {
		t.Errorf("the allow rule is not in host-1's policy file (%v)", err)
	}
	if c, _ := a.run(t, "run", "--", "make", "p1"); c != 75 {
		t.Errorf("make p1 on host-0 exited %d: host-1's policy file decided it", c)
	}
	// Last: it lets all contained work in the workspace through.
	if card := approveWaiting("c1", "approve:contained"); card != "" {
		t.Logf("SKIP contained work: not offered here (the sandbox does not keep all its promises):\n%s", card)
	} else if c, out := a.run(t, "run", "--", "make", "c2"); c != 0 {
		t.Errorf("contained work in host-0's workspace after the concession on host-1: exit %d: %s", c, out)
	}
}
