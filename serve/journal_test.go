package serve

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/journal"
	"github.com/mnemos-dev/mnemos/policy"
)

// evilName is a file name an agent chooses: the page must show it as
// text.
const evilName = `<img src=x onerror=alert(1)>`

// journalFixture is a fixture whose serve reads the journal in its state
// directory, as mnemos serve does.
func journalFixture(t *testing.T, tweak ...func(*Config)) (*fixture, *journal.Journal) {
	t.Helper()
	var j *journal.Journal
	f := newGateFixture(t, policy.Default(), nil, append([]func(*Config){func(c *Config) {
		var err error
		if j, err = journal.Open(journal.Options{Dir: filepath.Join(c.StateDir, "journal")}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { j.Close() })
		c.Journal = j
	}}, tweak...)...)
	f.start()
	return f, j
}

// spend approves p (as the person on the terminal answers for dev) and
// spends its one-shot ticket as mnemos run does, returning the ticket the
// run then carries (gate.Decision.Ticket).
func (f *fixture) spend(p approvals.Pending) string {
	f.t.Helper()
	if _, err := f.g.Approve(context.Background(), p.Token, p.Requester(), gate.ApproveOptions{}); err != nil {
		f.t.Fatal(err)
	}
	return f.rerun(p)
}

// rerun spends the ticket of p, approved, as its rerun under mnemos run
// does, and returns it.
func (f *fixture) rerun(p approvals.Pending) string {
	f.t.Helper()
	ctx := context.Background()
	dec, err := f.g.Decide(ctx, gate.Request{Argv: p.Details.Argv, Cwd: f.ws, Channel: p.Channel, Sender: p.Sender}, gate.Mode{SpendTicket: true})
	if err != nil {
		f.t.Fatal(err)
	}
	if dec.Outcome != policy.Allow || dec.Ticket == "" {
		f.t.Fatalf("the approved rerun: %s (ticket %q): %s", dec.Outcome, dec.Ticket, dec.Reason)
	}
	return dec.Ticket
}

// jrun records a run in the journal as mnemos run's watch feeds it
// (Before, then the call) and returns its id. Each op is rm:NAME or
// write:NAME:TEXT, on real files of the workspace.
func (f *fixture) jrun(j *journal.Journal, ticket string, as approvals.Identity, argv []string, ops ...string) string {
	f.t.Helper()
	r, err := j.Begin(journal.RunInfo{Workspace: f.ws, Cwd: f.ws, Argv: argv, Ticket: ticket, Channel: as.Channel, Sender: as.Sender})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, op := range ops {
		w := strings.SplitN(op, ":", 3)
		p := filepath.Join(f.ws, w[1])
		switch w[0] {
		case "rm":
			if err := r.Before(journal.Unlink, p, ""); err != nil {
				f.t.Fatal(err)
			}
			if err := syscall.Unlink(p); err != nil {
				f.t.Fatal(err)
			}
		case "write":
			if err := r.Before(journal.Write, p, ""); err != nil {
				f.t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(w[2]), 0o644); err != nil {
				f.t.Fatal(err)
			}
		default:
			f.t.Fatalf("bad op %q", op)
		}
	}
	if _, err := r.Finish(); err != nil {
		f.t.Fatal(err)
	}
	return r.ID()
}

func (f *fixture) writeFile(name, content string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.ws, name), []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) readFile(name string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(f.ws, name))
	return string(data), err == nil
}

// lastUndo is the newest journal.undo event of the audit log.
func (f *fixture) lastUndo() (audit.Record, bool) {
	f.t.Helper()
	recs, err := f.audit.Tail(0)
	if err != nil {
		f.t.Fatal(err)
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Kind == audit.KindJournalUndo {
			return recs[i], true
		}
	}
	return audit.Record{}, false
}

// undo posts the form of the undo's confirmation, with the CSRF token
// the confirmation carries.
func (b *browser) undo(run string, force bool) *http.Response {
	b.f.t.Helper()
	m := csrfRe.FindStringSubmatch(text(b.get("/undo/" + run)))
	if m == nil {
		b.f.t.Fatalf("no CSRF token on the confirmation of run %s", run)
	}
	form := url.Values{"csrf": {m[1]}, "run": {run}}
	if force {
		form.Set("force", "1")
	}
	return b.post("/undo", form)
}

// TestSecurityChangesShownEscaped: the page shows, under the approval
// that let it through, what a run changed, every path as text: a file
// named like an HTML tag is no tag on the page, in its live updates or
// on the undo's confirmation.
func TestSecurityChangesShownEscaped(t *testing.T) {
	f, j := journalFixture(t)
	f.writeFile("calc.go", "package calc\n")
	f.writeFile(evilName, "evil\n")
	p := f.ask("rm", "calc.go")
	run := f.jrun(j, f.spend(p), dev, []string{"rm", "calc.go", evilName}, "rm:calc.go", "rm:"+evilName)

	b := f.browser(true)
	page := text(b.get("/"))
	ev := firstEvent(t, b)
	confirm := b.get("/undo/" + run)
	if confirm.StatusCode != http.StatusOK {
		t.Fatalf("GET /undo/%s: %s\n%s", run, confirm.Status, text(confirm))
	}
	for what, html := range map[string]string{"page": page, "event": ev, "confirmation": text(confirm)} {
		if strings.Contains(html, "<img") {
			t.Errorf("the %s holds a raw <img tag:\n%s", what, html)
		}
		if !strings.Contains(html, "&lt;img src=x onerror=alert(1)&gt;") {
			t.Errorf("the %s lacks the escaped file name:\n%s", what, html)
		}
		if !strings.Contains(html, "calc.go") || !strings.Contains(html, run) {
			t.Errorf("the %s lacks the run or its changes:\n%s", what, html)
		}
	}
	if !strings.Contains(page, `href="/undo/`+run+`"`) {
		t.Errorf("the page offers no undo of run %s:\n%s", run, page)
	}
	if !strings.Contains(page, "2 changes") {
		t.Errorf("the page does not count the changes:\n%s", page)
	}
}

// TestUndoFromPage: the page's undo asks first (a GET changes nothing),
// then the form's POST puts back what the run an approval let through
// deleted, byte for byte; journal.undo records who did it (page:dev) and
// the approval; the run is then shown undone and cannot be undone again.
func TestUndoFromPage(t *testing.T) {
	f, j := journalFixture(t)
	f.writeFile("calc.go", "package calc\n")
	f.writeFile(evilName, "evil\n")
	f.writeFile("keep.txt", "kept\n")
	p := f.ask("rm", "calc.go")
	run := f.jrun(j, f.spend(p), dev, []string{"sh", "-c", "rm -rf *"}, "rm:calc.go", "rm:"+evilName, "write:keep.txt:changed\n")
	b := f.browser(true)

	// The confirmation and every other GET leave the workspace as it is.
	csrf := csrfRe.FindStringSubmatch(text(b.get("/undo/" + run)))[1]
	for _, path := range []string{"/undo/" + run, "/undo/" + run + "?force=1", "/undo?run=" + run + "&csrf=" + csrf} {
		b.get(path)
	}
	if _, ok := f.readFile("calc.go"); ok {
		t.Fatal("a GET undid the run")
	}
	if _, ok := f.lastUndo(); ok {
		t.Fatal("a GET wrote journal.undo")
	}

	// The view of the one request (what a mail links to) shows the run
	// too.
	if one := text(b.get("/request/" + p.Token)); !strings.Contains(one, `href="/undo/`+run+`"`) || !strings.Contains(one, "3 changes") {
		t.Errorf("the request's own view lacks the run:\n%s", one)
	}

	resp := b.undo(run, false)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("undo: %s\n%s", resp.Status, text(resp))
	}
	for name, want := range map[string]string{"calc.go": "package calc\n", evilName: "evil\n", "keep.txt": "kept\n"} {
		if got, ok := f.readFile(name); !ok || got != want {
			t.Errorf("%s after the undo: %q (there: %v), want %q", name, got, ok, want)
		}
	}
	page := text(b.get("/"))
	if !regexp.MustCompile(`Undid run ` + run + ` \(sh -c &#39;rm -rf \*&#39;\): 3 paths restored; the undo is run \S+ \(mnemos undo \S+ takes it back\)`).MatchString(page) {
		t.Errorf("the page does not say what was undone:\n%s", page)
	}
	if !strings.Contains(page, "undone by run") || strings.Contains(page, `href="/undo/`+run+`"`) {
		t.Errorf("the run is not shown undone, or is still offered:\n%s", page)
	}
	rec, ok := f.lastUndo()
	if !ok {
		t.Fatal("no journal.undo in the audit log")
	}
	if rec.Attrs["by"] != "page:dev" || rec.Attrs["approval"] != p.Token || rec.Attrs["forced"] != false {
		t.Errorf("journal.undo: %v", rec.Attrs)
	}
	if runs, _ := rec.Attrs["runs"].([]any); len(runs) != 1 || runs[0] != run {
		t.Errorf("journal.undo runs: %v", rec.Attrs["runs"])
	}

	// A second undo is refused, and changes nothing.
	f.writeFile("calc.go", "package calc // edited\n")
	resp = b.post("/undo", url.Values{"csrf": {csrf}, "run": {run}})
	if resp.StatusCode != http.StatusConflict || !strings.Contains(text(resp), "undone already") {
		t.Fatalf("second undo: %s\n%s", resp.Status, text(resp))
	}
	if got, _ := f.readFile("calc.go"); got != "package calc // edited\n" {
		t.Fatalf("a refused undo changed calc.go: %q", got)
	}
}

// TestUndoConflictNeedsSecondConfirmation: a path changed since the run
// makes the undo refuse, listing it, and change nothing; the forced undo
// is offered behind a second confirmation that names what it overwrites.
func TestUndoConflictNeedsSecondConfirmation(t *testing.T) {
	f, j := journalFixture(t)
	f.writeFile("calc.go", "package calc\n")
	f.writeFile("notes.txt", "notes\n")
	p := f.ask("rm", "calc.go")
	run := f.jrun(j, f.spend(p), dev, []string{"gofmt", "-w", "."}, "write:calc.go:package calc\n\nfunc Add() {}\n", "rm:notes.txt")
	f.writeFile("calc.go", "package calc // mine since\n")
	b := f.browser(true)

	resp := b.undo(run, false)
	body := text(resp)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "Nothing was undone") ||
		!strings.Contains(body, "<code>calc.go</code>: changed since run "+run+" ended") {
		t.Fatalf("undo over a change since: %s\n%s", resp.Status, body)
	}
	if !strings.Contains(body, `href="/undo/`+run+`?force=1"`) || strings.Contains(body, `name="force"`) {
		t.Fatalf("the refusal forces at once, or offers no forced undo:\n%s", body)
	}
	if got, _ := f.readFile("calc.go"); got != "package calc // mine since\n" {
		t.Fatalf("the refused undo changed calc.go: %q", got)
	}
	if _, ok := f.readFile("notes.txt"); ok {
		t.Fatal("the refused undo restored notes.txt")
	}
	if _, ok := f.lastUndo(); ok {
		t.Fatal("a refused undo wrote journal.undo")
	}

	confirm := text(b.get("/undo/" + run + "?force=1"))
	if !strings.Contains(confirm, "Undo anyway?") || !strings.Contains(confirm, "<code>calc.go</code>") ||
		!strings.Contains(confirm, `name="force" value="1"`) {
		t.Fatalf("the second confirmation:\n%s", confirm)
	}
	if resp := b.undo(run, true); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("forced undo: %s\n%s", resp.Status, text(resp))
	}
	if got, _ := f.readFile("calc.go"); got != "package calc\n" {
		t.Fatalf("calc.go after the forced undo: %q", got)
	}
	if got, _ := f.readFile("notes.txt"); got != "notes\n" {
		t.Fatalf("notes.txt after the forced undo: %q", got)
	}
	rec, _ := f.lastUndo()
	if rec.Attrs["forced"] != true || rec.Attrs["by"] != "page:dev" {
		t.Fatalf("journal.undo: %v", rec.Attrs)
	}
	if cs, _ := rec.Attrs["changed_since"].([]any); len(cs) != 1 || !strings.HasSuffix(cs[0].(string), "/calc.go") {
		t.Fatalf("journal.undo changed_since: %v", rec.Attrs["changed_since"])
	}
}

// TestSecurityUndoChecks: an undo is a POST from the page with the
// session's CSRF token, like an answer; and only the runs that spent an
// approved ticket of the page's own identity are undone from it: not
// another identity's, not a run without a ticket or with a hook's, not
// one naming a request never approved, not a run still running, not a
// name that is no run. Nothing changes in the workspace meanwhile.
func TestSecurityUndoChecks(t *testing.T) {
	f, j := journalFixture(t)
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		f.writeFile(n, n+"\n")
	}
	p := f.ask("rm", "calc.go")
	mine := f.jrun(j, f.spend(p), dev, []string{"rm", "a"}, "rm:a")

	claude := approvals.Identity{Channel: "claude-code", Sender: "dev"}
	op := f.park(claude, []string{"rm", "b"}, 0)
	theirs := f.jrun(j, f.spend(op), claude, []string{"rm", "b"}, "rm:b")
	noTicket := f.jrun(j, "", dev, []string{"rm", "c"}, "rm:c")
	hook := f.jrun(j, "hook:"+strings.Repeat("a", 26), dev, []string{"rm", "d"}, "rm:d")
	waiting := f.park(dev, []string{"rm", "e"}, 0)
	forged := f.jrun(j, waiting.Token, dev, []string{"rm", "e"}, "rm:e")
	// A run of dev's that spent another identity's ticket.
	stolen := f.jrun(j, op.Token, dev, []string{"rm", "f"}, "rm:f")

	b := f.browser(true)
	csrf := b.csrf()
	page := text(b.get("/"))
	for _, r := range []string{theirs, noTicket, hook, forged, stolen} {
		if strings.Contains(page, `href="/undo/`+r+`"`) {
			t.Errorf("the page offers to undo run %s", r)
		}
	}
	if !strings.Contains(page, `href="/undo/`+mine+`"`) {
		t.Errorf("the page does not offer to undo the run of dev's approval:\n%s", page)
	}
	for name, r := range map[string]string{"another identity's": theirs, "no ticket": noTicket, "a hook's ticket": hook,
		"a request not approved": forged, "another identity's ticket": stolen, "no such run": "20250101-000000-deadbeef",
		"a path": "../../runs/x", "empty": ""} {
		if resp := b.get("/undo/" + url.PathEscape(r)); resp.StatusCode == http.StatusOK {
			t.Errorf("%s: the confirmation is offered", name)
		}
		resp := b.post("/undo", url.Values{"csrf": {csrf}, "run": {r}})
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: POST /undo: %s, want 404", name, resp.Status)
		}
	}
	for _, tc := range []struct {
		name   string
		b      *browser
		form   url.Values
		header []string
		code   int
	}{
		{"no session", f.browser(false), url.Values{"csrf": {csrf}, "run": {mine}}, nil, http.StatusUnauthorized},
		{"no CSRF token", b, url.Values{"run": {mine}}, nil, http.StatusForbidden},
		{"a wrong CSRF token", b, url.Values{"csrf": {strings.Repeat("0", 64)}, "run": {mine}}, nil, http.StatusForbidden},
		{"a cross-site origin", b, url.Values{"csrf": {csrf}, "run": {mine}}, []string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{"a cross-site fetch", b, url.Values{"csrf": {csrf}, "run": {mine}}, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
	} {
		if resp := tc.b.post("/undo", tc.form, tc.header...); resp.StatusCode != tc.code {
			t.Errorf("%s: %s, want %d", tc.name, resp.Status, tc.code)
		}
	}
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		if _, ok := f.readFile(n); ok {
			t.Errorf("%s was restored by a refused undo", n)
		}
	}
	if _, ok := f.lastUndo(); ok {
		t.Fatal("a refused undo wrote journal.undo")
	}

	// A run still running is not undone.
	q := f.ask("touch", "live.txt")
	r, err := j.Begin(journal.RunInfo{Workspace: f.ws, Argv: []string{"touch", "live.txt"}, Ticket: f.spend(q), Channel: dev.Channel, Sender: dev.Sender})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Before(journal.Write, filepath.Join(f.ws, "live.txt"), ""); err != nil {
		t.Fatal(err)
	}
	f.writeFile("live.txt", "x")
	resp := b.post("/undo", url.Values{"csrf": {csrf}, "run": {r.ID()}})
	if resp.StatusCode != http.StatusConflict || !strings.Contains(text(resp), "still running") {
		t.Errorf("a running run: %s\n%s", resp.Status, text(resp))
	}
	if _, err := r.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.readFile("live.txt"); !ok {
		t.Fatal("the running run was undone")
	}

	// The run of dev's own approval is undone.
	if resp := b.post("/undo", url.Values{"csrf": {csrf}, "run": {mine}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("dev's own run: %s\n%s", resp.Status, text(resp))
	}
	if got, _ := f.readFile("a"); got != "a\n" {
		t.Fatalf("a after the undo: %q", got)
	}
}

// TestPageShowsRunsAsTheyEnd: a run that ends after the page opened
// reaches it by the live updates, under its approval.
func TestPageShowsRunsAsTheyEnd(t *testing.T) {
	f, j := journalFixture(t, func(c *Config) { c.Refresh = 50 * time.Millisecond })
	f.writeFile("calc.go", "package calc\n")
	p := f.ask("rm", "calc.go")
	ticket := f.spend(p)
	b := f.browser(true)
	events := openEvents(t, b)
	waitEvent(t, events, "approved")
	run := f.jrun(j, ticket, dev, []string{"rm", "calc.go"}, "rm:calc.go")
	ev := waitEvent(t, events, "deleted")
	if !strings.Contains(ev, run) || !strings.Contains(ev, "calc.go") || !strings.Contains(ev, `href="/undo/`+run+`"`) {
		t.Fatalf("the event lacks the change:\n%s", ev)
	}
}

// TestTerminalUndo: approvals watch shows each run an approval of its
// identity let through when it ends, with what it changed (escaped), and
// u undoes it after a y (n leaves it); a path changed since makes it
// refuse, listing it, and ask again before forcing. journal.undo records
// terminal:dev. Another identity's runs are not shown.
func TestTerminalUndo(t *testing.T) {
	f, j := journalFixture(t)
	esc := "x\x1b]0;owned\x07\r\nmnemos undid everything"
	f.writeFile("calc.go", "package calc\n")
	f.writeFile(esc, "evil\n")
	f.writeFile("notes.txt", "notes\n")
	tm := f.terminalWith(&Terminal{Identity: dev, Resolver: f.g, Registry: f.st, Watch: f.cfg.Watch,
		Poll: 10 * time.Millisecond, Refresh: 100 * time.Millisecond, Journal: j, Audit: f.audit})
	tm.wait("u undo what a run you approved changed (asks first), q quit")
	tm.wait("waiting for new requests")

	p := f.ask("rm", "calc.go")
	tm.wait("--- request " + p.Token)
	tm.wait("? ")
	tm.press("a")
	tm.wait("approved " + p.Token)
	run := f.jrun(j, f.rerun(p), dev, []string{"rm", "calc.go"}, "rm:calc.go", "rm:"+esc)
	// Another identity's run is not shown.
	claude := approvals.Identity{Channel: "claude-code", Sender: "dev"}
	other := f.park(claude, []string{"rm", "notes.txt"}, 0)
	otherRun := f.jrun(j, f.spend(other), claude, []string{"rm", "notes.txt"}, "rm:notes.txt")

	shown := tm.wait("mnemos: u undoes it (asks first); mnemos changes " + run + " --diff shows it\n")
	for _, want := range []string{"approval " + p.Token + " (delete rm calc.go", "let run " + run + " through: 2 changes in " + f.ws + "\n",
		"  deleted  calc.go\n", `  deleted  x\x1b]0;owned\x07\r\nmnemos undid everything` + "\n"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the run's account lacks %q:\n%s", want, shown)
		}
	}
	tm.press("u")
	tm.wait("undo run " + run + " (rm calc.go), which approval " + p.Token + " let through? it puts back 2 changes in " + f.ws + " [y/N] ")
	tm.press("\r")
	tm.wait("not undone: run " + run + " is left as it is")
	if _, ok := f.readFile("calc.go"); ok {
		t.Fatal("the undo answered no was done")
	}
	tm.press("u")
	tm.wait("[y/N] ")
	tm.press("y")
	tm.wait("undid run " + run + " (rm calc.go): 2 paths restored; the undo is run ")
	if got, _ := f.readFile("calc.go"); got != "package calc\n" {
		t.Fatalf("calc.go after the undo: %q", got)
	}
	if got, _ := f.readFile(esc); got != "evil\n" {
		t.Fatalf("the escaped name after the undo: %q", got)
	}
	rec, ok := f.lastUndo()
	if !ok || rec.Attrs["by"] != "terminal:dev" || rec.Attrs["approval"] != p.Token || rec.Attrs["forced"] != false {
		t.Fatalf("journal.undo: %v", rec.Attrs)
	}
	tm.press("u")
	tm.wait("no run an approval of yours let through is shown here to undo")

	// Changed since the run: refused with the list, then forced on a
	// second y.
	q := f.ask("rm", "notes.txt")
	tm.wait("--- request " + q.Token)
	tm.wait("? ")
	tm.press("a")
	tm.wait("approved " + q.Token)
	f.writeFile("notes.txt", "notes\n")
	edit := f.jrun(j, f.rerun(q), dev, []string{"rm", "notes.txt"}, "write:notes.txt:rewritten\n")
	tm.wait("let run " + edit + " through: 1 change in ")
	f.writeFile("notes.txt", "mine since\n")
	tm.press("u")
	tm.wait("[y/N] ")
	tm.press("y")
	tm.wait("nothing was undone: these paths changed after run " + edit + " ended:\n  notes.txt: changed since run " + edit + " ended\n")
	tm.wait("undo anyway? what they hold now is overwritten (the undo keeps it: it can be undone too) [y/N] ")
	if got, _ := f.readFile("notes.txt"); got != "mine since\n" {
		t.Fatalf("the refused undo changed notes.txt: %q", got)
	}
	tm.press("y")
	tm.wait("undid run " + edit)
	if got, _ := f.readFile("notes.txt"); got != "notes\n" {
		t.Fatalf("notes.txt after the forced undo: %q", got)
	}
	if rec, _ := f.lastUndo(); rec.Attrs["forced"] != true || rec.Attrs["by"] != "terminal:dev" {
		t.Fatalf("journal.undo: %v", rec.Attrs)
	}

	out := tm.out.String()
	if strings.ContainsAny(out, "\x1b\x07\r") || strings.Contains(out, "\nmnemos undid everything") {
		t.Fatalf("a file name's control characters reached the terminal: %q", out)
	}
	if strings.Contains(out, otherRun) {
		t.Fatalf("another identity's run is shown:\n%s", out)
	}
}

// brokenJournal is a journal that cannot be read.
type brokenJournal struct{ Journal }

func (brokenJournal) Runs(journal.Filter) ([]journal.RunRecord, error) {
	return nil, errors.New("journal: runs: permission denied")
}

// TestJournalUnreadable: a journal that cannot be read leaves the
// requests live and answerable, on the page and the terminal, and the
// terminal says why it shows no runs, once (when there is an approval
// whose runs it would show).
func TestJournalUnreadable(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Journal, c.Refresh = brokenJournal{}, 50*time.Millisecond })
	b := f.browser(true)
	events := openEvents(t, b)
	<-events
	tm := f.terminalWith(&Terminal{Identity: dev, Resolver: f.g, Registry: f.st, Watch: f.cfg.Watch,
		Poll: 10 * time.Millisecond, Refresh: 50 * time.Millisecond, Journal: brokenJournal{}, Audit: f.audit})
	p := f.ask("touch", "notes.txt")
	waitEvent(t, events, p.Token)
	tm.wait("--- request " + p.Token)
	tm.wait("? ")
	tm.press("a")
	tm.wait("approved " + p.Token)
	tm.wait("cannot read the journal (the runs your approvals let through are not shown): journal: runs: permission denied")
	q := f.ask("touch", "other.txt")
	waitEvent(t, events, q.Token)
	tm.wait("--- request " + q.Token)
	if resp := b.get("/"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the page: %s", resp.Status)
	}
	time.Sleep(200 * time.Millisecond)
	if n := strings.Count(tm.out.String(), "cannot read the journal"); n != 1 {
		t.Errorf("the terminal said %d times that it cannot read the journal", n)
	}
}
