package vaglio

import (
	"math"
	"strconv"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// Which phase blocked a verdict, and which judge gave the score.
const (
	BlockedByGuard     = "guard"
	BlockedByJudge     = "judge"
	JudgeKindRuleBased = "rule-based-v1"
	JudgeKindLLM       = "llm-v1"
)

// DefaultThreshold is the judge's threshold when none is configured.
const DefaultThreshold = 0.30

// The rule-based judge's weights (seed 003, ch. 4).
const (
	baseScore        = 0.70
	intentBonus      = 0.10
	traversalPenalty = 0.20
	shapePenalty     = 0.10
	nonCriticalBonus = 0.05
)

// Judge is phase 2: a score in [0,1] for how well a command fits what the
// agent said it was doing, against a threshold. It runs only on what the
// guard and the policy let through; it can deny, never allow.
type Judge struct {
	// Threshold below which the judge denies. Zero (or anything not above
	// zero, or NaN) means DefaultThreshold.
	Threshold float64
}

// Input is what the judge looks at.
type Input struct {
	// Intent is the agent's stated reason for the command; it may be empty.
	Intent  string
	Command shellparse.Command
	// Critical is the command's capability's critical flag (fs:write,
	// code:exec, mail:send). A non-critical command earns a small bonus.
	Critical bool
}

// Verdict is the outcome of one vaglio phase.
type Verdict struct {
	Approved bool    `json:"approved"`
	Score    float64 `json:"score"`
	// Reason is one line for a person: "approved: score 0.80 (intent
	// matches command)", "judge: score 0.20 < threshold 0.30 (...)",
	// "guard: ...".
	Reason string `json:"reason"`
	// BlockedBy is BlockedByGuard, BlockedByJudge, or "" when approved.
	BlockedBy string `json:"blocked_by,omitempty"`
	JudgeKind string `json:"judge_kind"`
	// Rule is, for a guard block, the check and pattern that matched
	// ("forbidden-path /etc/shadow"), without the matched word.
	Rule string `json:"rule,omitempty"`
}

func (j Judge) threshold() float64 {
	t := j.Threshold
	if math.IsNaN(t) || t <= 0 {
		return DefaultThreshold
	}
	return t
}

// The rule-based judge's notes, as its reasons name them.
const (
	noteIntent      = "intent matches command"
	noteTraversal   = "possible path traversal ('..' in argument)"
	noteNonCritical = "non-critical"
)

// Judge scores one command. The reason names every adjustment and never
// quotes an argument, so it is safe to log.
func (j Judge) Judge(in Input) Verdict {
	score := baseScore
	intent := intentMatches(in.Intent, in.Command.Name())
	if intent {
		score += intentBonus
	}
	trav := traversal(in.Command)
	if trav {
		score -= traversalPenalty
	}
	what := shapeAnomaly(in.Command)
	if what != "" {
		score -= shapePenalty
	}
	if !in.Critical {
		score += nonCriticalBonus
	}
	if what == "" {
		// Without a shape anomaly the reason is one of a few fixed texts:
		// most commands are approved without building one.
		if s := roundScore(score); s >= j.threshold() {
			return Verdict{Approved: true, Score: s, Reason: approvedReason(intent, trav, !in.Critical), JudgeKind: JudgeKindRuleBased}
		}
	}
	return j.Verdict(score, ruleDetail(intent, trav, what, !in.Critical), JudgeKindRuleBased)
}

// ruleDetail is the rule-based judge's detail: its notes, in order, in
// parentheses.
func ruleDetail(intent, trav bool, shape string, nonCritical bool) string {
	var notesBuf [4]string
	notes := notesBuf[:0]
	if intent {
		notes = append(notes, noteIntent)
	}
	if trav {
		notes = append(notes, noteTraversal)
	}
	if shape != "" {
		notes = append(notes, "shape anomaly ("+shape+")")
	}
	if nonCritical {
		notes = append(notes, noteNonCritical)
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, "; ") + ")"
}

// approvedReason is the reason of an approved rule-based verdict without a
// shape anomaly: "approved: score " + twoDecimals(score) + ruleDetail(...),
// written out (TestApprovedReasons checks every one).
func approvedReason(intent, trav, nonCritical bool) string {
	switch {
	case !intent && !trav && !nonCritical:
		return "approved: score 0.70"
	case intent && !trav && !nonCritical:
		return "approved: score 0.80 (" + noteIntent + ")"
	case !intent && trav && !nonCritical:
		return "approved: score 0.50 (" + noteTraversal + ")"
	case intent && trav && !nonCritical:
		return "approved: score 0.60 (" + noteIntent + "; " + noteTraversal + ")"
	case !intent && !trav && nonCritical:
		return "approved: score 0.75 (" + noteNonCritical + ")"
	case intent && !trav && nonCritical:
		return "approved: score 0.85 (" + noteIntent + "; " + noteNonCritical + ")"
	case !intent && trav && nonCritical:
		return "approved: score 0.55 (" + noteTraversal + "; " + noteNonCritical + ")"
	default:
		return "approved: score 0.65 (" + noteIntent + "; " + noteTraversal + "; " + noteNonCritical + ")"
	}
}

// roundScore clamps a score to [0,1] and rounds it to hundredths; NaN
// counts as 0.
func roundScore(score float64) float64 {
	if math.IsNaN(score) {
		score = 0
	}
	return math.Round(math.Max(0, math.Min(1, score))*100) / 100
}

// Verdict compares a score from any judge with the threshold. The score is
// clamped to [0,1] and rounded to hundredths (NaN counts as 0); detail,
// when not empty, is appended to the reason as written (" (...)").
func (j Judge) Verdict(score float64, detail, kind string) Verdict {
	score = roundScore(score)
	t := j.threshold()
	if score < t {
		return Verdict{
			Score:     score,
			Reason:    "judge: score " + twoDecimals(score) + " < threshold " + twoDecimals(t) + detail,
			BlockedBy: BlockedByJudge,
			JudgeKind: kind,
		}
	}
	return Verdict{
		Approved:  true,
		Score:     score,
		Reason:    "approved: score " + twoDecimals(score) + detail,
		JudgeKind: kind,
	}
}

// twoDecimals formats a score as %.2f does. A score is a whole number of
// hundredths from 0 to 1, written out directly.
func twoDecimals(v float64) string {
	if k := math.Round(v * 100); v >= 0 && v <= 1 && k/100 == v && !math.Signbit(v) {
		n := int(k)
		return string([]byte{byte('0' + n/100), '.', byte('0' + n/10%10), byte('0' + n%10)})
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// intentMatches reports whether the intent mentions a token of at least
// three characters of the command name split on separators ("git" in
// "commit with git", "keygen" for ssh-keygen). Words are compared whole and
// without case.
func intentMatches(intent, name string) bool {
	if intent == "" || name == "" {
		return false
	}
	words := strings.FieldsFunc(strings.ToLower(intent), notAlnum)
	for _, tok := range strings.FieldsFunc(strings.ToLower(name), notAlnum) {
		if len(tok) < 3 {
			continue
		}
		for _, w := range words {
			if w == tok {
				return true
			}
		}
	}
	return false
}

func notAlnum(r rune) bool {
	return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r > 0x7f)
}

// traversal reports an argument or redirect target holding ".." together
// with "/".
func traversal(cmd shellparse.Command) bool {
	for i := 1; i < len(cmd.Argv); i++ {
		if a := cmd.Argv[i].Value; strings.Contains(a, "..") && strings.Contains(a, "/") {
			return true
		}
	}
	for _, r := range cmd.Redirects {
		v := r.Target.Value
		if r.Op != "<<" && r.Op != "<<-" && r.Op != "<<<" && strings.Contains(v, "..") && strings.Contains(v, "/") {
			return true
		}
	}
	return false
}

// shapeAnomaly names an assignment whose name is not a shell identifier, or
// an argv word holding control characters (other than tab and newline).
func shapeAnomaly(cmd shellparse.Command) string {
	for _, a := range cmd.Assigns {
		name, _, _ := strings.Cut(a, "=")
		name = strings.TrimSuffix(name, "+")
		if i := strings.IndexByte(name, '['); i > 0 && strings.HasSuffix(name, "]") {
			name = name[:i] // an array element
		}
		if !isIdentifier(name) {
			return "assignment name is not an identifier"
		}
	}
	for _, w := range cmd.Argv {
		for i := 0; i < len(w.Value); i++ {
			if c := w.Value[i]; (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f {
				return "control character in argument"
			}
		}
	}
	return ""
}

func isIdentifier(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}
