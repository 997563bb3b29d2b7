package policy_test

import (
	"context"
	"fmt"

	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// A condition rule and a prefix rule in one list, decided for one command.
func ExamplePolicy_Evaluate() {
	p, err := policy.Parse("policy.yaml", []byte(`level: supervised
rules:
  - name: no force push
    action: deny
    priority: 1000
    conditions:
      command: {equals: git}
      argv: {matches: ".* (-f|--force)( .*)?"}
    match: ["git push -f origin main"]
    not_match: ["git push --force-with-lease"]
  - name: git status
    action: allow
    command: {argv_prefix: [git, status]}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, argv := range [][]string{{"git", "push", "--force"}, {"git", "status"}, {"git", "commit", "-m", "wip"}} {
		script, _ := shellparse.ParseArgv(argv, shellparse.Env{Home: "/home/me", Cwd: "/home/me/proj"})
		in := policy.Input{Command: script.Commands[0], Place: classify.Place{Dirs: []string{"/home/me/proj"}, Home: "/home/me"},
			Workspace: "/home/me/proj", Level: p.Level, Channel: "cli", Sender: "me"}
		res, _ := p.Evaluate(context.Background(), in, nil)
		fmt.Printf("%v: %s (%s)\n", argv, res.Outcome, res.Reason)
	}
	// Output:
	// [git push --force]: deny (rule "no force push" denies it)
	// [git status]: allow (rule "git status" allows it)
	// [git commit -m wip]: ask (level supervised needs approval for fs:write)
}

// Lint reports every error with its position, or warnings for rules that
// can never decide.
func ExampleLint() {
	src := []byte(`ask:
  - {name: git, command: {argv_prefix: [git]}}
  - {name: git push, command: {argv_prefix: [git, push]}}
deny:
  - {name: bad, conditions: {argv: {matches: "(unclosed"}}}
`)
	for _, d := range policy.Lint("policy.yaml", src) {
		fmt.Println(d)
	}
	src = src[:len(src)-len("deny:\n  - {name: bad, conditions: {argv: {matches: \"(unclosed\"}}}\n")]
	for _, d := range policy.Lint("policy.yaml", src) {
		fmt.Println(d)
	}
	// Output:
	// policy.yaml:5:46: invalid regular expression: missing closing ): `(unclosed`
	// policy.yaml:3:5: warning: rule "git push" is unreachable: rule "git" (line 2, priority 100) is evaluated first and matches every command it matches
}
