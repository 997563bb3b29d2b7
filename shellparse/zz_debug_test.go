package shellparse

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestZZDebug(t *testing.T) {
	in := os.Getenv("SP")
	if in == "" {
		t.Skip()
	}
	env := Env{Home: "/home/u", Cwd: "/w"}
	var s *Script
	var err error
	if strings.HasPrefix(in, "ARGV:") {
		s, err = ParseArgv(strings.Split(in[5:], "\x1f"), env)
	} else {
		s, err = ParseScript(in, env)
	}
	if err != nil {
		t.Logf("error: %v (%T)", err, err)
		return
	}
	for _, c := range s.Commands {
		var ws []string
		for _, x := range c.Wrappers {
			ws = append(ws, x.Name+"="+strings.Join(x.Argv, " "))
		}
		var av []string
		for _, x := range c.Argv {
			if x.Dynamic {
				av = append(av, "~"+x.Value+"~")
			} else {
				av = append(av, x.Value)
			}
		}
		b, _ := json.Marshal(c.Redirects)
		t.Logf("ctx=%q wr=%q argv=%q dyn=%v assigns=%q redirs=%s notes=%q", c.Context, ws, av, c.Dynamic, c.Assigns, b, c.Notes)
	}
}
