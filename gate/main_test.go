package gate

import (
	"os"
	"testing"

	"github.com/mnemos-dev/mnemos/sandbox"
)

// TestMain lets the test binary act as the sandbox's helper, as the mnemos
// binary does: runs without CAP_SYS_ADMIN start it to build their view.
func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args[0]) {
		os.Exit(sandbox.RunHelper(os.Args))
	}
	os.Exit(m.Run())
}
