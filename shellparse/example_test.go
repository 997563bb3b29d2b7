package shellparse_test

import (
	"fmt"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

func ExampleParseScript() {
	src := `x=rm; cd /tmp/build && sudo $x -rf ~/cache $(cat list) | tee log`
	s, err := shellparse.ParseScript(src, shellparse.Env{Home: "/home/ada"})
	if err != nil {
		fmt.Println("deny:", err)
		return
	}
	for _, c := range s.Commands {
		var wrappers []string
		for _, w := range c.Wrappers {
			wrappers = append(wrappers, w.Name)
		}
		var args []string
		for _, w := range c.Argv {
			if w.Dynamic {
				args = append(args, "<"+w.Value+">")
			} else {
				args = append(args, w.Value)
			}
		}
		fmt.Printf("%-8s %-12s %-10s %s\n", c.Name(), strings.Join(c.Context, ","), strings.Join(wrappers, ","), strings.Join(args, " "))
	}
	// Output:
	// cd       &&                      cd /tmp/build
	// cat      &&,|,$(…)               cat list
	// rm       &&,|         sudo       rm -rf /home/ada/cache <$(cat list)>
	// tee      &&,|                    tee log
}
