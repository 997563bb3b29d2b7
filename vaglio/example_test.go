package vaglio_test

import (
	"fmt"

	"github.com/mnemos-dev/mnemos/shellparse"
	"github.com/mnemos-dev/mnemos/vaglio"
)

func ExampleGuard_Check() {
	g := vaglio.Guard{
		Home:      "/home/ada",
		Protected: []string{"/home/ada/.config/mnemos", "/home/ada/.local/state/mnemos"},
	}
	argv := func(words ...string) shellparse.Command {
		var c shellparse.Command
		for _, w := range words {
			c.Argv = append(c.Argv, shellparse.Word{Value: w})
		}
		return c
	}
	for _, cmd := range []shellparse.Command{
		argv("rm", "-rf", "./build"),
		argv("/bin/rm", "-r", "-f", "--", "~"),
		argv("echo", "never run rm -rf /"),
		argv("cat", "/etc/../etc/shadow"),
		argv("mnemos", "approvals", "approve", "42"),
	} {
		if hit, ok := g.Check(cmd, "/home/ada/proj"); ok {
			fmt.Println(hit.Check+":", hit.Reason)
		} else {
			fmt.Println("pass:", cmd)
		}
	}
	// Output:
	// pass: rm -rf ./build
	// irrecoverable: rm -r on "~" (irrecoverable: recursive delete of the home directory)
	// pass: echo never run rm -rf /
	// forbidden-path: cat on "/etc/../etc/shadow" (forbidden path /etc/shadow: password hashes)
	// self-tamper: mnemos approvals approve (self-tamper: resolves an approval)
}

func ExampleGuard_Prepare() {
	g := vaglio.Guard{Home: "/home/ada", Protected: []string{"/home/ada/.config/mnemos"}}.Prepare()
	rm := shellparse.Command{Argv: []shellparse.Word{{Value: "rm"}, {Value: "-rf"}, {Value: "mnemos"}}}
	for _, dir := range []string{"/home/ada/proj", "/home/ada/.config"} {
		if hit, ok := g.Check(rm, dir); ok {
			fmt.Println(dir+":", hit.Check, hit.Pattern)
		} else {
			fmt.Println(dir + ": pass")
		}
	}
	// Output:
	// /home/ada/proj: pass
	// /home/ada/.config: self-tamper /home/ada/.config/mnemos
}

func ExampleJudge_Judge() {
	cmd := shellparse.Command{Argv: []shellparse.Word{{Value: "cat"}, {Value: "/tmp/../etc/foo"}}}
	v := vaglio.Judge{}.Judge(vaglio.Input{Intent: "cat my notes", Command: cmd, Critical: true})
	fmt.Println(v.Approved, v.Reason)
	v = vaglio.Judge{Threshold: 0.99}.Judge(vaglio.Input{Command: cmd, Critical: true})
	fmt.Println(v.Approved, v.BlockedBy, v.Reason)
	// Output:
	// true approved: score 0.60 (intent matches command; possible path traversal ('..' in argument))
	// false judge judge: score 0.50 < threshold 0.99 (possible path traversal ('..' in argument))
}
