package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
)

// InitCmd writes the default policy file and makes the audit log's key.
type InitCmd struct {
	Force bool `help:"Overwrite an existing policy file."`
}

// Run writes the commented default policy to the config directory, makes
// the secrets directory (0700) and the audit log's key in it, unless they
// exist.
func (c *InitCmd) Run(a *app) error {
	p, err := a.paths()
	if err != nil {
		return err
	}
	if _, err := os.Stat(p.PolicyFile); err == nil && !c.Force {
		return &exitError{code: exitFailure, msg: "a policy file already exists at " + p.PolicyFile, hint: "edit it, or rerun with --force to replace it with the default"}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &exitError{code: exitConfig, msg: err.Error()}
	}
	if err := gate.WriteFileAtomic(p.PolicyFile, policy.DefaultSource(), 0o600); err != nil {
		return &exitError{code: exitConfig, msg: "cannot write the policy: " + err.Error()}
	}
	fmt.Fprintf(a.io.out, "wrote %s (level: %s)\n", p.PolicyFile, policy.Default().Level)
	if _, err := os.Stat(p.SecretsDir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(p.SecretsDir, 0o700); err != nil {
			return &exitError{code: exitConfig, msg: "cannot make the secrets directory: " + err.Error(), hint: "check that the state directory is writable"}
		}
		if err := os.Chmod(p.SecretsDir, 0o700); err != nil {
			return &exitError{code: exitConfig, msg: "cannot make the secrets directory private: " + err.Error()}
		}
		fmt.Fprintf(a.io.out, "made %s (mnemos's secrets: the audit key, the state database; only you can read it)\n", p.SecretsDir)
	}
	log := openAudit(p)
	defer log.Close()
	created, err := log.EnsureKey(a.ctx)
	if err != nil {
		hint := "check that the state directory is writable"
		if errors.Is(err, audit.ErrIntegrity) {
			hint = "see `mnemos audit verify`"
		}
		return &exitError{code: exitConfig, msg: "cannot make the audit log's key: " + strings.TrimPrefix(err.Error(), "audit: "), hint: hint}
	}
	if created {
		fmt.Fprintf(a.io.out, "wrote %s (the key the audit log is MACed with)\n", log.KeyPath())
	}
	for _, dir := range []string{p.ConfigDir, p.StateDir} {
		if tmp := inTemp(dir); tmp != "" {
			fmt.Fprintf(a.io.err, "mnemos: warning: %s is under %s, which every sandboxed command may write: mnemos run will refuse to run\n", dir, tmp)
			fmt.Fprintln(a.io.err, "mnemos: hint: keep mnemos's configuration and state out of the temp directories (set MNEMOS_HOME or --home elsewhere)")
			break
		}
	}
	return nil
}

// inTemp returns the temp directory the sandbox grants that holds dir, or "".
func inTemp(dir string) string {
	for _, tmp := range []string{os.TempDir(), "/tmp"} {
		if rel, err := filepath.Rel(tmp, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return tmp
		}
	}
	return ""
}

// SandboxCmd groups the sandbox subcommands.
type SandboxCmd struct {
	Status SandboxStatusCmd `cmd:"" help:"Say what this kernel's Landlock can enforce."`
}

// SandboxStatusCmd is mnemos sandbox status.
type SandboxStatusCmd struct {
	JSON bool `name:"json" help:"Print JSON."`
}

// Run reports the kernel's Landlock support and mnemos's use of it.
func (c *SandboxStatusCmd) Run(a *app) error {
	s := probeSandbox()
	if c.JSON {
		return writeJSON(a.io.out, map[string]any{"landlock_abi": s.ABI, "enforced": s.Enforced, "seccomp": s.Seccomp,
			"view": s.View, "view_error": s.ViewErr, "promises": s.Promises(),
			"note": s.Note(), "gaps": s.Gaps(), "error": s.Err, "seccomp_error": s.SeccompErr,
			"watch": s.Watch, "watch_error": s.WatchErr})
	}
	fmt.Fprintf(a.io.out, "landlock abi: %d\nenforced: %v\nseccomp: %v\nview: %v\n", s.ABI, s.Enforced, s.Seccomp, s.View)
	if s.Watch {
		fmt.Fprintln(a.io.out, "journal: each change a command makes to files is seen before it happens (`mnemos undo` can put it back)")
	} else {
		fmt.Fprintf(a.io.out, "journal: off: changes cannot be watched here: %s\n", s.WatchErr)
	}
	fmt.Fprintln(a.io.out, s.Note())
	held := 0
	for _, p := range s.Promises() {
		if p.Holds {
			held++
			fmt.Fprintf(a.io.out, "holds: %s: %s\n", p.Key, p.What)
			continue
		}
		fmt.Fprintf(a.io.out, "does not hold: %s: %s: %s\n", p.Key, p.What, p.Why)
		if p.Hint != "" {
			fmt.Fprintf(a.io.out, "  to restore it: %s\n", p.Hint)
		}
	}
	fmt.Fprintf(a.io.out, "promises kept: %d of 7\n", held)
	for _, g := range s.Gaps() {
		fmt.Fprintf(a.io.out, "not restricted: %s\n", g)
	}
	return nil
}
