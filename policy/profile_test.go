package policy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/classify"
)

const profileSrc = `level: supervised
rules:
  - {name: ls, action: allow, command: {argv_prefix: [ls]}}
  - {name: make asks, action: ask, priority: 5, command: {argv_prefix: [make]}}
profiles:
  - name: kids
    channel: telegram
    sender: bob
    level: readonly
    deny:
      - {name: no ls for bob, priority: 0, command: {argv_prefix: [ls]}}
  - channel: telegram
    sender: "*"
    level: full
    rules:
      - {name: make runs, action: allow, priority: 5, command: {argv_prefix: [make]}}
      - {name: no mail, action: deny, capability: mail:send}
  - {channel: "*", sender: ci, level: readonly}
`

// TestProfilesApplyOnlyToTheirIdentities: a profile's level and rules
// change nothing for any other sender.
func TestProfilesApplyOnlyToTheirIdentities(t *testing.T) {
	p := mustParse(t, profileSrc)
	cases := []struct {
		channel, sender string
		level           Level
		argv            []string
		want            Outcome
		rule, profile   string
	}{
		{"cli", "ann", Supervised, []string{"ls"}, Allow, "ls", ""},
		{"cli", "ann", Supervised, []string{"make"}, Ask, "make asks", ""},
		{"cli", "ann", Supervised, []string{"mail", "x@y.z"}, Ask, "", ""},
		{"telegram", "bob", ReadOnly, []string{"ls"}, Deny, "no ls for bob", "kids"}, // equal priority: the profile's rule first
		{"telegram", "bob", ReadOnly, []string{"make"}, Deny, "make asks", ""},       // readonly denies code:exec; the other profile is not bob's
		{"telegram", "ann", Full, []string{"ls"}, Allow, "ls", ""},
		{"telegram", "ann", Full, []string{"make"}, Allow, "make runs", "telegram/*"},
		{"telegram", "ann", Full, []string{"mail", "x@y.z"}, Deny, "no mail", "telegram/*"},
		{"cli", "ci", ReadOnly, []string{"make"}, Deny, "make asks", ""},
		{"slack", "ann", Supervised, []string{"make"}, Ask, "make asks", ""},
	}
	for _, tc := range cases {
		if l := p.LevelFor(tc.channel, tc.sender); l != tc.level {
			t.Errorf("LevelFor(%s, %s) = %s, want %s", tc.channel, tc.sender, l, tc.level)
		}
		in := input(cmd(tc.argv...), tc.level)
		in.Channel, in.Sender = tc.channel, tc.sender
		res, err := p.Evaluate(context.Background(), in, nil)
		if err != nil {
			t.Fatal(err)
		}
		rule, profile := "", ""
		if res.Rule != nil {
			rule, profile = res.Rule.Name, res.Rule.Profile
		}
		if res.Outcome != tc.want || rule != tc.rule || profile != tc.profile {
			t.Errorf("%s/%s %v = %s rule %q (%s) %s; want %s rule %q (%s)", tc.channel, tc.sender, tc.argv, res.Outcome, rule, profile, res.Reason, tc.want, tc.rule, tc.profile)
		}
	}
	res, _ := p.Evaluate(context.Background(), Input{Command: cmd("make"), Level: Full, Channel: "telegram", Sender: "ann", Workspace: "/w", Place: classify.Place{Dirs: []string{"/w"}}}, nil)
	if res.Reason != `rule "make runs" (profile "telegram/*") allows it` {
		t.Errorf("reason %q", res.Reason)
	}
	if p.ProfileFor("cli", "ann") != nil || p.ProfileFor("telegram", "bob").Name != "kids" || p.ProfileFor("x", "ci").Name != "*/ci" {
		t.Error("ProfileFor")
	}
	roundTrip(t, p)
}

func TestProfileCasesUseTheProfileLevel(t *testing.T) {
	p := mustParse(t, profileSrc)
	cases, err := ParseCases("c.yaml", []byte(`cases:
  - {command: make, channel: telegram, sender: ann, want: allow, rule: make runs}
  - {command: make, channel: telegram, sender: bob, want: deny, decided_by: table}
  - {command: make, channel: telegram, sender: bob, level: full, want: ask, rule: make asks}
  - {command: make, want: ask, rule: make asks}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		res, err := p.RunCase(context.Background(), c, time.Unix(1e9, 0))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Pass() {
			t.Errorf("line %d: %v (%s)", c.Pos.Line, res.Problems, res.Got.Reason)
		}
	}
}

func TestLintProfiles(t *testing.T) {
	src := `rules:
  - {name: git, action: ask, priority: 10, command: {argv_prefix: [git]}}
profiles:
  - {channel: telegram, sender: "*", level: readonly}
  - {channel: telegram, sender: ann, level: full}
  - channel: cli
    sender: ann
    rules:
      - {name: git push, action: deny, priority: 5, command: {argv_prefix: [git, push]}}
      - {name: git log, action: allow, priority: 20, command: {argv_prefix: [git, log]}}
`
	var got []string
	for _, d := range Lint("p.yaml", []byte(src)) {
		got = append(got, d.String())
	}
	want := []string{
		`p.yaml:5:5: warning: profile "telegram/ann" is unreachable: profile "telegram/*" (line 4) matches every identity it matches and comes first`,
		`p.yaml:9:9: warning: rule "git push" is unreachable: rule "git" (line 2, priority 10) is evaluated first and matches every command it matches`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestProfilesInAStack: a project profile lowers its identity's level; a
// user profile cannot raise it above the level the system file writes.
func TestProfilesInAStack(t *testing.T) {
	system := mustParseAs(t, "system.yaml", "level: supervised\n")
	user := mustParseAs(t, "user.yaml", "level: supervised\nprofiles:\n  - {channel: cli, sender: ann, level: full}\n")
	project := mustParseAs(t, "project.yaml", "profiles:\n  - {channel: telegram, sender: \"*\", level: readonly}\n")
	m, _ := Merge(nil, user, project)
	for _, tc := range []struct {
		ch, snd string
		want    Level
	}{{"cli", "ann", Full}, {"cli", "bob", Supervised}, {"telegram", "ann", ReadOnly}} {
		if got := m.LevelFor(tc.ch, tc.snd); got != tc.want {
			t.Errorf("LevelFor(%s, %s) = %s, want %s", tc.ch, tc.snd, got, tc.want)
		}
	}
	m, _ = Merge(system, user, project)
	if got := m.LevelFor("cli", "ann"); got != Supervised {
		t.Errorf("system caps the profile: %s", got)
	}
	d := LintLayered(LayerUser, system, nil, "user.yaml", []byte("level: supervised\nprofiles:\n  - {channel: cli, sender: ann, level: full}\n"))
	if len(d) != 1 || !strings.Contains(d[0].String(), `user.yaml:3:5: warning: profile "cli/ann" sets level full, above the level supervised the system policy system.yaml gives these requests`) {
		t.Errorf("lint: %v", d)
	}
}
