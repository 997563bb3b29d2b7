package classify

import (
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// Options known only at run time.
//
// git push $(echo --force) origin main pushes with --force, but the rules
// and the classification read the word $(echo --force), which names no
// option. A word the shell computes when it runs ($(…), `…`, $VAR, "$@")
// that stands where the program reads options may be any of them; the
// gate judges the command once for each option its program reads there
// (OptionVariants) and asks when one of them would be judged worse,
// naming the word and that option.

// maxVariantWords bounds how many run-time words of one command are tried
// as options, and maxVariants how many commands that makes.
const (
	maxVariantWords = 4
	maxVariants     = 512
)

// OptionVariant is a command with one of its words that are known only at
// run time replaced by an option its program reads where the word stands.
type OptionVariant struct {
	Command shellparse.Command
	// Word is the run-time word as written, Option what it was replaced
	// with, Reader the program that reads it ("git push").
	Word, Option, Reader string
	// Plain: Option is the word itself with … for what runs (+…), not
	// an option.
	Plain bool
}

// OptionVariants returns, for each word of cmd computed at run time that
// stands where its program reads an option (before --, not an option's
// value) and may begin with a dash, the command with that word replaced
// by each option the program's grammar knows there (for git, the
// subcommand's), or, for a program with no grammar, each option the
// catalog lists for it. value is the value given to an option that takes
// one: a word in the workspace under the sandbox, which confines where it
// may point, a word not known before it runs outside it. Words beyond the
// first few, and variants beyond a bound, are not tried; the bound is
// generous for the programs the catalog knows.
func OptionVariants(cmd shellparse.Command, value shellparse.Word) []OptionVariant {
	if cmd.Dynamic || len(cmd.Argv) < 2 || cmd.Argv[0].Dynamic || programElsewhere(cmd) {
		return nil
	}
	g, start := optionGrammar(cmd)
	spec := specOf(cmd.Name())
	if start == 0 && spec.kind == kindGit {
		// git with no subcommand known: code:exec already.
		return nil
	}
	if start == 0 {
		start = 1
	}
	var at []int
	var out []OptionVariant
	for i := start; i < len(cmd.Argv) && len(at) < maxVariantWords; i++ {
		w := cmd.Argv[i]
		v := w.Value
		switch {
		case v == "--" && !w.Dynamic:
			// Operands from here on: each is read once with its
			// run-time parts as a plain word.
			for _, j := range dynamicAfter(cmd.Argv, i+1) {
				if !strings.ContainsAny(cmd.Argv[j].Value, "$`") {
					continue
				}
				out = append(out, plainVariant(cmd, j))
			}
			i = len(cmd.Argv)
		case !w.Dynamic && len(v) > 1 && v[0] == '-':
			if !strings.Contains(v, "=") && takesNext(g, spec, v) {
				i++
			}
		case w.Dynamic && mayBeOption(v):
			at = append(at, i)
		case w.Dynamic && !strings.HasPrefix(v, "-") && strings.ContainsAny(v, "$`"):
			// git push origin "+$B": a word whose start is written out
			// is read with its run-time parts as a plain word (+…).
			out = append(out, plainVariant(cmd, i))
		}
	}
	if len(at) == 0 {
		return out
	}
	opts := variantOptions(g, spec, value)
	if spec.kind == kindGit && len(opts) == 0 {
		// The options classifyGit reads after any subcommand, for the
		// subcommands whose grammar lists none (log, show, diff).
		for _, o := range []string{"--output", "--open-files-in-pager", "--exec", "--upload-pack", "--receive-pack"} {
			opts = append(opts, []shellparse.Word{{Value: o + "=" + value.Value, Dynamic: value.Dynamic}})
		}
		opts = append(opts, []shellparse.Word{{Value: "--ext-diff"}})
	}
	reader := cmd.Name()
	if start > 1 {
		reader = optionLabel(cmd, start)
	}
	for _, i := range at {
		for _, o := range opts {
			if len(out) == maxVariants {
				return out
			}
			argv := make([]shellparse.Word, 0, len(cmd.Argv)+1)
			argv = append(argv, cmd.Argv[:i]...)
			argv = append(argv, o...)
			argv = append(argv, cmd.Argv[i+1:]...)
			c := cmd
			c.Argv = argv
			name, _, _ := strings.Cut(o[0].Value, "=")
			out = append(out, OptionVariant{Command: c, Word: cmd.Argv[i].Value, Option: name, Reader: reader})
		}
	}
	return out
}

// dynamicAfter are the indexes of the words computed at run time from i
// on, the first few.
func dynamicAfter(argv []shellparse.Word, i int) []int {
	var out []int
	for ; i < len(argv) && len(out) < maxVariantWords; i++ {
		if argv[i].Dynamic {
			out = append(out, i)
		}
	}
	return out
}

// plainVariant is cmd with the word at i read as the plain word it may
// be: its quotes removed and each expansion an x (+"$B" is +x), the
// Option showing it with … for what runs (+…).
func plainVariant(cmd shellparse.Command, i int) OptionVariant {
	w, shown := plainWord(cmd.Argv[i].Value)
	argv := slices.Clone(cmd.Argv)
	argv[i] = shellparse.Word{Value: w}
	c := cmd
	c.Argv = argv
	return OptionVariant{Command: c, Word: cmd.Argv[i].Value, Option: shown, Reader: cmd.Name(), Plain: true}
}

// plainWord reads a word's source text as the shell may expand it with
// each expansion ($NAME, ${…}, $(…), `…`) as one plain x: quotes are
// removed. shown has … for each expansion.
func plainWord(src string) (w, shown string) {
	var b, s strings.Builder
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '"' || c == '\'':
			continue
		case c == '\\' && i+1 < len(src):
			i++
			b.WriteByte(src[i])
			s.WriteByte(src[i])
			continue
		case c == '`':
			if j := strings.IndexByte(src[i+1:], '`'); j >= 0 {
				i += j + 1
			} else {
				i = len(src)
			}
		case c == '$' && i+1 < len(src) && (src[i+1] == '(' || src[i+1] == '{'):
			open, shut := src[i+1], byte(')')
			if open == '{' {
				shut = '}'
			}
			depth, j := 0, i+1
			for ; j < len(src); j++ {
				if src[j] == open {
					depth++
				} else if src[j] == shut {
					if depth--; depth == 0 {
						break
					}
				}
			}
			i = j
		case c == '$' && i+1 < len(src) && (isIdentByte(src[i+1]) || strings.IndexByte("@*#?!$-", src[i+1]) >= 0):
			j := i + 1
			if isIdentByte(src[j]) {
				for j+1 < len(src) && isIdentByte(src[j+1]) {
					j++
				}
			}
			i = j
		default:
			b.WriteByte(c)
			s.WriteByte(c)
			continue
		}
		b.WriteByte('x')
		s.WriteString("…")
	}
	return b.String(), s.String()
}

// takesNext reports whether an option word takes the next word as its
// value.
func takesNext(g *grammar, spec toolSpec, v string) bool {
	if g == nil {
		return spec.takes(v)
	}
	if strings.HasPrefix(v, "--") {
		return g.takesValue(v)
	}
	l := shortLetters(g, v)
	return l != "" && len(l) == len(v)-1 && g.shortArg(l[len(l)-1]) == argRequired
}

// mayBeOption reports whether a word computed at run time, given as its
// source text, may begin with a dash: it begins with an expansion ($…,
// `…`), perhaps inside quotes. A word that begins with a literal
// character (v$(cat VERSION), origin/$B) cannot; a glob is a file name.
func mayBeOption(src string) bool {
	src = strings.TrimLeft(src, `"'`)
	return strings.HasPrefix(src, "$") && !strings.HasPrefix(src, "$'") || strings.HasPrefix(src, "`")
}

// variantOptions are the words that stand in for a run-time word: each
// option of the grammar once (its long name where it has one), with value
// when it takes one; with no grammar, the options the catalog lists for
// the program.
func variantOptions(g *grammar, spec toolSpec, value shellparse.Word) [][]shellparse.Word {
	var out [][]shellparse.Word
	add := func(name string, arg argKind) {
		switch {
		case arg != argRequired:
			out = append(out, []shellparse.Word{{Value: name}})
		case strings.HasPrefix(name, "--"):
			out = append(out, []shellparse.Word{{Value: name + "=" + value.Value, Dynamic: value.Dynamic}})
		default:
			out = append(out, []shellparse.Word{{Value: name}, value})
		}
	}
	if g != nil {
		for _, grp := range g.groups {
			name := grp.names[0]
			for _, n := range grp.names {
				if strings.HasPrefix(n, "--") {
					name = n
					break
				}
			}
			add(name, grp.arg)
		}
		return out
	}
	for _, list := range [][]string{spec.runs, spec.outs, spec.ins, spec.opts} {
		for _, n := range list {
			add(n, argRequired)
		}
	}
	return out
}
