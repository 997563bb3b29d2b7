package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/audit"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/vaglio"
)

// Scorer asks a model to judge a request: vaglio's phase 2 when the policy
// chooses the llm-v1 judge. It returns the model's answer as text.
type Scorer interface {
	Score(ctx context.Context, system, user string) (string, error)
}

// LLMConfig says where the model-based judge is reached: an
// OpenAI-compatible chat completions endpoint (OpenAI, Ollama's /v1,
// llama.cpp's server, vLLM ...).
type LLMConfig struct {
	Endpoint string
	Model    string
	// APIKey, when set, is sent as a bearer token.
	APIKey  string
	Timeout time.Duration
}

// maxLLMAnswer bounds the bytes read from the model's endpoint.
const maxLLMAnswer = 1 << 20

// NewLLMScorer returns a Scorer for cfg.
func NewLLMScorer(cfg LLMConfig) Scorer {
	return &httpScorer{cfg: cfg, client: &http.Client{Timeout: cfg.Timeout}}
}

type httpScorer struct {
	cfg    LLMConfig
	client *http.Client
}

// Score sends one chat completion request and returns the reply's text.
func (s *httpScorer) Score(ctx context.Context, system, user string) (string, error) {
	body, err := json.Marshal(map[string]any{
		"model": s.cfg.Model,
		"messages": []map[string]string{
			{"role": "system", "content": system},
			{"role": "user", "content": user},
		},
		"temperature": 0,
		"max_tokens":  200,
		"stream":      false,
	})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.Endpoint, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	if s.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.cfg.APIKey)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxLLMAnswer))
	if err != nil {
		return "", err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", fmt.Errorf("the endpoint answered %s", resp.Status)
	}
	// OpenAI's shape, and Ollama's native one.
	var ans struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Message *struct {
			Content string `json:"content"`
		} `json:"message"`
	}
	if err := json.Unmarshal(data, &ans); err != nil {
		return "", errors.New("the endpoint's answer is not JSON")
	}
	switch {
	case len(ans.Choices) > 0:
		return ans.Choices[0].Message.Content, nil
	case ans.Message != nil:
		return ans.Message.Content, nil
	}
	return "", errors.New("the endpoint's answer holds no message")
}

// scorer returns the model-based judge the policy chose, or nil for the
// rule-based one.
func (g *Gate) scorer() Scorer {
	if g.cfg.JudgeKind == policy.JudgeRuleBased {
		return nil
	}
	if g.cfg.Scorer != nil {
		return g.cfg.Scorer
	}
	j := g.cfg.Policy.Judge
	// Config.JudgeKind turns on only an endpoint the user's or the
	// system's policy names (a project's or --policy's judge is never in
	// Policy.Judge).
	on := j.Kind == policy.JudgeLLM || g.cfg.JudgeKind == policy.JudgeLLM && j.Endpoint != ""
	if !on {
		return nil
	}
	key := ""
	if j.APIKeyEnv != "" && g.cfg.Getenv != nil {
		key = g.cfg.Getenv(j.APIKeyEnv)
	}
	return NewLLMScorer(LLMConfig{Endpoint: j.Endpoint, Model: j.Model, APIKey: key, Timeout: j.Timeout})
}

// judgeByModel is phase 2 with the llm-v1 judge: one question to the model
// for the whole request, asked only when no command is already denied (a
// request with a denied command is denied whatever the model says, so the
// guard and the policy decide first and no call is spent). The verdict
// applies to every command not denied; below the threshold they are denied
// by the judge. A model that does not answer, or answers without a score,
// gives seed 003's neutral fallback score, and the reason says so.
func (g *Gate) judgeByModel(ctx context.Context, sc Scorer, j vaglio.Judge, req Request, dec *Decision) {
	texts := make([]string, 0, len(dec.Commands))
	for _, c := range dec.Commands {
		if c.Outcome == policy.Deny {
			return
		}
		texts = append(texts, audit.RedactString(c.Text))
	}
	if over, why := g.overModelLimit(ctx); over {
		verdicts := make([]vaglio.Verdict, len(dec.Commands))
		for i := range dec.Commands {
			verdicts[i] = ruleJudge(j, req.Reason, &dec.Commands[i], why)
			dec.Commands[i].judged(&verdicts[i])
		}
		return
	}
	user := vaglio.LLMUserPrompt(audit.RedactString(req.Reason), texts)
	var v vaglio.Verdict
	answer, err := sc.Score(ctx, vaglio.LLMSystemPrompt, user)
	switch score, reason, ok := vaglio.ParseLLMAnswer(answer); {
	case err != nil:
		v = j.Verdict(vaglio.LLMFallbackScore, " (llm-judge fallback (chat failed: "+oneLine(err.Error())+"))", vaglio.JudgeKindLLM)
	case !ok:
		v = j.Verdict(vaglio.LLMFallbackScore, " (llm-judge fallback (parse fail))", vaglio.JudgeKindLLM)
	default:
		detail := ""
		if reason != "" {
			detail = " (" + reason + ")"
		}
		v = j.Verdict(score, detail, vaglio.JudgeKindLLM)
	}
	for i := range dec.Commands {
		dec.Commands[i].judged(&v)
	}
}

// ruleJudge is the rule-based judge on one command the guard and policy
// let through; note, when not empty, says why it stands in for the model.
func ruleJudge(j vaglio.Judge, intent string, cd *CommandDecision, note string) vaglio.Verdict {
	critical := false
	if cd.Policy != nil {
		for _, a := range cd.Policy.Accesses {
			if s, err := policy.Lookup(a.Capability); err == nil && s.Critical {
				critical = true
			}
		}
	}
	v := j.Judge(vaglio.Input{Intent: intent, Command: cd.Command, Critical: critical})
	if note != "" {
		v.Reason += " (" + note + ")"
	}
	return v
}

// judged records a verdict on the command; one below the threshold denies
// it.
func (cd *CommandDecision) judged(v *vaglio.Verdict) {
	cd.Judge = v
	if !v.Approved {
		cd.Outcome, cd.BlockedBy, cd.DecidedBy, cd.Reason = policy.Deny, "judge", "judge", v.Reason
	}
}

// overModelLimit takes one of the model judge's daily calls when the
// policy bounds them (judge.max_calls_per_day, a token bucket in the state
// database refilled over a day). Over the limit, or when the bucket cannot
// be read, the rule-based judge stands in, and why says so.
func (g *Gate) overModelLimit(ctx context.Context) (bool, string) {
	n := g.cfg.Policy.Judge.MaxCallsPerDay
	if n <= 0 {
		return false, ""
	}
	st, err := g.Store(ctx)
	if err != nil {
		return true, "llm-judge limit unreadable: rule-based"
	}
	ok, _, err := st.TakeToken(ctx, "judge:"+policy.JudgeLLM, float64(n), float64(n)/(24*60), g.cfg.Now())
	switch {
	case err != nil:
		return true, "llm-judge limit unreadable: rule-based"
	case !ok:
		return true, fmt.Sprintf("llm-judge over its %d calls a day: rule-based", n)
	}
	return false, ""
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Seed 003's environment knobs for the judge.
const (
	EnvJudgeThreshold = "MNEMOS_JUDGE_THRESHOLD"
	EnvJudgeKind      = "MNEMOS_JUDGE_KIND"
)

// JudgeFromEnv reads seed 003's knobs for one call, made safe: a
// threshold may raise the policy's, never lower it; rule-based-v1 turns a
// configured model judge off; llm-v1 turns one on only where p (the user's
// and system's policy) names its endpoint. What it ignores it says in
// warnings, for the caller to print. The results go to Config.JudgeThreshold
// and Config.JudgeKind.
func JudgeFromEnv(getenv func(string) string, p *policy.Policy) (threshold float64, kind string, warnings []string) {
	if v := strings.TrimSpace(getenv(EnvJudgeThreshold)); v != "" {
		t, err := strconv.ParseFloat(v, 64)
		switch {
		case err != nil || math.IsNaN(t) || t < 0 || t > 1:
			warnings = append(warnings, fmt.Sprintf("%s=%s is not a number from 0 to 1; the policy's threshold %.2f stands", EnvJudgeThreshold, approvals.Printable(v), p.JudgeThreshold))
		case t < p.JudgeThreshold:
			warnings = append(warnings, fmt.Sprintf("%s=%s is below the policy's threshold %.2f, which stands (the environment may only raise it)", EnvJudgeThreshold, approvals.Printable(v), p.JudgeThreshold))
		default:
			threshold = t
		}
	}
	switch v := strings.TrimSpace(getenv(EnvJudgeKind)); v {
	case "":
	case policy.JudgeRuleBased:
		kind = v
	case policy.JudgeLLM:
		if p.Judge.Endpoint == "" {
			warnings = append(warnings, fmt.Sprintf("%s=%s is ignored: no user or system policy names the judge's endpoint (judge: endpoint: and model:)", EnvJudgeKind, v))
		} else {
			kind = v
		}
	default:
		warnings = append(warnings, fmt.Sprintf("%s=%s is ignored: want %s or %s", EnvJudgeKind, approvals.Printable(v), policy.JudgeRuleBased, policy.JudgeLLM))
	}
	return threshold, kind, warnings
}
