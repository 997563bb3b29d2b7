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
