package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/gate"
)

// Terminal is mnemos approvals watch: it shows each request of its
// identity on a terminal as it arrives, one at a time, oldest first, and
// answers it with one key: approve once, the contained work of its
// workspace for its session (when it is contained work), for the
// session, permanently (with what the gate proposes to remember),
// reject, or skip. It learns of new requests as serve's page does (the
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
	st := &termState{skipped: map[string]bool{}, done: map[string]bool{}, named: map[string]bool{}}
	where := ""
	if t.Fleet {
		where = " on every host sharing the state"
	}
	t.printf("mnemos: watching the requests of %s%s; keys: a approve once, c contained work here for the session (when offered), s for the session, p permanently, r reject, n skip, q quit\n", idString(t.Identity), where)
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
	return nil
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
	switch k {
	case keyQuit, 'Q', ctrlC, ctrlD:
		return true
	case '\r', '\n':
		return false
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
		t.printf("%c\n%s", k, strings.Join(helpLines(cs), "")+prompt(cs))
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

func helpLines(cs []termChoice) []string {
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
	return append(out, "  r  reject: the waiting command is denied\n",
		"  n  skip: leave it waiting and show the next (this watch shows it no more)\n", "  q  quit (the requests keep waiting)\n")
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
