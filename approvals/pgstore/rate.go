package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
)

// tokenSlack absorbs floating-point error in refills, as in the SQLite
// store.
const tokenSlack = 1e-9

// refill is the bucket's content at the server time in $3 for capacity
// $2 and refill $4 tokens a second: what it held plus what dripped in
// since updated_at, never more than capacity; a clock that went back adds
// nothing.
var refill = `LEAST($2::float8, rate_buckets.tokens + GREATEST(0, EXTRACT(EPOCH FROM (` + at(3) + ` - rate_buckets.updated_at))::float8) * $4::float8)`

// TakeToken takes one token from the bucket named key in one atomic
// UPSERT, on the server's clock: of any number of concurrent takers on
// any hosts, no more than the bucket holds succeed. A new bucket is full.
func (s *Store) TakeToken(ctx context.Context, key string, capacity, refillPerMinute float64, now time.Time) (bool, float64, error) {
	switch {
	case key == "":
		return false, 0, errors.New("take token: empty bucket key")
	case math.IsNaN(capacity) || math.IsInf(capacity, 0) || capacity < 1:
		return false, 0, fmt.Errorf("take token %s: capacity %v is not a finite number of at least 1", key, capacity)
	case math.IsNaN(refillPerMinute) || math.IsInf(refillPerMinute, 0) || refillPerMinute < 0:
		return false, 0, fmt.Errorf("take token %s: refill %v per minute is not a finite number of at least 0", key, refillPerMinute)
	}
	perSec := refillPerMinute / 60
	off := s.off(now)
	var remaining float64
	err := s.pool.QueryRow(ctx, `INSERT INTO rate_buckets (key, tokens, updated_at, host)
		VALUES ($1, $2::float8 - 1, `+at(3)+`, $6)
		ON CONFLICT (key) DO UPDATE SET
			tokens = GREATEST(0.0, `+refill+` - 1),
			updated_at = GREATEST(rate_buckets.updated_at, `+at(3)+`),
			host = $6
		WHERE `+refill+` >= 1 - $5::float8
		RETURNING tokens`, key, capacity, off, perSec, tokenSlack, s.host).Scan(&remaining)
	switch {
	case err == nil:
		return true, remaining, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return false, 0, fmt.Errorf("take token %s: %w", key, err)
	}
	var held float64
	if err := s.pool.QueryRow(ctx, `SELECT `+refill+` FROM rate_buckets WHERE key = $1`,
		key, capacity, off, perSec).Scan(&held); err != nil {
		return false, 0, fmt.Errorf("take token %s: %w", key, err)
	}
	return false, held, nil
}
