package gate

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
)

// Paths are where mnemos keeps its configuration and state.
type Paths struct {
	ConfigDir  string `json:"config_dir"`
	StateDir   string `json:"state_dir"`
	PolicyFile string `json:"policy_file"`
	DBFile     string `json:"db_file"`
	AuditFile  string `json:"audit_file"`
	VaglioDir  string `json:"vaglio_dir"`
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
	return Paths{
		ConfigDir:  cfg,
		StateDir:   state,
		PolicyFile: filepath.Join(cfg, "policy.yaml"),
		DBFile:     filepath.Join(state, "state.db"),
		AuditFile:  filepath.Join(state, "audit.jsonl"),
		VaglioDir:  filepath.Join(state, "vaglio"),
		Elsewhere:  slices.DeleteFunc(elsewhere, func(d string) bool { return d == cfg || d == state }),
	}, nil
}

// Protected lists the paths the guard protects from gated commands.
func (p Paths) Protected() []string {
	return slices.Concat([]string{p.ConfigDir, p.StateDir, p.PolicyFile, p.DBFile, p.AuditFile}, p.Elsewhere)
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
