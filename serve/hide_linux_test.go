package serve

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSecurityHideMemory: after HideMemory the process is not dumpable,
// so the user's other processes cannot read its memory through /proc or
// ptrace. (Run in a child: it changes the whole process.)
func TestSecurityHideMemory(t *testing.T) {
	if os.Getenv("MNEMOS_TEST_HIDE_MEMORY") == "1" {
		if err := HideMemory(); err != nil {
			t.Fatal(err)
		}
		d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		if err != nil || d != 0 {
			t.Fatalf("dumpable = %d, %v", d, err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecurityHideMemory$", "-test.v")
	cmd.Env = append(os.Environ(), "MNEMOS_TEST_HIDE_MEMORY=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("the child: %v\n%s", err, out)
	}
}
