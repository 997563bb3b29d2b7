package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mnemos-dev/mnemos/approvals/pgstore/pgtest"
)

// TestPostgresScripts runs the sessions under testdata/pgscript against a
// throwaway PostgreSQL server: each script gets its own database and
// hosts' role. Without PostgreSQL's programs it skips, saying so (CI sets
// MNEMOS_TEST_POSTGRES=require, which makes that a failure).
func TestPostgresScripts(t *testing.T) {
	srv, err := pgtest.Start()
	if err != nil {
		pgtest.Unavailable(t, err)
	}
	t.Cleanup(srv.Close)
	p := scriptParams()
	p.Dir = "testdata/pgscript"
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		if err := setup(env); err != nil {
			return err
		}
		name := pgtest.RandomName()
		db, role := "s_"+name, "mnemos_host_"+name
		if err := srv.Exec("postgres", "CREATE DATABASE "+db, "CREATE ROLE "+role+" LOGIN"); err != nil {
			return err
		}
		env.Defer(func() {
			_ = srv.Exec("postgres", "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)", "DROP ROLE IF EXISTS "+role)
		})
		env.Setenv("PGADMIN_DSN", srv.DSN(db))
		env.Setenv("PGHOST_DSN", srv.DSNAs(role, db))
		env.Setenv("PGROLE", role)
		return nil
	}
	cmds := map[string]func(ts *testscript.TestScript, neg bool, args []string){}
	for k, v := range p.Cmds {
		cmds[k] = v
	}
	// pgdsn FILE admin|host writes the script's connection string for the
	// owner or for the hosts' role to FILE, mode 0600.
	cmds["pgdsn"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || (args[1] != "admin" && args[1] != "host") {
			ts.Fatalf("usage: pgdsn FILE admin|host")
		}
		dsn := ts.Getenv("PGADMIN_DSN")
		if args[1] == "host" {
			dsn = ts.Getenv("PGHOST_DSN")
		}
		f := ts.MkAbs(args[0])
		ts.Check(os.MkdirAll(filepath.Dir(f), 0o700))
		ts.Check(os.WriteFile(f, []byte(dsn+"\n"), 0o600))
	}
	p.Cmds = cmds
	testscript.Run(t, p)
}
