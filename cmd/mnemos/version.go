package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/alecthomas/kong"
)

// VersionCmd prints the version.
type VersionCmd struct {
	JSON bool `name:"json" help:"Print one JSON object."`
}

// Run prints the version, the commit it was built from and the Go
// release that built it.
func (c VersionCmd) Run(a *app) error {
	b := readBuild()
	if c.JSON {
		return writeJSON(a.io.out, b)
	}
	fmt.Fprintln(a.io.out, b)
	return nil
}

// versionFlag is mnemos --version: the version line, then exit 0. The
// build information is read only when the flag is given.
type versionFlag bool

// BeforeReset prints the version and exits before kong checks the rest of
// the command line (kong calls it when the flag is present).
func (versionFlag) BeforeReset(k *kong.Kong) error {
	fmt.Fprintln(k.Stdout, readBuild())
	k.Exit(0)
	return nil
}

// build is what the binary knows of its own making.
type build struct {
	// Version is the module's version: the release tag for go install
	// ...@v1.2.3, a pseudo-version for a build from a clone (Go marks one
	// with uncommitted changes +dirty), "(devel)" when neither is known,
	// or what -ldflags "-X main.version=..." set.
	Version string `json:"version"`
	// Commit, Time and Modified come from the version control system of a
	// build from a clone; empty (false) for go install ...@version.
	Commit   string `json:"commit,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

// readBuild reads runtime/debug's build information.
func readBuild() build {
	b := build{Version: "(devel)", Go: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
		if bi.GoVersion != "" {
			b.Go = bi.GoVersion
		}
	}
	if version != "dev" && version != "" {
		b.Version = version
	}
	return b
}

// String is the version on one line: "mnemos v1.2.3 (go1.26.8)", or for a
// build from a clone "mnemos v0.0.0-…-69b6d12e4f1a+dirty (commit
// 69b6d12e4f1a, 2026-11-25T21:00:00Z, with uncommitted changes; go1.26.8)".
// Go's "(devel)" reads "devel", with why nothing more is known when no
// commit was recorded either.
func (b build) String() string {
	var about []string
	if b.Commit != "" {
		about = append(about, "commit "+short(b.Commit))
	}
	if b.Time != "" {
		about = append(about, b.Time)
	}
	if b.Modified {
		about = append(about, "with uncommitted changes")
	}
	v := b.Short()
	if v == "devel" {
		if b.Commit == "" {
			about = append(about, "no version or commit recorded: built outside a git clone or with -buildvcs=false")
		}
	}
	inside := b.Go
	if len(about) > 0 {
		inside = strings.Join(about, ", ") + "; " + b.Go
	}
	return fmt.Sprintf("mnemos %s (%s)", v, inside)
}

// Short is the version alone, as String and every other command that
// names the version (doctor) print it: "v1.2.3", a pseudo-version, or
// "devel" for Go's "(devel)".
func (b build) Short() string {
	if b.Version == "(devel)" {
		return "devel"
	}
	return b.Version
}

// short is a commit hash as git abbreviates it in a pseudo-version.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
