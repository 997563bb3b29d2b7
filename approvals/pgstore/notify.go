package pgstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemos-dev/mnemos/approvals"
)

var _ approvals.Waiter = (*Store)(nil)

// listener is the connection a waiting process LISTENs on, apart from
// the pool (a listening connection cannot be shared).
type listener struct {
	mu   sync.Mutex
	conn *pgx.Conn
}

// WaitChange returns when a notification for token (for any request
// when token is empty) arrives on channel NotifyChannel or max has
// passed. The first call connects and LISTENs,
// then returns at once: notifications sent after that are kept by the
// connection until the next call reads them.
func (s *Store) WaitChange(ctx context.Context, token string, max time.Duration) error {
	s.listen.mu.Lock()
	defer s.listen.mu.Unlock()
	if s.listen.conn == nil {
		c, err := pgx.ConnectConfig(ctx, s.cfg)
		if err != nil {
			return err
		}
		if _, err := c.Exec(ctx, `LISTEN `+NotifyChannel); err != nil {
			c.Close(context.Background())
			return err
		}
		s.listen.conn = c
		return nil
	}
	token = normToken(token)
	wctx, cancel := context.WithTimeout(ctx, max)
	defer cancel()
	for {
		n, err := s.listen.conn.WaitForNotification(wctx)
		switch {
		case err == nil:
			if token == "" || n.Payload == token {
				return nil
			}
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded) || wctx.Err() != nil:
			// The connection is usable after a cancelled wait only if
			// pgx says so; otherwise listen anew next time.
			if s.listen.conn.IsClosed() {
				s.listen.conn = nil
			}
			return nil
		default:
			s.listen.conn.Close(context.Background())
			s.listen.conn = nil
			return err
		}
	}
}

func (s *Store) closeListener() {
	s.listen.mu.Lock()
	defer s.listen.mu.Unlock()
	if s.listen.conn != nil {
		s.listen.conn.Close(context.Background())
		s.listen.conn = nil
	}
}
