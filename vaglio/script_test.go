package vaglio

import "testing"

// TestSecurityScriptsAreNoGlobs: a sed or awk script is not a file and its
// regular expressions are no shell globs ('s/.*/x/' does not name ~/.ssh),
// but the files it names (sed's r and w, awk's getline and print >) are
// judged as the literal paths they are.
func TestSecurityScriptsAreNoGlobs(t *testing.T) {
	const ws = "/home/u/proj"
	g := testGuard()
	g.Workspace = ws
	for _, tc := range []struct {
		line string
		want string
	}{
		{"sed s/.*/foo/ README.md", ok},
		{"sed -n /.*/p README.md", ok},
		{"sed -e s/.*=// README.md", ok},
		{"sed --expression=s/.*// README.md", ok},
		{"awk /.*/ README.md", ok},
		{"gawk --source /.*/ README.md", ok},
		{"sed s/x/y/w/home/u/.ssh/authorized_keys f", fp},
		{"sed r/home/u/.ssh/id_rsa f", fp},
		{"sed -i s/.*// /home/u/.ssh/config", fp},
		{"sed -f /home/u/.ssh/x.sed f", fp},
		{"awk -f /home/u/.ssh/x.awk f", fp},
		{"sed s/a/b/ /home/u/.ssh/id_rsa", fp},
		{"sed s/a/b/w/etc/shadow f", fp},
	} {
		h, hit := g.Check(cmd(tc.line), ws)
		switch {
		case tc.want == ok && hit:
			t.Errorf("%s: unexpected hit %s", tc.line, h.Reason)
		case tc.want != ok && !hit:
			t.Errorf("%s: no hit, want %s", tc.line, tc.want)
		case hit && h.Check != tc.want:
			t.Errorf("%s: check %s, want %s (%s)", tc.line, h.Check, tc.want, h.Reason)
		}
	}
}
