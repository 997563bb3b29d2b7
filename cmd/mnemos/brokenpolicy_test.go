package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
)

// TestSecurityStandInPolicyAllowsNothing: the policy a showing or
// tightening command holds when the configured one does not load decides
// nothing but deny, should anything ever decide with it.
func TestSecurityStandInPolicyAllowsNothing(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "MNEMOS_HOME" {
			return filepath.Join(home, ".mnemos")
		}
		return ""
	}
	paths, err := gate.Locate("", getenv, home)
	if err != nil {
		t.Fatal(err)
	}
	pol := standInPolicy()
	if pol.Level != policy.ReadOnly || pol.Source != standInSource {
		t.Fatalf("stand-in policy: level %s, source %q", pol.Level, pol.Source)
	}
	g := gate.New(gate.Config{Paths: paths, Policy: pol, UserHome: home, Now: time.Now, Getenv: getenv})
	defer g.Close()
	for _, cmd := range [][]string{
		{"ls"}, {"true"}, {"cat", "README.md"}, {"git", "status"}, {"echo", "hi"},
		{"go", "test", "./..."}, {"pip", "--version"}, {"bash", "-c", "ls"}, {"touch", "x"},
	} {
		dec, err := g.Decide(context.Background(), gate.Request{Argv: cmd, Cwd: ws, Channel: "cli", Sender: "dev"}, gate.Mode{DryRun: true})
		if err == nil && dec.Outcome != policy.Deny {
			t.Errorf("%q under the stand-in policy: %s, want deny", cmd, dec.Outcome)
		}
	}
}

// TestSecurityBrokenPolicyOnlyToleratedWhereNothingLoosens: a policy file
// that does not load stops every command that decides or loosens (its
// error names file, line and column); a showing or tightening command
// warns on one line, names the file the same way, and holds the stand-in
// policy, never anything read from the broken file.
func TestSecurityBrokenPolicyOnlyToleratedWhereNothingLoosens(t *testing.T) {
	home := t.TempDir()
	mh := filepath.Join(home, ".mnemos")
	if err := os.MkdirAll(mh, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(mh, "policy.yaml")
	// Valid but for one unknown key: everything it writes would loosen.
	src := "level: full\ndefaults:\n  shell: allow\nallow:\n  - {name: everything, conditions: {argv.0: {matches: \"(?s).*\"}}}\nlevle: full\n"
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		switch k {
		case "MNEMOS_HOME":
			return mh
		case "HOME":
			return home
		}
		return ""
	}
	newApp := func(tolerant string) (*app, *bytes.Buffer) {
		var errb bytes.Buffer
		return &app{ctx: context.Background(), cli: &Globals{Home: mh}, io: stdio{out: &bytes.Buffer{}, err: &errb},
			getenv: getenv, now: time.Now, tolerant: tolerant}, &errb
	}
	old := systemPolicyFile
	systemPolicyFile = filepath.Join(home, "no-etc", "policy.yaml")
	defer func() { systemPolicyFile = old }()

	a, errb := newApp("")
	_, err := a.gate()
	var pe *policy.Error
	if !errors.As(err, &pe) || pe.File != file || pe.Line != 6 || pe.Col != 1 {
		t.Fatalf("gate without tolerance: %v, want the policy error at %s:6:1", err, file)
	}
	if errb.Len() != 0 {
		t.Errorf("warned where it refused: %q", errb.String())
	}

	a, errb = newApp("approvals deny")
	g, err := a.gate()
	if err != nil {
		t.Fatalf("tolerant gate: %v", err)
	}
	defer a.close()
	if got := g.Config().Policy; got.Source != standInSource || got.Level != policy.ReadOnly {
		t.Errorf("tolerant gate holds %q at level %s, want the stand-in", got.Source, got.Level)
	}
	lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "mnemos: warning: "+file+":6:1: ") || !strings.Contains(lines[0], "approvals deny goes on") {
		t.Errorf("warning = %q, want one line naming %s:6:1", errb.String(), file)
	}
}
