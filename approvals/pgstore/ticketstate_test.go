package pgstore_test

import (
	"testing"

	"github.com/mnemos-dev/mnemos/approvals/approvalstest"
)

func TestTicketState(t *testing.T) {
	_, dsn := newDB(t)
	approvalstest.TicketState(t, open(t, dsn, "host-a"))
}
