package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultSecrets are the keys and credentials no grant reaches: at least
// every secret the guard forbids a command to name, so that a command that
// builds the path at run time finds the kernel refusing it too.
//
// In the system: the password hashes and sudo's configuration, the SSH
// host private keys (their .pub files stay readable), TLS private keys
// (/etc/ssl/private, /etc/pki/tls/private, Let's Encrypt's keys, accounts
// and privkey files), the Kerberos keytab, old password hashes, network
// passwords (NetworkManager's connections, wpa_supplicant's *.conf),
// container secrets (/run/secrets, /var/run/secrets, /var/lib/*/secrets)
// and root's home, unless home lies in it. Under home: SSH, GnuPG and age
// keys, cloud, cluster, registry and package-index credentials, stored
// passwords and tokens (~/.config/*/credentials* among them), keyrings and
// password stores, browser profiles, wallets, coding agents' logins and
// shell and interpreter histories.
//
// It reads the filesystem, and keeps the reading small, since every run
// builds the list: patterns with a wildcard are expanded with one
// directory listing for each directory a wildcard looks into (a directory
// that exists but cannot be listed is denied whole), and the rarer home
// secrets (homeSecretsIfPresent) are left out when the entry of home, or
// of ~/.config, they would lie in is not there: the sandbox never grants
// home or ~/.config whole, so no command it runs can create them.
func DefaultSecrets(home string) []string {
	s := make([]string, 0, 128)
	s = append(s, systemSecrets()...)
	for _, g := range systemSecretGlobs() {
		s = globSecrets(s, "/", g)
	}
	s = append(s, rootOnlyEtc()...)
	if home == "" {
		return append(s, "/root")
	}
	if home = filepath.Clean(home); !within(home, "/root") {
		// As the guard does, keep root's home from everyone else's
		// commands. No default grant lies in it.
		s = append(s, "/root")
	}
	s = append(s, underHome(home, homeSecrets()...)...)
	top, topErr := listed(home)
	configDir := filepath.Join(home, ".config")
	config, configErr := listed(configDir)
	// has: a directory that could not be listed may hold anything.
	has := func(names []string, err error, name string) bool {
		_, found := slices.BinarySearch(names, name)
		return found || err != nil
	}
	for _, rel := range homeSecretsIfPresent() {
		first, rest, _ := strings.Cut(rel, "/")
		if !has(top, topErr, first) {
			continue
		}
		if second, _, _ := strings.Cut(rest, "/"); first == ".config" && !has(config, configErr, second) {
			continue
		}
		s = append(s, filepath.Join(home, rel))
	}
	// ~/.config/*/credentials*: git's credential store keeps
	// ~/.config/git/credentials, inside a directory commands may read.
	if errors.Is(configErr, fs.ErrPermission) {
		s = append(s, configDir)
	}
	for _, n := range config {
		s = globSecrets(s, filepath.Join(configDir, n), "credentials*")
	}
	return s
}

// listed lists a directory's entries, sorted. A directory that is not
// there lists as empty, with no error.
func listed(dir string) ([]string, error) {
	names, err := dirNames(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return names, err
}

// systemSecrets are the system's keys and credentials outside every home.
func systemSecrets() []string {
	return []string{
		"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
		"/etc/sudoers", "/etc/sudoers.d",
		"/etc/ssl/private", "/etc/pki/tls/private",
		"/etc/letsencrypt/keys", "/etc/letsencrypt/accounts",
		"/etc/krb5.keytab", "/etc/security/opasswd",
		"/etc/NetworkManager/system-connections",
		"/run/secrets", "/var/run/secrets",
	}
}

// systemSecretGlobs are the system's secrets whose names vary, relative
// to /. Elements are filepath.Match patterns.
func systemSecretGlobs() []string {
	return []string{
		"etc/ssh/ssh_host_*_key",
		"etc/letsencrypt/live/*/privkey*",
		"etc/letsencrypt/archive/*/privkey*",
		"etc/wpa_supplicant/*.conf",
		"var/lib/*/secrets",
	}
}

// homeSecrets are the keys and credentials under home, relative to it,
// denied whether they are there or not, so that a policy path that holds
// one is refused before the tool that keeps it is installed: the
// commonest of the guard's, and a few more (~/.azure, ~/.kube and
// ~/.config/gcloud whole, gradle's and maven's settings, which hold
// repository passwords). They come first: a refusal names the first
// secret a path reaches.
func homeSecrets() []string {
	return []string{
		".ssh", ".gnupg", ".password-store", ".aws", ".azure", ".config/gcloud",
		".kube", ".docker/config.json", ".netrc", ".git-credentials", ".pgpass",
		".config/gh/hosts.yml", ".npmrc", ".pypirc", ".cache/huggingface/token",
		".cargo/credentials", ".cargo/credentials.toml",
		".gradle/gradle.properties", ".m2/settings.xml", ".m2/settings-security.xml",
	}
}

// homeSecretsIfPresent are the rest of the guard's secrets under home,
// relative to it, with the real case of names the guard matches in any
// case (~/.config/BraveSoftware). Each is denied when its first element is
// in home and, under ~/.config, its second is in ~/.config.
func homeSecretsIfPresent() []string {
	return []string{
		// Keys.
		".age", ".config/sops/age/keys.txt", ".oci",
		// Cloud, cluster and registry credentials.
		".dockercfg", ".config/containers/auth.json", ".boto", ".s3cfg", ".config/rclone/rclone.conf",
		".terraform.d/credentials.tfrc.json", ".pulumi/credentials.json", ".fly/config.yml",
		".config/doctl/config.yaml", ".databrickscfg", ".wrangler/config", ".vault-token", ".config/op",
		".config/.wrangler/config", ".cloudflared/cert.pem", ".config/hcloud/cli.toml", ".config/scw/config.yaml",
		".railway/config.json", ".circleci/cli.yml", ".dbt/profiles.yml", ".tsh", ".kaggle/kaggle.json",
		".supabase/access-token", ".snowflake/connections.toml", ".snowflake/config.toml",
		".local/share/com.vercel.cli/auth.json", ".now/auth.json", ".config/netlify/config.json", ".netlify/config.json",
		".config/glab-cli/config.yml", ".terraformrc", ".sentryclirc",
		".config/configstore/firebase-tools.json", ".config/configstore/snyk.json", ".local/share/atuin",
		// Stored passwords and tokens.
		".my.cnf", ".config/hub", ".config/github-copilot/hosts.json", ".config/github-copilot/apps.json",
		".config/stripe/config.toml", ".ngrok2/ngrok.yml", ".config/ngrok/ngrok.yml",
		// Package registries.
		".gem/credentials", ".composer/auth.json", ".config/composer/auth.json",
		".huggingface/token", ".cache/huggingface/stored_tokens",
		// Coding agents' logins.
		".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json",
		// Keyrings, browser profiles, wallets.
		".local/share/keyrings",
		".config/google-chrome", ".config/chromium", ".config/BraveSoftware", ".mozilla/firefox",
		".bitcoin/wallet.dat", ".bitcoin/wallets", ".electrum/wallets", ".ethereum/keystore",
		".config/solana/id.json",
		// Histories, where typed secrets stay.
		".bash_history", ".zsh_history", ".local/share/fish/fish_history", ".python_history",
		".node_repl_history", ".psql_history", ".mysql_history",
	}
}

// globSecrets appends to s the paths below dir that pattern (relative,
// elements separated by "/", each a filepath.Match pattern) names and that
// exist. It lists each directory a wildcard element looks into once, and
// checks a literal last element with one lstat. A directory that exists
// but cannot be listed is appended whole: what it holds cannot be known,
// and a name in it might still be opened.
func globSecrets(s []string, dir, pattern string) []string {
	elem, rest, more := strings.Cut(pattern, "/")
	if !strings.ContainsAny(elem, `*?[\`) {
		p := filepath.Join(dir, elem)
		if more {
			return globSecrets(s, p, rest)
		}
		if lexists(p) {
			s = append(s, p)
		}
		return s
	}
	names, err := dirNames(dir)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			s = append(s, dir)
		}
		return s
	}
	for _, n := range names {
		if ok, _ := filepath.Match(elem, n); !ok {
			continue
		}
		if p := filepath.Join(dir, n); more {
			s = globSecrets(s, p, rest)
		} else {
			s = append(s, p)
		}
	}
	return s
}

// rootOnlyEtc are, for a process running as root, the entries of /etc that
// others may not read (/etc/wireguard, a service's private configuration):
// what a normal user could not read is treated as a secret of the system,
// whatever its name. Root passes every permission check, so without this a
// command root runs could read them. For anyone else the permissions
// already keep them out. One level of /etc, one lstat an entry.
func rootOnlyEtc() []string {
	if os.Geteuid() != 0 {
		return nil
	}
	ents, err := os.ReadDir("/etc")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		need := fs.FileMode(0o004)
		if fi.IsDir() {
			need = 0o005
		}
		if fi.Mode().Perm()&need != need {
			out = append(out, filepath.Join("/etc", e.Name()))
		}
	}
	return out
}
