package classify

import (
	"slices"
	"testing"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// TestOptionVariants: a word computed when the command runs, where its
// program reads options, is tried as each of them; an option's value, a
// word after --, and a word that begins with a literal character are not.
func TestOptionVariants(t *testing.T) {
	cases := []struct {
		src    string
		word   string   // the word tried, "" for none
		reader string   // who reads it
		has    []string // options among those tried
	}{
		{"git push $(echo --force) origin main", "$(echo --force)", "git push", []string{"--force", "--mirror", "--delete", "--set-upstream"}},
		{"git push origin \"$BRANCH\"", "\"$BRANCH\"", "git push", []string{"--force"}},
		{"git push origin `git branch --show-current`", "$(git branch --show-current)", "git push", []string{"--force"}},
		{"git reset $MODE HEAD~1", "$MODE", "git reset", []string{"--hard"}},
		{"git clean \"$@\"", "\"$@\"", "git clean", []string{"--force"}},
		{"git -C sub branch $F old", "$F", "git branch", []string{"-D"}},
		{"git log $(git describe)..HEAD", "$(git describe)..HEAD", "git log", []string{"--output", "--ext-diff"}},
		{"sort $OPTS data.txt", "$OPTS", "sort", []string{"--output"}},
		// Not where an option stands, or not able to be one.
		{"git commit -m \"$(cat msg)\"", "", "", nil},
		{"git commit --message=\"$M\"", "", "", nil},
		{"git push origin -- \"$B\"", "", "", nil},
		{"git push origin v$(cat VERSION)", "", "", nil},
		{"git push origin refs/heads/$B", "", "", nil},
		{"make -j $(nproc)", "", "", nil},
		{"echo $(date)", "", "", nil},
		{"cat *.go", "", "", nil},
		{"$CMD --force", "", "", nil},
		{"./deploy.sh $(cat args)", "", "", nil},
	}
	for _, tc := range cases {
		s, err := shellparse.ParseScript(tc.src, shellparse.Env{Home: "/home/u", Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		c := s.Commands[len(s.Commands)-1]
		var vs []OptionVariant
		for _, v := range OptionVariants(c, shellparse.Word{Value: "x"}) {
			if !v.Plain {
				vs = append(vs, v)
			}
		}
		if tc.word == "" {
			if len(vs) > 0 {
				t.Errorf("%s: %d variants (%s as %s), want none", tc.src, len(vs), vs[0].Word, vs[0].Option)
			}
			continue
		}
		var opts []string
		for _, v := range vs {
			if v.Word != tc.word || v.Reader != tc.reader {
				t.Errorf("%s: variant of %q read by %q, want %q by %q", tc.src, v.Word, v.Reader, tc.word, tc.reader)
				break
			}
			if slices.ContainsFunc(v.Command.Argv, func(w shellparse.Word) bool { return w.Value == tc.word }) {
				t.Errorf("%s: the variant %s still holds the word", tc.src, v.Command.String())
			}
			opts = append(opts, v.Option)
		}
		for _, o := range tc.has {
			if !slices.Contains(opts, o) {
				t.Errorf("%s: %s not tried (tried %v)", tc.src, o, opts)
			}
		}
	}
}

// TestPlainReadings: a run-time word whose start is written out (+"$B",
// :$B, refs/$B) is read once as the plain word it may be, its expansions
// an x, for the rules to see (git push origin +x forces).
func TestPlainReadings(t *testing.T) {
	cases := []struct{ src, plain, shown string }{
		{`git push origin "+$B"`, "+x", "+…"},
		{`git push origin :$B`, ":x", ":…"},
		{`git push origin -- "+${B:-main}"`, "+x", "+…"},
		{"git push origin +`cat ref`", "+x", "+…"},
		{`git push origin "$(cat src):main"`, "", ""},
		{`git push origin HEAD:"refs/heads/$B"`, "HEAD:refs/heads/x", "HEAD:refs/heads/…"},
		{`cat *.go`, "", ""},
	}
	for _, tc := range cases {
		s, err := shellparse.ParseScript(tc.src, shellparse.Env{Home: "/home/u", Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		plain, shown := "", ""
		for _, v := range OptionVariants(s.Commands[len(s.Commands)-1], shellparse.Word{Value: "x"}) {
			if v.Plain {
				plain, shown = v.Command.Argv[len(v.Command.Argv)-1].Value, v.Option
			}
		}
		if plain != tc.plain || shown != tc.shown {
			t.Errorf("%s: plain %q shown %q, want %q %q", tc.src, plain, shown, tc.plain, tc.shown)
		}
	}
}
