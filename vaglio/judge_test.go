package vaglio

import (
	"math"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/shellparse"
)

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name      string
		judge     Judge
		in        Input
		score     float64
		approved  bool
		reason    string // exact when set
		reasonHas string
	}{
		{
			name:   "seed example: intent matches executor",
			in:     Input{Intent: "read my notes in /tmp/n.txt", Command: cmd("fs_read /tmp/n.txt"), Critical: true},
			score:  0.80,
			reason: "approved: score 0.80 (intent matches command)", approved: true,
		},
		{
			name:   "shell command named in intent",
			in:     Input{Intent: "cat my notes in /tmp/n.txt", Command: cmd("cat /tmp/n.txt"), Critical: true},
			score:  0.80,
			reason: "approved: score 0.80 (intent matches command)", approved: true,
		},
		{
			name:   "non-critical bonus",
			in:     Input{Intent: "cat my notes", Command: cmd("cat /tmp/n.txt")},
			score:  0.85,
			reason: "approved: score 0.85 (intent matches command; non-critical)", approved: true,
		},
		{
			name:   "no intent",
			in:     Input{Command: cmd("cat /tmp/n.txt"), Critical: true},
			score:  0.70,
			reason: "approved: score 0.70", approved: true,
		},
		{
			name:      "seed example: traversal lowers the score",
			in:        Input{Command: cmd("cat /tmp/../etc/foo"), Critical: true},
			score:     0.50,
			reasonHas: "possible path traversal ('..' in argument)", approved: true,
		},
		{
			name:      "traversal in a redirect",
			in:        Input{Command: redir(cmd("cat"), "<", "../../x/y"), Critical: true},
			score:     0.50,
			reasonHas: "possible path traversal", approved: true,
		},
		{
			name:     "dots without slash are not traversal",
			in:       Input{Command: cmd("git log main..feature"), Critical: true},
			score:    0.70,
			approved: true,
		},
		{
			name:      "assignment name not an identifier",
			in:        Input{Command: assign(cmd("make"), "1BAD=x"), Critical: true},
			score:     0.60,
			reasonHas: "shape anomaly (assignment name is not an identifier)", approved: true,
		},
		{
			name:     "array and append assignments are identifiers",
			in:       Input{Command: assign(cmd("make"), "A[1]=x", "PATH+=:/opt/bin"), Critical: true},
			score:    0.70,
			approved: true,
		},
		{
			name:      "escape character in a word",
			in:        Input{Command: cmd("printf \x1b[2J"), Critical: true},
			score:     0.60,
			reasonHas: "control character", approved: true,
		},
		{
			name:     "newline in a commit message is fine",
			in:       Input{Command: cmd("git commit -m 'one\ntwo'"), Critical: true},
			score:    0.70,
			approved: true,
		},
		{
			name:     "every penalty at once still passes the default threshold",
			in:       Input{Command: assign(cmd("cat ../x/y"), "9=x"), Critical: true},
			score:    0.40,
			approved: true,
		},
		{
			name:   "seed: threshold 0.99 denies everything",
			judge:  Judge{Threshold: 0.99},
			in:     Input{Intent: "cat my notes", Command: cmd("cat /tmp/n.txt")},
			score:  0.85,
			reason: "judge: score 0.85 < threshold 0.99 (intent matches command; non-critical)",
		},
		{
			name:      "threshold above the score",
			judge:     Judge{Threshold: 0.45},
			in:        Input{Command: assign(cmd("cat ../x/y"), "9=x"), Critical: true},
			score:     0.40,
			reasonHas: "judge: score 0.40 < threshold 0.45 (possible path traversal",
		},
		{
			name:     "score equal to threshold passes",
			judge:    Judge{Threshold: 0.70},
			in:       Input{Command: cmd("ls"), Critical: true},
			score:    0.70,
			approved: true,
		},
		{
			name:     "NaN threshold is the default",
			judge:    Judge{Threshold: math.NaN()},
			in:       Input{Command: cmd("ls"), Critical: true},
			score:    0.70,
			approved: true,
		},
		{
			name:     "word match, not substring",
			in:       Input{Intent: "sort the category list", Command: cmd("cat list"), Critical: true},
			score:    0.70,
			approved: true,
		},
		{
			name:     "token of a hyphenated name",
			in:       Input{Intent: "show the key fingerprint with keygen", Command: cmd("ssh-keygen -lf k.pub"), Critical: true},
			score:    0.80,
			approved: true,
		},
		{
			name:     "short tokens never match",
			in:       Input{Intent: "cp the file", Command: cmd("cp a b"), Critical: true},
			score:    0.70,
			approved: true,
		},
		{
			name:     "dynamic program never matches intent",
			in:       Input{Intent: "run cat", Command: shellparse.Command{Argv: words("@$CMD x"), Dynamic: true}, Critical: true},
			score:    0.70,
			approved: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.judge.Judge(tc.in)
			if v.Score != tc.score || v.Approved != tc.approved || v.JudgeKind != JudgeKindRuleBased {
				t.Fatalf("verdict %+v, want score %.2f approved %v", v, tc.score, tc.approved)
			}
			if tc.approved == (v.BlockedBy != "") {
				t.Fatalf("blocked_by %q with approved %v", v.BlockedBy, v.Approved)
			}
			if !tc.approved && v.BlockedBy != BlockedByJudge {
				t.Fatalf("blocked_by %q, want judge", v.BlockedBy)
			}
			if tc.reason != "" && v.Reason != tc.reason {
				t.Fatalf("reason %q, want %q", v.Reason, tc.reason)
			}
			if !strings.Contains(v.Reason, tc.reasonHas) {
				t.Fatalf("reason %q lacks %q", v.Reason, tc.reasonHas)
			}
		})
	}
}

// TestJudgeIntentRaisesScore is seed 003's judge_intent_menziona_executor:
// an intent naming the command scores higher than a generic one.
func TestJudgeIntentRaisesScore(t *testing.T) {
	var j Judge
	c := cmd("grep TODO main.go")
	with := j.Judge(Input{Intent: "grep for TODO markers", Command: c})
	without := j.Judge(Input{Intent: "look around", Command: c})
	if with.Score <= without.Score {
		t.Fatalf("intent match %.2f <= generic %.2f", with.Score, without.Score)
	}
}

// TestSecurityJudgeReasonNeverQuotesArguments: the judge's reason goes to
// the log as is, so it must not carry argument values.
func TestSecurityJudgeReasonNeverQuotesArguments(t *testing.T) {
	const secret = "PASSWORD_segreto_31337"
	v := Judge{Threshold: 0.99}.Judge(Input{
		Intent:  "log in with " + secret,
		Command: assign(cmd("mysql -p"+secret+" --password="+secret+" ../"+secret), "1"+secret+"=x"),
	})
	if strings.Contains(v.Reason, "segreto") {
		t.Fatalf("reason quotes a value: %q", v.Reason)
	}
}

// TestSecurityJudgeScoreBounded: whatever the input, the score stays in
// [0,1] and a denial always says who denied.
func TestSecurityJudgeScoreBounded(t *testing.T) {
	for _, th := range []float64{-1, 0, 0.3, 0.5, 1, 2, math.Inf(1), math.Inf(-1), math.NaN()} {
		for _, in := range []Input{
			{},
			{Command: cmd("x ../../..")},
			{Intent: "x", Command: assign(cmd("\x00 ../.."), "-=1")},
		} {
			v := Judge{Threshold: th}.Judge(in)
			if v.Score < 0 || v.Score > 1 || math.IsNaN(v.Score) {
				t.Errorf("threshold %v: score %v", th, v.Score)
			}
			if !v.Approved && v.BlockedBy != BlockedByJudge {
				t.Errorf("threshold %v: denied without blocked_by: %+v", th, v)
			}
		}
	}
	if v := (Judge{Threshold: 2}).Judge(Input{Command: cmd("ls")}); v.Approved {
		t.Error("threshold above 1 approved")
	}
}

// TestApprovedReasons: the written-out reasons of approved rule-based
// verdicts are the ones Verdict builds, and a command judged through
// them gets the verdict Verdict gives, at any threshold.
func TestApprovedReasons(t *testing.T) {
	for m := 0; m < 8; m++ {
		intent, trav, nonCritical := m&1 != 0, m&2 != 0, m&4 != 0
		score := baseScore
		if intent {
			score += intentBonus
		}
		if trav {
			score -= traversalPenalty
		}
		if nonCritical {
			score += nonCriticalBonus
		}
		detail := ruleDetail(intent, trav, "", nonCritical)
		if got, want := approvedReason(intent, trav, nonCritical), "approved: score "+twoDecimals(roundScore(score))+detail; got != want {
			t.Errorf("intent %v traversal %v non-critical %v: %q, want %q", intent, trav, nonCritical, got, want)
		}
		line := "cat x"
		if trav {
			line = "cat ../x/y"
		}
		in := Input{Command: cmd(line), Critical: !nonCritical}
		if intent {
			in.Intent = "show it with cat"
		}
		for _, th := range []float64{0, 0.3, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 1, math.NaN()} {
			j := Judge{Threshold: th}
			if got, want := j.Judge(in), j.Verdict(score, detail, JudgeKindRuleBased); got != want {
				t.Errorf("%q threshold %v: %+v, want %+v", line, th, got, want)
			}
		}
	}
}
