package shellparse

import (
	"path"
	"strconv"
	"strings"
)

// Word is one argument of a simple command after the static part of shell
// evaluation (quote removal, escapes, brace expansion, known variables).
type Word struct {
	// Value is the word's static value. For a dynamic word it is the source
	// text of the word (for example "$HOME/x" or "$(pwd)"), never a guess.
	Value string `json:"value"`
	// Dynamic is true when the shell would compute part of the word at run
	// time (an unknown variable, a command substitution, a glob, ...).
	Dynamic bool `json:"dynamic,omitempty"`
	// TildeLiteral is true when the word's leading "~" was written quoted
	// or escaped ('~', "~", \~): the shell does not expand it, so it names
	// a file called "~", not a home directory. A word built without the
	// parser leaves it false, and "~" is then read as home.
	TildeLiteral bool `json:"tilde_literal,omitempty"`
}

// Redirect is one redirection of a simple command.
type Redirect struct {
	// Op is the operator as written: ">", ">>", "<", "&>", "&>>", ">|",
	// "<>", "<<", "<<-", "<<<", ">&", "<&".
	Op string `json:"op"`
	// Fd is the explicit file descriptor, "" when none was written.
	Fd string `json:"fd,omitempty"`
	// Target is the file (or descriptor, for ">&" and "<&") redirected to.
	// For here-documents and here-strings it is the body.
	Target Word `json:"target"`
	// By, when set, names the wrapper that opens Target itself rather
	// than the shell ("strace -o", "time -o", "flock", "xargs -a",
	// "nohup"): the file is written or read as with Op, but the wrapped
	// command's own descriptors are not redirected to it.
	By string `json:"by,omitempty"`
}

// Writes reports whether the redirect opens its target for writing.
func (r Redirect) Writes() bool {
	switch r.Op {
	case ">", ">>", "&>", "&>>", ">|", "<>":
		return true
	}
	return false
}

// Wrapper is a command that runs another command given in its arguments
// (sudo, env, timeout, xargs, find -exec, bash -c, a nested mnemos run, ...).
type Wrapper struct {
	// Name is the wrapper's program name ("sudo", "find -exec", "bash -c").
	Name string `json:"name"`
	// Argv is the wrapper's own words, before the wrapped command.
	Argv []string `json:"argv,omitempty"`
}

// Command is one simple command the shell would run.
type Command struct {
	// Argv is the command after its wrappers were peeled; Argv[0] is the
	// program as written (possibly a path such as /bin/rm).
	Argv []Word `json:"argv"`
	// Assigns are the NAME=value words before the command, statically
	// evaluated where possible, then the variables the script exported to
	// it (sorted by name; "NAME=" when the value is not known).
	Assigns []string `json:"assigns,omitempty"`
	// Redirects in source order.
	Redirects []Redirect `json:"redirects,omitempty"`
	// Wrappers peeled from the outside in.
	Wrappers []Wrapper `json:"wrappers,omitempty"`
	// Context says where the command sits, outermost first, for example
	// ["bash -c", "&&", "$(…)"]. Empty for a plain top-level command.
	Context []string `json:"context,omitempty"`
	// Dynamic is true when the program name cannot be known statically.
	Dynamic bool `json:"dynamic,omitempty"`
	// Notes explain anything not fully modelled (why the name is dynamic,
	// arguments supplied at run time by xargs, ...). A command with notes is
	// never more trusted than one without.
	Notes []string `json:"notes,omitempty"`
	// RunTimeArgs, when set, says that some of the command's words are
	// supplied when it runs, and by whom: "xargs appends arguments read
	// from stdin", "find replaces {} with each path found". Those words
	// are Dynamic, as a $(…) in their place would be; unlike a note, this
	// says nothing else is left unmodelled, so a program that only reads
	// reads paths known at run time, and one that writes or runs code
	// does so with arguments no one has seen.
	RunTimeArgs string `json:"run_time_args,omitempty"`
	// RunTimeNames, when RunTimeArgs is set, are name patterns every word
	// supplied at run time matches, when the script shows them: find's
	// -name and -iname tests of the branch that runs the command (or
	// prints what xargs reads), or the words echo or printf pipe into
	// xargs. nil when the supplied words may be any name.
	RunTimeNames []string `json:"run_time_names,omitempty"`
	// AfterCd, when positive, says the command runs only once the cd or
	// pushd at Script.Commands[AfterCd-1] has succeeded: they are joined
	// by && ("cd build && rm -rf ."), so the command starts in that cd's
	// directory, not in the one before it. Commands between the two may
	// still change directory.
	AfterCd int `json:"after_cd,omitempty"`
	// EnvRefs are the variables of the environment the script was given
	// (names it did not set itself) whose values may flow into the
	// command's words and redirect targets, directly ($HOME) or through
	// the script's variables (x=$HOME; echo "$x"), read, printf -v,
	// mapfile, for loops, ${!name} and name references. Sorted, without
	// duplicates; nil when there are none.
	EnvRefs []string `json:"env_refs,omitempty"`
	// Stdin says where the command's standard input comes from when the
	// script gives it one: "text" (a here-document, a here-string, or a
	// pipe from an echo or printf of words the script spells out, all
	// known whatever their value), "pipe" (the output of the command
	// before it in a pipeline, which may pass on what is typed at a
	// terminal: cat | python3), or "file" (a < redirect, its own or a
	// compound command's around it, whose target is among Redirects).
	// "" when it reads the input the script was given, which may be a
	// terminal.
	Stdin string `json:"stdin,omitempty"`
	// StdoutPiped is true when the command's standard output goes into
	// a pipe the script makes: it, or a compound command around it,
	// stands before the last command of a pipeline (cmd | other), or it
	// runs in a command substitution, whose output the shell reads. Its
	// redirects (Redirects) may still send it elsewhere.
	StdoutPiped bool `json:"stdout_piped,omitempty"`
}

// Name returns the base name of the program ("rm" for "/usr/bin/rm"), or ""
// when the name is dynamic or the command is empty.
func (c Command) Name() string {
	if c.Dynamic || len(c.Argv) == 0 || c.Argv[0].Dynamic {
		return ""
	}
	return path.Base(c.Argv[0].Value)
}

// Args returns the values of the arguments after the program name.
func (c Command) Args() []string {
	if len(c.Argv) < 2 {
		return nil
	}
	out := make([]string, len(c.Argv)-1)
	for i, w := range c.Argv[1:] {
		out[i] = w.Value
	}
	return out
}

// Strings returns the values of all words, program name included.
func (c Command) Strings() []string {
	out := make([]string, len(c.Argv))
	for i, w := range c.Argv {
		out[i] = w.Value
	}
	return out
}

// HasWrapper reports whether any peeled wrapper has the given name.
func (c Command) HasWrapper(name string) bool {
	for _, w := range c.Wrappers {
		if w.Name == name {
			return true
		}
	}
	return false
}

// String renders the command for humans: wrappers, then argv, then
// redirects, space separated (not a re-quotable shell string).
func (c Command) String() string {
	n := 0
	for _, w := range c.Wrappers {
		if len(w.Argv) > 0 {
			for _, a := range w.Argv {
				n += len(a) + 1
			}
		} else {
			n += len(w.Name) + 1
		}
	}
	for _, w := range c.Argv {
		n += len(w.Value) + 1
	}
	for _, r := range c.Redirects {
		if r.By == "" {
			n += 1 + len(r.Fd) + len(r.Op) + len(r.Target.Value)
		}
	}
	var b strings.Builder
	b.Grow(n)
	for _, w := range c.Wrappers {
		if len(w.Argv) > 0 {
			for i, a := range w.Argv {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(a)
			}
		} else {
			b.WriteString(w.Name)
		}
		b.WriteByte(' ')
	}
	for i, w := range c.Argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.Value)
	}
	for _, r := range c.Redirects {
		if r.By != "" {
			continue // the wrapper's own words say so
		}
		b.WriteByte(' ')
		b.WriteString(r.Fd)
		b.WriteString(r.Op)
		b.WriteString(r.Target.Value)
	}
	return b.String()
}

// Script is the result of parsing a request: every simple command found, in
// the order the shell would meet them.
type Script struct {
	Commands []Command `json:"commands"`
}

// Env is what the parser may know statically about the environment: the
// user's home directory (for ~ and $HOME) and the working directory. Other
// variables are unknown unless assigned earlier in the same script.
type Env struct {
	Home string
	Cwd  string
	// Vars are extra variables known statically (for example USER).
	Vars map[string]string
	// Exported are variables of the environment whose values are not
	// known statically: a script that assigns one exports the new value
	// to the programs it starts. PATH always is.
	Exported []string
	// Sourced, when set, says what sourcing a file does, for the files
	// the caller knows (a virtualenv's activate script, rustup's env
	// file): the variables it sets and exports, a value's "$PATH"
	// standing for PATH as it was before. file is the path as the script
	// names it (relative paths are to Cwd: Sourced is not asked once the
	// script may have changed directory). ok is false for a file it does
	// not know, which is then not followed (the command carries a note
	// and the variables after it are unknown). What else the file does
	// is code the command runs; knowing what it sets is what lets the
	// commands after it be judged with the PATH it gives them.
	Sourced func(file string) (vars map[string]string, ok bool)
}

// ParseError is a script the shell would refuse; the decision is deny.
type ParseError struct {
	Line, Col int
	Msg       string
}

func (e *ParseError) Error() string {
	return "line " + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Col) + ": " + e.Msg
}

// Limits bound what the parser accepts. Inputs beyond them are refused with
// an error, never truncated and then matched.
type Limits struct {
	MaxBytes int // total script or argv size
	MaxArgs  int // words in one request
	MaxDepth int // nesting of shells, substitutions and wrappers
}

// DefaultLimits are generous for real work and small enough to bound time.
func DefaultLimits() Limits {
	return Limits{MaxBytes: 1 << 20, MaxArgs: 1 << 16, MaxDepth: 64}
}
