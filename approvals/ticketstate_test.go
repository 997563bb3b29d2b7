package approvals_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/approvals/approvalstest"
)

func TestTicketState(t *testing.T) {
	s, err := approvals.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	approvalstest.TicketState(t, s)
}
