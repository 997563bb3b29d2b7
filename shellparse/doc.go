// Package shellparse turns what an agent asks to run (an exec argv, or a
// shell script) into the list of every simple command the shell would run,
// each with its words after static evaluation, its redirections, the
// wrappers peeled from it and the context it sits in.
//
// # What it owns
//
// ParseScript parses bash source with mvdan.cc/sh/v3/syntax; ParseArgv takes
// a literal argv. Both find commands wherever the shell would run them:
// lists and pipelines, subshells and groups, if/for/while/until/case/select,
// function bodies, command and process substitutions (in arguments,
// redirection targets, here-documents, parameter defaults, arithmetic, array
// indexes, [[ ]] tests, declare values), trap actions, and scripts handed to
// a shell by -c, eval, su -c, watch, flock -c, a here-document or a pipe from
// echo.
//
// Words are evaluated where the shell would do so statically: quotes,
// escapes, $'...', line continuations, brace expansion, ~ and $HOME from
// Env.Home, variables from Env.Vars and from earlier assignments, read from
// here-strings, arrays, the common ${...} operators, arithmetic, aliases and
// functions defined in the script, positional parameters of sh -c payloads.
// Variables assigned on only some paths (branches, loops, && lists, function
// locals) are treated as unknown. Whatever is only known at run time (an
// unknown variable, a substitution, a glob) makes the word Dynamic, with its
// source text (or, for a glob, its pattern) as Value; a command whose name is
// dynamic is marked Dynamic with a note saying why.
//
// Wrappers (sudo, doas, pkexec, env, nice, ionice, timeout, nohup, time,
// command, builtin, exec, stdbuf, setsid, xargs, find -exec, a nested
// `mnemos run`, chroot, flock, watch, nsenter, unshare, su, runuser, sg,
// script -c, strace, taskset, busybox, and the shells) are peeled: Argv is
// the program that really runs and Wrappers records each wrapper, outermost
// first, with its own words. find itself and shells that read a script from
// stdin or a file are also reported as commands.
//
// Input beyond Limits is refused with a *LimitError, never truncated. Source
// that does not parse, including a script nested in an argument, is a
// *ParseError: the caller denies it.
//
// # What it never does
//
// It knows nothing of policy: it does not decide whether a command is
// allowed. It never runs anything, reads no file, consults no environment
// but the Env it is given, and does not resolve paths against the file
// system; the same input always yields the same Script. It imports no
// os/exec, net or database/sql, directly or through a dependency.
package shellparse
