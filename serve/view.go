package serve

import (
	"net/http"
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
	Pending  []cardView
	History  []historyView
}

type cardView struct {
	ID        string
	Form      string
	Lines     []string
	Argv      string
	Cwd       string
	Requester string
	Expires   string
	Own       bool
	Choices   []choice
	// CSRF is the session's token the answer form carries.
	CSRF string
}

type choice struct{ Value, Label string }

type historyView struct {
	ID, Status, When, Summary, By string
}

func (s *Server) view(r *http.Request, sid string) (pageData, error) {
	now := s.cfg.Now()
	list, err := s.cfg.Registry.List(r.Context(), approvals.ListOptions{IncludeResolved: true, Limit: pendingLimit + historyLimit}, now)
	if err != nil {
		return pageData{}, err
	}
	d := pageData{Identity: idString(s.cfg.Identity), CSRF: s.sess.csrf(sid)}
	for _, p := range list {
		if st := p.StatusAt(now); st == approvals.StatusPending {
			c := s.card(p, now)
			c.CSRF = d.CSRF
			d.Pending = append(d.Pending, c)
		} else if len(d.History) < historyLimit {
			d.History = append(d.History, history(p, st))
		}
	}
	return d, nil
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
		Expires:   p.ExpiresAt.Local().Format("15:04:05") + " (in " + p.ExpiresAt.Sub(now).Round(time.Second).String() + ")",
		Own:       p.Requester() == s.cfg.Identity,
		Choices:   choices(p),
	}
	if ext, ok := gate.ExtensionOf(p); ok {
		v.Argv = "extension " + approvals.Printable(ext)
	}
	return v
}

// choices are the ways the page offers to approve p: once, and the
// territory concessions the gate can record for it.
func choices(p approvals.Pending) []choice {
	once := choice{"", "Approve once"}
	if _, ok := gate.ExtensionOf(p); ok {
		return []choice{{"", "Approve"}}
	}
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
	h := historyView{ID: p.Token, Status: string(st), Summary: summary(p)}
	switch {
	case p.DecisionAt != nil:
		h.When = p.DecisionAt.Local().Format("Jan 2 15:04:05")
	default:
		h.When = p.ExpiresAt.Local().Format("Jan 2 15:04:05")
	}
	if p.DecisionBy != nil {
		h.By = idString(*p.DecisionBy)
	}
	if p.Territory != "" && p.Territory != approvals.TerritoryNone {
		h.Status += " (" + p.Territory + ")"
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
