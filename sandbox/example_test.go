package sandbox_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/mnemos-dev/mnemos/sandbox"
)

// A command confined to its workspace: it writes there, and nowhere else.
func ExampleStart() {
	home, _ := os.MkdirTemp("", "home")
	defer os.RemoveAll(home)
	ws := filepath.Join(home, "project")
	os.Mkdir(ws, 0o755)

	spec, err := sandbox.DefaultSpec(sandbox.Options{
		Workspace: ws,
		Home:      home,
		Protected: []string{filepath.Join(home, ".config", "mnemos")},
		Secrets:   sandbox.DefaultSecrets(home),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	cmd := exec.Command("sh", "-c", `echo hello > greeting && cat greeting`)
	cmd.Dir = ws
	var out bytes.Buffer
	cmd.Stdout = &out
	applied, err := sandbox.Start(cmd, spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	cmd.Wait()
	fmt.Print(out.String())
	_ = applied.Summary() // "confined by Landlock ABI 7: files, tcp, scoped, seccomp, ..." for the audit log
	// Output: hello
}

// The hint mnemos prints when a confined command was refused a path.
func ExampleDeniedHint() {
	spec := sandbox.Spec{ReadExec: []string{"/usr"}, ReadWrite: []string{"/tmp"}}
	fmt.Println(sandbox.DeniedHint(spec, "/usr/bin"))
	// Output: /usr/bin is read-only in the sandbox; to let commands change it, add `sandbox: {write: [/usr/bin]}` to the policy
}

// What mnemos prints after a confined command failed: which of the paths
// and ports it named the sandbox refuses, and the policy line that grants
// each.
func ExampleRefusals() {
	spec := sandbox.Spec{ReadExec: []string{"/usr"}, Network: true, ConnectPorts: []uint16{443}}
	applied := sandbox.Applied{Enforced: true, FS: true, Net: true}
	for _, line := range sandbox.Refusals(spec, applied, "", []sandbox.Need{
		{Path: "/usr/share/report.txt", Write: true},
		{Path: "/usr/bin"}, // granted: nothing to say
		{Host: "example.com", Port: 8443},
	}) {
		fmt.Println(line)
	}
	// Output:
	// the sandbox does not let commands write /usr/share/report.txt; to allow it, add to the policy: sandbox: {write: [/usr/share]}
	// the sandbox does not let commands connect to example.com:8443: port 8443 is not among its TCP ports; to allow it, add to the policy: sandbox: {ports: [443, 8443]}
}

// A command watched: each change it is about to make to files is shown
// first, here printed; a journal would keep what the change destroys, and
// an error from the handler fails the call.
func ExampleStartWatched() {
	home, _ := os.MkdirTemp("", "home")
	defer os.RemoveAll(home)
	ws := filepath.Join(home, "project")
	os.Mkdir(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "note.txt"), []byte("draft\n"), 0o644)

	spec, err := sandbox.DefaultSpec(sandbox.Options{Workspace: ws, Home: home})
	if err != nil {
		fmt.Println(err)
		return
	}
	spec.Watch = true
	st := sandbox.Probe()
	pre := sandbox.Prepare(spec, st) // may start while the decision is made
	cmd := exec.Command("sh", "-c", `echo final > note.txt && rm note.txt`)
	cmd.Dir = ws
	applied, watch, err := sandbox.StartWatched(cmd, spec, st, pre, func(c sandbox.Change) error {
		rel, _ := filepath.Rel(ws, c.Path)
		fmt.Println(c.Kind, rel) // write note.txt, then unlink note.txt
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	cmd.Wait()
	sandbox.ReapLeftovers() // in a process that called BecomeSubreaper
	stats := watch.Close()  // nil-safe: a run not watched has nothing to close
	_, _ = applied.Watched, stats.Changes
}
