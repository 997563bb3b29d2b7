package approvals

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"
)

// tokenSlack absorbs floating-point error in refills: a bucket this close
// below a whole token holds one (200 s at 0.3 per minute must refill one
// token, not 0.9999999999999999).
const tokenSlack = 1e-9

// bucketNanos is updated_at as integer nanoseconds since the Unix epoch,
// read from the fixed-width text timeLayout writes: whole seconds from the
// first 19 characters, nanoseconds from the 9 digits after the point.
// Integer arithmetic keeps elapsed time exact.
const bucketNanos = `(unixepoch(substr(rate_buckets.updated_at, 1, 19)) * 1000000000
	+ CAST(substr(rate_buckets.updated_at, 21, 9) AS INTEGER))`

// bucketRefill is the bucket's content at ?4 (nanoseconds) for capacity ?2
// and rate ?5 (tokens per nanosecond): what it held plus what has dripped
// in since updated_at, never more than capacity. A clock that went back
// adds nothing.
const bucketRefill = `MIN(?2, rate_buckets.tokens + MAX(0, ?4 - ` + bucketNanos + `) * ?5)`

// takeTokenSQL takes one token in one statement. A new bucket starts full
// and gives its first token at once. An existing one is refilled and, only
// when it then holds a whole token, loses it; updated_at never moves back.
// When it holds less, the DO UPDATE's WHERE leaves the row untouched and
// nothing is returned: the bucket keeps filling from its old updated_at,
// which, below capacity, is the same as storing the refill.
const takeTokenSQL = `INSERT INTO rate_buckets (key, tokens, updated_at) VALUES (?1, ?2 - 1, ?3)
	ON CONFLICT (key) DO UPDATE SET
		tokens = MAX(0.0, ` + bucketRefill + ` - 1),
		updated_at = MAX(rate_buckets.updated_at, ?3)
	WHERE ` + bucketRefill + ` >= 1 - ?6
	RETURNING tokens`

// TakeToken takes one token from the rate bucket named key, which holds
// at most capacity tokens and refills continuously at refillPerMinute. The
// bucket lives in the database, so every process shares it; the take is
// one atomic UPSERT, so of any number of concurrent callers at the same
// instant no more than the bucket holds succeed. A bucket seen for the
// first time is full.
//
// ok reports whether a token was taken; remaining is what the bucket
// holds afterwards (fractional: 0.25 means a quarter of the refill period
// until the next token). The key is the caller's choice, for example
// "cli:alice:network:http". capacity must be at least 1 and
// refillPerMinute not negative (0: the bucket never refills); both finite.
// Changing them for an existing key applies from the next call.
func (s *Store) TakeToken(ctx context.Context, key string, capacity, refillPerMinute float64, now time.Time) (ok bool, remaining float64, err error) {
	switch {
	case key == "":
		return false, 0, errors.New("take token: empty bucket key")
	case math.IsNaN(capacity) || math.IsInf(capacity, 0) || capacity < 1:
		return false, 0, fmt.Errorf("take token %s: capacity %v is not a finite number of at least 1", key, capacity)
	case math.IsNaN(refillPerMinute) || math.IsInf(refillPerMinute, 0) || refillPerMinute < 0:
		return false, 0, fmt.Errorf("take token %s: refill %v per minute is not a finite number of at least 0", key, refillPerMinute)
	}
	perNano := refillPerMinute / float64(time.Minute)
	err = s.db.QueryRowContext(ctx, takeTokenSQL,
		key, capacity, formatTime(now), now.UnixNano(), perNano, tokenSlack).Scan(&remaining)
	switch {
	case err == nil:
		return true, remaining, nil
	case !errors.Is(err, sql.ErrNoRows):
		return false, 0, fmt.Errorf("take token %s: %w", key, err)
	}
	// Refused: report what the bucket holds now (for a retry hint; it may
	// have changed since, which does not matter for a hint).
	var held sql.NullFloat64
	err = s.db.QueryRowContext(ctx, `SELECT `+bucketRefill+` FROM rate_buckets WHERE key = ?1`,
		key, capacity, nil, now.UnixNano(), perNano).Scan(&held)
	if err != nil {
		return false, 0, fmt.Errorf("take token %s: %w", key, err)
	}
	if !held.Valid {
		return false, 0, fmt.Errorf("take token %s: bad bucket timestamp in state database", key)
	}
	return false, held.Float64, nil
}
