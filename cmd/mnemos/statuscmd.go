package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/hook"
	"github.com/mnemos-dev/mnemos/journal"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/sandbox"
	"github.com/mnemos-dev/mnemos/serve"
)

// StatusCmd is mnemos status: one screen saying what protects this
// user now. It reads and changes nothing but what it shows, runs no hook
// and no probe (mnemos doctor does), and exits 0 whatever it finds: a
// policy that does not load is shown, not an error.
type StatusCmd struct {
	JSON bool `name:"json" help:"Print one JSON object."`
}

// statusReport is what mnemos status shows; its JSON form is stable.
type statusReport struct {
	Version  string         `json:"version"`
	Mnemos   string         `json:"mnemos"`
	Identity string         `json:"identity"`
	Level    statusLevel    `json:"level"`
	Policies []statusPolicy `json:"policies"`
	// Unsafe are the files mnemos refuses to trust (owner or mode):
	// every decision refuses until they are fixed.
	Unsafe []string `json:"unsafe"`
	// Secrets is where mnemos keeps its credentials.
	Secrets  statusSecrets `json:"secrets"`
	Sandbox  statusSandbox `json:"sandbox"`
	Agents   []statusAgent `json:"agents"`
	Pending  statusPending `json:"pending"`
	Denials  []statusEvent `json:"denials"`
	Journal  statusJournal `json:"journal"`
	Grants   statusGrants  `json:"grants"`
	Serve    statusServe   `json:"serve"`
	Warnings []string      `json:"warnings"`
}

type statusLevel struct {
	// Level is the level of the identity's requests, "" when no policy is
	// in effect (a file does not load or is not trusted: nothing runs).
	Level string `json:"level"`
	// From says which file or setting sets it.
	From string `json:"from"`
}

type statusPolicy struct {
	Layer string `json:"layer"` // system, user, project or extra (--policy)
	File  string `json:"file"`
	// State is "in effect", "none", "default" (no user file: the built-in
	// default applies), "broken" or "not trusted".
	State string `json:"state"`
	Error string `json:"error,omitempty"`
}

type statusSecrets struct {
	Dir string `json:"dir"`
	// Postponed says why an older layout is still in use.
	Postponed string `json:"postponed,omitempty"`
	// Moved and Removed are what this run moved or removed there.
	Moved   []string `json:"moved,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Stale   []string `json:"stale,omitempty"`
}

type statusSandbox struct {
	Held     int      `json:"promises_held"`
	Promises int      `json:"promises"`
	Missing  []string `json:"missing"`
	Why      string   `json:"why,omitempty"`
}

type statusAgent struct {
	Agent string        `json:"agent"`
	Title string        `json:"title"`
	Found bool          `json:"found"`
	Wired []hook.Wiring `json:"wired"`
	// Level is the level of the agent's requests (its channel is the
	// agent's name), when a profile makes it differ from Identity's.
	Level    string        `json:"level,omitempty"`
	Problems []doctorCheck `json:"problems"`
}

type statusPending struct {
	Count  int             `json:"count"`
	Oldest []statusRequest `json:"oldest"`
	Error  string          `json:"error,omitempty"`
}

type statusRequest struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	Channel   string    `json:"channel"`
	Sender    string    `json:"sender"`
	Command   string    `json:"command"`
}

type statusEvent struct {
	Time    time.Time `json:"time"`
	Channel string    `json:"channel,omitempty"`
	Command string    `json:"command"`
	Reason  string    `json:"reason"`
}

// statusJournal is the newest runs that changed files in the workspace
// of the working directory.
type statusJournal struct {
	// On says whether the journal keeps what sandboxed runs change here;
	// Off says why not.
	On        bool        `json:"on"`
	Off       string      `json:"off,omitempty"`
	Workspace string      `json:"workspace"`
	Runs      []statusRun `json:"runs"`
	Error     string      `json:"error,omitempty"`
}

type statusRun struct {
	ID      string    `json:"id"`
	Started time.Time `json:"started"`
	Command string    `json:"command"`
	// Changes is how many net changes the run made (mnemos changes ID
	// lists them).
	Changes int `json:"changes"`
	// State is finished, interrupted (the run died: what it left was
	// recorded when it was found) or running.
	State    string   `json:"state"`
	UndoneBy string   `json:"undone_by,omitempty"`
	Undoes   []string `json:"undoes,omitempty"`
}

type statusGrants struct {
	Active       int    `json:"active"`
	SessionRules int    `json:"session_rules"`
	Error        string `json:"error,omitempty"`
}

type statusServe struct {
	Running bool   `json:"running"`
	PID     int    `json:"pid,omitempty"`
	Addr    string `json:"addr,omitempty"`
}

// How much mnemos status shows: the oldest pending requests, the newest
// denials, found among the last statusTail events of the audit log (a
// longer tail costs about 5 ms a hundred events to parse).
// statusRuns runs that changed files are shown, found among the newest
// statusRunsRead of the workspace (a run whose changes cancel out, a
// build's temporary file, changed nothing).
const (
	statusOldest   = 3
	statusDenials  = 5
	statusTail     = 100
	statusRuns     = 3
	statusRunsRead = 20
)

// Run gathers the report and prints it.
func (c *StatusCmd) Run(a *app) error {
	paths, err := a.paths()
	if err != nil {
		return err
	}
	exe, _ := selfPath()
	id := a.identity()
	rep := statusReport{Version: readBuild().Short(), Mnemos: exe, Identity: id.Channel + ":" + id.Sender,
		Unsafe: []string{}, Agents: []statusAgent{}, Denials: []statusEvent{}, Warnings: []string{}}
	cwd, _ := os.Getwd()

	pol := a.statusPolicies(&rep, paths, cwd, id)
	rep.Secrets = statusSecrets{Dir: a.settled.Dir, Postponed: a.settled.Postponed,
		Moved: a.settled.Moved, Removed: a.settled.Removed, Stale: a.settled.Stale}
	st := probeSandbox()
	rep.Sandbox = statusSandboxOf(st)
	if err := a.statusAgents(&rep, pol, id, exe); err != nil {
		return err
	}
	a.statusState(&rep, paths)
	rep.Denials, err = statusDenialsOf(paths.AuditFile, paths.AuditKey)
	if err != nil {
		rep.Warnings = append(rep.Warnings, "cannot read the audit log: "+err.Error())
	}
	rep.Journal = statusJournalOf(paths, cwd)
	rep.Journal.On, rep.Journal.Off = journalOn(pol, st)
	if info, ok := serve.Running(paths.StateDir); ok {
		rep.Serve = statusServe{Running: true, PID: info.PID, Addr: info.Addr}
	}
	if c.JSON {
		return writeJSON(a.io.out, rep)
	}
	printStatus(a.io.out, rep)
	return nil
}

// statusPolicies reads each layer of the policy on its own, so that each
// can be shown as in effect, absent, broken or not trusted, and says
// where the level comes from. It returns the policy in effect, nil when
// none is (nothing runs until the files are fixed).
func (a *app) statusPolicies(rep *statusReport, paths gate.Paths, cwd string, id approvals.Identity) *policy.Policy {
	broken := false
	layer := func(name, file string, p *policy.Policy, err error) {
		sp := statusPolicy{Layer: name, File: file, State: "in effect"}
		switch {
		case errors.Is(err, policy.ErrUntrustedSystemPolicy):
			sp.State, sp.Error = "not trusted", err.Error()
		case err != nil:
			sp.State, sp.Error, broken = "broken", err.Error(), true
		case p == nil:
			sp.State = "none"
		}
		rep.Policies = append(rep.Policies, sp)
	}
	system, err := policy.LoadSystem(systemPolicyFile)
	layer("system", systemPolicyFile, system, err)
	if err != nil {
		system = nil
	}
	user := policy.Default()
	if _, serr := os.Stat(paths.PolicyFile); errors.Is(serr, fs.ErrNotExist) {
		rep.Policies = append(rep.Policies, statusPolicy{Layer: "user", File: paths.PolicyFile, State: "default"})
	} else {
		user, err = loadPolicy(paths)
		layer("user", paths.PolicyFile, user, err)
	}
	var project *policy.Policy
	projectFile := ""
	if cwd != "" {
		projectFile = policy.ProjectFile(gate.Workspace(cwd))
		project, err = policy.LoadProject(projectFile)
		layer("project", projectFile, project, err)
	}
	var extra *policy.Policy
	if a.cli.PolicyArg != "" {
		extra, err = policy.Load(a.cli.PolicyArg)
		layer("extra", a.cli.PolicyArg, extra, err)
	}
	for _, u := range a.strictModes().Check(paths, projectFile, a.cli.PolicyArg) {
		rep.Unsafe = append(rep.Unsafe, u.String()+" (fix: "+u.Fix+")")
	}
	if broken || len(rep.Unsafe) > 0 {
		what := "a policy file does not load"
		if !broken {
			what = "a file mnemos reads is not safe"
		}
		rep.Level.From = what + ": run, policy check and every hook refuse until it is fixed"
		return nil
	}
	merged, _ := policy.Merge(system, user, project)
	rep.Level = levelOrigin(system, user, project, merged, extra, a.cli.Level, paths, id)
	_, _, warnings := gate.JudgeFromEnv(a.getenv, merged)
	rep.Warnings = append(rep.Warnings, warnings...)
	return merged
}

// levelOrigin is the level of id's requests and what sets it: the user's
// file (or the built-in default), lowered by the system or project file,
// the --policy file, then --level or MNEMOS_LEVEL (gate.Gate.level).
func levelOrigin(system, user, project, merged, extra *policy.Policy, flag string, paths gate.Paths, id approvals.Identity) statusLevel {
	lu := user.LevelFor(id.Channel, id.Sender)
	l := merged.LevelFor(id.Channel, id.Sender)
	from := "user policy " + paths.PolicyFile
	if user.Source == policy.DefaultName {
		from = "the built-in default (no file at " + paths.PolicyFile + ")"
	}
	switch {
	case l == lu:
	case system != nil && func() bool { m, _ := policy.Merge(system, user, nil); return m.LevelFor(id.Channel, id.Sender) == l }():
		from = fmt.Sprintf("system policy %s (lowers %s)", system.Source, lu)
	default:
		from = fmt.Sprintf("project policy %s (lowers %s)", project.Source, lu)
	}
	if extra != nil {
		if e := extra.LevelFor(id.Channel, id.Sender); e < l {
			l, from = e, "--policy "+extra.Source+" (lowers "+l.String()+")"
		}
	}
	if flag != "" {
		if f, err := policy.ParseLevel(flag); err == nil && f < l {
			l, from = f, "--level or MNEMOS_LEVEL (lowers "+l.String()+")"
		}
	}
	return statusLevel{Level: l.String(), From: from}
}

// statusSandboxOf is what the sandbox keeps of its promises here.
func statusSandboxOf(st sandbox.Status) statusSandbox {
	promises := st.Promises()
	sb := statusSandbox{Promises: len(promises), Missing: []string{}}
	for _, p := range promises {
		if p.Holds {
			sb.Held++
		}
	}
	if missing := st.Missing(); len(missing) > 0 {
		for _, m := range missing {
			sb.Missing = append(sb.Missing, m.Key)
		}
		sb.Why = missing[0].Why
	}
	return sb
}

// statusAgents lists the agents found on this machine or wired to mnemos,
// with the doctor's checks of each entry that need not run it.
func (a *app) statusAgents(rep *statusReport, pol *policy.Policy, id approvals.Identity, exe string) error {
	loc, err := a.hookLocations(false)
	if err != nil {
		return err
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	for _, agent := range hook.Agents() {
		sa := statusAgent{Agent: agent.Name, Title: agent.Title, Found: agent.Present(loc, exists), Problems: []doctorCheck{}}
		wired, err := agent.Find(loc, os.ReadFile)
		sa.Wired = wired
		if err != nil {
			sa.Problems = append(sa.Problems, doctorCheck{Name: "settings", Detail: err.Error(), Hint: "fix the file; until then " + agent.Title + " may not run mnemos"})
		}
		if !sa.Found && len(wired) == 0 && err == nil {
			continue
		}
		if sa.Wired == nil {
			sa.Wired = []hook.Wiring{}
		}
		for _, w := range wired {
			checks, _ := wiringStatic(agent, w, exe)
			for _, ck := range checks {
				if !ck.OK {
					sa.Problems = append(sa.Problems, ck)
				}
			}
		}
		if pol != nil && len(wired) > 0 {
			if l, mine := pol.LevelFor(agent.Name, id.Sender), pol.LevelFor(id.Channel, id.Sender); l != mine {
				sa.Level = l.String()
			}
		}
		rep.Agents = append(rep.Agents, sa)
	}
	return nil
}

// statusState counts the pending requests, grants and session rules. A
// state that was never written is empty: status does not create it.
func (a *app) statusState(rep *statusReport, paths gate.Paths) {
	rep.Pending.Oldest = []statusRequest{}
	a.tolerant, a.onlyTightens = "mnemos status", "mnemos status"
	// What the gate would warn about (a policy that does not load, an
	// unsafe file) the report shows.
	stderr := a.io.err
	a.io.err = io.Discard
	g, err := a.gate()
	a.io.err = stderr
	if err != nil {
		rep.Pending.Error, rep.Grants.Error = errorText(err), errorText(err)
		return
	}
	if !g.SharedState() {
		if _, err := os.Stat(paths.DBFile); errors.Is(err, fs.ErrNotExist) {
			return
		}
	}
	st, err := g.Store(a.ctx)
	if err != nil {
		rep.Pending.Error, rep.Grants.Error = errorText(err), errorText(err)
		return
	}
	now := a.now()
	if list, err := st.List(a.ctx, approvals.ListOptions{Limit: -1}, now); err != nil {
		rep.Pending.Error = errorText(err)
	} else {
		rep.Pending.Count = len(list)
		// Newest first: the oldest are at the end.
		for i := len(list) - 1; i >= 0 && len(rep.Pending.Oldest) < statusOldest; i-- {
			p := list[i]
			cmd := shellQuote(p.Details.Argv)
			if len(p.Details.Argv) == 0 {
				cmd = p.TargetSummary
			}
			rep.Pending.Oldest = append(rep.Pending.Oldest, statusRequest{ID: p.Token, CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt,
				Channel: p.Channel, Sender: p.Sender, Command: cmd})
		}
	}
	if grants, err := st.ListGrantRecords(a.ctx, approvals.GrantFilter{}, now); err != nil {
		rep.Grants.Error = errorText(err)
	} else {
		rep.Grants.Active = len(grants)
	}
	if rules, err := st.ListSessionRules(a.ctx, approvals.GrantFilter{}, now); err != nil {
		rep.Grants.Error = errorText(err)
	} else {
		rep.Grants.SessionRules = len(rules)
	}
}

// statusJournalOf returns the newest runs that changed files in the
// workspace of cwd, newest first. It reads the journal only (nothing is
// made where there is none).
func statusJournalOf(paths gate.Paths, cwd string) statusJournal {
	sj := statusJournal{Runs: []statusRun{}}
	if cwd == "" {
		return sj
	}
	sj.Workspace = gate.Workspace(cwd)
	j, err := journal.Open(journalOptions(paths))
	if err != nil {
		sj.Error = err.Error()
		return sj
	}
	defer j.Close()
	runs, err := j.Runs(journal.Filter{Workspace: sj.Workspace})
	if err != nil {
		sj.Error = err.Error()
		return sj
	}
	for i, r := range runs {
		if i >= statusRunsRead || len(sj.Runs) >= statusRuns {
			break
		}
		changes, err := j.Changes(r.ID)
		if err != nil || len(changes) == 0 {
			continue
		}
		sj.Runs = append(sj.Runs, statusRun{ID: r.ID, Started: r.Started, Command: shellQuote(r.Argv), Changes: len(changes),
			State: r.State, UndoneBy: r.UndoneBy, Undoes: r.Undoes})
	}
	return sj
}

// statusDenialsOf returns the newest denials among the last events of
// the audit log, newest first. It reads the log's tail, unverified (mnemos
// audit verify checks the chain).
func statusDenialsOf(file, key string) ([]statusEvent, error) {
	out := []statusEvent{}
	recs, err := audit.Open(file, audit.Options{Key: key}).Tail(statusTail)
	if err != nil {
		return out, err
	}
	for i := len(recs) - 1; i >= 0 && len(out) < statusDenials; i-- {
		r := recs[i]
		if r.Kind != "policy.decision" || r.Attrs["decision"] != "deny" {
			continue
		}
		ev := statusEvent{Time: r.Time}
		ev.Channel, _ = r.Attrs["channel"].(string)
		ev.Reason, _ = r.Attrs["reason"].(string)
		switch v := r.Attrs["argv"].(type) {
		case []any:
			words := make([]string, len(v))
			for i, w := range v {
				words[i] = fmt.Sprint(w)
			}
			ev.Command = shellQuote(words)
		case string:
			ev.Command = v
		}
		if ev.Command == "" {
			ev.Command, _ = r.Attrs["script"].(string)
		}
		out = append(out, ev)
	}
	return out, nil
}

// printStatus prints the report on one screen. Every text that came from
// a request, a policy or the state is escaped (oneLine) and cut to fit.
func printStatus(w io.Writer, rep statusReport) {
	const indent = "          "
	line := func(label, format string, args ...any) {
		if label == "" {
			fmt.Fprint(w, indent)
		} else {
			fmt.Fprintf(w, "%-10s", label)
		}
		fmt.Fprintf(w, format+"\n", args...)
	}
	fmt.Fprintf(w, "mnemos %s (%s)\n", rep.Version, rep.Mnemos)
	if rep.Level.Level != "" {
		line("level", "%s for %s, from %s", rep.Level.Level, oneLine(rep.Identity), oneLine(rep.Level.From))
	} else {
		line("level", "NONE: %s", rep.Level.From)
	}
	for i, p := range rep.Policies {
		label := ""
		if i == 0 {
			label = "policy"
		}
		state := p.State
		switch p.State {
		case "default":
			state = "none (the built-in default applies; mnemos init writes it here)"
		case "broken":
			state = "BROKEN: " + cut(p.Error, 160)
		case "not trusted":
			state = "NOT TRUSTED, not applied: " + cut(p.Error, 160)
		}
		line(label, "%-8s %s: %s", p.Layer, oneLine(p.File), oneLine(state))
	}
	for _, u := range rep.Unsafe {
		line("", "UNSAFE %s", oneLine(u))
	}
	if rep.Secrets.Postponed != "" {
		line("secrets", "STILL IN THE STATE DIRECTORY: %s", oneLine(rep.Secrets.Postponed))
	} else {
		line("secrets", "%s (only you can read it; the page's sign-in is in mnemos serve's memory only)", oneLine(rep.Secrets.Dir))
	}
	if len(rep.Secrets.Moved) > 0 {
		line("", "moved here now from the state directory: %s", oneLine(strings.Join(baseNames(rep.Secrets.Moved), ", ")))
	}
	for _, f := range rep.Secrets.Stale {
		line("", "STALE %s: written by an older mnemos after the move, not used (look at it, then remove it)", oneLine(f))
	}
	if len(rep.Sandbox.Missing) == 0 {
		line("sandbox", "keeps %d of %d promises", rep.Sandbox.Held, rep.Sandbox.Promises)
	} else {
		line("sandbox", "keeps %d of %d promises; %s do not hold (%s): mnemos sandbox status",
			rep.Sandbox.Held, rep.Sandbox.Promises, strings.Join(rep.Sandbox.Missing, ", "), cut(rep.Sandbox.Why, 80))
	}
	printStatusAgents(line, rep.Agents)
	switch {
	case rep.Pending.Error != "":
		line("pending", "cannot read the state: %s", cut(rep.Pending.Error, 160))
	case rep.Pending.Count == 0:
		line("pending", "no requests waiting")
	default:
		line("pending", "%d waiting, oldest first (mnemos approvals list):", rep.Pending.Count)
		for _, p := range rep.Pending.Oldest {
			line("", "%s  %s  %s:%s  %s", oneLine(p.ID), p.CreatedAt.Local().Format("2006-01-02 15:04"),
				oneLine(cut(p.Channel, 20)), oneLine(cut(p.Sender, 20)), cut(p.Command, 70))
		}
	}
	if len(rep.Denials) == 0 {
		line("denials", "none among the last %d events", statusTail)
	} else {
		line("denials", "the last %d, newest first (mnemos audit tail):", len(rep.Denials))
		for _, d := range rep.Denials {
			line("", "%s  %s: %s", d.Time.Local().Format("2006-01-02 15:04"), cut(d.Command, 50), cut(d.Reason, 90))
		}
	}
	printStatusJournal(line, rep.Journal)
	if rep.Grants.Error != "" {
		line("grants", "cannot read the state: %s", cut(rep.Grants.Error, 160))
	} else {
		line("grants", "%s, %s (mnemos grants list)", plural(rep.Grants.Active, "active grant"), plural(rep.Grants.SessionRules, "session rule"))
	}
	if rep.Serve.Running {
		addr := rep.Serve.Addr
		if addr == "" {
			addr = "starting"
		}
		line("serve", "running (pid %d, %s; the page: mnemos approvals url)", rep.Serve.PID, oneLine(addr))
	} else {
		line("serve", "not running (the approvals page and the channels' bots: mnemos serve)")
	}
	for _, warn := range rep.Warnings {
		line("warning", "%s", cut(warn, 160))
	}
}

// printStatusJournal prints the runs that changed files in the
// workspace, and nothing when none did.
func printStatusJournal(line func(label, format string, args ...any), sj statusJournal) {
	if sj.On {
		line("journal", "on: what sandboxed runs change in the workspace can be undone (mnemos changes, mnemos undo)")
	} else {
		line("journal", "off: %s; nothing is contained work, and nothing runs because it could be undone", sj.Off)
	}
	if sj.Error != "" {
		line("changes", "cannot read the journal: %s", cut(sj.Error, 160))
		return
	}
	if len(sj.Runs) == 0 {
		return
	}
	what, order := "the last run", ""
	if len(sj.Runs) > 1 {
		what, order = fmt.Sprintf("the last %d runs", len(sj.Runs)), ", newest first"
	}
	line("changes", "%s that changed files in %s%s (mnemos changes ID shows one; mnemos undo ID puts it back):", what, oneLine(sj.Workspace), order)
	for _, r := range sj.Runs {
		var notes []string
		switch r.State {
		case journal.StateInterrupted:
			notes = append(notes, "interrupted")
		case journal.StateRunning:
			notes = append(notes, "still running")
		}
		if len(r.Undoes) > 0 {
			notes = append(notes, "undo of "+strings.Join(r.Undoes, ", "))
		}
		if r.UndoneBy != "" {
			notes = append(notes, "undone by "+r.UndoneBy)
		}
		note := ""
		if len(notes) > 0 {
			note = "  (" + oneLine(strings.Join(notes, "; ")) + ")"
		}
		line("", "%s  %s  %-10s %s%s", oneLine(r.ID), r.Started.Local().Format("2006-01-02 15:04"), plural(r.Changes, "change"), cut(r.Command, 60), note)
	}
}

// baseNames are the last elements of paths.
func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// printStatusAgents prints the agents' lines.
func printStatusAgents(line func(label, format string, args ...any), agents []statusAgent) {
	if len(agents) == 0 {
		line("agents", "none found, none wired: nothing routes an agent's commands through mnemos (mnemos install AGENT: %s)", strings.Join(hook.Names(), ", "))
		return
	}
	width := 0
	for _, ag := range agents {
		width = max(width, len(ag.Agent))
	}
	for i, ag := range agents {
		label := ""
		if i == 0 {
			label = "agents"
		}
		var state string
		switch {
		case len(ag.Wired) == 0:
			state = "found, NOT wired: mnemos install " + ag.Agent
		case len(ag.Problems) == 0:
			files := []string{}
			for _, w := range ag.Wired {
				if !containsString(files, w.File) {
					files = append(files, w.File)
				}
			}
			state = "wired in " + strings.Join(files, ", ") + ", runs this mnemos"
		default:
			state = "wired, but " + ag.Problems[0].Detail
			if h := ag.Problems[0].Hint; h != "" {
				state += " (" + h + ")"
			}
		}
		if len(ag.Wired) == 0 && len(ag.Problems) > 0 {
			state = "NOT wired: " + ag.Problems[0].Detail + " (" + ag.Problems[0].Hint + ")"
		}
		if ag.Level != "" {
			state += "; level " + ag.Level
		}
		line(label, "%-*s  %s", width, ag.Agent, cut(state, 240))
	}
}

// cut escapes s for one line and shortens it to at most n characters of
// the original text.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) > n {
		r := []rune(s)
		s = string(r[:n-1]) + "…"
	}
	return oneLine(s)
}

// journalOn says whether the journal keeps what sandboxed runs change,
// by the policy and this kernel, and why not.
func journalOn(pol *policy.Policy, st sandbox.Status) (bool, string) {
	switch {
	case pol != nil && !pol.Journal.On:
		return false, "the policy turns it off (journal: enabled: false)"
	case !st.Enforced:
		return false, "the sandbox is not enforced on this kernel"
	case !watchJournal(st):
		why := st.WatchErr
		if why == "" {
			why = "changes cannot be watched here"
		}
		return false, why
	}
	return true, ""
}
