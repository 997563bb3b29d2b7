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
// locals) are treated as unknown. A for or select loop's variable takes
// each word of the list in turn (after brace expansion); over a glob it is
// one of the names the glob matches, so "$f" (quoted or not, or copied to
// another variable) is that glob, as the word itself would be. Whatever is only known at run time (an
// unknown variable, a substitution, a glob) makes the word Dynamic, with its
// source text (or, for a glob, its pattern) as Value; a command whose name is
// dynamic is marked Dynamic with a note saying why.
//
// Wrappers (sudo, doas, pkexec, env, nice, ionice, timeout, nohup, time,
// command, builtin, exec, stdbuf, setsid, xargs, find -exec, a nested
// `mnemos run`, chroot, flock, watch, nsenter, unshare, su, runuser, sg,
// script -c, strace, taskset, busybox, toybox, and the shells) are peeled:
// Argv is the program that really runs and Wrappers records each wrapper,
// outermost first, with its own words (long options by their full names,
// however abbreviated). find itself and shells that read a script from
// stdin or a file are also reported as commands. A wrapper's own options
// are judged before it is peeled, from each program's manual: a file it
// writes or reads (strace -o, time -o, script's log, flock's lock file,
// nohup.out, xargs -a, ltrace -F) is a Redirect with By naming the
// wrapper; a command an option runs (strace -o '|cmd', flock -c, watch,
// script -c, env -S) is walked as the command it is; an environment
// assignment (strace -E, xargs --process-slot-var) reaches the command as
// a prefix assignment; a name to start it under (env -a, exec -a) makes
// busybox run that applet; running as another user or rewriting its
// system calls leaves a note.
//
// Ordinary tools that run commands named in their options or scripts are
// reported as themselves, and each command they carry is walked with the
// tool as its wrapper: sed's e command (s///e, a bare e and sed -f are
// noted, as they cannot be followed), tar --checkpoint-action=exec=,
// --to-command, -I and the volume scripts, man -P/-H, less and more +!cmd,
// bat/ack/ag --pager, rg --pre and --hostname-bin, sort
// --compress-program, sdiff and diff3 --diff-program, fd -x/-X, git -c
// with a command-valued key (core.pager, core.sshCommand, alias.x=!...,
// ...), --upload-pack, rebase --exec, bisect run, submodule foreach and
// filter-branch filters, awk's system() and pipes to or from a literal
// command, GNU parallel's command with its ::: arguments, and the standard
// input of at and batch.
//
// Beyond a command's own NAME=value words, Assigns holds the variables the
// script exported to it (export, declare -x, set -a, and the assignments
// given to a shell, env or sudo that started it): PAGER set by an earlier
// export is part of what "git log" runs with. Other shell features that run
// hidden code are followed too: ${x@P} prompt expansion, name references to
// array elements, hash -p (the name then runs the given file), a shell or
// source reading /dev/stdin. A cd while the script has set CDPATH goes to a
// directory known only at run time. The output of $(echo WORDS) and of
// $(cat <<EOF ... EOF) is known statically.
//
// Bash evaluates the values it meets in arithmetic ($((n)), ((n)), let,
// [[ n -gt 1 ]], declare -i assignments, indexed array subscripts,
// ${s:n:1}) as expressions in turn, and an array subscript there runs its
// command substitutions. Known values are walked; a value only known at
// run time (read, a command's output, the environment, an argument) is
// reported as a dynamic command with a note, unless it is known to be an
// integer ($((…)), $#, $?, $(wc -l), a variable declared -i).
//
// Input beyond Limits is refused with a *LimitError, never truncated:
// nesting in arithmetic counts towards MaxDepth like any other, so a
// substitution deep inside parentheses is never skipped. Source that does
// not parse, including a script nested in an argument, is a *ParseError:
// the caller denies it.
//
// # What it never does
//
// It knows nothing of policy: it does not decide whether a command is
// allowed. It never runs anything, reads no file, consults no environment
// but the Env it is given, and does not resolve paths against the file
// system; the same input always yields the same Script. It imports no
// os/exec, net or database/sql, directly or through a dependency.
package shellparse
