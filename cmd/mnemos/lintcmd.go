package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mnemos-dev/mnemos/policy"
)

// LintCmd is mnemos policy lint.
type LintCmd struct {
	JSON  bool   `name:"json" help:"Print the diagnostics as one JSON array."`
	Layer string `help:"Lint the file as this layer of the stack: system, user or project; a user or project file is also checked against the layers above it, and every attempt to loosen them is a warning. Default: project for a .mnemos/policy.yaml, system for the system policy file, user otherwise." enum:"auto,system,user,project" default:"auto"`
	File  string `arg:"" optional:"" help:"The policy file to check (default: the configured policy file)." placeholder:"FILE"`
}

// Run prints every error and warning as FILE:LINE:COL: message and exits
// 78 when the file has an error.
func (c *LintCmd) Run(a *app) error {
	name, src, err := c.source(a)
	if err != nil {
		return err
	}
	diags, err := c.lint(a, name, src)
	if err != nil {
		return err
	}
	if c.JSON {
		if diags == nil {
			diags = []policy.Diagnostic{}
		}
		if err := writeJSON(a.io.out, diags); err != nil {
			return err
		}
	} else {
		for _, d := range diags {
			fmt.Fprintln(a.io.out, d.String())
		}
	}
	errs, warns := 0, 0
	for _, d := range diags {
		if d.Severity == policy.SeverityError {
			errs++
		} else {
			warns++
		}
	}
	if errs > 0 {
		return &exitError{code: exitConfig, msg: fmt.Sprintf("%s: %s, %s", name, plural(errs, "error"), plural(warns, "warning")),
			hint: "fix the lines above; the policy does not load until then"}
	}
	if !c.JSON {
		p, err := policy.Parse(name, src)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.io.out, "%s: ok (%s, %s)\n", name, plural(len(p.Rules), "rule"), plural(warns, "warning"))
	}
	return nil
}

// lint lints src as its layer, against the layers above it.
func (c *LintCmd) lint(a *app, name string, src []byte) ([]policy.Diagnostic, error) {
	layer := policy.Layer(c.Layer)
	if c.Layer == "auto" {
		layer = policy.LayerUser
		abs, _ := filepath.Abs(name)
		userFile := ""
		if paths, err := a.paths(); err == nil {
			userFile = paths.PolicyFile
		}
		switch {
		case name == policy.DefaultName, abs == userFile:
			// The user's own file, wherever MNEMOS_HOME puts it (even in
			// a directory named .mnemos).
		case abs == systemPolicyFile:
			layer = policy.LayerSystem
		case filepath.Base(abs) == "policy.yaml" && filepath.Base(filepath.Dir(abs)) == ".mnemos":
			layer = policy.LayerProject
		}
	}
	var system, user *policy.Policy
	if layer != policy.LayerSystem {
		var err error
		system, err = policy.LoadSystem(systemPolicyFile)
		if errors.Is(err, policy.ErrUntrustedSystemPolicy) {
			fmt.Fprintf(a.io.err, "mnemos: warning: %v; it is not applied\n", err)
			system, err = nil, nil
		}
		if err != nil {
			return nil, layerError(err)
		}
	}
	if layer == policy.LayerProject {
		paths, err := a.paths()
		if err != nil {
			return nil, err
		}
		if user, err = a.loadCheckedPolicy(paths); err != nil {
			return nil, err
		}
	}
	return policy.LintLayered(layer, system, user, name, src), nil
}

// source reads the named file, or the configured policy file, or the
// built-in default when no policy file exists.
func (c *LintCmd) source(a *app) (string, []byte, error) {
	file := c.File
	if file == "" {
		p, err := a.paths()
		if err != nil {
			return "", nil, err
		}
		file = p.PolicyFile
		if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(a.io.err, "mnemos: no policy file at %s; checking the built-in default\n", file)
			return policy.DefaultName, policy.DefaultSource(), nil
		}
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return "", nil, &exitError{code: exitConfig, msg: fmt.Sprintf("cannot read policy: %v", err)}
	}
	return file, src, nil
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
