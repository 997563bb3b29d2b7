package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
)

// ExtensionsCmd groups the extension subcommands.
type ExtensionsCmd struct {
	Admit  ExtensionsAdmitCmd  `cmd:"" help:"Judge an extension's manifest: low-risk reads are granted, what has effects waits for your approval, ambient, self-granting and Mnemos-replacement requests are denied. Exit 0 all granted, 75 some pending, 77 some denied, 78 bad manifest."`
	List   ExtensionsListCmd   `cmd:"" help:"List admitted extensions, their grants and open requests."`
	Revoke ExtensionsRevokeCmd `cmd:"" help:"Revoke every grant of an extension and withdraw its open requests."`
}

// ExtensionsAdmitCmd is mnemos extensions admit.
type ExtensionsAdmitCmd struct {
	JSON     bool   `name:"json" help:"Print one JSON object."`
	Manifest string `arg:"" help:"The extension's manifest (YAML or JSON)." placeholder:"MANIFEST"`
}

// Run admits a manifest.
func (c *ExtensionsAdmitCmd) Run(a *app) error {
	src, err := os.ReadFile(c.Manifest)
	if err != nil {
		return &exitError{code: exitConfig, msg: fmt.Sprintf("cannot read the manifest: %v", err)}
	}
	m, errs := policy.ParseManifest(c.Manifest, src)
	if len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintf(a.io.err, "mnemos: error: %s\n", e)
		}
		fmt.Fprintf(a.io.err, "mnemos: hint: fix the manifest; nothing was granted or requested\n")
		return quietExit(exitConfig)
	}
	var lower *policy.Level
	if a.cli.Level != "" {
		l, err := policy.ParseLevel(a.cli.Level)
		if err != nil {
			return &exitError{code: exitUsage, msg: err.Error()}
		}
		lower = &l
	}
	g, err := a.gate()
	if err != nil {
		return err
	}
	res, err := g.AdmitExtension(a.ctx, m, a.identity(), lower)
	if err != nil {
		return err
	}
	if c.JSON {
		if err := writeJSON(a.io.out, res); err != nil {
			return err
		}
	} else {
		printAdmission(a, res)
	}
	switch res.Outcome {
	case policy.Allow:
		return nil
	case policy.Ask:
		return quietExit(exitApproval)
	}
	return quietExit(exitDenied)
}

func capTarget(c policy.Capability, target string) string {
	if target == policy.NoTarget || target == "" {
		return string(c)
	}
	return string(c) + " on " + target
}

func printAdmission(a *app, res gate.Admitted) {
	w := a.io.out
	head := "extension " + res.Extension
	if res.Version != "" {
		head += " " + res.Version
	}
	fmt.Fprintf(w, "%s (%s), level %s\n", head, res.Manifest, res.Level)
	n := map[string]int{}
	for _, r := range res.Capabilities {
		n[r.State]++
		switch r.State {
		case gate.StateGranted:
			fmt.Fprintf(w, "granted  %s (grant %d)\n", capTarget(r.Capability, r.Target), r.Grant.ID)
		case gate.StatePending:
			fmt.Fprintf(w, "pending  %s: approve with: mnemos approvals approve %s\n", capTarget(r.Capability, r.Target), r.Approval)
		default:
			fmt.Fprintf(w, "denied   %s: %s\n", capTarget(r.Capability, r.Target), oneLine(r.Reason))
		}
	}
	fmt.Fprintf(w, "%d granted, %d pending, %d denied\n", n[gate.StateGranted], n[gate.StatePending], n[gate.StateDenied])
}

// ExtensionsListCmd is mnemos extensions list.
type ExtensionsListCmd struct {
	All  bool `help:"Include revoked and expired grants."`
	JSON bool `name:"json" help:"Print a JSON array."`
}

// Run lists extensions by name.
func (c *ExtensionsListCmd) Run(a *app) error {
	a.tolerant = "extensions list"
	g, err := a.gate()
	if err != nil {
		return err
	}
	if _, err := g.ExpireSweep(a.ctx); err != nil {
		return err
	}
	exts, err := g.Extensions(a.ctx, c.All)
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(a.io.out, exts)
	}
	if len(exts) == 0 {
		fmt.Fprintln(a.io.out, "no extensions")
		return nil
	}
	now := a.now()
	for _, e := range exts {
		fmt.Fprintf(a.io.out, "%s: %s, %s\n", e.Name, plural(len(e.Grants), "grant"), plural(len(e.Pending), "open request"))
		for _, gr := range e.Grants {
			state := "active"
			switch {
			case gr.RevokedAt != nil:
				state = "revoked"
			case gr.ExpiresAt != nil && !gr.ExpiresAt.After(now):
				state = "expired"
			}
			until := ""
			if gr.ExpiresAt != nil && state == "active" {
				until = ", until " + gr.ExpiresAt.Local().Format("2006-01-02 15:04")
			}
			fmt.Fprintf(a.io.out, "  grant %d  %-7s  %s (by %s%s)\n", gr.ID, state, capTarget(gr.Capability, gr.Target), gr.GrantedBy, until)
		}
		for _, p := range e.Pending {
			var acc approvals.Access
			if len(p.Details.Accesses) > 0 {
				acc = p.Details.Accesses[0]
			}
			fmt.Fprintf(a.io.out, "  pending %s  %s: approve with: mnemos approvals approve %s\n", p.Token, capTarget(acc.Capability, acc.Target), p.Token)
		}
	}
	return nil
}

// ExtensionsRevokeCmd is mnemos extensions revoke.
type ExtensionsRevokeCmd struct {
	Name string `arg:"" help:"The extension's name." placeholder:"NAME"`
}

// Run revokes an extension.
func (c *ExtensionsRevokeCmd) Run(a *app) error {
	a.onlyTightens, a.tolerant = "extensions revoke", "extensions revoke"
	g, err := a.gate()
	if err != nil {
		return err
	}
	res, ok, err := g.RevokeExtension(a.ctx, c.Name, a.identity())
	if err != nil {
		return err
	}
	for _, gr := range res.Grants {
		fmt.Fprintf(a.io.out, "revoked grant %d: %s\n", gr.ID, capTarget(gr.Capability, gr.Target))
	}
	for _, t := range res.Cancelled {
		fmt.Fprintf(a.io.out, "withdrew request %s\n", t)
	}
	for _, p := range res.Left {
		fmt.Fprintf(a.io.err, "mnemos: warning: request %s was made by %s:%s; only they can withdraw it\n", p.Token, p.Channel, p.Sender)
	}
	if !ok {
		return &exitError{code: exitFailure, msg: fmt.Sprintf("extension %q has no active grants or open requests", c.Name),
			hint: "see extensions with `mnemos extensions list --all`"}
	}
	fmt.Fprintf(a.io.out, "extension %s revoked\n", strings.TrimSpace(c.Name))
	return nil
}
