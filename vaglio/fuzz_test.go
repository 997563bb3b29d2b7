package vaglio

import (
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// FuzzGuardCheck: the guard never panics, gives the same answer twice (and
// prepared), and the directory checker the gate runs (ForDirs) gives, for
// a command that may start in cwd or the project directory, Check's first
// hit in the first of them that has one.
func FuzzGuardCheck(f *testing.F) {
	for _, s := range []struct{ line, redirect, ctx, assign, cwd string }{
		{"rm -rf /", "", "", "", "/"},
		{"cat ~/.ssh/id_rsa", "", "", "", "/home/u"},
		{"rm -rf @~/*", "@/dev/$X", "", "", "rel"},
		{":", "", "function :,|", "", ""},
		{"mnemos --home x approvals approve 1", "", "", "", "/"},
		{"python3 -c 'open(\"/etc/shadow\")'", "~/.config/mnemos/policy.yaml", "", "A=~/.aws/credentials", "/tmp"},
		{"cat @/et?/[!a-z]*/**/.s[s]h/*", "", "", "", "/"},
		{"grep -e -f -- x /etc/shadow", "", "", "1=2", "/"},
		{"git -C . commit -am", "", "", "", "/"},
		{"dd @of=/dev/$D", "", "", "", ""},
		{"find / -exec", "", "", "", "/"},
		{"sudo", "", "", "", "/"},
	} {
		f.Add(s.line, s.redirect, s.ctx, s.assign, s.cwd)
	}
	g := testGuard()
	prepared := g.Prepare()
	f.Fuzz(func(t *testing.T, line, redirect, ctx, assignment, cwd string) {
		c := cmd(line)
		if redirect != "" {
			w := shellparse.Word{Value: redirect}
			if v, ok := strings.CutPrefix(redirect, "@"); ok {
				w = shellparse.Word{Value: v, Dynamic: true}
			}
			c.Redirects = append(c.Redirects, shellparse.Redirect{Op: ">", Target: w})
			c.Redirects = append(c.Redirects, shellparse.Redirect{Op: "<<", Target: w})
		}
		if ctx != "" {
			c.Context = strings.Split(ctx, ",")
		}
		if assignment != "" {
			c.Assigns = []string{assignment}
			c.Wrappers = []shellparse.Wrapper{{Name: "env", Argv: strings.Fields(assignment)}}
		}
		h1, hit1 := g.Check(c, cwd)
		h2, hit2 := g.Check(c, cwd)
		if h1 != h2 || hit1 != hit2 {
			t.Fatalf("not deterministic: %+v %v / %+v %v", h1, hit1, h2, hit2)
		}
		if hp, hitp := prepared.Check(c, cwd); hp != h1 || hitp != hit1 {
			t.Fatalf("prepared %+v %v, guard %+v %v", hp, hitp, h1, hit1)
		}
		if hd, hitd := prepared.CheckDirs(c, []string{cwd}); hd != h1 || hitd != hit1 {
			t.Fatalf("CheckDirs in %q: %+v %v, Check %+v %v", cwd, hd, hitd, h1, hit1)
		}
		want, wantHit := h1, hit1
		if !wantHit {
			want, wantHit = g.Check(c, "/home/u/proj")
		}
		if hd, hitd := prepared.ForDirs([]string{cwd, "/home/u/proj"}).Check(c); hd != want || hitd != wantHit {
			t.Fatalf("ForDirs(%q, /home/u/proj): %+v %v, Check %+v %v", cwd, hd, hitd, want, wantHit)
		}
		if !hit1 {
			return
		}
		switch h1.Check {
		case CheckForbiddenPath, CheckIrrecoverable, CheckSelfTamper:
		default:
			t.Fatalf("check %q", h1.Check)
		}
		if h1.Pattern == "" || h1.Reason == "" || strings.ContainsAny(h1.Reason, "\n\r") {
			t.Fatalf("hit %+v", h1)
		}
		_ = Judge{}.Judge(Input{Intent: line, Command: c})
		_ = NewLogRecord(c, h1.Verdict(), line, nil)
	})
}

// FuzzGlobsMeet: against a literal name, the pattern-product answer is
// path.Match's answer.
func FuzzGlobsMeet(f *testing.F) {
	for _, s := range [][2]string{{"shad*", "shadow"}, {"[!a]?", "bc"}, {"*.pub", "id.pub"}, {`\*`, "*"}, {"[a-", "[a-"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, glob, name string) {
		if strings.ContainsAny(glob+name, "/") || hasMeta(name) || strings.Contains(name, `\`) ||
			!utf8.ValidString(glob) || !utf8.ValidString(name) || len(tokenize(glob)) > maxGlobTokens {
			return // outside what path.Match and the guard agree on
		}
		want, err := path.Match(strings.ReplaceAll(glob, "[!", "[^"), name)
		if err != nil || strings.Contains(glob, "[]") || strings.Contains(glob, "[^]") || strings.Contains(glob, "[!]") {
			return // malformed or shell-only class syntax
		}
		if got := globsMeet(glob, name); got != want {
			t.Fatalf("globsMeet(%q, %q) = %v, path.Match = %v", glob, name, got, want)
		}
	})
}

// FuzzInlineCode: reading the literals of any inline code never panics,
// is deterministic, and only reports literals present in the code.
func FuzzInlineCode(f *testing.F) {
	for _, s := range []string{`import os; os.system("rm -rf /")`, `shutil.rmtree(os.path.expanduser('~'))`,
		`subprocess.run(["rm","-rf","/"])`, `exec "rm", "-rf", "/"`, "`rm -rf ~`", `"unterminated`, `'\`, `rmtree(`} {
		f.Add(s)
	}
	g := testGuard()
	f.Fuzz(func(t *testing.T, code string) {
		if len(code) > 4096 {
			return
		}
		for _, l := range literals(code) {
			if !strings.Contains(code, l.before) {
				t.Fatalf("text %q before a literal is not in the code", l.before)
			}
		}
		c := shellparse.Command{Argv: []shellparse.Word{{Value: "python3"}, {Value: "-c"}, {Value: code}}}
		h1, hit1 := g.Check(c, "/home/u/proj")
		h2, hit2 := g.Check(c, "/home/u/proj")
		if h1 != h2 || hit1 != hit2 {
			t.Fatalf("not deterministic: %+v / %+v", h1, h2)
		}
	})
}
