package gate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/sandbox"
)

// TestRunFinishedSummarizesTheSandbox: run.finished says in one line how
// the command was confined (sandbox.Applied.Summary).
func TestRunFinishedSummarizesTheSandbox(t *testing.T) {
	f := newSandboxFixture(t, "rules:"+sandboxRules, "")
	f.g.cfg.Probe = func() sandbox.Status { return sandbox.Status{}.WithABI(0) }
	if _, err := f.g.Run(context.Background(), f.req("true"), Stdio{}, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, k := range f.audit.kinds {
		if k == "run.finished" {
			if got := fmt.Sprint(f.audit.events[i]["sandbox"]); !strings.Contains(got, "summary=unconfined (Landlock ABI 0)") {
				t.Errorf("run.finished sandbox %s lacks the summary", got)
			}
			return
		}
	}
	t.Fatalf("no run.finished in %q", f.audit.kinds)
}
