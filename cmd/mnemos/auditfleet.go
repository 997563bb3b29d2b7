package main

import (
	"context"
	"fmt"
	"time"

	"github.com/mnemos-dev/mnemos/approvals/pgstore"
)

// AuditShipCmd is mnemos audit ship.
type AuditShipCmd struct {
	JSON bool `name:"json" help:"Print what was shipped as JSON."`
}

// Run sends the local log's lines the central table lacks.
func (c *AuditShipCmd) Run(a *app) error {
	g, err := a.gate()
	if err != nil {
		return err
	}
	if !g.SharedState() {
		return &exitError{code: exitUsage, msg: "audit ship sends the log to the central table of a shared PostgreSQL state; this state is the SQLite file " + g.Config().Paths.DBFile,
			hint: "to share approvals and audit across machines, name a database in your policy: state: {postgres: {dsn_file: PATH}}"}
	}
	res, err := g.ShipAudit(a.ctx)
	if err != nil {
		return err
	}
	st, _, _ := g.SharedStore(a.ctx)
	if c.JSON {
		return writeJSON(a.io.out, struct {
			Host string `json:"host"`
			pgstore.ShipResult
		}{st.Host(), res})
	}
	if res.Shipped == 0 {
		fmt.Fprintf(a.io.out, "nothing to ship: the central table holds all %d events of host %s\n", res.Central, oneLine(st.Host()))
		return nil
	}
	fmt.Fprintf(a.io.out, "shipped %d events of host %s (lines %d-%d); the central table holds %d\n", res.Shipped, oneLine(st.Host()), res.From, res.To, res.Central)
	return nil
}

// verifyFleet checks every host's chain in the central table; it prints
// one line per host and reports whether all are intact.
func (a *app) verifyFleet(jsonOut bool) (chains []pgstore.HostChain, ok bool, err error) {
	a.noShip = true
	g, err := a.gate()
	if err != nil {
		return nil, false, err
	}
	if !g.SharedState() {
		return nil, false, &exitError{code: exitUsage, msg: "--fleet checks the central audit table of a shared PostgreSQL state; this state is the SQLite file " + g.Config().Paths.DBFile,
			hint: "to share approvals and audit across machines, name a database in your policy: state: {postgres: {dsn_file: PATH}}"}
	}
	st, _, err := g.SharedStore(a.ctx)
	if err != nil {
		return nil, false, err
	}
	chains, err = st.VerifyFleet(a.ctx)
	if err != nil {
		return nil, false, err
	}
	ok = true
	for _, c := range chains {
		ok = ok && c.OK
	}
	if jsonOut {
		return chains, ok, nil
	}
	fmt.Fprintf(a.io.out, "fleet: %s: %d hosts\n", st.Path(), len(chains))
	for _, c := range chains {
		if c.OK {
			fmt.Fprintf(a.io.out, "  %s  ok: %d events, chain intact, none missing\n", oneLine(c.Host), c.Lines)
		} else {
			fmt.Fprintf(a.io.out, "  %s  BAD at line %d: %s\n", oneLine(c.Host), c.FirstBad, oneLine(c.Problem))
		}
	}
	return chains, ok, nil
}

// shipOnClose brings this process's events to the central table when it
// had the shared state open anyway; a database gone meanwhile leaves them
// in the local log for the next shipper.
func (a *app) shipOnClose() {
	if a.g == nil || a.noShip {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), 3*time.Second)
	defer cancel()
	if err := a.g.ShipIfOpen(ctx); err != nil {
		a.log.Debug("audit events stay in the local log until the next ship", "error", err)
	}
}
