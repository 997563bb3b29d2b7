package main

import (
	"encoding/json"
	"testing"
)

// TestAuditTailShowsSandbox: audit tail's text line for run.finished names
// the sandbox, the files moved aside and the processes stopped, escaped.
func TestAuditTailShowsSandbox(t *testing.T) {
	var attrs map[string]any
	src := `{"argv":["make"],"exit_status":0,"sandbox":{"summary":"files, net","enforced":true,
		"quarantined":[["/w/.envrc","/w/.mnemos-quarantine/.envrc"]],"reaped":["pid 42 sleep\u001b[2K"]}}`
	if err := json.Unmarshal([]byte(src), &attrs); err != nil {
		t.Fatal(err)
	}
	want := `exit_status=0  argv=make  sandbox=files, net  quarantined=/w/.envrc -> /w/.mnemos-quarantine/.envrc  reaped=pid 42 sleep\x1b[2K`
	if got := summarize("run.finished", attrs); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := summarize("run.started", attrs); got != "exit_status=0  argv=make" {
		t.Errorf("run.started: %s", got)
	}
}
