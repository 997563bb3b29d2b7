package gate

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/classify"
	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/shellparse"
)

// Remembering what a person means. A person who approves `go test ./...`
// with --remember means "stop asking about go test", not "about this
// exact line" (go test -run X ./... would ask again) nor "about go". So
// the rule proposed for a command whose approval is always (code:exec,
// mail:send) is the narrowest useful one: the program and its subcommand
// (go test, cargo build, make test, git commit), and, after a subcommand
// that runs or fetches something it names, that name too (npm run lint,
// go get golang.org/x/tools). The catalog says which programs have
// subcommands and which name something (classify.Subcommand). A program
// without subcommands keeps the words it was approved with, as before.
//
// What a remembered rule never covers, whatever the person chooses:
//
//   - a broad program (shells, interpreters, env, sudo, xargs, find, awk,
//     npx ...): any prefix of it runs any code, except the subcommands the
//     catalog says only work on the project (bun test, deno lint;
//     classify.ProjectSubcommand);
//   - every use of a program: a prefix of its name alone. A command that
//     was only its name (make) is remembered as exactly that (Exact: an
//     argc condition), which runs the makefile the pin binds;
//   - a word not known before the command runs;
//   - an option that makes the program run other code, read other files
//     or work elsewhere (make -f, -C, --eval, VAR=...; npm --prefix; git
//     -c, -C; go -toolexec ...): not inside the prefix (policy.PrefixEscape),
//     and not after it either, since an argv_prefix allow rule never
//     covers such words in the rest of the command (policy's
//     prefixscope.go), nor a variable given to the command that does the
//     same (PAGER=..., GIT_DIR=...). A command holding such an option
//     after every prefix it could have (go build -o bin/x) is left to
//     ask: no rule would cover it.
//
// The pin. A remembered rule carries the pin of the command approved:
// the file PATH resolved its program to (and that file's identity when
// the user may change it), the environment variables that change what
// runs, and the content of the scripts it runs (a makefile, package.json
// for npm run, the file named when the program is a path). At every
// rerun the gate computes the same pin over the whole rerun command,
// words after the prefix included, and the rule matches only when the
// two are equal. So generalising the prefix widens the words a rule
// covers (options, packages, test names), never the code it runs: a
// rerun whose program resolves elsewhere, or whose makefile or
// package.json changed, or that names another script, has another pin
// and asks again. Where the script is named by an operand, the operand
// stays in the prefix (interpreters are broad programs and are never
// generalised; the subcommands that run what they name keep the name).

// errNothingToRemember is returned when a --remember finds nothing safe
// to remember in a request.
var errNothingToRemember = errors.New("nothing to remember for this request")

// rememberItems works out, when a request asks, what --remember would
// remember for each of its asking commands that use a capability whose
// approval is always: the proposed prefix and the command's pin, or why
// it is left to ask.
func rememberItems(dec *Decision, bound *binding) []approvals.RememberItem {
	var out []approvals.RememberItem
	for i := range dec.Commands {
		c := &dec.Commands[i]
		if c.Outcome != policy.Ask || c.Policy == nil || !usesAlways(c.Policy.Accesses) {
			continue
		}
		cmd, _ := classify.ExpandOptions(c.Command)
		item := approvals.RememberItem{Argv: cmd.Strings(), Static: staticWords(cmd)}
		switch {
		case c.DecidedBy == string(policy.ByFloor) || c.DecidedBy == "parse":
			item.Why = "it asks whatever a rule says: " + c.Reason
		case c.Policy.Rule != nil:
			item.Why = "the policy's rule " + fmt.Sprintf("%q", c.Policy.Rule.Name) + " asks about it, whatever is remembered"
		default:
			if why := envEscapeOf(cmd); why != "" {
				item.Why = why
				break
			}
			p, exact, err := proposePrefix(item.Argv, item.Static)
			if err != nil {
				item.Why = err.Error()
				break
			}
			item.Prefix, item.Exact = p, exact
			if bound != nil {
				item.Pin = bound.Pin(cmd)
			}
		}
		if !slices.ContainsFunc(out, func(o approvals.RememberItem) bool { return sameItem(o, item) }) {
			out = append(out, item)
		}
	}
	return out
}

func sameItem(a, b approvals.RememberItem) bool {
	if a.Why != "" || b.Why != "" {
		return slices.Equal(a.Argv, b.Argv) && a.Why == b.Why
	}
	return slices.Equal(a.Prefix, b.Prefix) && a.Exact == b.Exact && a.Pin == b.Pin
}

// usesAlways reports an access whose capability's approval is always.
func usesAlways(acc []policy.AccessResult) bool {
	for _, a := range acc {
		if s, err := policy.Lookup(a.Capability); err != nil || s.DefaultApproval == policy.ApprovalAlways {
			return true
		}
	}
	return false
}

// staticWords is how many leading words of a command are known before it
// runs.
func staticWords(cmd shellparse.Command) int {
	if cmd.Dynamic {
		return 0
	}
	for i, w := range cmd.Argv {
		if w.Dynamic {
			return i
		}
	}
	return len(cmd.Argv)
}

// envEscapeOf says why a variable given to the command makes it another
// command than its words name, as the policy reads it (a rule for its
// words would not match it), or "".
func envEscapeOf(cmd shellparse.Command) string {
	for _, a := range cmd.Assigns {
		n, val, known := classify.SplitAssign(a)
		if j := classify.JudgeEnv(n, val, known); j.Capability != "" {
			return "it is given " + n + ", which " + j.Why + ": a remembered rule never covers that"
		}
	}
	return ""
}

// plainName reports a word that can be a subcommand or the name after
// one: letters, digits and . _ : @ / + - inside, not an option, an
// assignment or a path that climbs.
func plainName(w string) bool {
	if w == "" || w[0] == '-' || w[0] == '+' || strings.Contains(w, "..") {
		return false
	}
	for _, r := range w {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("._:@/+-", r):
		default:
			return false
		}
	}
	return true
}

// proposePrefix is the narrowest useful prefix for a command's words, of
// which the first static are known before it runs: see the comment at
// the top. exact means the rule covers those words and no more.
func proposePrefix(argv []string, static int) (prefix []string, exact bool, err error) {
	if len(argv) == 0 || static == 0 {
		return nil, false, errors.New("its program is not known before it runs")
	}
	name := path.Base(argv[0])
	n := len(argv)
	if len(argv) > 1 {
		if ok, named := classify.Subcommand(name, argv[1]); ok && plainName(argv[1]) {
			n = 2
			switch {
			case !named:
			case len(argv) == 2:
				// npm install, npm run: the rule covers them and no more
				// (npm install left-pad asks).
				exact = true
			case plainName(argv[2]):
				n = 3
			default:
				n = len(argv)
			}
		}
	} else {
		exact = true
	}
	if n > static {
		return nil, false, fmt.Errorf("the word %q is not known before the command runs", argv[static])
	}
	prefix = slices.Clone(argv[:n])
	if err := checkPrefix(prefix, argv); err != nil {
		return nil, false, err
	}
	return prefix, exact, nil
}

// checkPrefix refuses a prefix (of the approved words argv) that a
// remembered rule may not hold: see the comment at the top.
func checkPrefix(prefix, argv []string) error {
	name := path.Base(prefix[0])
	if broadProgram(name) && (len(prefix) < 2 || !classify.ProjectSubcommand(name, prefix[1])) {
		return fmt.Errorf("a rule for %s would allow running any code", name)
	}
	if len(prefix) == 1 && len(argv) > 1 {
		return fmt.Errorf("a rule for a bare %s would allow every use of it", name)
	}
	for _, w := range prefix {
		if w == "" || strings.ContainsAny(w, "$`*?[\n") {
			return fmt.Errorf("the word %q is dynamic or unusual", w)
		}
	}
	if ok, named := classify.Subcommand(name, prefix[len(prefix)-1]); ok && named && len(prefix) == 2 && len(argv) > 2 {
		return fmt.Errorf("%s would allow whatever %s %s is given: a remembered rule keeps what it names", strings.Join(prefix, " "), name, prefix[1])
	}
	if len(prefix) == 3 {
		if ok, named := classify.Subcommand(name, prefix[1]); ok && named && prefix[2] != "." && broadProgram(path.Base(prefix[2])) {
			return fmt.Errorf("%s runs %s, which runs any code", strings.Join(prefix[:2], " "), prefix[2])
		}
	}
	if why := policy.PrefixEscape(prefix); why != "" {
		return errors.New(why)
	}
	if why := policy.TailEscape(argv, len(prefix)); why != "" {
		// No rule for a prefix covers what follows it here: a rule that
		// would not cover the command approved is not remembered.
		return fmt.Errorf("no rule covers it: %s", strings.Replace(why, "after the prefix ", "", 1))
	}
	return nil
}

// choosePrefix checks a prefix a person chose (approve --prefix) for a
// command: it must begin the command's words, reach no word unknown
// before it runs, and pass checkPrefix. The first word may be written as
// the program's base name.
func choosePrefix(item approvals.RememberItem, words []string) (prefix []string, exact bool, err error) {
	if !isPrefixOf(words, item.Argv) {
		return nil, false, fmt.Errorf("%q does not begin %q", strings.Join(words, " "), strings.Join(item.Argv, " "))
	}
	if len(words) > item.Static {
		return nil, false, fmt.Errorf("the word %q is not known before the command runs", item.Argv[item.Static])
	}
	prefix = slices.Clone(words)
	if err := checkPrefix(prefix, item.Argv); err != nil {
		return nil, false, err
	}
	// A command that is only its program (make), or its program and a
	// subcommand that installs or runs what it names, given nothing to
	// name (npm install: package.json's dependencies), is remembered
	// exactly: as a prefix it would cover installing or running anything.
	return prefix, len(item.Argv) == 1 || len(prefix) == len(item.Argv) && namesNext(prefix), nil
}

// namesNext reports words that end with a subcommand after which the next
// word is named too (npm install, go get, npm run: classify.Subcommand).
func namesNext(words []string) bool {
	if len(words) != 2 {
		return false
	}
	ok, named := classify.Subcommand(path.Base(words[0]), words[1])
	return ok && named
}

// prefixChoices lists the prefixes --prefix may choose for a command, as
// a person types them: every beginning of its words that choosePrefix
// accepts, "(exactly)" after one remembered as exactly those words.
func prefixChoices(item approvals.RememberItem) []string {
	var out []string
	for n := 1; n <= min(item.Static, len(item.Argv)); n++ {
		words := slices.Clone(item.Argv[:n])
		words[0] = path.Base(words[0])
		if _, exact, err := choosePrefix(item, words); err == nil {
			w := strings.Join(words, " ")
			if exact {
				w += " (exactly)"
			}
			out = append(out, w)
		}
	}
	return out
}

// choicesLine says which prefixes --prefix may choose for a command.
func choicesLine(item approvals.RememberItem) string {
	c := prefixChoices(item)
	if len(c) == 0 {
		return "no prefix of " + quoteArgv(item.Argv) + " can be remembered"
	}
	return "the prefixes that can be remembered for " + quoteArgv(item.Argv) + ": " + quotedList(c)
}

// quotedList quotes each of words, comma separated.
func quotedList(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = fmt.Sprintf("%q", w)
	}
	return strings.Join(q, ", ")
}

// isPrefixOf reports whether words begin argv (the first word compared
// as a base name when words does not hold a path).
func isPrefixOf(words, argv []string) bool {
	if len(words) == 0 || len(words) > len(argv) {
		return false
	}
	for i, w := range words {
		a := argv[i]
		if i == 0 && !strings.Contains(w, "/") {
			a = path.Base(a)
		}
		if w != a {
			return false
		}
	}
	return true
}

// broadProgram reports a program whose prefix would allow arbitrary code.
func broadProgram(name string) bool {
	switch name {
	case "bash", "sh", "dash", "zsh", "ksh", "fish", "ash", "csh", "tcsh", "busybox",
		"python", "python2", "python3", "node", "nodejs", "deno", "bun", "perl", "ruby",
		"php", "lua", "luajit", "tclsh", "wish", "Rscript", "julia", "osascript", "pwsh",
		"env", "sudo", "doas", "su", "runuser", "pkexec", "xargs", "eval", "exec", "command",
		"builtin", "nohup", "nice", "ionice", "timeout", "time", "stdbuf", "setsid", "watch",
		"flock", "parallel", "script", "chroot", "unshare", "nsenter", "ssh", "find",
		"npx", "pnpx", "uvx", "pipx", "mnemos", "awk", "gawk", "mawk", "sed", "source", ".":
		return true
	}
	return strings.HasPrefix(name, "python") || strings.HasPrefix(name, "ruby") || strings.HasPrefix(name, "perl")
}

// SafePrefix returns the argv_prefix a "don't ask again" rule proposes for
// a command's words (see the comment at the top), or an error when no
// prefix of them is safe. A command that is only its program's name has
// no safe prefix: it is remembered exactly (approve --remember does).
func SafePrefix(argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	p, exact, err := proposePrefix(argv, len(argv))
	if err == nil && exact && len(p) == 1 {
		err = fmt.Errorf("a rule for a bare %s would allow every use of it", path.Base(argv[0]))
	}
	if err != nil {
		return nil, fmt.Errorf("refusing to remember %s: %w; approve once instead, or write a narrower rule in the policy", quoteArgv(argv), err)
	}
	return p, nil
}

// quoteArgv shows words on one line for a message.
func quoteArgv(argv []string) string {
	const most = 80
	s := strings.Join(argv, " ")
	if len(s) > most {
		s = s[:most] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// RememberChoices says, one line each, what approving a request with
// --remember would remember: the allow rules proposed for its commands
// that run code or send mail, the commands left to ask and why, and the
// grants for its other accesses. Empty when there is nothing to
// remember (an extension's request, or nothing with a target).
func RememberChoices(p approvals.Pending) []string {
	if _, ok := ExtensionOf(p); ok {
		return nil
	}
	if onceOnly(p) != "" {
		return []string{"nothing: it runs outside the sandbox, so it is approved once, never remembered"}
	}
	if why := p.Details.Meta[metaDropsAsk]; why != "" {
		// Nothing remembered would stop it asking (dropsAskAnyway).
		return []string{"nothing: " + why}
	}
	var out, rules, others []string
	for _, it := range p.Details.Remember {
		if it.Why != "" || it.Pin == "" {
			why := it.Why
			if why == "" {
				why = "what it runs besides its words was not recorded"
			}
			out = append(out, fmt.Sprintf("left to ask: %s: %s", strings.Join(it.Argv, " "), why))
			continue
		}
		r := strings.Join(it.Prefix, " ")
		proposed := r
		if it.Exact {
			r += " (exactly)"
			proposed = r
		} else if len(it.Prefix) < len(it.Argv) {
			r += " ..."
		}
		rules = append(rules, r)
		for _, c := range prefixChoices(it) {
			if c != proposed && !slices.Contains(others, c) {
				others = append(others, c)
			}
		}
	}
	if len(rules) > 0 {
		alt := "no other prefix can be remembered"
		if len(others) > 0 {
			const most = 6
			if len(others) > most {
				others = append(others[:most], "...")
			}
			alt = "--prefix WORDS for another prefix: " + strings.Join(others, ", ")
		}
		out = append([]string{"allow " + strings.Join(rules, ", ") + " (--remember permanent: in the policy file; session: for this session, 12h at most; " + alt + ")"}, out...)
	}
	var grants []string
	writes := false
	for _, a := range p.Details.Accesses {
		s, err := policy.Lookup(a.Capability)
		if err != nil || s.DefaultApproval == policy.ApprovalAlways || a.Target == "" {
			continue
		}
		grants = append(grants, string(a.Capability)+" on "+a.Target)
		writes = writes || a.Capability == classify.FSWrite
	}
	if len(grants) > 0 {
		line := "grant " + strings.Join(grants, ", ") + " (--remember session or permanent, --for DURATION"
		if writes {
			line += "; --under DIR for a directory's subtree"
		}
		out = append(out, line+")")
	}
	return out
}
