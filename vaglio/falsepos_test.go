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
