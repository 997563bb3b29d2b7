package shellparse

import "testing"

// TestTildeLiteral: a word whose leading "~" is quoted or escaped says so;
// a "~" the shell expands, or one that came out of a variable, does not.
func TestTildeLiteral(t *testing.T) {
	for _, tc := range []struct {
		src   string
		value string
		lit   bool
	}{
		{`rm -rf \~`, "~", true},
		{`rm -rf '~'`, "~", true},
		{`rm -rf "~"`, "~", true},
		{`rm -rf $'~'`, "~", true},
		{`rm -rf '~/'`, "~/", true},
		{`rm -rf "~"/x`, "~/x", true},
		{`rm -rf {\~,a}`, "~", true},
		{`rm -rf ~`, "/home/u", false},
		{`rm -rf ~/`, "/home/u/", false},
		{`rm -rf ~""`, "~", false},
		{`rm -rf ''~`, "~", false},
		{`x=\~; rm -rf $x`, "~", false},
		{`rm -rf a'~'`, "a~", false},
	} {
		s, err := ParseScript(tc.src, Env{Home: "/home/u", Cwd: "/w"})
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		c := s.Commands[len(s.Commands)-1]
		w := c.Argv[2]
		if w.Value != tc.value || w.TildeLiteral != tc.lit {
			t.Errorf("%s: word %+v, want value %q TildeLiteral %v", tc.src, w, tc.value, tc.lit)
		}
	}
	// Only the first field of a word carries the mark.
	s, err := ParseScript(`x='a ~b'; rm -rf '~'$x`, Env{Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	argv := s.Commands[len(s.Commands)-1].Argv
	if len(argv) != 4 || !argv[2].TildeLiteral || argv[3].TildeLiteral {
		t.Errorf("split word: %+v", argv)
	}
}
