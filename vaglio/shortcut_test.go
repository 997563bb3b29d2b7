package vaglio

import (
	"fmt"
	"math"
	"path"
	"reflect"
	"strings"
	"testing"
)

// The guard takes shortcuts on its hot path: it cleans only what is not
// already clean, and it lets a literal path through on a look at the path
// alone when no rule can match it. These tests hold each shortcut to the
// long way round it replaces.

var shortcutPaths = []string{
	"", "/", "//", "/.", "/..", ".", "..", "...", "a", "a/", "a//b", "a/./b", "a/../b", "./a", "../a", "a/..",
	"/etc", "/etc/", "/etc/shadow", "/etc//shadow", "/etc/./shadow", "/etc/../etc/shadow", "/a/b/c/..",
	"/home/u/.config/mnemos", "/home/u/.config/mnemos/", "/home/u/.config/mnemos/.", "/home/u/.mnemos2",
	"/.ssh", "/home/u/.ssh/id_rsa", "/home/u/..ssh", "/home/u/...", "/dev", "/dev/", "/dev/sda", "/devx/sda",
	"/proc/self/cwd/../../etc/shadow", "src/main.go", ".env", "x/.env.local", "/x/*/y", "/x/[a]/y", `/x/\*`,
	"./", "./.", ".//", "./a", "././a/", ".//a//", "./a/.", "./../a", "./.ssh/id_rsa", "a/", "a//", "./a/b/", "./.",
	"/*", "/e*", "/[e]tc/shadow", "/?tc", "/home/u/*", "/home/u/.*", "/home/u/.s*/id_rsa", "/home/*/.ssh", "/x/--include=*.go",
	"/x/*.go", "/x/[.]ssh", "/x/*ssh", "/x/.e*", "/x/.env.*", "/x/.[e]nv", "/d*v/sda", "/*/shadow", "/x/a.b/.git-credentials",
	"/ETC/shadow", "/home/U/.SSH/id_rsa", "/x/.Env", "/Root", "/RUN/x", "/x/.ENV.local", "/Tmp/A.b/.Config", "/Proc",
}

// isCleanLongWay is what isClean promises.
func isCleanLongWay(p string) bool {
	if path.Clean(p) != p {
		return false
	}
	if strings.HasPrefix(p, "/") {
		return true
	}
	for _, e := range strings.Split(p, "/") {
		if e == "." || e == ".." {
			return false
		}
	}
	return true
}

func TestSecurityIsCleanIsPathClean(t *testing.T) {
	for _, p := range shortcutPaths {
		checkClean(t, p)
	}
}

func checkClean(t *testing.T, p string) {
	t.Helper()
	if got, want := isClean(p), isCleanLongWay(p); got != want {
		t.Errorf("isClean(%q) = %v, want %v", p, got, want)
	}
	if got, want := hasPatternChar(p), strings.ContainsAny(p, `*?[\`); got != want {
		t.Errorf("hasPatternChar(%q) = %v, want %v", p, got, want)
	}
}

// absLongWay is resolver.abs before its shortcuts.
func absLongWay(r resolver, p string) string {
	if !strings.HasPrefix(p, "/") {
		p = r.cwd + "/" + p
	}
	return path.Clean(p)
}

func TestSecurityAbsIsPathClean(t *testing.T) {
	for _, cwd := range []string{"", "/", "/home/u/proj", "/home/u/proj/", "rel"} {
		r := newResolver("/home/u", cwd)
		for _, p := range shortcutPaths {
			if got, want := r.abs(p), absLongWay(r, p); got != want {
				t.Errorf("in %q: abs(%q) = %q, want %q", cwd, p, got, want)
			}
		}
	}
}

// mayBeForbiddenLongWay is mayBeForbidden for a literal path, on the split
// elements.
func mayBeForbiddenLongWay(cd candidate) bool {
	elems := pathElems(cd.path)
	if len(elems) == 0 {
		return true
	}
	switch elems[0] {
	case "etc", "root", "boot", "sys", "proc", "dev":
		return true
	}
	for _, e := range elems {
		if floatingHead(e) {
			return true
		}
	}
	return false
}

// mayBeForbiddenFoldLongWay is mayBeForbiddenFold on the split elements.
func mayBeForbiddenFoldLongWay(cd candidate) bool {
	elems := pathElems(cd.path)
	if len(elems) == 0 {
		return false
	}
	for _, d := range []string{"etc", "root", "boot", "sys", "proc", "dev", "run", "var"} {
		if strings.EqualFold(elems[0], d) {
			return true
		}
	}
	for _, e := range elems {
		if strings.HasPrefix(e, ".") && (floatingHead(e) || floatingHead(strings.ToLower(e))) {
			return true
		}
	}
	return false
}

// TestDeviceRulesUnderDev keeps deviceHit's shortcut sound: every device
// rule is anchored below /dev.
func TestDeviceRulesUnderDev(t *testing.T) {
	for _, r := range deviceRules() {
		body, floating, _ := ruleShape(r.pattern)
		if first, _, _ := strings.Cut(body, "/"); floating || first != "dev" {
			t.Errorf("%s: not below /dev", r.pattern)
		}
	}
}

// checkShortcuts compares, for one path, each shortcut with the long way.
func checkShortcuts(t *testing.T, p string) {
	t.Helper()
	if !strings.HasPrefix(p, "/") {
		return
	}
	p = path.Clean(p)
	protected := []string{"/", "/home/u/.config/mnemos", "/home/u/.local/state/mnemos/audit.jsonl", "/home", "/x/[a]", `/x/\*`, p}
	c := &checker{r: newResolver("/home/u", "/"), protectedIn: protected}
	for _, glob := range []bool{false, true} {
		for _, openDir := range []bool{false, true} {
			cd := newCandidate(p, glob, openDir, p)
			if got, want := mayBeForbiddenFold(cd), mayBeForbiddenFoldLongWay(cd); got != want {
				t.Errorf("mayBeForbiddenFold(%q) = %v, want %v", p, got, want)
			}
			if !glob {
				if got, want := mayBeForbidden(cd), mayBeForbiddenLongWay(cd); got != want {
					t.Errorf("mayBeForbidden(%q) = %v, want %v", p, got, want)
				}
			} else if !mayBeForbidden(cd) {
				// A glob let through matches no rule.
				for _, r := range forbiddenRules() {
					if matchRule(r.pattern, r.except, cd, false) {
						t.Errorf("mayBeForbidden(%q glob) = false, but it matches %s", p, r.pattern)
					}
				}
				for _, r := range deviceRules() {
					if matchRule(r.pattern, "", cd, false) {
						t.Errorf("mayBeForbidden(%q glob) = false, but it matches %s", p, r.pattern)
					}
				}
			}
			for _, ancestor := range []bool{false, true} {
				for _, prot := range protected {
					c.protectedIn, c.protectedDone, c.protected = []string{prot}, false, nil
					_, got := c.protectedHit(cd, ancestor)
					want := matchRule(escapeGlob(prot)+"/**", "", cd, ancestor)
					if got != want {
						t.Errorf("protectedHit(%q glob=%v ancestor=%v) under %q = %v, want %v", p, glob, ancestor, prot, got, want)
					}
				}
				for _, could := range []bool{false, true} {
					_, got := c.deviceHit(cd, could)
					want := false
					for _, r := range deviceRules() {
						if matchRule(r.pattern, "", cd, could && cd.openDir) {
							want = true
							break
						}
					}
					if got != want {
						t.Errorf("deviceHit(%q glob=%v openDir=%v could=%v) = %v, want %v", p, glob, openDir, could, got, want)
					}
				}
			}
		}
	}
}

func TestSecurityShortcuts(t *testing.T) {
	for _, p := range shortcutPaths {
		checkShortcuts(t, p)
		checkShortcuts(t, "/"+p)
	}
}

// FuzzShortcuts: cleaning, resolving and the path-only filters agree with
// the long way for any path.
func FuzzShortcuts(f *testing.F) {
	for _, p := range shortcutPaths {
		f.Add(p, "/home/u/proj")
	}
	f.Fuzz(func(t *testing.T, p, cwd string) {
		checkClean(t, p)
		r := newResolver("/home/u", cwd)
		if got, want := r.abs(p), absLongWay(r, p); got != want {
			t.Fatalf("in %q: abs(%q) = %q, want %q", cwd, p, got, want)
		}
		checkShortcuts(t, r.abs(p))
	})
}

// TestTwoDecimalsIsPercentDotTwoF: the judge's reasons read as they did
// when fmt wrote them.
func TestTwoDecimalsIsPercentDotTwoF(t *testing.T) {
	for _, v := range []float64{0, math.Copysign(0, -1), 0.3, 0.35, 0.345, 0.005, 0.015, 0.125, 2.675, 0.8, 1, -0.5,
		1e300, 1e-300, math.Inf(1), math.Inf(-1), math.NaN(), DefaultThreshold, baseScore + intentBonus} {
		if got, want := twoDecimals(v), fmt.Sprintf("%.2f", v); got != want {
			t.Errorf("twoDecimals(%v) = %q, want %q", v, got, want)
		}
	}
	for k := -5; k <= 105; k++ {
		for _, v := range []float64{float64(k) / 100, math.Round(float64(k)) / 100, float64(k) * 0.01, math.Nextafter(float64(k)/100, 2)} {
			if got, want := twoDecimals(v), fmt.Sprintf("%.2f", v); got != want {
				t.Errorf("twoDecimals(%v) = %q, want %q", v, got, want)
			}
		}
	}
}

// embeddedLongWay is embeddedCandidates on the pieces strings.FieldsFunc
// returns.
func embeddedLongWay(r resolver, value string) []candidate {
	var out []candidate
	if !strings.ContainsFunc(value, isPathSep) {
		return out
	}
	for _, tok := range strings.FieldsFunc(value, isPathSep) {
		out = r.embeddedPiece(tok, out)
	}
	return out
}

// FuzzEmbedded: the pieces of a larger string are read in place as
// strings.FieldsFunc splits them.
func FuzzEmbedded(f *testing.F) {
	for _, s := range []string{"", "x", "--key-file=/root/.ssh/id_rsa", "if=/dev/sda", "open('/home/u/.ssh/id_rsa')",
		"a=b,c=~/.aws/credentials;d", "-o/etc/shadow", "file=@/etc/shadow", "é=/etc/ü\xff=$HOME/.env", "  \t\n", "((a))"} {
		f.Add(s)
	}
	r := newResolver("/home/u", "/home/u/proj")
	f.Fuzz(func(t *testing.T, value string) {
		got, want := r.embeddedCandidates(value, nil), embeddedLongWay(r, value)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %+v, want %+v", value, got, want)
		}
	})
}

// FuzzSedFileGaps: the gaps put in a sed script in place are those
// strings.Replacer puts in.
func FuzzSedFileGaps(f *testing.F) {
	long := strings.NewReplacer("w/", "w /", "r/", "r /", "W/", "W /", "R/", "R /", "w~", "w ~", "r~", "r ~")
	for _, s := range []string{"", "w", "w/", "s/a/b/w/etc/x", "1w/tmp/o", "rr/x", "ww/", "w/r/", "w~/.ssh/k", "W~/x",
		"R/etc/passwd", "/w/", "s/x/y/gw /tmp/f", "ê w/ü", "1r~/.bashrc;w/t", "w//", "r~~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := sedFileGaps(s), long.Replace(s); got != want {
			t.Fatalf("sedFileGaps(%q) = %q, want %q", s, got, want)
		}
	})
}
