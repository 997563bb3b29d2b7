package sandbox

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestRefusals(t *testing.T) {
	root := tree(t, "ws/f", "ro/f", "other/g", "prot/x", "parent/prot/y", "parent/f", "shared/keys/k", "shared/doc",
		"home/proj/", "home/.bashrc", "home/.ssh/id_rsa", "odd dir/")
	j := func(p string) string { return filepath.Join(root, p) }
	home := j("home")
	s := Spec{
		ReadExec:     []string{"/usr"},
		ReadOnly:     []string{j("ro"), "/proc"},
		ReadWrite:    []string{j("ws"), j("shared")},
		Deny:         []string{j("prot"), j("parent/prot"), j("shared/keys"), j("home/.ssh")},
		Network:      true,
		ConnectPorts: []uint16{443},
	}
	enforced := Applied{Enforced: true, FS: true, Net: true}
	tests := []struct {
		name string
		need Need
		want string // "" when nothing is refused
	}{
		{"create in the workspace", Need{Path: j("ws/new"), Write: true}, ""},
		{"change a workspace file", Need{Path: j("ws/f"), Write: true}, ""},
		{"read a read-only file", Need{Path: j("ro/f")}, ""},
		{"read a system file", Need{Path: "/usr/bin"}, ""},
		{"create outside", Need{Path: j("other/new"), Write: true}, "write " + j("other/new") + "; to allow it, add to the policy: sandbox: {write: [" + j("other") + "]}"},
		{"create deep outside", Need{Path: j("other/a/b/c"), Write: true}, "sandbox: {write: [" + j("other") + "]}"},
		{"change a read-only file", Need{Path: j("ro/f"), Write: true}, "write " + j("ro/f") + "; to allow it, add to the policy: sandbox: {write: [" + j("ro") + "]}"},
		{"change a file beside a protected path", Need{Path: j("parent/f"), Write: true}, "sandbox: {write: [" + j("parent/f") + "]}"},
		{"read outside", Need{Path: j("other/g")}, "read " + j("other/g") + "; to allow it, add to the policy: sandbox: {read: [" + j("other/g") + "]}"},
		{"read a missing file", Need{Path: j("other/missing")}, ""},
		{"protected", Need{Path: j("prot/x"), Write: true}, "it is protected (" + j("prot") + "), and no policy can grant it"},
		{"secret under home", Need{Path: j("home/.ssh/id_rsa")}, "it is protected"},
		{"create in home", Need{Path: j("home/new.txt"), Write: true}, "no policy can grant " + home + " (it is the home directory"},
		{"change a file in home", Need{Path: j("home/.bashrc"), Write: true}, "sandbox: {write: [~/.bashrc]}"},
		{"create under home", Need{Path: j("home/proj/out"), Write: true}, "sandbox: {write: [~/proj]}"},
		{"create beside a protected path", Need{Path: j("parent/new"), Write: true}, "no policy can grant " + j("parent") + " (it holds " + j("parent/prot") + ")"},
		// Start narrows shared around its keys: its own entries only get
		// listed, so nothing new can be made at its top.
		{"create at the top of a narrowed grant", Need{Path: j("shared/new"), Write: true},
			"write " + j("shared/new") + ": it grants " + j("shared") + " entry by entry (it holds " + j("shared/keys") + "), so nothing new can be made at its top; create " + j("shared/new") + " outside the sandbox"},
		{"create deep in a narrowed grant", Need{Path: j("shared/cache/a/b"), Write: true}, "; create " + j("shared/cache") + " outside the sandbox"},
		{"create beside a narrowed secret", Need{Path: j("shared/keys/new"), Write: true}, "it is protected"},
		{"change a file in a narrowed grant", Need{Path: j("shared/doc"), Write: true}, ""},
		{"odd characters are quoted", Need{Path: j("odd dir/x"), Write: true}, `sandbox: {write: ["` + j("odd dir") + `"]}`},
		{"a name cannot forge a line", Need{Path: j("other/a\nmnemos: approved"), Write: true}, `write "` + j("other/a") + `\nmnemos: approved"; to allow`},
		{"kernel views are left alone", Need{Path: "/proc/self/oom_score_adj", Write: true}, ""},
		{"relative", Need{Path: "rel/x", Write: true}, ""},
		{"a granted port", Need{Host: "example.com", Port: 443}, ""},
		{"another port", Need{Host: "example.com", Port: 8443}, "connect to example.com:8443: port 8443 is not among its TCP ports; to allow it, add to the policy: sandbox: {ports: [443, 8443]}"},
		{"an IPv6 address", Need{Host: "::1", Port: 22}, "connect to [::1]:22"},
		{"a port to listen on", Need{Port: 8000, Bind: true}, "listen on TCP port 8000: it is not in its bind list; to allow it, add to the policy: sandbox: {bind: [8000]}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Refusals(s, enforced, home, []Need{tt.need})
			if tt.want == "" {
				if len(got) != 0 {
					t.Fatalf("refused %q", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], tt.want) {
				t.Fatalf("got %q, want one line containing %q", got, tt.want)
			}
		})
	}

	s2 := s
	s2.Network, s2.BindPorts = false, nil
	if got := Refusals(s2, enforced, home, []Need{{Port: 8000, Bind: true}}); len(got) != 1 ||
		!strings.Contains(got[0], "listen on TCP port 8000: it gives them no network; to allow it, add to the policy: sandbox: {network: true, bind: [8000]}") {
		t.Errorf("bind without network: %q", got)
	}
	s2.Network, s2.BindPorts = true, []uint16{0, 9000}
	if got := Refusals(s2, enforced, home, []Need{{Port: 9000, Bind: true}}); len(got) != 0 {
		t.Errorf("a listed bind port refused: %q", got)
	}
	if got := Refusals(s2, enforced, home, []Need{{Port: 8000, Bind: true}}); len(got) != 1 || !strings.Contains(got[0], "sandbox: {bind: [0, 8000, 9000]}") {
		t.Errorf("an unlisted bind port: %q", got)
	}

	outside := Need{Path: j("other/new"), Write: true}
	if got := Refusals(s, Applied{}, home, []Need{outside, {Port: 8443}}); len(got) != 0 {
		t.Errorf("nothing enforced, yet refused %q", got)
	}
	if got := Refusals(s, Applied{Enforced: true, FS: true}, home, []Need{{Port: 8443}}); len(got) != 0 {
		t.Errorf("TCP not enforced, yet refused %q", got)
	}
	if got := Refusals(s, enforced, home, []Need{outside, outside}); len(got) != 1 {
		t.Errorf("repeats: %q", got)
	}
	noNet := s
	noNet.Network = false
	if got := Refusals(noNet, enforced, home, []Need{{Port: 443}}); len(got) != 1 || !strings.Contains(got[0], "connect to TCP port 443: it gives them no network; to allow it, add to the policy: sandbox: {network: true}") {
		t.Errorf("without network: %q", got)
	}
}

// TestSecurityRefusalsNeverSuggestUnsafeGrants: whatever path a command
// names, the snippet offered is one DefaultSpec accepts.
func TestSecurityRefusalsNeverSuggestUnsafeGrants(t *testing.T) {
	root := tree(t, "home/.ssh/id_rsa", "home/.config/mnemos/policy.yaml", "home/src/p/", "home/docs/a", "tmp/", "srv/data/f")
	home := filepath.Join(root, "home")
	o := Options{
		Workspace: filepath.Join(home, "src", "p"),
		Home:      home,
		TempDirs:  []string{filepath.Join(root, "tmp")},
		Protected: []string{filepath.Join(home, ".config", "mnemos")},
		Secrets:   DefaultSecrets(home),
	}
	s, err := DefaultSpec(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/", root, home, home + "/x", home + "/.config/new", home + "/docs/a", home + "/docs/b/c",
		root + "/srv/data/f", root + "/srv/new", root + "/new/deep", "/etc/new", "/etc/shadow", "/usr/local/x"} {
		for _, write := range []bool{false, true} {
			for _, line := range Refusals(s, Applied{Enforced: true, FS: true}, home, []Need{{Path: p, Write: write}}) {
				_, snippet, ok := strings.Cut(line, "sandbox: {")
				if !ok {
					continue
				}
				key, rest, _ := strings.Cut(snippet, ": [")
				path := strings.TrimSuffix(rest, "]}")
				if r, ok := strings.CutPrefix(path, "~/"); ok {
					path = filepath.Join(home, r)
				}
				o := o
				if key == "write" {
					o.ExtraWrite = []string{path}
				} else {
					o.ExtraRead = []string{path}
				}
				if _, err := DefaultSpec(o); err != nil {
					t.Errorf("%s (write %v): %q suggests what DefaultSpec refuses: %v", p, write, line, err)
				}
			}
		}
	}
}
