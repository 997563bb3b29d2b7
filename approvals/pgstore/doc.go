// Package pgstore keeps mnemos's state in a PostgreSQL database that many
// machines share: the approvals registry, tickets, grants, rate buckets
// and session rules behind [approvals.Backend], and the central audit
// table every host ships its log to.
//
// # Hosts
//
// Each process says which host it is (the machine's hostname, or
// MNEMOS_HOST_ID) and every row it writes records it. A request parked
// on one host is listed and answered from any (ListOptions.Fleet); its
// ticket is bound to the host that parked it, and spent once fleet-wide
// by one conditional UPDATE. Grants and rate buckets follow the identity
// across machines. Session rules stay on the host they were given on,
// since an agent session lives on one machine.
//
// # Clocks
//
// Hosts' clocks drift; the server's is the one clock they share. Every
// timestamp is written and every expiry compared in SQL with the server's
// statement time. A time a caller passes (now, an expiry) is read as an
// offset from the host's own clock and applied to the server's: a host
// whose clock is an hour behind cannot keep a request open an hour longer.
//
// # Schema
//
// The schema is versioned (table mnemos_schema). [Migrate] applies what a
// database lacks, under an advisory lock, and is what `mnemos state
// migrate` runs, as a role that owns the tables; [Open] never changes the
// schema, and refuses a database whose version is not the one this
// package knows (older: migrate it; newer: upgrade mnemos).
//
// # Audit
//
// Table audit_events keeps every host's audit log, line for line: (host,
// seq) is its key, so a line is stored once however often it is shipped.
// The role hosts connect as may INSERT and SELECT it, never UPDATE or
// DELETE (see [GrantStatements]). [Store.Ship] sends what the local log
// holds beyond what the table has, in order; [Store.VerifyFleet] checks
// every host's chain and that no sequence number is missing.
//
// # Notifications
//
// Resolving, cancelling or expiring a request sends NOTIFY on channel
// mnemos_pending with its token, in the same transaction; [Store.Wait]
// listens for it, so a run waiting on one host learns of an answer given
// on another as soon as it is committed.
package pgstore
