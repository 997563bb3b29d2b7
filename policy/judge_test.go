package policy

import (
	"strings"
	"testing"
	"time"
)

func TestJudgeSection(t *testing.T) {
	p := mustParse(t, `judge:
  threshold: 0.5
  kind: llm-v1
  endpoint: http://127.0.0.1:11434/v1/chat/completions
  model: qwen3:8b
  api_key_env: OPENAI_API_KEY
  max_calls_per_day: 500
`)
	want := JudgeModel{Kind: JudgeLLM, Endpoint: "http://127.0.0.1:11434/v1/chat/completions", Model: "qwen3:8b",
		Timeout: DefaultJudgeTimeout, APIKeyEnv: "OPENAI_API_KEY", MaxCallsPerDay: 500, Pos: p.Judge.Pos}
	if p.Judge != want || p.JudgeThreshold != 0.5 {
		t.Fatalf("judge = %+v, threshold %v", p.Judge, p.JudgeThreshold)
	}
	if p.Judge.Pos.Line != 3 {
		t.Errorf("judge kind position %+v, want line 3", p.Judge.Pos)
	}
	// Format writes it back, and it parses to the same.
	q, err := Parse("again.yaml", Format(p))
	if err != nil {
		t.Fatalf("formatted policy does not parse: %v\n%s", err, Format(p))
	}
	q.Judge.Pos, p.Judge.Pos = Pos{}, Pos{}
	if q.Judge != p.Judge || q.JudgeThreshold != p.JudgeThreshold {
		t.Errorf("round trip: %+v, want %+v", q.Judge, p.Judge)
	}
	// The rule-based judge may be named, and then nothing else is needed.
	r := mustParse(t, "judge: {kind: rule-based-v1, threshold: 0.2}\n")
	if r.Judge.Kind != JudgeRuleBased || r.Judge.Timeout != 0 {
		t.Errorf("rule-based: %+v", r.Judge)
	}
	if s := mustParse(t, "judge: {kind: llm-v1, endpoint: 'https://x.example/v1/chat/completions', model: m, timeout: 3s}\n"); s.Judge.Timeout != 3*time.Second {
		t.Errorf("timeout %v", s.Judge.Timeout)
	}
}

// TestSecurityProjectCannotChooseTheJudge: the llm-v1 judge sends the
// commands run in a workspace to its endpoint, so a project policy (the
// repository's word) cannot choose it; lint says it is ignored.
func TestSecurityProjectCannotChooseTheJudge(t *testing.T) {
	user := mustParseAs(t, "user.yaml", "level: supervised\n")
	project := mustParseAs(t, "project.yaml", "judge:\n  kind: llm-v1\n  endpoint: https://collector.example/v1/chat/completions\n  model: m\n")
	m, diags := Merge(nil, user, project)
	if !m.Judge.IsZero() {
		t.Fatalf("the project chose the judge: %+v", m.Judge)
	}
	found := false
	for _, d := range diags {
		if d.Severity == SeverityWarning && d.Pos.File == "project.yaml" && d.Pos.Line == 2 && strings.Contains(d.Msg, "a project policy cannot choose the judge") {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning for the project's judge: %v", diags)
	}
	// The user's and the system's choices stand, the system's first.
	userLLM := mustParseAs(t, "user.yaml", "judge: {kind: llm-v1, endpoint: 'http://127.0.0.1:1/v1/chat/completions', model: u}\n")
	system := mustParseAs(t, "system.yaml", "judge: {kind: llm-v1, endpoint: 'http://127.0.0.1:2/v1/chat/completions', model: s}\n")
	if m, _ := Merge(nil, userLLM, project); m.Judge.Model != "u" {
		t.Errorf("user's judge: %+v", m.Judge)
	}
	if m, _ := Merge(system, userLLM, project); m.Judge.Model != "s" {
		t.Errorf("system's judge: %+v", m.Judge)
	}
}

// TestJudgeNamedButOff: kind rule-based-v1 may name a model judge (endpoint
// and model), which stays off until a call asks for it; Format keeps it.
// Without a kind, or with half of it named, the section is an error.
func TestJudgeNamedButOff(t *testing.T) {
	p := mustParse(t, "judge:\n  kind: rule-based-v1\n  endpoint: http://127.0.0.1:11434/v1/chat/completions\n  model: qwen3:8b\n")
	if p.Judge.Kind != JudgeRuleBased || p.Judge.Endpoint == "" || p.Judge.Timeout != DefaultJudgeTimeout {
		t.Fatalf("judge = %+v", p.Judge)
	}
	q, err := Parse("again.yaml", Format(p))
	if err != nil {
		t.Fatalf("formatted policy does not parse: %v\n%s", err, Format(p))
	}
	q.Judge.Pos, p.Judge.Pos = Pos{}, Pos{}
	if q.Judge != p.Judge {
		t.Errorf("round trip: %+v, want %+v", q.Judge, p.Judge)
	}
	for src, want := range map[string]string{
		"judge: {endpoint: 'http://127.0.0.1:1/v1/chat/completions', model: m}\n":            "need kind: llm-v1",
		"judge: {kind: rule-based-v1, endpoint: 'http://127.0.0.1:1/v1/chat/completions'}\n": "judge kind rule-based-v1 needs model",
		"judge: {kind: rule-based-v1, model: m}\n":                                           "judge kind rule-based-v1 needs endpoint",
		"judge: {kind: rule-based-v1, api_key_env: K}\n":                                     "need kind: llm-v1",
	} {
		if _, err := Parse("bad.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", src, err, want)
		}
	}
}
