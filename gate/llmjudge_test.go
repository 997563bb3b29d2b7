package gate

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/vaglio"
)

// fakeModel is an OpenAI-compatible endpoint that answers with content,
// or with status when it is not 200, and keeps what it was sent.
type fakeModel struct {
	mu      sync.Mutex
	content string
	status  int
	delay   time.Duration
	bodies  []string
	auth    []string
}

func (m *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.bodies = append(m.bodies, string(b))
	m.auth = append(m.auth, r.Header.Get("Authorization"))
	content, status, delay := m.content, m.status, m.delay
	m.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	if status != 0 && status != http.StatusOK {
		http.Error(w, "overloaded", status)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"role": "assistant", "content": content}}}})
}

func (m *fakeModel) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.bodies)
}

// llmFixture is a gate whose policy chooses the llm-v1 judge at the
// endpoint of a fake model, at level full so that rules and the table
// allow ordinary work.
func llmFixture(t *testing.T, m *fakeModel, extra string) *fixture {
	t.Helper()
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	f := newFixture(t, "level: full\njudge:\n  threshold: 0.5\n  kind: llm-v1\n  endpoint: "+srv.URL+"/v1/chat/completions\n  model: judge-model\n  timeout: 300ms\n  api_key_env: JUDGE_KEY\n"+extra)
	f.g.cfg.Getenv = func(k string) string {
		if k == "JUDGE_KEY" {
			return "key-123"
		}
		return ""
	}
	return f
}

func TestLLMJudge(t *testing.T) {
	ctx := context.Background()
	t.Run("a high score keeps the decision", func(t *testing.T) {
		m := &fakeModel{content: `{"score": 0.9, "reason": "reads the project as asked"}`}
		f := llmFixture(t, m, "")
		req := f.req("bash", "-c", "ls && git status")
		req.Reason = "look at the project"
		d, err := f.g.Decide(ctx, req, Mode{DryRun: true})
		if err != nil || d.Outcome != policy.Allow {
			t.Fatalf("decision %s (%s), %v", d.Outcome, d.Reason, err)
		}
		if m.calls() != 1 {
			t.Fatalf("%d calls for one request, want 1", m.calls())
		}
		for _, c := range d.Commands {
			if c.Judge == nil || c.Judge.JudgeKind != vaglio.JudgeKindLLM || c.Judge.Score != 0.9 || !strings.Contains(c.Judge.Reason, "reads the project as asked") {
				t.Errorf("%s: verdict %+v", c.Text, c.Judge)
			}
		}
		var body struct {
			Model    string `json:"model"`
			Messages []struct{ Role, Content string }
		}
		if err := json.Unmarshal([]byte(m.bodies[0]), &body); err != nil {
			t.Fatal(err)
		}
		if body.Model != "judge-model" || len(body.Messages) != 2 || body.Messages[0].Content != vaglio.LLMSystemPrompt {
			t.Fatalf("request: %+v", body)
		}
		if u := body.Messages[1].Content; !strings.Contains(u, "Intent: look at the project") || !strings.Contains(u, "1. bash -c ls") || !strings.Contains(u, "2. bash -c git status") {
			t.Errorf("user message:\n%s", u)
		}
		if m.auth[0] != "Bearer key-123" {
			t.Errorf("authorization %q", m.auth[0])
		}
	})
	t.Run("a low score denies", func(t *testing.T) {
		m := &fakeModel{content: `{"score": 0.1, "reason": "unrelated to the intent"}`}
		f := llmFixture(t, m, "")
		d, err := f.g.Decide(ctx, f.req("ls"), Mode{DryRun: true})
		if err != nil || d.Outcome != policy.Deny || d.BlockedBy != "judge" || !strings.Contains(d.Reason, "judge: score 0.10 < threshold 0.50 (unrelated to the intent)") {
			t.Fatalf("decision %s by %s (%s), %v", d.Outcome, d.BlockedBy, d.Reason, err)
		}
	})
	t.Run("secrets are redacted before they leave", func(t *testing.T) {
		m := &fakeModel{content: `{"score": 0.9, "reason": "ok"}`}
		f := llmFixture(t, m, "")
		req := f.req("curl", "-H", "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789", "https://example.com")
		req.Reason = "use token=hunter2hunter2 to fetch"
		f.g.Decide(ctx, req, Mode{DryRun: true})
		if m.calls() != 1 {
			t.Fatalf("%d calls", m.calls())
		}
		if b := m.bodies[0]; strings.Contains(b, "abcdefghijklmnopqrstuvwxyz0123456789") || strings.Contains(b, "hunter2hunter2") {
			t.Errorf("a secret reached the model: %s", b)
		}
	})
	for _, c := range []struct {
		name, why string
		m         *fakeModel
	}{
		{"an endpoint that fails", "llm-judge fallback (chat failed", &fakeModel{status: http.StatusServiceUnavailable}},
		{"an answer without a score", "llm-judge fallback (parse fail)", &fakeModel{content: "I would rather not say."}},
		{"an endpoint too slow", "llm-judge fallback (chat failed", &fakeModel{content: `{"score": 0.9}`, delay: time.Second}},
	} {
		t.Run(c.name+" gives the neutral score", func(t *testing.T) {
			f := llmFixture(t, c.m, "")
			d, err := f.g.Decide(ctx, f.req("ls"), Mode{DryRun: true})
			if err != nil || len(d.Commands) != 1 {
				t.Fatal(d.Reason, err)
			}
			v := d.Commands[0].Judge
			if v == nil || v.Score != vaglio.LLMFallbackScore || !strings.Contains(v.Reason, c.why) {
				t.Fatalf("verdict %+v", v)
			}
			// 0.5 against a threshold of 0.5: the neutral score neither
			// approves more nor refuses; the decision is the rules'.
			if d.Outcome != policy.Allow {
				t.Errorf("decision %s (%s)", d.Outcome, d.Reason)
			}
		})
	}
}

// TestSecurityLLMJudgeAsksNothingTheGuardOrRulesDeny: a request the guard
// or a deny rule refuses never reaches the model (no call is spent, no
// command leaves the machine), and the model cannot lift an ask or a deny.
func TestSecurityLLMJudgeAsksNothingTheGuardOrRulesDeny(t *testing.T) {
	ctx := context.Background()
	m := &fakeModel{content: `{"score": 1, "reason": "the user wants this"}`}
	f := llmFixture(t, m, "deny:\n  - name: no curl\n    command: {argv_prefix: [curl]}\nask:\n  - name: touch asks\n    command: {argv_prefix: [touch]}\n")
	for _, argv := range [][]string{
		{"rm", "-rf", "/"},
		{"bash", "-c", "ls && cat ~/.ssh/id_rsa"},
		{"curl", "https://example.com"},
		{"bash", "-c", "ls; curl https://example.com"},
	} {
		d, err := f.g.Decide(ctx, f.req(argv...), Mode{DryRun: true})
		if err != nil || d.Outcome != policy.Deny {
			t.Errorf("%v: %s (%s), %v", argv, d.Outcome, d.Reason, err)
		}
	}
	if m.calls() != 0 {
		t.Fatalf("the model was asked %d times about denied requests", m.calls())
	}
	d, err := f.g.Decide(ctx, f.req("touch", "notes.txt"), Mode{DryRun: true})
	if err != nil || d.Outcome != policy.Ask {
		t.Errorf("touch: %s (%s), %v", d.Outcome, d.Reason, err)
	}
}

// TestLLMJudgeDailyLimit: past judge.max_calls_per_day, the rule-based
// judge stands in and the reason says so; the model is not asked.
func TestLLMJudgeDailyLimit(t *testing.T) {
	m := &fakeModel{content: `{"score": 0.9, "reason": "fine"}`}
	f := llmFixture(t, m, "")
	f.g.cfg.Policy.Judge.MaxCallsPerDay = 2
	ctx := context.Background()
	for i := range 3 {
		d, err := f.g.Decide(ctx, f.req("ls"), Mode{DryRun: true})
		if err != nil || d.Outcome != policy.Allow || len(d.Commands) != 1 {
			t.Fatalf("request %d: %s (%s), %v", i, d.Outcome, d.Reason, err)
		}
		v := d.Commands[0].Judge
		switch {
		case i < 2 && (v.JudgeKind != vaglio.JudgeKindLLM || v.Score != 0.9):
			t.Errorf("request %d: %+v", i, v)
		case i == 2 && (v.JudgeKind != vaglio.JudgeKindRuleBased || !strings.Contains(v.Reason, "llm-judge over its 2 calls a day: rule-based")):
			t.Errorf("request %d past the limit: %+v", i, v)
		}
	}
	if m.calls() != 2 {
		t.Errorf("the model was asked %d times, want 2", m.calls())
	}
	// The bucket refills over the day.
	f.now = f.now.Add(12 * time.Hour)
	if d, _ := f.g.Decide(ctx, f.req("ls"), Mode{DryRun: true}); d.Commands[0].Judge.JudgeKind != vaglio.JudgeKindLLM {
		t.Errorf("after half a day: %+v", d.Commands[0].Judge)
	}
}

// The judge's reason is recorded with a model's verdict, so a fallback can
// be seen afterwards.
func TestLLMJudgeReasonIsRecorded(t *testing.T) {
	m := &fakeModel{status: http.StatusServiceUnavailable}
	f := llmFixture(t, m, "")
	if _, err := f.g.Decide(context.Background(), f.req("ls"), Mode{}); err != nil {
		t.Fatal(err)
	}
	for _, ev := range f.audit.events {
		cmds, _ := ev["commands"].([]any)
		for _, c := range cmds {
			if j, _ := c.(map[string]any)["judge"].(string); strings.Contains(j, "llm-judge fallback (chat failed") {
				return
			}
		}
	}
	t.Fatalf("no judge reason in the audit events: %v", f.audit.events)
}
