// Package classify says what a parsed shell command does, in the
// vocabulary of the capability registry: each access it makes (a
// capability and its target: a path, a host, a command line), its verb
// and reversibility, and a floor below which no rule, table cell or
// grant may decide (ask for what the classification cannot vouch for).
//
// # What it owns
//
//   - The catalog of programs, kept as data in catalog.txt (embedded):
//     how each program's arguments map to accesses, which options take a
//     value, name a file read or written, or run code, and each program's
//     option grammar (how it reads long options: GNU-style unique
//     abbreviations, exact names, case folding). Anything not in the
//     catalog is code:exec.
//   - Options read as the program reads them (ExpandOptions): an
//     abbreviation written out in full, short clusters split, so that
//     rules and accesses see the option the manual names.
//   - Services (classify_services.go): which commands and hosts are
//     local or hosted models, mailboxes, calendars and chat channels.
//   - Package managers and git remotes (packages.go): which installs and
//     fetches reach which registries (network:http to them), read from
//     the command line, the command's environment words and the facts
//     the gate read of their configuration and caches (Place.Packages,
//     PackageNeeds); which builds fetch (their dependencies not in the
//     cache); the ports a fetch connects to (Fetch) and the fetch step
//     a failed build needs (FetchStep).
//   - The environment-variable table (envvars.go, JudgeEnv, EnvVars):
//     variables that make a program run other code, load code, write or
//     read a file, or reroute its traffic.
//   - Where a script's commands run (PlaceOf, CdTargets): the working
//     directory and every static cd target.
//   - The types classification produces: Capability and its thirteen
//     names, Access, Classification, Place, and Outcome (a floor is one).
//
// # What it never does
//
// It never decides allow, ask or deny for a request (package policy does,
// from rules, the level table and grants), never denies on its own (the
// guard in package vaglio does), and never runs a program, reads a file,
// the environment or the clock: what it knows of the machine comes in
// through Place. It imports only shellparse and the standard library.
//
// # Adding a program
//
// A new program or option is one entry of catalog.txt (its format is
// described at the top of that file) plus corpus lines in
// testdata/corpus; the tests generated from the catalog (every long
// option's every abbreviation, every default rule's every spelling) cover
// it without a new test.
package classify
