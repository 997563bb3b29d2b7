// Package policy decides, for one parsed shell command, allow, ask or deny
// from the policy file, the autonomy × capability table and grants.
//
// # What it owns
//
//   - The closed capability registry (seed 000: thirteen entries) and the
//     level × capability table derived from it by three rules.
//   - Nothing of what programs do: package classify turns a command into
//     accesses (capability and target) and a floor; policy judges them.
//   - The policy language: parsing and validating the YAML file (every
//     error positioned FILE:LINE:COL), Lint, Format, and the test cases
//     run by `mnemos policy test`.
//   - Evaluate, design.md's decision model steps 2–4, and grants as an
//     interface it consults.
//   - Extension manifests (ParseManifest, every error positioned) and
//     their admission (AdmitManifest): which requested capabilities the
//     core evaluator grants, which wait for a person, which are denied.
//     The gate records the grants and pending approvals it decides.
//
// # What it never does
//
// It never runs a command, opens a file other than the policy it is asked
// to Load, opens a database, talks to the network or reads the clock or
// the environment: grants come through a GrantChecker, time through
// Input.Now. It never overrides the guard (the gate runs the guard first)
// and knows nothing of approvals, tickets or the audit log.
//
// # Rules
//
// A rule has a name, an action (allow, ask, deny; seed 004's auto_approve
// and require_approval are synonyms), a priority and matchers, all of
// which must hold:
//
//   - command: {argv_prefix: [git, push]} (seed 001): the static words of
//     the command start with these; the first word is compared with the
//     program's base name unless it holds a "/".
//   - capability: fs:read and targets: workspace, shorthands: every
//     approval-bearing access uses the capability, every target is known
//     and inside the workspace.
//   - conditions: seed 004's `field: {operator: value}` lines.
//
// Rules are evaluated by priority, highest first; equal priorities keep
// file order; the first rule that matches is the rule outcome. Rules in
// the allow:, ask: and deny: lists default to priority 0, 100 and 200.
//
// # Evaluation order
//
// For each simple command (the gate has already run the guard, which
// nothing overrides):
//
//  1. classify the command into accesses and look each up in the table
//     for the level;
//  2. find the first matching rule;
//  3. combine: a deny rule denies; a table cell "denied" denies (the level
//     is a ceiling no rule or grant lifts); an ask rule asks; an allow
//     rule allows; with no rule, defaults.shell settles code:exec when it
//     is not ask, and otherwise the table decides (allowed → allow,
//     approval_required → ask);
//  4. an ask from the table or an ask rule becomes allow when active
//     grants cover every access that needs approval (never code:exec or
//     mail:send, whose approval is always);
//  5. the command's floor (a dynamic program name, a privilege wrapper,
//     a variable that makes a program run other code, a write to a path
//     not known statically) makes the outcome at least ask.
//
// No rule matching is not a denial here. Seed 004 ends its list with a
// default deny; in mnemos the autonomy table is the default: a command no
// rule mentions gets the table's cell for its capabilities at the level
// in force, so `ls` in the workspace runs at supervised and `touch` asks.
// A policy that wants seed 004's behaviour writes a last rule itself, e.g.
// `{name: default deny, action: deny, priority: -1000000, conditions:
// {argc: {greater_than: 0}}}`.
//
// # Conditions
//
// Fields (dot paths into the request):
//
//	capability (seed 004: action)  the capability of one access
//	target (seed 004: resource)    the target of one access: a path, host, recipient or command line
//	command                        the program's base name ("git" for /usr/bin/git)
//	argv                           every word, joined with single spaces
//	argv.N                         word N (argv.0 is the program as written)
//	args                           the words after the program, joined
//	argc                           the number of words (a number)
//	cwd, workspace                 the working directory and the workspace
//	level                          readonly, supervised or full
//	channel, sender, session       who asks
//	verb, reversibility            from the classification ("write", "irreversible")
//	context.KEY...                 the request's context; context.reason is the agent's stated reason
//	scope.KEY...                   the request's scope
//
// context and scope nest to any depth (context.metadata.priority). Any
// other top-level name is a load error.
//
// argv, argv.N, args and argv_prefix read the command's words the way its
// program reads them: a long option the program takes as an abbreviation
// is written out in full (git reset --har is matched as git reset
// --hard, sed --in-pl as sed --in-place), so a rule names each option as
// the program's manual does and holds for every spelling the program
// accepts. The catalog's option grammars (classify's catalog.txt) say
// which programs accept abbreviations; words are neither added nor moved, so argv.N
// keeps its meaning. An abbreviation of several options, which the
// program refuses, is left as written and makes the command ask.
//
// Operators: equals, not_equals, starts_with, ends_with, matches,
// less_than, greater_than, in, not_in. equals and in compare numbers as
// numbers when both sides are numbers and text otherwise (numbers print
// without exponent or trailing zeros). matches must match the whole value
// (the pattern is anchored at both ends, as seed 004's examples are
// written: ".*@company\.com$"); it is compiled at load, and a pattern that
// does not compile or is longer than MaxRegexLen is a load error.
// less_than and greater_than need a number in the policy (load error
// otherwise) and hold only when the request's field is a number. Values of
// capability and level are checked against the registry and the three
// levels at load.
//
// A field the request does not have satisfies no condition, whatever the
// operator: not_equals and not_in hold only for fields that are present.
//
// # Quantifiers
//
// A command can have several accesses (cp reads one path and writes
// another), so capability and target hold per access, and the conditions
// of a rule on those fields must hold together on one access. Which
// accesses must satisfy them depends on the action, so that a condition
// never makes a rule more permissive than the author wrote:
//
//   - an allow rule matches only when every approval-bearing access
//     satisfies them (every access when none bears approval, and never a
//     command with no access): `target: {starts_with: /home/me/proj/}`
//     must not allow `cp /home/me/proj/a /etc/passwd`;
//   - an ask or deny rule matches when at least one access satisfies
//     them: `target: {starts_with: /etc/}` denies that same cp.
//
// Under an allow rule a value not known before the command runs (a
// dynamic word such as "$X" or "$(cmd)", a target that depends on one, a
// glob such as "*.go") satisfies no condition; under ask and deny rules it
// is compared as its source text, which can only make the outcome
// stricter. A plain glob (only * and ?, no "..", no hidden names) still
// counts as lying below the directory it names, for targets: workspace
// and for grants.
//
// # Examples
//
// A rule may list match and not_match example commands. They are parsed
// as bash in ExampleCwd (which is also the workspace) with ExampleHome,
// at the policy's level, channel cli and sender user unless the example
// says otherwise; the rule must match some command of each match example
// and no command of any not_match example, or the policy does not load.
//
// # Rate limits
//
// The rate_limits: section (seed 000's per-capability token bucket), at
// the top of a file or in a profile, bounds how often a capability is
// used:
//
//	rate_limits:
//	  - capability: network:http     # an entry of the registry
//	    capacity: 20                 # bucket size, from 1 to 1000000
//	    refill_per_minute: 10        # tokens added per minute, 0.000001 to 1000000
//	    over: ask                    # once the bucket is empty: ask (default) or deny
//
// A file, and each profile, has at most one limit per capability. Every
// number is a plain decimal (no hex, octal, .inf or .nan). The bucket of
// an identity (channel, sender) and a capability starts full; each
// command that uses the capability and is let through takes a token, and
// with none left the command gets over instead until tokens refill. A
// limit only ever makes a decision stricter. A profile's limit replaces
// the file's on the same capability for the profile's requests
// (RateLimitFor). In a stack (Merge) the limits of all layers combine
// field by field, the strictest each time: a lower layer may lower the
// capacity, slow the refill, say deny instead of ask or add a limit, and
// what it writes looser is ignored, with a warning from LintLayered.
//
// The policy only describes limits: it keeps no buckets and reads no
// clock; the gate keeps the buckets and applies the limits.
package policy
