// Package audit owns mnemos's event log: what was decided, asked, approved,
// granted and run, one JSON object per line, each line carrying the hash of
// the line before.
//
// # Format
//
// A line has the shape of log/slog's JSON handler, with a fixed head and
// the event's attributes after it:
//
//	{"time":"2026-03-01T10:00:00.123Z","level":"INFO","msg":"policy.decision","seq":7,"prev":"<hex SHA-256>","decision":"deny",...}
//
// time is RFC 3339 in UTC, msg is the event kind (see the Kind constants),
// seq is the line's 1-based number, and prev is the hex SHA-256 of the
// previous line's bytes without its newline (for the first line, of the
// empty string). Attributes may nest (groups, maps, slices).
//
// # Integrity
//
// The chain lets [Verify] find an edited, deleted, inserted or reordered
// line. It cannot see a cut tail or a log rewritten wholesale with a fresh
// chain, so each append also replaces an anchor file (path + ".anchor"):
// the number of lines and the last line's hash, written to a temporary file
// and renamed. Verify compares the log with it. Append refuses (with
// [ErrIntegrity]) to continue a log whose end disagrees with its anchor,
// so a tampered history is never sealed by a new anchor. The anchor sits
// beside the log with the same permissions: it stops a careless or naive
// edit, and the guard keeps gated commands away from both; a copy held
// elsewhere (Report.LastHash) is what stops an owner of the files.
//
// # Concurrency and durability
//
// Every Append holds an exclusive flock on the log file for the whole
// read-last-line, write, replace-anchor sequence, so goroutines, several
// Log values and several processes interleave whole lines and keep one
// chain. The line goes out in one write(2) on an O_APPEND descriptor; if
// the write or the anchor fails the log is truncated back and the error
// returned, and callers fail closed. Options.Sync adds an fsync of both.
//
// # Redaction
//
// Append redacts before it writes: every string value at any depth goes
// through [RedactString], string slices through [RedactArgv] (so the value
// after "--password" goes too), and a value whose key names a secret
// ("password", "api_key", "GITHUB_TOKEN") is replaced whole. No caller can
// forget to redact, and none can write an unredacted value on purpose.
//
// # What this package never does
//
// It makes no decisions and imports nothing of mnemos. It never rewrites
// or truncates existing lines (only its own failed append), never rotates
// the log, and never repairs a broken chain: it reports it.
package audit
