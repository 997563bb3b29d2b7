package serve

import (
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
)

// pageData is what the page template shows. Every text in it that came
// from a request went through Printable (control and bidirectional
// characters shown escaped) and the audit log's redaction; html/template
// escapes it for HTML.
type pageData struct {
	Identity string
	Flash    string
	CSRF     string
	// Fleet: the state is shared; cards and history name their host.
	Fleet   bool
	Pending []cardView
	History []historyView
}

type cardView struct {
	ID        string
	Form      string
	Lines     []string
	Argv      string
	Cwd       string
	Requester string
	// Host is the machine the request was parked on (shared state only).
	Host    string
	Expires string
	// Contained is the workspace of a request that is contained work,
	// which may be approved for its session's contained work there.
	Contained string
	Own       bool
	Choices   []choice
	// CSRF is the session's token the answer form carries.
	CSRF string
}

type choice struct{ Value, Label string }

type historyView struct {
	// Status is the request's status, a word (a class name on the page);
	// Territory what an approval conceded beyond once, if anything.
	ID, Status, Territory, When, Summary, By, Host string
	// Runs are the runs an approval let through (its ticket spent), with
	// what they changed in the workspace (journal.go).
	Runs      []runView
	at        time.Time
	requester approvals.Identity
}

// view is what the page shows: the requests waiting (newest first), and
// the last answered or expired (newest first by when that happened). With
// a shared state they include the page's identity's requests parked on
// the other hosts.
func (s *Server) view(r *http.Request, sid string) (pageData, error) {
	ctx, now := r.Context(), s.cfg.Now()
	open, err := listRequests(ctx, s.cfg.Registry, s.cfg.Fleet, approvals.ListOptions{Limit: pendingLimit}, now, s.cfg.Identity)
	if err != nil {
		return pageData{}, err
	}
	recent, err := listRequests(ctx, s.cfg.Registry, s.cfg.Fleet, approvals.ListOptions{IncludeResolved: true, Limit: historyWindow}, now, s.cfg.Identity)
	if err != nil {
		return pageData{}, err
	}
	d := pageData{Identity: idString(s.cfg.Identity), CSRF: s.sess.csrf(sid), Fleet: s.cfg.Fleet}
	for _, p := range open {
		if p.StatusAt(now) == approvals.StatusPending {
			c := s.card(p, now)
			c.CSRF = d.CSRF
			d.Pending = append(d.Pending, c)
		}
	}
	for _, p := range recent {
		if st := p.StatusAt(now); st != approvals.StatusPending {
			d.History = append(d.History, history(p, st))
		}
	}
	sort.SliceStable(d.History, func(i, j int) bool { return d.History[i].at.After(d.History[j].at) })
	if len(d.History) > historyLimit {
		d.History = d.History[:historyLimit]
	}
	s.attachRuns(d.History)
	return d, nil
}

// attachRuns adds to each approval shown the runs it let through, with
// their changes. A journal that cannot be read leaves the history as it
// is (and says so in serve's log).
func (s *Server) attachRuns(hs []historyView) {
	if s.cfg.Journal == nil {
		return
	}
	approved := map[string]approvals.Identity{}
	for _, h := range hs {
		if h.Status == string(approvals.StatusApproved) {
			approved[h.ID] = h.requester
		}
	}
	runs, err := runsOf(s.cfg.Journal, approved)
	if err != nil {
		s.cfg.Log.Error("read the journal", "err", err)
		return
	}
	for i := range hs {
		for _, r := range runs[hs[i].ID] {
			hs[i].Runs = append(hs[i].Runs, viewRun(s.cfg.Journal, r, pageChanges, hs[i].requester == s.cfg.Identity))
		}
	}
}

func (s *Server) card(p approvals.Pending, now time.Time) cardView {
	m := gate.CardMessage(p) // redacted as the audit log is
	v := cardView{
		ID:        p.Token,
		Form:      m.Form,
		Lines:     m.Card,
		Argv:      approvals.Printable(quoteArgv(m.Argv)),
		Cwd:       approvals.Printable(m.Cwd),
		Requester: idString(p.Requester()),
		Host:      approvals.Printable(p.Host),
		Expires:   p.ExpiresAt.Local().Format("15:04:05") + " (in " + p.ExpiresAt.Sub(now).Round(time.Second).String() + ")",
		Own:       p.Requester() == s.cfg.Identity,
		Choices:   choices(p),
	}
	if ext, ok := gate.ExtensionOf(p); ok {
		v.Argv = "extension " + approvals.Printable(ext)
	}
	if ws, ok := gate.ContainedWork(p); ok {
		v.Contained = approvals.Printable(audit.RedactString(ws))
	}
	return v
}

// rememberContained is the choice that approves a request and the
// contained work in its workspace for its session (approve --remember
// contained; gate.ContainedWork says when it applies).
const rememberContained = "contained"

// choices are the ways the page offers to approve p: once, the
// contained work of its workspace for its session when it is contained
// work, and the territory concessions the gate can record for it.
func choices(p approvals.Pending) []choice {
	if _, ok := gate.ExtensionOf(p); ok {
		return []choice{{"", "Approve"}}
	}
	cs := concessions(p)
	if _, ok := gate.ContainedWork(p); ok {
		cs = slices.Insert(cs, 1, choice{rememberContained, "Approve contained work here for this session"})
	}
	return cs
}

// concessions are once and the territory concessions for p.
func concessions(p approvals.Pending) []choice {
	once := choice{"", "Approve once"}
	always, targets := false, true
	for _, a := range p.Details.Accesses {
		spec, err := policy.Lookup(a.Capability)
		if err != nil {
			return []choice{once}
		}
		if spec.DefaultApproval == policy.ApprovalAlways {
			always = true
		} else if a.Target == "" {
			targets = false
		}
	}
	switch {
	case !targets || len(p.Details.Accesses) == 0:
		return []choice{once}
	case always:
		if _, err := gate.SafePrefix(p.Details.Argv); err != nil || p.Details.Pin == "" {
			return []choice{once}
		}
		return []choice{once, {approvals.TerritorySession, "Allow this command for the session"}, {approvals.TerritoryPermanent, "Always allow this command"}}
	}
	return []choice{once, {approvals.TerritorySession, "Approve for this session"}, {approvals.TerritoryPermanent, "Approve permanently"}}
}

func history(p approvals.Pending, st approvals.Status) historyView {
	h := historyView{ID: p.Token, Status: string(st), Summary: summary(p), Host: approvals.Printable(p.Host), at: p.ExpiresAt,
		requester: p.Requester()}
	if p.DecisionAt != nil {
		h.at = *p.DecisionAt
	}
	h.When = h.at.Local().Format("Jan 2 15:04:05")
	if p.DecisionBy != nil {
		h.By = idString(*p.DecisionBy)
	}
	if p.Territory != "" && p.Territory != approvals.TerritoryNone {
		h.Territory = approvals.Printable(p.Territory)
	}
	return h
}

// summary is a request on one line, as the confirmations say it.
func summary(p approvals.Pending) string {
	return approvals.Printable(audit.RedactString(p.ActionVerb + " " + p.TargetSummary))
}

func idString(id approvals.Identity) string {
	return approvals.Printable(id.Channel + ":" + id.Sender)
}

// quoteArgv writes argv as a POSIX shell would read it back.
func quoteArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, w := range argv {
		out[i] = shellWord(w)
	}
	return strings.Join(out, " ")
}

func shellWord(w string) string {
	if w == "" {
		return "''"
	}
	for _, c := range w {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_./:@%+=,-", c)) {
			return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return w
}
