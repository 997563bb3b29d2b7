package approvals

import (
	"context"
	"time"

	"github.com/mnemos-dev/mnemos/policy"
)

// Backend is the state mnemos keeps between commands: pending requests and
// their tickets, grants, rate buckets and session rules. [Store] keeps it
// in one SQLite file per user (the default); package approvals/pgstore
// keeps it in a PostgreSQL database several machines share. Both pass the
// conformance suite in approvals/approvalstest.
//
// Every implementation promises what the suite checks:
//
//   - a ticket is spent by one conditional UPDATE: of any number of
//     concurrent spenders, in one process or many, one succeeds;
//   - a grant's max_uses is exact under concurrency, by the same means;
//   - every TTL and expiry is compared in SQL, at the time of the query,
//     on the database's clock (the caller's now is the time for SQLite;
//     a shared server trusts its own clock over a host's);
//   - Resolve and Cancel make the four checks in order (unknown token,
//     already resolved, expired, the answer is not for the requester), and
//     an expired request stays expired although an error is returned;
//   - an answer resolves only the requests of the identity it is for
//     (ResolveOptions.For), and an approval never comes from the
//     requester's own identity (CheckAnswerer, ErrOwnRequest);
//   - no grant is recorded or found for a capability whose approval is
//     always, and none whose target covers everything.
//
// The times a caller passes (now, since, an expiry) are its clock's; an
// implementation on a shared server reads them as offsets from the host's
// own clock and applies them to the server's.
type Backend interface {
	policy.GrantChecker

	// CreatePending parks a request and returns it with a fresh token.
	CreatePending(ctx context.Context, n NewPending, now time.Time, ttl time.Duration) (Pending, error)
	// FindOpen returns the newest open request with this key.
	FindOpen(ctx context.Context, requestKey string, now time.Time) (Pending, bool, error)
	// RecentRejection returns the latest answer to this key when it is a
	// rejection given at or after since.
	RecentRejection(ctx context.Context, requestKey string, since time.Time) (Pending, bool, error)
	// Get returns a request by token, or ErrUnknownToken.
	Get(ctx context.Context, token string) (Pending, error)
	// List returns requests newest first.
	List(ctx context.Context, o ListOptions, now time.Time) ([]Pending, error)
	// Resolve approves or rejects a request (the four checks, in order).
	Resolve(ctx context.Context, token string, d Decision, by Identity, now time.Time, o ResolveOptions) (Pending, error)
	// Cancel withdraws a request on its requester's word.
	Cancel(ctx context.Context, token string, by Identity, reason string, now time.Time) (Pending, error)
	// SpendTicket spends one ticket bound to requestKey, atomically.
	SpendTicket(ctx context.Context, requestKey string, now time.Time) (approvalToken string, ok bool, err error)
	// CleanupExpired marks requests past their expiry expired and returns
	// them, oldest first.
	CleanupExpired(ctx context.Context, now time.Time) ([]Pending, error)
	// Recurrence counts the identity's requests of a capability class.
	Recurrence(ctx context.Context, channel, sender, capabilityClass string) (int, error)

	// RecordGrant records a territory concession.
	RecordGrant(ctx context.Context, k policy.GrantKey, o GrantOptions, now time.Time) (policy.Grant, error)
	// SpendGrant counts one use of a grant, atomically.
	SpendGrant(ctx context.Context, id int64, now time.Time) (GrantRecord, bool, error)
	// ListGrants returns grants newest first.
	ListGrants(ctx context.Context, f GrantFilter, now time.Time) ([]policy.Grant, error)
	// ListGrantRecords is ListGrants with the bookkeeping.
	ListGrantRecords(ctx context.Context, f GrantFilter, now time.Time) ([]GrantRecord, error)
	// RevokeGrant revokes a grant.
	RevokeGrant(ctx context.Context, id int64, now time.Time) (policy.Grant, bool, error)
	// PruneGrants revokes grants unused for unusedFor.
	PruneGrants(ctx context.Context, unusedFor time.Duration, now time.Time) ([]policy.Grant, error)

	// TakeToken takes one token from a rate bucket, atomically.
	TakeToken(ctx context.Context, key string, capacity, refillPerMinute float64, now time.Time) (ok bool, remaining float64, err error)

	// RecordSessionRule records a session rule.
	RecordSessionRule(ctx context.Context, r SessionRule, now time.Time) (SessionRule, error)
	// ActiveSessionRules returns the session rules that may apply.
	ActiveSessionRules(ctx context.Context, channel, sender, session string, now time.Time) ([]SessionRule, error)
	// ListSessionRules returns session rules newest first.
	ListSessionRules(ctx context.Context, f GrantFilter, now time.Time) ([]SessionRule, error)
	// RevokeSessionRule ends a session rule.
	RevokeSessionRule(ctx context.Context, id int64, now time.Time) (SessionRule, bool, error)

	// Path says where the state is kept, for a person: the database
	// file, or the server and database (never a password).
	Path() string
	// Close releases the connection.
	Close() error
}

var _ Backend = (*Store)(nil)

// Waiter is a Backend that can wake a process waiting for a person's
// answer as soon as the answer is given, on whichever host (the
// PostgreSQL store listens for its notifications). Without it, a waiting
// process looks again at an interval.
type Waiter interface {
	// WaitChange returns nil when the request with this token (any
	// request, when token is empty: one parked, answered, withdrawn or
	// expired) may have changed or max has passed, whichever comes first;
	// an error when ctx ends or it cannot wait (the caller then looks at
	// its interval).
	// The first call only starts listening and returns at once, so the
	// caller's next look cannot miss an answer given in between.
	WaitChange(ctx context.Context, token string, max time.Duration) error
}
