// Package journal keeps what gated commands change in the workspace, so
// that mnemos undo can put it back.
//
// For a run: [Open] the journal once, [Journal.Begin] with the run's
// [RunInfo], call [Run.Before] from the loop that receives the sandbox's
// notifications, before each call that changes the file system is let
// through, and [Run.Finish] when the command has ended. Afterwards,
// [Journal.Runs] lists runs, [Journal.Changes] and [Journal.Diff] show
// what one did, and [Journal.Undo] takes it back.
//
// # What is kept
//
// Before a call changes a path below the workspace (not below an excluded
// directory such as node_modules), Before records the state the call is
// about to destroy: a regular file's content (copied into the store while
// it is hashed), its mode, owner, times and link count; a link's target;
// a directory's mode; "absent" for a name about to be made. A run keeps a
// path's content once, however often it writes it: what a run holds
// follows its renames (a directory's rename moves everything below it).
// A rename keeps only what it replaces; a tree moved out of the workspace,
// or to a name the journal excludes (mv src target), is kept as if
// deleted. A call that will change nothing (removing a name that does
// not exist, making one that does) is not recorded. A hard link from a
// kept file to a name the journal does not keep fails with EXDEV, as a
// link to another file system does: the file could be written through
// it unrecorded.
//
// # The store
//
// objects/ holds contents by SHA-256, each written to tmp/ and renamed
// into place, shared by every run (directories 0700, files 0600). runs/
// holds one append-only log per run (runlog.go describes the format).
// A run killed at any point leaves a readable log: an object is whole
// before the entry naming it is written, and a last line cut short is
// ignored. A live run holds an exclusive flock on its log; a reader that
// can take it knows the run died, and ends the log, marked interrupted,
// with the state of its paths taken then. The collector of unreferenced
// objects takes the store lock exclusive, and a writer holds it shared
// from storing an object to writing the entry, so no object named by an
// entry is ever collected.
//
// # Bounds
//
// A file above Options.MaxFile is recorded by digest only: its entry says
// it cannot be restored. It is hashed while the call waits, so only a
// file up to 1 GiB, and 4 GiB of such files a run; a larger one has no
// digest. A content is copied up to the size the file had when opened. When keeping a file would take a workspace over
// Options.Quota (each run counting the objects it names), the
// workspace's runs past Options.MaxAge and then its oldest runs that keep
// something are pruned, none when even that would not make room; the
// run's [Summary] lists the runs pruned (Pruned), and each leaves a note
// so that asking for it says it was dropped, and why. If the content
// still does not fit, the entry says "not kept: quota", the call
// proceeds, and the Summary lists the file. When the store or
// the log cannot be written at all (a full disk), Before returns the errno
// (ENOSPC) so that the call fails: nothing is changed that was not kept.
//
// # Undo
//
// [Journal.Undo] replays a run's entries in reverse. Content goes back
// through a temporary file in the same directory renamed over the name,
// so a crash leaves each file old or new; modes and times follow. Every
// path undo changes is reached from the workspace (or, for a file a run
// moved in, from /) one directory at a time without following a link,
// and acted on through that directory's descriptor: a directory a later
// run replaced with a link to the home directory cannot lead undo out of
// the workspace; such a path is a conflict, and forced, a failed step. Names
// that were hard links of one file before the run become links of the
// restored file again. Undo refuses, listing them, paths whose state
// differs from what the run left (Finish records it) or that a run still
// running, or one that ran alongside, touched too, unless forced; and it
// records what it changes as a run of its own, so an undo can be undone.
// Three differences are not refused: a git index (git refreshes it on git
// status) is restored all the same, its current content kept by the
// undo's run; a path that later runs changed is as the run left it when
// every one of them was undone since (undoing newest first needs no
// force); and a path a failed undo of the same run already restored. An
// undo a step of which failed for a reason that may pass (a directory
// moved away) records the failures in its end and does not make the runs
// undone, so that undoing them again does what is left.
//
// # What a run changed
//
// [Journal.Changes] reports net changes, one a path: a path deleted and
// made again (git checkout unlinks and creates) is changed, a file
// rewritten with the same content is no change, temp and lock files made
// and removed do not appear. A deletion below an excluded directory is
// recorded once a directory, with nothing kept, and listed as not kept.
// [Journal.Last] is the run undo --last takes back: the newest neither an
// undo nor undone whose changes hold more than a git index, as an
// editor's undo steps back one change at a time.
//
// # Limits
//
// Before runs while the calling thread waits, but other threads of the
// command run on: two threads racing on one path may be recorded in an
// order the kernel did not follow. Objects and logs are not fsync'd: a
// kill of mnemos loses nothing, a power cut may lose the last entries.
// Writes through a descriptor opened before the run, or through a hard
// link whose other name is outside the workspace, are not seen.
package journal
