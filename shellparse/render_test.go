package shellparse

import "strings"

func testEnv() Env {
	return Env{Home: "/home/u", Cwd: "/work", Vars: map[string]string{"USER": "u"}}
}

// render writes a command compactly for table tests:
//
//	[context > context] wrapper+wrapper: A=1 ! prog `dyn` arg >target {by}>file # notes
//
// "!" marks a dynamic command, backquotes a dynamic word.
func render(c Command) string {
	var b strings.Builder
	if len(c.Context) > 0 {
		b.WriteString("[" + strings.Join(c.Context, " > ") + "] ")
	}
	if len(c.Wrappers) > 0 {
		names := make([]string, len(c.Wrappers))
		for i, w := range c.Wrappers {
			names[i] = w.Name
		}
		b.WriteString(strings.Join(names, "+") + ": ")
	}
	for _, a := range c.Assigns {
		b.WriteString(a + " ")
	}
	if c.Dynamic {
		b.WriteString("! ")
	}
	for i, w := range c.Argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(renderWord(w))
	}
	for _, r := range c.Redirects {
		if r.By != "" {
			b.WriteString(" {" + r.By + "}" + r.Op + renderWord(r.Target))
			continue
		}
		b.WriteString(" " + r.Fd + r.Op + renderWord(r.Target))
	}
	return b.String()
}

func renderWord(w Word) string {
	if w.Dynamic {
		return "`" + w.Value + "`"
	}
	return w.Value
}
