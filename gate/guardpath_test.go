package gate

import (
	"slices"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/policy"
	"github.com/mnemos-dev/mnemos/vaglio"
)

// The guard as the gate runs it: each command checked by the directory
// checker for the directories it may start in (cmdDirs, vaglio's ForDirs),
// after the real parser. These tables pin down the contract between
// shellparse's output (contexts, wrappers, dynamic words, cd targets) and
// the guard on the path the product takes.

const (
	gfp  = vaglio.CheckForbiddenPath
	girr = vaglio.CheckIrrecoverable
	gst  = vaglio.CheckSelfTamper
	gok  = "" // no hit
)

// firstGuardHit returns the first guard hit of a decision, and the index
// of the command it is on (-1 when none).
func firstGuardHit(d Decision) (vaglio.Hit, int) {
	for i, c := range d.Commands {
		if c.Guard != nil {
			return *c.Guard, i
		}
	}
	return vaglio.Hit{}, -1
}

// guardSubst writes the fixture's places into a test line: @HOME@, @WS@
// and @POLICY@ (mnemos's policy file).
func (f *fixture) guardSubst(s string) string {
	return strings.NewReplacer("@HOME@", f.home, "@WS@", f.ws, "@POLICY@", f.g.cfg.Paths.PolicyFile).Replace(s)
}

// TestSecurityGuardFollowsCd: a command after a static cd is checked in
// the cd's target, whether it runs only after the cd (&&) or maybe
// without it (;).
func TestSecurityGuardFollowsCd(t *testing.T) {
	f := newFixture(t, "")
	for _, tc := range []struct {
		src     string
		index   int // of the command hit; -1: no hit
		pattern string
	}{
		{"cd / && rm -rf *", 1, "rm -r /*"},
		{"cd /; rm -rf *", 1, "rm -r /*"},
		{"cd /tmp && cd / && rm -rf *", 2, "rm -r /*"},
		{"cd /tmp && cd .. && rm -rf *", 2, "rm -r /*"},
		{"cd /tmp; cd ..; rm -rf *", 2, "rm -r ~/../*"}, // from the workspace, .. holds the home directory
		{"pushd / && rm -rf *", 1, "rm -r /*"},
		{"cd && rm -rf *", 1, "rm -r ~/*"},
		{"cd ~ && rm -rf *", 1, "rm -r ~/*"},
		{"cd -- / && rm -rf *", 1, "rm -r /*"},
		{"cd build && rm -rf *", -1, ""},
		{"cd ./build; rm -rf *", -1, ""},
		{"cd .. && rm -rf ws", 1, "rm -r WORKSPACE"},
	} {
		d := f.decide(t, Mode{DryRun: true}, "bash", "-c", tc.src)
		h, i := firstGuardHit(d)
		if i != tc.index || tc.index >= 0 && (h.Check != girr || h.Pattern != tc.pattern) {
			t.Errorf("%q: hit %+v on command %d, want %q on command %d", tc.src, h, i, tc.pattern, tc.index)
		}
	}
}

// TestSecurityGuardOnParsedScripts: shell source as an agent writes it.
func TestSecurityGuardOnParsedScripts(t *testing.T) {
	f := newFixture(t, "")
	for _, tc := range []struct {
		src  string
		want string
	}{
		{":(){ :|:& };:", girr},
		{"bomb() { bomb | bomb & }; bomb", girr},
		{"f() { f; }; f", gok},
		{"sudo rm -rf /", girr},
		{"env -i FOO=1 timeout 5 nice rm -rf /", girr},
		{"command rm -rf /", girr},
		{"exec rm -rf /", girr},
		{"bash -c 'rm -rf $HOME'", girr},
		{"rm -rf ~/*", girr},
		{"rm -rf \"$HOME\"/", girr},
		{"cd / && rm -rf *", girr},
		{"cd build && rm -rf *", gok},
		{"find / -exec rm -rf {} \\;", girr},
		{"find . -name '*.o' -delete", gok},
		{"dd if=/dev/zero of=/dev/$DISK", girr},
		{"cat image.iso > /dev/sdb", girr},
		{"chmod -R 777 /", girr},
		{"mkfs.ext4 /dev/sdb1", girr},
		{"cat ~/.ssh/id_rsa", gfp},
		{"cat ~/.ssh/*.pub", gok},
		{"ls ~/.ssh && cat ~/.ssh/known_hosts", gok},
		{"cat ~/.ssh/$K", gfp},
		{"cat /et?/shad*", gfp},
		{"X=~/.ssh/id_rsa; cat $X", gfp},
		{"cat \"$HOME/.netrc\"", gfp},
		{"echo $(cat /etc/shadow)", gfp},
		{"KEY=$(cat ~/.aws/credentials) make deploy", gfp},
		{"cat <<EOF\n/etc/shadow\nEOF", gok},
		{"python3 <<EOF\nprint(open('/etc/shadow').read())\nEOF", gfp},
		{"python3 -c \"print(open('@HOME@/.ssh/id_rsa').read())\"", gfp},
		{"echo hi > @POLICY@", gst},
		{"mnemos run -- mnemos approvals approve 1", gst},
		{"mnemos approvals list && mnemos audit verify", gok},
		{"echo 'rm -rf /'", gok},
		{"git commit -m 'never cat /etc/shadow'", gok},
		{"grep -r mkfs .", gok},
		{"man dd", gok},
		{"rm -rf ./build node_modules", gok},
		{"go test ./... 2>&1 | tee /tmp/test.log", gok},
	} {
		src := f.guardSubst(tc.src)
		d := f.decide(t, Mode{DryRun: true}, "bash", "-c", src)
		if h, _ := firstGuardHit(d); h.Check != tc.want {
			t.Errorf("%q: first hit %q, want %q (%s)", src, h.Check, tc.want, describe(d))
		}
	}
}

// TestSecurityGuardOnParsedArgv: argv as a hook or `mnemos run --` passes
// it, without a shell of its own.
func TestSecurityGuardOnParsedArgv(t *testing.T) {
	f := newFixture(t, "")
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"sh", "-c", "rm -rf ~"}, girr},
		{[]string{"sudo", "rm", "-rf", "/"}, girr},
		{[]string{"mnemos", "approvals", "approve", "1"}, gst},
		{[]string{"python3", "-c", "open('/etc/shadow')"}, gfp},
		{[]string{"cat", "~/.ssh/id_rsa"}, gfp},
		{[]string{"git", "status"}, gok},
		{[]string{"echo", "rm -rf /"}, gok},
	} {
		d := f.decide(t, Mode{DryRun: true}, tc.argv...)
		if h, _ := firstGuardHit(d); h.Check != tc.want {
			t.Errorf("%q: first hit %q, want %q (%s)", tc.argv, h.Check, tc.want, describe(d))
		}
	}
}

// TestSecurityGateGuardCoversCheck: on every corpus line, the gate's guard
// hits a command exactly when the single-command check hits it in one of
// the directories the gate says it may start in, and a command that does
// not depend on a cd before it may start in the working directory. The
// directory checker's shortcuts (judging once for ordinary directories)
// never miss what the check finds.
func TestSecurityGateGuardCoversCheck(t *testing.T) {
	f := newFixture(t, "")
	guard := vaglio.Guard{Home: f.home, Protected: f.g.cfg.Paths.Protected(), SelfNames: f.g.cfg.SelfNames, Workspace: f.ws}
	var cases []corpusCase
	cases = append(cases, loadCorpus(t, "caught.txt", "notallow", "deny", "guard")...)
	cases = append(cases, loadCorpus(t, "benign.txt", "any", "allow", "ask", "notdeny")...)
	hits := 0
	for _, tc := range cases {
		src := f.guardSubst(tc.cmd)
		d := f.decide(t, Mode{DryRun: true, Explain: true}, "bash", "-c", src)
		for i, c := range d.Commands {
			if c.GuardChecks == nil {
				continue // not judged: the decision stopped before it
			}
			if c.Command.AfterCd == 0 && !slices.Contains(c.GuardDirs, f.ws) {
				t.Errorf("line %d %q, command %d %s: guard dirs %q leave out the working directory", tc.line, tc.cmd, i, c.Text, c.GuardDirs)
			}
			var want *vaglio.Hit
			for _, dir := range c.GuardDirs {
				if h, ok := guard.Check(c.Command, dir); ok {
					want = &h
					break
				}
			}
			switch {
			case want != nil && c.Guard == nil:
				t.Errorf("line %d %q, command %d %s: Check hits (%s) in %q, the gate does not", tc.line, tc.cmd, i, c.Text, want.Reason, c.GuardDirs)
			case want == nil && c.Guard != nil:
				t.Errorf("line %d %q, command %d %s: the gate hits (%s), Check does not in %q", tc.line, tc.cmd, i, c.Text, c.Guard.Reason, c.GuardDirs)
			case want != nil:
				hits++
			}
			if c.Guard != nil && c.Outcome != policy.Deny {
				t.Errorf("line %d %q, command %d: guard hit, outcome %s", tc.line, tc.cmd, i, c.Outcome)
			}
		}
	}
	if hits == 0 {
		t.Fatal("no guard hit in the corpus")
	}
}
