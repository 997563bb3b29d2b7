package shellparse
import ("testing"; "strings"; "time")
func TestZZ2(t *testing.T) {
	cases := []string{
		strings.Repeat("$(", 70) + "x" + strings.Repeat(")", 70),
		"echo {1..200000}",
		"echo {1..100}{1..100}{1..100}",
		"f0(){ :; }; " + func() string { var b strings.Builder; for i := 1; i < 40; i++ { b.WriteString("f"+itoa(i)+"(){ f"+itoa(i-1)+"; f"+itoa(i-1)+"; }; ") }; return b.String() }() + "f39",
		strings.Repeat("a && ", 5000) + "b",
		strings.Repeat("if true; then ", 70) + "x" + strings.Repeat("; fi", 70),
		strings.Repeat("for i in 1 2; do ", 20) + "x=$((x+1)); y=$x" + strings.Repeat("; done", 20),
		strings.Repeat("x", 2<<20),
		"alias a='b'; alias b='a'; a",
	}
	for _, c := range cases {
		start := time.Now()
		s, err := ParseScript(c, Env{})
		n := 0
		if s != nil { n = len(s.Commands) }
		t.Logf("%.40q: %v cmds=%d %v", c, err, n, time.Since(start))
	}
}
func itoa(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }
