// Package audit owns mnemos's event log: what was decided, asked, approved,
// granted and run, one JSON object per line, each line carrying the hash of
// the line before and a MAC made with a key only mnemos reads.
//
// # Format
//
// A line has the shape of log/slog's JSON handler, with a fixed head and
// the event's attributes after it, and its MAC last:
//
//	{"time":"2026-03-01T10:00:00.123Z","level":"INFO","msg":"policy.decision","seq":7,"prev":"<hex SHA-256>","decision":"deny",...,"mac":"<hex HMAC-SHA256>"}
//
// time is RFC 3339 in UTC, msg is the event kind (see the Kind constants),
// seq is the line's 1-based number, and prev is the hex SHA-256 of the
// previous line's bytes without its newline (for the first line, of the
// empty string). Attributes may nest (groups, maps, slices). mac is the
// HMAC-SHA256, under the log's key, of a fixed label and every byte of the
// line before the ,"mac": member; since that includes prev, each MAC also
// covers every line before. Lines written before the key existed have no
// mac and are otherwise the same.
//
// # Integrity
//
// The chain lets [Verify] find an edited, deleted, inserted or reordered
// line. It cannot see a cut tail or a log rewritten wholesale with a fresh
// chain, so each append also replaces an anchor file (path + ".anchor"):
// the number of lines, the last line's hash and MAC, and a MAC of those.
// Verify compares the log with it. Append refuses (with [ErrIntegrity]) to
// continue a log whose end disagrees with its anchor, so a tampered
// history is never sealed by a new anchor.
//
// The MACs are what make the chain and the anchor hold against someone
// who can write the files: without the key, a line cannot be changed nor
// the anchor moved, even with every hash recomputed, and Verify names the
// first line that was. The key (32 random bytes, hex, mode 0600, see
// [KeyPath]) is made by [Log.EnsureKey] (mnemos init) or by the first
// append to a log that has no keyed line, once, with an exclusive link so
// that concurrent creators end up with the same key. A log written before
// the key existed keeps its unkeyed lines: Verify checks them by hash only
// and says so (Report.Unkeyed), and once a keyed line appears every line
// after it must be keyed. Once the key exists a log with lines and no
// keyed line can only have been rewritten, and Verify says that too.
//
// mnemos keeps the key (Options.Key) in a directory of its own beside the
// log, its secrets directory, which the guard and the sandbox keep from
// gated commands. A process of the same
// user outside the sandbox can read it and rewrite everything; nor can the
// anchor tell a log and anchor put back from an older copy. A [Head] kept
// where that process cannot write (the count and the last MAC) can:
// VerifyOptions.Head checks that the log still extends it.
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
// the log, never repairs a broken chain (it reports it), and never
// replaces or removes the key.
package audit
