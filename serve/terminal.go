package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/journal"
)

// Terminal is mnemos approvals watch: it shows each request of its
// identity on a terminal as it arrives, one at a time, oldest first, and
// answers it with one key: approve once, the contained work of its
// workspace for its session (when it is contained work), for the
// session, permanently (with what the gate proposes to remember),
// reject, or skip. With the Journal, each run one of its identity's
// approvals let through is shown when it ends, with what it changed, and
// u undoes the last one shown after a y/N (a second y/N before forcing
// over paths changed since). It learns of new requests as serve's page does (the
// state's notifications, or the database's files watched; the registry
// read when they say so and every Refresh) and answers through the
// Resolver, as `mnemos approvals approve` and `deny` do: the registry's
// four checks, the ticket and the audit events are the gate's.
//
// It writes plain lines: no escape sequence, no cursor movement, so that
// it reads the same over SSH, in tmux and in a log of the session. Every
// text from a request is redacted as the audit log redacts it and
// escaped (Printable). The caller puts the terminal in raw mode and
// restores it.
type Terminal struct {
	// In gives the keys; Out shows the cards (both the terminal).
	In  io.Reader
	Out io.Writer
	// Identity is whom the terminal answers as; the requests of other
	// identities are named once, without their details.
	Identity approvals.Identity
	Resolver Resolver
	Registry Registry
	Now      func() time.Time
	// Watch are the files whose change means the registry may have
	// changed (the database and its WAL), checked every Poll (default
	// 100 ms); the registry is read at least every Refresh (2 s).
	Watch         []string
	Poll, Refresh time.Duration
	// Changes, when set, says when the requests may have changed, on
	// any host (the PostgreSQL store's LISTEN/NOTIFY); Watch is then not
	// looked at.
	Changes approvals.Waiter
	// Fleet: the state is shared by several hosts; the terminal also
	// shows its identity's requests parked on the others, naming the
	// host of each.
	Fleet bool
	// Journal, when set, is where the terminal finds the runs its
	// identity's approvals let through: each that ends while it watches
	// is shown with what it changed, and u undoes it after a y/N
	// (journal.undo is written to Audit, by terminal:NAME).
	Journal Journal
	Audit   Recorder
}

// Keys the terminal reads. ^C, ^D and q quit (the terminal is in raw
// mode: ^C is a byte, not a signal).
const (
	keyOnce      = 'a'
	keyContained = 'c'
	keySession   = 's'
	keyPermanent = 'p'
	keyReject    = 'r'
	keySkip      = 'n'
	keyQuit      = 'q'
	keyHelp      = '?'
	keyUndo      = 'u'
	ctrlC        = 0x03
	ctrlD        = 0x04
)

// termState is what the terminal knows of the requests.
type termState struct {
	cur     *approvals.Pending
	skipped map[string]bool
	done    map[string]bool // answered here
	named   map[string]bool // others' requests already named
	waiting []approvals.Pending
	idle    bool // "waiting for requests" was said since the last card

	// The runs of approvals shown (journal.go): since when they are
	// shown, those shown, those u may undo (oldest first), and the undo
	// waiting for its y/N.
	since    time.Time
	shown    map[string]bool
	undoable []shownRun
	confirm  *shownRun
	force    bool
	// journalErr is the journal's last error, said once.
	journalErr string
}

// shownRun is a run an approval let through, shown on the terminal.
type shownRun struct {
	run      journal.RunRecord
	approval approvals.Pending
}

// Run shows and answers requests until ctx is done, a quit key is
// pressed or In ends.
func (t *Terminal) Run(ctx context.Context) error {
	if t.Now == nil {
		t.Now = time.Now
	}
	if t.Poll <= 0 {
		t.Poll = 100 * time.Millisecond
	}
	if t.Refresh <= 0 {
		t.Refresh = 2 * time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	keys := make(chan byte)
	ended := make(chan error, 1)
	go func() {
		buf := make([]byte, 64)
		for {
			n, err := t.In.Read(buf)
			for _, b := range buf[:n] {
				select {
				case keys <- b:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				ended <- err
				return
			}
		}
	}()
	st := &termState{skipped: map[string]bool{}, done: map[string]bool{}, named: map[string]bool{},
		since: t.Now(), shown: map[string]bool{}}
	where, undo := "", ""
	if t.Fleet {
		where = " on every host sharing the state"
	}
	if t.Journal != nil {
		undo = ", u undo what a run you approved changed (asks first)"
	}
	t.printf("mnemos: watching the requests of %s%s; keys: a approve once, c contained work here for the session (when offered), s for the session, p permanently, r reject, n skip%s, q quit\n", idString(t.Identity), where, undo)
	tick := time.NewTicker(t.Poll)
	defer tick.Stop()
	wake := make(chan struct{}, 1)
	if t.Changes != nil {
		go wakeOnChange(ctx, t.Changes, t.Refresh, wake)
	}
	var (
		last     stamp
		lastRead time.Time
		woke     bool
	)
	for {
		due := woke || lastRead.IsZero() || time.Since(lastRead) >= t.Refresh
		if t.Changes == nil {
			s := stampOf(t.Watch)
			due = due || s != last
			last = s
		}
		woke = false
		if due {
			lastRead = time.Now()
			if err := t.refresh(ctx, st); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
		t.next(st)
		select {
		case <-ctx.Done():
			return nil
		case err := <-ended:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case k := <-keys:
			if quit := t.key(ctx, st, k); quit {
				t.printf("\nmnemos: stopped watching\n")
				return nil
			}
		case <-wake:
			woke = true
		case <-tick.C:
		}
	}
}

func (t *Terminal) printf(format string, args ...any) {
	fmt.Fprintf(t.Out, format, args...)
}

// refresh reads the pending requests: the card shown that was answered
// elsewhere or expired is said so and put away; the others' new requests
// are named.
func (t *Terminal) refresh(ctx context.Context, st *termState) error {
	now := t.Now()
	list, err := listRequests(ctx, t.Registry, t.Fleet, approvals.ListOptions{Limit: pendingLimit}, now, t.Identity)
	if err != nil {
		return fmt.Errorf("read requests: %w", err)
	}
	slices.Reverse(list) // oldest first
	st.waiting = st.waiting[:0]
	for _, p := range list {
		if p.StatusAt(now) != approvals.StatusPending {
			continue
		}
		if p.Requester() != t.Identity {
			if !st.named[p.Token] {
				st.named[p.Token] = true
				t.printf("\nmnemos: request %s of %s waits; this terminal answers for %s (%s answers it)\n",
					p.Token, idString(p.Requester()), idString(t.Identity), watchCommand(p.Requester()))
				st.idle = false
			}
			continue
		}
		st.waiting = append(st.waiting, p)
	}
	if st.cur != nil && !slices.ContainsFunc(st.waiting, func(p approvals.Pending) bool { return p.Token == st.cur.Token }) {
		p, err := t.Registry.Get(ctx, st.cur.Token)
		what := "is no longer waiting"
		if err == nil {
			what = "was " + outcomeLine(p, p.StatusAt(now)) + " elsewhere"
			if p.StatusAt(now) == approvals.StatusExpired {
				what = "expired before anyone answered"
			}
		}
		t.printf("\nmnemos: %s %s\n", st.cur.Token, what)
		st.done[st.cur.Token] = true
		st.cur = nil
	}
	return t.runs(ctx, st)
}

// runs shows each run that one of the identity's approvals let through
// and that ended while the terminal watches, with what it changed, once.
func (t *Terminal) runs(ctx context.Context, st *termState) error {
	if t.Journal == nil {
		return nil
	}
	now := t.Now()
	recent, err := listRequests(ctx, t.Registry, false, approvals.ListOptions{IncludeResolved: true, Limit: historyWindow}, now)
	if err != nil {
		return fmt.Errorf("read requests: %w", err)
	}
	approved := map[string]approvals.Identity{}
	byToken := map[string]approvals.Pending{}
	for _, p := range recent {
		if p.StatusAt(now) == approvals.StatusApproved && p.Requester() == t.Identity {
			approved[p.Token], byToken[p.Token] = t.Identity, p
		}
	}
	runs, err := runsOf(t.Journal, approved)
	if err != nil {
		// The requests are still answered; the runs wait for a journal
		// that reads again.
		if msg := approvals.Printable(err.Error()); msg != st.journalErr {
			st.journalErr = msg
			t.printf("\nmnemos: cannot read the journal (the runs your approvals let through are not shown): %s\n", msg)
		}
		return nil
	}
	st.journalErr = ""
	var fresh []shownRun
	for _, p := range recent {
		for _, r := range runs[p.Token] {
			if st.shown[r.ID] || r.State == journal.StateRunning || r.Entries == 0 || r.Ended.Before(st.since) {
				continue
			}
			st.shown[r.ID] = true
			fresh = append(fresh, shownRun{run: r, approval: byToken[p.Token]})
		}
	}
	sort.SliceStable(fresh, func(i, j int) bool { return fresh[i].run.Ended.Before(fresh[j].run.Ended) })
	for _, sr := range fresh {
		t.showRun(sr)
		if sr.run.UndoneBy == "" {
			st.undoable = append(st.undoable, sr)
		}
	}
	if len(fresh) > 0 && st.cur != nil && st.confirm == nil {
		t.printf("%s", prompt(termChoices(*st.cur)))
	}
	return nil
}

// showRun says what a run an approval let through changed.
func (t *Terminal) showRun(sr shownRun) {
	v := viewRun(t.Journal, sr.run, terminalChanges, true)
	var b strings.Builder
	state := ""
	if v.State == journal.StateInterrupted {
		state = " (interrupted)"
	}
	fmt.Fprintf(&b, "\nmnemos: approval %s (%s) let run %s through%s: %s in %s\n", sr.approval.Token, summary(sr.approval), v.ID, state, v.Summary, v.Workspace)
	if v.Err != "" {
		fmt.Fprintf(&b, "  its changes cannot be read: %s\n", v.Err)
	}
	for _, c := range v.Changes {
		b.WriteString("  " + c.line() + "\n")
	}
	if v.More > 0 {
		fmt.Fprintf(&b, "  and %d more (mnemos changes %s lists them all)\n", v.More, v.ID)
	}
	if v.UndoneBy != "" {
		fmt.Fprintf(&b, "mnemos: it was undone already, by run %s\n", v.UndoneBy)
	} else if v.Total > 0 {
		fmt.Fprintf(&b, "mnemos: u undoes it (asks first); mnemos changes %s --diff shows it\n", v.ID)
	}
	t.printf("%s", b.String())
}

// next shows the oldest waiting request not yet answered or skipped here,
// when no card is shown.
func (t *Terminal) next(st *termState) {
	if st.cur != nil {
		return
	}
	for _, p := range st.waiting {
		if !st.done[p.Token] && !st.skipped[p.Token] {
			st.cur = &p
			st.idle = false
			t.showCard(p, len(st.waiting))
			return
		}
	}
	if !st.idle {
		st.idle = true
		n := 0
		for _, p := range st.waiting {
			if st.skipped[p.Token] {
				n++
			}
		}
		switch n {
		case 0:
			t.printf("\nmnemos: waiting for new requests\n")
		case 1:
			t.printf("\nmnemos: waiting for new requests (1 skipped still waits: mnemos approvals list)\n")
		default:
			t.printf("\nmnemos: waiting for new requests (%d skipped still wait: mnemos approvals list)\n", n)
		}
	}
}

// termChoice is one way to approve a card, with its key.
type termChoice struct {
	key      byte
	label    string
	remember string
}

func termChoices(p approvals.Pending) []termChoice {
	out := []termChoice{{keyOnce, "approve once", ""}}
	for _, c := range choices(p) {
		switch c.Value {
		case rememberContained:
			out = append(out, termChoice{keyContained, "approve contained work here for this session", c.Value})
		case approvals.TerritorySession:
			out = append(out, termChoice{keySession, "approve for this session", c.Value})
		case approvals.TerritoryPermanent:
			out = append(out, termChoice{keyPermanent, "approve permanently", c.Value})
		}
	}
	return out
}

func (t *Terminal) showCard(p approvals.Pending, waiting int) {
	now := t.Now()
	m := gate.CardMessage(p)
	var b strings.Builder
	fmt.Fprintf(&b, "\n--- request %s", p.Token)
	if waiting > 1 {
		fmt.Fprintf(&b, " (%d waiting)", waiting)
	}
	b.WriteString(" ---\n")
	for _, l := range m.Card {
		b.WriteString("  " + approvals.Printable(l) + "\n")
	}
	if ext, ok := gate.ExtensionOf(p); ok {
		fmt.Fprintf(&b, "  extension: %s\n", approvals.Printable(ext))
	} else {
		fmt.Fprintf(&b, "  command:   %s\n", approvals.Printable(quoteArgv(m.Argv)))
		fmt.Fprintf(&b, "  in:        %s\n", approvals.Printable(m.Cwd))
	}
	if p.Host != "" {
		fmt.Fprintf(&b, "  host:      %s\n", approvals.Printable(p.Host))
	}
	if ws, ok := gate.ContainedWork(p); ok {
		fmt.Fprintf(&b, "  sandbox:   contained work: no network, writes only in %s and temp\n", approvals.Printable(audit.RedactString(ws)))
	}
	fmt.Fprintf(&b, "  expires:   %s (in %s)\n", p.ExpiresAt.Local().Format("15:04:05"), p.ExpiresAt.Sub(now).Round(time.Second))
	cs := termChoices(p)
	if len(cs) > 1 {
		for _, l := range gate.RememberChoices(p) {
			// The command line's flags that choose it are the keys here.
			if i := strings.Index(l, " (--"); i > 0 && strings.HasSuffix(l, ")") {
				l = l[:i]
			}
			b.WriteString("  remember:  " + approvals.Printable(audit.RedactString(l)) + "\n")
		}
	}
	b.WriteString(prompt(cs))
	t.printf("%s", b.String())
}

func prompt(cs []termChoice) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, "["+string(c.key)+"] "+c.label)
	}
	parts = append(parts, "[r] reject", "[n] skip", "[q] quit")
	return strings.Join(parts, "  ") + "? "
}

// key handles one key; true means quit.
func (t *Terminal) key(ctx context.Context, st *termState, k byte) bool {
	if st.confirm != nil && k != ctrlC && k != ctrlD {
		t.confirmed(ctx, st, k == 'y' || k == 'Y', k)
		return false
	}
	switch k {
	case keyQuit, 'Q', ctrlC, ctrlD:
		return true
	case '\r', '\n':
		return false
	case keyUndo:
		if t.Journal != nil {
			t.askUndo(st)
			return false
		}
	}
	if st.cur == nil {
		t.printf("\nmnemos: nothing waits for %s; q quits\n", idString(t.Identity))
		return false
	}
	p := *st.cur
	cs := termChoices(p)
	switch k {
	case keyReject:
		t.printf("%c\n", k)
		res, err := t.Resolver.Deny(ctx, p.Token, t.Identity)
		if err != nil {
			t.refused(st, p, err)
			return false
		}
		t.printf("mnemos: rejected %s: %s\n", res.Token, summary(res))
		t.answered(st, p)
		return false
	case keySkip, ' ':
		t.printf("%c\nmnemos: skipped %s: it still waits, and this watch shows it no more\n", k, p.Token)
		st.skipped[p.Token] = true
		st.cur = nil
		return false
	case keyHelp:
		t.printf("%c\n%s", k, strings.Join(helpLines(cs, t.Journal != nil), "")+prompt(cs))
		return false
	}
	for _, c := range cs {
		if c.key != k {
			continue
		}
		t.printf("%c\n", k)
		res, err := t.Resolver.Approve(ctx, p.Token, t.Identity, gate.ApproveOptions{Remember: c.remember,
			Via: approvals.Identity{Channel: approvals.ViaTerminal, Sender: t.Identity.Sender}})
		if err != nil {
			t.refused(st, p, err)
			return false
		}
		t.printf("mnemos: approved %s: %s\n", res.Pending.Token, summary(res.Pending))
		for _, l := range rememberedLines(res) {
			t.printf("mnemos:   %s\n", l)
		}
		t.answered(st, p)
		return false
	}
	t.printf("\nmnemos: press %s (? explains)\n%s", keyList(cs), prompt(cs))
	return false
}

// askUndo asks whether to undo the newest run shown that was not undone.
func (t *Terminal) askUndo(st *termState) {
	if len(st.undoable) == 0 {
		t.printf("u\nmnemos: no run an approval of yours let through is shown here to undo (mnemos changes lists the runs of a workspace; mnemos undo ID puts one back)\n")
		t.reprompt(st)
		return
	}
	sr := st.undoable[len(st.undoable)-1]
	st.confirm, st.force = &sr, false
	v := viewRun(t.Journal, sr.run, 0, true)
	t.printf("u\nmnemos: undo run %s (%s), which approval %s let through? it puts back %s in %s [y/N] ",
		v.ID, v.Command, sr.approval.Token, v.Summary, v.Workspace)
}

// confirmed does the undo waiting for its y/N when yes, and says so
// otherwise. A refusal because paths changed since the run lists them
// and asks again, for the forced undo.
func (t *Terminal) confirmed(ctx context.Context, st *termState, yes bool, k byte) {
	sr, force := *st.confirm, st.force
	st.confirm, st.force = nil, false
	if k >= ' ' && k < 0x7f {
		t.printf("%c", k)
	}
	t.printf("\n")
	if !yes {
		t.printf("mnemos: not undone: run %s is left as it is\n", sr.run.ID)
		t.reprompt(st)
		return
	}
	run, p, err := findUndo(ctx, t.Journal, t.Registry, sr.run.ID, t.Identity, t.Now())
	if err == nil {
		var rep journal.UndoReport
		rep, err = undoRun(ctx, t.Journal, t.Audit, run, p, approvals.Identity{Channel: approvals.ViaTerminal, Sender: t.Identity.Sender}, force)
		var ce *journal.ConflictError
		switch {
		case errors.As(err, &ce):
			var b strings.Builder
			fmt.Fprintf(&b, "mnemos: nothing was undone: these paths changed after run %s ended:\n", run.ID)
			for _, c := range conflictViews(ce, run.Workspace) {
				fmt.Fprintf(&b, "  %s: %s\n", c.Path, c.Why)
			}
			b.WriteString("mnemos: undo anyway? what they hold now is overwritten (the undo keeps it: it can be undone too) [y/N] ")
			t.printf("%s", b.String())
			st.confirm, st.force = &sr, true
			return
		case err == nil || len(rep.Steps) > 0:
			t.printf("mnemos: %s\n", undoneLine(rep, run))
			if err != nil {
				t.printf("mnemos: %s\n", approvals.Printable(err.Error()))
			}
			err = nil
		}
	}
	if err != nil {
		t.printf("mnemos: not undone: %s\n", approvals.Printable(err.Error()))
	}
	st.undoable = slices.DeleteFunc(st.undoable, func(o shownRun) bool { return o.run.ID == sr.run.ID })
	t.reprompt(st)
}

// reprompt shows the card's keys again after another question.
func (t *Terminal) reprompt(st *termState) {
	if st.cur != nil {
		t.printf("%s", prompt(termChoices(*st.cur)))
	}
}

// refused says why an answer was not taken. A request that can no longer
// be answered is put away; otherwise (a --remember the gate refused) the
// card stays for another key.
func (t *Terminal) refused(st *termState, p approvals.Pending, err error) {
	t.printf("mnemos: not answered %s: %s\n", p.Token, approvals.Printable(err.Error()))
	if errors.Is(err, approvals.ErrAlreadyResolved) || errors.Is(err, approvals.ErrExpired) ||
		errors.Is(err, approvals.ErrUnknownToken) || errors.Is(err, approvals.ErrNotRequester) {
		st.done[p.Token] = true
		st.cur = nil
		return
	}
	t.printf("%s", prompt(termChoices(p)))
}

func (t *Terminal) answered(st *termState, p approvals.Pending) {
	st.done[p.Token] = true
	st.cur = nil
}

func keyList(cs []termChoice) string {
	var ks []string
	for _, c := range cs {
		ks = append(ks, string(c.key))
	}
	return strings.Join(append(ks, "r", "n", "q"), ", ")
}

func helpLines(cs []termChoice, undo bool) []string {
	out := []string{}
	for _, c := range cs {
		switch c.remember {
		case "":
			out = append(out, "  a  approve once: the waiting command (or its identical rerun) runs once\n")
		case rememberContained:
			out = append(out, "  c  approve, and stop asking about contained work in this workspace for the request's session (no network, writes only in the workspace and temp)\n")
		case approvals.TerritorySession:
			out = append(out, "  s  approve, and stop asking about what 'remember' says for the request's session (or 12 hours)\n")
		case approvals.TerritoryPermanent:
			out = append(out, "  p  approve, and stop asking about what 'remember' says until you revoke it (a grant, or an allow rule in your policy file)\n")
		}
	}
	out = append(out, "  r  reject: the waiting command is denied\n",
		"  n  skip: leave it waiting and show the next (this watch shows it no more)\n")
	if undo {
		out = append(out, "  u  undo what the last run an approval of yours let through changed (shown here when it ends; asks first)\n")
	}
	return append(out, "  q  quit (the requests keep waiting)\n")
}

// rememberedLines says what an approval remembered.
func rememberedLines(res gate.Approved) []string {
	var out []string
	for _, g := range res.Grants {
		out = append(out, fmt.Sprintf("grant %d: %s on %s", g.ID, g.Capability, approvals.Printable(g.Target)))
	}
	for _, r := range res.Rules {
		out = append(out, fmt.Sprintf("allow rule %q in %s for: %s", r.Name, approvals.Printable(r.File), approvals.Printable(quoteArgv(r.ArgvPrefix))))
	}
	for _, r := range res.SessionRules {
		out = append(out, fmt.Sprintf("session rule %s for: %s, until %s", r.Label(), approvals.Printable(quoteArgv(r.ArgvPrefix)), r.ExpiresAt.Local().Format("15:04")))
	}
	for _, n := range res.NotRemembered {
		out = append(out, fmt.Sprintf("not remembered, asks again: %s: %s", approvals.Printable(quoteArgv(n.Argv)), approvals.Printable(n.Why)))
	}
	return out
}

// watchCommand is the command that watches an identity's requests.
func watchCommand(id approvals.Identity) string {
	s := "mnemos --channel " + shellWord(id.Channel)
	if id.Sender != "" {
		s += " --sender " + shellWord(id.Sender)
	}
	return approvals.Printable(s + " approvals watch")
}
