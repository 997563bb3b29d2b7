package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSecurityOwnRequestRefusedOnTheCommandLine: on the command line, the
// person answers an agent's requests (approvals approve with the agent's
// --channel, approvals answer from a bridge) as themselves: terminal:dev,
// bridge:dev, recorded so; a request made as that answering identity is
// never approved by it, and says why.
func TestSecurityOwnRequestRefusedOnTheCommandLine(t *testing.T) {
	w := newWatchEnv(t)
	idOf := regexp.MustCompile(`approval required: ([a-z2-7]{26})`)
	ask := func(channel, file string) string {
		t.Helper()
		out, code := w.run(nil, "--channel", channel, "run", "--", "touch", file)
		m := idOf.FindStringSubmatch(out)
		if code != exitApproval || m == nil {
			t.Fatalf("%s: touch %s exited %d:\n%s", channel, file, code, out)
		}
		return m[1]
	}

	// The person answers Claude Code's request at the terminal.
	id := ask("claude-code", "a.txt")
	if out, code := w.run(nil, "--channel", "claude-code", "approvals", "approve", id); code != 0 {
		t.Fatalf("approve exited %d:\n%s", code, out)
	}
	if out, _ := w.run(nil, "approvals", "show", "--json", id); !strings.Contains(out, `"decision_by":{"channel":"terminal","sender":"dev"}`) {
		t.Fatalf("decided by:\n%s", out)
	}
	if out, code := w.run(nil, "--channel", "claude-code", "run", "--", "touch", "a.txt"); code != 0 {
		t.Fatalf("the approved rerun exited %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(w.ws, "a.txt")); err != nil {
		t.Fatal(err)
	}
	// And from a bridge.
	id = ask("claude-code", "b.txt")
	if out, code := w.run(nil, "--channel", "claude-code", "approvals", "answer", "approve:"+id); code != 0 {
		t.Fatalf("answer exited %d:\n%s", code, out)
	}
	if out, _ := w.run(nil, "approvals", "show", "--json", id); !strings.Contains(out, `"decision_by":{"channel":"bridge","sender":"dev"}`) {
		t.Fatalf("decided by:\n%s", out)
	}

	// A request made as the answering identity itself is refused there.
	for _, tc := range []struct{ channel, answer string }{{"terminal", "approve"}, {"bridge", "answer"}} {
		id := ask(tc.channel, tc.channel+".txt")
		args := []string{"--channel", tc.channel, "approvals", "approve", id}
		if tc.answer == "answer" {
			args = []string{"--channel", tc.channel, "approvals", "answer", "approve:" + id}
		}
		out, code := w.run(nil, args...)
		if code == 0 || !strings.Contains(out, "mnemos: error: a request is never approved by its own requester's identity: "+tc.channel+":dev asked") {
			t.Errorf("%s approving its own request exited %d:\n%s", tc.channel, code, out)
		}
		if out, _ := w.run(nil, "approvals", "show", "--json", id); !strings.Contains(out, `"status":"pending"`) {
			t.Errorf("after %s's refused approval:\n%s", tc.channel, out)
		}
	}
}
