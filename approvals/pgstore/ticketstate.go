package pgstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
)

var _ approvals.TicketState = (*Store)(nil)

// UnspentTicket implements approvals.TicketState: whether the approval
// with this token issued a ticket bound to requestKey for this host that
// is neither spent nor expired, on the server's clock.
func (s *Store) UnspentTicket(ctx context.Context, requestKey, approvalToken string, now time.Time) (bool, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT COUNT(*) FROM tickets
		WHERE request_key = $1 AND host = $2 AND spent_at IS NULL AND approval_token = $3 AND expires_at > `+at(4),
		requestKey, s.host, strings.ToLower(strings.TrimSpace(approvalToken)), s.off(now)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("ticket state: %w", err)
	}
	return n > 0, nil
}
