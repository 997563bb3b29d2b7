package approvals_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/approvals/approvalstest"
)

// TestConformance runs the backend conformance suite on the SQLite store;
// package pgstore runs the same suite on PostgreSQL.
func TestConformance(t *testing.T) {
	approvalstest.Run(t, func(t *testing.T) approvalstest.Opener {
		path := filepath.Join(t.TempDir(), "state", "mnemos.db")
		return func(t testing.TB) approvals.Backend {
			s, err := approvals.Open(context.Background(), path)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	})
}
