package vaglio

import (
	"path"
	"strings"
)

// pathRule is one forbidden-path rule. Its pattern is written the way the
// guard reports it: "/etc/shadow" is that file, "/etc/ssh/**" the directory
// and everything below it, "**/.ssh/**" any .ssh directory at any depth.
// Elements are Go path.Match patterns.
type pathRule struct {
	pattern string
	why     string
	// except lists base names the rule leaves out (".env.example").
	except string
	// publicSSH marks the .ssh rule: a program that only reads may read
	// public keys and known_hosts below it.
	publicSSH bool
	// notRootHome drops the rule when the user's home is /root.
	notRootHome bool
}

// forbiddenRules is the guard's forbidden-path list (seed 003's list, made
// precise), without the block devices, which deviceRules lists. It is
// returned by value: there is no table anyone could change.
func forbiddenRules() [127]pathRule {
	return [...]pathRule{
		{pattern: "/etc/passwd", why: "the user database"},
		{pattern: "/etc/passwd-", why: "the user database backup"},
		{pattern: "/etc/shadow", why: "password hashes"},
		{pattern: "/etc/shadow-", why: "password hashes backup"},
		{pattern: "/etc/gshadow", why: "group password hashes"},
		{pattern: "/etc/gshadow-", why: "group password hashes backup"},
		{pattern: "/etc/sudoers", why: "sudo configuration"},
		{pattern: "/etc/sudoers.d/**", why: "sudo configuration"},
		{pattern: "/etc/ssh/**", why: "SSH host keys"},
		{pattern: "/etc/ssl/private/**", why: "TLS private keys"},
		{pattern: "/etc/pki/tls/private/**", why: "TLS private keys"},
		{pattern: "/etc/letsencrypt/keys/**", why: "TLS private keys"},
		{pattern: "/etc/letsencrypt/live/*/privkey*", why: "TLS private keys"},
		{pattern: "/etc/letsencrypt/archive/*/privkey*", why: "TLS private keys"},
		{pattern: "/etc/letsencrypt/accounts/**", why: "ACME account keys"},
		{pattern: "/etc/krb5.keytab", why: "Kerberos host keys"},
		{pattern: "/etc/security/opasswd", why: "old password hashes"},
		{pattern: "/etc/networkmanager/system-connections/**", why: "network passwords"},
		{pattern: "/etc/wpa_supplicant/*.conf", why: "network passwords"},
		{pattern: "/run/secrets/**", why: "container secrets"},
		{pattern: "/var/run/secrets/**", why: "container and service account secrets"},
		{pattern: "/root/**", why: "root's home directory", notRootHome: true},
		{pattern: "/boot/**", why: "kernel and boot loader"},
		{pattern: "/sys/**", why: "kernel interfaces"},
		{pattern: "/proc", why: "the process table"},
		{pattern: "/proc/[0-9]*/**", why: "a process's memory, environment and files"},
		{pattern: "/proc/self/**", why: "a process's memory, environment and files"},
		{pattern: "/proc/thread-self/**", why: "a process's memory, environment and files"},
		{pattern: "/proc/kcore", why: "kernel memory"},
		{pattern: "/proc/sysrq-trigger", why: "kernel control"},
		{pattern: "**/.ssh/**", why: "SSH keys", publicSSH: true},
		{pattern: "**/.gnupg/**", why: "GnuPG keys"},
		{pattern: "**/.aws/credentials", why: "AWS credentials"},
		{pattern: "**/.config/*/credentials*", why: "stored credentials"},
		{pattern: "**/.netrc", why: "stored passwords"},
		{pattern: "**/.docker/config.json", why: "registry credentials"},
		{pattern: "**/.kube/config", why: "cluster credentials"},
		{pattern: "**/.git-credentials", why: "stored git passwords"},
		{pattern: "**/.pgpass", why: "stored database passwords"},
		{pattern: "**/.config/gh/hosts.yml", why: "GitHub CLI tokens"},
		{pattern: "**/.config/hub", why: "GitHub tokens"},
		{pattern: "**/.config/gcloud/application_default_credentials.json", why: "Google Cloud credentials"},
		{pattern: "**/.config/gcloud/access_tokens.db", why: "Google Cloud access tokens"},
		{pattern: "**/.config/gcloud/legacy_credentials/**", why: "Google Cloud credentials"},
		{pattern: "**/.config/rclone/rclone.conf", why: "cloud storage credentials"},
		{pattern: "**/.config/op/**", why: "1Password CLI sessions"},
		{pattern: "**/.config/sops/age/keys.txt", why: "age private keys"},
		{pattern: "**/.age/**", why: "age private keys"},
		{pattern: "**/.azure/access[Tt]okens.json", why: "Azure tokens"},
		{pattern: "**/.azure/msal_token_cache.*", why: "Azure tokens"},
		{pattern: "**/.azure/service_principal_entries.*", why: "Azure service principal secrets"},
		{pattern: "**/.local/share/keyrings/**", why: "the login keyring"},
		{pattern: "**/.password-store/**", why: "stored passwords"},
		{pattern: "**/.vault-token", why: "a Vault token"},
		{pattern: "**/.terraform.d/credentials.tfrc.json", why: "Terraform tokens"},
		{pattern: "**/.cargo/credentials*", why: "crates.io tokens"},
		{pattern: "**/.gem/credentials", why: "RubyGems API keys"},
		{pattern: "**/.m2/settings-security.xml", why: "the Maven master password"},
		{pattern: "**/.my.cnf", why: "stored database passwords"},
		{pattern: "**/.boto", why: "cloud storage credentials"},
		{pattern: "**/.s3cfg", why: "S3 credentials"},
		{pattern: "**/.oci/**", why: "Oracle Cloud keys"},
		{pattern: "**/.huggingface/token", why: "a Hugging Face token"},
		{pattern: "**/.cache/huggingface/token", why: "a Hugging Face token"},
		{pattern: "**/.cache/huggingface/stored_tokens", why: "Hugging Face tokens"},
		{pattern: "**/.npmrc", why: "package registry tokens"},
		{pattern: "**/.pypirc", why: "package index passwords"},
		{pattern: "**/.claude/.credentials.json", why: "Claude Code credentials"},
		{pattern: "**/.codex/auth.json", why: "Codex credentials"},
		{pattern: "**/.gemini/oauth_creds.json", why: "Gemini CLI credentials"},
		{pattern: "**/.config/github-copilot/hosts.json", why: "GitHub Copilot tokens"},
		{pattern: "**/.config/github-copilot/apps.json", why: "GitHub Copilot tokens"},
		{pattern: "**/.aws/sso/cache/**", why: "AWS SSO tokens"},
		{pattern: "**/.aws/cli/cache/**", why: "AWS session credentials"},
		{pattern: "**/.kube/config?*", why: "cluster credentials"},
		{pattern: "**/.config/containers/auth.json", why: "registry credentials"},
		{pattern: "**/.dockercfg", why: "registry credentials"},
		{pattern: "**/.pulumi/credentials.json", why: "Pulumi tokens"},
		{pattern: "**/.fly/config.yml", why: "Fly.io tokens"},
		{pattern: "**/.config/doctl/config.yaml", why: "DigitalOcean tokens"},
		{pattern: "**/.config/stripe/config.toml", why: "Stripe keys"},
		{pattern: "**/.databrickscfg", why: "Databricks tokens"},
		{pattern: "**/.ngrok2/ngrok.yml", why: "an ngrok token"},
		{pattern: "**/.config/ngrok/ngrok.yml", why: "an ngrok token"},
		{pattern: "**/.composer/auth.json", why: "Composer registry tokens"},
		{pattern: "**/.config/composer/auth.json", why: "Composer registry tokens"},
		{pattern: "**/.wrangler/config/**", why: "Cloudflare tokens"},
		{pattern: "**/.cloudflared/cert.pem", why: "a Cloudflare tunnel certificate"},
		{pattern: "**/.config/configstore/firebase-tools.json", why: "Firebase tokens"},
		{pattern: "**/.config/configstore/snyk.json", why: "a Snyk token"},
		{pattern: "**/.supabase/access-token", why: "a Supabase token"},
		{pattern: "**/.snowflake/connections.toml", why: "Snowflake credentials"},
		{pattern: "**/.snowflake/config.toml", why: "Snowflake credentials"},
		{pattern: "**/.local/share/com.vercel.cli/auth.json", why: "a Vercel token"},
		{pattern: "**/.now/auth.json", why: "a Vercel token"},
		{pattern: "**/.config/netlify/config.json", why: "Netlify tokens"},
		{pattern: "**/.netlify/config.json", why: "Netlify tokens"},
		{pattern: "**/.config/glab-cli/config.yml", why: "GitLab tokens"},
		{pattern: "**/.terraformrc", why: "Terraform tokens"},
		{pattern: "**/.sentryclirc", why: "a Sentry token"},
		{pattern: "**/.kaggle/kaggle.json", why: "a Kaggle API key"},
		{pattern: "**/.config/hcloud/cli.toml", why: "Hetzner Cloud tokens"},
		{pattern: "**/.config/scw/config.yaml", why: "Scaleway keys"},
		{pattern: "**/.railway/config.json", why: "a Railway token"},
		{pattern: "**/.circleci/cli.yml", why: "a CircleCI token"},
		{pattern: "**/.dbt/profiles.yml", why: "database passwords"},
		{pattern: "**/.tsh/**", why: "Teleport keys"},
		{pattern: "**/.local/share/atuin/**", why: "shell history, where typed secrets stay"},
		{pattern: "**/.config/google-chrome/**", why: "browser passwords and cookies"},
		{pattern: "**/.config/chromium/**", why: "browser passwords and cookies"},
		{pattern: "**/.config/bravesoftware/**", why: "browser passwords and cookies"},
		{pattern: "**/.mozilla/firefox/**", why: "browser passwords and cookies"},
		{pattern: "**/.bitcoin/wallet.dat", why: "a wallet's private keys"},
		{pattern: "**/.bitcoin/wallets/**", why: "wallets' private keys"},
		{pattern: "**/.electrum/wallets/**", why: "wallets' private keys"},
		{pattern: "**/.ethereum/keystore/**", why: "wallets' private keys"},
		{pattern: "**/.config/solana/id.json", why: "a wallet's private key"},
		{pattern: "**/.bash_history", why: "shell history, where typed secrets stay"},
		{pattern: "**/.zsh_history", why: "shell history, where typed secrets stay"},
		{pattern: "**/.local/share/fish/fish_history", why: "shell history, where typed secrets stay"},
		{pattern: "**/.python_history", why: "interpreter history, where typed secrets stay"},
		{pattern: "**/.node_repl_history", why: "interpreter history, where typed secrets stay"},
		{pattern: "**/.psql_history", why: "database client history, where typed passwords stay"},
		{pattern: "**/.mysql_history", why: "database client history, where typed passwords stay"},
		{pattern: "**/.env", why: "an environment file with secrets"},
		{pattern: "**/.env~", why: "an editor's backup of an environment file with secrets"},
		{pattern: "**/.env.*", why: "an environment file with secrets",
			except: ".env.example .env.sample .env.template"},
	}
}

// ForbiddenPattern is one entry of the guard's forbidden-path list, for
// code that must keep the same paths out of reach by other means (the
// sandbox's tests compare it with the paths the sandbox denies).
type ForbiddenPattern struct {
	// Pattern is written as Hit.Pattern reports it: "/etc/shadow" is
	// that file, "/etc/ssh/**" the directory and everything below it,
	// "**/.ssh/**" any .ssh directory at any depth. Elements are Go
	// path.Match patterns, in lower case: the guard also matches a path
	// written in another case.
	Pattern string
	// Why says what the path holds.
	Why string
	// Except are base names the pattern leaves out (".env.example").
	Except []string
	// PublicSSH: a program that only reads may read public keys and
	// known_hosts below the pattern.
	PublicSSH bool
	// NotRootHome: the pattern does not apply when the home directory is
	// /root or lies below it.
	NotRootHome bool
}

// ForbiddenPatterns returns the guard's forbidden-path list in the order
// the guard checks it: the secrets and system internals, then the disks
// and memory devices. The list is a fresh copy.
func ForbiddenPatterns() []ForbiddenPattern {
	rules, devices := forbiddenRules(), deviceRules()
	out := make([]ForbiddenPattern, 0, len(rules)+len(devices))
	for _, r := range append(rules[:], devices[:]...) {
		out = append(out, ForbiddenPattern{Pattern: r.pattern, Why: r.why, Except: strings.Fields(r.except),
			PublicSSH: r.publicSSH, NotRootHome: r.notRootHome})
	}
	return out
}

// deviceRules are the targets whose overwriting destroys a disk or memory:
// the irrecoverable check uses them for dd, shred, wipefs, redirects.
func deviceRules() [15]pathRule {
	return [...]pathRule{
		{pattern: "/dev/sd*", why: "a raw disk"},
		{pattern: "/dev/hd*", why: "a raw disk"},
		{pattern: "/dev/vd*", why: "a raw disk"},
		{pattern: "/dev/xvd*", why: "a raw disk"},
		{pattern: "/dev/nvme*", why: "a raw disk"},
		{pattern: "/dev/mmcblk*", why: "a raw disk"},
		{pattern: "/dev/loop*", why: "a loop device"},
		{pattern: "/dev/dm-*", why: "a mapped block device"},
		{pattern: "/dev/md*", why: "a RAID device"},
		{pattern: "/dev/nbd*", why: "a network block device"},
		{pattern: "/dev/disk/**", why: "a raw disk"},
		{pattern: "/dev/mapper/**", why: "a mapped block device"},
		{pattern: "/dev/mem", why: "physical memory"},
		{pattern: "/dev/kmem", why: "kernel memory"},
		{pattern: "/dev/port", why: "I/O ports"},
	}
}

// candidate is one path the guard found in a word: absolute and cleaned.
type candidate struct {
	path  string // absolute, cleaned
	elems []string
	glob  bool // elements may hold shell globs
	// openDir is the known directory of a word whose tail is computed at
	// run time ("~/.ssh/$X"): the real path is inside it.
	openDir bool
	// traversed marks a directory a path goes through before a "..": it
	// counts as touched for forbidden paths, not as the target of a
	// delete or a device write.
	traversed bool
	word      string // the text as written, for the reason
	// split says elems holds the elements of path. Most candidates are
	// let through by a look at the path alone (mayBeForbidden, or a
	// protected path it is not below), so the elements are split only
	// for the rules that read them: see withElems.
	split bool
}

func newCandidate(p string, glob, openDir bool, word string) candidate {
	return candidate{path: p, glob: glob, openDir: openDir, word: word}
}

// withElems returns the candidate with its elements split. Functions that
// match rules against many candidates call it once per candidate; the
// matchers call it too, so a candidate is never matched without them.
func (c candidate) withElems() candidate {
	if !c.split {
		c.elems, c.split = pathElems(c.path), true
	}
	return c
}

// pathElems returns the elements of an absolute path: none for "/".
func pathElems(p string) []string {
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

// ruleShape splits a rule pattern into its elements and flags.
func ruleShape(pattern string) (body string, floating, subtree bool) {
	body = pattern
	if b, ok := strings.CutPrefix(body, "**/"); ok {
		body, floating = b, true
	} else {
		body = strings.TrimPrefix(body, "/")
	}
	if b, ok := strings.CutSuffix(body, "/**"); ok {
		body, subtree = b, true
	}
	return body, floating, subtree
}

// elemCount is the number of elements in a rule body ("" has none).
func elemCount(body string) int {
	if body == "" {
		return 0
	}
	return strings.Count(body, "/") + 1
}

// matchFrom reports whether the rule body's elements match the candidate's
// elements starting at index start (the rule's elements all present).
func matchFrom(body string, c candidate, start int) bool {
	i := start
	for body != "" {
		var el string
		el, body, _ = strings.Cut(body, "/")
		if i >= len(c.elems) || !elemMatch(c.elems[i], c.glob, el) {
			return false
		}
		i++
	}
	return true
}

// matchRule reports whether the candidate is what the rule forbids. When
// ancestor is true, a candidate that is a directory above what the rule
// names counts as well (deleting /home/u deletes /home/u/.config/mnemos).
func matchRule(pattern, except string, c candidate, ancestor bool) bool {
	body, floating, subtree := ruleShape(pattern)
	return matchShape(body, floating, subtree, except, c, ancestor)
}

// matchShape is matchRule on a pattern split by ruleShape.
func matchShape(body string, floating, subtree bool, except string, c candidate, ancestor bool) bool {
	c = c.withElems()
	n := elemCount(body)
	if !floating {
		switch {
		case len(c.elems) >= n:
			if !matchFrom(body, c, 0) || (!subtree && len(c.elems) != n) {
				return false
			}
		case ancestor:
			return prefixMatch(body, c)
		default:
			return false
		}
		return !excepted(except, c)
	}
	for s := 0; s+n <= len(c.elems); s++ {
		if (subtree || s+n == len(c.elems)) && matchFrom(body, c, s) {
			if !excepted(except, c) {
				return true
			}
		}
	}
	return false
}

// prefixMatch reports whether all of the candidate's elements match the
// first elements of the rule: the candidate is an ancestor of (or the same
// as) what the rule names.
func prefixMatch(body string, c candidate) bool {
	for _, e := range c.elems {
		var el string
		el, body, _ = strings.Cut(body, "/")
		if !elemMatch(e, c.glob, el) {
			return false
		}
	}
	return true
}

// excepted reports whether a literal candidate's base name is one the rule
// leaves out. A glob is never excepted: it may match the other names too.
func excepted(except string, c candidate) bool {
	if except == "" || c.glob {
		return false
	}
	elems := c.withElems().elems
	if len(elems) == 0 {
		return false
	}
	base := elems[len(elems)-1]
	for _, e := range strings.Fields(except) {
		// ".env.example" also leaves out ".env.local.example".
		if base == e || strings.HasSuffix(base, path.Ext(e)) {
			return true
		}
	}
	return false
}

// publicSSHFile reports whether a candidate under a .ssh directory names
// only public material: a *.pub key or known_hosts.
func publicSSHFile(c candidate) bool {
	elems := c.withElems().elems
	if c.openDir || len(elems) == 0 {
		return false
	}
	base := elems[len(elems)-1]
	if c.glob {
		// Every name "*.pub" can match ends in .pub; other globs may reach
		// a private key.
		return strings.HasSuffix(base, ".pub") && !strings.ContainsAny(base[:len(base)-4], "[")
	}
	return strings.HasSuffix(base, ".pub") && base != ".pub" || base == "known_hosts" || base == "known_hosts.old"
}

// escapeGlob makes a literal path usable as a rule pattern.
func escapeGlob(p string) string {
	if !hasPatternChar(p) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*', '?', '[', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
	return b.String()
}
