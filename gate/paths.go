package gate

import (
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/mnemos-dev/mnemos/audit"
)

// Paths are where mnemos keeps its configuration and state.
type Paths struct {
	ConfigDir string `json:"config_dir"`
	StateDir  string `json:"state_dir"`
	// SecretsDir holds, in a directory of their own (mode 0700, files
	// 0600), what lets whoever reads it pass the gate or rewrite its
	// record: the audit key, the state database and its journals (approval
	// tokens and tickets), the hook tickets and mnemos serve's socket. It
	// lies in the state directory, which the sandbox hides; the guard
	// refuses every command that names a path in it. Settle moves an older
	// layout's files into it.
	SecretsDir string `json:"secrets_dir"`
	PolicyFile string `json:"policy_file"`
	DBFile     string `json:"db_file"`
	AuditFile  string `json:"audit_file"`
	// AuditKey is the audit log's key, in SecretsDir (not beside the log).
	AuditKey  string `json:"audit_key"`
	VaglioDir string `json:"vaglio_dir"`
	// Elsewhere are the places mnemos reads its configuration from when
	// these paths are not in use: the default directories when MNEMOS_HOME
	// moves them, and the system policy's directory. A gated command may
	// not plant a policy there for a later run either.
	Elsewhere []string `json:"elsewhere,omitempty"`
}

// SystemPolicyDir holds the administrator's policy.
const SystemPolicyDir = "/etc/mnemos"

// Locate finds mnemos's directories. With home set (MNEMOS_HOME or --home)
// configuration and state live together under it; otherwise configuration
// goes to $XDG_CONFIG_HOME/mnemos (default ~/.config/mnemos) and state to
// $XDG_STATE_HOME/mnemos (default ~/.local/state/mnemos).
func Locate(home string, getenv func(string) string, userHome string) (Paths, error) {
	var cfg, state string
	var elsewhere []string
	if userHome != "" {
		for _, dir := range []string{
			filepath.Join(userHome, ".config", "mnemos"), filepath.Join(userHome, ".local", "state", "mnemos"),
			filepath.Join(getenv("XDG_CONFIG_HOME"), "mnemos"), filepath.Join(getenv("XDG_STATE_HOME"), "mnemos"),
		} {
			if filepath.IsAbs(dir) {
				elsewhere = append(elsewhere, dir)
			}
		}
	}
	elsewhere = append(elsewhere, SystemPolicyDir)
	if home != "" {
		abs, err := filepath.Abs(home)
		if err != nil {
			return Paths{}, err
		}
		cfg, state = abs, abs
	} else {
		if userHome == "" {
			return Paths{}, errors.New("cannot find the home directory; set MNEMOS_HOME")
		}
		cfg = getenv("XDG_CONFIG_HOME")
		if cfg == "" || !filepath.IsAbs(cfg) {
			cfg = filepath.Join(userHome, ".config")
		}
		state = getenv("XDG_STATE_HOME")
		if state == "" || !filepath.IsAbs(state) {
			state = filepath.Join(userHome, ".local", "state")
		}
		cfg, state = filepath.Join(cfg, "mnemos"), filepath.Join(state, "mnemos")
	}
	secrets := filepath.Join(state, SecretsDirName)
	return Paths{
		ConfigDir:  cfg,
		StateDir:   state,
		SecretsDir: secrets,
		PolicyFile: filepath.Join(cfg, "policy.yaml"),
		DBFile:     filepath.Join(secrets, dbName),
		AuditFile:  filepath.Join(state, "audit.jsonl"),
		AuditKey:   filepath.Join(secrets, audit.KeyFile),
		VaglioDir:  filepath.Join(state, "vaglio"),
		Elsewhere:  slices.DeleteFunc(elsewhere, func(d string) bool { return d == cfg || d == state }),
	}, nil
}

// Names in the secrets directory.
const (
	// SecretsDirName is the secrets directory's name in the state
	// directory.
	SecretsDirName = "secrets"
	dbName         = "state.db"
	hookTicketsDir = "hook-tickets"
	// ServeSocketName is mnemos serve's unix socket.
	ServeSocketName = "serve.sock"
)

// HookTicketDir is where hook tickets are kept.
func (p Paths) HookTicketDir() string { return filepath.Join(p.SecretsDir, hookTicketsDir) }

// ServeSocket is the unix socket mnemos serve listens on for the user's
// own commands (mnemos approvals url).
func (p Paths) ServeSocket() string { return filepath.Join(p.SecretsDir, ServeSocketName) }

// Protected lists the paths the guard protects from gated commands.
func (p Paths) Protected() []string {
	out := slices.Concat([]string{p.ConfigDir, p.StateDir, p.SecretsDir, p.PolicyFile, p.DBFile, p.AuditFile, p.AuditKey}, p.Elsewhere)
	return slices.DeleteFunc(out, func(s string) bool { return s == "" })
}

// Workspace returns the git root containing dir, or dir itself.
func Workspace(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}
