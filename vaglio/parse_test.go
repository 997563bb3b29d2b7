package vaglio

import (
	"testing"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// These cases go through the real parser, so they also pin down the
// contract between shellparse's output (contexts, wrappers, dynamic words)
// and the guard.

func parseEnv() shellparse.Env { return shellparse.Env{Home: "/home/u", Cwd: "/home/u/proj"} }

func firstCheck(g Guard, s *shellparse.Script) string {
	if hits := g.CheckScript(s, parseEnv().Cwd); len(hits) > 0 {
		return hits[0].Check
	}
	return ok
}

// TestSecurityGuardOnParsedScripts: shell source as an agent writes it.
func TestSecurityGuardOnParsedScripts(t *testing.T) {
	g := testGuard()
	for _, tc := range []struct {
		src  string
		want string
	}{
		{":(){ :|:& };:", irr},
		{"bomb() { bomb | bomb & }; bomb", irr},
		{"f() { f; }; f", ok},
		{"sudo rm -rf /", irr},
		{"env -i FOO=1 timeout 5 nice rm -rf /", irr},
		{"command rm -rf /", irr},
		{"exec rm -rf /", irr},
		{"bash -c 'rm -rf $HOME'", irr},
		{"rm -rf ~/*", irr},
		{"rm -rf \"$HOME\"/", irr},
		{"cd / && rm -rf *", irr},
		{"cd build && rm -rf *", ok},
		{"find / -exec rm -rf {} \\;", irr},
		{"find . -name '*.o' -delete", ok},
		{"dd if=/dev/zero of=/dev/$DISK", irr},
		{"cat image.iso > /dev/sdb", irr},
		{"chmod -R 777 /", irr},
		{"mkfs.ext4 /dev/sdb1", irr},
		{"cat ~/.ssh/id_rsa", fp},
		{"cat ~/.ssh/*.pub", ok},
		{"ls ~/.ssh && cat ~/.ssh/known_hosts", ok},
		{"cat ~/.ssh/$K", fp},
		{"cat /et?/shad*", fp},
		{"X=~/.ssh/id_rsa; cat $X", fp},
		{"cat \"$HOME/.netrc\"", fp},
		{"echo $(cat /etc/shadow)", fp},
		{"KEY=$(cat ~/.aws/credentials) make deploy", fp},
		{"cat <<EOF\n/etc/shadow\nEOF", ok},
		{"python3 <<EOF\nprint(open('/etc/shadow').read())\nEOF", fp},
		{"python3 -c \"print(open('/home/u/.ssh/id_rsa').read())\"", fp},
		{"echo hi > ~/.config/mnemos/policy.yaml", st},
		{"mnemos run -- mnemos approvals approve 1", st},
		{"mnemos approvals list && mnemos audit verify", ok},
		{"echo 'rm -rf /'", ok},
		{"git commit -m 'never cat /etc/shadow'", ok},
		{"grep -r mkfs .", ok},
		{"man dd", ok},
		{"rm -rf ./build node_modules", ok},
		{"go test ./... 2>&1 | tee /tmp/test.log", ok},
	} {
		s, err := shellparse.ParseScript(tc.src, parseEnv())
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		if got := firstCheck(g, s); got != tc.want {
			t.Errorf("%q: first hit %q, want %q (commands %+v)", tc.src, got, tc.want, s.Commands)
		}
	}
}

func TestSecurityGuardOnParsedArgv(t *testing.T) {
	g := testGuard()
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"sh", "-c", "rm -rf ~"}, irr},
		{[]string{"sudo", "rm", "-rf", "/"}, irr},
		{[]string{"mnemos", "approvals", "approve", "1"}, st},
		{[]string{"python3", "-c", "open('/etc/shadow')"}, fp},
		{[]string{"cat", "~/.ssh/id_rsa"}, fp},
		{[]string{"git", "status"}, ok},
		{[]string{"echo", "rm -rf /"}, ok},
	} {
		s, err := shellparse.ParseArgv(tc.argv, parseEnv())
		if err != nil {
			t.Errorf("%q: %v", tc.argv, err)
			continue
		}
		if got := firstCheck(g, s); got != tc.want {
			t.Errorf("%q: first hit %q, want %q (commands %+v)", tc.argv, got, tc.want, s.Commands)
		}
	}
}
