package serve

import (
	"path/filepath"
	"sort"
	"strings"
)

// UnitName is the systemd user unit --install-unit writes.
const UnitName = "mnemos-serve.service"

// UnitPath is where a user's systemd looks for UnitName:
// $XDG_CONFIG_HOME/systemd/user, or ~/.config/systemd/user.
func UnitPath(getenv func(string) string, home string) string {
	cfg := getenv("XDG_CONFIG_HOME")
	if cfg == "" || !filepath.IsAbs(cfg) {
		cfg = filepath.Join(home, ".config")
	}
	return filepath.Join(cfg, "systemd", "user", UnitName)
}

// Unit is the text of a systemd user unit that runs argv (an absolute
// program path first) with env, restarts it when it fails, and stops it
// with SIGTERM, which drains.
func Unit(argv []string, env map[string]string) string {
	var b strings.Builder
	b.WriteString("[Unit]\n")
	b.WriteString("Description=mnemos serve: approvals web page, Telegram bot, channel retries\n")
	b.WriteString("\n[Service]\n")
	words := make([]string, len(argv))
	for i, w := range argv {
		words[i] = unitWord(w)
	}
	b.WriteString("ExecStart=" + strings.Join(words, " ") + "\n")
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString("Environment=" + unitWord(k+"="+env[k]) + "\n")
	}
	b.WriteString("Restart=on-failure\n")
	b.WriteString("RestartSec=2\n")
	b.WriteString("KillSignal=SIGTERM\n")
	b.WriteString("TimeoutStopSec=15\n")
	b.WriteString("\n[Install]\n")
	b.WriteString("WantedBy=default.target\n")
	return b.String()
}

// unitWord quotes a word for a unit file: specifiers (%) doubled, and
// double quotes around a word with spaces, quotes or backslashes.
func unitWord(w string) string {
	w = strings.ReplaceAll(w, "%", "%%")
	if w != "" && !strings.ContainsAny(w, " \t\"'\\;$") {
		return w
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", "$$", "\n", `\n`)
	return `"` + r.Replace(w) + `"`
}
