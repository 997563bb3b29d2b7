package gate

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestJudgeFromEnv: seed 003's knobs, read for one call: what would loosen
// the policy, or turn on an endpoint no user or system policy names, is
// ignored with a warning.
func TestJudgeFromEnv(t *testing.T) {
	plain := policy.Default()
	plain.JudgeThreshold = 0.4
	named, err := policy.Parse("user.yaml", []byte("judge:\n  threshold: 0.4\n  kind: rule-based-v1\n  endpoint: http://127.0.0.1:1/v1/chat/completions\n  model: m\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		p         *policy.Policy
		env       map[string]string
		threshold float64
		kind      string
		warn      string
	}{
		{"nothing set", plain, nil, 0, "", ""},
		{"a higher threshold", plain, map[string]string{EnvJudgeThreshold: "0.9"}, 0.9, "", ""},
		{"the same threshold", plain, map[string]string{EnvJudgeThreshold: "0.4"}, 0.4, "", ""},
		{"a lower threshold", plain, map[string]string{EnvJudgeThreshold: "0.1"}, 0, "", "below the policy's threshold 0.40"},
		{"zero", plain, map[string]string{EnvJudgeThreshold: "0"}, 0, "", "below"},
		{"negative", plain, map[string]string{EnvJudgeThreshold: "-1"}, 0, "", "not a number from 0 to 1"},
		{"above one", plain, map[string]string{EnvJudgeThreshold: "1.5"}, 0, "", "not a number from 0 to 1"},
		{"NaN", plain, map[string]string{EnvJudgeThreshold: "NaN"}, 0, "", "not a number from 0 to 1"},
		{"garbage", plain, map[string]string{EnvJudgeThreshold: "high\x1b[2J"}, 0, "", `high\x1b[2J`},
		{"rule-based", plain, map[string]string{EnvJudgeKind: "rule-based-v1"}, 0, policy.JudgeRuleBased, ""},
		{"llm without an endpoint", plain, map[string]string{EnvJudgeKind: "llm-v1"}, 0, "", "no user or system policy names"},
		{"llm with an endpoint", named, map[string]string{EnvJudgeKind: "llm-v1"}, 0, policy.JudgeLLM, ""},
		{"unknown kind", named, map[string]string{EnvJudgeKind: "llm-v2"}, 0, "", "ignored: want"},
	} {
		t.Run(c.name, func(t *testing.T) {
			th, kind, warns := JudgeFromEnv(envOf(c.env), c.p)
			if th != c.threshold || kind != c.kind {
				t.Errorf("threshold %v kind %q, want %v %q", th, kind, c.threshold, c.kind)
			}
			w := strings.Join(warns, "\n")
			if c.warn == "" && w != "" || c.warn != "" && !strings.Contains(w, c.warn) {
				t.Errorf("warnings %q, want %q", w, c.warn)
			}
		})
	}
}

// TestSecurityJudgeThresholdFromEnvOnlyRaises: a threshold from the
// environment never lowers the policy's: a request the policy's threshold
// denies stays denied by the judge, and a higher one denies more.
func TestSecurityJudgeThresholdFromEnvOnlyRaises(t *testing.T) {
	f := newFixture(t, "level: full\ndefaults: {shell: allow}\njudge: {threshold: 0.99}\n")
	th, _, _ := JudgeFromEnv(envOf(map[string]string{EnvJudgeThreshold: "0.01"}), f.g.cfg.Policy)
	f.g.cfg.JudgeThreshold = th
	if d := f.decide(t, Mode{DryRun: true}, "ls"); d.Outcome != policy.Deny || d.BlockedBy != "judge" {
		t.Errorf("ls with the policy at 0.99 and the environment at 0.01: %s by %s, want deny by the judge", d.Outcome, d.BlockedBy)
	}
	// Even a value set past the reading is only a floor.
	f.g.cfg.JudgeThreshold = 0.01
	if d := f.decide(t, Mode{DryRun: true}, "ls"); d.Outcome != policy.Deny || d.BlockedBy != "judge" {
		t.Errorf("Config.JudgeThreshold 0.01 lowered the policy's 0.99: %s", d.Outcome)
	}
	g := newFixture(t, "level: full\ndefaults: {shell: allow}\n")
	g.g.cfg.JudgeThreshold = 0.99
	if d := g.decide(t, Mode{DryRun: true}, "ls"); d.Outcome != policy.Deny || d.BlockedBy != "judge" {
		t.Errorf("ls with the environment at 0.99: %s, want deny by the judge", d.Outcome)
	}
}

// TestSecurityJudgeKindFromEnvNamesNoEndpoint: MNEMOS_JUDGE_KIND=llm-v1
// turns on only a model judge the user's or the system's policy names; a
// project policy cannot name one, and neither can --policy.
func TestSecurityJudgeKindFromEnvNamesNoEndpoint(t *testing.T) {
	m := &fakeModel{content: `{"score": 0.0, "reason": "no"}`}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	judge := "judge:\n  kind: rule-based-v1\n  endpoint: " + srv.URL + "/v1/chat/completions\n  model: m\n  timeout: 300ms\n"
	pf := filepath.Join(t.TempDir(), "project.yaml")
	if err := os.WriteFile(pf, []byte(judge), 0o600); err != nil {
		t.Fatal(err)
	}
	project, err := policy.LoadProject(pf)
	if err != nil {
		t.Fatal(err)
	}
	merged, _ := policy.Merge(nil, nil, project)
	f := newFixture(t, "level: full\n")
	f.g.cfg.Policy = merged
	extra, err := policy.Parse("extra.yaml", []byte(judge))
	if err != nil {
		t.Fatal(err)
	}
	f.g.cfg.Extra = extra
	_, kind, warns := JudgeFromEnv(envOf(map[string]string{EnvJudgeKind: "llm-v1"}), merged)
	if kind != "" || len(warns) != 1 {
		t.Fatalf("kind %q warnings %q, want none and one", kind, warns)
	}
	// Even set past the reading, no endpoint is taken from the project
	// or --policy.
	f.g.cfg.JudgeKind = policy.JudgeLLM
	d := f.decide(t, Mode{DryRun: true}, "ls")
	if m.calls() != 0 || d.Commands[0].Judge == nil || d.Commands[0].Judge.JudgeKind != policy.JudgeRuleBased {
		t.Fatalf("a model judge was turned on without the user's or system's endpoint: %d calls, judge %+v", m.calls(), d.Commands[0].Judge)
	}
	// The user's policy names it: the knob turns it on, and it can deny.
	user, err := policy.Parse("user.yaml", []byte("level: full\n"+judge))
	if err != nil {
		t.Fatal(err)
	}
	f.g.cfg.Policy, f.g.cfg.Extra = user, nil
	if d := f.decide(t, Mode{DryRun: true}, "ls"); d.Outcome != policy.Deny || d.BlockedBy != "judge" || m.calls() != 1 {
		t.Errorf("llm-v1 on the user's endpoint: %s by %s after %d calls, want deny by the judge after 1", d.Outcome, d.BlockedBy, m.calls())
	}
	// Without the knob, the user's rule-based choice stands.
	f.g.cfg.JudgeKind = ""
	if d := f.decide(t, Mode{DryRun: true}, "ls"); d.Outcome != policy.Allow || m.calls() != 1 {
		t.Errorf("rule-based-v1 with a named endpoint: %s after %d calls, want allow and no call", d.Outcome, m.calls())
	}
}

// TestJudgeKindFromEnvTurnsTheModelOff: rule-based-v1 in the environment
// turns a configured model judge off for the call.
func TestJudgeKindFromEnvTurnsTheModelOff(t *testing.T) {
	m := &fakeModel{content: `{"score": 0.0, "reason": "no"}`}
	f := llmFixture(t, m, "")
	_, kind, _ := JudgeFromEnv(envOf(map[string]string{EnvJudgeKind: "rule-based-v1"}), f.g.cfg.Policy)
	f.g.cfg.JudgeKind = kind
	d := f.decide(t, Mode{DryRun: true}, "ls")
	if m.calls() != 0 || d.Outcome != policy.Allow || d.Commands[0].Judge == nil || d.Commands[0].Judge.JudgeKind != policy.JudgeRuleBased {
		t.Errorf("calls %d, %s, judge %+v", m.calls(), d.Outcome, d.Commands[0].Judge)
	}
}
