package main

import (
	"errors"
	"fmt"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/approvals/pgstore"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
)

// StateCmd groups the commands about where the state is kept.
type StateCmd struct {
	Migrate StateMigrateCmd `cmd:"" help:"Bring the shared PostgreSQL database's schema up to this mnemos, as a role that owns its tables (--grant ROLE also lets the hosts' role use it)."`
}

// StateMigrateCmd is mnemos state migrate.
type StateMigrateCmd struct {
	Grant   string `placeholder:"ROLE" help:"Also grant ROLE what a host needs: read and write the approvals' tables, only INSERT and SELECT the audit table."`
	DSNFile string `name:"dsn-file" placeholder:"PATH" help:"Connect with the connection string in this file (the owner's), instead of the policy's."`
	DSNEnv  string `name:"dsn-env" placeholder:"NAME" help:"Connect with the connection string in this environment variable, instead of the policy's."`
}

// Run migrates the state's schema.
func (c *StateMigrateCmd) Run(a *app) error {
	g, err := a.gate()
	if err != nil {
		return err
	}
	pg := g.Config().Policy.State.Postgres
	switch {
	case c.DSNFile != "" && c.DSNEnv != "":
		return &exitError{code: exitUsage, msg: "--dsn-file and --dsn-env exclude each other"}
	case c.DSNFile != "":
		pg = &policy.PostgresState{DSNFile: c.DSNFile}
	case c.DSNEnv != "":
		pg = &policy.PostgresState{DSNEnv: c.DSNEnv}
	}
	if pg == nil {
		if c.Grant != "" {
			return &exitError{code: exitUsage, msg: "--grant is for a PostgreSQL state; this state is the SQLite file " + g.Config().Paths.DBFile,
				hint: "choose a shared database in your policy: state: {postgres: {dsn_file: PATH}}"}
		}
		// The SQLite file is migrated whenever it is opened.
		if _, err := g.Store(a.ctx); err != nil {
			return err
		}
		fmt.Fprintf(a.io.out, "state: %s (SQLite): schema version %d, migrated when opened\n", oneLine(g.Config().Paths.DBFile), approvals.SchemaVersion)
		return nil
	}
	where := "postgres (" + describePG(*pg) + ")"
	dsn, err := gate.ReadDSN(*pg, a.userHome(), a.getenv)
	if err != nil {
		return &gate.StateError{Path: where, Err: err}
	}
	res, err := pgstore.Migrate(a.ctx, dsn, c.Grant)
	if err != nil {
		var se *pgstore.SchemaError
		if errors.As(err, &se) {
			return &exitError{code: exitConfig, msg: "state " + where + ": " + se.Error(), hint: se.Hint()}
		}
		return &gate.StateError{Path: where, Err: err}
	}
	if res.From == res.To {
		fmt.Fprintf(a.io.out, "state: %s: schema version %d, up to date\n", where, res.To)
	} else {
		fmt.Fprintf(a.io.out, "state: %s: schema version %d -> %d\n", where, res.From, res.To)
	}
	if res.Granted != "" {
		fmt.Fprintf(a.io.out, "granted to %s: SELECT, INSERT, UPDATE on the approvals' tables; only SELECT, INSERT on audit_events\n", res.Granted)
	}
	return nil
}

func describePG(pg policy.PostgresState) string {
	if pg.DSNFile != "" {
		return "dsn_file " + pg.DSNFile
	}
	return "dsn_env " + pg.DSNEnv
}
