// Package approvals owns mnemos's state database and the approval card.
//
// One SQLite file holds three tables:
//
//   - pending: requests parked for a person to approve or reject, each with
//     an opaque token (128 random bits, lowercase base32), a TTL (600 s by
//     default) and a status (pending, approved, rejected, expired);
//   - tickets: one-shot permissions issued when a request is approved, bound
//     to the exact request (its request key) and spent by one conditional
//     UPDATE, so an approval lets one run through, once;
//   - grants: standing territory concessions for (channel, sender,
//     capability, target), consulted by the policy through
//     [policy.GrantChecker].
//
// [Store.Resolve] performs the four checks of the approval registry in
// order: unknown token, already resolved (no double spend), expired (the
// expired status persists although an error is returned), decider differs
// from requester. Only the requester's identity resolves a request.
//
// Every expiry is compared in SQL at query time, not only by a sweeper.
// Timestamps are stored as fixed-width ISO-8601 UTC text with nanosecond
// precision, so text comparison is time comparison. The database is opened
// with WAL, a 10 s busy timeout and immediate transactions, one connection
// per [Store]; its directory is created 0700 and the file 0600.
//
// [RenderCard] turns a request into the three-line card (or a shorter form
// as the same request recurs), with a marker when approving concedes
// territory. It is pure and neutralises control characters, so a command
// line cannot forge lines of the card it is shown on.
//
// The package never decides whether a command is allowed, never runs
// anything, and never writes the audit log: callers record approval.* and
// grant.* events from what these methods return. No grant is ever recorded
// for a capability whose default approval is always (code:exec, mail:send).
package approvals
