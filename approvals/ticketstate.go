package approvals

import (
	"context"
	"fmt"
	"time"
)

// TicketState is a Backend that can tell whether an approval's one-shot
// ticket is still waiting to be spent: the gate says, on a request that
// asks again, that an approval given for the same words went unused
// because what they run changed (package.json, a makefile, the program
// PATH finds). Both stores implement it.
type TicketState interface {
	// UnspentTicket reports whether the approval with this token issued a
	// ticket bound to requestKey that is neither spent nor expired at now.
	UnspentTicket(ctx context.Context, requestKey, approvalToken string, now time.Time) (bool, error)
}

var _ TicketState = (*Store)(nil)

// UnspentTicket implements TicketState.
func (s *Store) UnspentTicket(ctx context.Context, requestKey, approvalToken string, now time.Time) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM tickets
		WHERE request_key = ? AND spent_at IS NULL AND approval_token = ? AND expires_at > ?`,
		requestKey, normToken(approvalToken), formatTime(now)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("ticket state: %w", err)
	}
	return n > 0, nil
}
