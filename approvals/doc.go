// Package approvals owns mnemos's state database and the approval card.
//
// One SQLite file holds four tables:
//
//   - pending: requests parked for a person to approve or reject, each with
//     an opaque token (128 random bits, lowercase base32), a TTL (600 s by
//     default) and a status (pending, approved, rejected, expired);
//   - tickets: one-shot permissions issued when a request is approved, bound
//     to the exact request (its request key) and spent by one conditional
//     UPDATE, so an approval lets one run through, once;
//   - grants: standing territory concessions for (channel, sender,
//     capability, target), consulted by the policy through
//     [policy.GrantChecker]. A grant may be limited to a number of uses
//     (a rule's scope_template max_uses): [Store.CoveringGrant] only
//     looks, and [Store.SpendGrant] counts a use and stamps last_used in
//     one conditional UPDATE, so n concurrent processes cannot spend a
//     grant more than its max_uses. [Store.PruneGrants] revokes grants
//     unused for a given time, with reason stale;
//   - rate_buckets: token buckets, one per key the caller chooses (for
//     example channel, sender and capability), taken from by
//     [Store.TakeToken] in one UPSERT, so the limit holds across processes.
//
// [Store.Resolve] performs the four checks of the approval registry in
// order: unknown token, already resolved (no double spend), expired (the
// expired status persists although an error is returned), the answer is
// not for the requester. An answer resolves only the requests of the
// identity it is for, and an approval never comes from the requester's
// own identity: an agent (claude-code:alice) never approves its own
// request; the person it works for does, through a channel that answers as
// them (terminal:alice, page:alice, a paired Telegram account).
//
// Every expiry is compared in SQL at query time, not only by a sweeper.
// Timestamps are stored as fixed-width ISO-8601 UTC text with nanosecond
// precision, so text comparison is time comparison. The database is opened
// with WAL, a 10 s busy timeout and immediate transactions, one connection
// per [Store]; its directory is created 0700 and the file 0600. The schema
// version is kept in PRAGMA user_version: an older database is migrated in
// place when opened, keeping its rows; a newer one is refused.
//
// [RenderCard] turns a request into the three-line card (or a shorter form
// as the same request recurs), with a marker when approving concedes
// territory. It is pure and neutralises control characters, so a command
// line cannot forge lines of the card it is shown on.
//
// [Deliverer] sends a new request's card, as a JSON [Message], to the
// channels of the policy's channels: section: a notifier program (the
// message on its stdin, the system PATH, run from /) or a webhook (POST,
// no proxy, no redirects), each bounded by its timeout and all at once. A
// failed delivery is a [Delivery] to report, never an error that changes
// a decision. The answers come back through the requester's identity:
// [ParseCallback] reads a button's data, and Resolve does the rest.
//
// The package never decides whether a command is allowed, never runs
// a gated command (a channel's notifier is the policy author's program,
// not the agent's), and never writes the audit log: callers record approval.*,
// grant.* and rate.* events from what these methods return. A refused
// token is a fact for the caller's policy to act on, not a decision. No grant is ever recorded
// for a capability whose default approval is always (code:exec, mail:send).
package approvals
