package serve

import (
	"errors"
	"net/http"
	"strings"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/journal"
)

// undoChanges is how many changes the undo pages list.
const undoChanges = 500

// undoData is what the pages of an undo show: the first confirmation
// (what the run changed), the refusal (paths changed since, listed), the
// second confirmation of an undo that overwrites them, or why the run
// cannot be undone from here.
type undoData struct {
	Identity string
	CSRF     string
	Run      runView
	// Approval is the approval that let the run through, on one line;
	// ApprovalID its id.
	Approval, ApprovalID string
	// Force: the second confirmation, of an undo that overwrites what
	// changed since the run.
	Force bool
	// Refused: the undo was refused because of Conflicts.
	Refused   bool
	Conflicts []conflictView
	Err       string
}

type conflictView struct{ Path, Why string }

// undoPage asks for the confirmation of an undo (GET /undo/RUN), or,
// with ?force=1, for the second confirmation of one that overwrites the
// paths changed since the run, listing them. Like every GET it changes
// nothing: the undo is the form's POST to /undo.
func (s *Server) undoPage(w http.ResponseWriter, r *http.Request) {
	sid := s.sess.session(r)
	if sid == "" {
		s.plain(w, http.StatusUnauthorized, "Open the link that `mnemos approvals url` prints in a terminal (it signs this browser in).")
		return
	}
	d := undoData{Identity: idString(s.cfg.Identity), CSRF: s.sess.csrf(sid)}
	run, p, err := findUndo(r.Context(), s.cfg.Journal, s.cfg.Registry, r.PathValue("run"), s.cfg.Identity, s.cfg.Now())
	if err != nil {
		s.undoRefused(w, d, err)
		return
	}
	d.Run, d.Approval, d.ApprovalID = viewRun(s.cfg.Journal, run, undoChanges, true), summary(p), p.Token
	if r.URL.Query().Get("force") == "1" {
		// What an undo now would refuse for: only that needs forcing.
		_, err := s.cfg.Journal.Undo([]string{run.ID}, journal.UndoOptions{DryRun: true})
		var ce *journal.ConflictError
		if errors.As(err, &ce) {
			d.Force, d.Conflicts = true, conflictViews(ce, run.Workspace)
		}
	}
	s.render(w, http.StatusOK, "undo", d)
}

// undo puts back what a run an approval let through changed (POST /undo:
// run, force), with the checks an answer meets (the session, its CSRF
// token, a POST from the page itself) and the requester's: only the
// identity whose approval let the run through undoes it. A refusal lists
// the paths changed since the run and offers the forced undo behind a
// second confirmation. The undo is recorded in the audit log as
// journal.undo, by page:NAME.
func (s *Server) undo(w http.ResponseWriter, r *http.Request) {
	sid, ok := s.postForm(w, r)
	if !ok {
		return
	}
	force := r.PostForm.Get("force") == "1"
	d := undoData{Identity: idString(s.cfg.Identity), CSRF: s.sess.csrf(sid)}
	// One undo at a time: a second click waits, then finds the run undone.
	s.undoMu.Lock()
	defer s.undoMu.Unlock()
	id := strings.TrimSpace(r.PostForm.Get("run"))
	run, p, err := findUndo(r.Context(), s.cfg.Journal, s.cfg.Registry, id, s.cfg.Identity, s.cfg.Now())
	if err != nil {
		s.cfg.Log.Warn("undo refused", "run", approvals.Printable(id), "err", approvals.Printable(err.Error()))
		s.undoRefused(w, d, err)
		return
	}
	d.Run, d.Approval, d.ApprovalID = viewRun(s.cfg.Journal, run, undoChanges, true), summary(p), p.Token
	rep, err := undoRun(r.Context(), s.cfg.Journal, s.cfg.Audit, run, p,
		approvals.Identity{Channel: approvals.ViaPage, Sender: s.cfg.Identity.Sender}, force)
	var ce *journal.ConflictError
	switch {
	case errors.As(err, &ce):
		s.cfg.Log.Info("undo refused: changed since the run", "run", run.ID, "paths", len(ce.Conflicts))
		d.Refused, d.Conflicts = true, conflictViews(ce, run.Workspace)
		s.render(w, http.StatusConflict, "undo", d)
		return
	case err != nil && len(rep.Steps) == 0:
		s.cfg.Log.Error("undo", "run", run.ID, "err", err)
		d.Err = "Nothing was undone: " + approvals.Printable(err.Error())
		s.render(w, http.StatusInternalServerError, "undo", d)
		return
	}
	line := undoneLine(rep, run)
	msg := strings.ToUpper(line[:1]) + line[1:]
	if err != nil {
		msg += ". " + approvals.Printable(err.Error())
		s.cfg.Log.Error("undo", "run", run.ID, "err", err)
	}
	s.cfg.Log.Info("undone", "run", run.ID, "approval", p.Token, "forced", force, "restored", len(rep.Restored), "via", "web")
	s.mu.Lock()
	s.flash[sid] = msg
	s.mu.Unlock()
	s.hub.kick()
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// undoRefused renders why a run cannot be undone from the page.
func (s *Server) undoRefused(w http.ResponseWriter, d undoData, err error) {
	code := http.StatusConflict
	switch {
	case errors.Is(err, errNotUndone):
		code = http.StatusNotFound
	case errors.Is(err, errNoJournal):
		code = http.StatusNotImplemented
	}
	d.Err = "This run cannot be undone from here: " + approvals.Printable(err.Error()) + "."
	s.render(w, code, "undo", d)
}

func conflictViews(ce *journal.ConflictError, ws string) []conflictView {
	out := make([]conflictView, 0, len(ce.Conflicts))
	for _, c := range ce.Conflicts {
		v := conflictView{Why: approvals.Printable(c.Why)}
		if c.Path != "" {
			v.Path = relTo(ws, c.Path)
		} else {
			v.Path = "run " + approvals.Printable(c.Run)
		}
		out = append(out, v)
	}
	return out
}
