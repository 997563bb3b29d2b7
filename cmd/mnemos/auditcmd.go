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
	recs, err := audit.Open(p.AuditFile, audit.Options{}).Tail(c.N)
	if err != nil {
		return &exitError{code: exitConfig, msg: "cannot read the audit log: " + err.Error()}
	}
	for _, r := range recs {
		if c.JSON {
			fmt.Fprintf(a.io.out, "%s\n", r.Raw)
			continue
		}
		fmt.Fprintf(a.io.out, "%5d  %s  %-20s %s\n", r.Seq, r.Time.Local().Format("2006-01-02 15:04:05"), r.Kind, summarize(r.Attrs))
	}
	return nil
}

// summarize renders the most telling attributes of an event on one line.
func summarize(attrs map[string]any) string {
	var parts []string
	for _, k := range []string{"decision", "id", "exit_status", "argv", "capability", "target", "reason"} {
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
	rep, err := audit.Verify(p.AuditFile, "")
	if err != nil {
		return &exitError{code: exitConfig, msg: "cannot read the audit log: " + err.Error()}
	}
	if c.JSON {
		if err := writeJSON(a.io.out, rep); err != nil {
			return err
		}
	} else if rep.OK {
		fmt.Fprintf(a.io.out, "ok: %d events, chain and anchor intact\n", rep.Lines)
	}
	if !rep.OK {
		return &exitError{code: exitFailure, msg: fmt.Sprintf("audit log %s: line %d: %s", p.AuditFile, rep.FirstBad, rep.Problem), hint: "the log was changed after it was written; keep a copy before investigating"}
	}
	return nil
}
