package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mnemos-dev/mnemos/audit"
)

// AuditCmd groups the audit subcommands.
type AuditCmd struct {
	Tail   AuditTailCmd   `cmd:"" help:"Show the last events."`
	Verify AuditVerifyCmd `cmd:"" help:"Check the hash chain and the anchor; name the first bad line."`
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
	recs, err := audit.Open(p.AuditFile, audit.Options{}).Tail(c.N)
	if err != nil {
		return &exitError{code: exitConfig, msg: "cannot read the audit log: " + err.Error()}
	}
	for _, r := range recs {
		if c.JSON {
			fmt.Fprintf(a.io.out, "%s\n", r.Raw)
			continue
		}
		fmt.Fprintf(a.io.out, "%5d  %s  %-20s %s\n", r.Seq, r.Time.Local().Format("2006-01-02 15:04:05"), r.Kind, summarize(r.Kind, r.Attrs))
	}
	return nil
}

// summarize renders the most telling attributes of an event on one line:
// for a channel's delivery, which channel and, when it failed, why.
func summarize(kind string, attrs map[string]any) string {
	var parts []string
	keys := []string{"decision", "id", "exit_status", "argv", "capability", "target", "reason"}
	if strings.HasPrefix(kind, "channel.") {
		keys = append([]string{"channel"}, append(keys, "error")...)
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
			parts = append(parts, k+"="+strings.Join(ws, " "))
		case string:
			if t != "" {
				parts = append(parts, k+"="+oneLine(t))
			}
		default:
			b, _ := json.Marshal(t)
			parts = append(parts, k+"="+string(b))
		}
	}
	if len(parts) == 0 {
		keys := make([]string, 0, len(attrs))
		for k := range attrs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return strings.Join(keys, ",")
	}
	return strings.Join(parts, "  ")
}

// AuditVerifyCmd is mnemos audit verify.
type AuditVerifyCmd struct {
	JSON bool `name:"json" help:"Print the report as JSON."`
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
	rep, err := audit.Verify(p.AuditFile, "")
	if err != nil {
		return &exitError{code: exitConfig, msg: "cannot read the audit log: " + err.Error()}
	}
	if c.JSON {
		if err := writeJSON(a.io.out, verifyJSON{File: p.AuditFile, OK: rep.OK, Lines: rep.Lines,
			FirstBad: rep.FirstBad, Problem: rep.Problem, LastHash: rep.LastHash}); err != nil {
			return err
		}
	} else if rep.OK {
		fmt.Fprintf(a.io.out, "ok: %d events, chain and anchor intact\n", rep.Lines)
	}
	if !rep.OK {
		// The problem names the line it blames, if any.
		return &exitError{code: exitFailure, msg: fmt.Sprintf("audit log %s: %s", p.AuditFile, rep.Problem), hint: "the log was changed after it was written; keep a copy before investigating"}
	}
	return nil
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
}
