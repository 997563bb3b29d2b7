// Package sandbox builds the Landlock confinement for commands that mnemos
// runs, and reports honestly what this kernel can enforce.
//
// It owns: probing the kernel's Landlock ABI and describing what a ruleset
// can and cannot restrict here. It never decides whether a command may run;
// that is the gate's job, and the sandbox only narrows what an allowed
// command can touch.
//
// Status today: the kernel is probed and the result is recorded in every
// run.started audit event and shown by `mnemos sandbox status`, but no
// ruleset is applied yet, and every report says so (enforced: false).
// `--require-sandbox` therefore refuses to run anything.
package sandbox
