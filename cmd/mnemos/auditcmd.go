package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/mnemos-dev/mnemos/approvals/pgstore"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/vaglio"
)

// AuditCmd groups the audit subcommands.
type AuditCmd struct {
	Tail   AuditTailCmd   `cmd:"" help:"Show the last events."`
	Verify AuditVerifyCmd `cmd:"" help:"Check the hash chain, the MACs and the anchor; name the first bad line."`
	Head   AuditHeadCmd   `cmd:"" help:"Print the log's head (line count and last MAC) to keep elsewhere."`
	Ship   AuditShipCmd   `cmd:"" help:"Send the events the shared PostgreSQL state's central table lacks, in order, each once."`
	Vaglio AuditVaglioCmd `cmd:"" help:"Show the last verdicts of the guard and the judge (vaglio's private log: option names, never values)."`
}

// AuditTailCmd is mnemos audit tail.
type AuditTailCmd struct {
	N    int  `short:"n" default:"20" help:"How many events (0 for all)."`
	JSON bool `name:"json" help:"Print the raw JSON lines."`
}

// Run prints the last events.
func (c *AuditTailCmd) Run(a *app) error {
	p, err := a.paths()
	if err != nil {
		return err
	}
	if err := a.trust(a.strictModes().CheckState(p)); err != nil {
		return err
	}
	a.tolerant = "audit tail"
	a.notePolicy(p)
	recs, err := openAudit(p).Tail(c.N)
	if err != nil {
		return &exitError{code: exitConfig, msg: "cannot read the audit log: " + err.Error()}
	}
	for _, r := range recs {
		if c.JSON {
			fmt.Fprintf(a.io.out, "%s\n", r.Raw)
			continue
		}
		fmt.Fprintf(a.io.out, "%5d  %s  %-20s %s\n", r.Seq, r.Time.Local().Format("2006-01-02 15:04:05"), oneLine(r.Kind), summarize(r.Kind, r.Attrs))
	}
	return nil
}

// summarize renders the most telling attributes of an event on one line:
// for a channel's delivery, which channel and, when it failed, why. Every
// value is escaped as oneLine does: the log holds what the command line
// held.
func summarize(kind string, attrs map[string]any) string {
	var parts []string
	keys := []string{"decision", "id", "exit_status", "argv", "capability", "target", "reason"}
	if strings.HasPrefix(kind, "channel.") {
		keys = append([]string{"channel"}, append(keys, "error")...)
	}
	if kind == audit.KindJournalUndo {
		keys = []string{"runs", "forced"}
	}
	for _, k := range keys {
		v, ok := attrs[k]
		if !ok {
			continue
		}
		switch t := v.(type) {
		case []any:
			ws := make([]string, len(t))
			for i, w := range t {
				ws[i] = fmt.Sprint(w)
			}
			parts = append(parts, k+"="+oneLine(strings.Join(ws, " ")))
		case string:
			if t != "" {
				parts = append(parts, k+"="+oneLine(t))
			}
		default:
			b, _ := json.Marshal(t)
			parts = append(parts, k+"="+oneLine(string(b)))
		}
	}
	if r, ok := attrs["restored"].([]any); ok && kind == audit.KindJournalUndo {
		parts = append(parts, fmt.Sprintf("restored=%d paths", len(r)))
	}
	if by, ok := attrs["by"].(string); ok && kind == audit.KindJournalUndo {
		parts = append(parts, "by="+oneLine(by))
	}
	if sb, ok := attrs["sandbox"].(map[string]any); ok && kind == "run.finished" {
		parts = append(parts, sandboxParts(sb)...)
	}
	if j, ok := attrs["journal"].(map[string]any); ok && kind == "run.finished" {
		if id, _ := j["run"].(string); id != "" && j["changed"] == true {
			parts = append(parts, "journal="+oneLine(id))
		}
		if nk, ok := j["not_kept"].([]any); ok && len(nk) > 0 {
			parts = append(parts, fmt.Sprintf("not_kept=%d", len(nk)))
		}
	}
	if len(parts) == 0 {
		keys := make([]string, 0, len(attrs))
		for k := range attrs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return oneLine(strings.Join(keys, ","))
	}
	return strings.Join(parts, "  ")
}

// sandboxParts renders what run.finished's sandbox group tells a person:
// what confined the command, the files it left where they would run later
// (moved aside: "PATH -> WHERE"), and the processes it left behind that
// were stopped.
func sandboxParts(sb map[string]any) []string {
	var parts []string
	if v, ok := sb["summary"].(string); ok && v != "" {
		parts = append(parts, "sandbox="+oneLine(v))
	}
	if q, ok := sb["quarantined"].([]any); ok && len(q) > 0 {
		moved := make([]string, 0, len(q))
		for _, e := range q {
			if pair, ok := e.([]any); ok && len(pair) == 2 {
				moved = append(moved, fmt.Sprint(pair[0])+" -> "+fmt.Sprint(pair[1]))
			} else {
				b, _ := json.Marshal(e)
				moved = append(moved, string(b))
			}
		}
		parts = append(parts, "quarantined="+oneLine(strings.Join(moved, ", ")))
	}
	if r, ok := sb["reaped"].([]any); ok && len(r) > 0 {
		procs := make([]string, len(r))
		for i, e := range r {
			procs[i] = fmt.Sprint(e)
		}
		parts = append(parts, "reaped="+oneLine(strings.Join(procs, ", ")))
	}
	return parts
}

// AuditVerifyCmd is mnemos audit verify.
type AuditVerifyCmd struct {
	JSON  bool   `name:"json" help:"Print the report as JSON."`
	Head  string `name:"head" placeholder:"HEAD" help:"A head printed by 'mnemos audit head' and kept elsewhere: the log must still extend it."`
	Fleet bool   `help:"Also check every host's chain in the shared PostgreSQL state's central audit table, and that no line is missing."`
}

// Run verifies the chain; exit 1 names the first bad line.
func (c *AuditVerifyCmd) Run(a *app) error {
	p, err := a.paths()
	if err != nil {
		return err
	}
	if err := a.trust(a.strictModes().CheckState(p)); err != nil {
		return err
	}
	a.tolerant = "audit verify"
	a.notePolicy(p)
	o := audit.VerifyOptions{Key: p.AuditKey}
	if c.Head != "" {
		h, err := audit.ParseHead(c.Head)
		if err != nil {
			return &exitError{code: exitUsage, msg: err.Error(), hint: "pass the line `mnemos audit head` printed, in quotes: --head 'mnemos-audit-head COUNT MAC'"}
		}
		o.Head = &h
	}
	rep, err := audit.VerifyWith(p.AuditFile, o)
	if err != nil {
		return verifyError(err)
	}
	fleetOK := true
	var fleet []pgstore.HostChain
	if c.Fleet {
		if fleet, fleetOK, err = a.verifyFleet(c.JSON); err != nil {
			return err
		}
	}
	if c.JSON {
		out := verifyJSON{File: p.AuditFile, OK: rep.OK, Lines: rep.Lines, FirstBad: rep.FirstBad, Problem: rep.Problem,
			LastHash: rep.LastHash, KeyedLines: rep.Keyed, UnkeyedLines: rep.Unkeyed, LastMAC: rep.LastMAC}
		if o.Head != nil {
			out.Head = o.Head.String()
		}
		if c.Fleet {
			if fleet == nil {
				fleet = []pgstore.HostChain{}
			}
			out.Fleet = &fleet
		}
		if err := writeJSON(a.io.out, out); err != nil {
			return err
		}
	} else if rep.OK {
		fmt.Fprintf(a.io.out, "ok: %d events, chain and anchor intact%s\n", rep.Lines, keyedSummary(rep))
		if rep.Unkeyed > 0 {
			fmt.Fprintf(a.io.out, "note: %s (written before the key existed): checked by hash only\n", unkeyedLines(rep.Unkeyed))
		}
		if o.Head != nil {
			fmt.Fprintf(a.io.out, "head: the log extends %s\n", o.Head)
		}
	}
	if !fleetOK {
		return &exitError{code: exitFailure, msg: "the central audit table: a host's chain is broken or has a line missing (see above)", hint: "no host can change what was shipped through the hosts' role; look for who wrote to the table as its owner"}
	}
	if !rep.OK {
		// The problem names the line it blames, if any.
		return &exitError{code: exitFailure, msg: fmt.Sprintf("audit log %s: %s", p.AuditFile, rep.Problem), hint: "the log was changed after it was written; keep a copy before investigating"}
	}
	return nil
}

// keyedSummary says which lines verify was able to check with the key.
func keyedSummary(rep audit.Report) string {
	switch {
	case rep.Keyed == 0:
		return ""
	case rep.Unkeyed == 0:
		return ", every line keyed"
	case rep.Keyed == 1:
		return fmt.Sprintf(", line %d keyed", rep.Lines)
	}
	return fmt.Sprintf(", lines %d–%d keyed", rep.Unkeyed+1, rep.Lines)
}

// unkeyedLines names lines 1 to n.
func unkeyedLines(n int) string {
	if n == 1 {
		return "line 1 is unkeyed"
	}
	return fmt.Sprintf("lines 1–%d are unkeyed", n)
}

// verifyError explains a log that could not be checked: unreadable, or
// keyed with no usable key.
func verifyError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "audit: ")
	switch {
	case errors.Is(err, audit.ErrKey) && errors.Is(err, fs.ErrPermission):
		return &exitError{code: exitConfig, msg: "cannot check the audit log: " + msg, hint: "run it as the user who owns the key (it is readable by its owner only)"}
	case errors.Is(err, audit.ErrKey):
		return &exitError{code: exitConfig, msg: "cannot check the audit log: " + msg,
			hint: "the keyed lines cannot be checked without the key: restore it from a backup; mnemos makes it once and never changes or removes it, so a key that vanished was removed outside mnemos: keep a copy of the log"}
	}
	return &exitError{code: exitConfig, msg: "cannot read the audit log: " + msg}
}

// verifyJSON is audit verify --json, in the snake_case of mnemos's other
// JSON output.
type verifyJSON struct {
	File string `json:"file"`
	OK   bool   `json:"ok"`
	// Lines counts the log's lines; FirstBad is the first line found
	// wrong (0 when none is to blame, as for a missing anchor).
	Lines    int    `json:"lines"`
	FirstBad int    `json:"first_bad"`
	Problem  string `json:"problem"`
	LastHash string `json:"last_hash,omitempty"`
	// KeyedLines were checked with the key; UnkeyedLines, lines 1 to
	// UnkeyedLines, were written before the key existed and checked by
	// hash only. When the log is not OK they count the lines before the
	// first bad one.
	KeyedLines   int    `json:"keyed_lines"`
	UnkeyedLines int    `json:"unkeyed_lines"`
	LastMAC      string `json:"last_mac,omitempty"`
	// Head is the --head the log was checked against.
	Head string `json:"head,omitempty"`
	// Fleet is, with --fleet, each host's chain in the central table.
	Fleet *[]pgstore.HostChain `json:"fleet,omitempty"`
}

// AuditHeadCmd is mnemos audit head.
type AuditHeadCmd struct {
	JSON bool `name:"json" help:"Print the head as JSON."`
}

// Run verifies the log and prints its head: one line to keep where the
// log's owner cannot write, for `mnemos audit verify --head`.
func (c *AuditHeadCmd) Run(a *app) error {
	p, err := a.paths()
	if err != nil {
		return err
	}
	if err := a.trust(a.strictModes().CheckState(p)); err != nil {
		return err
	}
	a.tolerant = "audit head"
	a.notePolicy(p)
	rep, err := audit.VerifyWith(p.AuditFile, audit.VerifyOptions{Key: p.AuditKey})
	if err != nil {
		return verifyError(err)
	}
	if !rep.OK {
		return &exitError{code: exitFailure, msg: fmt.Sprintf("audit log %s: %s", p.AuditFile, rep.Problem), hint: "a head is taken from a sound log only; see `mnemos audit verify`"}
	}
	h, ok := rep.Head()
	switch {
	case !ok && rep.Lines == 0:
		return &exitError{code: exitFailure, msg: fmt.Sprintf("the audit log %s is empty: it has no head yet", p.AuditFile), hint: "run a command through mnemos, then take the head"}
	case !ok:
		return &exitError{code: exitFailure, msg: fmt.Sprintf("the last line of the audit log %s is not keyed (written before the key existed)", p.AuditFile), hint: "run a command through mnemos to write a keyed line, then take the head"}
	}
	if c.JSON {
		return writeJSON(a.io.out, headJSON{File: p.AuditFile, Count: h.Count, MAC: h.MAC, Head: h.String()})
	}
	fmt.Fprintln(a.io.out, h)
	return nil
}

// headJSON is audit head --json.
type headJSON struct {
	File  string `json:"file"`
	Count int    `json:"count"`
	MAC   string `json:"mac"`
	Head  string `json:"head"`
}

// AuditVaglioCmd is mnemos audit vaglio.
type AuditVaglioCmd struct {
	N    int  `short:"n" default:"20" help:"How many verdicts (0 for all)."`
	JSON bool `name:"json" help:"Print one JSON record a line."`
}

// Run prints the last verdicts of vaglio's monthly log.
func (c *AuditVaglioCmd) Run(a *app) error {
	p, err := a.paths()
	if err != nil {
		return err
	}
	if err := a.trust(a.strictModes().CheckState(p)); err != nil {
		return err
	}
	a.tolerant = "audit vaglio"
	a.notePolicy(p)
	recs, skipped, err := vaglio.ReadLog(p.VaglioDir, c.N)
	if err != nil {
		return &exitError{code: exitConfig, msg: "cannot read vaglio's log: " + err.Error()}
	}
	if skipped > 0 {
		fmt.Fprintf(a.io.err, "mnemos: warning: %d lines of vaglio's log in %s are not records; skipped\n", skipped, oneLine(p.VaglioDir))
	}
	for _, r := range recs {
		if c.JSON {
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.io.out, "%s\n", b)
			continue
		}
		verdict, by := "approved", "-"
		if !r.Approved {
			verdict = "denied"
		}
		if r.BlockedBy != "" {
			by = r.BlockedBy
		}
		keys := "-"
		if len(r.ArgsKeys) > 0 {
			keys = strings.Join(r.ArgsKeys, ",")
		}
		fmt.Fprintf(a.io.out, "%s  %-8s %-5s %.2f  %-13s %s %s  %s\n", r.TS.Local().Format("2006-01-02 15:04:05"),
			verdict, by, r.Score, oneLine(r.JudgeKind), oneLine(r.Executor), oneLine(keys), oneLine(r.Reason))
	}
	return nil
}
