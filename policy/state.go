package policy

import (
	"fmt"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// State is the state: section: where mnemos keeps pending approvals,
// tickets, grants, rate buckets and session rules. The zero value is the
// embedded SQLite file in the user's state directory.
//
//	state:
//	  postgres:
//	    dsn_file: ~/.config/mnemos/postgres.dsn   # or dsn_env: MNEMOS_PG_DSN
//
// Only the system and user layers choose it: a project policy that names
// a database of the repository's choosing would decide what counts as
// approved. For a stack built by Merge, the system layer's if it has one,
// else the user's.
type State struct {
	// Postgres, when set, keeps the state in a PostgreSQL database that
	// several machines share.
	Postgres *PostgresState `json:"postgres,omitempty"`
	// Pos is where the section starts.
	Pos Pos `json:"-"`
}

// PostgresState says where the connection string (with its password) is
// read from: a file (mode 0600, never a project's) or an environment
// variable of mnemos's process. Exactly one is set.
type PostgresState struct {
	// DSNFile is an absolute path, or one under ~/.
	DSNFile string `json:"dsn_file,omitempty"`
	// DSNEnv names an environment variable; mnemos removes it from the
	// environment of the commands it runs.
	DSNEnv string `json:"dsn_env,omitempty"`
}

// IsZero reports whether the state is the default, SQLite.
func (s State) IsZero() bool { return s.Postgres == nil }

// DSNPath is DSNFile with ~/ replaced by home.
func (p PostgresState) DSNPath(home string) string {
	if rest, ok := strings.CutPrefix(p.DSNFile, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return p.DSNFile
}

// state reads the state: section.
func (d *decoder) state(key, n *yaml.Node, p *Policy) *Error {
	if err := d.mapping(n); err != nil {
		return err
	}
	st := State{Pos: d.pos(key)}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "postgres":
			pg, err := d.postgresState(v)
			if err != nil {
				return err
			}
			st.Postgres = pg
		default:
			return d.errAt(k, fmt.Sprintf("unknown key %q in state (want postgres)", k.Value))
		}
	}
	p.State = st
	return nil
}

func (d *decoder) postgresState(n *yaml.Node) (*PostgresState, *Error) {
	if err := d.mapping(n); err != nil {
		return nil, err
	}
	var pg PostgresState
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		s, err := d.str(v)
		if err != nil {
			return nil, err
		}
		switch k.Value {
		case "dsn_file":
			if !filepath.IsAbs(s) && !strings.HasPrefix(s, "~/") {
				return nil, d.errAt(v, fmt.Sprintf("dsn_file %q: want an absolute path or one under ~/", s))
			}
			pg.DSNFile = s
		case "dsn_env":
			if !envName().MatchString(s) {
				return nil, d.errAt(v, fmt.Sprintf("dsn_env %q is not an environment variable name", s))
			}
			pg.DSNEnv = s
		case "dsn":
			return nil, d.errAt(k, "a connection string holds a password: put it in a file (dsn_file) or an environment variable (dsn_env), not in the policy")
		default:
			return nil, d.errAt(k, fmt.Sprintf("unknown key %q in state.postgres (want dsn_file or dsn_env)", k.Value))
		}
	}
	if (pg.DSNFile == "") == (pg.DSNEnv == "") {
		return nil, d.errAt(n, "state.postgres needs exactly one of dsn_file and dsn_env")
	}
	return &pg, nil
}

// stackState is the state of a stack: the system layer's, else the user's.
func stackState(system, user *Policy) State {
	if system != nil && !system.State.IsZero() {
		return system.State
	}
	if user != nil {
		return user.State
	}
	return State{}
}

// projectState reports a project policy's state: section, which is
// ignored.
func projectState(project *Policy) []Diagnostic {
	if project.State.IsZero() {
		return nil
	}
	return []Diagnostic{{Pos: project.State.Pos, Severity: SeverityWarning,
		Msg: "state is ignored: a project policy cannot choose where approvals and grants are kept (a database of the repository's choosing would decide what counts as approved); set it in your user policy"}}
}

// stateNode writes the state: section in canonical form (Format).
func stateNode(s State) *yaml.Node {
	plain := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	quoted := func(s string) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
	}
	pg := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if s.Postgres.DSNFile != "" {
		pg.Content = append(pg.Content, plain("dsn_file"), quoted(s.Postgres.DSNFile))
	} else {
		pg.Content = append(pg.Content, plain("dsn_env"), quoted(s.Postgres.DSNEnv))
	}
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{plain("postgres"), pg}}
}
