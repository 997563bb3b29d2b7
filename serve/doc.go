// Package serve is mnemos serve: the one long-lived process of a user that
// brings approvals to where the person is and their answers back.
//
// It owns:
//
//   - the lock that keeps one instance a user (serve.lock in the state
//     directory) and the file that says where it listens (serve.json);
//   - the unix socket in the secrets directory on which the user's own
//     commands (mnemos approvals url, [SignIn]) get a one-time sign-in
//     link: the peer's uid is checked with SO_PEERCRED, and a peer that
//     runs under mnemos (a confined command) is refused (signin.go);
//   - the approvals web page: bound to a loopback address only; nothing on
//     disk opens it: its session key is drawn at start and held in memory
//     only, and a browser signs in with a one-time code (160 bits, used
//     once, within [SignInTTL]) that is moved to a session cookie
//     (HttpOnly, SameSite=Strict) and then redirected away from the URL;
//     pending cards with Approve, Reject and
//     the territory choices, recent history, live updates by server-sent
//     events. Every response carries a strict Content-Security-Policy and
//     no Referer; every request must name the bound address in its Host
//     header (DNS rebinding); every POST carries a CSRF token bound to the
//     session; a GET never changes anything;
//   - under each approval answered and spent, the runs it let through
//     (those whose journal record carries its token as their ticket) and
//     what they changed in the workspace, with an undo behind a
//     confirmation (GET /undo/RUN asks, POST /undo does it, with the
//     session's CSRF token, for the runs of the page identity's own
//     approvals only); an undo refused because paths changed since the
//     run lists them and offers the forced undo behind a second
//     confirmation; journal.undo is audited as page:NAME (journal.go,
//     undo.go);
//   - the Telegram bot (seed 002, chapter 7): cards with inline buttons,
//     long polling, the callback dispatcher, pairing of a Telegram user
//     with a requester identity;
//   - the mail of each email channel: the card with links to the view of
//     one request (GET /request/ID), which answers nothing by itself;
//   - retries of webhook deliveries that failed, within the request's TTL;
//   - the sweep that marks expired requests (approval.expired);
//   - with a state several hosts share (PostgreSQL): the requests of the
//     identities it answers for parked on the other hosts, on the page
//     and the bot, each naming its host; the database's notifications
//     (LISTEN/NOTIFY) in place of watching files; the shipping of the
//     host's audit log to the central table.
//
// It also holds the [Terminal] of mnemos approvals watch, which runs in a
// process of its own: the cards on a terminal, answered with one key.
//
// It never decides a command and never runs one: every answer goes
// through the [Resolver] (the gate's Approve and Deny), which makes the
// registry's four checks, issues the one-shot ticket and writes the audit
// events. Requests are read through the [Registry] (the approvals store's
// List and Get). The sign-in codes, the session key, the bot token and the
// SMTP password are never logged, never written to the audit log, and the
// first two never written anywhere.
package serve
