// Package later names what runs later: the files and directories that
// programs run or obey after a command has ended, outside mnemos's
// sandbox (git's hooks and configuration, direnv's .envrc, the editors'
// tasks, the coding agents' project settings, the package managers'
// configuration that names a program to run).
//
// It is the one list both layers read. The sandbox (package sandbox)
// keeps each entry of a workspace read-only in a run's view, and the
// decision (package classify) judges a write to one as running code, so
// that a command outside the sandbox is never allowed what the sandbox
// would refuse. Adding an entry here changes both.
//
// It holds data only: no file is read, nothing is decided.
package later
