package policy

import (
	"strings"
	"testing"
)

func TestStateSection(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       *PostgresState
		err        string // part of the error, with its position
	}{
		{"none", "level: supervised\n", nil, ""},
		{"file", "state:\n  postgres:\n    dsn_file: ~/.config/mnemos/pg.dsn\n", &PostgresState{DSNFile: "~/.config/mnemos/pg.dsn"}, ""},
		{"absolute file", "state:\n  postgres:\n    dsn_file: /etc/mnemos/pg.dsn\n", &PostgresState{DSNFile: "/etc/mnemos/pg.dsn"}, ""},
		{"env", "state:\n  postgres:\n    dsn_env: MNEMOS_PG_DSN\n", &PostgresState{DSNEnv: "MNEMOS_PG_DSN"}, ""},
		{"both", "state:\n  postgres:\n    dsn_env: A\n    dsn_file: /a\n", nil, "p.yaml:3:5: state.postgres needs exactly one of dsn_file and dsn_env"},
		{"neither", "state:\n  postgres: {}\n", nil, "p.yaml:2:13: state.postgres needs exactly one"},
		{"inline dsn", "state:\n  postgres:\n    dsn: postgres://u:pw@h/db\n", nil, "p.yaml:3:5: a connection string holds a password"},
		{"relative file", "state:\n  postgres:\n    dsn_file: pg.dsn\n", nil, "p.yaml:3:15: dsn_file \"pg.dsn\": want an absolute path"},
		{"bad env", "state:\n  postgres:\n    dsn_env: A-B\n", nil, "p.yaml:3:14: dsn_env \"A-B\" is not an environment variable name"},
		{"unknown backend", "state:\n  mysql: {}\n", nil, "p.yaml:2:3: unknown key \"mysql\" in state (want postgres)"},
		{"unknown key", "state:\n  postgres:\n    dsn_env: A\n    sslmode: off\n", nil, "p.yaml:4:5: unknown key \"sslmode\" in state.postgres"},
		{"not a mapping", "state: postgres\n", nil, "p.yaml:1:8: expected a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("p.yaml", []byte(tc.yaml))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (p.State.Postgres == nil) != (tc.want == nil) || (tc.want != nil && *p.State.Postgres != *tc.want) {
				t.Fatalf("state %+v, want %+v", p.State.Postgres, tc.want)
			}
			// Format writes it back.
			again, err := Parse("p.yaml", Format(p))
			if err != nil {
				t.Fatalf("formatted: %v\n%s", err, Format(p))
			}
			if (again.State.Postgres == nil) != (tc.want == nil) || (tc.want != nil && *again.State.Postgres != *tc.want) {
				t.Errorf("formatted state %+v\n%s", again.State.Postgres, Format(p))
			}
		})
	}
	if got := (PostgresState{DSNFile: "~/x/pg.dsn"}).DSNPath("/home/u"); got != "/home/u/x/pg.dsn" {
		t.Errorf("DSNPath = %q", got)
	}
}

// A project policy cannot choose where the state is kept: a database of
// the repository's choosing would decide what counts as approved.
func TestSecurityProjectCannotChooseState(t *testing.T) {
	parse := func(name, src string) *Policy {
		p, err := Parse(name, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	user := parse("user.yaml", "level: supervised\n")
	project := parse("project.yaml", "state:\n  postgres:\n    dsn_env: EVIL_DSN\n")
	m, diags := Merge(nil, user, project)
	if !m.State.IsZero() {
		t.Fatalf("the project chose the state: %+v", m.State.Postgres)
	}
	found := false
	for _, d := range diags {
		if strings.Contains(d.Msg, "state is ignored") && d.Pos.File == "project.yaml" && d.Pos.Line == 1 {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning about the project's state: %v", diags)
	}
	// The user's stands against a project's; the system's against both.
	userPG := parse("user.yaml", "state:\n  postgres:\n    dsn_file: /u.dsn\n")
	if m, _ := Merge(nil, userPG, project); m.State.Postgres == nil || m.State.Postgres.DSNFile != "/u.dsn" {
		t.Errorf("user's state lost to a project's: %+v", m.State.Postgres)
	}
	system := parse("system.yaml", "state:\n  postgres:\n    dsn_file: /etc/mnemos/pg.dsn\n")
	if m, _ := Merge(system, userPG, project); m.State.Postgres == nil || m.State.Postgres.DSNFile != "/etc/mnemos/pg.dsn" {
		t.Errorf("system's state not chosen: %+v", m.State.Postgres)
	}
	if m, _ := Merge(parse("system.yaml", "level: full\n"), userPG, nil); m.State.Postgres == nil || m.State.Postgres.DSNFile != "/u.dsn" {
		t.Errorf("user's state lost under a system policy without one: %+v", m.State.Postgres)
	}
}
