package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestGlobSecrets: a wildcard pattern names the files there are, and only
// those its last element matches; a directory that cannot be listed is
// named whole.
func TestGlobSecrets(t *testing.T) {
	root := tree(t, "etc/ssh/ssh_host_ed25519_key", "etc/ssh/ssh_host_ed25519_key.pub", "etc/ssh/ssh_config",
		"etc/le/live/a.example/privkey.pem", "etc/le/live/a.example/cert.pem", "etc/le/live/README",
		"etc/le/archive/a.example/privkey1.pem", "etc/le/archive/a.example/privkey2.pem", "etc/le/archive/a.example/cert1.pem",
		"var/lib/app/secrets/k", "var/lib/other/", "var/lib/file")
	var got []string
	for _, g := range []string{"etc/ssh/ssh_host_*_key", "etc/le/live/*/privkey*", "etc/le/archive/*/privkey*",
		"etc/missing/*.conf", "var/lib/*/secrets"} {
		got = globSecrets(got, root, g)
	}
	slices.Sort(got)
	var want []string
	for _, p := range []string{"etc/le/archive/a.example/privkey1.pem", "etc/le/archive/a.example/privkey2.pem",
		"etc/le/live/a.example/privkey.pem", "etc/ssh/ssh_host_ed25519_key", "var/lib/app/secrets"} {
		want = append(want, filepath.Join(root, p))
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}

	if os.Geteuid() == 0 {
		return // root lists every directory
	}
	shut := filepath.Join(root, "etc/le/live")
	if err := os.Chmod(shut, 0o100); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(shut, 0o755) })
	if got := globSecrets(nil, root, "etc/le/live/*/privkey*"); !slices.Equal(got, []string{shut}) {
		t.Errorf("a directory that cannot be listed: got %q, want it whole", got)
	}
}

// TestDefaultSecretsHome: the credentials files under ~/.config are found
// when the list is built; the commonest secrets are denied whether they
// are there or not, the rarer ones when their directory is; root's home
// is denied to everyone else.
func TestDefaultSecretsHome(t *testing.T) {
	home := tree(t, ".config/git/credentials", ".config/tool/credentials.json", ".config/tool/settings.json", ".config/file",
		".config/BraveSoftware/", ".bitcoin/", ".bash_history")
	got := DefaultSecrets(home)
	for _, want := range []string{home + "/.ssh", home + "/.aws", home + "/.config/gcloud", home + "/.cache/huggingface/token",
		home + "/.config/git/credentials", home + "/.config/tool/credentials.json",
		home + "/.config/BraveSoftware", home + "/.bitcoin/wallets", home + "/.bash_history",
		"/etc/shadow", "/etc/ssl/private", "/root"} {
		if !slices.Contains(got, want) {
			t.Errorf("DefaultSecrets lacks %s", want)
		}
	}
	for _, not := range []string{home + "/.config/tool/settings.json", home + "/.mozilla/firefox", home + "/.config/chromium", home + "/.zsh_history"} {
		if slices.Contains(got, not) {
			t.Errorf("DefaultSecrets names %s", not)
		}
	}
	for _, h := range []string{"/root", "/root/", "/root/sub"} {
		if s := DefaultSecrets(h); slices.Contains(s, "/root") {
			t.Errorf("home %s: root's home denied whole", h)
		}
	}
	if s := DefaultSecrets("/root"); !slices.Contains(s, "/root/.ssh") {
		t.Error("home /root: /root/.ssh is not denied")
	}
	if s := DefaultSecrets(""); !slices.Contains(s, "/etc/shadow") || !slices.Contains(s, "/root") {
		t.Errorf("no home: %q", s)
	}
}

// BenchmarkDefaultSecrets is what building the secret list costs a run:
// "user" for the home directory of the user running the benchmark,
// "populated" for a home whose ~/.config holds 40 programs' directories.
func BenchmarkDefaultSecrets(b *testing.B) {
	populated := b.TempDir()
	for i := range 40 {
		d := filepath.Join(populated, ".config", fmt.Sprintf("program%d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		for _, f := range []string{"settings.json", "state"} {
			if err := os.WriteFile(filepath.Join(d, f), nil, 0o600); err != nil {
				b.Fatal(err)
			}
		}
	}
	homes := []struct{ name, home string }{{"populated", populated}}
	if home, err := os.UserHomeDir(); err == nil {
		homes = append(homes, struct{ name, home string }{"user", home})
	}
	for _, h := range homes {
		b.Run(h.name, func(b *testing.B) {
			for b.Loop() {
				DefaultSecrets(h.home)
			}
		})
	}
}

// TestSecurityRootOnlyEtcIsSecret: as root, an entry of /etc that others
// may not read is denied, whatever its name (/etc/wireguard).
func TestSecurityRootOnlyEtcIsSecret(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root passes the permission checks that keep others out")
	}
	dir, err := os.MkdirTemp("/etc", "mnemos-root-only-")
	if err != nil {
		t.Skipf("cannot make a directory in /etc: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(DefaultSecrets("/home/u"), dir) {
		t.Errorf("DefaultSecrets lacks %s (mode 0700)", dir)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(DefaultSecrets("/home/u"), dir) {
		t.Errorf("DefaultSecrets holds %s, which anyone may read", dir)
	}
}
