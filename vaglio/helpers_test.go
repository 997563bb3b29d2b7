package vaglio

import (
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// testGuard is the guard of a user "u" whose mnemos keeps its config and
// state in the XDG places.
func testGuard() Guard {
	return Guard{
		Home: "/home/u",
		Protected: []string{
			"/home/u/.config/mnemos",
			"/home/u/.local/state/mnemos",
			"/home/u/.config/mnemos/policy.yaml",
			"/home/u/.local/state/mnemos/audit.jsonl",
		},
		SelfNames: []string{"mnemos", "/usr/local/bin/mnemos"},
	}
}

// words splits a test command line on spaces. Single quotes group words
// ('a b' is one word, quotes removed); a word written with a leading "@" is
// dynamic (the "@" is dropped), standing for a word the shell computes.
func words(s string) []shellparse.Word {
	var out []shellparse.Word
	var cur strings.Builder
	inQuote, started := false, false
	flush := func() {
		if !started {
			return
		}
		v := cur.String()
		w := shellparse.Word{Value: v}
		if strings.HasPrefix(v, "@") {
			w = shellparse.Word{Value: v[1:], Dynamic: true}
		}
		out = append(out, w)
		cur.Reset()
		started = false
	}
	for _, r := range s {
		switch {
		case r == '\'':
			inQuote = !inQuote
			started = true
		case r == ' ' && !inQuote:
			flush()
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	flush()
	return out
}

// cmd builds a simple command from a test command line (see words).
func cmd(s string) shellparse.Command {
	return shellparse.Command{Argv: words(s)}
}

// redir adds a redirect to a command; target "@..." is dynamic.
func redir(c shellparse.Command, op, target string) shellparse.Command {
	t := words("'" + target + "'")[0]
	if strings.HasPrefix(target, "@") {
		t = shellparse.Word{Value: target[1:], Dynamic: true}
	}
	c.Redirects = append(c.Redirects, shellparse.Redirect{Op: op, Target: t})
	return c
}

func assign(c shellparse.Command, a ...string) shellparse.Command {
	c.Assigns = append(c.Assigns, a...)
	return c
}

func wrap(c shellparse.Command, name string, argv ...string) shellparse.Command {
	c.Wrappers = append(c.Wrappers, shellparse.Wrapper{Name: name, Argv: argv})
	return c
}

func within(c shellparse.Command, ctx ...string) shellparse.Command {
	c.Context = append(c.Context, ctx...)
	return c
}
