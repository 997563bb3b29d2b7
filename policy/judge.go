package policy

import (
	"fmt"
	"regexp"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// Judge kinds: seed 003's rule-based judge (the default) and the judge
// that asks a model.
const (
	JudgeRuleBased = "rule-based-v1"
	JudgeLLM       = "llm-v1"
)

// DefaultJudgeTimeout bounds a model's answer when the policy sets no
// timeout; MaxJudgeTimeout is the most a policy may set.
const (
	DefaultJudgeTimeout = 10 * time.Second
	MaxJudgeTimeout     = 120 * time.Second
)

// JudgeModel is the judge: section's choice of judge beyond its threshold:
//
//	judge:
//	  threshold: 0.5
//	  kind: llm-v1                       # rule-based-v1 (default) or llm-v1
//	  endpoint: http://127.0.0.1:11434/v1/chat/completions
//	  model: qwen3:8b
//	  timeout: 10s
//	  api_key_env: OPENAI_API_KEY        # the variable holding a bearer token
//	  max_calls_per_day: 500             # then the rule-based judge, until the day refills
//
// The llm-v1 judge sends the redacted commands of every request the guard
// and the rules did not deny to the endpoint, an OpenAI-compatible chat
// completions URL; it can deny, never allow. With kind rule-based-v1 the
// same keys name a model judge that stays off until a call asks for it
// (MNEMOS_JUDGE_KIND=llm-v1): the environment can turn on only an endpoint
// the user or the system chose.
type JudgeModel struct {
	Kind      string        `json:"kind,omitempty"`
	Endpoint  string        `json:"endpoint,omitempty"`
	Model     string        `json:"model,omitempty"`
	Timeout   time.Duration `json:"timeout,omitempty"`
	APIKeyEnv string        `json:"api_key_env,omitempty"`
	// MaxCallsPerDay, when positive, bounds the calls to the model: past
	// it, within a day, the rule-based judge stands in (seed 003's cost
	// policy).
	MaxCallsPerDay int `json:"max_calls_per_day,omitempty"`
	// Pos is where the kind was written, for diagnostics.
	Pos Pos `json:"-"`
}

// IsZero reports a section that chose no judge kind.
func (j JudgeModel) IsZero() bool { return j.Kind == "" }

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// judgeKey decodes one key of the judge: section other than threshold; ok
// is false for a key it does not know.
func (d *decoder) judgeKey(k, v *yaml.Node, j *JudgeModel) (ok bool, err *Error) {
	switch k.Value {
	case "kind":
		s, err := d.strict(v)
		if err != nil {
			return true, err
		}
		if s != JudgeRuleBased && s != JudgeLLM {
			return true, d.errAt(v, fmt.Sprintf("judge kind %q: want %s or %s", s, JudgeRuleBased, JudgeLLM))
		}
		j.Kind, j.Pos = s, d.pos(v)
	case "endpoint":
		s, err := d.strict(v)
		if err != nil {
			return true, err
		}
		if httpURLProblem(s) != "" {
			return true, d.errAt(v, fmt.Sprintf("judge endpoint %q must be an http or https URL, e.g. http://127.0.0.1:11434/v1/chat/completions", s))
		}
		j.Endpoint = s
	case "model":
		s, err := d.strict(v)
		if err != nil {
			return true, err
		}
		if s == "" {
			return true, d.errAt(v, "judge model must not be empty")
		}
		j.Model = s
	case "timeout":
		s, err := d.str(v)
		if err != nil {
			return true, err
		}
		dur, perr := parseDuration(s)
		if perr != nil || dur <= 0 || dur > MaxJudgeTimeout {
			return true, d.errAt(v, fmt.Sprintf("judge timeout %q must be a duration above 0 and at most %ds (e.g. 10s)", s, int(MaxJudgeTimeout.Seconds())))
		}
		j.Timeout = dur
	case "max_calls_per_day":
		n, err := d.integer(v, 1, 1_000_000)
		if err != nil {
			return true, err
		}
		j.MaxCallsPerDay = int(n)
	case "api_key_env":
		s, err := d.strict(v)
		if err != nil {
			return true, err
		}
		if !envName().MatchString(s) {
			return true, d.errAt(v, fmt.Sprintf("judge api_key_env %q must be the name of an environment variable (the key itself never goes in the policy)", s))
		}
		j.APIKeyEnv = s
	default:
		return false, nil
	}
	return true, nil
}

// checkJudge completes a judge: section once all its keys are read: the
// llm-v1 judge needs an endpoint and a model; the other keys mean nothing
// without it.
func (d *decoder) checkJudge(n *yaml.Node, j *JudgeModel) *Error {
	if j.Kind == JudgeLLM || j.Kind == JudgeRuleBased && (j.Endpoint != "" || j.Model != "") {
		switch {
		case j.Endpoint == "":
			return d.errAt(n, "judge kind "+j.Kind+" needs endpoint: (an OpenAI-compatible chat completions URL) to name a model judge")
		case j.Model == "":
			return d.errAt(n, "judge kind "+j.Kind+" needs model: (the model's name at the endpoint) to name a model judge")
		}
		if j.Timeout == 0 {
			j.Timeout = DefaultJudgeTimeout
		}
		return nil
	}
	if j.Endpoint != "" || j.Model != "" || j.Timeout != 0 || j.APIKeyEnv != "" || j.MaxCallsPerDay != 0 {
		return d.errAt(n, "judge endpoint, model, timeout, api_key_env and max_calls_per_day need kind: llm-v1 (or kind: rule-based-v1 with endpoint and model, for a model judge turned on per call)")
	}
	return nil
}

// stackJudge is the judge a stack uses: the system layer's choice when it
// made one, else the user layer's. A project layer cannot choose: the
// model judge sends the commands run here to the endpoint it names.
func stackJudge(layers []*Policy) JudgeModel {
	for _, want := range []Layer{LayerSystem, LayerUser} {
		for _, l := range layers {
			if l.Layer == want && !l.Judge.IsZero() {
				return l.Judge
			}
		}
	}
	return JudgeModel{}
}

// projectJudge reports a project policy's judge kind, which is ignored.
func projectJudge(project *Policy) []Diagnostic {
	if project.Judge.IsZero() {
		return nil
	}
	return []Diagnostic{{Pos: project.Judge.Pos, Severity: SeverityWarning,
		Msg: "judge kind is ignored: a project policy cannot choose the judge (the llm-v1 judge would send the commands run here to an endpoint of the repository's choosing); set it in your user policy"}}
}

// judgeNode writes the judge: section in canonical form (Format).
func judgeNode(threshold float64, writeThreshold bool, j JudgeModel) *yaml.Node {
	plain := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	quoted := func(s string) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
	}
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if writeThreshold {
		n.Content = append(n.Content, plain("threshold"), numNode(formatNumber(threshold)))
	}
	if j.IsZero() {
		return n
	}
	n.Content = append(n.Content, plain("kind"), plain(j.Kind))
	if j.Endpoint != "" {
		n.Content = append(n.Content, plain("endpoint"), quoted(j.Endpoint), plain("model"), quoted(j.Model),
			plain("timeout"), plain(formatDuration(j.Timeout)))
		if j.APIKeyEnv != "" {
			n.Content = append(n.Content, plain("api_key_env"), quoted(j.APIKeyEnv))
		}
		if j.MaxCallsPerDay > 0 {
			n.Content = append(n.Content, plain("max_calls_per_day"), numNode(fmt.Sprint(j.MaxCallsPerDay)))
		}
	}
	return n
}
