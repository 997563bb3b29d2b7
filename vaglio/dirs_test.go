package vaglio

import (
	"bufio"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// TestSecurityCheckDirsAgreesWithEveryDir: judging a command once from an
// ordinary directory finds exactly what judging it from each directory
// finds, over every command of the corpus (caught and benign) and
// directory sets ordinary and not.
func TestSecurityCheckDirsAgreesWithEveryDir(t *testing.T) {
	for _, g := range guardsForDirs() {
		checkDirsAgreeOnCorpus(t, g)
	}
}

// guardsForDirs are the guards the CheckDirs tests run with: without a
// workspace, and with one some of their directories hold.
func guardsForDirs() []Guard {
	g, w := testGuard(), testGuard()
	w.Workspace = "/srv/app/x"
	return []Guard{g, w}
}

func checkDirsAgreeOnCorpus(t *testing.T, g Guard) {
	p := g.Prepare()
	dirSets := [][]string{
		{"/home/u/proj", "/home/u/proj/internal"},
		{"/srv/app", "/srv/app/cmd/server", "/opt/x/y"},
		{"/home/u/proj", "/var/tmp/w", "/home/bob/work"},
		{"/home/u/proj", "/home/u"},
		{"/srv/app", "/"},
		{"/home/u/proj", "/home/u/.config/mnemos/x"},
		{"/usr/local/bin", "/srv/app"},
		{"/home/u/proj", "/etc/nginx"},
		{"/srv/app/x", "/srv/app/x/cmd"},
		{"/srv/app/x/cmd", "/opt/x/y"},
		{"/opt/x/y", "/srv/app"},
		{"/opt/x/y", "/srv/app/x"},
	}
	n, shortcuts, acrossPlaces := 0, 0, 0
	for _, file := range []string{"../testdata/corpus/caught.txt", "../testdata/corpus/benign.txt"} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if i := strings.LastIndexByte(line, '\t'); i >= 0 {
				line = line[:i]
			}
			line = strings.ReplaceAll(line, "␤", "\n")
			s, err := shellparse.ParseArgv([]string{"bash", "-c", line}, shellparse.Env{Home: g.Home, Cwd: "/home/u/proj"})
			if err != nil {
				continue
			}
			for _, cmd := range s.Commands {
				for _, dirs := range dirSets {
					n++
					if dirNeutral(cmd) && p.allOrdinary(dirs) {
						shortcuts++
					}
					if dirNeutral(cmd) && p.ordinaryDirs(dirs) && !p.alikeDirs(dirs) {
						acrossPlaces++ // judged once unless fixtureStore is asked
					}
					var want Hit
					found := false
					for _, d := range dirs {
						if h, ok := p.Check(cmd, d); ok {
							want, found = h, true
							break
						}
					}
					got, ok := p.CheckDirs(cmd, dirs)
					if ok != found || got != want {
						t.Errorf("%q in %v: CheckDirs %v %+v, every dir %v %+v", cmd.String(), dirs, ok, got, found, want)
					}
				}
			}
		}
		f.Close()
	}
	if shortcuts == 0 || shortcuts == n || acrossPlaces == 0 && g.Workspace != "" {
		t.Fatalf("the shortcut applied to %d of %d cases, %d across places: the test does not exercise every path", shortcuts, n, acrossPlaces)
	}
	t.Logf("%d cases, %d judged once, %d from directories that lie differently towards the workspace", n, shortcuts, acrossPlaces)
}

func TestOrdinaryDirWorkspace(t *testing.T) {
	g := testGuard()
	g.Workspace = "/srv/app/x"
	p := g.Prepare()
	for d, want := range map[string]bool{"/srv/app/x": true, "/srv/app/x/y": true, "/srv/app": false, "/srv/b": true} {
		if got := p.ordinaryDir(d); got != want {
			t.Errorf("ordinaryDir(%q) = %v, want %v", d, got, want)
		}
	}
}

func TestOrdinaryDir(t *testing.T) {
	p := testGuard().Prepare()
	for d, want := range map[string]bool{
		"/home/u/proj": true, "/srv/app": true, "/home/bob/x": true, "/var/tmp/w/a": true,
		"/": false, "/home": false, "/home/u": false, "/home/bob": false, "/etc/nginx": false, "/root/x": false,
		"/home/u/.config/mnemos": false, "/home/u/.config/mnemos/x": false, "/home/u/.cache/x": false,
		"/usr/local/bin": false, "/usr/local": false, "/home/u/proj/": false, "/home/u/a/../b": false,
	} {
		if got := p.ordinaryDir(d); got != want {
			t.Errorf("ordinaryDir(%q) = %v, want %v", d, got, want)
		}
	}
}

// TestSecurityCheckDirsAgreesOnRandomCommands is the same comparison on
// commands built from pieces chosen to reach every rule.
func TestSecurityCheckDirsAgreesOnRandomCommands(t *testing.T) {
	for _, g := range guardsForDirs() {
		checkDirsAgreeOnRandom(t, g)
	}
}

func checkDirsAgreeOnRandom(t *testing.T, g Guard) {
	p := g.Prepare()
	progs := []string{"rm -rf", "rm", "cat", "cp -r", "cp", "mv", "tar czf out.tgz", "grep -r key", "rg --hidden k", "chmod -R 777",
		"chown -R u", "dd of=x if=", "shred -u", "mnemos approvals approve", "mnemos", "find", "ls", "echo", "touch", "/bin/rm -rf", "sh -c", "python3 -c", "zip -r o.zip", "rsync -a",
		"rsync -a --delete", "find . -delete", "find -delete"}
	pieces := []string{"a", "b", "src", "*", ".*", ".ssh", ".aws", "credentials", ".env", ".env.local", ".config", "mnemos", "policy.yaml",
		"id_rsa", "id_rsa.pub", "/etc/shadow", "/", "/home", "/etc", "bin", "usr", ".git", "node_modules", ".gnupg", "audit.jsonl", "dev", "sda",
		"x", "app", "/srv", "/srv/app/x", "..", "."}
	dirSets := [][]string{
		{"/home/u/proj", "/home/u/proj/internal"},
		{"/srv/app", "/srv/app/x/y", "/opt/w"},
		{"/home/u/a", "/home/bob/b"},
		{"/srv/app/x", "/srv/app/x/y"},
		{"/srv/app/x/y", "/opt/w"},
		{"/opt/w", "/srv/app"},
		{"/opt/w", "/srv/app/x"},
	}
	r := rand.New(rand.NewPCG(7, 9))
	for range 20000 {
		var b strings.Builder
		b.WriteString(progs[r.IntN(len(progs))])
		for range 1 + r.IntN(3) {
			b.WriteByte(' ')
			for k := range 1 + r.IntN(3) {
				if k > 0 {
					b.WriteByte('/')
				}
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
		}
		c := cmd(b.String())
		for _, dirs := range dirSets {
			var want Hit
			found := false
			for _, d := range dirs {
				if h, ok := p.Check(c, d); ok {
					want, found = h, true
					break
				}
			}
			if got, ok := p.CheckDirs(c, dirs); ok != found || got != want {
				t.Fatalf("%q in %v: CheckDirs %v %+v, every dir %v %+v", b.String(), dirs, ok, got, found, want)
			}
		}
	}
}

func TestNeutralText(t *testing.T) {
	for s, want := range map[string]bool{"": true, "a": true, "api/x.go": true, ".env": true, "./x": true, "-rf": true,
		".": false, "./": false, "..": false, "a/../b": false, "~": false, "$HOME": false, "`x`": false, "/": false, "./.": false, "x..y": false} {
		if got := neutralText(s); got != want {
			t.Errorf("neutralText(%q) = %v, want %v", s, got, want)
		}
	}
}
