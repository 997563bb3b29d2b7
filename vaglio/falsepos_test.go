package vaglio

import (
	"testing"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// guardScript runs the guard on every command of a parsed script and
// returns the first hit's check ("" for none).
func guardScript(t *testing.T, g Guard, src, cwd string) (Hit, bool) {
	t.Helper()
	s, err := shellparse.ParseScript(src, shellparse.Env{Home: g.Home, Cwd: cwd})
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	for _, c := range s.Commands {
		if h, hit := g.Check(c, cwd); hit {
			return h, true
		}
	}
	return Hit{}, false
}

// TestSecurityTildeLiteral: a quoted or escaped "~" names a file called
// "~" in the working directory, not the home directory; a "~" the shell
// expands, and one in words built without the parser (inline code's
// literals), stays home.
func TestSecurityTildeLiteral(t *testing.T) {
	const ws = "/home/u/proj"
	g := testGuard()
	g.Workspace = ws
	for _, tc := range []struct {
		src  string
		want string
	}{
		{`rm -rf \~`, ok},
		{`rm -rf '~'`, ok},
		{`rm -rf "~"`, ok},
		{`rm -rf '~/'`, ok},
		{`mkdir \~ && rm -rf \~`, ok},
		{`echo \~`, ok},
		{`rm -rf ~`, irr},
		{`rm -rf ~/`, irr},
		{`rm -rf ~/.`, irr},
		{`rm -rf ~""`, irr},
		{`rm -rf {~,a}`, irr},
		{`x=\~; rm -rf $x`, irr},
		{`eval rm -rf \~`, irr},
		{`bash -c 'rm -rf ~'`, irr},
		{`rm -rf $HOME`, irr},
		{`cat '~/.ssh/id_rsa'`, fp},
		{`python3 -c "import os,shutil; shutil.rmtree(os.path.expanduser('~'))"`, irr},
	} {
		h, hit := guardScript(t, g, tc.src, ws)
		switch {
		case tc.want == ok && hit:
			t.Errorf("%s: unexpected hit %s", tc.src, h.Reason)
		case tc.want != ok && !hit:
			t.Errorf("%s: no hit, want %s", tc.src, tc.want)
		case hit && h.Check != tc.want:
			t.Errorf("%s: check %s, want %s (%s)", tc.src, h.Check, tc.want, h.Reason)
		}
	}
	// A word built without the parser keeps reading "~" as home.
	if _, hit := g.Check(cmd("rm -rf ~"), ws); !hit {
		t.Error("rm -rf ~ (argv word): no hit")
	}
}

// TestSecurityFixtureStores: a secret store's directory below the
// workspace's top is a test fixture; at the top, outside the workspace, in
// a home-directory workspace, for private key names and for one-file
// project secrets it stays a hit.
func TestSecurityFixtureStores(t *testing.T) {
	const ws = "/home/u/proj"
	g := testGuard()
	g.Workspace = ws
	home := testGuard()
	home.Workspace = "/home/u"
	for _, tc := range []struct {
		g    Guard
		line string
		want string
	}{
		{g, "cat tests/fixtures/.ssh/config", ok},
		{g, "cat testdata/.aws/credentials", ok},
		{g, "cat /home/u/proj/testdata/.kube/config", ok},
		{g, "cat tests/.ssh/id_rsa.pub", ok},
		{g, "cat tests/.gnupg/pubring.kbx", ok},
		{g, "cat .ssh/config", fp},
		{g, "cat .aws/credentials", fp},
		{g, "cat tests/fixtures/.ssh/id_rsa", fp},
		{g, "cat tests/fixtures/.ssh/id_ed25519", fp},
		{g, "cat tests/.ssh/host.pem", fp},
		{g, "cat tests/.gnupg/private-keys-v1.d/A.key", fp},
		{g, "cat tests/.env", fp},
		{g, "cat tests/.npmrc", fp},
		{g, "cat tests/.netrc", fp},
		{g, "cat tests/.git-credentials", fp},
		{g, "cat ../other/tests/.ssh/config", fp},
		{g, "cat /home/u/.ssh/config", fp},
		{g, "cat @tests/.ssh/$X", fp},
		{g, "cat @tests/*/.ssh/config", fp},
		{home, "cat proj/tests/.ssh/config", fp},
		{Guard{Home: "/home/u", Workspace: "/home"}, "cat u/x/.ssh/config", fp},
		{testGuard(), "cat tests/.ssh/config", fp},
	} {
		h, hit := tc.g.Check(cmd(tc.line), tc.g.Workspace)
		switch {
		case tc.want == ok && hit:
			t.Errorf("%s (ws %s): unexpected hit %s", tc.line, tc.g.Workspace, h.Reason)
		case tc.want != ok && !hit:
			t.Errorf("%s (ws %s): no hit, want %s", tc.line, tc.g.Workspace, tc.want)
		}
	}
	// Workspace inside a store: the store lies above it.
	in := testGuard()
	in.Workspace = "/home/u/.config/proj"
	if _, hit := in.Check(cmd("cat /home/u/.config/proj/credentials.json"), in.Workspace); !hit {
		t.Error("store above the workspace: no hit")
	}
}
